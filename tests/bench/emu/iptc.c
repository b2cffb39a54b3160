// SPDX-License-Identifier: MIT
#include "iptc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "emu/lab.h"
#include "emu/netns.h"
#include "labveth.h"
#include "proc.h"
#include "tests/lib/nettest.h"

#define MAX_ARGS 32

int iptc_init(struct iptc *s)
{
	memset(s, 0, sizeof(*s));
	if (!nt_which("ip", s->ip, sizeof(s->ip)) ||
	    !nt_which("tc", s->tc, sizeof(s->tc)))
		return -ENOENT;
	return 0;
}

void iptc_release(struct iptc *s)
{
	for (int i = 0; i < s->n; i++) {
		for (char **a = s->cmd[i]; *a; a++)
			free(*a);
		free(s->cmd[i]);
	}
	free(s->cmd);
	s->cmd = NULL;
	s->n = s->cap = s->nsetup = 0;
}

/* Append one command: its words, NULL-terminated. */
static int cmd(struct iptc *s, const char *first, ...)
{
	const char *w[MAX_ARGS];
	char **argv;
	int n = 0;
	va_list ap;

	va_start(ap, first);
	for (const char *x = first; x && n < MAX_ARGS - 1;
	     x = va_arg(ap, const char *))
		w[n++] = x;
	va_end(ap);
	if (s->n == s->cap) {
		int ncap = s->cap ? 2 * s->cap : 256;
		char ***nc = realloc(s->cmd, (size_t)ncap * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		s->cmd = nc;
		s->cap = ncap;
	}
	argv = calloc((size_t)n + 1, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		argv[i] = strdup(w[i]);
		if (!argv[i]) {
			while (i--)
				free(argv[i]);
			free(argv);
			return -ENOMEM;
		}
	}
	s->cmd[s->n++] = argv;
	return 0;
}

struct names {
	char (*ns)[64];		/* per node: "<prefix>-<node>" */
};

static int ns_names(struct names *nm, const struct scenario *sc,
		    const char *prefix)
{
	nm->ns = calloc((size_t)sc->nnodes, sizeof(*nm->ns));
	if (!nm->ns)
		return -ENOMEM;
	for (int i = 0; i < sc->nnodes; i++)
		snprintf(nm->ns[i], sizeof(nm->ns[i]), "%s-%s", prefix,
			 sc->nodes[i].name);
	return 0;
}

static int veth(struct iptc *s, const char *a_ns, const char *a_if,
		const char *b_ns, const char *b_if)
{
	int err = cmd(s, s->ip, "-n", a_ns, "link", "add", a_if, "up", "type",
		      "veth", "peer", "name", b_if, "netns", b_ns, NULL);

	if (!err)
		err = cmd(s, s->ip, "-n", b_ns, "link", "set", b_if, "up",
			  NULL);
	return err;
}

static int addr(struct iptc *s, const char *ns, const char *dev, uint32_t a,
		int len)
{
	char buf[32], q[16];

	snprintf(buf, sizeof(buf), "%s/%d", addr_str(a, q), len);
	return cmd(s, s->ip, "-n", ns, "addr", "add", buf, "dev", dev, NULL);
}

/* The same token bucket as emu/lab.c shape(), see tbf_params(). */
static int shape(struct iptc *s, const char *ns, const char *dev,
		 double gbps, double scale)
{
	char r[32], b[16], l[16];
	uint64_t bps;
	uint32_t burst, limit;

	tbf_params(gbps, scale, &bps, &burst, &limit);
	snprintf(r, sizeof(r), "%llubit", (unsigned long long)bps);
	snprintf(b, sizeof(b), "%u", burst);
	snprintf(l, sizeof(l), "%u", limit);
	return cmd(s, s->tc, "-n", ns, "qdisc", "add", "dev", dev, "root",
		   "handle", "1:", "tbf", "rate", r, "burst", b, "limit", l,
		   NULL);
}

/* Join ports x and y of one ROADM both ways, as emu/lab.c xconnect(). */
static int xconnect(struct iptc *s, const char *ns, const char *x,
		    const char *y)
{
	const char *p[2] = { x, y };
	int err = 0;

	for (int i = 0; i < 2 && !err; i++)
		err = cmd(s, s->tc, "-n", ns, "qdisc", "add", "dev", p[i],
			  "ingress", NULL);
	for (int i = 0; i < 2 && !err; i++)
		err = cmd(s, s->tc, "-n", ns, "filter", "add", "dev", p[i],
			  "parent", "ffff:", "protocol", "all", "prio", "1",
			  "u32", "match", "u32", "0", "0", "action", "mirred",
			  "egress", "redirect", "dev", p[1 - i], NULL);
	return err;
}

static int build_namespaces(struct iptc *s, const struct scenario *sc,
			    const struct names *nm)
{
	int err = 0;

	for (int i = 0; i < sc->nnodes && !err; i++) {
		const char *ns = nm->ns[i];
		unsigned fl = lab_ns_flags(sc, i);

		err = cmd(s, s->ip, "netns", "add", ns, NULL);
		if (!err)
			err = cmd(s, s->ip, "-n", ns, "link", "set", "lo", "up",
				  NULL);
		if (!err)
			err = cmd(s, s->ip, "netns", "exec", ns, "sysctl", "-q",
				  "-w", "net.ipv6.conf.default.disable_ipv6=1",
				  (fl & NETNS_FORWARD) ?
				  "net.ipv4.ip_forward=1" :
				  (fl & NETNS_TCP) ?
				  "net.ipv4.tcp_early_retrans=0" : NULL,
				  (fl & NETNS_TCP) ?
				  "net.ipv4.tcp_slow_start_after_idle=0" : NULL,
				  (fl & NETNS_TCP) ?
				  "net.ipv4.tcp_congestion_control=reno" : NULL,
				  (fl & NETNS_REORDER) ?
				  "net.ipv4.tcp_recovery=5" : NULL,
				  (fl & NETNS_REORDER) ?
				  "net.ipv4.tcp_min_rtt_wlen=0" : NULL,
				  NULL);
	}
	s->nsetup = s->n;
	return err;
}

struct iptc_links {
	struct iptc *s;
	const struct names *nm;
};

static int iptc_veth(const struct lab_veth *v, void *arg)
{
	const struct iptc_links *k = arg;

	return veth(k->s, k->nm->ns[v->u], v->un, k->nm->ns[v->v], v->vn);
}

static int build_links(struct iptc *s, const struct plan *p,
		       const struct names *nm)
{
	struct iptc_links k = { s, nm };

	return lab_veths(p, iptc_veth, &k);
}

static int build_config(struct iptc *s, const struct plan *p,
			const struct addressing *ad, const struct names *nm)
{
	const struct scenario *sc = p->sc;
	char n1[16], n2[16], q[16];
	int err = 0;

	for (int i = 0; i < sc->nnodes && !err; i++) {
		const char *srv = nm->ns[i], *rtr;
		double g = sc->nodes[i].access_gbps;

		if (sc->nodes[i].kind != NODE_SERVER)
			continue;	/* attach is -1 on a ROADM */
		rtr = nm->ns[sc->nodes[i].attach];
		snprintf(n1, sizeof(n1), "acc%d", i);
		err = addr(s, srv, "up0", ad->access[i] + 1, 31);
		if (!err)
			err = cmd(s, s->ip, "-n", srv, "route", "add",
				  "default", "via", addr_str(ad->access[i], q),
				  "dev", "up0", "proto", "static", NULL);
		if (!err)
			err = shape(s, srv, "up0", g, sc->scale);
		if (!err)
			err = addr(s, rtr, n1, ad->access[i], 31);
		if (!err)
			err = shape(s, rtr, n1, g, sc->scale);
	}
	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];
		int roadm = sc->nodes[lp->a].attach;

		snprintf(n1, sizeof(n1), "lp%d", l);
		for (int end = 0; end < 2 && !err; end++) {
			const char *r = nm->ns[end ? lp->b : lp->a];

			err = addr(s, r, n1, ad->lightpath[l] + (uint32_t)end,
				   31);
			if (!err)
				err = shape(s, r, n1, lp->cap_gbps, sc->scale);
		}
		/* walk the ROADMs: ad<l> -> f..w.. -> ... -> ad<l> */
		snprintf(n1, sizeof(n1), "ad%d", l);
		for (int i = 0; i < lp->nfib && !err; i++) {
			const struct scn_fibre *f = &sc->fibres[lp->fib[i]];

			snprintf(n2, sizeof(n2), "f%dw%d", lp->fib[i],
				 lp->lambda);
			err = xconnect(s, nm->ns[roadm], n1, n2);
			roadm = f->a == roadm ? f->b : f->a;
			memcpy(n1, n2, sizeof(n1));
		}
		snprintf(n2, sizeof(n2), "ad%d", l);
		if (!err)
			err = xconnect(s, nm->ns[roadm], n1, n2);
	}
	for (int t = 0; t < p->ntasks && !err; t++) {
		const struct task_plan *tp = &p->tasks[t];

		for (int m = 1; !tp->blocked && m < tp->nmodels && !err; m++)
			for (int up = 0; up < 2 && !err; up++) {
				const struct tree *tr =
					up ? &tp->up : &tp->bcast;
				const struct endpoint *ep =
					&ad->ep[t][2 * m + up];

				err = addr(s, nm->ns[tr->path[m].from], "up0",
					   ep->src, 32);
				if (!err)
					err = addr(s, nm->ns[tr->path[m].to],
						   "up0", ep->dst, 32);
			}
	}
	for (int i = 0; i < ad->nroutes && !err; i++) {
		const struct route *rt = &ad->routes[i];
		char dst[32];

		if (rt->link < 2 * sc->nnodes)
			snprintf(n1, sizeof(n1), "acc%d", rt->link / 2);
		else
			snprintf(n1, sizeof(n1), "lp%d",
				 (rt->link - 2 * sc->nnodes) / 2);
		snprintf(dst, sizeof(dst), "%s/32", addr_str(rt->dst, q));
		err = cmd(s, s->ip, "-n", nm->ns[rt->node], "route", "add", dst,
			  "via", addr_str(rt->via, n2), "dev", n1, "proto",
			  "static", NULL);
	}
	return err;
}

int iptc_build(struct iptc *s, const struct plan *p, const struct addressing *a,
	       const char *prefix)
{
	struct names nm;
	int err = ns_names(&nm, p->sc, prefix);

	if (err)
		return err;
	err = build_namespaces(s, p->sc, &nm);
	if (!err)
		err = build_links(s, p, &nm);
	if (!err)
		err = build_config(s, p, a, &nm);
	free(nm.ns);
	return err;
}

int iptc_teardown(struct iptc *s, const struct scenario *sc, const char *prefix)
{
	struct names nm;
	int err = ns_names(&nm, sc, prefix);

	for (int i = 0; i < sc->nnodes && !err; i++)
		err = cmd(s, s->ip, "netns", "del", nm.ns[i], NULL);
	free(nm.ns);
	return err;
}

int iptc_run(const struct iptc *s, int *failed)
{
	for (int i = 0; i < s->n; i++) {
		int st = bench_stop ? -EINTR : proc_run(s->cmd[i]);

		if (st) {
			*failed = i;
			return st;
		}
	}
	return 0;
}

void iptc_print(const struct iptc *s, int i, FILE *f)
{
	for (char **a = s->cmd[i]; *a; a++)
		fprintf(f, "%s%s", a == s->cmd[i] ? "" : " ", *a);
	fputc('\n', f);
}

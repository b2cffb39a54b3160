// SPDX-License-Identifier: MIT
/* Building the emulation: namespaces, veths, addresses, routes and
 * cross-connects, impairments, and lab_up (its order of work: lab.c). */
#include "lab_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "delayline.h"
#include "impair.h"
#include "traffic.h"
#include "labstate.h"
#include "netns.h"
#include "nl.h"
#include "proc.h"
#include "twin/fl.h"
#include "twin/lpset.h"
#include "twin/partition.h"

/*
 * Namespaces are made by LAB_NS_THREADS threads side by side, node i by
 * thread i % LAB_NS_THREADS: much of making one (the kernel's set-up of
 * a namespace, its sysctls) runs while another is made. A thread stops
 * at its first failure, or once another has failed at a lower node.
 */
#define LAB_NS_THREADS 2

struct ns_maker {
	struct lab *lab;
	int first, step;
	int *failed; /* the lowest node that failed, or nnodes */
	pthread_mutex_t *lock;
	int err; /* this one's failure (at a node of its own) */
};

static void *make_some(void *arg)
{
	struct ns_maker *m = arg;
	const struct scenario *sc = m->lab->p->sc;

	for (int i = m->first; i < sc->nnodes; i += m->step) {
		struct lab_node *n = &m->lab->n[i];
		bool stop;

		pthread_mutex_lock(m->lock);
		stop = *m->failed < i;
		pthread_mutex_unlock(m->lock);
		if (stop)
			break;
		m->err = netns_add_open(n->ns, lab_ns_flags(sc, i),
					&n->fd, lab_open_nl, n);
		if (m->err) {
			pthread_mutex_lock(m->lock);
			if (i < *m->failed)
				*m->failed = i;
			pthread_mutex_unlock(m->lock);
			break;
		}
	}
	return NULL;
}

/*
 * One node's part: its namespace taken (made by whoever made its
 * interfaces), every other node's requests dropped.
 */
static int take_namespace(struct lab *lab)
{
	const struct scenario *sc = lab->p->sc;
	struct lab_node *n = &lab->n[lab->only];
	bool adopted;
	int err;

	for (int i = 0; i < sc->nnodes; i++)
		lab_ns_name(lab->prefix, sc->nodes[i].name, lab->n[i].ns,
			    sizeof(lab->n[i].ns));
	lab->void_nl = nl_open_void("(elsewhere)");
	if (!lab->void_nl)
		return lab_fail(lab, -ENOMEM, "out of memory");
	for (int i = 0; i < sc->nnodes; i++) {
		lab->n[i].next = 2;
		if (i != lab->only)
			lab->n[i].nl = lab->void_nl;
	}
	err = netns_take_open(n->ns, lab_ns_flags(sc, lab->only),
			      lab->here, &adopted, &n->fd, lab_open_nl, n);
	if (err == -ENOENT)
		return lab_fail(lab, err, "no netns '%s': deploy the exported "
				"topology first (or, inside a container, build "
				"in its own namespace: --here)", n->ns);
	if (err)
		return lab_fail(lab, err, "cannot set up netns '%s': %s", n->ns,
				strerror(-err));
	/* a name given to a container's namespace is ours to take away */
	err = adopted ? lab_record(lab, "netns %s", n->ns) : 0;
	if (err)
		return lab_fail(lab, err, "cannot write state: %s",
				strerror(-err));
	err = nl_link_up(n->nl, 1, "lo");
	return err ? lab_fail(lab, err, "out of memory") : 0;
}

int lab_ns_made(struct lab *lab, struct lab_node *n)
{
	int err = lab_record(lab, "netns %s", n->ns);

	if (err)
		return lab_fail(lab, err, "cannot write state: %s",
				strerror(-err));
	n->next = 2;
	err = nl_link_up(n->nl, 1, "lo");
	return err ? lab_fail(lab, err, "out of memory") : 0;
}

static int make_namespaces(struct lab *lab)
{
	const struct scenario *sc = lab->p->sc;
	struct ns_maker m[LAB_NS_THREADS];
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int failed = sc->nnodes, err;

	for (int i = 0; i < sc->nnodes; i++)
		lab_ns_name(lab->prefix, sc->nodes[i].name, lab->n[i].ns,
			    sizeof(lab->n[i].ns));
	for (int t = 0; t < LAB_NS_THREADS; t++)
		m[t] = (struct ns_maker){.lab = lab,
					 .first = t,
					 .step = LAB_NS_THREADS,
					 .failed = &failed,
					 .lock = &lock};
	lab_side_by_side(make_some, m, sizeof(m[0]), LAB_NS_THREADS);
	/* recorded in the nodes' order, what was made */
	for (int i = 0; i < sc->nnodes; i++) {
		if (lab->n[i].fd < 0)
			continue;
		err = lab_ns_made(lab, &lab->n[i]);
		if (err)
			return err;
	}
	/* node i is maker i % LAB_NS_THREADS's */
	err = failed < sc->nnodes ? m[failed % LAB_NS_THREADS].err : 0;
	if (err)
		return lab_fail(lab, err, "cannot create netns '%s': %s",
				lab->n[failed].ns, strerror(-err));
	return 0;
}

int lab_nns(const struct lab *lab)
{
	return lab->p->sc->nnodes + (lab->pt ? lab->pt->nhosts + 1 : 0);
}

static int commit_all(struct lab *lab)
{
	for (int i = 0; i < lab_nns(lab); i++) {
		int err = nl_commit(lab->n[i].nl);

		if (err)
			return lab_fail(lab, err, "%s", nl_error(lab->n[i].nl));
	}
	return 0;
}

static int peer(struct lab *lab, int node, int index, const char *name);
/*
 * A veth between nodes u and v, created from u's namespace; building one
 * node's part, its end found where the deployment made it.
 */
int lab_veth(struct lab *lab, int u, const char *un, int v, const char *vn,
	     int *ui, int *vi)
{
	int err;

	*ui = lab->n[u].next++;
	*vi = lab->n[v].next++;
	if (lab->only >= 0) {	/* made by the deployment: found by name */
		int end = u == lab->only ? *ui : v == lab->only ? *vi : 0;
		const char *name = u == lab->only ? un : vn;

		if (!end)
			return 0;
		err = nl_map(lab->n[lab->only].nl, end, name);
		/* no segmentation offload, as on the veths up makes: the
		 * deployment's runtime made them with its own */
		if (!err)
			err = nl_link_gso_segs(lab->n[lab->only].nl, end, name,
					       1);
		return err ? err : peer(lab, lab->only, end, name);
	}
	err = peer(lab, v, *vi, vn);
	return err ? err :
		     nl_veth(lab->n[u].nl, un, *ui, vn, *vi, lab->n[v].fd);
}

/* A veth end to bring up from its own namespace once made. */
static int peer(struct lab *lab, int node, int index, const char *name)
{
	struct peer_end *pe;

	if (lab->npeers == lab->cappeers) {
		int ncap = lab->cappeers ? 2 * lab->cappeers : 64;

		pe = realloc(lab->peers, (size_t)ncap * sizeof(*pe));
		if (!pe)
			return -ENOMEM;
		lab->peers = pe;
		lab->cappeers = ncap;
	}
	pe = &lab->peers[lab->npeers++];
	pe->node = node;
	pe->index = index;
	snprintf(pe->name, sizeof(pe->name), "%s", name);
	return 0;
}

/* Whether lightpath l of the plan is lit in epoch e (no set: always). */
static bool lab_lit(const struct lab *lab, int e, int l)
{
	return !lab->set || lab->set->lit[e][l];
}

/* Wavelengths per fibre in a line slot's numbering: the most any has. */
int lab_max_wavelengths(const struct scenario *sc)
{
	int w = 1;

	for (int i = 0; i < sc->nfibres; i++)
		if (sc->fibres[i].wavelengths > w)
			w = sc->fibres[i].wavelengths;
	return w;
}

int lab_line_slot(int words, int fibre, int lambda, int end)
{
	return (fibre * words + lambda) * 2 + end;
}

static int make_links(struct lab *lab)
{
	const struct plan *p = lab->p;
	const struct scenario *sc = p->sc;
	char a[16], b[16];
	int err = 0;

	if (lab->pt)
		err = lab_split_underlay(lab);
	for (int s = 0; s < sc->nnodes && !err; s++) {
		int ui;

		if (sc->nodes[s].kind != NODE_SERVER)
			continue;
		lab_access_if(s, b, sizeof(b));
		err = lab_veth(lab, s, LAB_SERVER_IF, sc->nodes[s].attach, b, &ui,
			   &lab->acc[s]);
	}
	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];
		int at = sc->nodes[lp->a].attach;

		lab_lightpath_if(l, a, sizeof(a));
		snprintf(b, sizeof(b), "ad%d", l);
		err = lab_veth(lab, lp->a, a, at, b, &lab->lp[2 * l],
			   &lab->ad[2 * l]);
		if (!err)
			err = lab_veth(lab, lp->b, a, sc->nodes[lp->b].attach, b,
				   &lab->lp[2 * l + 1], &lab->ad[2 * l + 1]);
		/*
		 * one veth per wavelength per fibre, from the fibre's end a;
		 * once, where lightpaths of different epochs share it
		 */
		for (int i = 0; i < lp->nfib && !err; i++) {
			const struct scn_fibre *f = &sc->fibres[lp->fib[i]];
			int slot = lab_line_slot(lab->words, lp->fib[i],
						 lp->lambda, 0);

			if (lab->line[slot])
				continue;
			if (lab_split_cut(lab, lp->fib[i])) {
				err = lab_split_line(lab, lp->fib[i],
						     lp->lambda);
				continue;
			}
			snprintf(a, sizeof(a), "f%dw%d", lp->fib[i],
				 lp->lambda);
			err = lab_veth(lab, f->a, a, f->b, a, &lab->line[slot],
				       &lab->line[slot + 1]);
		}
	}
	if (err == -ENODEV)
		return lab_fail(lab, err, "%s", nl_error(lab->n[lab->only].nl));
	if (err)
		return lab_fail(lab, err, "out of memory");
	return commit_all(lab);
}

/* Join port x to port y inside one ROADM, both ways (rewiring them). */
int lab_cross(struct nl *nl, int x, const char *xn, int y, const char *yn,
	      bool replace)
{
	int err = nl_redirect(nl, x, xn, y, yn, replace);

	return err ? err : nl_redirect(nl, y, yn, x, xn, replace);
}

int lab_lightpath_joins(int words, const struct scenario *sc,
			const struct lightpath *lp, int l,
			int (*fn)(void *ctx, const struct join *j), void *ctx)
{
	struct join j = {.roadm = sc->nodes[lp->a].attach, .xslot = -1};
	int err = 0;

	snprintf(j.x, sizeof(j.x), "ad%d", l);
	for (int i = 0; i < lp->nfib && !err; i++) {
		const struct scn_fibre *f = &sc->fibres[lp->fib[i]];
		int end = f->a == j.roadm ? 0 : 1;

		snprintf(j.y, sizeof(j.y), "f%dw%d", lp->fib[i], lp->lambda);
		j.yslot = lab_line_slot(words, lp->fib[i], lp->lambda, end);
		err = fn(ctx, &j);
		j.roadm = end ? f->a : f->b;
		j.xslot = lab_line_slot(words, lp->fib[i], lp->lambda, 1 - end);
		memcpy(j.x, j.y, sizeof(j.x));
	}
	snprintf(j.y, sizeof(j.y), "ad%d", l);
	j.yslot = -2;
	return err ? err : fn(ctx, &j);
}

struct up_join {
	struct lab *lab;
	int l;
	bool lit;
};

static int port_index(const struct lab *lab, int l, int slot)
{
	return slot >= 0 ? lab->line[slot] : lab->ad[2 * l + (-1 - slot)];
}

/* At `up`: each port's ingress qdisc once; lit lightpaths joined. */
static int up_join(void *ctx, const struct join *j)
{
	struct up_join *u = ctx;
	struct lab *lab = u->lab;
	struct nl *nl = lab->n[j->roadm].nl;
	int x = port_index(lab, u->l, j->xslot);
	int y = port_index(lab, u->l, j->yslot);
	int err = 0;

	if (j->xslot < 0 || !lab->ing[j->xslot])
		err = nl_ingress(nl, x, j->x);
	if (!err && j->xslot >= 0)
		lab->ing[j->xslot] = true;
	if (!err && (j->yslot < 0 || !lab->ing[j->yslot]))
		err = nl_ingress(nl, y, j->y);
	if (!err && j->yslot >= 0)
		lab->ing[j->yslot] = true;
	if (!err && u->lit)
		err = lab_cross(nl, x, j->x, y, j->y, false);
	return err;
}

static int endpoint_addrs(void *ctx, const struct ppath *pp,
			  const struct endpoint *ep)
{
	struct lab *lab = ctx;
	int err = nl_addr(lab->n[pp->from].nl, 2, LAB_SERVER_IF, ep->src, 32);

	return err ? err
		   : nl_addr(lab->n[pp->to].nl, 2, LAB_SERVER_IF, ep->dst, 32);
}

static int bg_addr(struct lab *lab, int node, uint32_t addr)
{
	bool srv = lab->p->sc->nodes[node].kind == NODE_SERVER;

	return nl_addr(lab->n[node].nl, srv ? 2 : 1, srv ? LAB_SERVER_IF : "lo",
		       addr, 32);
}

static int configure(struct lab *lab)
{
	const struct plan *p = lab->p;
	const struct scenario *sc = p->sc;
	const struct addressing *ad = lab->a;
	struct dsts *d = lab_link_dsts(lab);
	char n1[16];
	int err = d ? 0 : -errno;

	for (int i = 0; i < lab->npeers && !err; i++)
		err = nl_link_up(lab->n[lab->peers[i].node].nl,
				 lab->peers[i].index, lab->peers[i].name);
	/* servers and access links */
	for (int s = 0; s < sc->nnodes && !err; s++) {
		struct nl *srv = lab->n[s].nl;
		int r = sc->nodes[s].attach;
		uint64_t bps = lab_rate_bps(lab, sc->nodes[s].access_gbps);
		struct nl_tcp_metrics tm = lab_tcp_metrics(lab);

		if (sc->nodes[s].kind != NODE_SERVER)
			continue;
		lab_access_if(s, n1, sizeof(n1));
		err = nl_addr(srv, 2, LAB_SERVER_IF, ad->access[s] + 1, 31);
		if (!err)
			err = nl_route(srv, 0, 0, ad->access[s], 2,
				       LAB_SERVER_IF, &tm);
		if (!err)
			err = lab_shape_link(lab, srv, 2, LAB_SERVER_IF, bps,
					     &d[2 * s]);
		if (!err)
			err = nl_addr(lab->n[r].nl, lab->acc[s], n1,
				      ad->access[s], 31);
		if (!err)
			err = lab_shape_link(lab, lab->n[r].nl, lab->acc[s], n1,
					     bps, &d[2 * s + 1]);
	}
	/* lightpaths: router ends addressed and shaped, ROADMs joined */
	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];
		uint64_t bps = lab_rate_bps(lab, lp->cap_gbps);

		lab_lightpath_if(l, n1, sizeof(n1));
		for (int end = 0; end < 2 && !err; end++) {
			struct nl *r = lab->n[end ? lp->b : lp->a].nl;

			err = nl_addr(r, lab->lp[2 * l + end], n1,
				      ad->lightpath[l] + (uint32_t)end, 31);
			if (!err)
				err = lab_shape_link(
					lab, r, lab->lp[2 * l + end], n1, bps,
					&d[2 * sc->nnodes + 2 * l + end]);
		}
		/* the ROADMs: ad<l> -> f..w.. -> ... -> ad<l>, if lit */
		if (!err) {
			struct up_join u = {lab, l, lab_lit(lab, 0, l)};

			err = lab_lightpath_joins(lab->words, sc, lp, l,
						  up_join, &u);
		}
	}
	/* transfer endpoints on the servers */
	if (!err)
		err = lab_each_transfer(lab, endpoint_addrs, lab);
	/* background traffic's: on a server's interface, a router's lo */
	for (int i = 0; i < p->nbg && !err; i++) {
		const struct scn_bg *bg = p->bg[i].bg;

		err = bg_addr(lab, bg->from, ad->bg[i].src);
		if (!err)
			err = bg_addr(lab, bg->to, ad->bg[i].dst);
	}
	/* routes of every transfer */
	for (int i = 0; i < ad->nroutes && !err; i++) {
		const struct route *rt = &ad->routes[i];
		int link = rt->link, idx;

		if (link < 2 * sc->nnodes) {
			idx = lab->acc[link / 2];
			lab_access_if(link / 2, n1, sizeof(n1));
		} else {
			int l = (link - 2 * sc->nnodes) / 2;

			idx = lab->lp[2 * l +
				      (p->net->lp[l].a == rt->node ? 0 : 1)];
			lab_lightpath_if(l, n1, sizeof(n1));
		}
		err = nl_route(lab->n[rt->node].nl, rt->dst, 32, rt->via, idx,
			       n1, NULL);
	}
	if (!err && lab->pt)
		err = lab_split_configure(lab);
	lab_dsts_free(d, d ? plan_nlinks(p) : 0);
	if (err == -E2BIG)
		return lab_fail(lab, err,
				"more than %d transfers share one link",
				LAB_CLASSES_MAX);
	if (err)
		return lab_fail(lab, err, "cannot configure the links: %s",
				strerror(-err));
	return commit_all(lab);
}

/*
 * The lightpaths of a followed timeline that its first epoch does not
 * light: down at both routers (their ROADM ports stay unjoined until an
 * epoch lights them, see lab_epoch).
 */
static int darken(struct lab *lab)
{
	const struct plan *p = lab->p;
	char ifn[16];
	int err = 0;

	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];

		if (lab_lit(lab, 0, l))
			continue;
		lab_lightpath_if(l, ifn, sizeof(ifn));
		err = nl_link_set(lab->n[lp->a].nl, lab->lp[2 * l], ifn, false);
		if (!err)
			err = nl_link_set(lab->n[lp->b].nl, lab->lp[2 * l + 1],
					  ifn, false);
	}
	if (err)
		return lab_fail(lab, err, "out of memory");
	return commit_all(lab);
}

/* ---- impairments ---------------------------------------------------- */

struct delay_record {
	struct lab *lab;
	const char *name, *exe;
};

/* The supervisor is in the state file before it may start anything. */
static int record_delay(pid_t pid, unsigned long long start, void *ctx)
{
	struct delay_record *dr = ctx;

	return lab_record(dr->lab, "pid %d %llu %s %s", (int)pid, start,
			  dr->name, dr->exe);
}

static int hop(struct lab *lab, struct impair *im, int node, bool in,
	       const char *ifn, int num, double km, double gbps, double loss)
{
	struct impair_hop h;

	if (lab->only >= 0 && node != lab->only)
		return 0;	/* another node's: built elsewhere */
	h = (struct impair_hop){
		.netns = lab->n[node].ns,
		.ifname = ifn,
		.in = in,
		.num = (uint16_t)num,
		.delay_s = km * FIBRE_S_PER_KM * lab->dilation,
		.loss = loss,
		.rate_bps = (double)lab_rate_bps(lab, gbps),
	};

	return impair_add(im, &h, lab->err, lab->errlen);
}

/*
 * Impairments on forwarding hops only: each router impairs what it sends
 * into a lightpath (the lightpath's length and loss), and what it sends to
 * or receives from a server (the access link's length, when it has one).
 */
static int start_impairments(struct lab *lab, unsigned mask)
{
	const struct plan *p = lab->p;
	const struct scenario *sc = p->sc;
	struct impair *im = impair_new(mask);
	struct delay_record dr;
	struct impair_env env;
	char name[16], ifn[16], exe[PATH_MAX];
	int err = 0;

	if (!im)
		return lab_fail(lab, -ENOMEM, "out of memory");
	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];
		double loss = net_lightpath_loss(sc, lp);

		lab_lightpath_if(l, ifn, sizeof(ifn));
		for (int end = 0; end < 2 && !err; end++)
			err = hop(lab, im, end ? lp->b : lp->a, false, ifn,
				  lab->lp[2 * l + end], lp->km, lp->cap_gbps,
				  loss);
	}
	for (int s = 0; s < sc->nnodes && !err; s++) {
		const struct scn_node *n = &sc->nodes[s];

		if (n->kind != NODE_SERVER)
			continue;
		lab_access_if(s, ifn, sizeof(ifn));
		err = hop(lab, im, n->attach, false, ifn, lab->acc[s],
			  n->access_km, n->access_gbps, 0);
		if (!err)
			err = hop(lab, im, n->attach, true, ifn,
				  lab->acc[s] + 32768, n->access_km,
				  n->access_gbps, 0);
	}
	if (!err && !proc_exe(getpid(), exe, sizeof(exe)))
		err = lab_fail(lab, -EIO,
			       "cannot start the delay line: cannot "
			       "read this program's executable");
	if (!err) {
		lab_delay_name(lab->prefix, name, sizeof(name));
		dr = (struct delay_record){lab, name, exe};
		env = (struct impair_env){
			.record = record_delay,
			.ctx = &dr,
			.proc_name = name,
			/* without its counters the delay line still delays */
			.live = (mask & IMPAIR_DELAY)
					? lab_live_create(lab->prefix)
					: NULL,
		};
		err = impair_start(im, &env, lab->err, lab->errlen);
		lab_delay_live_close(
			env.live); /* the supervisor maps its own */
	}
	impair_free(im);
	return err;
}

/*
 * What lab_up is asked, checked before anything is made: the prefix, root,
 * the prefix free, the dilation and the options that exclude each other.
 * *only: the node a part builds (-1: the whole network).
 */
static int check_opts(const struct plan *p, const struct lab_opts *o,
		      int *only, char *errbuf, size_t errlen)
{
	const struct scenario *sc = p->sc;
	double dilation = o->dilation > 0 ? o->dilation : 1;
	char own[DL_NETNS_MAX];
	bool in_use;

	if (!lab_prefix_ok(o->prefix)) {
		snprintf(errbuf, errlen,
			 "bad prefix '%s': use 1-%d characters "
			 "of [a-z0-9] starting with a letter",
			 o->prefix, LAB_PREFIX_MAX);
		return -EINVAL;
	}
	if (geteuid() != 0) {
		snprintf(errbuf, errlen,
			 "building an emulation needs root "
			 "(network namespaces, veth, qdiscs)");
		return -EPERM;
	}
	if (o->node) {
		lab_ns_name(o->prefix, o->node, own, sizeof(own));
		in_use = lab_exists_but(o->prefix, own);
	} else
		in_use = lab_exists(o->prefix);
	if (in_use) {
		snprintf(errbuf, errlen,
			 "prefix '%s' is in use: run "
			 "'twinlab down --prefix %s' (or 'clean') first, or "
			 "choose another prefix",
			 o->prefix, o->prefix);
		return -EEXIST;
	}
	if (!(dilation >= 1 && dilation <= LAB_DILATION_MAX)) {
		snprintf(errbuf, errlen, "dilation %g is out of range [1, %g]",
			 o->dilation, LAB_DILATION_MAX);
		return -EINVAL;
	}
	if (o->set && o->node) {
		snprintf(errbuf, errlen, "one node's part follows no timeline");
		return -EINVAL;
	}
	if (o->node && o->hosts > 1) {
		snprintf(errbuf, errlen, "one node's part is on one host");
		return -EINVAL;
	}
	*only = -1;
	for (int i = 0; o->node && i < sc->nnodes; i++)
		if (!strcmp(sc->nodes[i].name, o->node))
			*only = i;
	if (o->node && *only < 0) {
		snprintf(errbuf, errlen, "no node '%s' in scenario '%s'",
			 o->node, sc->name);
		return -EINVAL;
	}
	if (o->set && o->set->plan[0] != p) {
		snprintf(errbuf, errlen,
			 "the plan to build is not the first "
			 "epoch's of the timeline to follow");
		return -EINVAL;
	}
	return 0;
}

int lab_up(const struct plan *p, const struct addressing *a,
	   const struct lab_opts *o, struct lab **out, char *errbuf,
	   size_t errlen)
{
	const struct scenario *sc = p->sc;
	struct lab *lab;
	int err, maxw, only;

	*out = NULL;
	err = check_opts(p, o, &only, errbuf, errlen);
	if (err)
		return err;
	lab = calloc(1, sizeof(*lab));
	if (!lab)
		return -ENOMEM;
	snprintf(lab->prefix, sizeof(lab->prefix), "%s", o->prefix);
	lab->dilation = o->dilation > 0 ? o->dilation : 1;
	lab->only = only;
	lab->here = o->here;
	lab->p = p;
	lab->a = a;
	lab->set = o->set;
	lab->err = errbuf;
	lab->errlen = errlen;
	maxw = lab_max_wavelengths(sc);
	lab->words = maxw;
	if (o->hosts > 1) {
		char why[256];

		lab->pt = calloc(1, sizeof(*lab->pt));
		err = lab->pt ? partition_plan(p, o->hosts, false, lab->pt, why,
					       sizeof(why))
			      : -ENOMEM;
		if (err) {
			snprintf(errbuf, errlen, "cannot split '%s' over %d "
				 "hosts: %s", sc->name, o->hosts,
				 err == -ENOMEM ? "out of memory" : why);
			free(lab->pt);
			free(lab);
			return err;
		}
		lab->split_und = calloc((size_t)o->hosts, sizeof(int));
		lab->split_side = calloc((size_t)o->hosts, sizeof(int));
		lab->split_vs = calloc((size_t)sc->nfibres * maxw * 2 + 1,
				       sizeof(int));
	}
	lab->n = calloc((size_t)sc->nnodes + (size_t)o->hosts + 2,
			sizeof(*lab->n));
	lab->acc = calloc((size_t)sc->nnodes + 1, sizeof(*lab->acc));
	lab->lp = calloc((size_t)2 * p->net->nlp + 1, sizeof(*lab->lp));
	lab->ad = calloc((size_t)2 * p->net->nlp + 1, sizeof(*lab->ad));
	lab->line =
		calloc((size_t)sc->nfibres * maxw * 2 + 1, sizeof(*lab->line));
	lab->ing =
		calloc((size_t)sc->nfibres * maxw * 2 + 1, sizeof(*lab->ing));
	if (!lab->n || !lab->acc || !lab->lp || !lab->ad || !lab->line ||
	    !lab->ing || (lab->pt && (!lab->split_und || !lab->split_side ||
			  !lab->split_vs))) {
		lab_release(lab);
		return -ENOMEM;
	}
	for (int i = 0; i < lab_nns(lab); i++)
		lab->n[i].fd = -1;
	err = lab_open_state(lab, o);
	if (err) {
		lab_release(lab);
		return err;
	}
	err = lab->only >= 0 ? take_namespace(lab) : make_namespaces(lab);
	if (!err && lab->pt)
		err = lab_split_namespaces(lab);
	if (!err)
		err = make_links(lab);
	if (!err)
		err = configure(lab);
	if (!err)
		err = darken(lab);
	if (!err)
		err = start_impairments(lab,
					o->delay ? IMPAIR_ALL
						 : IMPAIR_ALL & ~IMPAIR_DELAY);
	if (err) {
		bool part = lab->only >= 0;

		lab_release(lab);
		/* a part: not the namespace it was given, which it did not make */
		if (part)
			lab_down_recorded(o->prefix, NULL, NULL);
		else
			lab_down(o->prefix, NULL, NULL);
		return err;
	}
	*out = lab;
	return 0;
}

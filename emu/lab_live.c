// SPDX-License-Identifier: MIT
/* A running emulation changed: background traffic, fibres cut and
 * repaired, cross-connects, and a timeline followed live. */
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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
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

struct traffic_record {
	const char *prefix, *name;
};

static int record_traffic(pid_t pid, unsigned long long start, void *ctx)
{
	const struct traffic_record *tr = ctx;

	return lab_record_pid(tr->prefix, pid, start, tr->name);
}

/* The longest path background flow i takes in any plan played, in km;
 * -1 if none routes it. */
static double traffic_km(const struct plan *p, const struct lpset *set, int i)
{
	double km = -1;

	for (int k = 0; k < lpset_nplans(set); k++) {
		const struct bg_flow *b = &lpset_plan_or(p, set, k)->bg[i];

		if (b->routed)
			km = fmax(km, b->path.km);
	}
	return km;
}

bool lab_traffic_flows(const struct plan *p, const struct lpset *set, int i)
{
	return traffic_km(p, set, i) >= 0;
}

int lab_traffic_start(const struct plan *p, const struct lpset *set,
		      const struct addressing *a, const char *prefix,
		      double dilation, struct tg **out, char *err, size_t len)
{
	const struct scenario *sc = p->sc;
	struct tg_flow *f = calloc((size_t)p->nbg + 1, sizeof(*f));
	struct traffic_record tr;
	char name[16];
	int n = 0, e;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	for (int i = 0; i < p->nbg; i++) {
		const struct scn_bg *bg = p->bg[i].bg;
		const struct scn_event *ev = &sc->events[bg->event];
		double km = traffic_km(p, set, i);

		if (km < 0)
			continue;
		lab_ns_name(prefix, sc->nodes[bg->from].name, f[n].src_ns,
			    sizeof(f[n].src_ns));
		lab_ns_name(prefix, sc->nodes[bg->to].name, f[n].dst_ns,
			    sizeof(f[n].dst_ns));
		f[n].src = a->bg[i].src;
		f[n].dst = a->bg[i].dst;
		f[n].rate_bps = lab_emulated_bps(sc, bg->gbps, dilation);
		f[n].start_s = ev->at_s * dilation;
		f[n].stop_s = (ev->at_s + ev->for_s) * dilation;
		f[n].linger_s = (net_in_flight_s(km) + 0.002) * dilation;
		n++;
	}
	if (!n) {
		free(f);
		return 0;
	}
	lab_traffic_name(prefix, name, sizeof(name));
	tr = (struct traffic_record){prefix, name};
	e = tg_start(f, n, name, record_traffic, &tr, out, err, len);
	free(f);
	return e;
}

int lab_traffic_reverse(const struct plan *p, const struct addressing *a,
			const char *prefix, int task, double gbps,
			double for_s, double dilation, struct tg **out,
			char *err, size_t len)
{
	const struct scenario *sc = p->sc;
	const struct task_plan *tp;
	const struct ppath *pp;
	struct traffic_record tr;
	struct tg_flow f = {0};
	char name[16];

	*out = NULL;
	if (task < 0 || task >= p->ntasks || p->tasks[task].blocked ||
	    p->tasks[task].nmodels < 2) {
		snprintf(err, len, "no transfer of that task to send beside");
		return -EINVAL;
	}
	tp = &p->tasks[task];
	pp = &tp->bcast.path[1];
	/* from the receiving end back to the sender's address */
	lab_ns_name(prefix, sc->nodes[pp->to].name, f.src_ns,
		    sizeof(f.src_ns));
	lab_ns_name(prefix, sc->nodes[pp->from].name, f.dst_ns,
		    sizeof(f.dst_ns));
	f.src = a->ep[task][2].dst;
	f.dst = a->ep[task][2].src;
	f.rate_bps = lab_emulated_bps(sc, gbps, dilation);
	f.start_s = 0;
	f.stop_s = for_s * dilation;
	f.linger_s = (net_in_flight_s(pp->km) + 0.002) * dilation;
	lab_traffic_name(prefix, name, sizeof(name));
	tr = (struct traffic_record){prefix, name};
	return tg_start(&f, 1, name, record_traffic, &tr, out, err, len);
}

/* Whether if_name is exactly f<fibre>w<lambda> (not f<fibre>1w..). */
static bool is_segment(const char *if_name, int fibre)
{
	char want[16];
	int lambda, end = 0;

	snprintf(want, sizeof(want), "f%dw", fibre);
	return !strncmp(if_name, want, strlen(want)) &&
	       sscanf(if_name + strlen(want), "%d%n", &lambda, &end) == 1 &&
	       !if_name[strlen(want) + end];
}

/*
 * In netns ns, fibre's segments (f<fibre>w<lambda>): with set 0 or 1,
 * each taken down or brought up (*n counts them); with set -1, counted
 * by whether they are up (*n) or down (*down). 0, or -errno with err.
 */
static int segments(const char *ns, int fibre, int set, int *n, int *down,
		    char *err, size_t len)
{
	struct if_nameindex *ifs;
	struct nl *nl = NULL;
	int saved, e, fd = -1;

	e = netns_enter(ns, &saved);
	if (e) {
		snprintf(err, len, "cannot enter netns '%s': %s", ns,
			 strerror(-e));
		return e;
	}
	ifs = if_nameindex();
	/* a socket made here asks about this namespace's interfaces */
	if (ifs && set < 0)
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	e = !ifs || (set < 0 && fd < 0) ? -errno : 0;
	netns_leave(saved);
	if (!e && set >= 0) {
		nl = nl_open(ns);
		e = nl ? 0 : -errno;
	}
	if (e)
		snprintf(err, len,
			 "cannot read the interfaces of netns '%s': "
			 "%s",
			 ns, strerror(-e));
	for (struct if_nameindex *x = ifs; !e && x->if_index; x++) {
		struct ifreq ifr = {0};

		if (!is_segment(x->if_name, fibre))
			continue;
		if (set >= 0) {
			e = nl_link_set(nl, (int)x->if_index, x->if_name, set);
			(*n)++;
			continue;
		}
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", x->if_name);
		if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
			e = -errno;
			snprintf(err, len,
				 "cannot read interface %s of netns "
				 "'%s': %s",
				 x->if_name, ns, strerror(errno));
		} else {
			(*(ifr.ifr_flags & IFF_UP ? n : down))++;
		}
	}
	if (nl) {
		if (!e)
			e = nl_commit(nl);
		if (e)
			snprintf(err, len, "%s", nl_error(nl));
		nl_close(nl);
	}
	if (fd >= 0)
		close(fd);
	if (ifs)
		if_freenameindex(ifs);
	return e;
}

int lab_fibre_state(const char *prefix, const struct scenario *sc, int fibre,
		    int *up, int *down, char *err, size_t len)
{
	char ns[80];
	int e = 0;

	*up = *down = 0;
	if (!lab_prefix_ok(prefix) || fibre < 0 || fibre >= sc->nfibres) {
		snprintf(err, len, "bad prefix or fibre");
		return -EINVAL;
	}
	for (int i = 0; i < 2 && !e; i++) {
		int end = i ? sc->fibres[fibre].b : sc->fibres[fibre].a;

		lab_ns_name(prefix, sc->nodes[end].name, ns, sizeof(ns));
		e = segments(ns, fibre, -1, up, down, err, len);
	}
	return e;
}

int lab_fibre_set(const char *prefix, const struct scenario *sc, int fibre,
		  bool up, int *count, char *err, size_t len)
{
	const char *a, *b;
	char ns[2][80];
	int e = 0;

	*count = 0;
	if (!lab_prefix_ok(prefix) || fibre < 0 || fibre >= sc->nfibres) {
		snprintf(err, len, "bad prefix or fibre");
		return -EINVAL;
	}
	if (!lab_exists(prefix)) {
		snprintf(err, len, "prefix '%s' is not up", prefix);
		return -ENOENT;
	}
	a = sc->nodes[sc->fibres[fibre].a].name;
	b = sc->nodes[sc->fibres[fibre].b].name;
	lab_ns_name(prefix, a, ns[0], sizeof(ns[0]));
	lab_ns_name(prefix, b, ns[1], sizeof(ns[1]));
	for (int i = 0; i < 2 && !e; i++)
		e = segments(ns[i], fibre, up, count, NULL, err, len);
	if (!e && !*count) {
		snprintf(err, len,
			 "no wavelength is lit on the fibre %s-%s in "
			 "prefix '%s': nothing to %s",
			 a, b, prefix, up ? "repair" : "cut");
		return -ENOENT;
	}
	return e;
}

int lab_xconnect(const char *prefix, const char *roadm, const char *in_port,
		 const char *out_port, char *errbuf, size_t len)
{
	char ns[80];
	struct nl *nl;
	int saved, in, out, err;

	lab_ns_name(prefix, roadm, ns, sizeof(ns));
	err = netns_enter(ns, &saved);
	if (err) {
		snprintf(errbuf, len, "cannot enter netns '%s': %s", ns,
			 strerror(-err));
		return err;
	}
	in = (int)if_nametoindex(in_port);
	out = (int)if_nametoindex(out_port);
	netns_leave(saved);
	if (!in || !out) {
		snprintf(errbuf, len, "no port '%s' in netns '%s'",
			 in ? out_port : in_port, ns);
		return -ENODEV;
	}
	nl = nl_open(ns);
	if (!nl) {
		err = -errno;
		snprintf(errbuf, len, "cannot open rtnetlink in netns '%s': %s",
			 ns, strerror(errno));
		return err;
	}
	err = nl_redirect(nl, in, in_port, out, out_port, true);
	if (!err)
		err = nl_commit(nl);
	if (err)
		snprintf(errbuf, len, "%s", nl_error(nl));
	nl_close(nl);
	return err;
}

/* ---- following a timeline live (lab_epoch) -------------------------- */

/* A running emulation's namespaces, each opened when first needed. */
struct live {
	const char *prefix;
	const struct scenario *sc;
	struct nl **nl;		   /* per node */
	struct if_nameindex **ifs; /* per node: its interfaces */
	char *err;
	size_t len;
};

static struct nl *live_nl(struct live *lv, int node, int *e)
{
	char ns[80];

	if (lv->nl[node])
		return lv->nl[node];
	lab_ns_name(lv->prefix, lv->sc->nodes[node].name, ns, sizeof(ns));
	lv->nl[node] = nl_open(ns);
	if (!lv->nl[node]) {
		*e = -errno;
		snprintf(lv->err, lv->len,
			 "cannot open rtnetlink in netns "
			 "'%s': %s",
			 ns, strerror(errno));
		return NULL;
	}
	nl_label(lv->nl[node], ns);
	return lv->nl[node];
}

/* The index of interface `name` of node's namespace; 0 with err set. */
static int live_index(struct live *lv, int node, const char *name)
{
	char ns[80];
	int saved, e;

	lab_ns_name(lv->prefix, lv->sc->nodes[node].name, ns, sizeof(ns));
	if (!lv->ifs[node]) {
		e = netns_enter(ns, &saved);
		if (e) {
			snprintf(lv->err, lv->len,
				 "cannot enter netns '%s': "
				 "%s",
				 ns, strerror(-e));
			return 0;
		}
		lv->ifs[node] = if_nameindex();
		netns_leave(saved);
		if (!lv->ifs[node]) {
			snprintf(lv->err, lv->len,
				 "cannot list the "
				 "interfaces of netns '%s': %s",
				 ns, strerror(errno));
			return 0;
		}
	}
	for (struct if_nameindex *x = lv->ifs[node]; x->if_index; x++)
		if (!strcmp(x->if_name, name))
			return (int)x->if_index;
	snprintf(lv->err, lv->len, "no interface '%s' in netns '%s'", name, ns);
	return 0;
}

static int live_commit(struct live *lv)
{
	for (int i = 0; i < lv->sc->nnodes; i++) {
		int e = lv->nl[i] ? nl_commit(lv->nl[i]) : 0;

		if (e) {
			snprintf(lv->err, lv->len, "%s", nl_error(lv->nl[i]));
			return e;
		}
	}
	return 0;
}

static void live_release(struct live *lv)
{
	for (int i = 0; lv->nl && i < lv->sc->nnodes; i++) {
		nl_close(lv->nl[i]);
		if (lv->ifs[i])
			if_freenameindex(lv->ifs[i]);
	}
	free(lv->nl);
	free(lv->ifs);
}

/* A ROADM join of a lightpath coming alight: its ports rewired to it. */
static int live_join(void *ctx, const struct join *j)
{
	struct live *lv = ctx;
	int e = -ENODEV, x, y;
	struct nl *nl;

	x = live_index(lv, j->roadm, j->x);
	y = x ? live_index(lv, j->roadm, j->y) : 0;
	if (!y)
		return e;
	nl = live_nl(lv, j->roadm, &e);
	return nl ? lab_cross(nl, x, j->x, y, j->y, true) : e;
}

/* Lightpath l of p up (or down) at both its routers. */
static int live_ends(struct live *lv, const struct plan *p, int l, bool up)
{
	const struct lightpath *lp = &p->net->lp[l];
	char ifn[16];
	int e = 0;

	lab_lightpath_if(l, ifn, sizeof(ifn));
	for (int end = 0; end < 2 && !e; end++) {
		int node = end ? lp->b : lp->a;
		int idx = live_index(lv, node, ifn);
		struct nl *nl = idx ? live_nl(lv, node, &e) : NULL;

		if (!idx)
			return -ENODEV;
		e = nl ? nl_link_set(nl, idx, ifn, up) : e;
	}
	return e;
}

static int route_cmp(const void *x, const void *y)
{
	const struct route *a = x, *b = y;

	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return a->dst < b->dst ? -1 : a->dst > b->dst;
}

/* Route r of p replaced (del false) or removed at its router. */
static int live_route(struct live *lv, const struct plan *p,
		      const struct route *r, bool del)
{
	char ns[80], ifn[16];
	struct nl *nl;
	int idx, e = -ENODEV;

	lab_link_end(p, lv->prefix, r->link, ns, ifn);
	idx = live_index(lv, r->node, ifn);
	nl = idx ? live_nl(lv, r->node, &e) : NULL;
	if (!nl)
		return e;
	return del ? nl_route_del(nl, r->dst, 32, r->via, idx, ifn)
		   : nl_route_replace(nl, r->dst, 32, r->via, idx, ifn);
}

/* Whether `link` is a lightpath epoch e of set does not light. */
static bool link_dark(const struct lpset *set, int e, int link)
{
	int n2 = 2 * set->plan[e]->sc->nnodes;

	return link >= n2 && !set->lit[e][(link - n2) / 2];
}

/*
 * The routes of `from` and `to`, both sorted by router and destination,
 * walked together: what `to` routes otherwise is replaced, what it no
 * longer routes at a router is removed there. A route over a lightpath
 * `from` did not light went with it (the kernel removes the routes of an
 * interface that goes down): it is made again where `to` has it, and not
 * removed twice.
 */
static int live_routes(struct live *lv, const struct lpset *set, int ef, int et,
		       struct addressing *from, struct addressing *to,
		       int *changes)
{
	const struct plan *p = set->plan[et];
	int i = 0, j = 0, e = 0;

	qsort(from->routes, (size_t)from->nroutes, sizeof(*from->routes),
	      route_cmp);
	qsort(to->routes, (size_t)to->nroutes, sizeof(*to->routes), route_cmp);
	while ((i < from->nroutes || j < to->nroutes) && !e) {
		const struct route *a =
			i < from->nroutes ? &from->routes[i] : NULL;
		const struct route *b = j < to->nroutes ? &to->routes[j] : NULL;
		int c = !a ? 1 : !b ? -1 : route_cmp(a, b);

		if (c < 0 && link_dark(set, ef, a->link)) {
			i++;
			continue;
		} else if (c < 0) {
			e = live_route(lv, p, a, true);
			i++;
		} else if (c > 0 || a->via != b->via || a->link != b->link ||
			   link_dark(set, ef, b->link)) {
			e = live_route(lv, p, b, false);
			i += c == 0;
			j++;
		} else {
			i++;
			j++;
			continue;
		}
		++*changes;
	}
	return e;
}

int lab_epoch(const char *prefix, const struct lpset *set, int from, int to,
	      int *changes, char *err, size_t len)
{
	const struct plan *p;
	struct addressing *af = NULL, *at = NULL;
	struct live lv = {prefix, NULL, NULL, NULL, err, len};
	int words, e = 0;

	*changes = 0;
	if (!lab_prefix_ok(prefix) || from < 0 || to < 0 ||
	    from >= set->nepochs || to >= set->nepochs) {
		snprintf(err, len, "bad prefix or epoch");
		return -EINVAL;
	}
	if (!lab_exists(prefix)) {
		snprintf(err, len, "prefix '%s' is not up", prefix);
		return -ENOENT;
	}
	p = set->plan[to];
	lv.sc = p->sc;
	words = lab_max_wavelengths(lv.sc);
	lv.nl = calloc((size_t)lv.sc->nnodes + 1, sizeof(*lv.nl));
	lv.ifs = calloc((size_t)lv.sc->nnodes + 1, sizeof(*lv.ifs));
	af = addressing_new(set->plan[from]);
	at = addressing_new(p);
	if (!lv.nl || !lv.ifs || !af || !at) {
		snprintf(err, len, "out of memory");
		e = -ENOMEM;
		goto out;
	}
	/* what comes alight: joined in its ROADMs, then up at its routers */
	for (int l = 0; l < p->net->nlp && !e; l++) {
		if (!set->lit[to][l] || set->lit[from][l])
			continue;
		e = lab_lightpath_joins(words, lv.sc, &p->net->lp[l], l,
					live_join, &lv);
		if (!e)
			e = live_ends(&lv, p, l, true);
		++*changes;
	}
	if (!e)
		e = live_commit(&lv);
	/* the routes, once their next hops are there */
	if (!e)
		e = live_routes(&lv, set, from, to, af, at, changes);
	if (!e)
		e = live_commit(&lv);
	/* what goes dark, once nothing is routed over it */
	for (int l = 0; l < p->net->nlp && !e; l++) {
		if (set->lit[to][l] || !set->lit[from][l])
			continue;
		e = live_ends(&lv, p, l, false);
		++*changes;
	}
	if (!e)
		e = live_commit(&lv);
out:
	live_release(&lv);
	addressing_free(af);
	addressing_free(at);
	return e;
}

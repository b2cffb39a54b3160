// SPDX-License-Identifier: MIT
/* The links' shapers; see counters.h. */
#include "tools/session/counters.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/agent.h"
#include "emu/lab.h"
#include "emu/monitor.h"
#include "emu/netns.h"
#include "twin/lpset.h"

/* Whether link l of plan p is one to count. */
static bool wanted_in(const struct plan *p, int l, bool traffic)
{
	if (p->link_bytes[l] > 0)
		return true;
	for (int i = 0; traffic && i < p->nbg; i++)
		for (int h = 0; p->bg[i].routed && h < p->bg[i].path.nhops; h++)
			if (plan_link(p, &p->bg[i].path.hops[h]) == l)
				return true;
	return false;
}

/* Whether link l is one to count: in p, or in some epoch of set. */
static bool wanted(const struct plan *p, const struct lpset *set, int l,
		   bool traffic)
{
	for (int k = 0; k < lpset_nplans(set); k++)
		if (wanted_in(lpset_plan_or(p, set, k), l, traffic))
			return true;
	return false;
}

static int open_links(const struct plan *p, const struct lpset *set,
		      const char *prefix, struct agents *ag, bool traffic,
		      bool every,
		      struct counter **out, int *n, struct nscache **cache,
		      int *ncache)
{
	struct counter *c = calloc((size_t)plan_nlinks(p) + 1, sizeof(*c));
	struct nscache *nc = calloc((size_t)p->sc->nnodes + 1, sizeof(*nc));
	int k = 0, m = 0, err;

	*out = c;
	*cache = nc;
	*n = *ncache = 0;
	if (!c || !nc)
		return -ENOMEM;
	for (int l = 0; l < plan_nlinks(p); l++) {
		struct counter *x = &c[k];
		int saved, j;

		if (every ? !plan_link_exists(p, l) : !wanted(p, set, l, traffic))
			continue;
		x->link = l;
		lab_link_end(p, prefix, l, x->ns, x->ifname);
		if (ag) {
			x->ag = ag;
			x->agent = agents_find(ag, p->sc->nodes[lab_link_node(
						p, l, x->ifname)].name);
			if (x->agent < 0)
				return -ENOENT;
			*n = ++k;
			continue;
		}
		for (j = 0; j < m && strcmp(nc[j].ns, x->ns); j++)
			;
		if (j == m) {
			snprintf(nc[m].ns, sizeof(nc[m].ns), "%s", x->ns);
			nc[m].nl = nl_open(x->ns);
			if (!nc[m].nl)
				return -errno;
			*ncache = ++m;
		}
		x->nl = nc[j].nl;
		err = netns_enter(x->ns, &saved);
		if (err)
			return err;	/* what failed: EMFILE is not ENOENT */
		x->ifindex = (int)if_nametoindex(x->ifname);
		netns_leave(saved);
		if (!x->ifindex)
			return -ENODEV;
		*n = ++k;
	}
	return 0;
}

int counters_open(const struct plan *p, const struct lpset *set,
		  const char *prefix, struct agents *ag, bool traffic,
		  struct counter **out, int *n, struct nscache **cache,
		  int *ncache)
{
	return open_links(p, set, prefix, ag, traffic, false, out, n, cache,
			  ncache);
}

int counters_open_every(const struct plan *p, const char *prefix,
			struct counter **out, int *n, struct nscache **cache,
			int *ncache)
{
	return open_links(p, NULL, prefix, NULL, false, true, out, n, cache,
			  ncache);
}

void counters_close(struct counter *c, struct nscache *cache, int ncache)
{
	for (int i = 0; cache && i < ncache; i++)
		nl_close(cache[i].nl);
	free(cache);
	free(c);
}

int counters_get(const struct counter *x, struct nl_qstats *q)
{
	uint64_t v[RM_ANSWER_VALUES];
	int e;

	memset(q, 0, sizeof(*q));
	if (x->ag) {
		e = agents_ask(x->ag, x->agent, RM_ASK_LINK, x->ifname, v);
		if (e)
			return e;
		q->bytes = v[0];
		q->packets = v[1];
		q->drops = v[2];
		return 0;
	}
	if (nl_qdisc_stats(x->nl, x->ifindex, q))
		memset(q, 0, sizeof(*q));
	return 0;
}

struct nl_qstats counters_read(const struct counter *x)
{
	struct nl_qstats q;

	if (counters_get(x, &q))
		memset(&q, 0, sizeof(q));
	return q;
}

int servers_monitor(const struct plan *p, const char *prefix,
		    struct agents_mon *am, struct monitor **out)
{
	const struct scenario *sc = p->sc;
	char (*names)[64] = calloc((size_t)sc->nnodes + 1, sizeof(*names));
	const char **ns = calloc((size_t)sc->nnodes + 1, sizeof(*ns));
	int n = 0, err = 0;

	*out = NULL;
	if (!names || !ns) {
		free(names);
		free(ns);
		return -ENOMEM;
	}
	for (int s = 0; s < sc->nnodes; s++)
		if (sc->nodes[s].kind == NODE_SERVER) {
			lab_ns_name(prefix, sc->nodes[s].name, names[n],
				    sizeof(names[n]));
			ns[n] = names[n];
			n++;
		}
	if (am) {	/* TCP through the servers' agents */
		int *sv = calloc((size_t)n + 1, sizeof(*sv));

		for (int s = 0, k = 0; sv && s < sc->nnodes; s++)
			if (sc->nodes[s].kind == NODE_SERVER &&
			    (sv[k++] = agents_find(am->a, sc->nodes[s].name)) <
				    0)
				err = -ENOENT;
		am->servers = sv;
		am->nservers = n;
		if (!sv)
			err = -ENOMEM;
		n = 0;
	}
	*out = err ? NULL : monitor_new(ns, n);
	if (!err && !*out)
		err = -errno;
	if (*out && am)
		monitor_read_via(*out, agents_sample, am);
	free(names);
	free(ns);
	return err;
}

void agents_mon_free(struct agents_mon *am)
{
	free((void *)am->servers);
	am->servers = NULL;
}

int counters_agents(const struct plan *p, char *const *argv,
		    const char *prefix, bool parts,
		    const volatile sig_atomic_t *stop, struct agents **out,
		    char *why, size_t len)
{
	const struct scenario *sc = p->sc;
	const char **nodes = calloc((size_t)sc->nnodes + 1, sizeof(*nodes));
	const char **pfx = calloc((size_t)sc->nnodes + 1, sizeof(*pfx));
	char (*buf)[LAB_PREFIX_MAX + 16] = calloc((size_t)sc->nnodes + 1,
						  sizeof(*buf));
	int n = 0, e = -ENOMEM;

	*out = NULL;
	snprintf(why, len, "out of memory");
	for (int i = 0; nodes && pfx && buf && i < sc->nnodes; i++)
		if (sc->nodes[i].kind == NODE_SERVER ||
		    sc->nodes[i].kind == NODE_ROUTER) {
			if (parts)
				lab_part_prefix(prefix, i, buf[n],
						sizeof(buf[n]));
			else
				snprintf(buf[n], sizeof(buf[n]), "%s", prefix);
			pfx[n] = buf[n];
			nodes[n++] = sc->nodes[i].name;
		}
	if (nodes && pfx && buf)
		e = agents_start(argv, nodes, pfx, n, stop, out, why, len);
	free(nodes);
	free(pfx);
	free(buf);
	return e;
}

int counters_deployed(const struct plan *p, uint64_t digest,
		      struct agents *ag, const struct counter *c, int n,
		      double dilation, char *why, size_t len)
{
	uint64_t v[RM_ANSWER_VALUES];
	double d;
	int e;

	for (int i = 0; i < agents_count(ag); i++) {
		const char *node = agents_node(ag, i);
		int k = scenario_find(p->sc, node);

		e = agents_ask(ag, i, RM_ASK_PART, NULL, v);
		if (e) {
			snprintf(why, len, "node %s: its part of the deployment "
				 "cannot be read (%s): is its agent given "
				 "--prefix {prefix}?", node, strerror(-e));
			return e;
		}
		memcpy(&d, &v[0], sizeof(d));
		if (v[2] != rm_name_hash(node)) {
			snprintf(why, len, "the agent started for node %s "
				 "reads another node's part: {prefix} does not "
				 "name this node's", node);
			return -EINVAL;
		}
		if (v[1] != digest) {
			snprintf(why, len, "node %s's part was built from "
				 "another plan than this run's (another "
				 "scenario, scheduler or prefix)", node);
			return -EINVAL;
		}
		if (d != dilation) {
			snprintf(why, len, "node %s was deployed at dilation "
				 "%.17g, not %.17g: give the run --dilation "
				 "%.17g", node, d, dilation, d);
			return -EINVAL;
		}
		if (k >= 0 && p->sc->nodes[k].kind == NODE_ROUTER &&
		    (e = agents_ask(ag, i, RM_ASK_DELAY, NULL, v))) {
			snprintf(why, len, "router %s's delay line cannot be "
				 "read (%s): its part runs none", node,
				 strerror(-e));
			return e;
		}
	}
	for (int i = 0; i < n; i++) {
		struct nl_qstats q;

		e = counters_get(&c[i], &q);
		if (e) {
			snprintf(why, len, "node %s: %s %s (%s)",
				 agents_node(ag, c[i].agent),
				 e == -ENODEV ? "no interface" :
						"cannot read the shaper of",
				 c[i].ifname, strerror(-e));
			return e;
		}
	}
	return 0;
}

// SPDX-License-Identifier: MIT
#include "bare.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "emu/lab.h"
#include "emu/netns.h"
#include "emu/nl.h"
#include "labveth.h"

struct bare_node {
	char ns[64];
	int fd;
	struct nl *nl;
	int next;		/* next free ifindex, as emu/lab.c counts */
	bool made;
};

struct bare {
	const struct plan *p;
	int nnodes;
	struct bare_node *n;
	int *acc;		/* per server: index of acc<s> at its router */
	int *lp;		/* per lightpath end: index of lp<l> */
	struct { int node, index; char name[16]; } *peer;
	int npeers;
	char *err;
	size_t errlen;
};

static int fail(struct bare *b, int err, const char *what, const char *obj)
{
	snprintf(b->err, b->errlen, "cannot %s '%s': %s", what, obj,
		 strerror(-err));
	return err;
}

static int commit_all(struct bare *b)
{
	for (int i = 0; i < b->nnodes; i++) {
		int err = nl_commit(b->n[i].nl);

		if (err) {
			snprintf(b->err, b->errlen, "%s", nl_error(b->n[i].nl));
			return err;
		}
	}
	return 0;
}

static int make_netns(struct bare *b, const char *prefix)
{
	const struct scenario *sc = b->p->sc;

	for (int i = 0; i < sc->nnodes; i++) {
		struct bare_node *n = &b->n[i];
		int err;

		snprintf(n->ns, sizeof(n->ns), "%s-%s", prefix,
			 sc->nodes[i].name);
		err = netns_add(n->ns, lab_ns_flags(sc, i));
		if (err)
			return fail(b, err, "create netns", n->ns);
		n->made = true;
		n->fd = netns_open(n->ns);
		if (n->fd < 0)
			return fail(b, n->fd, "open netns", n->ns);
		n->nl = nl_open(n->ns);
		if (!n->nl)
			return fail(b, -errno, "open rtnetlink in", n->ns);
		n->next = 2;
		err = nl_link_up(n->nl, 1, "lo");
		if (err)
			return fail(b, err, "queue lo up in", n->ns);
	}
	return 0;
}

static int veth(struct bare *b, int u, const char *un, int v, const char *vn,
		int *ui, int *vi)
{
	int a = b->n[u].next++, z = b->n[v].next++;

	if (ui)
		*ui = a;
	if (vi)
		*vi = z;
	b->peer[b->npeers].node = v;
	b->peer[b->npeers].index = z;
	snprintf(b->peer[b->npeers].name, sizeof(b->peer[0].name), "%s", vn);
	b->npeers++;
	return nl_veth(b->n[u].nl, un, a, vn, z, b->n[v].fd);
}

static int bare_veth(const struct lab_veth *v, void *arg)
{
	struct bare *b = arg;

	return veth(b, v->u, v->un, v->v, v->vn,
		    v->lp >= 0 ? &b->lp[2 * v->lp + v->end] : NULL,
		    v->server >= 0 ? &b->acc[v->server] : NULL);
}

/* The veths of emu/lab_build.c make_links(), in the same order. */
static int make_veths(struct bare *b)
{
	int err = lab_veths(b->p, bare_veth, b);

	if (err)
		return fail(b, err, "queue veths for", "plan");
	return commit_all(b);
}

static int shape(struct nl *nl, int index, const char *name, double gbps,
		 double scale)
{
	uint64_t bps;
	uint32_t burst, limit;

	tbf_params(gbps, scale, &bps, &burst, &limit);
	return nl_tbf(nl, index, name, bps, burst, limit);
}

/* Peers up, then the addresses and qdiscs of emu/lab.c configure(). */
static int configure(struct bare *b, const struct addressing *ad)
{
	const struct plan *p = b->p;
	const struct scenario *sc = p->sc;
	char n1[16];
	int err = 0;

	for (int i = 0; i < b->npeers && !err; i++)
		err = nl_link_up(b->n[b->peer[i].node].nl, b->peer[i].index,
				 b->peer[i].name);
	for (int s = 0; s < sc->nnodes && !err; s++) {
		double g = sc->nodes[s].access_gbps;
		struct nl *rtr;

		if (sc->nodes[s].kind != NODE_SERVER)
			continue;	/* attach is -1 on a ROADM */
		rtr = b->n[sc->nodes[s].attach].nl;
		snprintf(n1, sizeof(n1), "acc%d", s);
		err = nl_addr(b->n[s].nl, 2, "up0", ad->access[s] + 1, 31);
		if (!err)
			err = shape(b->n[s].nl, 2, "up0", g, sc->scale);
		if (!err)
			err = nl_addr(rtr, b->acc[s], n1, ad->access[s], 31);
		if (!err)
			err = shape(rtr, b->acc[s], n1, g, sc->scale);
	}
	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];

		snprintf(n1, sizeof(n1), "lp%d", l);
		for (int end = 0; end < 2 && !err; end++) {
			struct nl *r = b->n[end ? lp->b : lp->a].nl;

			err = nl_addr(r, b->lp[2 * l + end], n1,
				      ad->lightpath[l] + (uint32_t)end, 31);
			if (!err)
				err = shape(r, b->lp[2 * l + end], n1,
					    lp->cap_gbps, sc->scale);
		}
	}
	if (err)
		return fail(b, err, "queue addresses and qdiscs for", "plan");
	return commit_all(b);
}

static void release(struct bare *b)
{
	for (int i = 0; b->n && i < b->nnodes; i++) {
		nl_close(b->n[i].nl);
		b->n[i].nl = NULL;
		if (b->n[i].fd >= 0)
			close(b->n[i].fd);
		b->n[i].fd = -1;
	}
}

int bare_down(struct bare *b)
{
	int first = 0;

	if (!b)
		return 0;
	release(b);
	for (int i = 0; b->n && i < b->nnodes; i++) {
		int err = b->n[i].made ? netns_del(b->n[i].ns) : 0;

		if (err && !first)
			first = err;
	}
	free(b->n);
	free(b->acc);
	free(b->lp);
	free(b->peer);
	free(b);
	return first;
}

int bare_up(const struct plan *p, const struct addressing *a,
	    const char *prefix, struct bare **out, struct bare_phases *t,
	    char *errbuf, size_t errlen)
{
	const struct scenario *sc = p->sc;
	int npeers = sc->nnodes + 2 * p->net->nlp, err;
	struct bare *b = calloc(1, sizeof(*b));
	double t0, t1, t2, t3;

	*out = NULL;
	if (!b)
		return -ENOMEM;
	for (int l = 0; l < p->net->nlp; l++)
		npeers += p->net->lp[l].nfib;
	b->p = p;
	b->nnodes = sc->nnodes;
	b->err = errbuf;
	b->errlen = errlen;
	b->n = calloc((size_t)sc->nnodes, sizeof(*b->n));
	b->acc = calloc((size_t)sc->nnodes, sizeof(*b->acc));
	b->lp = calloc((size_t)2 * p->net->nlp + 1, sizeof(*b->lp));
	b->peer = calloc((size_t)npeers, sizeof(*b->peer));
	if (!b->n || !b->acc || !b->lp || !b->peer) {
		bare_down(b);
		return -ENOMEM;
	}
	for (int i = 0; i < sc->nnodes; i++)
		b->n[i].fd = -1;
	t0 = now_s();
	err = make_netns(b, prefix);
	t1 = now_s();
	if (!err)
		err = make_veths(b);
	t2 = now_s();
	if (!err)
		err = configure(b, a);
	t3 = now_s();
	if (err) {
		bare_down(b);
		return err;
	}
	t->netns = t1 - t0;
	t->veth = t2 - t1;
	t->config = t3 - t2;
	*out = b;
	return 0;
}

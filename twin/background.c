// SPDX-License-Identifier: MIT
/*
 * Background traffic over a plan's IP layer (plan.h, struct bg_flow): a
 * shortest path by length (Dijkstra, the few hundred nodes of a scenario
 * scanned in full each step) from the traffic's source to its destination
 * over the access links and the lit lightpaths. A server is an end, never
 * a transit node: routers forward, servers do not.
 */
#include "plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ties between equal lengths go to fewer hops. */
#define HOP_KM 1e-6

struct bg_adj {
	int to;
	struct hop hop;
	double km;
};

/* The node hop h leaves from. */
static int hop_start(const struct plan *p, const struct hop *h)
{
	if (h->kind == HOP_ACCESS)
		return h->dir ? p->sc->nodes[h->idx].attach : h->idx;
	return h->dir ? p->net->lp[h->idx].b : p->net->lp[h->idx].a;
}

static int route(const struct plan *p, struct bg_flow *f)
{
	const struct scenario *sc = p->sc;
	const struct scn_bg *bg = f->bg;
	int n = sc->nnodes, nadj = 0, nh = 0, err = -ENOMEM;
	struct bg_adj *adj = calloc(2 * ((size_t)n + p->net->nlp) + 1,
				 sizeof(*adj));
	double *dist = malloc(((size_t)n + 1) * sizeof(*dist));
	int *prev = malloc(((size_t)n + 1) * sizeof(*prev));
	bool *done = calloc((size_t)n + 1, sizeof(*done));
	struct hop *hops = NULL;

	if (!adj || !dist || !prev || !done)
		goto out;
	for (int s = 0; s < n; s++) {
		const struct scn_node *x = &sc->nodes[s];

		if (x->kind != NODE_SERVER)
			continue;
		adj[nadj++] = (struct bg_adj){ x->attach, { HOP_ACCESS, s, 0 },
					    x->access_km };
		adj[nadj++] = (struct bg_adj){ s, { HOP_ACCESS, s, 1 },
					    x->access_km };
	}
	for (int l = 0; l < p->net->nlp; l++) {
		const struct lightpath *lp = &p->net->lp[l];

		adj[nadj++] = (struct bg_adj){ lp->b, { HOP_LIGHTPATH, l, 0 },
					    lp->km };
		adj[nadj++] = (struct bg_adj){ lp->a, { HOP_LIGHTPATH, l, 1 },
					    lp->km };
	}
	for (int i = 0; i < n; i++) {
		dist[i] = INFINITY;
		prev[i] = -1;	/* index into adj of the hop that reached i */
	}
	dist[bg->from] = 0;
	for (;;) {
		int u = -1;

		for (int i = 0; i < n; i++)
			if (!done[i] && isfinite(dist[i]) &&
			    (u < 0 || dist[i] < dist[u]))
				u = i;
		if (u < 0 || u == bg->to)
			break;
		done[u] = true;
		if (sc->nodes[u].kind == NODE_SERVER && u != bg->from)
			continue;
		for (int k = 0; k < nadj; k++) {
			const struct bg_adj *a = &adj[k];
			double d;

			if (hop_start(p, &a->hop) != u)
				continue;
			d = dist[u] + a->km + HOP_KM;
			if (d < dist[a->to]) {
				dist[a->to] = d;
				prev[a->to] = k;
			}
		}
	}
	err = 0;
	memset(&f->path, 0, sizeof(f->path));
	if (!isfinite(dist[bg->to])) {
		snprintf(f->why, sizeof(f->why), "no lit lightpaths join '%s' "
			 "and '%s'", sc->nodes[bg->from].name,
			 sc->nodes[bg->to].name);
		goto out;
	}
	for (int v = bg->to; v != bg->from; nh++)
		v = hop_start(p, &adj[prev[v]].hop);
	hops = calloc((size_t)nh + 1, sizeof(*hops));
	if (!hops) {
		err = -ENOMEM;
		goto out;
	}
	f->path.nhops = nh;
	for (int v = bg->to, i = nh - 1; v != bg->from; i--) {
		const struct bg_adj *a = &adj[prev[v]];

		hops[i] = a->hop;
		f->path.km += a->km;
		if (a->hop.kind == HOP_LIGHTPATH)
			f->path.fibre_hops += p->net->lp[a->hop.idx].nfib;
		v = hop_start(p, &a->hop);
	}
	f->path.from = bg->from;
	f->path.to = bg->to;
	f->path.hops = hops;
	f->routed = true;
out:
	free(adj);
	free(dist);
	free(prev);
	free(done);
	return err;
}

int plan_bg_new(struct plan *p)
{
	const struct scenario *sc = p->sc;

	p->bg = calloc((size_t)sc->nbg, sizeof(*p->bg));
	if (!p->bg)
		return -ENOMEM;
	p->nbg = sc->nbg;
	for (int i = 0; i < sc->nbg; i++) {
		p->bg[i].bg = &sc->bg[i];
		p->bg[i].on_s = 0;
		p->bg[i].off_s = INFINITY;
	}
	return 0;
}

int plan_background(struct plan *p)
{
	int err;

	if (p->bg || !p->sc->nbg)
		return 0;
	err = plan_bg_new(p);
	for (int i = 0; !err && i < p->nbg; i++)
		err = route(p, &p->bg[i]);
	return err;
}

int plan_traffic_windows(struct plan *p, double t_s)
{
	int err = plan_background(p);

	for (int i = 0; !err && i < p->nbg; i++) {
		const struct scn_event *ev = &p->sc->events[p->bg[i].bg->event];

		p->bg[i].on_s = ev->at_s - t_s;
		p->bg[i].off_s = ev->at_s + ev->for_s - t_s;
	}
	return err;
}

int plan_cut_windows(struct plan *p, double t_s)
{
	const struct scenario *sc = p->sc;
	int n = 0;

	free(p->down);
	p->down = NULL;
	p->ndown = 0;
	for (int k = 0; k < sc->nevents; k++)
		n += sc->events[k].kind == SCN_EV_CUT;
	if (!n)
		return 0;
	p->down = calloc((size_t)n, sizeof(*p->down));
	if (!p->down)
		return -ENOMEM;
	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];
		int r = scn_repair_of(sc, k);
		double off = r < 0 ? INFINITY : sc->events[r].at_s;

		if (e->kind != SCN_EV_CUT)
			continue;
		p->down[p->ndown++] = (struct fibre_down){
			e->fibre, e->at_s - t_s, off - t_s };
	}
	return 0;
}

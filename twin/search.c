// SPDX-License-Identifier: MIT
/*
 * The schedulers' searches. One Dijkstra serves every search: the fixed
 * shortest-path routes (fibres by km), point-to-point searches on the
 * auxiliary graph (bidirectional, the MST scheduler's hot path), and the
 * multi-source search behind the terminal MST, which also collects the
 * Voronoi boundary and stops as soon as the tree is known. The workspace
 * is stamped with a generation counter so a search costs what it visits,
 * not the size of the network.
 */
#include "sched_impl.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct heap_item {
	double d;
	int v;
};

/* The step each kind of static edge makes. */
const enum step_kind step_of[] = {
	[E_FIBRE] = ST_FIBRE,
	[E_ADDDROP] = ST_ADDDROP,
	[E_ACCESS] = ST_ACCESS,
};

/* heap.pos[] of a key that left the heap; label.bucket of a final label. */
#define FINAL (-1)

int heap_init(struct heap *h, int n)
{
	h->item = malloc((size_t)(n + 1) * sizeof(*h->item));
	h->pos = malloc((size_t)(n + 1) * sizeof(*h->pos));
	h->n = 0;
	return h->item && h->pos ? 0 : -ENOMEM;
}

void heap_release(struct heap *h)
{
	free(h->item);
	free(h->pos);
}

void frontier_release(struct frontier *f)
{
	free(f->pred);
	free(f->lab);
}

int frontier_init(struct frontier *f, int n)
{
	f->lab = calloc((size_t)n + 1, sizeof(*f->lab));
	f->pred = malloc((size_t)(n + 1) * sizeof(*f->pred));
	if (!f->lab || !f->pred)
		return -ENOMEM;
	return 0;
}

/* ---- indexed 4-ary heap ------------------------------------------------ */

/*
 * For the boundary pairs of terminal_mst's search, whose keys come in any
 * order (the searches' own queues are radix heaps, below). Decrease-key
 * instead of lazy deletion: a lazy heap pops one stale entry for every
 * key lowered. Four children per node make the heap half as deep as a
 * binary one, and the siblings compared on the way down are adjacent in
 * memory.
 */

static void heap_up(struct heap *h, int i, double d, int v)
{
	while (i > 0) {
		int up = (i - 1) / 4;

		if (h->item[up].d <= d)
			break;
		h->item[i] = h->item[up];
		h->pos[h->item[i].v] = i;
		i = up;
	}
	h->item[i] = (struct heap_item){ d, v };
	h->pos[v] = i;
}

/* Insert v, or lower its key to d if it is in the heap already. */
void heap_set(struct heap *h, double d, int v, bool in)
{
	heap_up(h, in ? h->pos[v] : h->n++, d, v);
}

int heap_pop(struct heap *h)
{
	int top = h->item[0].v, n = --h->n, i = 0;
	struct heap_item last = h->item[n];

	h->pos[top] = FINAL;
	if (!n)
		return top;
	for (;;) {
		int c = 4 * i + 1, end = c + 4 < n ? c + 4 : n, min = c;

		if (c >= n)
			break;
		for (int j = c + 1; j < end; j++)
			if (h->item[j].d < h->item[min].d)
				min = j;
		if (last.d <= h->item[min].d)
			break;
		h->item[i] = h->item[min];
		h->pos[h->item[i].v] = i;
		i = min;
	}
	h->item[i] = last;
	h->pos[last.v] = i;
	return top;
}

/* ---- a search's queue -------------------------------------------------- */

static inline uint64_t key_bits(double d)
{
	uint64_t k;

	memcpy(&k, &d, sizeof(k));
	return k;
}

static inline void rq_link(struct frontier *f, int v)
{
	struct rqueue *q = &f->q;
	struct label *l = &f->lab[v];
	uint64_t k = key_bits(l->dist);
	/* distances are >= +0: bit 63 is clear in all, so b <= 63 */
	int b = k == q->last ? 0 : 64 - __builtin_clzll(k ^ q->last);

	l->bucket = b;
	l->next = -1;
	l->prev = q->tail[b];
	if (l->prev >= 0)
		f->lab[l->prev].next = v;
	else
		q->head[b] = v;
	q->tail[b] = v;
	q->used |= 1ull << b;
}

static inline void rq_unlink(struct frontier *f, int v)
{
	struct rqueue *q = &f->q;
	const struct label *l = &f->lab[v];

	if (l->prev >= 0)
		f->lab[l->prev].next = l->next;
	else
		q->head[l->bucket] = l->next;
	if (l->next >= 0)
		f->lab[l->next].prev = l->prev;
	else
		q->tail[l->bucket] = l->prev;
	if (q->head[l->bucket] < 0)
		q->used &= ~(1ull << l->bucket);
}

static void rq_clear(struct rqueue *q)
{
	q->last = 0;
	q->used = 0;
	q->n = 0;
	for (int b = 0; b < 64; b++)
		q->head[b] = q->tail[b] = -1;
}

/* Queue v at its label's distance, or move it there (in: queued already). */
static inline void rq_set(struct frontier *f, int v, bool in)
{
	if (in)
		rq_unlink(f, v);
	else
		f->q.n++;
	rq_link(f, v);
}

/*
 * Make bucket 0 hold the least distance queued: take the lowest bucket,
 * find its least, and spread the bucket over the buckets below it (each of
 * its distances shares the bits above its own bucket's with that least).
 */
static void rq_settle(struct frontier *f)
{
	struct rqueue *q = &f->q;
	int b, v;
	double min = INFINITY;

	if (q->head[0] >= 0 || !q->n)
		return;
	b = __builtin_ctzll(q->used);
	for (v = q->head[b]; v >= 0; v = f->lab[v].next)
		if (f->lab[v].dist < min)
			min = f->lab[v].dist;
	q->last = key_bits(min);
	v = q->head[b];
	q->head[b] = q->tail[b] = -1;
	q->used &= ~(1ull << b);
	while (v >= 0) {
		int next = f->lab[v].next;

		rq_link(f, v);
		v = next;
	}
}

/* The least distance queued, or INFINITY. */
static double rq_top(struct frontier *f)
{
	rq_settle(f);
	return f->q.n ? f->lab[f->q.head[0]].dist : INFINITY;
}

/* Take a node at the least distance; its label is final. */
static int rq_pop(struct frontier *f)
{
	int v;

	rq_settle(f);
	v = f->q.head[0];
	rq_unlink(f, v);
	f->lab[v].bucket = FINAL;
	f->q.n--;
	return v;
}

/* ---- searches ---------------------------------------------------------- */

bool search_reached(const struct sched *s, int v)
{
	return s->fwd.lab[v].stamp == s->gen;
}

double search_dist(const struct sched *s, int v)
{
	return search_reached(s, v) ? s->fwd.lab[v].dist : INFINITY;
}

double aux_weight(const struct sched *s, const struct step *st)
{
	switch (st->kind) {
	case ST_FIBRE:
		return weight_fibre(s->sc, st->idx);
	case ST_ADDDROP:
		return weight_adddrop(s->sc);
	case ST_ACCESS:
		return weight_access(s->sc, st->idx);
	case ST_LIGHTPATH:
		return weight_lightpath(s->sc, &s->net->lp[st->idx]);
	}
	return INFINITY;
}

/* The best meeting of the two halves of a pair search so far. */
struct meeting {
	double d;
	int v;
};

/*
 * terminal_mst's search builds the boundary graph of the terminals'
 * Voronoi regions as it goes — m[a * k + b], the cheapest path from
 * terminal a to terminal b through an edge between their regions — and
 * runs Kruskal on it alongside, so it can stop once the tree is known.
 */
struct voronoi {
	double *m;
	int k;
	struct heap pairs;	/* pairs a * k + b (a < b) met, by m */
	int *uf;		/* union-find over the terminals */
	int parts;		/* regions Kruskal has not joined yet */
};

/* How one side of a search walks the graph, and what it does on the way. */
struct walk {
	enum search_mode mode;
	bool directed;
	bool reverse;		/* walk edges backwards, from the target */
	int lambda;		/* >= 0: only fibres where it is free */
	double demand;
	int leaf;		/* the only server to step onto, or -1: any */
	/* search_pair: the opposite side, and where the two met */
	const struct frontier *other;
	struct meeting *meet;
	struct voronoi *vor;	/* terminal_mst, or NULL */
};

/*
 * Edge v-u of weight wt between two regions, met as u becomes final after
 * v. The sum is taken as (dist[v] + wt) + dist[u]: dist[u] is at most the
 * first term, which voronoi_done() relies on.
 */
static void boundary(struct voronoi *vo, const struct frontier *f, int u,
		     int v, double wt)
{
	int a = f->lab[u].src, b = f->lab[v].src, id;
	double d = f->lab[v].dist + wt + f->lab[u].dist;

	if (a == b)
		return;
	id = a < b ? a * vo->k + b : b * vo->k + a;
	if (d >= vo->m[id])
		return;
	vo->m[(long)a * vo->k + b] = vo->m[(long)b * vo->k + a] = d;
	heap_set(&vo->pairs, d, id, vo->pairs.pos[id] >= 0);
}

static int uf_find(int *uf, int i)
{
	while (uf[i] != i)
		i = uf[i] = uf[uf[i]];
	return i;
}

/*
 * Kruskal on the boundary graph, as far as a search about to settle a
 * node at distance t allows. An edge not met yet has an end not final, at
 * distance >= t, and its other end is at most its weight short of that
 * (or also not final), so its sum is >= 2t: the pairs below 2t are final
 * and can be taken in order. Once they join all regions the tree is
 * known: Prim on m then picks only pairs below 2t, the same as after a
 * search to the end.
 */
static bool voronoi_done(struct voronoi *vo, double t)
{
	while (vo->parts > 1 && vo->pairs.n && vo->pairs.item[0].d < 2 * t) {
		int id = heap_pop(&vo->pairs);
		int a = uf_find(vo->uf, id / vo->k);
		int b = uf_find(vo->uf, id % vo->k);

		if (a != b) {
			vo->uf[a] = b;
			vo->parts--;
		}
	}
	return vo->parts <= 1;
}

/*
 * Label v through the edge from u (reverse: the edge from v into u). A
 * server has one edge, so its label is final as soon as it has one: it
 * never enters the queue.
 */
static inline __attribute__((always_inline)) void
relax(struct sched *s, const struct walk *w, struct frontier *f, int u, int v,
      double wt, enum step_kind kind, int idx, bool leaf)
{
	double nd = f->lab[u].dist + wt;
	bool in = false;

	if (f->lab[v].stamp != s->gen) {
		f->lab[v].stamp = s->gen;
		f->lab[v].bucket = FINAL;
	} else if (f->lab[v].bucket == FINAL) {
		if (w->vor)
			boundary(w->vor, f, u, v, wt);
		return;
	} else if (f->lab[v].dist <= nd) {
		return;
	} else {
		in = true;
	}
	f->lab[v].dist = nd;
	f->lab[v].src = f->lab[u].src;
	f->pred[v] = w->reverse ? (struct step){ kind, idx, v, u }
				: (struct step){ kind, idx, u, v };
	if (!leaf)
		rq_set(f, v, in);
	if (w->other && w->other->lab[v].stamp == s->gen &&
	    nd + w->other->lab[v].dist < w->meet->d)
		*w->meet = (struct meeting){ nd + w->other->lab[v].dist, v };
}

/* Offer every edge at u, now final, that the walk may take. */
static void scan(struct sched *s, const struct walk *w, struct frontier *f,
		 int u)
{
	const struct net *net = s->net;
	const struct lp_ends *ends = &net->router_ends[u];

	for (int e = net->adj_start[u]; e < net->adj_start[u + 1]; e++) {
		const struct adj *a = &net->adj[e];
		double wt = s->adj_w[e];
		bool leaf = false;

		switch (a->kind) {
		case E_FIBRE:
			/* a cut fibre is not there, even for km routes */
			if (isinf(wt))
				continue;
			if (w->lambda >= 0 ?
				    !net_lambda_free(net, a->idx, w->lambda) :
				    w->mode == S_AUX &&
					    !net_any_free(net, a->idx))
				continue;
			if (w->mode == S_KM)
				wt = s->sc->fibres[a->idx].km;
			break;
		case E_ADDDROP:
			if (w->mode == S_KM)
				continue;
			break;
		case E_ACCESS:
			if (w->mode == S_KM)
				continue;
			/*
			 * Servers are endpoints, never transit. An access
			 * edge's idx is its server, and among servers only
			 * sources are scanned, so only a step onto a server
			 * needs a check: onto the one the search is for, or
			 * for the Voronoi regions onto a terminal (labelled
			 * from the start): no other is ever on a boundary.
			 */
			if (a->to == a->idx) {
				if (w->vor ? f->lab[a->to].stamp != s->gen :
					     w->leaf >= 0 && a->to != w->leaf)
					continue;
				leaf = true;
			}
			break;
		}
		relax(s, w, f, u, a->to, wt, step_of[a->kind], a->idx, leaf);
	}
	if (w->mode != S_AUX)
		return;
	/*
	 * Room for one more transfer. Directed searches route a real
	 * transfer, so only the direction of travel counts. The undirected
	 * searches behind the MST take a lightpath with room either way: the
	 * tree is over an undirected closure, and its edges are then routed
	 * directed.
	 */
	for (int i = 0; i < ends->n; i++) {
		const struct lp_end *e = &ends->v[i];
		/* backwards, the transfer leaves e->to, not u */
		double way = w->reverse ? e->in : e->out;
		double back = w->reverse ? e->out : e->in;

		if (way + ROOM_EPS < w->demand &&
		    (w->directed || back + ROOM_EPS < w->demand))
			continue;
		relax(s, w, f, u, e->to, e->w, ST_LIGHTPATH, e->lp, false);
	}
}

static void new_generation(struct sched *s)
{
	if (++s->gen == 0) {
		for (int v = 0; v < s->n; v++)
			s->fwd.lab[v].stamp = s->bwd.lab[v].stamp = 0;
		s->gen = 1;
	}
	rq_clear(&s->fwd.q);
	rq_clear(&s->bwd.q);
}

static void start(struct sched *s, struct frontier *f, const int *srcs,
		  int nsrc)
{
	for (int i = 0; i < nsrc; i++) {
		int v = srcs[i];

		if (f->lab[v].stamp == s->gen)
			continue;	/* listed twice */
		f->lab[v].stamp = s->gen;
		f->lab[v].dist = 0;
		f->lab[v].src = i;
		f->pred[v] = (struct step){ .kind = ST_ACCESS, .idx = -1,
					    .from = -1, .to = v };
		rq_set(f, v, false);
	}
}

/* Dijkstra on f until target is final (target < 0: until the end). */
static int run(struct sched *s, const struct walk *w, struct frontier *f,
	       int target)
{
	while (f->q.n) {
		int u = rq_pop(f);

		if (u == target)
			return 0;
		if (w->vor && voronoi_done(w->vor, f->lab[u].dist))
			return 0;
		scan(s, w, f, u);
		/* a server is final once its router labelled it */
		if (target >= 0 && f->lab[target].stamp == s->gen &&
		    f->lab[target].bucket == FINAL)
			return 0;
	}
	return target < 0 ? 0 : -ENOENT;
}

int search(struct sched *s, const int *srcs, int nsrc, int target,
	   enum search_mode mode, bool directed, int lambda, double demand)
{
	struct walk w = { .mode = mode, .directed = directed,
			  .lambda = lambda, .demand = demand, .leaf = -1 };

	new_generation(s);
	start(s, &s->fwd, srcs, nsrc);
	return run(s, &w, &s->fwd, target);
}

/* The forward search's steps from its source to v, into s->steps. */
static int fwd_chain(struct sched *s, int v)
{
	int n = 0;

	while (s->fwd.pred[v].from >= 0) {
		s->steps[n++] = s->fwd.pred[v];
		v = s->fwd.pred[v].from;
	}
	for (int i = 0; i < n / 2; i++) {
		struct step t = s->steps[i];

		s->steps[i] = s->steps[n - 1 - i];
		s->steps[n - 1 - i] = t;
	}
	return n;
}

int path_to(struct sched *s, int v, struct step **out)
{
	*out = s->steps;
	return fwd_chain(s, v);
}

/*
 * The forward chain a -> meet, then the backward chain meet -> b. In exact
 * arithmetic the two share no node but meet (a node on both is offered as
 * a meeting first, at a sum no larger, and only a strictly shorter one
 * replaces it), but a label can shrink by less than the rounding of the
 * sum and then take the chain through such a node: cut the loop there.
 * A pair search has one source per side, so the forward src[] (all 0) is
 * free to hold each node's position on the forward part, plus 1.
 */
static int join(struct sched *s, int meet, int b)
{
	struct frontier *f = &s->fwd;
	int n = fwd_chain(s, meet), nf = n;

	for (int i = 0; i < n; i++)
		f->lab[s->steps[i].from].src = i + 1;
	f->lab[meet].src = n + 1;
	for (int x = meet; x != b;) {
		const struct step *st = &s->bwd.pred[x];

		x = st->to;
		if (f->lab[x].stamp == s->gen && f->lab[x].src > 0 &&
		    f->lab[x].src - 1 <= nf) {
			n = nf = f->lab[x].src - 1;
			continue;
		}
		s->steps[n++] = *st;
	}
	return n;
}

/*
 * Bidirectional Dijkstra: a forward search from a and a backward one from
 * b, until no path through an unfinished node can beat the best meeting
 * (top_f + top_b >= best). Around a random pair the two balls of half the
 * radius hold far fewer nodes than one of the full radius. Each step
 * advances the side with the smaller heap (Pohl's rule): it keeps the two
 * balls' work even where one end is in a denser part of the graph, and on
 * the benchmark pops a fifth fewer nodes than taking the nearer side.
 */
int search_pair(struct sched *s, int a, int b, int lambda, double demand,
		struct step **out)
{
	struct meeting meet = { INFINITY, -1 };
	struct walk fw = { .mode = S_AUX, .directed = true, .lambda = lambda,
			   .demand = demand, .leaf = b, .other = &s->bwd,
			   .meet = &meet };
	struct walk bw = fw;

	bw.reverse = true;
	bw.leaf = a;
	bw.other = &s->fwd;
	new_generation(s);
	start(s, &s->fwd, &a, 1);
	start(s, &s->bwd, &b, 1);
	if (a == b)
		meet = (struct meeting){ 0, a };
	for (;;) {
		double tf = rq_top(&s->fwd), tb = rq_top(&s->bwd);

		if (tf + tb >= meet.d)
			break;
		/* both queues hold a node, or tf + tb would be infinite */
		if (s->fwd.q.n <= s->bwd.q.n)
			scan(s, &fw, &s->fwd, rq_pop(&s->fwd));
		else
			scan(s, &bw, &s->bwd, rq_pop(&s->bwd));
	}
	if (meet.v < 0)
		return -ENOENT;
	*out = s->steps;
	return join(s, meet.v, b);
}

/* ---- the terminals' Voronoi regions ----------------------------------- */

int search_voronoi(struct sched *s, const int *term, int k, double demand,
		   double *m)
{
	struct voronoi vo = { .k = k, .parts = k, .m = m };
	struct walk w = { .mode = S_AUX, .lambda = -1, .demand = demand,
			  .leaf = -1, .vor = &vo };
	int err;

	vo.uf = malloc((size_t)k * sizeof(*vo.uf));
	if (!vo.uf || heap_init(&vo.pairs, k * k)) {
		err = -ENOMEM;
		goto out;
	}
	for (long i = 0; i < (long)k * k; i++)
		vo.pairs.pos[i] = FINAL;
	for (int i = 0; i < k; i++)
		vo.uf[i] = i;
	new_generation(s);
	start(s, &s->fwd, term, k);
	err = run(s, &w, &s->fwd, -1);
out:
	heap_release(&vo.pairs);
	free(vo.uf);
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * The packet-level predictor (predict.h, predict_round_packets): the same
 * round as the fluid model, with every transfer cut into the TCP segments
 * it puts on the wire (twin/wire.h) and every link serving the transfers
 * that have packets waiting in turn, a frame each (deficit round robin
 * with a quantum of one full frame, which is what the emulation's shapers
 * do). A packet crosses a link in size / rate, then the link's fibre
 * (4.9 us/km), then waits at the next link. A message is sent whole at
 * once (no slow start) and is received when its last packet arrives.
 *
 * Background traffic is what the emulation's generator sends: full-size
 * datagrams (WIRE_DGRAM_FRAME) evenly paced at its rate over its window,
 * served in turn with the transfers on every link of its path. Where its
 * frames are few to a message, when they come matters: traffic already
 * flowing at the round's start comes in at no particular phase, so the
 * round is predicted at PKT_PHASES phases of its pacing and averaged.
 *
 * Discrete events in a binary heap ordered by (time, sequence): the same
 * plan gives the same prediction on every run.
 */
#include "predict.h"
#include "timeline.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

#define PKT_PHASES 8
#define PKT_BG_FRAMES_MAX 4194304	/* per pass: bounds the work */
/* Segments times the links they cross, over a round's transfers: the
 * work of a pass (NSFNET near the cap: 1.9 s a pass here; background
 * traffic makes eight) */
#define PKT_SEG_HOPS_MAX 16777216
#define PKT_STR(x) PKT_STR_(x)
#define PKT_STR_(x) #x

const char *predict_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == EDEADLK)
		return "a round that cannot end (a transfer waits for a fibre "
		       "that is never repaired)";
	if (err == EOPNOTSUPP)
		return "the packet predictor models relays that store and "
		       "forward whole models only: add 'relay: store' to the "
		       "scenario (pipelined is the default), or use the "
		       "fluid predictor";
	if (err == ETIME)
		return "more work than the twin does to follow one timeline "
		       "(" PKT_STR(
			       TIMELINE_WORK_MAX) " steps of its "
						  "predictors): its epochs "
						  "schedule and predict too "
						  "many "
						  "tasks and flows too often; "
						  "use --reschedule none, "
						  "fewer events, or fewer "
						  "tasks or flows at once";
	if (err == E2BIG)
		return "more background traffic than the packet predictor "
		       "simulates in a round (" PKT_STR(PKT_BG_FRAMES_MAX)
		       " frames): use the fluid predictor";
	if (err == EFBIG)
		return "more TCP segments than the packet predictor simulates "
		       "in a round (at most " PKT_STR(PKT_SEG_HOPS_MAX)
		       " segments x links crossed, over every transfer): use "
		       "the fluid predictor";
	return strerror(err);
}

enum ev_kind { EV_LINK_FREE, EV_ARRIVE, EV_TRAINED, EV_EMIT, EV_WAKE,
	       EV_AGGREGATED };

struct event {
	double t;
	uint64_t seq;
	int kind;
	int a, b;		/* LINK_FREE: link; ARRIVE: flow, hop;
				 * TRAINED: task slot (model index);
				 * EMIT: background flow; WAKE: link */
};

struct pflow {
	int task, model;
	bool upload;
	const struct ppath *pp;
	int *link;		/* per hop: directed link id */
	double *prop;		/* per hop: seconds of fibre after it */
	int *waiting;		/* per hop: packets queued there */
	int *next;		/* per hop: index of the next one to send */
	int npkt, got;		/* packets; delivered at the far end */
	double full_bits, last_bits;
	bool bg;		/* background traffic: frames of full_bits
				 * every gap seconds until off */
	double gap, off;
	double stall;		/* a transfer a cut took data from: sends
				 * nothing before this (TCP's timer) */
};

struct plink {
	double bps;
	bool busy;
	int nflows, rr;
	int *flows;		/* flows that cross this link */
};

struct pmodel {
	double recv, train_end;
	bool trained, sent;
	bool summing, summed;	/* its aggregate: being made, made */
	int pending;
};

struct psim {
	struct plan *p;
	struct pflow *f;
	int nf;
	struct plink *l;
	int nl;
	struct pmodel *m;
	int *first;		/* per task: its models' first slot */
	int total;		/* models of unblocked tasks */
	double *round_end;
	struct event *heap;
	size_t nheap, capheap;
	uint64_t seq;
	int left;
	uint64_t emitted;	/* background frames, all flows */
};

static bool before(const struct event *x, const struct event *y)
{
	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static int push(struct psim *s, double t, int kind, int a, int b)
{
	size_t i;

	if (s->nheap == s->capheap) {
		size_t cap = s->capheap ? 2 * s->capheap : 1024;
		struct event *h = realloc(s->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		s->heap = h;
		s->capheap = cap;
	}
	i = s->nheap++;
	s->heap[i] = (struct event){ t, s->seq++, kind, a, b };
	while (i > 0 && before(&s->heap[i], &s->heap[(i - 1) / 2])) {
		struct event x = s->heap[i];

		s->heap[i] = s->heap[(i - 1) / 2];
		s->heap[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
	return 0;
}

static struct event pop(struct psim *s)
{
	struct event top = s->heap[0];
	size_t i = 0;

	s->heap[0] = s->heap[--s->nheap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < s->nheap && before(&s->heap[l], &s->heap[m]))
			m = l;
		if (r < s->nheap && before(&s->heap[r], &s->heap[m]))
			m = r;
		if (m == i)
			break;
		struct event x = s->heap[i];

		s->heap[i] = s->heap[m];
		s->heap[m] = x;
		i = m;
	}
	return top;
}

static int slot(const struct psim *s, int task, int model)
{
	return s->first[task] + model;
}

/* flow index: broadcast to model m at slot, upload from m at total + slot */
static int flow_of(const struct psim *s, int task, int model, bool up)
{
	return slot(s, task, model) + (up ? s->total : 0);
}

/*
 * When lightpath link `link` comes back from a cut that has it dark at
 * t (INFINITY: never), or t if it is not dark. Access links never are.
 */
static double dark_until(const struct psim *s, int link, double t)
{
	int n2 = 2 * s->p->sc->nnodes;

	return link < n2 ? t : plan_lightpath_dark_until(s->p, (link - n2) / 2,
							   t);
}

/*
 * A transfer whose frames meet a lightpath dark until `until` loses what
 * it sends: TCP sends again at its first retransmission timeout once the
 * fibre is back (wire_tcp_stall), then in slow start, whose last round
 * trip sends what is left: none of its frames moves until then.
 */
static void tcp_stall(struct pflow *f, double t, double until)
{
	double rtt = 2 * f->pp->km * FIBRE_S_PER_KM;

	f->stall = wire_tcp_stall(t, rtt, until, f->npkt - f->got);
}

/*
 * An idle link with packets waiting sends the next one, in turn, of the
 * transfers not waiting for TCP. A dark one sends nothing until its fibre
 * is repaired (a frame on the wire when the cut comes goes on); the
 * transfers with frames at it wait for TCP (tcp_stall), background
 * traffic only for the repair.
 */
static int serve(struct psim *s, int link, double t)
{
	struct plink *l = &s->l[link];
	double until, wake = INFINITY;

	if (l->busy)
		return 0;
	until = s->p->ndown ? dark_until(s, link, t) : t;
	for (int k = 0; until > t && k < l->nflows; k++) {
		struct pflow *f = &s->f[l->flows[k]];
		int h = 0;

		while (h < f->pp->nhops && f->link[h] != link)
			h++;
		if (h < f->pp->nhops && !f->bg && f->waiting[h] &&
		    !(f->stall > t))
			tcp_stall(f, t, until);
	}
	if (until > t) {
		l->busy = true;
		return isfinite(until) ? push(s, until, EV_LINK_FREE, link, 0)
				       : 0;
	}
	for (int k = 0; k < l->nflows; k++) {
		int fi = l->flows[(l->rr + k) % l->nflows];
		struct pflow *f = &s->f[fi];
		int h = 0;
		double bits, done;
		int err;

		while (h < f->pp->nhops && f->link[h] != link)
			h++;
		if (h == f->pp->nhops || f->waiting[h] == 0)
			continue;
		if (f->stall > t) {
			wake = fmin(wake, f->stall);
			continue;
		}
		bits = !f->bg && f->next[h] == f->npkt - 1 ? f->last_bits
							     : f->full_bits;
		f->waiting[h]--;
		f->next[h]++;
		done = t + bits / l->bps;
		l->busy = true;
		l->rr = (l->rr + k + 1) % l->nflows;
		err = push(s, done, EV_LINK_FREE, link, 0);
		if (!err)
			err = push(s, done + f->prop[h], EV_ARRIVE, fi, h + 1);
		return err;
	}
	/* only transfers waiting for TCP: look again when the first goes */
	return isfinite(wake) ? push(s, wake, EV_WAKE, link, 0) : 0;
}

/* Background flow fi puts its next frame on its first link. */
static int emit(struct psim *s, int fi, double t)
{
	struct pflow *f = &s->f[fi];
	int err;

	if (++s->emitted > PKT_BG_FRAMES_MAX)
		return -E2BIG;
	f->waiting[0]++;
	err = serve(s, f->link[0], t);
	if (!err && t + f->gap < f->off)
		err = push(s, t + f->gap, EV_EMIT, fi, 0);
	return err;
}

static int send_message(struct psim *s, int fi, double t)
{
	struct pflow *f = &s->f[fi];

	f->waiting[0] += f->npkt;
	return serve(s, f->link[0], t);
}

static int try_upload(struct psim *s, int task, int m, double t)
{
	struct pmodel *x = &s->m[slot(s, task, m)];
	double agg;

	if (m == 0 || x->sent || !x->trained || x->pending || x->summing)
		return 0;
	/* it aggregates once it has trained and has them all */
	agg = x->summed ? 0 :
			  predict_agg_tree_s(s->p, &s->p->tasks[task], m);
	if (agg > 0) {
		x->summing = true;
		return push(s, t + agg, EV_AGGREGATED, task, m);
	}
	x->sent = true;
	return send_message(s, flow_of(s, task, m, true), t);
}

/* The whole message of flow fi has arrived at time t. */
static int delivered(struct psim *s, int fi, double t)
{
	const struct pflow *f = &s->f[fi];
	const struct task_plan *tp = &s->p->tasks[f->task];
	struct pmodel *x;
	int err = 0;

	if (!f->upload) {
		x = &s->m[slot(s, f->task, f->model)];
		x->recv = t;
		x->train_end = t + predict_train_s(s->p, tp, f->model);
		for (int c = 1; c < tp->nmodels && !err; c++)
			if (tp->bcast.parent[c] == f->model)
				err = send_message(s, flow_of(s, f->task, c,
							      false), t);
		if (!err)
			err = push(s, x->train_end, EV_TRAINED, f->task,
				   f->model);
		return err;
	}
	x = &s->m[slot(s, f->task, tp->up.parent[f->model])];
	if (--x->pending == 0 && tp->up.parent[f->model] == 0) {
		/* the global model folds the last one in */
		s->round_end[f->task] = t + predict_agg_tree_s(s->p, tp, 0);
		s->left--;
		return 0;
	}
	return try_upload(s, f->task, tp->up.parent[f->model], t);
}

static int run(struct psim *s)
{
	int err = 0;

	while (!err && s->left > 0) {
		struct event e;

		if (!s->nheap)
			return -EDEADLK;	/* a tree that cannot finish */
		e = pop(s);
		predict_work += 8; /* about a fluid step's time, eight */
		if (e.kind == EV_LINK_FREE) {
			s->l[e.a].busy = false;
			err = serve(s, e.a, e.t);
		} else if (e.kind == EV_ARRIVE) {
			struct pflow *f = &s->f[e.a];

			if (e.b == f->pp->nhops) {
				if (!f->bg && ++f->got == f->npkt)
					err = delivered(s, e.a, e.t);
			} else {
				f->waiting[e.b]++;
				err = serve(s, f->link[e.b], e.t);
			}
		} else if (e.kind == EV_EMIT) {
			err = emit(s, e.a, e.t);
		} else if (e.kind == EV_WAKE) {
			err = serve(s, e.a, e.t);
		} else if (e.kind == EV_AGGREGATED) {
			s->m[slot(s, e.a, e.b)].summing = false;
			s->m[slot(s, e.a, e.b)].summed = true;
			err = try_upload(s, e.a, e.b, e.t);
		} else {
			s->m[slot(s, e.a, e.b)].trained = true;
			err = try_upload(s, e.a, e.b, e.t);
		}
	}
	return err;
}

static int link_add_flow(struct plink *l, int fi)
{
	int *v = realloc(l->flows, (size_t)(l->nflows + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	l->flows = v;
	l->flows[l->nflows++] = fi;
	return 0;
}

/* Flow f's hops over path pp: links, fibre after each, queues. */
static int setup_path(struct psim *s, int fi, const struct ppath *pp)
{
	struct plan *p = s->p;
	struct pflow *f = &s->f[fi];
	double fibre = 0;
	int n = pp->nhops, err = 0;

	f->pp = pp;
	f->link = calloc((size_t)n + 1, sizeof(*f->link));
	f->prop = calloc((size_t)n + 1, sizeof(*f->prop));
	f->waiting = calloc((size_t)n + 1, sizeof(*f->waiting));
	f->next = calloc((size_t)n + 1, sizeof(*f->next));
	if (!f->link || !f->prop || !f->waiting || !f->next)
		return -ENOMEM;
	for (int h = 0; h < n && !err; h++) {
		const struct hop *hp = &pp->hops[h];

		f->link[h] = plan_link(p, hp);
		if (hp->kind != HOP_ACCESS) {
			f->prop[h] = p->net->lp[hp->idx].km * FIBRE_S_PER_KM;
			fibre += p->net->lp[hp->idx].km;
		}
		err = link_add_flow(&s->l[f->link[h]], fi);
	}
	/* any length the path has beyond its lightpaths: at its end */
	if (n > 0 && pp->km > fibre)
		f->prop[n - 1] += (pp->km - fibre) * FIBRE_S_PER_KM;
	return err;
}

static int setup_flow(struct psim *s, int fi, int task, int m, bool up,
		      const struct wire_msg *wm)
{
	const struct task_plan *tp = &s->p->tasks[task];
	struct pflow *f = &s->f[fi];
	double scale = s->p->sc->scale;

	f->task = task;
	f->model = m;
	f->upload = up;
	f->npkt = (int)wm->segments;
	f->full_bits = 8.0 * (WIRE_MSS + WIRE_SEG_OVERHEAD) * scale;
	f->last_bits = 8.0 * ((double)wm->msg - (double)(wm->segments - 1) *
				      WIRE_MSS + WIRE_SEG_OVERHEAD) * scale;
	return setup_path(s, fi, up ? &tp->up.path[m] : &tp->bcast.path[m]);
}

/*
 * Background traffic i as flow fi: its first frame at its start, or, if
 * it flows already when the round starts, `phase` (0..1) of its pacing
 * after the start.
 */
static int setup_bg(struct psim *s, int fi, int i, double phase)
{
	const struct bg_flow *b = &s->p->bg[i];
	struct pflow *f = &s->f[fi];
	double first;
	int err;

	f->task = f->model = -1;
	f->bg = true;
	f->full_bits = f->last_bits = 8.0 * WIRE_DGRAM_FRAME * s->p->sc->scale;
	f->gap = f->full_bits / (b->bg->gbps * 1e9);
	f->off = b->off_s;
	err = setup_path(s, fi, &b->path);
	if (err || !(f->gap > 0) || b->path.nhops == 0)
		return err;
	first = b->on_s > 0 ? b->on_s : phase * f->gap;
	return first < f->off ? push(s, first, EV_EMIT, fi, 0) : 0;
}

/* A task's round as one pass predicts it. */
struct pround {
	double round, bcast, compute, upload;
};

/* One pass of the round, background traffic at `phase`: out[task]. */
static int simulate(struct plan *p, double phase, struct pround *out)
{
	struct psim s = { .p = p };
	int err = -ENOMEM, nbg = 0;

	s.nl = plan_nlinks(p);
	s.first = calloc((size_t)p->ntasks + 1, sizeof(*s.first));
	s.round_end = calloc((size_t)p->ntasks + 1, sizeof(*s.round_end));
	s.l = calloc((size_t)s.nl + 1, sizeof(*s.l));
	if (!s.first || !s.round_end || !s.l)
		goto out;
	for (int t = 0; t < p->ntasks; t++) {
		s.first[t] = s.total;
		if (!p->tasks[t].blocked)
			s.total += p->tasks[t].nmodels;
	}
	for (int i = 0; i < p->nbg; i++)
		nbg += p->bg[i].routed;
	s.nf = 2 * s.total + nbg;
	s.f = calloc((size_t)s.nf + 1, sizeof(*s.f));
	s.m = calloc((size_t)s.total + 1, sizeof(*s.m));
	if (!s.f || !s.m)
		goto out;
	for (int l = 0; l < s.nl; l++)
		s.l[l].bps = plan_link_gbps(p, l) * 1e9;
	err = 0;
	for (int t = 0; t < p->ntasks && !err; t++) {
		const struct task_plan *tp = &p->tasks[t];
		struct wire_msg wm;

		if (tp->blocked)
			continue;
		err = wire_message(p->sc, tp->task, &wm);
		for (int m = 1; m < tp->nmodels && !err; m++) {
			err = setup_flow(&s, flow_of(&s, t, m, false), t, m,
					 false, &wm);
			if (!err)
				err = setup_flow(&s, flow_of(&s, t, m, true), t,
						 m, true, &wm);
			s.m[slot(&s, t, tp->up.parent[m])].pending++;
		}
		s.left++;
	}
	for (int i = 0, fi = 2 * s.total; i < p->nbg && !err; i++)
		if (p->bg[i].routed)
			err = setup_bg(&s, fi++, i, phase);
	for (int l = 0; l < s.nl && !err; l++)
		if (s.l[l].nflows && !(s.l[l].bps > 0))
			err = -EINVAL;
	/* every task's global model sends to its children at t = 0 */
	for (int t = 0; t < p->ntasks && !err; t++) {
		const struct task_plan *tp = &p->tasks[t];

		for (int c = 1; !tp->blocked && c < tp->nmodels && !err; c++)
			if (tp->bcast.parent[c] == 0)
				err = send_message(&s, flow_of(&s, t, c, false),
						   0);
	}
	if (!err)
		err = run(&s);
	for (int t = 0; t < p->ntasks && !err; t++) {
		const struct task_plan *tp = &p->tasks[t];
		double last_recv = 0, last_train = 0;

		if (tp->blocked)
			continue;
		for (int m = 1; m < tp->nmodels; m++) {
			const struct pmodel *x = &s.m[slot(&s, t, m)];

			last_recv = fmax(last_recv, x->recv);
			last_train = fmax(last_train, x->train_end);
		}
		out[t] = (struct pround){ s.round_end[t], last_recv,
					  last_train - last_recv,
					  s.round_end[t] - last_train };
	}
out:
	for (int i = 0; s.f && i < s.nf; i++) {
		free(s.f[i].link);
		free(s.f[i].prop);
		free(s.f[i].waiting);
		free(s.f[i].next);
	}
	for (int l = 0; s.l && l < s.nl; l++)
		free(s.l[l].flows);
	free(s.f);
	free(s.l);
	free(s.m);
	free(s.first);
	free(s.round_end);
	free(s.heap);
	return err;
}

/*
 * Whether a pass stays within PKT_SEG_HOPS_MAX: each transfer's segments
 * times the links it crosses, counted before anything is simulated.
 * 0, -EFBIG, or wire_message's error.
 */
static int bounded(const struct plan *p)
{
	double work = 0;

	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];
		struct wire_msg wm;
		int err;

		if (tp->blocked)
			continue;
		err = wire_message(p->sc, tp->task, &wm);
		if (err)
			return err;
		for (int m = 1; m < tp->nmodels; m++)
			work += (double)wm.segments *
				(tp->bcast.path[m].nhops +
				 tp->up.path[m].nhops);
	}
	return work > PKT_SEG_HOPS_MAX ? -EFBIG : 0;
}

/* Whether a model of p relays or aggregates for another (has a child). */
static bool relays(const struct plan *p)
{
	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];

		for (int m = 1; !tp->blocked && m < tp->nmodels; m++)
			if (tp->bcast.parent[m] > 0 || tp->up.parent[m] > 0)
				return true;
	}
	return false;
}

int predict_round_packets(struct plan *p)
{
	struct pround *one, *sum;
	int err, done = 0, phases = 1;
	double mean = 0;

	/* pipelining changes nothing where nothing relays (stars) */
	if (p->sc->relay != SCN_RELAY_STORE && relays(p))
		return -EOPNOTSUPP;
	/* link_bytes, validation, the plan's shape, background traffic
	 * routed: the fluid pass */
	err = predict_round(p);
	if (err)
		return err;
	err = bounded(p);
	if (err)
		return err;
	p->predicted = false;
	for (int i = 0; i < p->nbg; i++)
		if (p->bg[i].routed && p->bg[i].on_s <= 0)
			phases = PKT_PHASES;
	one = calloc((size_t)p->ntasks + 1, sizeof(*one));
	sum = calloc((size_t)p->ntasks + 1, sizeof(*sum));
	err = one && sum ? 0 : -ENOMEM;
	for (int k = 0; k < phases && !err; k++) {
		err = simulate(p, (double)k / phases, one);
		for (int t = 0; t < p->ntasks && !err; t++) {
			sum[t].round += one[t].round / phases;
			sum[t].bcast += one[t].bcast / phases;
			sum[t].compute += one[t].compute / phases;
			sum[t].upload += one[t].upload / phases;
		}
	}
	for (int t = 0; t < p->ntasks && !err; t++) {
		struct task_plan *tp = &p->tasks[t];

		if (tp->blocked)
			continue;
		tp->round_s = sum[t].round;
		tp->bcast_s = sum[t].bcast;
		tp->compute_s = sum[t].compute;
		tp->upload_s = sum[t].upload;
		mean += tp->round_s;
		done++;
	}
	if (!err) {
		p->mean_round_s = done ? mean / done : 0;
		p->predicted = true;
		p->predictor = "packet";
	}
	free(one);
	free(sum);
	return err;
}

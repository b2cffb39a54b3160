// SPDX-License-Identifier: MIT
#include "predict.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

/*
 * fmin and fmax as the C library has them (a NaN gives way to the other
 * operand), inlined: they were a call each, a twentieth of a plan's time.
 */
static inline double dmin(double a, double b)
{
	return a < b || isnan(b) ? a : b;
}

static inline double dmax(double a, double b)
{
	return a > b || isnan(b) ? a : b;
}

enum fstate { F_WAIT, F_ACTIVE, F_FLIGHT, F_DONE };

struct flow {
	int task, model;
	bool upload;
	const struct ppath *pp;
	enum fstate state;
	double bits, rem_bits, rate, arrive, prop;
	double cap;		/* bit/s: background traffic's rate; a task's
				 * transfer, how fast its sender aggregates
				 * (pipelined) or INFINITY */
	double on, off;		/* background traffic: when it flows */
	double stall;		/* a transfer a cut took data from: sends
				 * nothing before this (TCP's timer) */
	bool held;		/* a pipelined transfer past what its sender
				 * holds, or level with a feed that does not
				 * grow: it sends nothing now */
	int fnext;		/* a pipelined transfer level with what its
				 * sender holds follows (gets the rate of) the
				 * transfer that grows that: the next one
				 * following the same (sim.fhead) */
	bool fixed;
};

struct mstate {
	double recv, train_end;
	double agg_s;		/* folding in its upload children */
	double agg_end;		/* store: when its aggregate is made */
	double all_in;		/* when its last upload child's came */
	bool have, trained, sent;
	int pending;		/* upload children not yet arrived */
};

struct sim {
	struct plan *p;
	int nflows;		/* the tasks' flows: f[0, nflows) */
	int nall;		/* and background traffic: f[nflows, nall) */
	struct flow *f;
	int *first_flow;	/* per task: index of its model-0 slot */
	struct mstate *ms;	/* parallel to flows: per (task, model) */
	double *round_end;
	double *remcap;
	bool *dark;		/* per IP link: over a fibre cut now */
	int *cnt;
	double t;
	int left;		/* tasks not finished */
	bool piped;		/* relays forward chunk by chunk */
	int *fhead;		/* per task transfer: the first following it */
	/* the task transfers sending (F_ACTIVE) and those whose last bit is
	 * on its way (F_FLIGHT), each in transfer order (sorted when
	 * *_dirty): a step looks at them, not at every transfer */
	int *act, nact, *fly, nfly;
	bool act_dirty;
	/* per transfer, the links it crosses in order:
	 * flink[fstart[i] .. fstart[i + 1]) */
	int *fstart, *flink;
	/* per IP link, the transfers crossing it (all, fixed or not):
	 * lflow[lstart[l] .. lstart[l + 1]) */
	int *lstart, *lflow;
	int *used, nused;	/* the links of the transfers in flight now */
	int *capped, ncapped;	/* the task transfers with a cap */
	double chunk_bits;	/* physical bits of one chunk */
	/* per (task, model) slot, its children in the upload tree:
	 * kid[kstart[slot] .. kstart[slot + 1]) */
	int *kstart, *kid;
	/*
	 * The slots that have their model and have not yet trained and sent
	 * it on (the global model: trained), in no order (what a step does
	 * to each is its own; the uploads it starts join act, sorted): only
	 * they have a training, a fold or an upload to come, so a step looks
	 * at them, not at every slot.
	 */
	int *open, nopen;
};

_Thread_local unsigned long long predict_work;

double predict_cpu_share(const struct plan *p, int srv)
{
	int n = 0;

	for (int i = 0; i < p->ntasks; i++) {
		const struct task_plan *o = &p->tasks[i];

		if (o->blocked)
			continue;
		for (int m = 0; m < o->nmodels; m++)
			n += o->server[m] == srv;
	}
	return dmin(1.0, p->sc->nodes[srv].cpu / (n ? n : 1));
}

double predict_train_s(const struct plan *p, const struct task_plan *tp,
		       int model)
{
	return tp->task->work_core_s / predict_cpu_share(p, tp->server[model]);
}

double predict_agg_s(const struct plan *p, const struct task_plan *tp,
		     int model, int kids)
{
	if (!(tp->task->agg_core_s > 0) || kids <= 0)
		return 0;
	return kids * tp->task->agg_core_s /
	       predict_cpu_share(p, tp->server[model]);
}

int predict_up_kids(const struct task_plan *tp, int model)
{
	int kids = 0;

	for (int m = 1; m < tp->nmodels; m++)
		kids += tp->up.parent[m] == model;
	return kids;
}

double predict_agg_tree_s(const struct plan *p, const struct task_plan *tp,
			  int model)
{
	return predict_agg_s(p, tp, model, predict_up_kids(tp, model));
}

/* slot of (task, model) in flow/model arrays; bcast flow = slot, upload
 * flow = slot + total models */
static int slot(const struct sim *s, int task, int model)
{
	return s->first_flow[task] + model;
}

static void start_bcast_children(struct sim *s, int task, int m);

/* Slot sl has its model: a step looks at it until it is done with it. */
static void open_slot(struct sim *s, int sl)
{
	s->open[s->nopen++] = sl;
}

/*
 * A pipelined relay starts forwarding as its own copy starts to arrive:
 * its transfers are under way from then, held back by feed() to what it
 * has.
 */
static void start_flow(struct sim *s, int i)
{
	struct flow *f = &s->f[i];

	if (f->state != F_WAIT)
		return;
	f->state = F_ACTIVE;
	s->act_dirty |= s->nact && s->act[s->nact - 1] > i;
	s->act[s->nact++] = i;
	if (s->piped && !f->upload)
		start_bcast_children(s, f->task, f->model);
}

static void start_bcast_children(struct sim *s, int task, int m)
{
	const struct task_plan *tp = &s->p->tasks[task];

	for (int c = 1; c < tp->nmodels; c++)
		if (tp->bcast.parent[c] == m)
			start_flow(s, slot(s, task, c));
}

static void try_upload(struct sim *s, int task, int m)
{
	int half = s->nflows / 2;
	struct mstate *x = &s->ms[slot(s, task, m)];

	if (m == 0 || x->sent || !x->trained || (x->pending && !s->piped))
		return;
	/* storing, it aggregates once it has trained and has them all */
	if (!s->piped && x->agg_s > 0) {
		if (isinf(x->agg_end))
			x->agg_end = s->t + x->agg_s;
		if (x->agg_end > s->t + 1e-12)
			return;
	}
	x->sent = true;
	start_flow(s, half + slot(s, task, m));
}

static void deliver(struct sim *s, int i)
{
	struct flow *f = &s->f[i];
	const struct task_plan *tp = &s->p->tasks[f->task];
	struct mstate *x;

	f->state = F_DONE;
	if (!f->upload) {
		x = &s->ms[slot(s, f->task, f->model)];
		x->have = true;
		open_slot(s, slot(s, f->task, f->model));
		x->recv = s->t;
		x->train_end = s->t + predict_train_s(s->p, tp, f->model);
		start_bcast_children(s, f->task, f->model);
		return;
	}
	{
		int par = tp->up.parent[f->model];

		x = &s->ms[slot(s, f->task, par)];
		if (--x->pending == 0)
			x->all_in = s->t;
		if (par == 0 && x->pending == 0) {
			/* the global model folds the last one in */
			s->round_end[f->task] = s->t + x->agg_s;
			s->left--;
		} else {
			try_upload(s, f->task, par);
		}
	}
}

/*
 * Fix flow f at rate r: what it takes leaves its links. The pipelined
 * transfers that follow it get the same rate: progressive filling fixes
 * rates in increasing order, so when f is fixed at r every transfer still
 * unfixed has at least r of room on each of its links. Returns how many
 * it fixed.
 */
static int fix(struct sim *s, struct flow *f, double r)
{
	int n = 1, me = (int)(f - s->f);

	f->rate = r;
	f->fixed = true;
	for (int k = s->fstart[me]; k < s->fstart[me + 1]; k++) {
		int l = s->flink[k];

		s->remcap[l] -= r;
		if (--s->cnt[l] == 0)
			s->remcap[l] = 0;
	}
	for (int i = s->piped && me < s->nflows ? s->fhead[me] : -1; i >= 0;
	     i = s->f[i].fnext)
		if (!s->f[i].fixed)
			n += fix(s, &s->f[i], dmin(r, s->f[i].cap));
	return n;
}

/* ---- pipelined relays ------------------------------------------------ */

/*
 * Slack in bits within which a pipelined transfer is level with its
 * feed: a thousandth of a chunk (a relay forwards whole chunks; what it
 * holds moves by the fibre's content each time its feed's rate changes,
 * and a tighter slack turned those moves into a flurry of steps a few
 * picoseconds apart).
 */
static double caught(const struct sim *s, const struct flow *f)
{
	return 1e-9 * f->bits + 1e-6 + 1e-3 * s->chunk_bits;
}

/* What is left of a transfer that counts as done. */
static double crumb(const struct flow *f)
{
	return 1e-9 * f->bits + 1e-6;
}

/*
 * What the receiving end of transfer g (index gi) holds of its message,
 * to forward chunk by chunk: all of it once it arrived; before, what has
 * been sent less what is still in the fibre and the chunk being received
 * (a relay forwards whole chunks). *src is gi while that grows (at g's
 * rate), else -1; *when the time it starts to grow (INFINITY: it grows
 * now, or not before another event).
 */
static double held(const struct sim *s, int gi, int *src, double *when)
{
	const struct flow *g = &s->f[gi];
	double sent = g->bits - g->rem_bits, lag;

	*src = -1;
	*when = INFINITY;
	switch (g->state) {
	case F_DONE:
		return g->bits;
	case F_WAIT:
		return 0;
	case F_FLIGHT:
		return dmax(0, g->bits - s->chunk_bits);
	case F_ACTIVE:
		break;
	}
	lag = s->chunk_bits + g->rate * g->prop;
	if (sent >= lag - caught(s, g)) {
		*src = gi;
		return dmax(0, sent - lag);
	}
	if (g->rate > 0)
		*when = s->t + (lag - sent) / g->rate;
	return 0;
}

static double src_rate(const struct sim *s, int src)
{
	return src < 0 ? 0 : s->f[src].rate;
}

/*
 * What the sender of task transfer i has to send, pipelined: INFINITY for
 * the global model's broadcast and a leaf's upload (all of it); a relay's
 * broadcast what its own copy holds; an aggregator's upload the least any
 * of its children's uploads holds (the chunks it can sum; less what
 * comes in while it folds a chunk in, when aggregating takes time), *src the
 * transfer that grows it (held). *next gets the earliest time that
 * changes otherwise than at that rate: a feed starts to grow, or another
 * child's falls below the least one's.
 */
static double feed(const struct sim *s, int i, int *src, double *next)
{
	const struct flow *f = &s->f[i];
	const struct task_plan *tp = &s->p->tasks[f->task];
	int half = s->nflows / 2, k = 0, g, sl;
	double least = INFINITY, w;

	*src = -1;
	*next = INFINITY;
	if (!f->upload) {
		int par = tp->bcast.parent[f->model];

		return par == 0 ? INFINITY :
				  held(s, slot(s, f->task, par), src, next);
	}
	sl = slot(s, f->task, f->model);
	for (int j = s->kstart[sl]; j < s->kstart[sl + 1]; j++) {
		int c = s->kid[j];
		double h;

		h = held(s, half + slot(s, f->task, c), &g, &w);
		*next = dmin(*next, w);
		if (!k++ || h < least ||
		    (h == least && src_rate(s, g) < src_rate(s, *src))) {
			least = h;
			*src = g;
		}
	}
	if (!k)
		return INFINITY;
	for (int j = s->kstart[sl]; j < s->kstart[sl + 1]; j++) {
		int c = s->kid[j];
		double h, gl = src_rate(s, *src), gc;

		h = held(s, half + slot(s, f->task, c), &g, &w);
		gc = src_rate(s, g);
		if (gc < gl && h > least + caught(s, f))
			*next = dmin(*next, s->t + (h - least) / (gl - gc));
	}
	/*
	 * An aggregator's chunk in the making: what comes in its time, and
	 * once every child's upload is in, the last chunk until it is folded.
	 */
	{
		const struct mstate *x = &s->ms[sl];
		double ac = x->agg_s * dmin(1, s->chunk_bits / f->bits);

		if (x->agg_s > 0 && isfinite(x->all_in) &&
		    s->t < x->all_in + ac - 1e-12) {
			*next = dmin(*next, x->all_in + ac);
			return dmax(0, least - s->chunk_bits);
		}
		return dmax(0, least - src_rate(s, *src) * ac);
	}
}

/*
 * Each pipelined transfer's cap from what its sender holds: none while
 * it is behind that (or the feed no longer grows and holds more), the
 * rate of the transfer that feeds it once level with it (fix() passes
 * that rate on), 0 while it is past it or level with a feed that does
 * not grow.
 */
static void pipe_caps(struct sim *s)
{
	for (int k = 0; s->piped && k < s->nact; k++)
		s->fhead[s->act[k]] = -1;
	for (int k = 0; s->piped && k < s->nact; k++) {
		int i = s->act[k], src;
		struct flow *f = &s->f[i];
		double next, gap;

		f->held = false;
		gap = feed(s, i, &src, &next) - (f->bits - f->rem_bits);
		if (isinf(gap) || gap > caught(s, f))
			continue;
		/* what a feed that no longer grows holds can all be sent */
		if (src < 0 && gap > crumb(f))
			continue;
		/* a feed TCP holds back (tcp_stall) does not grow */
		if (gap >= -caught(s, f) && src >= 0 &&
		    !(s->f[src].stall > s->t + 1e-12)) {
			f->fnext = s->fhead[src];
			s->fhead[src] = i;
		}
		else
			f->held = true;
	}
}

/*
 * The next time a pipelined transfer's cap must change: it catches up
 * with its feed, its feed catches up with it, or its feed changes.
 */
static double pipe_next(const struct sim *s)
{
	double next = INFINITY;

	for (int k = 0; s->piped && k < s->nact; k++) {
		int i = s->act[k], src;
		const struct flow *f = &s->f[i];
		double w, gap, grow;

		gap = feed(s, i, &src, &w) - (f->bits - f->rem_bits);
		grow = src_rate(s, src);
		next = dmin(next, w);
		if (isinf(gap))
			continue;
		if ((gap > caught(s, f) || (src < 0 && gap > crumb(f))) &&
		    f->rate > grow)
			next = dmin(next, s->t + gap / (f->rate - grow));
		else if (gap < -caught(s, f) && grow > 0)
			next = dmin(next, s->t - gap / grow);
	}
	return next;
}

/*
 * Max-min fair rates by progressive filling over the links in use;
 * background traffic takes no more than its own rate and a pipelined
 * transfer no more than its cap (a flow capped below its fair share is
 * fixed at its cap, and the rest share what it leaves).
 */
static void fill(struct sim *s)
{
	struct plan *p = s->p;
	int unfixed = 0;

	s->nused = 0;
	/* task transfers not sending were fixed at 0 as they stopped */
	for (int k = 0; k < s->nact + s->nall - s->nflows; k++) {
		int i = k < s->nact ? s->act[k] : s->nflows + k - s->nact;
		struct flow *f = &s->f[i];

		f->fixed = f->state != F_ACTIVE || f->stall > s->t + 1e-12;
		if (f->fixed) {
			f->rate = 0;
			continue;
		}
		unfixed++;
		for (int j = s->fstart[i]; j < s->fstart[i + 1]; j++) {
			int l = s->flink[j];

			if (s->cnt[l] == 0) {
				s->remcap[l] = s->dark[l] ? 0 :
					plan_link_gbps(p, l) * 1e9;
				s->used[s->nused++] = l;
			}
			s->cnt[l]++;
		}
	}
	/* pipelined transfers held back take nothing: all at once */
	for (int k = 0; s->piped && k < s->nact; k++) {
		struct flow *f = &s->f[s->act[k]];

		if (!f->fixed && f->held)
			unfixed -= fix(s, f, 0);
	}
	while (unfixed) {
		double best = INFINITY;
		int bl = -1, capped = -1;

		/*
		 * The link whose share is least, among those still shared;
		 * those no longer shared leave the list.
		 */
		for (int k = 0; k < s->nused; k++) {
			int l = s->used[k];
			double sh;

			if (!s->cnt[l]) {
				s->used[k--] = s->used[--s->nused];
				continue;
			}
			sh = s->remcap[l] / s->cnt[l];
			if (sh < best) {
				best = sh;
				bl = l;
			}
		}
		for (int i = s->nflows; i < s->nall; i++)
			if (!s->f[i].fixed && s->f[i].cap < best) {
				best = s->f[i].cap;
				capped = i;
			}
		for (int k = 0; k < s->ncapped; k++) {
			int i = s->capped[k];

			if (!s->f[i].fixed && s->f[i].cap < best) {
				best = s->f[i].cap;
				capped = i;
			}
		}
		if (capped >= 0) {
			unfixed -= fix(s, &s->f[capped], best);
			continue;
		}
		if (bl < 0) {
			/*
			 * Only transfers over no link are left: a plan no
			 * scheduler makes. They stand still, and the round
			 * cannot end (-EDEADLK), not looped on.
			 */
			for (int i = 0; i < s->nall; i++)
				if (!s->f[i].fixed)
					fix(s, &s->f[i], 0);
			break;
		}
		for (int k = s->lstart[bl]; k < s->lstart[bl + 1]; k++) {
			struct flow *f = &s->f[s->lflow[k]];

			if (!f->fixed)
				unfixed -= fix(s, f, best);
		}
	}
}

/* The rates of the moment. */
static void share(struct sim *s)
{
	pipe_caps(s);
	fill(s);
}

/* s->dark for the time now; returns the next time a window opens or
 * closes. */
static double mark_dark(struct sim *s, double eps)
{
	const struct plan *p = s->p;
	int n2 = 2 * p->sc->nnodes;
	double next = INFINITY;

	for (int l = 0; l < p->net->nlp; l++) {
		bool dark = false;

		for (int d = 0; d < p->ndown; d++) {
			const struct fibre_down *x = &p->down[d];
			bool on = x->on_s <= s->t + eps && s->t + eps < x->off_s;

			if (s->t + eps < x->on_s)
				next = dmin(next, x->on_s);
			else if (s->t + eps < x->off_s)
				next = dmin(next, x->off_s);
			dark = dark || (on && plan_lightpath_crosses(p, l,
								     x->fibre));
		}
		s->dark[n2 + 2 * l] = s->dark[n2 + 2 * l + 1] = dark;
	}
	return next;
}

/*
 * When the cut windows over transfer f's lightpaths that are dark now
 * end (the latest), or -1 if none of them is dark.
 */
static double dark_ends(const struct sim *s, const struct flow *f,
			double eps)
{
	const struct plan *p = s->p;
	double end = -1;

	for (int h = 0; h < f->pp->nhops; h++) {
		const struct hop *hp = &f->pp->hops[h];

		if (hp->kind == HOP_LIGHTPATH && s->dark[plan_link(p, hp)])
			end = dmax(end, plan_lightpath_dark_until(
						p, hp->idx, s->t + eps));
	}
	return end;
}

/*
 * A transfer sending into a dark lightpath loses what it sends: TCP
 * sends again at its first retransmission timeout once the fibre is back
 * (wire_tcp_stall, over the transfer's own round trip), then in slow
 * start, whose last round trip sends what is left at the transfer's
 * share: it sends nothing until then.
 */
static void tcp_stall(struct sim *s, struct flow *f, double eps)
{
	double end = dark_ends(s, f, eps), rtt, seg, lost;

	if (end < 0)
		return;
	rtt = 2 * f->pp->km * FIBRE_S_PER_KM;
	/* what the receiver does not have: unsent, and on its way */
	lost = f->rem_bits + dmin(f->bits - f->rem_bits, f->rate * f->prop);
	seg = ceil(lost / (8.0 * (WIRE_MSS + WIRE_SEG_OVERHEAD) *
			   s->p->sc->scale));
	f->stall = wire_tcp_stall(s->t, rtt, end, seg);
}

/* Insertion sort of a[0..n): the lists are nearly in order already. */
static void sort_few(int *a, int n)
{
	for (int i = 1; i < n; i++) {
		int v = a[i], j = i;

		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static int simulate(struct sim *s)
{
	const double eps = 1e-12;
	/*
	 * Every step ends a transfer, a flight, a training or a transfer's
	 * wait for TCP: bounded. Pipelined, a transfer also catches up with
	 * its feed, or its feed starts to grow or changes, at steps of their
	 * own: no tight bound is known, so a generous one (the shipped
	 * scenarios' mst plans take at most 1.1 times the store bound).
	 */
	long steps = 0, max_steps = (4L * s->nall +
				     2L * s->p->ndown * (s->nflows + 1) + 64) *
				    (s->piped ? 16 : 1);

	while (s->left > 0) {
		double next = INFINITY;

		if (++steps > max_steps)
			return -ELOOP;	/* a bug, said, never a hang */
		predict_work += (unsigned long long)s->nall;
		if (s->act_dirty)
			sort_few(s->act, s->nact);
		s->act_dirty = false;

		/* a cut fibre's lightpaths are dark in its window [on, off),
		 * and the transfers it takes data from wait for TCP */
		if (s->p->ndown)
			next = dmin(next, mark_dark(s, eps));
		for (int k = 0; s->p->ndown && k < s->nact; k++) {
			struct flow *f = &s->f[s->act[k]];

			if (!(f->stall > s->t + eps))
				tcp_stall(s, f, eps);
			if (f->stall > s->t + eps)
				next = dmin(next, f->stall);
		}
		/* background traffic flows in its window [on, off) */
		for (int i = s->nflows; i < s->nall; i++) {
			struct flow *f = &s->f[i];

			f->state = f->on <= s->t + eps && s->t + eps < f->off ?
					   F_ACTIVE : F_DONE;
			if (s->t + eps < f->on)
				next = dmin(next, f->on);
			else if (s->t + eps < f->off)
				next = dmin(next, f->off);
		}
		share(s);
		for (int k = 0; k < s->nact; k++) {
			const struct flow *f = &s->f[s->act[k]];

			if (f->rate > 0)
				next = dmin(next, s->t + f->rem_bits / f->rate);
		}
		for (int k = 0; k < s->nfly; k++)
			next = dmin(next, s->f[s->fly[k]].arrive);
		for (int k = 0; k < s->nopen; k++) {
			const struct mstate *x = &s->ms[s->open[k]];

			if (!x->trained)
				next = dmin(next, x->train_end);
			if (!x->sent && x->agg_end > s->t + eps &&
			    isfinite(x->agg_end))
				next = dmin(next, x->agg_end);
		}
		if (s->piped)
			next = dmin(next, pipe_next(s));
		if (!isfinite(next))
			return -EDEADLK;	/* a tree that cannot finish */
		for (int k = 0; k < s->nact; k++) {
			struct flow *f = &s->f[s->act[k]];

			f->rem_bits -= f->rate * (next - s->t);
		}
		s->t = next;
		for (int k = 0, n = s->nact; k < n; k++) {
			int i = s->act[k];
			struct flow *f = &s->f[i];

			/*
			 * Done when what is left is rounding: below a
			 * billionth of the transfer, or too little to move
			 * the clock at all (late in a long round, the time
			 * it would take is under the clock's resolution, and
			 * waiting for it would never end).
			 */
			if (f->rem_bits <= crumb(f) ||
			    (f->rate > 0 && s->t + f->rem_bits / f->rate <= s->t)) {
				f->state = F_FLIGHT;
				f->arrive = s->t + f->prop;
				/* fill() looks at the sending only */
				f->fixed = true;
				f->rate = 0;
				s->fly[s->nfly++] = i;
				s->nact--;
			} else {
				s->act[k - (n - s->nact)] = i;
			}
		}
		sort_few(s->fly, s->nfly);
		/* delivering starts transfers (act), never a flight */
		for (int k = 0, n = s->nfly; k < n; k++) {
			int i = s->fly[k];

			if (s->f[i].arrive <= s->t + eps)
				deliver(s, i);
			if (s->f[i].state == F_FLIGHT)
				s->fly[k - (n - s->nfly)] = i;
			else
				s->nfly--;
		}
		for (int k = 0; k < s->nopen; k++) {
			struct mstate *x = &s->ms[s->open[k]];

			if (!x->trained && x->train_end <= s->t + eps)
				x->trained = true;
		}
		/* uploads whose conditions are now met (a slot without its
		 * model yet has none) */
		for (int k = 0; k < s->nopen; k++) {
			const struct flow *f = &s->f[s->open[k]];

			if (f->model > 0)
				try_upload(s, f->task, f->model);
		}
		/* a slot trained and sent on (the global model: trained) is
		 * done with */
		for (int k = 0, n = s->nopen; k < n; k++) {
			int i = s->open[k];
			const struct mstate *x = &s->ms[i];

			if (x->trained && (x->sent || s->f[i].model == 0))
				s->nopen--;
			else
				s->open[k - (n - s->nopen)] = i;
		}
	}
	return 0;
}

/*
 * The transfers crossing each of the nl links, in transfer order, so that
 * filling fixes those on the bottleneck link without a look at every
 * transfer. 0 or -ENOMEM.
 */
static int link_flows(struct sim *s, int nl)
{
	int total = 0;

	s->fstart = malloc(((size_t)s->nall + 1) * sizeof(*s->fstart));
	if (!s->fstart)
		return -ENOMEM;
	for (int i = 0; i < s->nall; i++) {
		s->fstart[i] = total;
		total += s->f[i].pp->nhops;
	}
	s->fstart[s->nall] = total;
	s->flink = malloc(((size_t)total + 1) * sizeof(*s->flink));
	s->lflow = malloc(((size_t)total + 1) * sizeof(*s->lflow));
	if (!s->flink || !s->lflow)
		return -ENOMEM;
	for (int i = 0; i < s->nall; i++)
		for (int h = 0; h < s->f[i].pp->nhops; h++) {
			int l = plan_link(s->p, &s->f[i].pp->hops[h]);

			s->flink[s->fstart[i] + h] = l;
			s->lstart[l + 1]++;
		}
	for (int l = 0; l < nl; l++)
		s->lstart[l + 1] += s->lstart[l];
	for (int i = 0; i < s->nall; i++)
		for (int k = s->fstart[i]; k < s->fstart[i + 1]; k++) {
			int l = s->flink[k];

			/* lstart[l] counts up to the next link's start... */
			s->lflow[s->lstart[l]++] = i;
		}
	/* ...and is put back */
	for (int l = nl; l > 0; l--)
		s->lstart[l] = s->lstart[l - 1];
	s->lstart[0] = 0;
	return 0;
}

/* Each (task, model)'s children in its task's upload tree, in order. */
static int up_children(struct sim *s, int total)
{
	const struct plan *p = s->p;

	s->kstart = calloc((size_t)total + 2, sizeof(*s->kstart));
	s->kid = calloc((size_t)total + 1, sizeof(*s->kid));
	if (!s->kstart || !s->kid)
		return -ENOMEM;
	for (int ti = 0; ti < p->ntasks; ti++) {
		const struct task_plan *tp = &p->tasks[ti];

		for (int c = 1; !tp->blocked && c < tp->nmodels; c++)
			s->kstart[slot(s, ti, tp->up.parent[c]) + 2]++;
	}
	for (int i = 2; i <= total + 1; i++)
		s->kstart[i] += s->kstart[i - 1];
	/* kstart[sl + 1] counts as children are placed, then is their end */
	for (int ti = 0; ti < p->ntasks; ti++) {
		const struct task_plan *tp = &p->tasks[ti];

		for (int c = 1; !tp->blocked && c < tp->nmodels; c++)
			s->kid[s->kstart[slot(s, ti, tp->up.parent[c]) + 1]++] =
				c;
	}
	return 0;
}

/*
 * Each model's time to aggregate (predict_agg_s); pipelined, an
 * aggregator's upload goes no faster than it makes its sum (its bits in
 * that time), as a cap in the filling.
 */
static void agg_setup(struct sim *s, int total)
{
	const struct plan *p = s->p;

	for (int ti = 0; ti < p->ntasks; ti++) {
		const struct task_plan *tp = &p->tasks[ti];

		for (int m = 0; !tp->blocked && m < tp->nmodels; m++) {
			int sl = slot(s, ti, m);
			struct mstate *x = &s->ms[sl];
			struct flow *f = &s->f[total + sl];

			/* its children, as up_children listed them */
			x->agg_s = predict_agg_s(p, tp, m, s->kstart[sl + 1] -
							       s->kstart[sl]);
			x->agg_end = x->all_in = INFINITY;
			if (!s->piped || !m || !(x->agg_s > 0))
				continue;
			f->cap = f->bits / x->agg_s;
			s->capped[s->ncapped++] = total + sl;
		}
	}
}

/*
 * The arrays of a round of s->nall transfers (s->nflows the tasks'), total
 * models and nl links, zeroed; and the plan's link_bytes. false: out of
 * memory (sim_release frees what was made).
 */
static bool sim_alloc(struct sim *s, int nl, int total)
{
	struct plan *p = s->p;

	s->f = calloc((size_t)s->nall + 1, sizeof(*s->f));
	s->ms = calloc((size_t)total + 1, sizeof(*s->ms));
	s->round_end = calloc((size_t)p->ntasks + 1, sizeof(*s->round_end));
	s->remcap = calloc((size_t)nl + 1, sizeof(*s->remcap));
	s->cnt = calloc((size_t)nl + 1, sizeof(*s->cnt));
	s->dark = calloc((size_t)nl + 1, sizeof(*s->dark));
	s->fhead = calloc((size_t)s->nflows + 1, sizeof(*s->fhead));
	s->lstart = calloc((size_t)nl + 2, sizeof(*s->lstart));
	s->used = calloc((size_t)nl + 1, sizeof(*s->used));
	s->act = calloc((size_t)s->nflows + 1, sizeof(*s->act));
	s->fly = calloc((size_t)s->nflows + 1, sizeof(*s->fly));
	s->capped = calloc((size_t)s->nflows + 1, sizeof(*s->capped));
	s->open = calloc((size_t)total + 1, sizeof(*s->open));
	free(p->link_bytes);
	p->link_bytes = calloc((size_t)nl + 1, sizeof(*p->link_bytes));
	return s->f && s->ms && s->round_end && s->remcap && s->cnt &&
	       s->dark && s->fhead && s->lstart && s->used && s->act &&
	       s->fly && s->capped && s->open && p->link_bytes;
}

static void sim_release(struct sim *s)
{
	free(s->first_flow);
	free(s->f);
	free(s->ms);
	free(s->round_end);
	free(s->remcap);
	free(s->cnt);
	free(s->dark);
	free(s->fhead);
	free(s->lstart);
	free(s->lflow);
	free(s->used);
	free(s->kstart);
	free(s->kid);
	free(s->act);
	free(s->fly);
	free(s->capped);
	free(s->open);
	free(s->fstart);
	free(s->flink);
}

int predict_round(struct plan *p)
{
	struct sim s = { .p = p };
	int total = 0, err = -ENOMEM, nl = plan_nlinks(p), done = 0;
	double sum = 0;

	s.first_flow = calloc((size_t)p->ntasks + 1, sizeof(*s.first_flow));
	if (!s.first_flow)
		return -ENOMEM;
	for (int i = 0; i < p->ntasks; i++) {
		s.first_flow[i] = total;
		if (!p->tasks[i].blocked)
			total += p->tasks[i].nmodels;
	}
	s.nflows = s.nall = 2 * total;
	s.piped = p->sc->relay == SCN_RELAY_PIPELINED;
	s.chunk_bits = 8.0 * p->sc->chunk_bytes;
	err = plan_background(p);
	if (err) {
		free(s.first_flow);
		return err;
	}
	err = -ENOMEM;
	for (int i = 0; i < p->nbg; i++)
		s.nall += p->bg[i].routed;
	if (!sim_alloc(&s, nl, total))
		goto out;

	for (int ti = 0; ti < p->ntasks; ti++) {
		struct task_plan *tp = &p->tasks[ti];
		struct wire_msg wm;
		double bits, ack;

		if (tp->blocked)
			continue;
		err = wire_message(p->sc, tp->task, &wm);
		if (err)
			goto out;
		err = -ENOMEM;
		/* what crosses the wire, in physical units: x scale */
		bits = 8.0 * (double)wm.data_bytes * p->sc->scale;
		ack = (double)wm.ack_bytes * p->sc->scale;
		s.left++;
		for (int m = 0; m < tp->nmodels; m++) {
			int k = slot(&s, ti, m);

			for (int up = 0; up < 2; up++) {
				struct flow *f = &s.f[k + up * total];
				const struct ppath *pp = up ? &tp->up.path[m]
							    : &tp->bcast.path[m];

				f->task = ti;
				f->model = m;
				f->upload = up;
				f->pp = pp;
				f->bits = f->rem_bits = bits;
				f->cap = INFINITY;
				f->held = false;
				f->fixed = true;	/* until it sends */
				f->prop = pp->km * FIBRE_S_PER_KM;
				/* model 0 has no flows of its own */
				f->state = m == 0 ? F_DONE : F_WAIT;
				for (int h = 0; m && h < pp->nhops; h++) {
					struct hop back = pp->hops[h];

					back.dir = 1 - back.dir;
					p->link_bytes[plan_link(p, &pp->hops[h])] +=
						bits / 8;
					p->link_bytes[plan_link(p, &back)] += ack;
				}
			}
			if (m)
				s.ms[slot(&s, ti, tp->up.parent[m])].pending++;
		}
		s.ms[slot(&s, ti, 0)].have = true;
		open_slot(&s, slot(&s, ti, 0));
	}
	/* background traffic flows all round, at its own rate at most */
	for (int i = 0, k = s.nflows; i < p->nbg; i++) {
		struct flow *f = &s.f[k];

		if (!p->bg[i].routed)
			continue;
		f->task = f->model = -1;
		f->pp = &p->bg[i].path;
		f->cap = p->bg[i].bg->gbps * 1e9;
		f->on = p->bg[i].on_s;
		f->off = p->bg[i].off_s;
		k++;
	}
	err = up_children(&s, total);
	if (!err)
		err = link_flows(&s, nl);
	if (!err)
		agg_setup(&s, total);
	if (err)
		goto out;
	/* broadcast starts at the root of every task */
	for (int ti = 0; ti < p->ntasks; ti++)
		if (!p->tasks[ti].blocked)
			start_bcast_children(&s, ti, 0);
	err = simulate(&s);
	if (err)
		goto out;
	for (int ti = 0; ti < p->ntasks; ti++) {
		struct task_plan *tp = &p->tasks[ti];
		double last_recv = 0, last_train = 0;

		if (tp->blocked)
			continue;
		for (int m = 1; m < tp->nmodels; m++) {
			const struct mstate *x = &s.ms[slot(&s, ti, m)];

			last_recv = dmax(last_recv, x->recv);
			last_train = dmax(last_train, x->train_end);
		}
		tp->round_s = s.round_end[ti];
		tp->bcast_s = last_recv;
		tp->compute_s = last_train - last_recv;
		tp->upload_s = tp->round_s - last_train;
		sum += tp->round_s;
		done++;
	}
	p->mean_round_s = done ? sum / done : 0;
	p->predicted = true;
	p->predictor = "fluid";
out:
	sim_release(&s);
	return err;
}

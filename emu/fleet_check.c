// SPDX-License-Identifier: MIT
/*
 * What a task's round's reports say (fleet_impl.h): whether the global
 * model is the weighted mean of the locals (through each worker's random
 * projections of its model, wk_project), and how late the workers acted
 * along its trees.
 */
#include "fleet_impl.h"

#include <math.h>
#include <string.h>

void wk_project(const float *w, size_t n, uint64_t seed,
		double proj[WK_NPROJ], double *max_abs)
{
	struct fl_rng r[WK_NPROJ];
	float m = 0;

	for (int k = 0; k < WK_NPROJ; k++) {
		fl_rng_seed(&r[k], fl_seed_derive(seed, 0x70726f6au +
							 (uint64_t)k));
		proj[k] = 0;
	}
	/*
	 * One pass over the model for all of them, the sign taken from the
	 * bit without a branch (a random bit is a branch mispredicted half
	 * the time): each sum is the same terms in the same order as one
	 * vector at a time, so the same bits.
	 */
	for (size_t j = 0; j < n; j += 64) {
		uint64_t bits[WK_NPROJ];
		size_t end = n - j < 64 ? n : j + 64;

		for (int k = 0; k < WK_NPROJ; k++)
			bits[k] = fl_rng_next(&r[k]);
		for (size_t i = j; i < end; i++) {
			double v = w[i];
			uint64_t u;

			memcpy(&u, &v, sizeof(u));
			for (int k = 0; k < WK_NPROJ; k++) {
				uint64_t neg = (~bits[k] >> (i - j) & 1) << 63;
				uint64_t t = u ^ neg;
				double x;

				memcpy(&x, &t, sizeof(x));
				proj[k] += x;
			}
			if (fabsf(w[i]) > m)
				m = fabsf(w[i]);
		}
	}
	*max_abs = m;
}

/* Global = weighted mean of the locals, through the side channel. */
void fleet_check_round(const struct ftask *ft, struct fleet_task_round *res)
{
	const struct wk_report *root = &ft->rep[0];
	double wsum = 0, maxabs = root->max_abs, eps;

	res->check_err = 0;
	for (int m = 1; m < ft->nmodels; m++) {
		wsum += ft->rep[m].weight;
		maxabs = fmax(maxabs, ft->rep[m].max_abs);
	}
	for (int k = 0; k < WK_NPROJ; k++) {
		double want = 0;

		for (int m = 1; m < ft->nmodels; m++)
			want += ft->rep[m].weight * ft->rep[m].proj[k];
		want /= wsum;
		res->check_err = fmax(res->check_err,
				      fabs(root->proj[k] - want));
	}
	/* float32 rounding once per tree level, on every parameter */
	eps = ft->wire == ft->nparams * 2 ? 1.0 / 256 :
	      ft->wire == ft->nparams + 4 ? 1.0 / 254 : 1.0 / 16777216;
	res->check_tol = (double)ft->nparams * (ft->depth + 1) * eps * maxabs;
	/* sample counts are exact: a lost or doubled subtree shows here */
	res->check_ok = root->weight == wsum &&
			res->check_err <= res->check_tol;
}


/*
 * How late the workers were, along the worst way a model goes: a relay
 * that reads late passes the model on late, and what comes after it
 * inherits that, so lateness adds up along a tree's path (each worker's
 * worst of the round, summed: an upper bound). The broadcast's way from
 * the global model down to a model, the upload's from it up to the global
 * model, which acts on the last upload in.
 */
uint64_t fleet_late_worst(const struct ftask *ft,
			  const struct task_plan *tp)
{
	uint64_t worst = ft->rep[0].late_ns;

	for (int m = 1; m < ft->nmodels; m++)
		for (int up = 0; up < 2; up++) {
			const int *parent = up ? tp->up.parent :
						 tp->bcast.parent;
			uint64_t sum = up ? ft->rep[0].late_ns : 0;

			for (int v = m, k = 0; v > 0 && k < ft->nmodels;
			     v = parent[v], k++)
				sum += ft->rep[v].late_ns;
			if (sum > worst)
				worst = sum;
		}
	return worst;
}

/*
 * The way that ended the round: from the global model, each aggregator's
 * input that came in last (a child's upload, or its own compute phase
 * when that ended after every child's upload was in), down to the model
 * whose compute phase began it; and that model's broadcast path. Only
 * lateness along it can have delayed the round's end: the end is that
 * way's arrival, and without its lateness it would have come that much
 * earlier, whatever the other ways did (to the first order: a late
 * transfer also shifts its neighbours' share of a link). Each worker on
 * it counts once, with its worst of the round.
 */
uint64_t fleet_late_last(const struct ftask *ft, const struct task_plan *tp)
{
	uint64_t sum = ft->rep[0].late_ns;
	int v = 0, hops = 0;

	for (;;) {
		const struct wk_report *q = &ft->rep[v];
		uint64_t last = 0;
		int next = -1, i = 0;

		for (int k = 1; k < ft->nmodels && i < WK_MAX_CHILDREN; k++) {
			if (tp->up.parent[k] != v)
				continue;
			if (q->t_child[i] >= last) {
				last = q->t_child[i];
				next = k;
			}
			i++;
		}
		if (next < 0 || (v && q->t_ready >= last) ||
		    ++hops >= ft->nmodels)
			break;
		v = next;
		sum += ft->rep[v].late_ns;
	}
	/* its broadcast path, the workers not already on the upload's */
	for (int b = tp->bcast.parent[v], k = 0; b > 0 && k < ft->nmodels;
	     b = tp->bcast.parent[b], k++) {
		bool counted = false;

		for (int u = v, j = 0; u > 0 && j < ft->nmodels && !counted;
		     u = tp->up.parent[u], j++)
			counted = u == b;
		if (!counted)
			sum += ft->rep[b].late_ns;
	}
	return sum;
}

/*
 * How many times the host time a compute phase was given its arithmetic
 * took (> 1 for one that overran: from the model's arrival to the end of
 * its arithmetic, over the same to its deadline).
 */
double fleet_overrun_stretch(const struct wk_report *q)
{
	uint64_t took = q->t_train1 - q->t_start;

	return q->t_train1 > q->t_start && took > q->overrun_ns ?
		       (double)took / (double)(took - q->overrun_ns) : 0;
}

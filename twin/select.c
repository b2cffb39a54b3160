// SPDX-License-Identifier: MIT
#include "select.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void sel_task_release(struct sel_task *s)
{
	free(s->count);
	free(s->share);
	free(s->mix);
	free(s->cost);
	memset(s, 0, sizeof(*s));
}

/* Kilometres from ROADM src to every ROADM over the fibres that are up. */
static int fibre_km(const struct scenario *sc, int src, double *d)
{
	int n = sc->nnodes;
	bool *done = calloc((size_t)n + 1, sizeof(*done));

	if (!done)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		d[i] = INFINITY;
	d[src] = 0;
	for (;;) {
		int u = -1;

		for (int i = 0; i < n; i++)
			if (!done[i] && isfinite(d[i]) && (u < 0 || d[i] < d[u]))
				u = i;
		if (u < 0)
			break;
		done[u] = true;
		for (int f = 0; f < sc->nfibres; f++) {
			const struct scn_fibre *x = &sc->fibres[f];

			if (!x->down && (x->a == u || x->b == u))
				d[x->a == u ? x->b : x->a] =
					fmin(d[x->a == u ? x->b : x->a],
					     d[u] + x->km);
		}
	}
	free(done);
	return 0;
}

/* A server's ROADM, through its router. */
static int roadm_of(const struct scenario *sc, int server)
{
	return sc->nodes[sc->nodes[server].attach].attach;
}

int sel_task_init(struct sel_task *s, const struct scenario *sc, int t,
		  const struct sel_learning *l)
{
	const struct scn_task *tk = &sc->tasks[t];
	struct fl_data pool = { 0 };
	struct fl_partition part = { 0 };
	double *d = NULL, far = 0;
	int n = tk->nlocals, split = scenario_task_split(tk), err;

	memset(s, 0, sizeof(*s));
	if (n < 1 || l->classes < 2 || l->classes > FL_CLASSES ||
	    l->samples_per_local < 1)
		return -EINVAL;
	s->n = n;
	s->split = split;
	s->classes = l->classes;
	s->count = calloc((size_t)n, sizeof(*s->count));
	s->share = calloc((size_t)n, sizeof(*s->share));
	s->mix = calloc((size_t)n * l->classes, sizeof(*s->mix));
	s->cost = calloc((size_t)n, sizeof(*s->cost));
	d = malloc((size_t)sc->nnodes * sizeof(*d));
	if (!s->count || !s->share || !s->mix || !s->cost || !d) {
		err = -ENOMEM;
		goto out;
	}
	/* the pool and its split, exactly as every worker makes them */
	err = fl_data_generate(&pool, fl_seed_derive(l->seed, 2),
			       FL_SPLIT_TRAIN, l->samples_per_local * split,
			       l->dim, l->classes);
	if (!err)
		err = fl_partition_init(&part, &pool, split, FL_ALPHA,
					fl_seed_derive(l->seed, 3));
	if (err)
		goto out;
	for (int i = 0; i < pool.n; i++)
		s->pool[pool.y[i]] += 1.0 / pool.n;
	for (int c = 0; c < n; c++) {
		int h = scenario_task_share(tk, c);

		s->share[c] = h;
		s->count[c] = part.count[h];
		for (int j = 0; j < part.count[h]; j++)
			s->mix[c * l->classes +
			       pool.y[part.idx[part.start[h] + j]]] +=
				1.0 / part.count[h];
	}
	/* each local's distance from the global model: access, fibres,
	 * access */
	err = fibre_km(sc, roadm_of(sc, tk->global), d);
	if (err)
		goto out;
	for (int c = 0; c < n; c++) {
		int lc = tk->locals[c];

		s->cost[c] = sc->nodes[tk->global].access_km +
			     d[roadm_of(sc, lc)] + sc->nodes[lc].access_km;
		if (isfinite(s->cost[c]))
			far = fmax(far, s->cost[c]);
	}
	for (int c = 0; c < n; c++)
		s->cost[c] = !isfinite(s->cost[c]) ? 1 :
			     far > 0 ? s->cost[c] / far : 0;
out:
	free(d);
	fl_partition_release(&part);
	fl_data_release(&pool);
	if (err)
		sel_task_release(s);
	return err;
}

double sel_distance(const struct sel_task *s, const int *chosen, int k)
{
	double mix[FL_CLASSES] = { 0 }, total = 0, tv = 0;

	for (int i = 0; i < k; i++) {
		int c = chosen[i];

		for (int j = 0; j < s->classes; j++)
			mix[j] += s->mix[c * s->classes + j] * s->count[c];
		total += s->count[c];
	}
	for (int j = 0; j < s->classes; j++)
		tv += fabs((total > 0 ? mix[j] / total : 0) - s->pool[j]);
	return tv / 2;
}

int sel_choose_within(const struct sel_task *s, int kmax, double lambda,
		      bool (*fits)(void *ctx, const int *chosen, int k),
		      void *ctx, int *chosen)
{
	bool *in;
	int step;

	if (kmax < 1 || kmax > s->n || !(lambda >= 0) || !isfinite(lambda))
		return -EINVAL;
	in = calloc((size_t)s->n, sizeof(*in));
	if (!in)
		return -ENOMEM;
	for (step = 0; step < kmax; step++) {
		int best = -1;
		double best_v = INFINITY;

		for (int c = 0; c < s->n; c++) {
			double v;

			if (in[c])
				continue;
			chosen[step] = c;
			v = sel_distance(s, chosen, step + 1) +
			    lambda * s->cost[c];
			if (v < best_v &&
			    (!fits || fits(ctx, chosen, step + 1))) {
				best_v = v;
				best = c;
			}
		}
		if (best < 0)
			break;
		chosen[step] = best;
		in[best] = true;
	}
	free(in);
	return step;
}

int sel_choose(const struct sel_task *s, int k, double lambda, int *chosen)
{
	int n = sel_choose_within(s, k, lambda, NULL, NULL, chosen);

	return n < 0 ? n : 0;
}

void sel_random(int n, int k, uint64_t seed, int *chosen)
{
	int *all = malloc((size_t)n * sizeof(*all));
	struct fl_rng r;

	fl_rng_seed(&r, seed);
	if (!all) {
		for (int i = 0; i < k; i++)
			chosen[i] = i;
		return;
	}
	for (int i = 0; i < n; i++)
		all[i] = i;
	for (int i = 0; i < k; i++) {
		int j = i + (int)fl_rng_below(&r, (uint32_t)(n - i));
		int x = all[i];

		all[i] = all[j];
		all[j] = x;
		chosen[i] = all[i];
	}
	free(all);
}

/* A model through the wire and back, as a transfer carries it. */
static int wire(const struct sel_learning *l, float *w, size_t nparams,
		void *buf, size_t len)
{
	int err = fl_encode(w, nparams, l->bpp, buf, len);

	return err ? err : fl_decode(buf, len, l->bpp, w, nparams);
}

int sel_learn(const struct sel_learning *l, int split, const int *shares,
	      int k, int rounds, double *accuracy)
{
	struct fl_data pool = { 0 }, test = { 0 }, *mine = NULL;
	struct fl_partition part = { 0 };
	struct fl_model global = { 0 }, local = { 0 };
	struct fl_agg agg = { 0 };
	size_t len = 0;
	void *buf = NULL;
	int err;

	if (k < 1 || k > split || rounds < 1)
		return -EINVAL;
	mine = calloc((size_t)k, sizeof(*mine));
	if (!mine)
		return -ENOMEM;
	err = fl_data_generate(&pool, fl_seed_derive(l->seed, 2),
			       FL_SPLIT_TRAIN, l->samples_per_local * split,
			       l->dim, l->classes);
	if (!err)
		err = fl_data_generate(&test, fl_seed_derive(l->seed, 2),
				       FL_SPLIT_TEST, l->test_samples, l->dim,
				       l->classes);
	if (!err)
		err = fl_partition_init(&part, &pool, split, FL_ALPHA,
					fl_seed_derive(l->seed, 3));
	for (int i = 0; i < k && !err; i++)
		err = shares[i] < 0 || shares[i] >= split ? -EINVAL :
		      fl_data_select(&mine[i], &pool,
				     part.idx + part.start[shares[i]],
				     part.count[shares[i]]);
	if (!err)
		err = fl_model_init(&global, l->classes, l->dim,
				    fl_seed_derive(l->seed, 1));
	if (!err)
		err = fl_model_init(&local, l->classes, l->dim,
				    fl_seed_derive(l->seed, 1));
	if (!err)
		err = fl_agg_init(&agg, global.nparams);
	if (!err) {
		len = fl_wire_size(global.nparams, l->bpp);
		buf = len ? malloc(len) : NULL;
		err = buf ? 0 : len ? -ENOMEM : -EINVAL;
	}
	for (int r = 0; r < rounds && !err; r++) {
		fl_agg_reset(&agg);
		for (int i = 0; i < k && !err; i++) {
			int64_t done;

			memcpy(local.w, global.w,
			       global.nparams * sizeof(*local.w));
			err = wire(l, local.w, local.nparams, buf, len);
			done = err ? 0 :
			       fl_train(&local, &mine[i], l->train_samples,
					FL_BATCH, fl_lr_for(l->dim),
					fl_seed_derive(l->seed, 1000 + r + 1));
			if (!err && done < 0)
				err = (int)done;
			if (!err)
				err = wire(l, local.w, local.nparams, buf, len);
			if (!err)
				err = fl_agg_add(&agg, local.w,
						 part.count[shares[i]]);
		}
		if (!err)
			err = fl_agg_finish(&agg, global.w);
		if (!err)
			err = fl_evaluate(&global, &test, NULL, &accuracy[r]);
	}
	free(buf);
	fl_agg_release(&agg);
	fl_model_release(&local);
	fl_model_release(&global);
	for (int i = 0; i < k; i++)
		fl_data_release(&mine[i]);
	free(mine);
	fl_partition_release(&part);
	fl_data_release(&test);
	fl_data_release(&pool);
	return err;
}

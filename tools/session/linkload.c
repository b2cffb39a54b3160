// SPDX-License-Identifier: MIT
/* The links' load over time; see linkload.h. */
#include "tools/session/linkload.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/forkgate.h"
#include "tools/session/counters.h"
#include "tools/planout.h"
#include "tools/twinlab.h"

struct linkload {
	const struct plan *p;
	double dilation, step_s;
	uint64_t t0;
	struct counter *c;
	struct nscache *nsc;
	int nc, nnsc;
	uint64_t *last;		/* per counter: bytes at the last reading */
	uint64_t *last_ns;	/* ... and when it was taken */
	struct link_util *u;
	size_t n, cap;
	long lost;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* CLOCK_MONOTONIC: stop wakes the reader */
	bool stop;		/* under mu */
};

/*
 * Every link's rate since its last reading, each over its own interval:
 * a reader held up between two links (a busy host) does not lend one
 * link's bytes another's time. A counter is read between two clock
 * readings and dated half-way; where the two are further apart than a
 * twentieth of a step (the reader was held up while reading: when the
 * kernel took the count is not known to better than that), the reading
 * is passed over and the next one covers both intervals.
 */
static void read_all(struct linkload *l, double t_s, bool all_first)
{
	const struct plan *p = l->p;
	uint64_t slack = (uint64_t)(l->step_s * l->dilation * 1e9 / 20);

	for (int i = 0; i < l->nc; i++) {
		/* a link not read yet (its agent did not answer) starts now */
		bool first = all_first || !l->last_ns[i];
		struct nl_qstats q;
		uint64_t t0 = mono_ns();
		int e = counters_get(&l->c[i], &q);
		uint64_t t1 = mono_ns(), t = t0 + (t1 - t0) / 2, b = q.bytes;
		double dt_wall = (double)(t - l->last_ns[i]) / 1e9;
		struct link_util *x;

		if (e) {	/* its agent did not answer: no reading */
			l->lost += !all_first;
			continue;
		}
		if (!first && t1 - t0 > slack)
			continue;

		if (!first && l->n == l->cap && l->cap < LINKLOAD_MAX) {
			size_t cap = l->cap ? 2 * l->cap : 1024;
			struct link_util *m;

			cap = cap > LINKLOAD_MAX ? LINKLOAD_MAX : cap;
			m = realloc(l->u, cap * sizeof(*m));
			if (m) {
				l->u = m;
				l->cap = cap;
			}
		}
		if (!first && dt_wall > 0 && l->n < l->cap) {
			x = &l->u[l->n++];
			x->t_s = t_s;
			link_name(p, l->c[i].link, x->link, sizeof(x->link));
			/* emulated bytes over real time, x scale x dilation */
			x->gbps = (double)(b - l->last[i]) * 8 *
				  p->sc->scale * l->dilation / dt_wall / 1e9;
			x->cap_gbps = plan_link_gbps(p, l->c[i].link);
		} else if (!first) {
			l->lost++;
		}
		l->last[i] = b;
		l->last_ns[i] = t;
	}
}

static void *run(void *arg)
{
	struct linkload *l = arg;
	uint64_t step = (uint64_t)(l->step_s * l->dilation * 1e9);
	uint64_t next = l->t0 + step;
	bool stop = false;

	forkgate_enter();	/* its reads allocate (emu/forkgate.h) */
	read_all(l, 0, true);
	forkgate_leave();
	while (!stop) {
		struct timespec ts = { (time_t)(next / 1000000000u),
				       (long)(next % 1000000000u) };
		uint64_t t;

		pthread_mutex_lock(&l->mu);
		while (!l->stop &&
		       pthread_cond_timedwait(&l->cv, &l->mu, &ts) != ETIMEDOUT)
			;
		stop = l->stop;
		pthread_mutex_unlock(&l->mu);
		if (stop)
			break;
		t = mono_ns();
		forkgate_enter();
		read_all(l, (double)(t - l->t0) / 1e9 / l->dilation, false);
		forkgate_leave();
		do
			next += step;
		while (next <= t);
	}
	return NULL;
}

int linkload_start(const struct plan *p, const struct lpset *set,
		   const char *prefix, struct agents *ag, double dilation,
		   uint64_t t0_ns, double step_s, struct linkload **out)
{
	struct linkload *l = calloc(1, sizeof(*l));
	int err;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	l->p = p;
	l->dilation = dilation;
	l->step_s = step_s > 0 ? step_s : 0.1;
	l->t0 = t0_ns;
	err = counters_open(p, set, prefix, ag, true, &l->c, &l->nc, &l->nsc,
			    &l->nnsc);
	l->last = calloc((size_t)l->nc + 1, sizeof(*l->last));
	l->last_ns = calloc((size_t)l->nc + 1, sizeof(*l->last_ns));
	if (!err && (!l->last || !l->last_ns))
		err = -ENOMEM;
	if (!err) {
		pthread_condattr_t ca;

		pthread_mutex_init(&l->mu, NULL);
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&l->cv, &ca);
		pthread_condattr_destroy(&ca);
		err = -forkgate_thread(&l->th, run, l);
		if (err) {
			pthread_cond_destroy(&l->cv);
			pthread_mutex_destroy(&l->mu);
		}
	}
	if (err) {
		counters_close(l->c, l->nsc, l->nnsc);
		free(l->last);
		free(l->last_ns);
		free(l);
		return err;
	}
	*out = l;
	return 0;
}

long linkload_stop(struct linkload *l, struct results *res, long *lost)
{
	long n;

	*lost = 0;
	if (!l)
		return 0;
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->th, NULL);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	n = (long)l->n;
	*lost = l->lost;
	if (res && l->n && results_link_samples(res, l->u, l->n))
		n = -EIO;
	counters_close(l->c, l->nsc, l->nnsc);
	free(l->last);
	free(l->last_ns);
	free(l->u);
	free(l);
	return n;
}

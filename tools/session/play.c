// SPDX-License-Identifier: MIT
/* The cuts and repairs a run plays; see play.h. */
#include "tools/session/play.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/fleet.h"
#include "emu/forkgate.h"
#include "emu/lab.h"
#include "tools/twinlab.h"

struct play {
	const struct plan *p;
	const struct lpset *set;	/* followed, or NULL */
	atomic_int *leave;	/* per task of the set, or NULL */
	double *live_s;		/* per epoch: in force since (under mu);
				 * NAN: not yet */
	int *changes;		/* per epoch: lightpaths and routes */
	int epoch;		/* in force (the thread's) */
	char prefix[LAB_PREFIX_MAX + 1];
	double dilation;
	uint64_t t0;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* CLOCK_MONOTONIC */
	pthread_cond_t in_cv;	/* an epoch came in, or the thread ended */
	bool stop;		/* under mu */
	bool over;		/* the thread has nothing more to bring in */
	int played;
	bool *cut;		/* per fibre: cut by us, not yet repaired
				 * (written under mu) */
	char err[320];		/* the first failure */
};

/* Sleep until scenario time at_s; false if told to stop meanwhile. */
static bool wait_until(struct play *pl, double at_s)
{
	uint64_t at = pl->t0 + (uint64_t)(at_s * pl->dilation * 1e9);
	struct timespec ts = { (time_t)(at / 1000000000u),
			       (long)(at % 1000000000u) };
	bool stop;

	pthread_mutex_lock(&pl->mu);
	while (!pl->stop &&
	       pthread_cond_timedwait(&pl->cv, &pl->mu, &ts) != ETIMEDOUT)
		;
	stop = pl->stop;
	pthread_mutex_unlock(&pl->mu);
	return !stop;
}

static void fibre_event(struct play *pl, const struct scn_event *e)
{
	char why[200];
	int n, err = lab_fibre_set(pl->prefix, pl->p->sc, e->fibre,
				   e->kind == SCN_EV_REPAIR, &n, why,
				   sizeof(why));

	/* nothing lit on it: nothing to change now, but it is cut (what
	 * an epoch lights on it later is dark at once, bring_in) */
	if (err == -ENOENT && pl->set)
		err = 0;

	if (err && !pl->err[0])
		snprintf(pl->err, sizeof(pl->err), "the %s at %g s was not "
			 "played: %s", scn_event_kind_name(e->kind), e->at_s,
			 why);
	if (!err) {
		pl->played++;
		pthread_mutex_lock(&pl->mu);
		pl->cut[e->fibre] = e->kind == SCN_EV_CUT;
		pthread_mutex_unlock(&pl->mu);
	}
}

/*
 * What epoch e's event does at its own time, whatever epoch is in force:
 * a cut or repair changes its fibre; a task that leaves is told to end
 * (its routes go when the epoch comes in), one the cut leaves no way
 * round for ever (lpset's lost) to fail.
 */
static void event_of(struct play *pl, int e)
{
	const struct timeline *tl = pl->set->tl;
	const struct scn_event *ev = &tl->sc->events[tl->e[e].event];

	if (ev->kind == SCN_EV_CUT || ev->kind == SCN_EV_REPAIR)
		fibre_event(pl, ev);
	/* who leaves is ended before its routes go, who is lost from now
	 * fails (fleet_opts.leave) */
	for (int t = 0; pl->leave && t < pl->set->sc->ntasks; t++)
		if (pl->set->lost[t] == e)
			atomic_store(&pl->leave[t], FLEET_LOST);
		else if (pl->set->runs[e - 1][t] && !pl->set->runs[e][t])
			atomic_store(&pl->leave[t], FLEET_LEFT);
}

/* Epoch e of the set in force, once its moves are set up. */
static void bring_in(struct play *pl, int e)
{
	const struct timeline *tl = pl->set->tl;
	char why[256];
	int changes, err;

	err = lab_epoch(pl->prefix, pl->set, pl->epoch, e, &changes, why,
			sizeof(why));
	if (err) {
		if (!pl->err[0])
			snprintf(pl->err, sizeof(pl->err), "the %s at %g s "
				 "was not followed: %s", epoch_name(tl,
				 &tl->e[e]), tl->e[e].at_s, why);
		return;
	}
	/*
	 * An epoch planned before a cut that came during its set-up may
	 * light a wavelength on that fibre: it is dark at once, as the rest
	 * of the fibre, and the cut's own epoch moves what it carries.
	 */
	for (int i = 0; i < pl->p->sc->nfibres && !err; i++)
		if (pl->cut[i]) {
			int n;

			err = lab_fibre_set(pl->prefix, pl->p->sc, i, false,
					    &n, why, sizeof(why));
			if (err == -ENOENT)	/* nothing left on it */
				err = 0;
			if (err && !pl->err[0])
				snprintf(pl->err, sizeof(pl->err), "the %s at "
					 "%g s lit a cut fibre: %s", epoch_name(
					 tl, &tl->e[e]), tl->e[e].at_s, why);
		}
	pthread_mutex_lock(&pl->mu);
	pl->epoch = e;
	pl->changes[e] = changes;
	pl->live_s[e] = (double)(mono_ns() - pl->t0) / 1e9 / pl->dilation;
	pthread_cond_broadcast(&pl->in_cv);
	pthread_mutex_unlock(&pl->mu);
}

/*
 * How long after its event epoch e may come in besides its set-up: for
 * the end of traffic, until the flow's last datagrams are through (its
 * path's propagation, with a margin for the delay line), so that taking
 * its routes does not drop what is still on its way.
 */
static double drain_s(const struct lpset *set, int e)
{
	const struct epoch *ep = &set->tl->e[e];
	const struct plan *q = set->plan[e - 1];
	double km = 0;

	for (int i = 0; ep->ends && i < q->nbg; i++)
		if (q->bg[i].routed && q->bg[i].bg->event == ep->event)
			km = fmax(km, q->bg[i].path.km);
	return km > 0 ? net_in_flight_s(km) + 1e-4 : 0;
}

static void play_events(struct play *pl);

static void *run(void *arg)
{
	struct play *pl = arg;

	play_events(pl);
	pthread_mutex_lock(&pl->mu);
	pl->over = true;
	pthread_cond_broadcast(&pl->in_cv);
	/* it ends when stopped, after the rounds: a thread's end frees, and
	 * the fleet may fork workers till then (emu/forkgate.h) */
	while (!pl->stop)
		pthread_cond_wait(&pl->cv, &pl->mu);
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

static void play_events(struct play *pl)
{
	const struct scenario *sc = pl->p->sc;

	if (pl->set) {
		const struct timeline *tl = pl->set->tl;
		int a = 1;	/* the next event to happen */

		/*
		 * Events at their times; epochs one after another, each
		 * once its moves are set up (timeline_live_s): an event
		 * during a set-up is not held up by it.
		 */
		for (int b = 1; b < tl->n && !pl->err[0]; b++) {
			double in = tl->e[b].at_s + timeline_setup_s(tl, b) +
				    drain_s(pl->set, b);

			for (; a < tl->n && !pl->err[0] &&
			       (a <= b || tl->e[a].at_s <= in); a++) {
				if (!wait_until(pl, tl->e[a].at_s))
					return;
				forkgate_enter();
				event_of(pl, a);
				forkgate_leave();
			}
			if (pl->err[0] || !wait_until(pl, in))
				break;
			forkgate_enter();
			bring_in(pl, b);
			forkgate_leave();
		}
		return;
	}
	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];

		if (e->kind != SCN_EV_CUT && e->kind != SCN_EV_REPAIR)
			continue;
		if (!wait_until(pl, e->at_s))
			break;
		forkgate_enter();
		fibre_event(pl, e);
		forkgate_leave();
	}
}

static void free_play(struct play *pl)
{
	free(pl->cut);
	free(pl->live_s);
	free(pl->changes);
	free(pl);
}

bool play_epoch(struct play *pl, int e, double *live_s, int *changes)
{
	bool in;

	if (!pl || !pl->set || e < 0 || e >= pl->set->nepochs)
		return false;
	pthread_mutex_lock(&pl->mu);
	in = !isnan(pl->live_s[e]);
	*live_s = pl->live_s[e];
	if (changes)
		*changes = pl->changes[e];
	pthread_mutex_unlock(&pl->mu);
	return in;
}

bool play_wait_epoch(struct play *pl, int e, const volatile sig_atomic_t *stop)
{
	bool in;

	if (!pl || !pl->set || e < 1 || e >= pl->set->nepochs)
		return false;
	pthread_mutex_lock(&pl->mu);
	while (isnan(pl->live_s[e]) && !pl->over && !(stop && *stop)) {
		struct timespec ts;

		/* a signal sets stop without waking us: look every 100 ms */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 100000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&pl->in_cv, &pl->mu, &ts);
	}
	in = !isnan(pl->live_s[e]);
	pthread_mutex_unlock(&pl->mu);
	return in;
}

int play_cut_under(struct play *pl, const struct plan *q, int t)
{
	int f = -1;

	if (!pl || q->tasks[t].blocked)
		return -1;
	pthread_mutex_lock(&pl->mu);
	for (int i = 0; i < q->sc->nfibres && f < 0; i++)
		if (pl->cut[i] && plan_task_crosses(q, t, i))
			f = i;
	pthread_mutex_unlock(&pl->mu);
	return f;
}

int play_start(const struct plan *p, const struct lpset *set,
	       const char *prefix, double dilation, uint64_t t0_ns,
	       atomic_int *leave, struct play **out)
{
	struct play *pl;
	pthread_condattr_t ca;
	int err, n = 0;

	*out = NULL;
	for (int k = 0; k < p->sc->nevents; k++)
		n += p->sc->events[k].kind == SCN_EV_CUT ||
		     p->sc->events[k].kind == SCN_EV_REPAIR;
	if (set)	/* every epoch of the set is brought in */
		n = set->nepochs - 1;
	if (!n)
		return 0;
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	pl->cut = calloc((size_t)p->sc->nfibres + 1, sizeof(*pl->cut));
	if (set) {
		pl->live_s = malloc((size_t)set->nepochs * sizeof(double));
		pl->changes = calloc((size_t)set->nepochs, sizeof(int));
	}
	if (!pl->cut || (set && (!pl->live_s || !pl->changes))) {
		free_play(pl);
		return -ENOMEM;
	}
	for (int e = 0; set && e < set->nepochs; e++)
		pl->live_s[e] = e ? NAN : 0;
	pl->set = set;
	pl->leave = leave;
	pl->p = p;
	snprintf(pl->prefix, sizeof(pl->prefix), "%s", prefix);
	pl->dilation = dilation;
	pl->t0 = t0_ns;
	pthread_mutex_init(&pl->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pl->cv, &ca);
	pthread_cond_init(&pl->in_cv, &ca);
	pthread_condattr_destroy(&ca);
	err = -forkgate_thread(&pl->th, run, pl);
	if (err) {
		pthread_cond_destroy(&pl->cv);
		pthread_cond_destroy(&pl->in_cv);
		pthread_mutex_destroy(&pl->mu);
		free_play(pl);
		return err;
	}
	*out = pl;
	return 0;
}

int play_stop(struct play *pl, char *err, size_t len)
{
	int n;

	if (!pl)
		return 0;
	pthread_mutex_lock(&pl->mu);
	pl->stop = true;
	pthread_cond_signal(&pl->cv);
	pthread_mutex_unlock(&pl->mu);
	pthread_join(pl->th, NULL);
	pthread_cond_destroy(&pl->cv);
	pthread_cond_destroy(&pl->in_cv);
	pthread_mutex_destroy(&pl->mu);
	/* a run that ends before a repair leaves no fibre cut behind */
	for (int i = 0; i < pl->p->sc->nfibres; i++) {
		const struct scn_fibre *f = &pl->p->sc->fibres[i];
		char why[200];
		int k, e = pl->cut[i] ? lab_fibre_set(pl->prefix, pl->p->sc,
						      i, true, &k, why,
						      sizeof(why)) : 0;

		/* -ENOENT: nothing is lit on it any more */
		if (e && e != -ENOENT && !pl->err[0])
			snprintf(pl->err, sizeof(pl->err), "the fibre %s-%s "
				 "could not be repaired at the end: %s",
				 pl->p->sc->nodes[f->a].name,
				 pl->p->sc->nodes[f->b].name, why);
	}
	n = pl->played;
	if (pl->err[0]) {
		snprintf(err, len, "%s", pl->err);
		n = -EIO;
	}
	free_play(pl);
	return n;
}

// SPDX-License-Identifier: MIT
/* The cuts and repairs a run plays; see play.h. */
#include "play.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/lab.h"

struct play {
	const struct plan *p;
	char prefix[LAB_PREFIX_MAX + 1];
	double dilation;
	uint64_t t0;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* CLOCK_MONOTONIC */
	bool stop;		/* under mu */
	int played;
	bool *cut;		/* per fibre: cut by us, not yet repaired */
	char err[320];		/* the first failure */
};

static void *run(void *arg)
{
	struct play *pl = arg;
	const struct scenario *sc = pl->p->sc;

	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];
		uint64_t at = pl->t0 + (uint64_t)(e->at_s * pl->dilation * 1e9);
		struct timespec ts = { (time_t)(at / 1000000000u),
				       (long)(at % 1000000000u) };
		char why[200];
		bool stop;
		int n, err;

		if (e->kind != SCN_EV_CUT && e->kind != SCN_EV_REPAIR)
			continue;
		pthread_mutex_lock(&pl->mu);
		while (!pl->stop &&
		       pthread_cond_timedwait(&pl->cv, &pl->mu, &ts) != ETIMEDOUT)
			;
		stop = pl->stop;
		pthread_mutex_unlock(&pl->mu);
		if (stop)
			break;
		err = lab_fibre_set(pl->prefix, sc, e->fibre,
				    e->kind == SCN_EV_REPAIR, &n, why,
				    sizeof(why));
		if (err && !pl->err[0])
			snprintf(pl->err, sizeof(pl->err), "the %s at %g s was "
				 "not played: %s", scn_event_kind_name(e->kind),
				 e->at_s, why);
		if (!err) {
			pl->played++;
			pl->cut[e->fibre] = e->kind == SCN_EV_CUT;
		}
	}
	return NULL;
}

int play_start(const struct plan *p, const char *prefix, double dilation,
	       uint64_t t0_ns, struct play **out)
{
	struct play *pl;
	pthread_condattr_t ca;
	int err, n = 0;

	*out = NULL;
	for (int k = 0; k < p->sc->nevents; k++)
		n += p->sc->events[k].kind == SCN_EV_CUT ||
		     p->sc->events[k].kind == SCN_EV_REPAIR;
	if (!n)
		return 0;
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	pl->cut = calloc((size_t)p->sc->nfibres + 1, sizeof(*pl->cut));
	if (!pl->cut) {
		free(pl);
		return -ENOMEM;
	}
	pl->p = p;
	snprintf(pl->prefix, sizeof(pl->prefix), "%s", prefix);
	pl->dilation = dilation;
	pl->t0 = t0_ns;
	pthread_mutex_init(&pl->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pl->cv, &ca);
	pthread_condattr_destroy(&ca);
	err = -pthread_create(&pl->th, NULL, run, pl);
	if (err) {
		pthread_cond_destroy(&pl->cv);
		pthread_mutex_destroy(&pl->mu);
		free(pl->cut);
		free(pl);
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
	pthread_mutex_destroy(&pl->mu);
	/* a run that ends before a repair leaves no fibre cut behind */
	for (int i = 0; i < pl->p->sc->nfibres; i++) {
		const struct scn_fibre *f = &pl->p->sc->fibres[i];
		char why[200];
		int k;

		if (pl->cut[i] &&
		    lab_fibre_set(pl->prefix, pl->p->sc, i, true, &k, why,
				  sizeof(why)) && !pl->err[0])
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
	free(pl->cut);
	free(pl);
	return n;
}

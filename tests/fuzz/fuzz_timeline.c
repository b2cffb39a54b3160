// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the timeline: a scenario with events that loads
 * is followed through its epochs (twin/timeline.h) under the policy the
 * input's first byte names, scheduled by mst and predicted, within the
 * time and memory every input gets (make fuzz: -timeout=1,
 * -rss_limit_mb=1024), and what comes out holds: epochs in time order
 * from t = 0, each with a plan of its scenario's tasks, a placed task
 * never over a fibre that is down then, the moves counted as marked.
 * Seeds: the scenarios with events in tests/fuzz/timeline/.
 *
 *   make fuzz [FUZZ_SECONDS=60]
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "twin/plan.h"
#include "twin/predict.h"
#include "twin/scenario.h"
#include "twin/sched.h"
#include "twin/timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether placed task t of p is carried over a fibre its scenario has down. */
static bool over_a_cut(const struct plan *p, int t)
{
	for (int f = 0; f < p->sc->nfibres; f++)
		if (p->sc->fibres[f].down && plan_task_crosses(p, t, f))
			return true;
	return false;
}

static void check(const struct timeline *tl)
{
	if (tl->n < 1 || tl->e[0].at_s != 0 || tl->e[0].event != -1)
		abort();
	for (int i = 0; i < tl->n; i++) {
		const struct epoch *e = &tl->e[i];
		int moved = 0;

		if (!e->sc || !e->plan || e->plan->sc != e->sc ||
		    e->plan->ntasks != e->sc->ntasks)
			abort();
		if (i && (e->at_s < tl->e[i - 1].at_s || e->event < 0 ||
			  e->event >= tl->sc->nevents))
			abort();
		for (int t = 0; t < e->plan->ntasks; t++) {
			moved += e->moved && e->moved[t];
			if (!e->plan->tasks[t].blocked && over_a_cut(e->plan, t))
				abort();
		}
		if (moved != e->nmoved)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum resched policy[] = {RESCHED_NONE, RESCHED_FULL,
					      RESCHED_AUTO};
	struct scn_error err;
	struct scenario *sc;
	struct timeline *tl;

	if (size < 1)
		return 0;
	/* the bound's refusal is followed too, within the second an input
	 * has (the shipped bound is some 13 s of work) */
	timeline_work_max = TIMELINE_WORK_MAX / 50;
	sc = scenario_parse((const char *)data + 1, size - 1, "fuzz", &err);
	if (!sc || !sc->nevents) {
		scenario_free(sc);
		return 0;
	}
	tl = timeline_new(sc, &sched_mst, policy[data[0] % 3], predict_round);
	if (tl)
		check(tl);
	timeline_free(tl);
	scenario_free(sc);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the scenario loader: any byte string must either
 * load into a consistent scenario or be refused with a message, without a
 * crash, a leak or undefined behaviour. Seed corpus: the .yaml files in
 * scenarios/.
 *
 *   make fuzz [FUZZ_SECONDS=60]
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "twin/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the schedulers take for granted of a scenario that loads. */
static void check_loaded(const struct scenario *sc)
{
	for (int i = 0; i < sc->nnodes; i++) {
		const struct scn_node *n = &sc->nodes[i];

		if (n->kind != NODE_ROADM &&
		    (n->attach < 0 || n->attach >= sc->nnodes))
			abort();
	}
	for (int i = 0; i < sc->nfibres; i++) {
		const struct scn_fibre *f = &sc->fibres[i];

		if (f->a == f->b || f->wavelengths < 1 || !(f->km > 0) ||
		    sc->nodes[f->a].kind != NODE_ROADM ||
		    sc->nodes[f->b].kind != NODE_ROADM)
			abort();
	}
	for (int i = 0; i < sc->ntasks; i++) {
		const struct scn_task *t = &sc->tasks[i];

		if (t->nlocals < 1 || sc->nodes[t->global].kind != NODE_SERVER ||
		    t->demand_gbps > sc->wavelength_gbps)
			abort();
		for (int j = 0; j < t->nlocals; j++)
			if (t->locals[j] == t->global ||
			    sc->nodes[t->locals[j]].kind != NODE_SERVER)
				abort();
		if (i > 0 && t->arrival < sc->tasks[i - 1].arrival)
			abort();
		/* the data's split: enough shares, each held once */
		if (scenario_task_split(t) < t->nlocals ||
		    scenario_task_split(t) > SCN_SPLIT_MAX ||
		    (t->share && !t->split_over))
			abort();
		for (int j = 0; t->share && j < t->nlocals; j++) {
			if (t->share[j] < 0 || t->share[j] >= t->split_over)
				abort();
			for (int k = 0; k < j; k++)
				if (t->share[k] == t->share[j])
					abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scn_error err;
	struct scenario *sc;

	sc = scenario_parse((const char *)data, size, "fuzz", &err);
	if (sc)
		check_loaded(sc);
	else if (!err.msg[0])
		abort();	/* a refusal must say why */
	scenario_free(sc);
	return 0;
}

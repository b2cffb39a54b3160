// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the experiment file (twin/experiment.h): any byte
 * string is read into an experiment whose every field is in range — a
 * name that stays in its directory, known schedulers, bounded lists and
 * numbers, what its kind needs (tasks, loads of tasks, neither for
 * gaps, whose random networks are of a bounded size, or an events file
 * and distinct policies for dynamics, without locals or seeds) — or
 * refused with a position, without a crash, leak or hang.
 * Seed corpus: scenarios/experiments/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "twin/experiment.h"
#include "twin/fl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct experiment x;
	struct scn_error err;

	if (experiment_parse((const char *)data, size, "fuzz/x.yaml", &x,
			     &err)) {
		if (!err.msg[0])
			abort();	/* refused without a reason */
		return 0;
	}
	if (!x.name[0] || strchr(x.name, '/') || x.name[0] == '.' ||
	    strncmp(x.base, "fuzz/", 5) * (x.base[0] != '/') *
		    (x.random_roadms == 0 || strcmp(x.base, "random")) ||
	    x.nsched < 1 || x.nsched > EXP_LIST_MAX ||
	    (x.kind != EXP_DYNAMICS && (x.nlocals < 1 || x.nseeds < 1)) ||
	    x.nlocals > EXP_LIST_MAX || x.nseeds > EXP_LIST_MAX ||
	    x.rounds < 1 || x.rounds > 1000000 ||
	    x.parameters < 1 || x.parameters > 1000000000000L ||
	    !fl_wire_supported((unsigned)x.bpp) || !(x.work >= 0) ||
	    x.work > 1e6)
		abort();
	for (int i = 0; i < x.nlocals; i++)
		if (x.locals[i] < 1 || x.locals[i] > 1000000)
			abort();
	/* each kind has what it needs: tasks, or loads of tasks */
	if (x.kind == EXP_EMULATION &&
	    (x.tasks < 1 || x.tasks > EXP_TASKS_MAX || x.nloads))
		abort();
	if (x.kind == EXP_BLOCKING &&
	    (x.tasks || x.nloads < 1 || x.nloads > EXP_LIST_MAX))
		abort();
	for (int i = 0; i < x.nloads; i++)
		if (x.loads[i] < 1 || x.loads[i] > EXP_TASKS_MAX)
			abort();
	if (x.kind == EXP_GAP && (x.tasks || x.nloads))
		abort();
	for (int i = 0; x.kind == EXP_GAP && i < x.nsched; i++)
		if (!strcmp(x.sched[i], "opt"))
			abort();
	if (x.random_roadms && (x.kind != EXP_GAP || x.random_roadms < 4 ||
				x.random_roadms > EXP_RANDOM_MAX ||
				strcmp(x.base, "random")))
		abort();
	/* dynamics: the base's tasks, through its events, by policy */
	if (x.kind == EXP_DYNAMICS &&
	    (x.tasks || x.nloads || x.nlocals || x.nseeds ||
	     strncmp(x.events, "fuzz/", 5) * (x.events[0] != '/') ||
	     x.npolicies < 1 || x.npolicies > 3))
		abort();
	for (int i = 0; x.kind == EXP_DYNAMICS && i < x.npolicies; i++) {
		if ((unsigned)x.policy[i] > RESCHED_AUTO)
			abort();
		for (int j = 0; j < i; j++)
			if (x.policy[i] == x.policy[j])
				abort();
	}
	if (x.kind != EXP_DYNAMICS && (x.events[0] || x.npolicies))
		abort();
	if (x.kind != EXP_EMULATION && x.kind != EXP_BLOCKING &&
	    x.kind != EXP_GAP && x.kind != EXP_DYNAMICS)
		abort();
	return 0;
}

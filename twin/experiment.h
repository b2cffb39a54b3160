/* SPDX-License-Identifier: MIT */
/*
 * An experiment file: a sweep over numbers of local models, seeds and
 * schedulers on one base topology (README, "Experiments"). Read with the
 * scenario's machinery: bounded, strict numbers, errors at file:line:col.
 *
 *   name: poster-fig3                 names files: [A-Za-z0-9_.-]
 *   base: ../poster-testbed.yaml      relative to the experiment file
 *   schedulers: [spff, mst]
 *   locals: [3, 6, 9, 12, 15]         local models per task
 *   tasks: 30
 *   seeds: [1, 2, 3]
 *   rounds: 2                         default 1
 *   parameters: 500000                per task, as in a scenario
 *   bytes_per_parameter: 4            default 4
 *   work_core_s: 0.0005
 */
#ifndef TWIN_EXPERIMENT_H
#define TWIN_EXPERIMENT_H

#include "scenario.h"

#define EXP_LIST_MAX 32		/* entries of a list */
#define EXP_TASKS_MAX 10000	/* tasks per point */

struct experiment {
	char name[SCN_NAME_MAX + 1];
	char base[512];			/* resolved against the file's dir */
	char sched[EXP_LIST_MAX][16];
	int nsched;
	long locals[EXP_LIST_MAX], seeds[EXP_LIST_MAX];
	int nlocals, nseeds;
	long tasks, rounds, parameters, bpp;
	double work;
};

/*
 * experiment_parse - the experiment in buf (its file's path: name). 0, or
 * -EINVAL with err filled ("name:line:col: msg").
 */
int experiment_parse(const char *buf, size_t len, const char *name,
		     struct experiment *x, struct scn_error *err);

/* experiment_load - experiment_parse of a file read as scenarios are. */
int experiment_load(const char *path, struct experiment *x,
		    struct scn_error *err);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * What the scenario loader shares with the other parts of a scenario file
 * read elsewhere in the twin (event.c): the document being read and the
 * scenario it fills, and the loaders the parts have in common. Private to
 * twin/.
 */
#ifndef TWIN_SCENARIO_IMPL_H
#define TWIN_SCENARIO_IMPL_H

#include <yaml.h>

#include "scenario.h"
#include "yamlf.h"

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

struct ctx {
	struct yf y;		/* document and error record */
	struct scenario *sc;
};

/*
 * scn_load_task - one task mapping v into *t, checked against the
 * scenario's nodes (names, reachability, demand). 0, -EINVAL (error at
 * its node) or -ENOMEM. t is the caller's to release either way.
 */
int scn_load_task(struct ctx *c, yaml_node_t *v, struct scn_task *t);

/* scn_task_release - what a task owns (its locals and shares). */
void scn_task_release(struct scn_task *t);

/*
 * scn_file_order - <0, 0 or >0 as the declaration at line la, column ca
 * comes before, at or after the one at (lb, cb): the order of tasks and
 * events due at the same time.
 */
int scn_file_order(int la, int ca, int lb, int cb);

/* scn_write_split - ", split_over: N, shares: [...]" where t has them. */
void scn_write_split(FILE *f, const struct scn_task *t);

/* scn_load_events - the 'events' sequence seq into c->sc. 0 or -errno. */
int scn_load_events(struct ctx *c, yaml_node_t *seq);

/* scn_events_release - sc's events freed, and sc left without any. */
void scn_events_release(struct scenario *sc);

#endif

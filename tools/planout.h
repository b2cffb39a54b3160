/* SPDX-License-Identifier: MIT */
/* Renderings of a plan: JSON (schema in README.md) and Graphviz DOT. */
#ifndef TOOLS_PLANOUT_H
#define TOOLS_PLANOUT_H

#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "twin/plan.h"
#include "twin/timeline.h"

/* plan_json - the whole plan as one JSON object, or NULL (ENOMEM). */
struct json_object *plan_json(const struct plan *p);
/* json_addr - an address as a JSON string ("198.18.0.1"). */
struct json_object *json_addr(uint32_t a);

/*
 * transfers_json - onto arr, a record (task, phase, from, to, src, dst)
 * for each transfer of task (every task's where task < 0), broadcast
 * then upload, with node at one end (any where node < 0). 0 or -ENOMEM.
 */
struct addressing;
int transfers_json(const struct plan *p, const struct addressing *a,
		   int task, int node, struct json_object *arr);

/* plan_json_addressed - the same, each transfer's path with the source
 * and destination addresses a gives it (src, dst). */
struct json_object *plan_json_addressed(const struct plan *p,
					const struct addressing *a);

/*
 * timeline_json - the epochs of tl as a JSON array: at_s, event ("start"
 * or the event's kind), tasks, blocked, moved (names), lightpaths, lit,
 * unlit, mean_round_s. NULL (ENOMEM).
 */
/* policies_json - each policy's outcome (plan --compare), n entries. */
struct json_object *policies_json(const struct tl_outcome *out, int n);
struct json_object *timeline_json(const struct timeline *tl);

/*
 * plan_dot - the network once: fibres with their lit wavelengths, routers
 * and servers beside their ROADM. 0 or -errno.
 */
int plan_dot(const struct plan *p, FILE *f);

/* plan_dot_task - task t's broadcast and upload trees alone. 0 or -errno. */
int plan_dot_task(const struct plan *p, int t, FILE *f);

/* Human summary for a terminal. */
void plan_summary(const struct plan *p, FILE *f);

/* Name of a directed IP link as used in JSON ("lp3>", "acc:s1<"...). */
void link_name(const struct plan *p, int link, char *buf, size_t len);

#endif

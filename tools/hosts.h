/* SPDX-License-Identifier: MIT */
/*
 * A plan split over hosts (twin/partition.h), as `plan --hosts N` shows
 * it: METIS's split beside the naive one it is measured against.
 */
#ifndef TOOLS_HOSTS_H
#define TOOLS_HOSTS_H

#include <json-c/json.h>
#include <stdio.h>

#include "twin/partition.h"

/* hosts_print - each host's sites and load, the tunnels, both splits. */
void hosts_print(const struct plan *p, const struct partition *pt,
		 const struct partition *naive, FILE *f);

/* hosts_json - the same as one object; NULL when out of memory. */
struct json_object *hosts_json(const struct plan *p,
			       const struct partition *pt,
			       const struct partition *naive);

#endif

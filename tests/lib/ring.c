// SPDX-License-Identifier: MIT
/*
 * The teaching ring with events of a test's own, the network the timeline
 * and the set of lightpaths over it are tested on: one file read from the
 * repository's top, so that the tests follow the shipped ring as it is.
 */
#include "tests/lib/ring.h"

#include <criterion/criterion.h>
#include <stdio.h>

struct scenario *ring_with(const char *events)
{
	FILE *f = fopen("scenarios/teaching-ring.yaml", "r");
	static char buf[16384];
	struct scn_error err;
	struct scenario *sc;
	size_t n;

	cr_assert_not_null(f, "run from the repository's top");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", events);
	sc = scenario_parse(buf, n, "ring", &err);
	cr_assert_not_null(sc, "%d:%d: %s", err.line, err.col, err.msg);
	return sc;
}

// SPDX-License-Identifier: MIT
/*
 * The teaching ring with events of a test's own, the network the timeline
 * and the set of lightpaths over it are tested on: one file read from the
 * repository's top, so that the tests follow the shipped ring as it is;
 * and the generated network of 100 ROADMs that the split and the export
 * are both measured on, made the one way.
 */
#include "tests/lib/ring.h"

#include <criterion/criterion.h>
#include <stdio.h>

#include "twin/experiment.h"

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

void hundred_roadms(struct scenario **base, struct scenario *pt)
{
	struct experiment x = { .kind = EXP_EMULATION, .rounds = 1,
				.parameters = 100000, .bpp = 4 };

	cr_assert_eq(experiment_random_base(100, 3, base), 0);
	cr_assert_eq(experiment_point(&x, *base, 5, 1, 100, pt), 0);
}

/* SPDX-License-Identifier: MIT */
/*
 * The networks the twin's and the tools' tests share: the teaching ring
 * with events, and the generated 100-ROADM network; see ring.c.
 */
#ifndef TESTS_TWIN_RING_H
#define TESTS_TWIN_RING_H

#include "twin/scenario.h"

/*
 * scenarios/teaching-ring.yaml with events (YAML text, "events:\n..." or
 * empty) appended; asserts that the file is there and the whole loads.
 */
struct scenario *ring_with(const char *events);

/*
 * hundred_roadms - the generated network of 100 ROADMs (a router and a
 * server each) with 100 tasks of 5 locals, the one the split is measured
 * on: *pt over its base *base, each asserted made. Release with
 * experiment_point_release(pt), then scenario_free(*base).
 */
void hundred_roadms(struct scenario **base, struct scenario *pt);

#endif

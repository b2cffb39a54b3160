/* SPDX-License-Identifier: MIT */
/* The teaching ring with events, for the twin's tests; see ring.c. */
#ifndef TESTS_TWIN_RING_H
#define TESTS_TWIN_RING_H

#include "twin/scenario.h"

/*
 * scenarios/teaching-ring.yaml with events (YAML text, "events:\n..." or
 * empty) appended; asserts that the file is there and the whole loads.
 */
struct scenario *ring_with(const char *events);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The cuts and repairs a run plays on the emulation's links, each at its
 * scenario time (x dilation from the first round's start), by a thread of
 * its own so that a cut lands in the middle of a round as it would. A cut
 * takes every lit wavelength of its fibre down at both ROADMs; nothing is
 * re-placed (the twin's re-scheduling is `plan --events`), so the tasks
 * over it wait for the repair and their TCP connections carry on after.
 */
#ifndef TOOLS_PLAY_H
#define TOOLS_PLAY_H

#include <stdint.h>

#include "twin/plan.h"

struct play;

/*
 * play_start - play p's scenario's cuts and repairs in prefix's emulation
 * from t0_ns (CLOCK_MONOTONIC) at dilation. *out NULL when there are none.
 * 0 or -errno.
 */
int play_start(const struct plan *p, const char *prefix, double dilation,
	       uint64_t t0_ns, struct play **out)
	__attribute__((warn_unused_result));

/*
 * play_stop - stop (what is still to come is not played; a fibre still
 * cut is repaired, so a kept emulation is whole), join, free.
 * How many events were played, or -EIO with the first failure in err.
 * NULL: 0.
 */
int play_stop(struct play *pl, char *err, size_t len);

#endif

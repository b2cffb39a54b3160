/* SPDX-License-Identifier: MIT */
/*
 * The cuts and repairs a run plays on the emulation's links, each at its
 * scenario time (x dilation from the first round's start), by a thread of
 * its own so that a cut lands in the middle of a round as it would. A cut
 * takes every lit wavelength of its fibre down at both ROADMs. Without a
 * timeline to follow nothing is re-placed, so the tasks over it wait for
 * the repair and their TCP connections carry on after. With one (a set of
 * its epochs, twin/lpset.h), each event's epoch is then brought in live
 * (lab_epoch) once its moves are set up, after the epoch before it
 * (timeline_live_s): the tasks it moves carry on over their new paths.
 * Events themselves are played at their times meanwhile: a cut or repair
 * during another's set-up, a task that leaves (told through leave).
 */
#ifndef TOOLS_PLAY_H
#define TOOLS_PLAY_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "twin/lpset.h"
#include "twin/plan.h"

struct play;

/*
 * play_start - play p's scenario's cuts and repairs in prefix's emulation
 * from t0_ns (CLOCK_MONOTONIC) at dilation, following set (NULL: none;
 * else the emulation was built from it). A task that leaves has its flag
 * in leave (per task of the set; may be NULL) set to FLEET_LEFT before its
 * routes go, so that the fleet (fleet_opts.leave) ends it first; one that
 * is lost (set->lost) to FLEET_LOST at the event that loses it. *out NULL when
 * there are none. 0 or -errno.
 */
int play_start(const struct plan *p, const struct lpset *set,
	       const char *prefix, double dilation, uint64_t t0_ns,
	       atomic_int *leave, struct play **out)
	__attribute__((warn_unused_result));

/*
 * play_epoch - whether epoch e of the set is in force yet: when it came
 * in (*live_s, scenario seconds from t0) and how many lightpaths and
 * routes it changed (changes may be NULL).
 */
bool play_epoch(struct play *pl, int e, double *live_s, int *changes);

/*
 * play_wait_epoch - wait until epoch e of the set is in force: true then;
 * false if it never will be (the thread is over without it, it is not an
 * epoch of a set, pl is NULL) or *stop was set meanwhile.
 */
bool play_wait_epoch(struct play *pl, int e, const volatile sig_atomic_t *stop);

/*
 * play_cut_under - a fibre cut now (and not repaired) that placed task t
 * of plan q crosses, or -1 (none, or pl NULL).
 */
int play_cut_under(struct play *pl, const struct plan *q, int t);

/*
 * play_stop - stop (what is still to come is not played; a fibre still
 * cut is repaired, so a kept emulation is whole), join, free.
 * How many events were played, or -EIO with the first failure in err.
 * NULL: 0.
 */
int play_stop(struct play *pl, char *err, size_t len);

#endif

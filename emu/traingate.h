/* SPDX-License-Identifier: MIT */
/*
 * The training gate: the host's CPUs given to the trainers of every
 * forked worker in the order of their deadlines.
 *
 * Trainers run at SCHED_IDLE, behind every packet. Left to the kernel,
 * all of a round's trainers whose models have arrived are runnable at
 * once, hundreds of them, and share what the packets leave by time
 * slices: a trainer whose deadline is near waits its turn behind others
 * due much later, and now and then overruns while the CPUs had time
 * enough for all (NSFNET's heavier points at N 16: 2 of 270 phases a
 * round). Through the gate at most `cap` trainers compute at once (one
 * per CPU), and a free place goes to the waiting one whose deadline comes
 * first: earliest deadline first, which meets every deadline that one
 * CPU's order can meet.
 *
 * The gate lives in a shared anonymous mapping made before the workers
 * are forked, so every worker has it at the same address; a robust,
 * process-shared mutex guards it, and each place has a futex word its
 * waiter sleeps on. A worker that ends inside (killed with its task) is
 * forgotten by the harness when it reaps it (traingate_forget), so its
 * place is not lost.
 */
#ifndef EMU_TRAINGATE_H
#define EMU_TRAINGATE_H

#include <stdint.h>

struct traingate;

/*
 * traingate_new - a gate of nslots places (one per worker), cap of them
 * computing at once (0: one per CPU this process may run on). NULL with
 * errno set.
 */
struct traingate *traingate_new(int nslots, int cap);

/* traingate_free - unmap g (NULL: nothing). Forked workers keep theirs. */
void traingate_free(struct traingate *g);

/*
 * traingate_enter - wait until place `slot` may compute; among waiters
 * the earliest deadline (any clock, the same for all) goes first. A NULL
 * gate or a slot out of range returns at once. 0, or -errno.
 */
int traingate_enter(struct traingate *g, int slot, uint64_t deadline);

/* traingate_leave - place `slot` is done; the next waiter goes. */
void traingate_leave(struct traingate *g, int slot);

/*
 * traingate_forget - the worker of `slot` has ended: whether it was
 * computing or waiting, its place is free (the harness's, at reaping).
 */
void traingate_forget(struct traingate *g, int slot);

/* traingate_counts - how many places compute now, and wait (tests). */
void traingate_counts(struct traingate *g, int *running, int *waiting);

#endif

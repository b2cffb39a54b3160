/* SPDX-License-Identifier: MIT */
/*
 * The real-time priorities of the emulation's own processes, in one
 * place, because their order is the design: the workers' event loops
 * above the delay line's lines (a late loop idles a whole transfer's
 * link; its work per event is short), the lines above a background
 * traffic generator, the harness ordinary, the trainers SCHED_IDLE
 * (emu/README.md, Fidelity). A loop or generator that falls
 * PRIO_GIVE_UP_NS behind all the same goes back to ordinary priority:
 * the host cannot keep its pace, and real-time work must never hold the
 * machine. A refusal (no privilege, a cgroup with no real-time budget)
 * leaves the caller as it is. Each call changes the calling thread only.
 */
#ifndef EMU_PRIO_H
#define EMU_PRIO_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

enum {
	PRIO_TRAFFIC = 5,	/* emu/traffic.c */
	PRIO_DELAY_LINE = 10,	/* emu/dlsup.c */
	PRIO_WORKER_LOOP = 11,	/* emu/worker.c */
};

#define PRIO_GIVE_UP_NS 100000000ull

/* prio_realtime - SCHED_FIFO at prio: whether it took. */
static inline bool prio_realtime(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return !sched_setscheduler(0, SCHED_FIFO, &sp);
}

/*
 * prio_ordinary_if_behind - back to SCHED_OTHER once late_ns passes
 * PRIO_GIVE_UP_NS, if *rt (which says whether it still is real-time).
 */
static inline void prio_ordinary_if_behind(bool *rt, uint64_t late_ns)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (*rt && late_ns > PRIO_GIVE_UP_NS &&
	    !sched_setscheduler(0, SCHED_OTHER, &sp))
		*rt = false;
}

#endif

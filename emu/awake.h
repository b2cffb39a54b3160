/* SPDX-License-Identifier: MIT */
/*
 * Keeping the host's CPUs awake while a round is measured, and counting
 * the time the host takes them away.
 *
 * On a virtual machine an idle CPU halts, and the hypervisor wakes it
 * when a timer is due on it: late, when the machine under it is busy.
 * Measured here (a SCHED_FIFO thread sleeping 250 us, 20 s, both CPUs
 * otherwise idle): 0.4-0.9 s of its wake-ups late in all, 125-243 of
 * them by over 1 ms, the worst 7-35 ms. The shapers' own timers (a
 * qdisc's watchdog) wait the same, and nothing of the emulation's own
 * sees it: a link idles, a transfer ends late, every judged figure is
 * clean. With a thread per CPU that never lets it halt: 19-35 ms in all,
 * 3-12 wake-ups over 1 ms, the worst 1.3-3.5 ms.
 *
 * Each thread runs at SCHED_IDLE and yields in a loop: it takes nothing
 * from a SCHED_IDLE trainer (a CPU-bound one made 1323 and 1312 units of
 * progress in 5 s with and without it; a thread that spins without
 * yielding halves it). What it still cannot prevent it counts: when one
 * turn of its loop took more than AWAKE_GAP_NS of its own CPU time, the
 * CPU did nothing else meanwhile (another thread running would have
 * taken that time, not charged it to this one): the host had it, or an
 * interrupt did. That is a stall, and the monitor judges the round on it.
 */
#ifndef EMU_AWAKE_H
#define EMU_AWAKE_H

#include <stdatomic.h>
#include <stdint.h>

#define AWAKE_GAP_NS 100000u	/* shorter turns are the loop's own work
				 * and the odd interrupt */

/* One CPU's stalls, shared with the thread that keeps it awake. */
struct awake_cpu {
	_Atomic uint64_t stall_ns;	/* all of them */
	_Atomic uint64_t excess_ns;	/* what each lasted beyond `absorb` */
	_Atomic uint64_t stall_max_ns;	/* the longest since read */
	_Atomic uint64_t stalls;	/* how many */
	_Atomic uint64_t cpu_ns;	/* the thread's own CPU time */
} __attribute__((aligned(64)));

struct awake;

/* What the threads counted. */
struct awake_figures {
	uint64_t stall_ns;	/* every CPU's stalls, summed, so far */
	uint64_t excess_ns;	/* ... what each lasted beyond `absorb` */
	uint64_t max_ns;	/* the longest since the last read */
	uint64_t cpu_ns;	/* the threads' own CPU time so far */
};

/*
 * awake_start - a thread on each CPU this process may run on; a stall's
 * excess is what it lasts beyond absorb_ns. NULL and errno when none
 * could be started.
 */
struct awake *awake_start(uint64_t absorb_ns);

/* awake_stop - end and join the threads (NULL: nothing). */
void awake_stop(struct awake *a);

/* awake_threads - how many threads a keeps (each always runnable). */
int awake_threads(const struct awake *a);

/* awake_read - what a's threads counted (NULL a: all 0). */
void awake_read(struct awake *a, struct awake_figures *f);

/*
 * awake_note - one turn of a thread's loop that took turn_ns of its own
 * CPU time, counted into c: a stall when over AWAKE_GAP_NS, its excess
 * what it lasted beyond absorb_ns.
 */
void awake_note(struct awake_cpu *c, uint64_t turn_ns, uint64_t absorb_ns);

#endif

// SPDX-License-Identifier: MIT
/*
 * Keeping the CPUs awake (emu/awake.h): what a turn of a thread's loop
 * counts, and the threads themselves, one per CPU this process may use,
 * each pinned to its own CPU at SCHED_IDLE, all gone once stopped.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emu/awake.h"

/* Short turns are the loop's own; longer ones stalls; beyond absorb,
 * the excess; the longest is handed over once. */
Test(awake, a_turn_over_the_gap_is_a_stall)
{
	struct awake_cpu c = { 0 };

	awake_note(&c, AWAKE_GAP_NS, 1000000);
	cr_assert_eq(c.cpu_ns, AWAKE_GAP_NS);
	cr_assert_eq(c.stalls, 0);
	cr_assert_eq(c.stall_ns, 0);
	awake_note(&c, 400000, 1000000);
	awake_note(&c, 2500000, 1000000);
	awake_note(&c, 300000, 1000000);
	cr_assert_eq(c.stalls, 3);
	cr_assert_eq(c.stall_ns, 3200000);
	cr_assert_eq(c.excess_ns, 1500000);
	cr_assert_eq(c.stall_max_ns, 2500000);
	cr_assert_eq(c.cpu_ns, AWAKE_GAP_NS + 3200000);
}

/* SCHED_IDLE threads of this process: their count, and their CPUs. */
static int idle_threads(cpu_set_t *cpus)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	CPU_ZERO(cpus);
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		cpu_set_t one;

		if (tid <= 0 || sched_getscheduler(tid) != SCHED_IDLE)
			continue;
		if (sched_getaffinity(tid, sizeof(one), &one)) {
			/* reaped since it was listed: gone */
			cr_assert_eq(errno, ESRCH, "thread %d: %s", tid,
				     strerror(errno));
			continue;
		}
		cr_assert_eq(CPU_COUNT(&one), 1, "thread %d on %d CPUs", tid,
			     CPU_COUNT(&one));
		CPU_OR(cpus, cpus, &one);
		n++;
	}
	closedir(d);
	return n;
}

Test(awake, one_idle_thread_on_each_cpu_until_stopped)
{
	cpu_set_t allowed, got;
	struct awake_figures f = { 0 };
	struct awake *a;

	cr_assert_eq(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	a = awake_start(1000000);
	cr_assert_not_null(a);
	cr_assert_eq(awake_threads(a), CPU_COUNT(&allowed));
	/* each sets its own policy first thing: wait until all have run,
	 * as their CPU time says */
	for (long i = 0; f.cpu_ns == 0 && i < 100000000; i++) {
		awake_read(a, &f);
		sched_yield();
	}
	cr_assert_gt(f.cpu_ns, 0, "the threads never ran");
	for (long i = 0; idle_threads(&got) < awake_threads(a) &&
			 i < 1000000; i++)
		sched_yield();
	cr_assert_eq(idle_threads(&got), CPU_COUNT(&allowed));
	cr_assert(CPU_EQUAL(&got, &allowed), "not one thread per CPU");
	awake_stop(a);
	/* joined, each has exited; the kernel may list one a moment longer
	 * until it reaps it (9 times in 150 with a core kept busy) */
	for (long i = 0; idle_threads(&got) > 0 && i < 1000000; i++)
		sched_yield();
	cr_assert_eq(idle_threads(&got), 0, "a thread outlived the stop");
}

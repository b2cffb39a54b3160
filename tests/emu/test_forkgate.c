// SPDX-License-Identifier: MIT
/*
 * The gate between forks and the threads that work beside them
 * (emu/forkgate.h): a fork waits for the piece of work under way, and
 * children forked beside threads that allocate, start and end threads
 * all the time get through their own first allocations and threads.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/forkgate.h"

static atomic_int trying, through, tid;

static void *shut_it(void *arg)
{
	(void)arg;
	atomic_store(&tid, (int)syscall(SYS_gettid));
	atomic_store(&trying, 1);
	forkgate_shut();
	atomic_store(&through, 1);
	forkgate_open();
	return NULL;
}

/* Thread tid's state letter (/proc/self/task/TID/stat), or 0 if gone. */
static char state_of(int t)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", t);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * A piece of work under way holds a fork back until it is done: the
 * forker, once it sleeps at the gate (after it said it is trying, it
 * has nothing else to sleep on), has not got through; once the work is
 * done, it has.
 */
Test(forkgate, a_fork_waits_for_the_work_under_way)
{
	pthread_t th;
	char st = 0;

	forkgate_enter();
	cr_assert_eq(pthread_create(&th, NULL, shut_it, NULL), 0);
	while (!atomic_load(&through) &&
	       (!atomic_load(&trying) ||
		(st = state_of(atomic_load(&tid))) != 'S'))
		sched_yield();
	cr_assert_eq(atomic_load(&through), 0,
		     "a fork got through while work was under way");
	cr_assert_eq(st, 'S');
	forkgate_leave();
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(atomic_load(&through), 1);
	/* and the gate is open again for the work */
	forkgate_enter();
	forkgate_leave();
}

/*
 * A thread may fork from inside its own piece of work: the gate shuts
 * for it all the same, and its piece goes on after. Shut around work
 * that forks within (the view's sampler, the page's traffic generator),
 * it stays shut till opened as often.
 */
Test(forkgate, a_piece_of_work_may_fork_from_inside, .timeout = 60)
{
	int status = -1;
	pthread_t th;
	pid_t pid;

	forkgate_enter();
	forkgate_shut();
	pid = fork();
	if (pid == 0)
		_exit(7);
	forkgate_open();
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	forkgate_leave();
	/* nothing is held: another fork shuts it at once; and work that
	 * forks within, with the gate shut around it, keeps it shut */
	forkgate_shut();
	forkgate_shut();
	forkgate_open();
	cr_assert_eq(pthread_create(&th, NULL, shut_it, NULL), 0);
	while (!atomic_load(&through) &&
	       (!atomic_load(&trying) ||
		state_of(atomic_load(&tid)) != 'S'))
		sched_yield();
	cr_assert_eq(atomic_load(&through), 0, "shut twice, opened once: "
		     "another fork got through");
	forkgate_open();
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(atomic_load(&through), 1);
}

static atomic_bool stop_churn;

static void *nothing(void *arg)
{
	free(malloc(64));
	return arg;
}

/*
 * A thread that works beside the forks as the run's threads do: each
 * piece allocates and frees in several sizes and starts and ends a
 * thread, all inside the gate.
 */
static void *churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_churn)) {
		void *p[8];
		pthread_t th;

		forkgate_enter();
		for (int i = 0; i < 8; i++)
			p[i] = malloc((size_t)16 << i);
		if (!pthread_create(&th, NULL, nothing, NULL))
			pthread_join(th, NULL);
		for (int i = 0; i < 8; i++)
			free(p[i]);
		forkgate_leave();
	}
	return NULL;
}

/* A forked child's first steps, as a worker's: allocate, start a thread. */
static int child(void)
{
	pthread_t th;
	void *p = malloc(48);

	if (!p || pthread_create(&th, NULL, nothing, NULL) ||
	    pthread_join(th, NULL))
		return 1;
	free(p);
	return 0;
}

/*
 * Children forked beside two such threads all end, each having
 * allocated and started a thread. (A replacement allocator's lock held
 * by a thread at the fork would keep one waiting for ever: it would not
 * end within the minute allowed, a bound for a fault, not a pace.)
 */
Test(forkgate, children_forked_beside_working_threads_get_through,
     .timeout = 120)
{
	pthread_t th[2];

	for (int i = 0; i < 2; i++)
		cr_assert_eq(forkgate_thread(&th[i], churn, NULL), 0);
	for (int k = 0; k < 200; k++) {
		struct pollfd p = { .events = POLLIN };
		int status = -1;
		pid_t pid;

		pid = forkgate_fork();
		if (pid == 0)
			_exit(child());
		cr_assert_gt(pid, 0, "fork: %s", strerror(errno));
		p.fd = (int)syscall(SYS_pidfd_open, pid, 0);
		cr_assert_geq(p.fd, 0);
		if (poll(&p, 1, 60000) != 1)
			kill(pid, SIGKILL);
		close(p.fd);
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "child %d of 200 did not get through (status %#x)",
			  k + 1, status);
	}
	atomic_store(&stop_churn, true);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_join(th[i], NULL), 0);
}

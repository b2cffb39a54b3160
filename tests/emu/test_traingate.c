// SPDX-License-Identifier: MIT
/*
 * The training gate (emu/traingate.h): forked processes through one
 * gate, let in earliest deadline first, as many at once as it holds, and
 * a place whose process was killed inside given on when it is forgotten.
 * Every wait is on the gate's own counts or a pipe, never on a clock.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/traingate.h"

/* Wait until g has `running` places computing and `waiting` waiting. */
static void await_counts(struct traingate *g, int running, int waiting)
{
	int r, w;

	for (;;) {
		traingate_counts(g, &r, &w);
		if (r == running && w == waiting)
			return;
		cr_assert(r <= running && w <= waiting,
			  "%d running, %d waiting", r, w);
		sched_yield();
	}
}

/*
 * A child that enters place `slot` with `deadline`, says its slot on fd
 * once in, then leaves (or, with hold, stays in until killed).
 */
static pid_t child(struct traingate *g, int slot, uint64_t deadline, int fd,
		   bool hold)
{
	pid_t pid = fork();
	unsigned char b = (unsigned char)slot;

	cr_assert(pid >= 0);
	if (pid)
		return pid;
	if (traingate_enter(g, slot, deadline))
		_exit(2);
	if (write(fd, &b, 1) != 1)
		_exit(3);
	while (hold)
		pause();
	traingate_leave(g, slot);
	_exit(0);
}

/* The next slot said on fd (a bounded wait: a child that never gets in
 * fails the test rather than hanging it). */
static int next_said(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned char b;

	cr_assert_eq(poll(&p, 1, 30000), 1, "nobody got in");
	cr_assert_eq(read(fd, &b, 1), 1);
	return b;
}

static void reap_ok(pid_t pid)
{
	int st;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
}

/* A gate of nslots places, cap in at once, and a pipe children say on. */
static struct traingate *gate_and_pipe(int nslots, int cap, int fd[2])
{
	struct traingate *g = traingate_new(nslots, cap);

	cr_assert(g);
	cr_assert_eq(pipe(fd), 0);
	return g;
}

/* Everyone out of g, then g and the pipe gone. */
static void all_out(struct traingate *g, int fd[2])
{
	await_counts(g, 0, 0);
	close(fd[0]);
	close(fd[1]);
	traingate_free(g);
}

Test(traingate, waiters_go_in_by_deadline)
{
	int fd[2];
	struct traingate *g = gate_and_pipe(4, 1, fd);
	pid_t pid[4];
	/* slot 1 due last, 2 first, 3 between */
	static const uint64_t due[4] = { 0, 300, 100, 200 };

	/* this process holds the one place while they line up */
	cr_assert_eq(traingate_enter(g, 0, 0), 0);
	for (int s = 1; s < 4; s++) {
		pid[s] = child(g, s, due[s], fd[1], false);
		await_counts(g, 1, s);
	}
	traingate_leave(g, 0);
	cr_expect_eq(next_said(fd[0]), 2);
	cr_expect_eq(next_said(fd[0]), 3);
	cr_expect_eq(next_said(fd[0]), 1);
	for (int s = 1; s < 4; s++)
		reap_ok(pid[s]);
	all_out(g, fd);
}

Test(traingate, as_many_in_at_once_as_it_holds)
{
	int fd[2];
	struct traingate *g = gate_and_pipe(3, 2, fd);
	pid_t a, b;

	a = child(g, 0, 5, fd[1], true);
	b = child(g, 1, 9, fd[1], true);
	next_said(fd[0]);
	next_said(fd[0]);
	await_counts(g, 2, 0);
	/* a third waits, however early it is due */
	{
		pid_t c = child(g, 2, 1, fd[1], false);
		int r, w;

		await_counts(g, 2, 1);
		kill(a, SIGKILL);
		cr_assert_eq(waitpid(a, NULL, 0), a);
		/* killed inside: its place is not given on until forgotten */
		traingate_counts(g, &r, &w);
		cr_expect(r == 2 && w == 1, "%d running, %d waiting", r, w);
		traingate_forget(g, 0);
		cr_expect_eq(next_said(fd[0]), 2);
		reap_ok(c);
	}
	kill(b, SIGKILL);
	cr_assert_eq(waitpid(b, NULL, 0), b);
	traingate_forget(g, 1);
	all_out(g, fd);
}

Test(traingate, a_waiter_killed_is_forgotten_and_none_is_let_in_for_it)
{
	int fd[2];
	struct traingate *g = gate_and_pipe(3, 1, fd);
	pid_t w, l;

	cr_assert_eq(traingate_enter(g, 0, 0), 0);
	w = child(g, 1, 1, fd[1], false);
	await_counts(g, 1, 1);
	kill(w, SIGKILL);
	cr_assert_eq(waitpid(w, NULL, 0), w);
	traingate_forget(g, 1);
	await_counts(g, 1, 0);
	l = child(g, 2, 2, fd[1], false);
	await_counts(g, 1, 1);
	traingate_leave(g, 0);
	cr_expect_eq(next_said(fd[0]), 2);
	reap_ok(l);
	all_out(g, fd);
}

/* No gate, or no place in it: in at once, as before. */
Test(traingate, without_a_place_in_at_once)
{
	struct traingate *g = traingate_new(1, 1);

	cr_assert(g);
	cr_expect_eq(traingate_enter(NULL, 0, 0), 0);
	cr_expect_eq(traingate_enter(g, 0, 0), 0);
	cr_expect_eq(traingate_enter(g, -1, 0), 0);
	cr_expect_eq(traingate_enter(g, 1, 0), 0);
	traingate_leave(g, 0);
	cr_expect_null(traingate_new(0, 1));
	cr_expect_eq(errno, EINVAL);
	traingate_free(g);
	traingate_free(NULL);
}

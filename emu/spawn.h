/* SPDX-License-Identifier: MIT */
/*
 * External programs (iptables, gnuplot, Graphviz): every one twinlab runs
 * is run here, by fork + execve of an absolute path with an argv — never a
 * shell — with stdin from /dev/null (or bytes given), a fixed environment unless one is
 * given, optionally inside a network namespace or a directory, under a
 * time limit, and with its standard error captured for the message that
 * names the failure.
 */
#ifndef EMU_SPAWN_H
#define EMU_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SPAWN_ERR_MAX 2048	/* bytes of standard error kept */

struct spawn {
	const char *path;		/* absolute */
	char *const *argv;		/* argv[0] is the program's name */
	char *const *envp;		/* NULL: PATH and LC_ALL=C only */
	const char *dir;		/* run there, or NULL */
	int nsfd;			/* network namespace to enter, or -1 */
	int out_fd;			/* standard output, or -1: discarded */
	const char *in;			/* standard input: these bytes, */
	size_t in_len;			/* ... from a sealed memfd; NULL:
					 * /dev/null */
	unsigned timeout_ms;		/* killed (SIGKILL) after; 0: none */
};

struct spawn_result {
	int status;			/* wait status, when it ran */
	bool timed_out;
	unsigned timeout_ms;		/* the limit it had */
	char err[SPAWN_ERR_MAX + 1];	/* standard error, NUL-terminated */
	size_t err_len;			/* bytes kept in err */
	size_t err_lost;		/* bytes beyond SPAWN_ERR_MAX */
};

/*
 * spawn_run - run the program and wait for it. Returns 0 when it ran
 * (whatever its exit; see res), or -errno when it could not be started:
 * the namespace, the directory or execve() failed in the child (that
 * errno), or fork/pipe/memfd failed. Signals interrupt nothing: the wait goes
 * on, the time limit still holds.
 */
int spawn_run(const struct spawn *sp, struct spawn_result *res)
	__attribute__((warn_unused_result));

/* Whether it exited with status 0. */
bool spawn_ok(const struct spawn_result *res);

/* Its exit status (0-255), or -1 when it was killed. */
int spawn_exit_status(const struct spawn_result *res);

/*
 * spawn_describe - "exit status 2", "killed by signal 11 (Segmentation
 * fault)" or "killed after the time limit of 60 s", then the last line
 * of its standard error, if any: ": <line>".
 */
void spawn_describe(const struct spawn_result *res, char *buf, size_t len);

/*
 * pipes_close - close whichever ends of pipes a and b are open (>= 0),
 * as a failure path that made them in turn leaves them; each becomes -1.
 */
void pipes_close(int a[2], int b[2]);

/*
 * spawn_wait_until - wait for child pid to end until deadline_ns
 * (CLOCK_MONOTONIC), without reaping it while it runs: true and *status
 * once reaped, false if it still runs then (or is not ours to wait for).
 */
bool spawn_wait_until(pid_t pid, uint64_t deadline_ns, int *status);

#endif

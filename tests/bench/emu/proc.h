/* SPDX-License-Identifier: MIT */
/*
 * Processes for the emulation benchmark: fork + execve of an argv vector
 * (never a shell string), optionally inside a network namespace, and the
 * bookkeeping that lets the benchmark end exactly the processes it
 * started: it is a child subreaper, so anything its children leave
 * behind (the delay line's double fork, Mininet's node shells) becomes
 * its child and is found by parent PID, never by name.
 */
#ifndef BENCH_EMU_PROC_H
#define BENCH_EMU_PROC_H

#include <stdbool.h>
#include <sys/types.h>

struct proc_io {
	int in_fd;		/* -1: /dev/null */
	int out_fd;		/* -1: /dev/null */
	int netns_fd;		/* -1: the caller's namespace */
};

/*
 * proc_spawn - start argv[0] (an absolute path) with argv; stderr is
 * ours. Returns the pid, or -errno when it could not be started.
 */
pid_t proc_spawn(char *const argv[], const struct proc_io *io);

/*
 * proc_wait - wait for pid; while waiting it is bench_child, so a stop
 * signal reaches it. Returns its exit status, 128 + signal, or -errno.
 */
int proc_wait(pid_t pid);

/* proc_run - spawn with stdin and stdout on /dev/null, then wait. */
int proc_run(char *const argv[]);

/* Become a child subreaper (see above). 0 or -errno. */
int proc_subreaper(void);

/* Reap every child that has exited, without blocking. */
void proc_reap(void);

/*
 * proc_end_children - SIGKILL every live child of ours except `keep`
 * (0: none), by PID, and reap it. Returns how many were alive.
 */
int proc_end_children(pid_t keep);

#endif

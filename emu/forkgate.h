/* SPDX-License-Identifier: MIT */
/*
 * Forking a worker (a child that runs on, no exec) from a process whose
 * other threads run meanwhile. The child gets memory as it was, with any
 * lock another thread held then still held, for ever: glibc makes its
 * own allocator, stdio and loader whole again in the child, but an
 * allocator that replaces glibc's (AddressSanitizer's) does not, so a
 * worker forked while another thread was inside it, or starting or
 * ending (which frees), waits in its first malloc until it is killed.
 *
 * So the threads that work beside the fleet's forks (the play of a
 * run's events, the links' sampler, the view's sampler and server) hold
 * the gate open around each piece of their work, and each fork shuts it:
 * a fork waits for the pieces under way, and a piece for the fork. Those
 * threads do not end until stopped (after the rounds); none takes the
 * gate twice. A forked child never touches the gate. The view's web
 * server is run by one thread of the view's, each turn inside the gate
 * (tools/view/srv_impl.h), so it makes and ends no thread per request.
 */
#ifndef EMU_FORKGATE_H
#define EMU_FORKGATE_H

#include <pthread.h>
#include <sys/types.h>

/* forkgate_enter/leave - a piece of a thread's work that may allocate. */
void forkgate_enter(void);
void forkgate_leave(void);

/*
 * forkgate_shut/open - around a fork (the parent opens it again); from
 * inside a piece of work too (the piece goes on after), and around work
 * that forks within (shut again inside, it stays shut). The gate is the
 * outer lock: whoever holds a lock that a piece of work may wait for
 * shuts it first, then takes that lock (the view's sampler forks the
 * page's traffic generator holding what the view shows).
 */
void forkgate_shut(void);
void forkgate_open(void);

/*
 * forkgate_fork - fork() with the gate shut around it, opened again in
 * the parent: for a child that runs on without exec.
 */
pid_t forkgate_fork(void);

/*
 * forkgate_thread - pthread_create(th, NULL, fn, arg) of a thread that
 * works beside the forks, returning once the thread runs fn: its start
 * (which takes the allocator's locks too) is over before the caller
 * forks again. 0 or an errno.
 */
int forkgate_thread(pthread_t *th, void *(*fn)(void *), void *arg);

#endif

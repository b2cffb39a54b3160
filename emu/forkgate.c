// SPDX-License-Identifier: MIT
/*
 * The gate between the fleet's forks and the threads that work beside
 * them (forkgate.h): a read-write lock that prefers its writer, so that a
 * fork waits only for the pieces under way, not for a stream of them.
 */
#include "forkgate.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <unistd.h>

static pthread_rwlock_t gate =
	PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

/* this thread is inside a piece of work (it forks from within one);
 * how many times over it has the gate shut */
static _Thread_local bool inside;
static _Thread_local int shut;

void forkgate_enter(void)
{
	pthread_rwlock_rdlock(&gate);
	inside = true;
}

void forkgate_leave(void)
{
	inside = false;
	pthread_rwlock_unlock(&gate);
}

void forkgate_shut(void)
{
	if (shut++)
		return;
	/* its own piece gives way first: between the two it allocates
	 * nothing, and another's fork may come */
	if (inside)
		pthread_rwlock_unlock(&gate);
	pthread_rwlock_wrlock(&gate);
}

void forkgate_open(void)
{
	if (--shut)
		return;
	pthread_rwlock_unlock(&gate);
	if (inside)
		pthread_rwlock_rdlock(&gate);
}

pid_t forkgate_fork(void)
{
	pid_t pid;

	forkgate_shut();
	pid = fork();
	if (pid != 0)
		forkgate_open();
	return pid;
}

struct start {
	void *(*fn)(void *);
	void *arg;
	sem_t in;
};

static void *started(void *p)
{
	struct start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	sem_post(&s->in);	/* s is the creator's, gone after this */
	return fn(arg);
}

int forkgate_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
	struct start s = { .fn = fn, .arg = arg };
	int e;

	if (sem_init(&s.in, 0, 0))
		return errno;
	e = pthread_create(th, NULL, started, &s);
	while (!e && sem_wait(&s.in) && errno == EINTR)
		;
	sem_destroy(&s.in);
	return e;
}

// SPDX-License-Identifier: MIT
/*
 * The training gate (traingate.h): earliest deadline first over a shared
 * mapping, a robust process-shared mutex and a futex word per place.
 */
#include "traingate.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TG_SLOTS_MAX 65536

enum { TG_IDLE, TG_WAITING, TG_RUNNING };

struct tg_slot {
	uint64_t deadline;
	int state;
	_Atomic uint32_t go;	/* the futex word: 1 once let in */
};

struct traingate {
	pthread_mutex_t mu;
	int cap, running, nslots;
	size_t bytes;
	struct tg_slot slot[];
};

static long futex(_Atomic uint32_t *w, int op, uint32_t v)
{
	return syscall(SYS_futex, (uint32_t *)w, op, v, NULL, NULL, 0);
}

struct traingate *traingate_new(int nslots, int cap)
{
	struct traingate *g;
	pthread_mutexattr_t ma;
	size_t bytes;
	int e;

	if (cap == 0) {
		cpu_set_t on;

		cap = sched_getaffinity(0, sizeof(on), &on) ? 1 : CPU_COUNT(&on);
	}
	if (nslots < 1 || nslots > TG_SLOTS_MAX || cap < 1) {
		errno = EINVAL;
		return NULL;
	}
	bytes = sizeof(*g) + (size_t)nslots * sizeof(g->slot[0]);
	g = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED)
		return NULL;
	e = pthread_mutexattr_init(&ma);
	if (!e)
		e = pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	if (!e)
		e = pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	if (!e)
		e = pthread_mutex_init(&g->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	if (e) {
		munmap(g, bytes);
		errno = e;
		return NULL;
	}
	g->cap = cap;
	g->nslots = nslots;
	g->bytes = bytes;
	return g;
}

void traingate_free(struct traingate *g)
{
	if (!g)
		return;
	pthread_mutex_destroy(&g->mu);
	munmap(g, g->bytes);
}

/*
 * The gate locked. Its holder may have died inside (a worker killed with
 * its task): the places are as it left them, and the count of those
 * computing is made again from them.
 */
static void lock(struct traingate *g)
{
	if (pthread_mutex_lock(&g->mu) == EOWNERDEAD) {
		g->running = 0;
		for (int i = 0; i < g->nslots; i++)
			g->running += g->slot[i].state == TG_RUNNING;
		pthread_mutex_consistent(&g->mu);
	}
}

/* Free places to the waiters, earliest deadline first; the gate locked. */
static void admit(struct traingate *g)
{
	while (g->running < g->cap) {
		struct tg_slot *best = NULL;

		for (int i = 0; i < g->nslots; i++) {
			struct tg_slot *s = &g->slot[i];

			if (s->state == TG_WAITING &&
			    (!best || s->deadline < best->deadline))
				best = s;
		}
		if (!best)
			return;
		best->state = TG_RUNNING;
		g->running++;
		atomic_store(&best->go, 1);
		futex(&best->go, FUTEX_WAKE, 1);
	}
}

/* Place `slot` out of the gate; the gate locked. */
static void drop(struct traingate *g, int slot)
{
	struct tg_slot *s = &g->slot[slot];

	if (s->state == TG_RUNNING)
		g->running--;
	s->state = TG_IDLE;
	admit(g);
}

void traingate_leave(struct traingate *g, int slot)
{
	if (!g || slot < 0 || slot >= g->nslots)
		return;
	lock(g);
	drop(g, slot);
	pthread_mutex_unlock(&g->mu);
}

int traingate_enter(struct traingate *g, int slot, uint64_t deadline)
{
	struct tg_slot *s;

	if (!g || slot < 0 || slot >= g->nslots)
		return 0;
	s = &g->slot[slot];
	lock(g);
	atomic_store(&s->go, 0);
	s->deadline = deadline;
	s->state = TG_WAITING;
	admit(g);
	pthread_mutex_unlock(&g->mu);
	while (!atomic_load(&s->go))
		if (futex(&s->go, FUTEX_WAIT, 0) && errno != EAGAIN &&
		    errno != EINTR) {
			int e = -errno;

			traingate_leave(g, slot);
			return e;
		}
	return 0;
}

void traingate_forget(struct traingate *g, int slot)
{
	traingate_leave(g, slot);
}

void traingate_counts(struct traingate *g, int *running, int *waiting)
{
	*running = *waiting = 0;
	if (!g)
		return;
	lock(g);
	*running = g->running;
	for (int i = 0; i < g->nslots; i++)
		*waiting += g->slot[i].state == TG_WAITING;
	pthread_mutex_unlock(&g->mu);
}

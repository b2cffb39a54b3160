// SPDX-License-Identifier: MIT
#include "awake.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct awake {
	int n;
	uint64_t absorb_ns;
	atomic_bool stop;
	pthread_t *t;
	struct awake_cpu *c;
	int *cpu;
	struct turn {
		struct awake *a;
		int i;
	} *arg;
};

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void awake_note(struct awake_cpu *c, uint64_t turn_ns, uint64_t absorb_ns)
{
	uint64_t old;

	atomic_fetch_add_explicit(&c->cpu_ns, turn_ns, memory_order_relaxed);
	if (turn_ns <= AWAKE_GAP_NS)
		return;
	atomic_fetch_add_explicit(&c->stall_ns, turn_ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->stalls, 1, memory_order_relaxed);
	if (turn_ns > absorb_ns)
		atomic_fetch_add_explicit(&c->excess_ns, turn_ns - absorb_ns,
					  memory_order_relaxed);
	old = atomic_load_explicit(&c->stall_max_ns, memory_order_relaxed);
	while (turn_ns > old &&
	       !atomic_compare_exchange_weak_explicit(&c->stall_max_ns, &old,
						      turn_ns,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

/*
 * Plain system calls only: the process forks workers while this runs,
 * and a child must not inherit a held lock.
 */
static void *keep(void *arg)
{
	struct awake *a = ((struct turn *)arg)->a;
	int i = ((struct turn *)arg)->i;
	struct sched_param sp = { .sched_priority = 0 };
	uint64_t prev, now;

	pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	prev = thread_ns();
	while (!atomic_load_explicit(&a->stop, memory_order_relaxed)) {
		sched_yield();
		now = thread_ns();
		awake_note(&a->c[i], now - prev, a->absorb_ns);
		prev = now;
	}
	return NULL;
}

struct awake *awake_start(uint64_t absorb_ns)
{
	struct awake *a = calloc(1, sizeof(*a));
	cpu_set_t allowed;
	int n = 0, cpus, err = 0;

	if (!a)
		return NULL;
	a->absorb_ns = absorb_ns;
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		err = errno;
		goto fail;
	}
	cpus = CPU_COUNT(&allowed);
	a->t = calloc((size_t)cpus, sizeof(*a->t));
	a->cpu = calloc((size_t)cpus, sizeof(*a->cpu));
	a->arg = calloc((size_t)cpus, sizeof(*a->arg));
	a->c = aligned_alloc(64, (size_t)cpus * sizeof(*a->c));
	if (!a->t || !a->cpu || !a->arg || !a->c) {
		err = ENOMEM;
		goto fail;
	}
	for (int i = 0; i < cpus; i++)
		a->c[i] = (struct awake_cpu){ 0 };
	for (int cpu = 0; cpu < CPU_SETSIZE && n < cpus; cpu++)
		if (CPU_ISSET(cpu, &allowed))
			a->cpu[n++] = cpu;
	/* each thread starts on its own CPU, pinned before it runs */
	for (int i = 0; i < cpus; i++) {
		pthread_attr_t at;
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(a->cpu[i], &one);
		pthread_attr_init(&at);
		err = pthread_attr_setaffinity_np(&at, sizeof(one), &one);
		a->arg[i] = (struct turn){ a, i };
		if (!err)
			err = pthread_create(&a->t[i], &at, keep, &a->arg[i]);
		if (!err)
			a->n = i + 1;
		pthread_attr_destroy(&at);
		if (err)
			break;
	}
	if (a->n)
		return a;
fail:
	awake_stop(a);
	errno = err ? err : EAGAIN;
	return NULL;
}

void awake_stop(struct awake *a)
{
	if (!a)
		return;
	atomic_store(&a->stop, true);
	for (int i = 0; i < a->n; i++)
		pthread_join(a->t[i], NULL);
	free(a->t);
	free(a->cpu);
	free(a->arg);
	free(a->c);
	free(a);
}

int awake_threads(const struct awake *a)
{
	return a ? a->n : 0;
}

void awake_read(struct awake *a, struct awake_figures *f)
{
	*f = (struct awake_figures){ 0 };
	for (int i = 0; a && i < a->n; i++) {
		uint64_t m = atomic_exchange(&a->c[i].stall_max_ns, 0);

		f->stall_ns += atomic_load(&a->c[i].stall_ns);
		f->excess_ns += atomic_load(&a->c[i].excess_ns);
		f->cpu_ns += atomic_load(&a->c[i].cpu_ns);
		if (m > f->max_ns)
			f->max_ns = m;
	}
}

// SPDX-License-Identifier: MIT
#include "awake.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "atomic_max.h"

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
		atomic_bool idle;	/* it runs at SCHED_IDLE */
	} *arg;
	sem_t ready;		/* posted by each thread once it knows */
};

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void awake_note(struct awake_cpu *c, uint64_t turn_ns, uint64_t absorb_ns)
{
	atomic_fetch_add_explicit(&c->cpu_ns, turn_ns, memory_order_relaxed);
	if (turn_ns <= AWAKE_GAP_NS)
		return;
	atomic_fetch_add_explicit(&c->stall_ns, turn_ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->stalls, 1, memory_order_relaxed);
	if (turn_ns > absorb_ns)
		atomic_fetch_add_explicit(&c->excess_ns, turn_ns - absorb_ns,
					  memory_order_relaxed);
	atomic_max_u64(&c->stall_max_ns, turn_ns);
}

/*
 * Plain system calls only: the process forks workers while this runs,
 * and a child must not inherit a held lock.
 */
static void *keep(void *arg)
{
	struct turn *me = arg;
	struct awake *a = me->a;
	int i = me->i;
	struct sched_param sp = { .sched_priority = 0 };
	uint64_t prev, now;

	/* named, so that ps, top and perf tell it from the harness's own */
	prctl(PR_SET_NAME, "twinlab-awake");
	/* at any other policy it would take the workers' CPU time */
	atomic_store(&me->idle,
		     !pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp));
	sem_post(&a->ready);
	if (!atomic_load(&me->idle))
		return NULL;
	prev = thread_ns();
	while (!atomic_load_explicit(&a->stop, memory_order_relaxed)) {
		sched_yield();
		now = thread_ns();
		awake_note(&a->c[i], now - prev, a->absorb_ns);
		prev = now;
	}
	return NULL;
}

/*
 * Whether a CPU quota holds this process's cgroup or one above it (v2
 * cpu.max, v1 cpu.cfs_quota_us): a thread that is always runnable would
 * spend the quota and the whole group would wait out each period.
 */
static bool quota_above(void)
{
	char buf[4096], path[4400], *p, *dir = NULL;
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	bool v1 = false;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* v2: "0::/path"; v1: "N:cpu,cpuacct:/path" */
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char *colon = strchr(p, ':'), *second;

		second = colon ? strchr(colon + 1, ':') : NULL;
		if (!second)
			break;
		if (!strncmp(p, "0::", 3)) {
			dir = second + 1;
			v1 = false;
		} else if (strstr(colon, "cpu,") || strstr(colon, ",cpu:") ||
			   !strncmp(colon, ":cpu:", 5)) {
			dir = second + 1;
			v1 = true;
			break;
		}
	}
	if (!dir)
		return false;
	*strchrnul(dir, '\n') = '\0';
	for (;;) {
		char q[64];

		snprintf(path, sizeof(path), "/sys/fs/cgroup%s%s/%s",
			 v1 ? "/cpu" : "", dir, v1 ? "cpu.cfs_quota_us" :
			 "cpu.max");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, q, sizeof(q) - 1);
			close(fd);
			q[n > 0 ? n : 0] = '\0';
			if (n > 0 && strncmp(q, v1 ? "-1" : "max", v1 ? 2 : 3))
				return true;
		}
		p = strrchr(dir, '/');
		if (!p || p == dir)
			return false;
		*p = '\0';
	}
}

struct awake *awake_start(uint64_t absorb_ns)
{
	struct awake *a;
	cpu_set_t allowed;
	int n = 0, cpus, err = 0, idle = 0;

	if (quota_above()) {
		errno = EDQUOT;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->absorb_ns = absorb_ns;
	if (sem_init(&a->ready, 0, 0)) {
		free(a);
		return NULL;
	}
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
		a->arg[i].a = a;
		a->arg[i].i = i;
		if (!err)
			err = pthread_create(&a->t[i], &at, keep, &a->arg[i]);
		if (!err)
			a->n = i + 1;
		pthread_attr_destroy(&at);
		if (err)
			break;
	}
	/* each says whether it runs at SCHED_IDLE: all, or none run */
	for (int i = 0; i < a->n; i++) {
		while (sem_wait(&a->ready) && errno == EINTR)
			;
	}
	for (int i = 0; i < a->n; i++)
		idle += atomic_load(&a->arg[i].idle);
	if (!err && a->n && idle < a->n)
		err = EPERM;
	if (!err && a->n)
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
	sem_destroy(&a->ready);
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

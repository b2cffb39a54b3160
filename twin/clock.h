/* SPDX-License-Identifier: MIT */
/*
 * The monotonic clock, read one way everywhere: durations, deadlines and
 * timestamps of the twin, the emulation and the commands; and the real
 * one, for the kernel's packet stamps.
 */
#ifndef TWIN_CLOCK_H
#define TWIN_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME in nanoseconds: what the kernel stamps packets with. */
static inline uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in seconds. */
static inline double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif

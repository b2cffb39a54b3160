/* SPDX-License-Identifier: MIT */
/*
 * What the modules of the emulation benchmark share: the stop flag the
 * signal handler sets, the child it forwards a stop to, and the clock.
 */
#ifndef BENCH_EMU_BENCH_H
#define BENCH_EMU_BENCH_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Set by SIGINT/SIGTERM/SIGHUP: every loop ends and cleanup runs. */
extern volatile sig_atomic_t bench_stop;
/* The child being waited for (0: none); a stop signal is forwarded to it. */
extern volatile pid_t bench_child;

/* CLOCK_MONOTONIC in seconds (Python's time.monotonic() is the same clock). */
static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The token bucket emu/lab.c shape() gives a link of `gbps` at `scale`:
 * a burst of 1 ms at rate but at least 2 KiB (about one frame), a
 * queue of 50 ms at rate but at least 64 KiB (no dilation). Mirrored for the ip/tc and bare variants; the census compares
 * every tbf with twinlab's, so a change in lab.c shows up as DIFFERENT.
 */
static inline void tbf_params(double gbps, double scale, uint64_t *bps,
			      uint32_t *burst, uint32_t *limit)
{
	uint64_t bytes, lim;

	*bps = (uint64_t)(gbps * 1e9 / scale);
	bytes = *bps / 8;
	*burst = bytes / 1000 > 2048 ? (uint32_t)(bytes / 1000) : 2048;
	lim = bytes / 20;
	if (lim < 65536)
		lim = 65536;
	if (lim > UINT32_MAX)
		lim = UINT32_MAX;
	*limit = (uint32_t)lim;
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The fidelity monitor: what the host did while a round ran, and whether
 * the round therefore measured the emulated network or the machine.
 *
 * Sampled before and after every round: CPU pressure (PSI "some") and CPU
 * use of the whole host, TCP retransmissions in the servers' namespaces
 * (the caller adds the shapers' drops, read with their byte counts);
 * from the workers' reports, how late each
 * worker's event loop handled its compute deadline's timer, compute
 * phases whose arithmetic overran their deadline and the start skew of the
 * tasks (how late each global model's loop woke for t0). A round is
 * faithful when none of the thresholds below is crossed; otherwise it is
 * degraded, with the first reason and its figure, and a dilation that
 * would likely have been faithful.
 *
 * How late the workers acted is judged task by task, against the task's
 * own round: along the way that ended its round (a late worker elsewhere
 * did not delay its end), the median task within MON_TIME_TOL and the
 * worst within MON_TASK_WORST. The delay line's lateness (how long after
 * its deadline a held packet went out, from the counters it shares:
 * struct dl_live) delays a transfer as much: its mean within
 * MON_TIME_TOL of the shortest round, its worst packet within
 * MON_TASK_WORST. So does the traffic generator's (emu/traffic.h): a
 * stalled generator sends what fell due meanwhile at once, and a transfer
 * sharing a link with it, max-min, loses at most the stall (its burst
 * takes no more than the flow's fair share while it drains); its mean
 * and its worst datagram are held to the same limits. The rule is calibrated against what the host actually
 * distorts, each task-round measured against the same run at a high
 * dilation (tests/bench/calibrate.py): a round judged on the worst path
 * of any task within 1 % of the shortest round was degraded where every
 * task measured within the noise between two reference runs.
 * Runnable threads are sampled every MON_RUNQ_MS by a thread of the
 * monitor's and, like CPU pressure, recorded.
 *
 * CPU pressure, runnable threads and host CPU are recorded, not judged: the trainers run
 * at SCHED_IDLE behind every packet, yet PSI counts them waiting and
 * /proc/stat counts them busy, so both stay high at any dilation without
 * delaying the network. A worker's event loop acting late is what delays
 * it; timers of known due time measure that directly.
 */
#ifndef EMU_MONITOR_H
#define EMU_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayline.h"

/*
 * Thresholds. Times are scenario time, relative to the shortest measured
 * round of the run's tasks: an error under MON_TIME_TOL of a round is
 * below what the twin claims to predict.
 */
#define MON_TIME_TOL 0.01	/* start skew, compute overrun: each
				 * delays its task's round by as much; the
				 * median task's lateness, the delay
				 * line's mean */
#define MON_TASK_WORST 0.05	/* the worst task's lateness, the delay
				 * line's worst packet */
#define MON_MIN_SEGMENTS 15	/* a message shorter than this is mostly
				 * TCP's first RTT and the shapers' first
				 * frame, which the fluid twin does not model */

#define MON_PASSING 50	/* compute that overran in at most one phase
			 * in this many came now and then (monitor_passing) */

#define MON_STEP_SPORADIC 1.5	/* the step where compute overran in a
				 * minority of phases or a figure is over
				 * its limit by a hair, and nothing else
				 * (elsewhere at least x2) */
#define MON_HAIR 1.2		/* ... by at most this many times it */

#define MON_RUNQ_MS 5	/* how often runnable threads are counted */

struct monitor;
struct dl_live;

/* One sample of the host's counters. */
struct mon_sample {
	uint64_t t_ns;
	uint64_t psi_some_us;		/* 0 when the kernel has no PSI */
	bool has_psi;
	uint64_t cpu_busy, cpu_all;	/* /proc/stat jiffies, all CPUs */
	uint64_t retrans, out_segs;	/* TCP, summed over the namespaces */
	uint64_t dl_accepted, dl_late_ns_sum;	/* the delay line's, if */
	uint64_t dl_late_ns_max;	/* watched; max since the last sample */
	uint64_t dl_starts;		/* times it bound its queues */
	uint64_t dl_late_bins[DL_LATE_BINS];	/* its packets by lateness, */
	bool dl_bins;			/* when known (not through agents) */
	uint64_t runq_sum, runq_n, runq_max;	/* runnable threads, counted
					 * since the last sample */
	uint64_t tg_late_ns_sum, tg_dgrams;	/* the traffic generator's */
	uint64_t tg_late_ns_max;	/* (emu/traffic.h tg_lateness), filled
					 * by the caller; max since the last */
	uint64_t stall_ns;		/* CPU time the host took (emu/awake.h),
					 * all CPUs, so far */
	uint64_t stall_excess_ns;	/* ... beyond the shapers' buckets */
	uint64_t stall_max_ns;		/* the longest since the last sample */
	uint64_t stall_cpus;		/* CPUs kept awake (0: none) */
	uint64_t cpu_spun;		/* jiffies they spent awake, so far:
					 * idle time, not busy */
};

/* What one round did, as the verdict reads it. */
struct mon_round {
	double dilation;
	double wall_s;			/* emulated (real) seconds */
	double psi;			/* fraction of wall_s */
	double cpu;			/* fraction of all CPUs */
	uint64_t retrans, out_segs;
	uint64_t drops;			/* by the shapers (caller's count) */
	int overruns, phases;		/* compute phases: late, all */
	double overrun_max_s;		/* scenario seconds */
	double overrun_stretch;		/* the most a late phase took of
					 * the time it had (> 1), or 0 */
	double skew_max_s;		/* scenario seconds */
	double late_max_s;		/* how late workers' event loops were
					 * (timers, reads), summed along the
					 * worst path of a tree, scenario s:
					 * recorded, not judged (the tasks'
					 * late_frac_* are) */
	double round_min_s;		/* shortest task round, scenario s */
	/* each task's lateness along the way that ended its round, over
	 * its round (fleet.h, late_last_s): median and worst of the tasks */
	double late_frac_median, late_frac_worst;
	uint64_t min_segments;		/* shortest message, TCP segments */
	bool delay_restarted;		/* the delay line restarted: packets
					 * it held were lost or let through */
	uint64_t dl_packets;		/* the delay line accepted */
	double dl_late_mean_s;		/* ... this late after their deadline */
	double dl_late_max_s;		/* ... at worst (scenario seconds) */
	uint64_t dl_late_bins[DL_LATE_BINS];	/* ... by lateness, when */
	bool dl_bins;			/* known (DL_LATE_BINS) */
	uint64_t tg_dgrams;		/* background datagrams sent */
	double tg_late_mean_s;		/* ... this late after their time */
	double tg_late_max_s;		/* ... at worst (scenario seconds) */
	double stall_frac;		/* CPU time the host took away, a share
					 * of each CPU's wall_s on average
					 * (emu/awake.h) */
	double stall_max_s;		/* ... the longest at once (scenario s) */
	double stall_excess;		/* ... beyond what a shaper's bucket
					 * makes up for (LAB_BURST_US), each
					 * stall's, summed over the CPUs, over
					 * wall_s: the share of a round it can
					 * have held a link up, at most */
	double runq_mean;		/* runnable threads, other than the
					 * monitor's own, on average */
	uint64_t runq_max;		/* ... at most */
	bool lossy;			/* the scenario itself lost packets this
					 * round (a cut, a lossy fibre): its
					 * retransmissions and drops are not
					 * the host's, and are not judged */
};

/*
 * monitor_new - watch TCP in the named namespaces ns[0..n-1] (the
 * servers'). NULL and errno on failure.
 */
struct monitor *monitor_new(const char *const *ns, int n);
void monitor_free(struct monitor *m);

/*
 * monitor_watch_delay - read the delay line's counters live (mapped by
 * the caller, who keeps it mapped while m exists) at every sample.
 */
void monitor_watch_delay(struct monitor *m, struct dl_live *live);

/*
 * monitor_read_via - read the TCP counters (and the delay line's, when
 * none is watched here) with read(ctx, s) instead of in the namespaces:
 * a deployment on other hosts, through their nodes' agents. read adds to
 * s's retrans, out_segs and dl_* fields; 0 or -errno.
 */
void monitor_read_via(struct monitor *m,
		      int (*read)(void *ctx, struct mon_sample *s), void *ctx);

/* monitor_sample - read every counter now. 0 or -errno. */
int monitor_sample(struct monitor *m, struct mon_sample *s)
	__attribute__((warn_unused_result));

/* The round between two samples (host part of r; the caller sets
 * r->dilation first, and fills the workers' part: overruns, phases,
 * skew, round_min_s). */
/*
 * monitor_tcp - add RetransSegs and OutSegs of the namespace this thread
 * is in to *retrans and *out. 0 or -errno.
 */
int monitor_tcp(uint64_t *retrans, uint64_t *out)
	__attribute__((warn_unused_result));

void monitor_diff(const struct mon_sample *a, const struct mon_sample *b,
		  struct mon_round *r);

/*
 * monitor_verdict - true when r is faithful. Otherwise why gets
 * "<reason> <figure>" (e.g. "the workers' event loops were 0.120 ms
 * late along a tree (limit 0.050 ms)")
 * and *suggest a dilation likely to be faithful (r->dilation itself when
 * the reason is the scenario's, not the host's: short messages).
 */
bool monitor_verdict(const struct mon_round *r, char *why, size_t len,
		     double *suggest);

/*
 * monitor_passing - whether what makes r degraded came now and then, not
 * from a host too slow at its N: the host's stalls (the CPUs taken away
 * beyond the shapers' buckets), compute that overran in at most one phase
 * in MON_PASSING, one segment TCP resent, one packet a shaper dropped or
 * one the delay line let go late beyond its limit (its bins show no
 * other: dl_bins); every other figure within its limit. Stalls come as
 * often per second at any N, so a raise does not cure them; the others
 * struck one trainer or packet of hundreds. A run again at the same N may
 * well not meet them: what a calibration tries first.
 */
bool monitor_passing(const struct mon_round *r);

/*
 * monitor_next - the dilation `auto` tries after a run at n was degraded:
 * n itself when what degraded it came now and then (passing: every
 * degraded round monitor_passing) and *rerun is false, which it sets;
 * else suggest (the monitor's) when above n; else 0: nothing to try.
 */
double monitor_next(double n, double suggest, bool passing, bool *rerun);

/*
 * Where a sweep's points start under auto: each from the dilation the
 * last point of its own scheduler was faithful at; a scheduler's first
 * point, from the last point's of any (or the sweep's start). Points of
 * one scheduler build the same kind of trees and load the host alike;
 * another scheduler's may not (relays that forward as they receive,
 * aggregation on the way), and one raise for them, carried to every
 * later point, made the other's rounds run N-fold longer for nothing.
 * Every point is still judged at the N it runs, and raised from there.
 */
#define MON_CARRY_MAX 32

struct mon_carry {
	double last;			/* any scheduler's last, or the start */
	double of[MON_CARRY_MAX];	/* scheduler k's last; 0: none yet */
};

void mon_carry_init(struct mon_carry *c, double start);
/* the N scheduler k's next point starts from (k out of range: last) */
double mon_carry_start(const struct mon_carry *c, int k);
/* scheduler k's point was faithful at n */
void mon_carry_found(struct mon_carry *c, int k, double n);

#endif

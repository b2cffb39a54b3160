// SPDX-License-Identifier: MIT
/*
 * The fidelity verdict (emu/monitor.h) on rounds described by hand: each
 * threshold on its own, the first reason named with its figure and limit,
 * and the dilation it suggests.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "emu/monitor.h"

/* A clean round of 10 ms at dilation 50 with messages of 18 segments. */
static struct mon_round clean(void)
{
	return (struct mon_round){
		.dilation = 50, .wall_s = 0.5, .psi = 0.9, .cpu = 1.0,
		.out_segs = 1000, .phases = 10, .round_min_s = 0.010,
		.min_segments = 18,
	};
}

/* What the last judge() was told: the reason, the dilation suggested. */
static char why[256];
static double sug;

static bool judge(const struct mon_round *r)
{
	sug = -1;
	return monitor_verdict(r, why, sizeof(why), &sug);
}

/* PSI and a busy host are recorded, not judged (SCHED_IDLE trainers). */
Test(monitor, busy_host_alone_is_faithful)
{
	struct mon_round r = clean();

	cr_assert(judge(&r), "%s", why);
	cr_assert_eq(why[0], '\0');
}

/*
 * Each lateness against its limit: 1 % of the 10 ms round (an overrun,
 * skew, the delay line's mean; the median task's lateness over its own
 * round, 1 %), 5 % (the delay line's worst packet, the worst task's
 * lateness over its round). Late by `under` (0: not tried) the round is
 * faithful; late by `over` it is not, the reason names the figure and
 * the limit, and the suggested dilation grows with the excess (at least
 * x2; x1.5 for compute that overran in a minority of phases, or a figure
 * at most 1.2x its limit, alone; at most x4).
 */
static const struct lateness {
	const char *what;
	size_t late;		/* offsetof() the figure, a double */
	double under, over;	/* scenario seconds */
	double suggests;
	const char *says;
	int overruns;		/* what else the round saw */
	uint64_t dl_packets;
	double dl_late_mean_s;
} latenesses[] = {
	/* 0.09 ms is under 1 % of 10 ms; 3x the limit in 6 of 10 phases,
	 * the host too slow for the work: x3 */
	{ "overrun", offsetof(struct mon_round, overrun_max_s), 0.00009,
	  0.0003, 150, "compute overran its deadline in 6 of 10 phases, "
	  "worst by 0.300 ms (limit 0.100 ms)", .overruns = 6 },
	/* 3x in 5 of 10 (half: a trainer let wait now and then), and
	 * nothing else: x1.5 */
	{ "overrun now and then", offsetof(struct mon_round, overrun_max_s),
	  0.00009, 0.0003, 75, "compute overran its deadline in 5 of 10 "
	  "phases, worst by 0.300 ms (limit 0.100 ms)", .overruns = 5 },
	/* ... whatever its size */
	{ "one overrun", offsetof(struct mon_round, overrun_max_s), 0.00009,
	  0.003, 75, "compute overran its deadline in 1 of 10 phases, "
	  "worst by 3.000 ms (limit 0.100 ms)", .overruns = 1 },
	/* the median task 3x its limit */
	{ "late loop", offsetof(struct mon_round, late_frac_median), 0.009,
	  0.03, 150, "the workers' event loops delayed the median task's "
	  "round by up to 3.00 % (limit 1 %)", 0, 0, 0 },
	/* the worst task 4.8x: the step is capped at x4 */
	{ "late loop, worst task", offsetof(struct mon_round, late_frac_worst),
	  0.045, 0.24, 200, "the workers' event loops delayed a task's round "
	  "by up to 24.00 % (limit 5 %)", 0, 0, 0 },
	/* 2.5x; packets let go late delay their transfers as much */
	{ "late delay line", offsetof(struct mon_round, dl_late_mean_s),
	  0.00009, 0.00025, 125, "the delay line let packets go 0.250 ms "
	  "late on average (limit 0.100 ms)", .dl_packets = 100 },
	/* one packet 4x the worst's limit */
	{ "late packet", offsetof(struct mon_round, dl_late_max_s), 0.00049,
	  0.002, 200, "the delay line let a packet go 2.000 ms late (limit "
	  "0.500 ms)", .dl_packets = 100, .dl_late_mean_s = 0.00001 },
	/* a generator 2x late on average: its bursts delay as much */
	{ "late generator", offsetof(struct mon_round, tg_late_mean_s),
	  0.00009, 0.0002, 100, "the traffic generator sent its datagrams "
	  "0.200 ms late on average (limit 0.100 ms)", 0, 0, 0 },
	/* one of its datagrams 3x the worst's limit */
	{ "late datagram", offsetof(struct mon_round, tg_late_max_s),
	  0.00049, 0.0015, 150, "the traffic generator sent a datagram "
	  "1.500 ms late (limit 0.500 ms)", 0, 0, 0 },
	/* the CPUs taken away beyond the shapers' buckets 3 % of the time
	 * (a share, 1 % its limit): a link idled as long; a higher N
	 * does not shrink the share, so the least step */
	{ "stall", offsetof(struct mon_round, stall_excess), 0.009, 0.03,
	  100, "the host took the CPUs away for 3.00 % of the time beyond "
	  "what the shapers make up for (limit 1 %)", 0, 0, 0 },
	/* 1.1x, a hair: x1.5 */
	{ "skew", offsetof(struct mon_round, skew_max_s), 0, 0.00011, 75,
	  "tasks started up to 0.110 ms apart (limit 0.100 ms)", 0, 0, 0 },
};

Test(monitor, lateness_beyond_one_percent)
{
	for (size_t i = 0; i < sizeof(latenesses) / sizeof(latenesses[0]);
	     i++) {
		const struct lateness *c = &latenesses[i];
		struct mon_round r = clean();
		double *late = (double *)((char *)&r + c->late);

		r.overruns = c->overruns;
		r.dl_packets = c->dl_packets;
		r.dl_late_mean_s = c->dl_late_mean_s;
		if (c->under > 0) {
			*late = c->under;
			cr_assert(judge(&r), "%s: %s", c->what,
				  why);
		}
		*late = c->over;
		cr_assert_not(judge(&r), "%s", c->what);
		cr_assert(strstr(why, c->says), "%s: %s", c->what, why);
		cr_assert_float_eq(sug, c->suggests, 1e-9, "%s: %g", c->what,
				   sug);
	}
}

/*
 * Compute that overran in most phases: the host too slow for the work,
 * whose host time grows as N. The step is how many times its time the
 * worst phase took (at least x2, at most x4), not its lateness against
 * the round; without that figure, the lateness as before.
 */
Test(monitor, most_phases_overran_step_by_their_stretch)
{
	static const struct {
		double stretch, suggests;
		const char *says;
	} cs[] = {
		{ 1.5, 100, "one took 1.5 times the host time it had" },
		{ 3.0, 150, "one took 3.0 times" },
		{ 9.0, 200, "one took 9.0 times" },
		{ 0, 200, "phases, worst by 3.000 ms (limit 0.100 ms)" },
	};

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		struct mon_round r = clean();

		r.overruns = 6;		/* of 10 */
		r.overrun_max_s = 0.003;	/* 30x its limit */
		r.overrun_stretch = cs[i].stretch;
		cr_assert_not(judge(&r));
		cr_expect(strstr(why, cs[i].says), "%g: %s", cs[i].stretch,
			  why);
		cr_expect_float_eq(sug, cs[i].suggests, 1e-9, "%g: %g",
				   cs[i].stretch, sug);
	}
	/* in half the phases or fewer: the least step, and nothing said */
	{
		struct mon_round r = clean();

		r.overruns = 5;
		r.overrun_max_s = 0.003;
		r.overrun_stretch = 3.0;
		cr_assert_not(judge(&r));
		cr_expect_float_eq(sug, 75, 1e-9, "%g", sug);
		cr_expect_not(strstr(why, "times the host time"), "%s", why);
	}
}

/*
 * Compute that overran in a minority of phases steps x1.5 only when
 * nothing else is more than a hair over its limit: with a loop 1.3x
 * late, the host's stalls, a resent segment or a dropped packet beside
 * it, at least x2.
 */
Test(monitor, a_minority_of_phases_overrun_alone_steps_by_half)
{
	for (int k = 0; k < 5; k++) {
		struct mon_round r = clean();

		r.overruns = 3;			/* of 10 */
		r.overrun_max_s = 0.0005;	/* 5x its limit */
		if (k == 1)
			r.late_frac_median = 0.013;	/* more than a hair */
		else if (k == 2)
			r.stall_excess = 0.02;
		else if (k == 3)
			r.retrans = 1;
		else if (k == 4)
			r.drops = 1;
		cr_assert_not(judge(&r));
		/* (the host's stalls are said first) */
		cr_expect(strstr(why, k == 2 ? "took the CPUs away" :
				 "compute overran its deadline in 3 of 10 "
				 "phases"), "%d: %s", k, why);
		cr_expect_float_eq(sug, k ? 100 : 75, 1e-9, "%d: %g", k, sug);
	}
	/* where the network loses packets, its retransmits are the
	 * scenario's, not the host's */
	{
		struct mon_round r = clean();

		r.overruns = 3;
		r.overrun_max_s = 0.0005;
		r.lossy = true;
		r.retrans = 4;
		cr_assert_not(judge(&r));
		cr_expect_float_eq(sug, 75, 1e-9, "%g", sug);
	}
}

/*
 * What came now and then, and only it, is what a calibration tries again
 * at the same N: the host's stalls, compute that overran in one phase in
 * MON_PASSING, one segment resent or one packet dropped. With anything
 * else over its limit too, or more of it (or the round not degraded at
 * all), a raise is the answer.
 */
Test(monitor, what_came_now_and_then_is_run_again_at_the_same_dilation)
{
	struct mon_round r = clean();

	cr_expect_not(monitor_passing(&r), "a faithful round");
	r.stall_excess = 0.03;
	cr_assert_not(judge(&r));
	cr_expect(monitor_passing(&r), "%s", why);
	/* each other figure just over its limit takes it away */
	r.dl_packets = 100;
	r.dl_late_max_s = 0.00051;
	cr_expect_not(monitor_passing(&r), "a packet late too");
	r.dl_late_max_s = 0.0005;	/* at its limit: within */
	cr_expect(monitor_passing(&r));
	r.late_frac_median = 0.011;
	cr_expect_not(monitor_passing(&r), "late loops too");
	r.late_frac_median = 0;
	r.retrans = 3;
	cr_expect_not(monitor_passing(&r), "retransmissions too");
	r.lossy = true;		/* the scenario's own losses: not judged */
	cr_expect(monitor_passing(&r));
	r.delay_restarted = true;
	cr_expect_not(monitor_passing(&r), "a restarted delay line");
	r = clean();
	r.stall_excess = 0.01;	/* at the limit: faithful */
	cr_expect(judge(&r), "%s", why);
	cr_expect_not(monitor_passing(&r));

	/* compute that overran: in one phase of MON_PASSING, however late */
	r = clean();
	r.phases = MON_PASSING;
	r.overruns = 1;
	r.overrun_max_s = 0.003;	/* 30x its limit */
	cr_assert_not(judge(&r));
	cr_expect(monitor_passing(&r), "%s", why);
	r.overruns = 2;
	cr_expect_not(monitor_passing(&r), "two phases of %d", r.phases);
	r.phases = 2 * MON_PASSING;
	cr_expect(monitor_passing(&r), "two of %d", r.phases);
	r.stall_excess = 0.03;		/* and stalls: both pass */
	cr_expect(monitor_passing(&r));
	r.skew_max_s = 0.00011;
	cr_expect_not(monitor_passing(&r), "tasks started apart too");

	/* one segment resent, one packet dropped: each, not more */
	r = clean();
	r.retrans = 1;
	cr_assert_not(judge(&r));
	cr_expect(monitor_passing(&r), "%s", why);
	r.drops = 1;
	cr_expect(monitor_passing(&r), "one drop, resent once");
	r.drops = 2;
	cr_expect_not(monitor_passing(&r), "two drops");
	r.drops = 0;
	r.retrans = 2;
	cr_expect_not(monitor_passing(&r), "two segments resent");
	r.retrans = 1;
	r.min_segments = MON_MIN_SEGMENTS - 1;
	cr_expect_not(monitor_passing(&r), "short messages: the scenario's");
}

/*
 * One packet the delay line let go late beyond its limit, and no other, is
 * a hiccup of the host's, like one segment resent: run again at the same
 * N. Its bins tell it from many (a bin that reaches past the limit counts
 * whole); without them (a node's, through its agent), or with anything
 * else over its limit, it is a raise. Here the limit is 0.5 ms of
 * scenario time, 25 ms of wall time at N 50: bins 14 and above reach it.
 */
Test(monitor, one_packet_late_beyond_its_limit_is_run_again)
{
	struct mon_round r = clean();

	r.dl_packets = 1000;
	r.dl_bins = true;
	r.dl_late_bins[0] = 600;	/* 1-2 us of wall time */
	r.dl_late_bins[13] = 50;	/* 8.4-16.8 ms: within */
	r.dl_late_max_s = 0.002;	/* 100 ms of wall time: bin 16 */
	r.dl_late_bins[16] = 1;
	cr_assert_not(judge(&r));
	cr_expect(strstr(why, "the delay line let a packet go 2.000 ms late"),
		  "%s", why);
	cr_expect(monitor_passing(&r), "%s", why);
	r.dl_late_bins[14] = 1;		/* 16.8-33.6 ms: may be beyond */
	cr_expect_not(monitor_passing(&r), "two packets may be beyond");
	r.dl_late_bins[14] = 0;
	r.dl_bins = false;
	cr_expect_not(monitor_passing(&r), "no bins: not known to be one");
	r.dl_bins = true;
	r.dl_late_mean_s = 0.00011;	/* its mean over its limit too */
	cr_expect_not(monitor_passing(&r), "late on average");
	r.dl_late_mean_s = 0;
	r.skew_max_s = 0.00011;
	cr_expect_not(monitor_passing(&r), "tasks started apart too");
	r.skew_max_s = 0;
	r.stall_excess = 0.03;		/* and stalls: both came once */
	cr_expect(monitor_passing(&r));
	/* within its limit: nothing to run again for */
	r = clean();
	r.dl_bins = true;
	r.dl_late_max_s = 0.0005;
	r.dl_late_bins[14] = 1;
	cr_expect(judge(&r), "%s", why);
	cr_expect_not(monitor_passing(&r));
}

/* The bins of a round are the delay line's between its two samples. */
Test(monitor, delay_line_bins_between_two_samples)
{
	struct mon_sample a = { .dl_bins = true }, b = { .dl_bins = true };
	struct mon_round r = { .dilation = 50 };

	a.dl_late_bins[3] = 2;
	b.dl_late_bins[3] = 5;
	b.dl_late_bins[DL_LATE_BINS - 1] = 1;
	monitor_diff(&a, &b, &r);
	cr_expect(r.dl_bins);
	cr_expect_eq(r.dl_late_bins[3], 3);
	cr_expect_eq(r.dl_late_bins[DL_LATE_BINS - 1], 1);
	b.dl_bins = false;		/* an agent's: none */
	monitor_diff(&a, &b, &r);
	cr_expect_not(r.dl_bins);
	cr_expect_eq(r.dl_late_bins[3], 0);
	/* a packet's bin: 1024 ns x 2^k and up; under 1024 ns, none */
	cr_expect_eq(dl_late_bin(1023), -1);
	cr_expect_eq(dl_late_bin(1024), 0);
	cr_expect_eq(dl_late_bin(2047), 0);
	cr_expect_eq(dl_late_bin(2048), 1);
	cr_expect_eq(dl_late_bin(100000000), 16);
	cr_expect_eq(dl_late_bin(UINT64_MAX), DL_LATE_BINS - 1);
}

/* What auto tries next: the same N once for what passes, else the raise. */
Test(monitor, auto_runs_again_once_for_what_passes_then_raises)
{
	bool rerun = false;
	double next;

	/* (each call on its own line: the assertions read it twice) */
	next = monitor_next(64, 128, true, &rerun);
	cr_expect_float_eq(next, 64, 1e-12);
	cr_expect(rerun);
	/* it came again: the monitor's raise now */
	next = monitor_next(64, 128, true, &rerun);
	cr_expect_float_eq(next, 128, 1e-12);
	rerun = false;
	/* anything else over its limit: the raise at once, the rerun kept */
	next = monitor_next(64, 256, false, &rerun);
	cr_expect_float_eq(next, 256, 1e-12);
	cr_expect_not(rerun);
	/* nothing above n to try (no dilation cures it): nothing */
	next = monitor_next(64, 64, false, &rerun);
	cr_expect_float_eq(next, 0, 1e-12);
	next = monitor_next(64, 0, false, &rerun);
	cr_expect_float_eq(next, 0, 1e-12);
}

/* Lateness is stored in scenario time: real nanoseconds / dilation. */
Test(monitor, delay_line_lateness_in_scenario_time)
{
	struct mon_sample a = { .t_ns = 0, .dl_accepted = 10,
				.dl_late_ns_sum = 1000 };
	struct mon_sample b = { .t_ns = 1000000000, .dl_accepted = 30,
				.dl_late_ns_sum = 41000,
				.dl_late_ns_max = 50000, .runq_sum = 30,
				.runq_n = 10, .runq_max = 7 };
	struct mon_round r = { .dilation = 50 };

	monitor_diff(&a, &b, &r);
	cr_assert_eq(r.dl_packets, 20);
	cr_assert_float_eq(r.dl_late_mean_s, 2000e-9 / 50, 1e-15);
	cr_assert_float_eq(r.dl_late_max_s, 50000e-9 / 50, 1e-15);
	cr_assert_float_eq(r.runq_mean, 3.0, 1e-12);
	cr_assert_eq(r.runq_max, 7);
}

/* So is the traffic generator's, over the datagrams of the round. */
Test(monitor, generator_lateness_in_scenario_time)
{
	struct mon_sample a = { .t_ns = 0, .tg_dgrams = 100,
				.tg_late_ns_sum = 5000 };
	struct mon_sample b = { .t_ns = 1000000000, .tg_dgrams = 300,
				.tg_late_ns_sum = 805000,
				.tg_late_ns_max = 90000 };
	struct mon_round r = { .dilation = 10 };

	monitor_diff(&a, &b, &r);
	cr_assert_eq(r.tg_dgrams, 200);
	cr_assert_float_eq(r.tg_late_mean_s, 4000e-9 / 10, 1e-15);
	cr_assert_float_eq(r.tg_late_max_s, 90000e-9 / 10, 1e-15);
}

/*
 * The CPUs taken away: a share of each CPU's wall time on average, the
 * excess over the shapers' buckets summed over the CPUs as a share of
 * wall time (so the same at any sampling interval), the longest in
 * scenario time (the worst since the last sample; the others count up).
 */
Test(monitor, stalls_as_shares_of_the_time)
{
	struct mon_sample a = { .t_ns = 0, .stall_ns = 4000000,
				.stall_excess_ns = 1000000,
				.stall_max_ns = 9000000, .stall_cpus = 2 };
	struct mon_sample b = { .t_ns = 2000000000, .stall_ns = 24000000,
				.stall_excess_ns = 6000000,
				.stall_max_ns = 3000000, .stall_cpus = 2 };
	struct mon_round r = { .dilation = 10 };

	monitor_diff(&a, &b, &r);
	cr_assert_float_eq(r.stall_frac, 0.005, 1e-12);
	cr_assert_float_eq(r.stall_excess, 0.0025, 1e-12);
	cr_assert_float_eq(r.stall_max_s, 3000000e-9 / 10, 1e-15);
}

/*
 * The time the threads kept the CPUs awake is idle time: out of the busy
 * share; the kernel counts whole ticks and they their own time exactly,
 * so a round can count less busy than they spun, and the share is 0.
 */
Test(monitor, cpus_kept_awake_are_idle)
{
	struct mon_sample a = { .cpu_busy = 1000, .cpu_all = 4000,
				.cpu_spun = 100 };
	struct mon_sample b = { .t_ns = 1000000000, .cpu_busy = 1150,
				.cpu_all = 4200, .cpu_spun = 200 };
	struct mon_round r = { .dilation = 1 };

	monitor_diff(&a, &b, &r);
	cr_assert_float_eq(r.cpu, 50.0 / 200, 1e-12);
	b.cpu_spun = 260;	/* 10 ticks more than the kernel counted */
	monitor_diff(&a, &b, &r);
	cr_assert_float_eq(r.cpu, 0, 1e-12);
}

Test(monitor, any_drop_or_retransmit)
{
	struct mon_round r = clean();

	r.drops = 1;
	cr_assert_not(judge(&r));
	cr_assert(strstr(why, "the shapers dropped 1 packets"), "%s", why);
	r.drops = 0;
	r.retrans = 2;
	cr_assert_not(judge(&r));
	cr_assert(strstr(why, "TCP retransmitted 2 of 1000 segments"), "%s",
		  why);
}

/* Losses the scenario makes (a cut, a lossy fibre) are not the host's:
 * the round is judged on everything else. */
Test(monitor, a_lossy_round_is_judged_on_the_rest)
{
	struct mon_round r = clean();

	r.lossy = true;
	r.drops = 3;
	r.retrans = 40;
	cr_assert(judge(&r), "%s", why);
	r.late_frac_median = 1;
	cr_assert_not(judge(&r));
	cr_assert(strstr(why, "event loop"), "%s", why);
}

/* Short messages are the scenario's fault: no dilation helps. */
Test(monitor, short_messages_suggest_the_same_dilation)
{
	struct mon_round r = clean();

	r.min_segments = 2;
	cr_assert_not(judge(&r));
	cr_assert(strstr(why, "messages of 2 TCP segments (at least 15"), "%s",
		  why);
	cr_assert_float_eq(sug, 50, 1e-9);
	r.min_segments = 15;
	cr_assert(judge(&r), "%s", why);
}

/* The host's reason comes first: it is the one a dilation can cure. */
Test(monitor, first_reason_wins)
{
	struct mon_round r = clean();

	r.min_segments = 2;
	r.retrans = 5;
	r.overruns = 2;
	r.overrun_max_s = 0.001;
	cr_assert_not(judge(&r));
	cr_assert(strstr(why, "compute overran") && !strstr(why, "TCP"),
		  "%s", why);
	/* 2 of 10 phases: the least step */
	cr_assert_float_eq(sug, 100, 1e-9);
}

/*
 * A delay line that restarted mid-round lost or released the packets it
 * held: degraded whatever else the round did, and no dilation cures it
 * (the suggestion is the same N).
 */
Test(monitor, a_delay_line_restart_degrades_the_round)
{
	struct mon_round r = clean();

	r.delay_restarted = true;
	r.retrans = 3;
	cr_assert_not(judge(&r));
	cr_assert_str_eq(why, "the delay line restarted during the round");
	cr_assert_float_eq(sug, 50, 1e-9);
}

/*
 * A sweep's points start where the last point of their own scheduler was
 * faithful; a scheduler's first, where the last point of any was.
 */
Test(monitor, each_scheduler_carries_its_own_dilation)
{
	struct mon_carry c;

	mon_carry_init(&c, 1);
	cr_expect_float_eq(mon_carry_start(&c, 0), 1, 1e-12);
	mon_carry_found(&c, 0, 142);
	/* the other scheduler's first point: from the last point's */
	cr_expect_float_eq(mon_carry_start(&c, 1), 142, 1e-12);
	mon_carry_found(&c, 1, 568);
	/* its raise stays its own */
	cr_expect_float_eq(mon_carry_start(&c, 0), 142, 1e-12);
	cr_expect_float_eq(mon_carry_start(&c, 1), 568, 1e-12);
	/* a third's first point: the last of any */
	cr_expect_float_eq(mon_carry_start(&c, 2), 568, 1e-12);
	/* a raise within a scheduler carries on within it */
	mon_carry_found(&c, 0, 284);
	cr_expect_float_eq(mon_carry_start(&c, 0), 284, 1e-12);
	cr_expect_float_eq(mon_carry_start(&c, 1), 568, 1e-12);
	/* out of range: the last of any, and nothing written out of it */
	cr_expect_float_eq(mon_carry_start(&c, -1), 284, 1e-12);
	cr_expect_float_eq(mon_carry_start(&c, MON_CARRY_MAX), 284, 1e-12);
	mon_carry_found(&c, MON_CARRY_MAX, 1000);
	cr_expect_float_eq(mon_carry_start(&c, 0), 284, 1e-12);
	cr_expect_float_eq(mon_carry_start(&c, 5), 1000, 1e-12);
}

/*
 * A figure over its limit by a hair (at most 1.2x) steps x1.5, with a
 * minority of phases overrun or alone; more than a hair, or most phases
 * overrun, or the host's stalls beside it, at least x2.
 */
Test(monitor, a_figure_late_by_a_hair_steps_by_half)
{
	static const struct {
		double loop, dl_mean;
		int overruns;
		double stall, suggests;
	} cs[] = {
		{ 0.0103, 0, 0, 0, 75 },	/* the loops 1.03x */
		{ 0, 0.00012, 0, 0, 75 },	/* the delay line 1.2x */
		{ 0.0103, 0, 3, 0, 75 },	/* and 3 of 10 overran */
		{ 0, 0.000125, 0, 0, 100 },	/* 1.25x: x2 */
		{ 0.0103, 0, 6, 0, 100 },	/* and most overran */
		{ 0.0103, 0, 0, 0.02, 100 },	/* and the host's stalls */
	};

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		struct mon_round r = clean();

		r.late_frac_median = cs[i].loop;
		r.dl_late_mean_s = cs[i].dl_mean;
		r.dl_packets = cs[i].dl_mean > 0 ? 100 : 0;
		r.overruns = cs[i].overruns;
		r.overrun_max_s = cs[i].overruns ? 0.00015 : 0; /* 1.5x */
		r.stall_excess = cs[i].stall;
		cr_assert_not(judge(&r), "%zu", i);
		cr_expect_float_eq(sug, cs[i].suggests, 1e-9, "%zu: %g (%s)",
				   i, sug, why);
	}
}

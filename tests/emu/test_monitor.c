// SPDX-License-Identifier: MIT
/*
 * The fidelity verdict (emu/monitor.h) on rounds described by hand: each
 * threshold on its own, the first reason named with its figure and limit,
 * and the dilation it suggests.
 */
#include <criterion/criterion.h>
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

static bool judge(const struct mon_round *r, char *why, double *sug)
{
	*sug = -1;
	return monitor_verdict(r, why, 256, sug);
}

/* PSI and a busy host are recorded, not judged (SCHED_IDLE trainers). */
Test(monitor, busy_host_alone_is_faithful)
{
	struct mon_round r = clean();
	char why[256];
	double sug;

	cr_assert(judge(&r, why, &sug), "%s", why);
	cr_assert_eq(why[0], '\0');
}

Test(monitor, overrun_beyond_one_percent)
{
	struct mon_round r = clean();
	char why[256];
	double sug;

	r.overruns = 1;
	r.overrun_max_s = 0.00009;	/* 0.09 ms: under 1 % of 10 ms */
	cr_assert(judge(&r, why, &sug), "%s", why);
	r.overrun_max_s = 0.0003;	/* 3x the limit: x3 */
	cr_assert_not(judge(&r, why, &sug));
	cr_assert(strstr(why, "compute overran its deadline in 1 of 10 "
			      "phases, worst by 0.300 ms (limit 0.100 ms)"),
		  "%s", why);
	cr_assert_float_eq(sug, 150, 1e-9);
}

Test(monitor, late_loop_beyond_one_percent)
{
	struct mon_round r = clean();
	char why[256];
	double sug;

	r.late_max_s = 0.00009;		/* under 1 % of 10 ms */
	cr_assert(judge(&r, why, &sug), "%s", why);
	r.late_max_s = 0.001;		/* 10x: the step is capped at x4 */
	cr_assert_not(judge(&r, why, &sug));
	cr_assert(strstr(why, "the workers' event loops were 1.000 ms late "
			      "along a tree (limit 0.100 ms)"), "%s", why);
	cr_assert_float_eq(sug, 200, 1e-9);
}

/* A packet the delay line let go late delays its transfer as much. */
Test(monitor, a_late_delay_line_beyond_one_percent)
{
	struct mon_round r = clean();
	char why[256];
	double sug;

	r.dl_packets = 100;
	r.dl_late_mean_s = 0.00001;
	r.dl_late_max_s = 0.00009;	/* under 1 % of 10 ms */
	cr_assert(judge(&r, why, &sug), "%s", why);
	r.dl_late_max_s = 0.00025;	/* 2.5x the limit */
	cr_assert_not(judge(&r, why, &sug));
	cr_assert(strstr(why, "the delay line let a packet go 0.250 ms late "
			      "(limit 0.100 ms)"), "%s", why);
	cr_assert_float_eq(sug, 125, 1e-9);
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

Test(monitor, skew_beyond_one_percent)
{
	struct mon_round r = clean();
	char why[256];
	double sug;

	r.skew_max_s = 0.00011;		/* 1.1x: the step is at least x2 */
	cr_assert_not(judge(&r, why, &sug));
	cr_assert(strstr(why, "tasks started up to 0.110 ms apart (limit "
			      "0.100 ms)"), "%s", why);
	cr_assert_float_eq(sug, 100, 1e-9);
}

Test(monitor, any_drop_or_retransmit)
{
	struct mon_round r = clean();
	char why[256];
	double sug;

	r.drops = 1;
	cr_assert_not(judge(&r, why, &sug));
	cr_assert(strstr(why, "the shapers dropped 1 packets"), "%s", why);
	r.drops = 0;
	r.retrans = 2;
	cr_assert_not(judge(&r, why, &sug));
	cr_assert(strstr(why, "TCP retransmitted 2 of 1000 segments"), "%s",
		  why);
}

/* Losses the scenario makes (a cut, a lossy fibre) are not the host's:
 * the round is judged on everything else. */
Test(monitor, a_lossy_round_is_judged_on_the_rest)
{
	struct mon_round r = clean();
	char why[256];
	double sug;

	r.lossy = true;
	r.drops = 3;
	r.retrans = 40;
	cr_assert(judge(&r, why, &sug), "%s", why);
	r.late_max_s = 1;
	cr_assert_not(judge(&r, why, &sug));
	cr_assert(strstr(why, "event loop"), "%s", why);
}

/* Short messages are the scenario's fault: no dilation helps. */
Test(monitor, short_messages_suggest_the_same_dilation)
{
	struct mon_round r = clean();
	char why[256];
	double sug;

	r.min_segments = 2;
	cr_assert_not(judge(&r, why, &sug));
	cr_assert(strstr(why, "messages of 2 TCP segments (at least 15"), "%s",
		  why);
	cr_assert_float_eq(sug, 50, 1e-9);
	r.min_segments = 15;
	cr_assert(judge(&r, why, &sug), "%s", why);
}

/* The host's reason comes first: it is the one a dilation can cure. */
Test(monitor, first_reason_wins)
{
	struct mon_round r = clean();
	char why[256];
	double sug;

	r.min_segments = 2;
	r.retrans = 5;
	r.overruns = 2;
	r.overrun_max_s = 0.001;
	cr_assert_not(judge(&r, why, &sug));
	cr_assert(strstr(why, "compute overran") && !strstr(why, "TCP"),
		  "%s", why);
	cr_assert_float_eq(sug, 200, 1e-9);
}

/*
 * A delay line that restarted mid-round lost or released the packets it
 * held: degraded whatever else the round did, and no dilation cures it
 * (the suggestion is the same N).
 */
Test(monitor, a_delay_line_restart_degrades_the_round)
{
	struct mon_round r = clean();
	char why[256];
	double sug;

	r.delay_restarted = true;
	r.retrans = 3;
	cr_assert_not(judge(&r, why, &sug));
	cr_assert_str_eq(why, "the delay line restarted during the round");
	cr_assert_float_eq(sug, 50, 1e-9);
}

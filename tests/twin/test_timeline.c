// SPDX-License-Identifier: MIT
/*
 * The twin as the network changes (twin/timeline.h): every kind of event
 * on the teaching ring under both policies. With 'none' only what must
 * move moves (tasks over a cut fibre), everything else keeps its exact
 * lightpaths and routes; with 'full' each epoch is what scheduling that
 * epoch's network from scratch gives. No lightpath ever crosses a cut
 * fibre; a cut that leaves no way blocks its task and no other.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twin/predict.h"
#include "twin/sched.h"
#include "twin/timeline.h"
#include "twin/wire.h"

#include "tests/lib/ring.h"

static int task_index(const struct plan *p, const char *name)
{
	for (int i = 0; i < p->ntasks; i++)
		if (!strcmp(p->tasks[i].task->name, name))
			return i;
	return -1;
}

static bool crosses(const struct plan *p, int fibre)
{
	for (int l = 0; l < p->net->nlp; l++)
		for (int f = 0; f < p->net->lp[l].nfib; f++)
			if (p->net->lp[l].fib[f] == fibre)
				return true;
	return false;
}

/* Tasks present in both epochs either moved or kept their exact way. */
static void only_movers_move(const struct epoch *prev, const struct epoch *e)
{
	for (int i = 0; i < e->plan->ntasks; i++) {
		int j = task_index(prev->plan, e->plan->tasks[i].task->name);

		if (j < 0 || e->moved[i])
			continue;
		cr_assert(plan_task_same(prev->plan, j, e->plan, i),
			  "task %s changed without moving",
			  e->plan->tasks[i].task->name);
		/* kept with the weight it was chosen at */
		cr_assert_float_eq(e->plan->tasks[i].tree_weight,
				   prev->plan->tasks[j].tree_weight, 1e-12);
		cr_assert_gt(e->plan->tasks[i].tree_weight, 0);
	}
}

/* sc followed by mst under pol, each round predicted (fluid). */
static struct timeline *mst_timeline(const struct scenario *sc,
				     enum resched pol)
{
	struct timeline *tl = timeline_new(sc, &sched_mst, pol, predict_round);

	cr_assert_not_null(tl, "%s", resched_name(pol));
	return tl;
}

static const char story[] =
	"events:\n"
	"  - {at_s: 1, cut: {a: A, b: B}}\n"
	"  - {at_s: 1.5, traffic: {from: s1, to: s4, gbps: 5, for_s: 0.25}}\n"
	"  - {at_s: 2, arrive: {name: t9, global: s6, locals: [s3, s4],"
	" parameters: 1000000, bytes_per_parameter: 4, work_core_s: 0.01}}\n"
	"  - {at_s: 3, repair: {a: A, b: B}}\n"
	"  - {at_s: 4, leave: t1}\n";

Test(timeline, none_moves_only_what_must)
{
	struct scenario *sc = ring_with(story);
	struct timeline *tl = mst_timeline(sc, RESCHED_NONE);
	const struct epoch *e;
	int ab = sc->events[0].fibre, crossed = 0;

	/* start, cut, traffic, its end, arrive, repair, leave */
	cr_assert_eq(tl->n, 7);
	cr_assert_eq(tl->e[0].event, -1);
	cr_assert_float_eq(tl->e[1].at_s, 1.0, 0);
	cr_assert_float_eq(tl->e[2].at_s, 1.5, 0);
	cr_assert_float_eq(tl->e[3].at_s, 1.75, 0);
	cr_assert_float_eq(tl->e[4].at_s, 2.0, 0);

	/* the cut: what crossed A-B moves, the rest stays, nothing crosses */
	e = &tl->e[1];
	cr_assert(crosses(tl->e[0].plan, ab), "the ring's plan uses A-B");
	cr_assert_not(crosses(e->plan, ab));
	for (int i = 0; i < e->plan->ntasks; i++) {
		bool was = plan_task_crosses(tl->e[0].plan, i, ab);

		crossed += was;
		cr_assert_eq(e->moved[i], was, "task %s",
			     e->plan->tasks[i].task->name);
		cr_assert_not(e->plan->tasks[i].blocked, "a ring has a way "
			      "round");
	}
	cr_assert_eq(e->nmoved, crossed);
	cr_assert_gt(e->unlit, 0);
	only_movers_move(&tl->e[0], e);

	/* traffic and its end: nothing moves, nothing is lit */
	for (int k = 2; k <= 3; k++) {
		e = &tl->e[k];
		cr_assert_eq(e->nmoved, 0);
		cr_assert_eq(e->lit + e->unlit, 0);
		cr_assert_eq(e->plan->nbg, k == 2);
		only_movers_move(&tl->e[k - 1], e);
	}

	/* the arrival: placed, nothing else touched */
	e = &tl->e[4];
	cr_assert_eq(e->plan->ntasks, 3);
	cr_assert_geq(task_index(e->plan, "t9"), 0);
	cr_assert_not(e->plan->tasks[task_index(e->plan, "t9")].blocked);
	cr_assert_eq(e->nmoved, 0);
	cr_assert_not(crosses(e->plan, ab), "still cut");
	only_movers_move(&tl->e[3], e);

	/* the repair: under 'none' nobody goes back */
	e = &tl->e[5];
	cr_assert_eq(e->nmoved, 0);
	cr_assert_eq(e->lit + e->unlit, 0);
	only_movers_move(&tl->e[4], e);

	/* the departure: t1 is gone, the others keep their way */
	e = &tl->e[6];
	cr_assert_eq(e->plan->ntasks, 2);
	cr_assert_eq(task_index(e->plan, "t1"), -1);
	only_movers_move(&tl->e[5], e);
	timeline_free(tl);
	scenario_free(sc);
}

/* 'full': every epoch is its network scheduled from scratch. */
Test(timeline, full_is_scheduling_from_scratch)
{
	struct scenario *sc = ring_with(story);
	struct timeline *tl = timeline_new(sc, &sched_spff, RESCHED_FULL,
					   predict_round);

	cr_assert_not_null(tl);
	cr_assert_eq(tl->n, 7);
	for (int k = 0; k < tl->n; k++) {
		struct plan *p = sched_plan(tl->e[k].sc, &sched_spff);

		cr_assert_not_null(p);
		cr_assert_eq(p->ntasks, tl->e[k].plan->ntasks);
		for (int i = 0; i < p->ntasks; i++)
			cr_assert(plan_task_same(p, i, tl->e[k].plan, i),
				  "epoch %d task %d", k, i);
		plan_free(p);
	}
	/* after the repair, A-B is lit again by someone */
	cr_assert(crosses(tl->e[5].plan, sc->events[0].fibre));
	timeline_free(tl);
	scenario_free(sc);
}

/*
 * Cut the ring twice around C (B-C and C-D): s4 and s5 on C can reach no
 * one. A task with a model there (both of the ring's) is blocked, saying
 * why; t9, which arrived on A, B and D, goes on.
 */
Test(timeline, a_cut_off_task_is_blocked_alone)
{
	struct scenario *sc = ring_with(
		"events:\n"
		"  - {at_s: 0.5, arrive: {name: t9, global: s1, locals: [s3, s6],"
		" parameters: 1000000, bytes_per_parameter: 4,"
		" work_core_s: 0.01}}\n"
		"  - {at_s: 1, cut: {a: B, b: C}}\n"
		"  - {at_s: 1, cut: {a: C, b: D}}\n");
	struct timeline *tl = mst_timeline(sc, RESCHED_NONE);
	const struct plan *p;
	int off = 0;

	cr_assert_eq(tl->n, 4);
	p = tl->e[3].plan;
	for (int i = 0; i < p->ntasks; i++) {
		const struct scn_task *t = p->tasks[i].task;
		bool on_c = false;

		for (int m = -1; m < t->nlocals; m++) {
			int s = m < 0 ? t->global : t->locals[m];
			int r = sc->nodes[s].attach;

			on_c |= !strcmp(sc->nodes[sc->nodes[r].attach].name,
					"C");
		}
		cr_assert_eq(p->tasks[i].blocked, on_c, "task %s", t->name);
		if (on_c) {
			cr_assert(p->tasks[i].why[0], "no reason given");
			off++;
		}
	}
	cr_assert_gt(off, 0, "the ring's tasks reach C");
	cr_assert_lt(off, p->ntasks, "one task stays away from C");
	timeline_free(tl);
	scenario_free(sc);
}

Test(timeline, policies_by_name)
{
	cr_assert_eq(resched_find("none"), RESCHED_NONE);
	cr_assert_eq(resched_find("full"), RESCHED_FULL);
	cr_assert_eq(resched_find("auto"), RESCHED_AUTO);
	cr_assert_eq(resched_find("some"), -1);
	cr_assert_str_eq(resched_name(RESCHED_FULL), "full");
}

/* Servers sA and sB on routers rA and rB, and t1 (sA -> sB) of %u rounds
 * and no training: the transfers alone. */
#define SERVERS_AB_TASK_T1						\
	"servers:\n"							\
	"  - {name: sA, router: rA, access_gbps: 100, cpu: 1,"		\
	" memory_mib: 64}\n"						\
	"  - {name: sB, router: rB, access_gbps: 100, cpu: 1,"		\
	" memory_mib: 64}\n"						\
	"tasks:\n"							\
	"  - {name: t1, global: sA, locals: [sB], parameters: 1000000,"	\
	" bytes_per_parameter: 4, work_core_s: 0, rounds: %u}\n"

/*
 * auto on a triangle whose short side A-B (100 km) is cut and repaired:
 * meanwhile the task goes round by C (3,100 km). After the repair, moving
 * back saves ~30 ms a round; with a thousand rounds left that beats the
 * round in flight and a lightpath's set-up unless the set-up is dear, and
 * with one round nothing is worth moving for.
 */
static struct scenario *triangle(unsigned rounds, double reconfig_ms)
{
	static char buf[2048];
	struct scn_error err;
	struct scenario *sc;
	int n;

	n = snprintf(buf, sizeof(buf),
		"name: tri\nwavelength_gbps: 100\nwavelengths: 4\n"
		"demand_gbps: 10\nreconfig_ms: %g\nroadms: [A, B, C]\n"
		"fibres: [{a: A, b: B, km: 100}, {a: B, b: C, km: 1500},"
		" {a: A, b: C, km: 1600}]\n"
		"routers: [{name: rA, roadm: A}, {name: rB, roadm: B},"
		" {name: rC, roadm: C}]\n"
		SERVERS_AB_TASK_T1
		"events:\n"
		"  - {at_s: 1, cut: {a: A, b: B}}\n"
		"  - {at_s: 2, repair: {a: A, b: B}}\n", reconfig_ms, rounds);
	sc = scenario_parse(buf, (size_t)n, "tri", &err);
	cr_assert_not_null(sc, "%d:%d: %s", err.line, err.col, err.msg);
	return sc;
}

/*
 * When TCP carries a task on after a cut at cut_s took its data, its trees
 * kept (timeline.h): the retransmission timer, 200 ms plus the old path's
 * round trip, doubles at every expiry until one finds the new paths in
 * (live_s); the message then goes again in slow start, one segment
 * doubling every round trip of the new path.
 */
static double tcp_back(double cut_s, double live_s, double km_old,
		       double km_new, double segments)
{
	double rto = 0.2 + 2 * km_old * FIBRE_S_PER_KM, t = cut_s + rto;

	while (t < live_s) {
		rto *= 2;
		t += rto;
	}
	return t + ceil(log2(segments + 1)) * 2 * km_new * FIBRE_S_PER_KM;
}

/* t1's message on the triangle: 4,000,040 bytes in 1,448-byte segments. */
#define TRI_SEGMENTS 2763.0

Test(timeline, tcp_timeouts_worked_out_by_hand)
{
	/*
	 * 100 km before, 3,100 km after: expiries at 1.20098 s, 1.60294 s,
	 * 2.40686 s, 4.01470 s (200.98 ms, doubled each time); slow start
	 * of 2,763 segments takes 12 round trips of 30.38 ms
	 */
	cr_assert_float_eq(tcp_back(1, 1.1, 100, 3100, TRI_SEGMENTS),
			   1.20098 + 12 * 0.03038, 1e-9);
	cr_assert_float_eq(tcp_back(1, 2.5, 100, 3100, TRI_SEGMENTS),
			   4.01470 + 12 * 0.03038, 1e-9);
}

/*
 * The line sA - rA = rB - sB, A-B 100 km, t1 training for rounds, and the
 * events ("  - {...}\n" each).
 */
static struct scenario *line_of(unsigned rounds, const char *events)
{
	static char buf[2048];
	struct scn_error err;
	struct scenario *sc;
	int n;

	n = snprintf(buf, sizeof(buf),
		"name: line\nwavelength_gbps: 100\nwavelengths: 4\n"
		"demand_gbps: 10\nroadms: [A, B]\n"
		"fibres: [{a: A, b: B, km: 100}]\n"
		"routers: [{name: rA, roadm: A}, {name: rB, roadm: B}]\n"
		SERVERS_AB_TASK_T1
		"events:\n%s", rounds, events);
	sc = scenario_parse(buf, (size_t)n, "line", &err);
	cr_assert_not_null(sc, "%d:%d: %s", err.line, err.col, err.msg);
	return sc;
}

/*
 * A cut with no way round, repaired a second later: t1 waits on the line
 * A-B and carries on over the same paths, not when the fibre is back (2
 * s) but at its connections' first timeout after it (2.40686 s), then in
 * slow start, and runs again the round the cut fell in.
 */
Test(timeline, a_task_left_waiting_carries_on_at_tcps_timeout)
{
	struct scenario *sc = line_of(5000,
				      "  - {at_s: 1, cut: {a: A, b: B}}\n"
				      "  - {at_s: 2, repair: {a: A, b: B}}\n");
	struct timeline *tl = mst_timeline(sc, RESCHED_NONE);
	struct tl_outcome o;
	double r, k0, back;

	cr_assert_eq(tl->n, 3);
	cr_assert(tl->e[1].plan->tasks[0].blocked, "no way round");
	cr_assert_not(tl->e[2].plan->tasks[0].blocked);
	r = tl->e[0].plan->tasks[0].round_s;
	cr_assert_float_eq(tl->e[2].plan->tasks[0].round_s, r, 1e-12);
	cr_assert_gt(5000 * r, 1, "still running at the cut");
	cr_assert_eq(timeline_outcome(tl, &o), 0);
	k0 = floor(1 / r);	/* rounds done at the cut */
	back = tcp_back(1, 2, 100, 100, TRI_SEGMENTS);
	cr_assert_float_eq(back, 2.40686 + 12 * 0.00098, 1e-9);
	cr_assert_float_eq(o.t[0].end_s, back + (5000 - k0) * r, 1e-6,
			   "%.9f vs %.9f", o.t[0].end_s,
			   back + (5000 - k0) * r);
	cr_assert_eq(o.t[0].done, 5000);
	tl_outcome_release(&o);
	timeline_free(tl);
	scenario_free(sc);
}

static bool moves_back(unsigned rounds, double reconfig_ms,
		       enum resched policy)
{
	struct scenario *sc = triangle(rounds, reconfig_ms);
	struct timeline *tl = mst_timeline(sc, policy);
	bool moved;

	cr_assert_eq(tl->n, 3);
	cr_assert(tl->e[1].moved[0], "the cut moves t1");
	cr_assert_gt(tl->e[1].plan->tasks[0].round_s,
		     tl->e[0].plan->tasks[0].round_s + 0.02, "a detour");
	moved = tl->e[2].moved[0];
	if (moved)
		cr_assert_float_eq(tl->e[2].plan->tasks[0].round_s,
				   tl->e[0].plan->tasks[0].round_s, 1e-12,
				   "back on the short side");
	timeline_free(tl);
	scenario_free(sc);
	return moved;
}

Test(timeline, auto_moves_when_it_pays)
{
	cr_assert(moves_back(1000, 0, RESCHED_AUTO));
	cr_assert(moves_back(1000, 100, RESCHED_AUTO));
	cr_assert_not(moves_back(1000, 1e6, RESCHED_AUTO),
		      "a set-up of 1000 s is dearer than the saving");
	cr_assert_not(moves_back(1, 0, RESCHED_AUTO), "no round left");
	cr_assert_not(moves_back(1000, 0, RESCHED_NONE));
	cr_assert(moves_back(1, 1e6, RESCHED_FULL));
}

/*
 * A set-up longer than the time to the next event goes on through it:
 * with 1.5 s per lightpath the detour is lit after the repair at 2 s, which
 * (under none) moves nothing; t1 resumes once the cut's epoch is in, at
 * TCP's first timeout after it, and the repair's epoch comes in after it,
 * not at its own time.
 */
Test(timeline, a_set_up_outlasts_the_next_event)
{
	struct scenario *sc = triangle(5000, 1500);
	struct timeline *tl = mst_timeline(sc, RESCHED_NONE);
	struct tl_outcome o;
	double r0, r1, k0, setup, want, back;

	cr_assert_eq(tl->n, 3);
	cr_assert(tl->e[1].moved[0]);
	cr_assert_not(tl->e[2].moved[0], "none does not move back");
	setup = timeline_setup_s(tl, 1);
	cr_assert_float_eq(setup, 1.5 * tl->e[1].lit, 1e-12);
	cr_assert_gt(1 + setup, 2, "the set-up outlasts the repair");
	cr_assert_float_eq(timeline_live_s(tl, 0), 0, 1e-15);
	cr_assert_float_eq(timeline_live_s(tl, 1), 1 + setup, 1e-12);
	cr_assert_float_eq(timeline_live_s(tl, 2), 1 + setup, 1e-12,
			   "after the epoch before it");
	cr_assert_eq(timeline_outcome(tl, &o), 0);
	r0 = tl->e[0].plan->tasks[0].round_s;
	r1 = tl->e[2].plan->tasks[0].round_s;
	k0 = floor(1 / r0);
	back = tcp_back(1, 1 + setup, 100, 3100, TRI_SEGMENTS);
	want = back + (5000 - k0) * r1;
	cr_assert_float_eq(o.t[0].interrupted_s, (1 / r0 - k0) * r0 + back - 1,
			   1e-9, "%.9f", o.t[0].interrupted_s);
	cr_assert_float_eq(o.t[0].end_s, want, 1e-6, "%.9f vs %.9f",
			   o.t[0].end_s, want);
	cr_assert_eq(o.t[0].done, 5000);
	tl_outcome_release(&o);
	timeline_free(tl);
	scenario_free(sc);
}

/* The shipped events file loads beside the teaching ring and plays. */
Test(timeline, shipped_events_play_on_the_ring)
{
	struct scn_error err;
	struct scenario *sc = scenario_load("scenarios/teaching-ring.yaml",
					    &err);
	struct timeline *tl;

	cr_assert_not_null(sc, "%s", err.msg);
	cr_assert_eq(scenario_load_events(sc,
		"scenarios/events/teaching-ring-cut.yaml", &err), 0,
		"%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
	for (int p = RESCHED_NONE; p <= RESCHED_AUTO; p++) {
		tl = mst_timeline(sc, p);
		cr_assert_eq(tl->n, 7, "traffic starts one and ends one");
		cr_assert_str_eq(epoch_name(tl, &tl->e[2]), "traffic");
		cr_assert_eq(tl->e[2].plan->nbg, 1);
		cr_assert(tl->e[2].plan->bg[0].routed);
		cr_assert_eq(tl->e[3].plan->nbg, 1, "and on at the arrival");
		cr_assert_str_eq(epoch_name(tl, &tl->e[4]), "end");
		cr_assert_eq(tl->e[4].plan->nbg, 0);
		cr_assert_eq(tl->e[tl->n - 1].plan->ntasks, 2);
		timeline_free(tl);
	}
	scenario_free(sc);
}

/*
 * Background traffic on the line sA - rA = rB - sB (100 Gbit/s every
 * link): t1 broadcasts sA -> sB and uploads back, one message each way.
 * Traffic sA -> sB at 20 Gbit/s leaves the broadcast 80 (its cap is below
 * the fair share, 50); at 150 it is cut to the fair share, and both get 50.
 * The upload runs the other way and is not slowed. While traffic flows the
 * plan is the same; when it ends, the round is what it was.
 */
static struct scenario *line_with(const char *events)
{
	return line_of(100, events);
}

/* The line with traffic sA -> sB at gbps from 1 s for for_s. */
static struct scenario *line_with_traffic(double gbps, double for_s)
{
	char ev[256];

	snprintf(ev, sizeof(ev),
		 "  - {at_s: 1, traffic: {from: sA, to: sB, gbps: %.17g,"
		 " for_s: %.17g}}\n", gbps, for_s);
	return line_with(ev);
}

static void slowed_to(double gbps, double share_gbps)
{
	struct scenario *sc = line_with_traffic(gbps, 2);
	struct timeline *tl = mst_timeline(sc, RESCHED_NONE);
	struct wire_msg wm;
	double bits, quiet, busy;

	cr_assert_eq(tl->n, 3);
	cr_assert_float_eq(tl->e[1].at_s, 1, 1e-12);
	cr_assert_float_eq(tl->e[2].at_s, 3, 1e-12);
	cr_assert_eq(tl->e[1].nmoved, 0);
	cr_assert_eq(tl->e[1].plan->nbg, 1);
	cr_assert(tl->e[1].plan->bg[0].routed);
	cr_assert_eq(tl->e[1].plan->bg[0].path.nhops, 3, "acc, lp, acc");
	cr_assert_eq(wire_message(sc, &sc->tasks[0], &wm), 0);
	bits = 8.0 * (double)wm.data_bytes * sc->scale;
	quiet = tl->e[0].plan->tasks[0].bcast_s;
	busy = tl->e[1].plan->tasks[0].bcast_s;
	cr_assert_float_eq(busy - quiet,
			   bits / (share_gbps * 1e9) - bits / 100e9, 1e-12,
			   "broadcast %.9f s quiet, %.9f s with %g Gbit/s",
			   quiet, busy, gbps);
	cr_assert_float_eq(tl->e[1].plan->tasks[0].upload_s,
			   tl->e[0].plan->tasks[0].upload_s, 1e-12);
	cr_assert_eq(tl->e[2].plan->nbg, 0);
	cr_assert_float_eq(tl->e[2].plan->tasks[0].round_s,
			   tl->e[0].plan->tasks[0].round_s, 1e-15);
	timeline_free(tl);
	scenario_free(sc);
}

Test(timeline, background_traffic_shares_the_links)
{
	slowed_to(20, 80);
	slowed_to(150, 50);
}

/* Traffic between routers no lit lightpath joins is not routed, and
 * says why; the round is as if it were not there. */
Test(timeline, traffic_without_a_lit_path_is_not_routed)
{
	struct scenario *sc = line_with(
		"  - {at_s: 1, traffic: {from: rB, to: rA, gbps: 20,"
		" for_s: 1}}\n"
		"  - {at_s: 1.5, cut: {a: A, b: B}}\n");
	struct timeline *tl = mst_timeline(sc, RESCHED_NONE);

	cr_assert_eq(tl->n, 4);
	cr_assert(tl->e[1].plan->bg[0].routed, "rB -> rA over the lightpath");
	cr_assert_eq(tl->e[1].plan->bg[0].path.nhops, 1);
	cr_assert_str_eq(epoch_name(tl, &tl->e[2]), "cut");
	cr_assert_not(tl->e[2].plan->bg[0].routed);
	cr_assert(strstr(tl->e[2].plan->bg[0].why, "no lit lightpaths join "
			 "'rB' and 'rA'"), "%s", tl->e[2].plan->bg[0].why);
	cr_assert_str_eq(epoch_name(tl, &tl->e[3]), "end");
	timeline_free(tl);
	scenario_free(sc);
}

/*
 * The packet predictor follows traffic too: at 150 Gbit/s the traffic
 * always has a frame waiting on the broadcast's links, which serve the
 * two in turn, so the broadcast takes half of them as the fluid model's
 * fair share has it (within a few frames). Traffic too fast to simulate
 * frame by frame is refused, saying which predictor to use.
 */
Test(timeline, the_packet_predictor_follows_traffic)
{
	struct scenario *sc = line_with_traffic(150, 1);
	struct timeline *pkt = timeline_new(sc, &sched_mst, RESCHED_NONE,
					    predict_round_packets);
	struct timeline *fl = mst_timeline(sc, RESCHED_NONE);
	const double frame = 1514 * 8 / 100e9;
	double quiet, busy;

	cr_assert_not_null(pkt);
	cr_assert_str_eq(epoch_name(pkt, &pkt->e[1]), "traffic");
	cr_assert_str_eq(pkt->e[1].plan->predictor, "packet");
	quiet = pkt->e[0].plan->tasks[0].bcast_s;
	busy = pkt->e[1].plan->tasks[0].bcast_s;
	cr_log_info("broadcast: %.9f s alone, %.9f beside the traffic "
		    "(fluid %.9f)", quiet, busy, fl->e[1].plan->tasks[0].bcast_s);
	cr_assert_gt(busy, quiet);
	cr_assert_leq(fabs(busy - fl->e[1].plan->tasks[0].bcast_s),
		      4 * frame);
	cr_assert_float_eq(pkt->e[1].plan->tasks[0].upload_s,
			   pkt->e[0].plan->tasks[0].upload_s, 1e-12,
			   "the upload does not meet it");
	timeline_free(pkt);
	timeline_free(fl);
	scenario_free(sc);

	sc = line_with_traffic(1000000, 1);
	errno = 0;
	cr_assert_null(timeline_new(sc, &sched_mst, RESCHED_NONE,
				    predict_round_packets));
	cr_assert_eq(errno, E2BIG);
	cr_assert(strstr(predict_strerror(E2BIG), "use the fluid predictor"));
	scenario_free(sc);
}

/*
 * A run that plays traffic predicts each round with the traffic's window
 * in it: traffic starting halfway through the broadcast's transfer slows
 * only what is left of it (x s at 100 Gbit/s, the rest at 80).
 */
Test(timeline, traffic_in_a_window_of_the_round)
{
	struct scenario *sc = line_with_traffic(20, 1);
	struct timeline *tl = mst_timeline(sc, RESCHED_NONE);
	struct plan *p;
	struct wire_msg wm;
	double bits, x, quiet, want;

	p = tl->e[1].plan;
	cr_assert_eq(wire_message(sc, &sc->tasks[0], &wm), 0);
	bits = 8.0 * (double)wm.data_bytes * sc->scale;
	x = bits / 100e9 / 2;
	quiet = tl->e[0].plan->tasks[0].bcast_s;
	p->bg[0].on_s = x;
	cr_assert_eq(predict_round(p), 0);
	want = quiet + x + (bits - 100e9 * x) / 80e9 - bits / 100e9;
	cr_assert_float_eq(p->tasks[0].bcast_s, want, 1e-12, "%.9f vs %.9f",
			   p->tasks[0].bcast_s, want);
	/* a window over before the round starts changes nothing */
	p->bg[0].on_s = -2;
	p->bg[0].off_s = -1;
	cr_assert_eq(predict_round(p), 0);
	cr_assert_float_eq(p->tasks[0].round_s, tl->e[0].plan->tasks[0].round_s,
			   1e-15);
	timeline_free(tl);
	scenario_free(sc);
}

/*
 * What the policies come to on the triangle with 5,000 rounds (still
 * running at the cut): under none, t1 loses the round in flight at 1 s,
 * waits 100 ms per lightpath the detour lights and then for TCP's first
 * timeout (its trees are the same), and finishes on the detour
 * — worked out from the epochs' own rounds; auto moves back at the repair
 * and finishes sooner, having been interrupted twice.
 */
Test(timeline, what_the_policies_come_to)
{
	struct scenario *sc = triangle(5000, 100);
	struct timeline *none = mst_timeline(sc, RESCHED_NONE);
	struct timeline *aut = mst_timeline(sc, RESCHED_AUTO);
	struct tl_outcome on, oa;
	double r0, r1, k0, setup, want, back;

	cr_assert_eq(timeline_outcome(none, &on), 0);
	cr_assert_eq(timeline_outcome(aut, &oa), 0);
	r0 = none->e[0].plan->tasks[0].round_s;
	r1 = none->e[1].plan->tasks[0].round_s;
	cr_assert_gt(5000 * r0, 1, "still running at the cut");
	k0 = floor(1 / r0);
	setup = sc->reconfig_s * none->e[1].lit;
	cr_assert_gt(none->e[1].lit, 0);
	back = tcp_back(1, 1 + setup, 100, 3100, TRI_SEGMENTS);
	want = back + (5000 - k0) * r1;
	cr_assert_eq(on.ntasks, 1);
	cr_assert_eq(on.finished, 1);
	cr_assert_eq(on.t[0].done, 5000);
	cr_assert_eq(on.moves, 1);
	cr_assert_float_eq(on.t[0].interrupted_s, (1 / r0 - k0) * r0 + back - 1,
			   1e-9, "%.9f vs %.9f (r0 %.9f, setup %.3f, lit %d)",
			   on.t[0].interrupted_s, (1 / r0 - k0) * r0 + back - 1,
			   r0, setup, none->e[1].lit);
	cr_assert_float_eq(on.t[0].end_s, want, 1e-6, "%.9f vs %.9f",
			   on.t[0].end_s, want);
	cr_assert_float_eq(on.mean_completion_s, want, 1e-6);
	cr_assert_gt(on.bytes_links, 0);
	/* auto goes back: two interruptions, done sooner */
	cr_assert_eq(oa.moves, 2);
	cr_assert_lt(oa.mean_completion_s, on.mean_completion_s);
	tl_outcome_release(&on);
	tl_outcome_release(&oa);
	timeline_free(none);
	timeline_free(aut);
	scenario_free(sc);
}

/*
 * A run that plays a cut as the links see it (nothing re-placed): the
 * lightpath over the cut fibre carries nothing in the cut's window, and
 * a transfer it takes data from waits for TCP. A broadcast cut for 5 ms
 * halfway sends again at its retransmission timeout, 200 ms + its round
 * trip of 0.98 ms after the cut, then in slow start: all 2,763 segments
 * are unsent or on their way (the message takes 0.32 ms to send, its
 * fibre 0.49 ms), 12 round trips, the last of which sends the rest at the
 * link's rate. A cut never repaired leaves the round unable to end, and
 * the predictor says so.
 */
Test(timeline, a_cut_in_the_round_stalls_what_crosses_it)
{
	struct scenario *sc = line_with(
		"  - {at_s: 1, cut: {a: A, b: B}}\n"
		"  - {at_s: 1.005, repair: {a: A, b: B}}\n");
	struct plan *p = sched_plan(sc, &sched_mst);
	struct wire_msg wm;
	double bits, quiet, half;

	cr_assert_not_null(p);
	cr_assert_eq(plan_cut_windows(p, -10), 0, "long before: no effect");
	cr_assert_eq(predict_round(p), 0);
	quiet = p->tasks[0].bcast_s;
	cr_assert_eq(wire_message(sc, &sc->tasks[0], &wm), 0);
	bits = 8.0 * (double)wm.data_bytes * sc->scale;
	half = bits / 100e9 / 2;
	/* the round starts half a transfer before the cut */
	cr_assert_eq(plan_cut_windows(p, 1 - half), 0);
	cr_assert_eq(p->ndown, 1);
	cr_assert_float_eq(p->down[0].off_s - p->down[0].on_s, 0.005, 1e-12);
	cr_assert_eq(predict_round(p), 0);
	cr_assert_eq(wm.segments, 2763);
	cr_assert_float_eq(p->tasks[0].bcast_s, quiet + 0.20098 + 11 * 0.00098,
			   1e-9, "%.9f vs %.9f", p->tasks[0].bcast_s,
			   quiet + 0.20098 + 11 * 0.00098);
	plan_free(p);
	scenario_free(sc);

	sc = line_with("  - {at_s: 1, cut: {a: A, b: B}}\n");
	p = sched_plan(sc, &sched_mst);
	cr_assert_not_null(p);
	cr_assert_eq(plan_cut_windows(p, 1), 0);
	cr_assert(isinf(p->down[0].off_s), "never repaired");
	cr_assert_eq(predict_round(p), -EDEADLK);
	plan_free(p);
	scenario_free(sc);
}

/*
 * mst re-plans the ring's trees from scratch after the A-B cut (full): a
 * task whose trees change is new workers on them, which must connect
 * before its first round there. Its interruption is the part of its round
 * in flight at the cut, the set-up until the epoch is in, and one round
 * trip over the longest transfer path of its new trees; a task that only
 * moves its paths has no such term.
 */
Test(timeline, new_trees_wait_for_their_connections)
{
	struct scenario *sc = ring_with("events:\n"
					"  - {at_s: 0.1, cut: {a: A, b: B}}\n");
	struct timeline *tl = mst_timeline(sc, RESCHED_FULL);
	struct tl_outcome o;
	int changed = 0;

	cr_assert_eq(tl->n, 2);
	cr_assert_eq(timeline_outcome(tl, &o), 0);
	for (int i = 0; i < sc->ntasks; i++) {
		const struct task_plan *x = &tl->e[0].plan->tasks[i];
		const struct task_plan *y = &tl->e[1].plan->tasks[i];
		double r0 = x->round_s, k0 = floor(0.1 / r0), km = 0, want;
		bool same = true;

		cr_assert(tl->e[1].moved[i]);
		for (int m = 1; m < y->nmodels; m++) {
			same = same && x->bcast.parent[m] == y->bcast.parent[m] &&
			       x->up.parent[m] == y->up.parent[m];
			km = fmax(km, fmax(y->bcast.path[m].km,
					   y->up.path[m].km));
		}
		changed += !same;
		want = (0.1 / r0 - k0) * r0 + timeline_setup_s(tl, 1) +
		       (same ? 0 : 2 * km * 4.9e-6);
		cr_assert_float_eq(o.t[i].interrupted_s, want, 1e-9,
				   "task %d: %.9f, want %.9f", i,
				   o.t[i].interrupted_s, want);
	}
	cr_assert_geq(changed, 1, "no tree changed");
	tl_outcome_release(&o);
	timeline_free(tl);
	scenario_free(sc);
}

/*
 * A timeline's work is bounded: the story's full re-scheduling takes some
 * work W (predict_work, deterministic); with the bound at W it is
 * followed, one step under it the twin gives up with ETIME and says what
 * to do, leaving nothing allocated (the sanitised build checks).
 */
Test(timeline, work_past_the_bound_is_refused)
{
	struct scenario *sc = ring_with(story);
	unsigned long long w0 = predict_work, w;
	struct timeline *tl =
		timeline_new(sc, &sched_mst, RESCHED_FULL, predict_round);

	cr_assert_not_null(tl);
	w = predict_work - w0;
	cr_assert_gt(w, 0);
	timeline_free(tl);

	timeline_work_max = w;
	tl = timeline_new(sc, &sched_mst, RESCHED_FULL, predict_round);
	cr_assert_not_null(tl, "at the bound: followed");
	cr_assert_eq(predict_work - w0, 2 * w, "the same work again");
	timeline_free(tl);

	timeline_work_max = w - 1;
	errno = 0;
	tl = timeline_new(sc, &sched_mst, RESCHED_FULL, predict_round);
	cr_assert_null(tl);
	cr_assert_eq(errno, ETIME);
	cr_assert_str_eq(predict_strerror(ETIME),
			 "more work than the twin does to follow one timeline "
			 "(1000000000 steps of its predictors): its epochs "
			 "schedule and predict too many tasks and flows too "
			 "often; use --reschedule none, fewer events, or fewer "
			 "tasks or flows at once");
	timeline_work_max = TIMELINE_WORK_MAX;
	scenario_free(sc);
}

// SPDX-License-Identifier: MIT
/*
 * The round predictor against answers worked out by hand. Two ROADMs 100 km
 * apart (0.49 ms of fibre), access links of 10 Gbit/s, a 1.25 MB model,
 * 2 ms of training on a full core.
 *
 * On the wire (twin/wire.h) the model is a message of 1,250,000 + 40 bytes
 * in ceil(1,250,040 / 1448) = 864 segments, each with 66 bytes of headers:
 * 1,250,040 + 864 x 66 = 1,307,064 bytes, so one transfer alone on a
 * 10 Gbit/s link takes T = 1.0456512 ms; its 864 ACKs (one per
 * segment) are 57,024 bytes on the reverse links.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twin/predict.h"
#include "twin/sched.h"

#define HEAD                                                                 \
	"name: line\nwavelength_gbps: 100\nwavelengths: 4\ndemand_gbps: 1\n" \
	"roadms: [A, B]\nfibres: [{a: A, b: B, km: 100}]\n"                  \
	"routers: [{name: rA, roadm: A}, {name: rB, roadm: B}]\n"

#define T 1.0456512e-3
#define DATA 1307064.0
#define ACKS 57024.0

#define SRV(n, r) \
	"  - {name: " n ", router: " r ", access_gbps: 10, cpu: 1, memory_mib: 1}\n"

#define TASK(locals) \
	"tasks:\n  - {name: t, global: g, locals: " locals ", " \
	"parameters: 312500, bytes_per_parameter: 4, work_core_s: 0.002}\n"

/* Two locals behind rB, g behind rA; relay says how relays forward. */
#define TWO_LOCALS(relay) \
	HEAD relay "servers:\n" SRV("g", "rA") SRV("l1", "rB") SRV("l2", "rB") \
	TASK("[l1, l2]")

static struct plan *predicted(const char *yaml, const struct sched_ops *ops,
			      struct scenario **out)
{
	struct scn_error err;
	struct scenario *sc = scenario_parse(yaml, strlen(yaml), "t", &err);
	struct plan *p;

	cr_assert_not_null(sc, "%d: %s", err.line, err.msg);
	p = sched_plan(sc, ops);
	cr_assert_not_null(p);
	cr_assert_eq(p->blocked, 0);
	cr_assert_eq(predict_round(p), 0);
	*out = sc;
	return p;
}

Test(predict, one_local)
{
	static const char y[] = HEAD "servers:\n" SRV("g", "rA") SRV("l", "rB")
		TASK("[l]");

	for (int i = 0; sched_list[i]; i++) {
		struct scenario *sc;
		struct plan *p = predicted(y, sched_list[i], &sc);
		const struct task_plan *tp = &p->tasks[0];

		cr_assert_float_eq(tp->bcast_s, T + 0.49e-3, 1e-9);
		cr_assert_float_eq(tp->compute_s, 2e-3, 1e-9);
		cr_assert_float_eq(tp->upload_s, T + 0.49e-3, 1e-9);
		cr_assert_float_eq(tp->round_s, 2 * T + 2.98e-3, 1e-9);
		cr_assert_float_eq(p->mean_round_s, 2 * T + 2.98e-3, 1e-9);
		plan_free(p);
		scenario_free(sc);
	}
}

/*
 * Two locals behind rB. SPFF: both copies share g's 10 Gbit/s access
 * link, 5 Gbit/s each: 2T + 0.49 ms down, the same up; g's uplink carries
 * both copies and the ACKs of both uploads. MST: g -> l1 -> l2 (or l2 ->
 * l1); l2 gets the model from l1 over access links only (T), trains for
 * 2 ms, uploads to l1 (T), l1 uploads to g (T + 0.49 ms); g's uplink
 * carries one copy and the ACKs of one upload.
 */
Test(predict, shared_access_link)
{
	static const char y[] = TWO_LOCALS("relay: store\n");
	struct scenario *sc;
	struct plan *p = predicted(y, &sched_spff, &sc);
	const struct task_plan *tp = &p->tasks[0];
	int down = plan_link(p, &(struct hop){ HOP_ACCESS, tp->server[0], 0 });

	cr_assert_float_eq(tp->bcast_s, 2 * T + 0.49e-3, 1e-9);
	cr_assert_float_eq(tp->compute_s, 2e-3, 1e-9);
	cr_assert_float_eq(tp->round_s, 4 * T + 2.98e-3, 1e-9);
	cr_assert_float_eq(p->link_bytes[down], 2 * DATA + 2 * ACKS, 1e-3);
	plan_free(p);
	scenario_free(sc);

	p = predicted(y, &sched_mst, &sc);
	tp = &p->tasks[0];
	/* either local may be the middle node: the two trees tie */
	cr_assert((tp->bcast.parent[1] == 0 && tp->bcast.parent[2] == 1) ||
		  (tp->bcast.parent[2] == 0 && tp->bcast.parent[1] == 2));
	cr_assert_float_eq(tp->bcast_s, 2 * T + 0.49e-3, 1e-9);
	cr_assert_float_eq(tp->compute_s, 2e-3, 1e-9);
	cr_assert_float_eq(tp->upload_s, 2 * T + 0.49e-3, 1e-9);
	cr_assert_float_eq(tp->round_s, 4 * T + 2.98e-3, 1e-9);
	down = plan_link(p, &(struct hop){ HOP_ACCESS, tp->server[0], 0 });
	cr_assert_float_eq(p->link_bytes[down], DATA + ACKS, 1e-3);
	plan_free(p);
	scenario_free(sc);
}

/*
 * The same chain g -> l1 -> l2, pipelined in chunks of C = 100 kB (80 us
 * at 10 Gbit/s). Broadcast: l1 holds what g sent less the 0.49 ms in the
 * fibre and the chunk on its way, so it forwards from 0.49 ms + C in step
 * with g; when g has sent all (T), what l1 holds jumps by the fibre's
 * 0.49 ms worth, which l2's copy takes 0.49 ms to catch up, when the
 * last chunk has arrived at l1: l2 has it C later, at T + 0.49 ms + C.
 * Upload: l1 trained at T + 0.49 ms + 2 ms, waits for l2's first chunk
 * (l2 trained C later, its chunk takes C more), then sends in step with
 * it, and its last chunk C after l2's last: the round is 2T + 0.98 ms +
 * 2 ms + 2C, where relays that store take 4T + 0.98 ms + 2 ms.
 */
Test(predict, pipelined_relays)
{
	static const char y[] =
		TWO_LOCALS("relay: pipelined\nchunk_kb: 100\n");
	const double c = 8e5 / 1e10, p_ = 0.49e-3;
	struct scenario *sc;
	struct plan *p = predicted(y, &sched_mst, &sc);
	const struct task_plan *tp = &p->tasks[0];
	int mid = tp->bcast.parent[1] == 0 ? 1 : 2;

	cr_assert_eq(tp->bcast.parent[3 - mid], mid);
	cr_assert_eq(tp->up.parent[3 - mid], mid);
	cr_assert_eq(tp->up.parent[mid], 0);
	cr_expect_float_eq(tp->bcast_s, T + p_ + c, 1e-9);
	cr_expect_float_eq(tp->compute_s, 2e-3, 1e-9);
	cr_expect_float_eq(tp->upload_s, T + p_ + c, 1e-9);
	cr_expect_float_eq(tp->round_s, 2 * T + 2 * p_ + 2e-3 + 2 * c, 1e-9);
	/* the same bytes cross the same links as when relays store */
	cr_expect_float_eq(p->link_bytes[plan_link(
				   p, &(struct hop){ HOP_ACCESS,
						     tp->server[0], 0 })],
			   DATA + ACKS, 1e-3);
	cr_expect_eq(predict_round_packets(p), -EOPNOTSUPP);
	plan_free(p);
	scenario_free(sc);
}

/*
 * A chunk larger than the model: nothing can be forwarded before the
 * whole model is there, which is what relays that store do.
 */
Test(predict, pipelined_chunk_beyond_model_stores)
{
	static const char y[] =
		TWO_LOCALS("relay: pipelined\nchunk_kb: 5000\n");
	struct scenario *sc;
	struct plan *p = predicted(y, &sched_mst, &sc);
	const struct task_plan *tp = &p->tasks[0];

	cr_expect_float_eq(tp->bcast_s, 2 * T + 0.49e-3, 1e-9);
	cr_expect_float_eq(tp->round_s, 4 * T + 2.98e-3, 1e-9);
	plan_free(p);
	scenario_free(sc);
}

/*
 * Stars have no relays: every shipped scenario's spff plan is predicted
 * exactly the same, pipelined or not, while mst's are (many tasks, relays
 * at every depth, aggregators fed by several children) never slower in
 * the mean, and each task's round ends.
 */
Test(predict, pipelined_stars_unchanged)
{
	static const char *const files[] = { "scenarios/poster-testbed.yaml",
					     "scenarios/nsfnet.yaml",
					     "scenarios/cost239.yaml" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		for (int k = 0; k < 2; k++) {
			const struct sched_ops *ops = k ? &sched_mst :
							  &sched_spff;
			struct scn_error err;
			struct scenario *sc = scenario_load(files[i], &err);
			struct plan *a, *b;

			cr_assert_not_null(sc, "%s", err.msg);
			/* the same trees both ways: none sent as a star */
			sc->never_slower = false;
			a = sched_plan(sc, ops);
			cr_assert_not_null(a);
			cr_assert_eq(predict_round(a), 0);
			sc->relay = SCN_RELAY_PIPELINED;
			b = sched_plan(sc, ops);
			cr_assert_not_null(b);
			cr_assert_eq(predict_round(b), 0, "%s %s", files[i],
				     ops->name);
			for (int t = 0; t < a->ntasks; t++) {
				if (a->tasks[t].blocked)
					continue;
				cr_assert(isfinite(b->tasks[t].round_s));
				if (!k)
					cr_expect_float_eq(
						a->tasks[t].round_s,
						b->tasks[t].round_s, 1e-12,
						"%s task %d", files[i], t);
			}
			if (k)
				cr_expect_leq(b->mean_round_s,
					      a->mean_round_s + 1e-12, "%s",
					      files[i]);
			plan_free(a);
			plan_free(b);
			scenario_free(sc);
		}
	}
}

/*
 * never_slower: three locals behind rB on access links of 1 Gbit/s, g on
 * 10 Gbit/s. A tree of them relays over those slow links (each level a
 * whole transfer of 10T when relays store); the star sends the three
 * copies at once, each at its local's 1 Gbit/s: 10T + 0.49 ms down, the
 * same up, 2 ms of training. mst takes the star and says why; without the
 * setting it keeps its tree.
 */
Test(predict, never_slower_takes_the_star)
{
	static const char head[] = HEAD "never_slower: %s\nrelay: store\n"
		"weights: {stretch: 0}\nservers:\n"
		SRV("g", "rA")
		"  - {name: l1, router: rB, access_gbps: 1, cpu: 1, "
		"memory_mib: 1}\n"
		"  - {name: l2, router: rB, access_gbps: 1, cpu: 1, "
		"memory_mib: 1}\n"
		"  - {name: l3, router: rB, access_gbps: 1, cpu: 1, "
		"memory_mib: 1}\n" TASK("[l1, l2, l3]");

	for (int on = 0; on < 2; on++) {
		char y[1024];
		struct scenario *sc;
		struct plan *p;
		const struct task_plan *tp;
		int depth = 0;

		snprintf(y, sizeof(y), head, on ? "true" : "false");
		p = predicted(y, &sched_mst, &sc);
		tp = &p->tasks[0];
		for (int m = 1; m < tp->nmodels; m++)
			depth += tp->bcast.parent[m] != 0;
		if (!on) {
			cr_expect_null(tp->shape);
			cr_expect_gt(depth, 0, "mst's own tree relays");
			cr_expect_gt(tp->round_s, 20 * T + 2.98e-3 + 1e-6);
		} else {
			cr_assert_str_eq(tp->shape, "star");
			cr_expect_eq(depth, 0);
			cr_expect_lt(tp->star_sum_s, tp->tree_sum_s);
			cr_expect_float_eq(tp->star_sum_s, tp->round_s, 1e-12);
			cr_expect_float_eq(tp->bcast_s, 10 * T + 0.49e-3, 1e-9);
			cr_expect_float_eq(tp->round_s, 20 * T + 2.98e-3, 1e-9);
		}
		plan_free(p);
		scenario_free(sc);
	}
}

/*
 * The poster testbed as shipped, with never_slower: mst's predicted mean
 * round is below spff's, on well under its bytes x fibres, and not every
 * task is a star — with the defaults (pipelined relays, beta 2, stretch
 * 1.1; measured 15.26 ms against 15.34, 0.65 of spff's byte-links), and
 * with the weights of old, relays storing (15.02 ms, 0.54).
 */
struct testbed_case {
	enum scn_relay relay;
	double beta, stretch, bytes_max;
};

ParameterizedTestParameters(predict, never_slower_beats_spff_on_the_testbed)
{
	static struct testbed_case c[] = {
		{ SCN_RELAY_PIPELINED, SCN_BETA, SCN_STRETCH, 0.7 },
		{ SCN_RELAY_STORE, 0.1, 0, 0.6 },
	};

	return cr_make_param_array(struct testbed_case, c, 2);
}

ParameterizedTest(struct testbed_case *c, predict,
		  never_slower_beats_spff_on_the_testbed)
{
	struct scn_error err;
	struct scenario *sc = scenario_load("scenarios/poster-testbed.yaml",
					    &err);
	struct plan *fixed, *flex;
	int stars = 0;

	cr_assert_not_null(sc, "%s", err.msg);
	sc->relay = c->relay;
	sc->weights.beta = c->beta;
	sc->weights.stretch = c->stretch;
	sc->never_slower = true;
	fixed = sched_plan(sc, &sched_spff);
	flex = sched_plan(sc, &sched_mst);
	cr_assert(fixed && flex);
	cr_assert_eq(predict_round(fixed), 0);
	cr_assert_eq(predict_round(flex), 0);
	for (int t = 0; t < flex->ntasks; t++) {
		cr_assert_not_null(flex->tasks[t].shape);
		stars += !strcmp(flex->tasks[t].shape, "star");
	}
	cr_expect_lt(flex->mean_round_s, fixed->mean_round_s);
	cr_expect_leq(flex->bytes_links, c->bytes_max * fixed->bytes_links);
	cr_expect_lt(stars, flex->ntasks, "not every task a star");
	cr_log_info("mst %.3f ms (%d stars), spff %.3f ms; bytes x fibres "
		    "%.3f of spff's", flex->mean_round_s * 1e3, stars,
		    fixed->mean_round_s * 1e3,
		    flex->bytes_links / fixed->bytes_links);
	plan_free(fixed);
	plan_free(flex);
	scenario_free(sc);
}

/*
 * mst's polish on the poster testbed with pipelined relays, beta 2 and
 * stretch 1.1 (the defaults, set here so that the case stays): the greedy
 * check leaves the plan slower than every task a
 * star (469.8 against 460.3 ms summed), the whole-plan flips end below
 * both (457.9), and so below spff's mean; the plan handed back is the
 * one the polish predicted.
 */
Test(predict, polish_ends_below_the_greedy_plan_and_every_star)
{
	struct scn_error err;
	struct scenario *sc = scenario_load("scenarios/poster-testbed.yaml",
					    &err);
	struct plan *fixed, *flex;
	const struct plan_polish *po;
	double sum = 0;
	int reshaped = 0;

	cr_assert_not_null(sc, "%s", err.msg);
	sc->relay = SCN_RELAY_PIPELINED;
	sc->weights.beta = 2;
	sc->weights.stretch = 1.1;
	fixed = sched_plan(sc, &sched_spff);
	flex = sched_plan(sc, &sched_mst);
	cr_assert(fixed && flex);
	po = &flex->polish;
	cr_assert_gt(po->evals, flex->ntasks, "one flip per task at least");
	cr_expect_gt(po->greedy_s, po->stars_s, "the greedy plan is slower");
	cr_expect_lt(po->final_s, po->stars_s);
	cr_assert_eq(predict_round(fixed), 0);
	cr_assert_eq(predict_round(flex), 0);
	for (int t = 0; t < flex->ntasks; t++) {
		sum += flex->tasks[t].round_s;
		reshaped += flex->tasks[t].reshaped;
	}
	cr_expect_float_eq(sum, po->final_s, 1e-12);
	cr_expect_gt(reshaped, 0);
	cr_expect_lt(flex->mean_round_s, fixed->mean_round_s);
	cr_expect_leq(flex->bytes_links, 0.7 * fixed->bytes_links);
	cr_log_info("greedy %.3f, every star %.3f, polished %.3f ms summed "
		    "(%d plans, %d reshaped); mst %.3f ms, spff %.3f ms, "
		    "bytes %.3f of spff's", po->greedy_s * 1e3,
		    po->stars_s * 1e3, po->final_s * 1e3, po->evals, reshaped,
		    flex->mean_round_s * 1e3, fixed->mean_round_s * 1e3,
		    flex->bytes_links / fixed->bytes_links);
	plan_free(fixed);
	plan_free(flex);
	scenario_free(sc);
}

/*
 * fn(path, sc, k, ctx) on every shipped scenario with mst's check on
 * (never_slower), relays that store (k 0) and pipelined (k 1).
 */
static void each_shipped(void (*fn)(const char *path, struct scenario *sc,
				    int k, void *ctx), void *ctx)
{
	glob_t g;

	cr_assert_eq(glob("scenarios/*.yaml", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++)
		for (int k = 0; k < 2; k++) {
			struct scn_error err;
			struct scenario *sc = scenario_load(g.gl_pathv[i],
							    &err);

			cr_assert_not_null(sc, "%s", err.msg);
			sc->never_slower = true;
			sc->relay = k ? SCN_RELAY_PIPELINED : SCN_RELAY_STORE;
			fn(g.gl_pathv[i], sc, k, ctx);
			scenario_free(sc);
		}
	globfree(&g);
}

/* The plan of sc by mst with the polish's plans made lanes at a time,
 * and the predictors' work it counted. */
static struct plan *mst_with_lanes(const struct scenario *sc, int lanes,
				   unsigned long long *work)
{
	unsigned long long w0 = predict_work;
	struct plan *p;

	sched_polish_lanes = lanes;
	p = sched_plan(sc, &sched_mst);
	sched_polish_lanes = 2;
	*work = predict_work - w0;
	return p;
}

static void same_in_turn(const char *path, struct scenario *sc, int k,
			 void *ctx)
{
	int *reshaped = ctx;
	unsigned long long w1, w2;
	struct plan *one = mst_with_lanes(sc, 1, &w1),
		    *two = mst_with_lanes(sc, 2, &w2);

	cr_assert(one && two, "%s", path);
	cr_expect_eq(w1, w2, "%s %d: work %llu, %llu", path, k, w1, w2);
	cr_expect_eq(one->polish.evals, two->polish.evals);
	cr_expect_eq(one->polish.final_s, two->polish.final_s, "%s %d", path,
		     k);
	cr_expect_eq(one->polish.stars_s, two->polish.stars_s);
	cr_expect_eq(one->blocked, two->blocked);
	cr_expect_eq(one->bytes_links, two->bytes_links);
	cr_expect_eq(one->mean_round_s, two->mean_round_s);
	for (int t = 0; t < one->ntasks; t++) {
		const char *a = one->tasks[t].shape, *b = two->tasks[t].shape;

		cr_expect((!a && !b) || (a && b && !strcmp(a, b)),
			  "%s %d: task %d", path, k, t);
		*reshaped += one->tasks[t].reshaped;
	}
	plan_free(one);
	plan_free(two);
}

/*
 * The polish makes two of its plans at once; the plan is the one it makes
 * one at a time, with the same figures and the same work counted (which
 * bounds a timeline's), on every shipped scenario with both relays.
 */
Test(predict, polish_two_at_a_time_is_the_polish_in_turn)
{
	int reshaped = 0;

	each_shipped(same_in_turn, &reshaped);
	/* flips were kept, so plans made ahead were made again */
	cr_expect_gt(reshaped, 0);
}

/*
 * On every shipped scenario, both relays: the polish ends slower than the
 * greedy plan only to send fewer bytes, and then at most at the margin
 * under every task a star; it never blocks more than every task a star,
 * and never ends slower than that where it blocks as many.
 */
static void never_slower(const char *path, struct scenario *sc, int k,
			 void *ctx)
{
	struct plan *p = sched_plan(sc, &sched_mst);
	const struct plan_polish *po;

	(void)ctx;
	cr_assert_not_null(p);
	po = &p->polish;
	cr_expect_gt(po->evals, 0, "%s", path);
	/* past the greedy plan only to send fewer bytes, and then not past
	 * the margin under every star */
	cr_expect_leq(po->final_s,
		      fmax(po->greedy_s, (1 - SCHED_POLISH_MARGIN) *
						 po->stars_s) * (1 + 1e-12),
		      "%s %d", path, k);
	if (po->stars_blocked == p->blocked)
		cr_expect_leq(po->final_s, po->stars_s, "%s %d: %g > %g", path,
			      k, po->final_s, po->stars_s);
	cr_expect_leq(p->blocked, po->stars_blocked, "%s %d", path, k);
	plan_free(p);
}

Test(predict, polish_never_ends_slower_on_shipped_scenarios)
{
	each_shipped(never_slower, NULL);
}

/* Two workers on one 1-core server get half a core each. */
Test(predict, cpu_shared_by_workers)
{
	static const char y[] = HEAD "servers:\n" SRV("g", "rA")
		SRV("l", "rB") SRV("h", "rA")
		"tasks:\n"
		"  - {name: t, global: g, locals: [l], parameters: 312500,\n"
		"     bytes_per_parameter: 4, work_core_s: 0.002}\n"
		"  - {name: u, global: h, locals: [l], parameters: 312500,\n"
		"     bytes_per_parameter: 4, work_core_s: 0.002}\n";
	struct scenario *sc;
	struct plan *p = predicted(y, &sched_spff, &sc);

	cr_assert_float_eq(predict_train_s(p, &p->tasks[0], 1), 4e-3, 1e-12);
	cr_assert_float_eq(p->tasks[0].compute_s, 4e-3, 1e-9);
	plan_free(p);
	scenario_free(sc);
}

/*
 * Aggregating takes agg_core_s per child at the server's share of its
 * cpu. Two locals behind rB, relays that store: spff's star has g fold
 * two updates in after the last arrives (+2a); mst's chain has the
 * middle model fold one in before it sends (+a) and g one (+a). With
 * the middle model's cpu 0.5, its fold takes 2a: +3a. Both predictors,
 * the same increments.
 */
#define AGG_TASK(agg) \
	"tasks:\n  - {name: t, global: g, locals: [l1, l2], " \
	"parameters: 312500, bytes_per_parameter: 4, work_core_s: 0.002, " \
	"agg_core_s: " agg "}\n"
#define AGG_LINE(cpu1, agg) \
	HEAD "relay: store\nnever_slower: false\nweights: {stretch: 0}\n" \
	"servers:\n" SRV("g", "rA") \
	"  - {name: l1, router: rB, access_gbps: 10, cpu: " cpu1 ", " \
	"memory_mib: 1}\n" SRV("l2", "rB") AGG_TASK(agg)

static double agg_adds(const char *y0, const char *y1,
		       const struct sched_ops *ops, double a2)
{
	struct scenario *sc0, *sc1;
	struct plan *p0 = predicted(y0, ops, &sc0);
	struct plan *p1 = predicted(y1, ops, &sc1);
	const struct task_plan *t0 = &p0->tasks[0], *t1 = &p1->tasks[0];
	int mid = t1->up.parent[1] == 0 ? 1 : 2;
	double share = fmin(1, sc1->nodes[t1->server[mid]].cpu);
	/* the middle model's fold: at its share of the cpu */
	double want = ops == &sched_spff ? 2e-3 :
		      1e-3 / share + 1e-3;

	cr_assert_eq(t0->up.parent[1], t1->up.parent[1]);
	cr_expect_float_eq(t1->bcast_s, t0->bcast_s, 1e-12);
	cr_expect_float_eq(t1->compute_s, t0->compute_s, 1e-12);
	cr_expect_float_eq(t1->round_s - t0->round_s, want, 1e-9,
			   "%s: %.6f ms more, not %.6f", ops->name,
			   (t1->round_s - t0->round_s) * 1e3, want * 1e3);
	cr_expect_float_eq(predict_agg_tree_s(p1, t1, 0),
			   ops == &sched_spff ? a2 : 1e-3, 1e-12);
	cr_assert_eq(predict_round_packets(p0), 0);
	cr_assert_eq(predict_round_packets(p1), 0);
	cr_expect_float_eq(t1->round_s - t0->round_s, want, 1e-9,
			   "%s, packets: %.6f ms more, not %.6f", ops->name,
			   (t1->round_s - t0->round_s) * 1e3, want * 1e3);
	plan_free(p0);
	plan_free(p1);
	scenario_free(sc0);
	scenario_free(sc1);
	return want;
}

Test(predict, aggregating_takes_its_cpu_time)
{
	agg_adds(AGG_LINE("1", "0"), AGG_LINE("1", "0.001"), &sched_spff,
		 2e-3);
	agg_adds(AGG_LINE("1", "0"), AGG_LINE("1", "0.001"), &sched_mst, 0);
	/* l1 is the middle model: its fold takes twice as long */
	cr_expect_float_eq(agg_adds(AGG_LINE("0.5", "0"),
				    AGG_LINE("0.5", "0.001"), &sched_mst, 0),
			   3e-3, 1e-12);
}

/*
 * Pipelined, an aggregator makes its sum no faster than its cpu folds
 * the children in: with 10 ms per child, slower than the 10 Gbit/s
 * links (1.3 MB in 1.05 ms), the middle model's upload takes the 10 ms
 * of its fold (its bits at that rate), then the propagation, then g
 * folds it in for 10 ms more: the upload phase is 20 ms and the way
 * (0.49 ms) and no more than a transfer's time beyond.
 */
Test(predict, pipelined_aggregation_goes_at_the_cpus_pace)
{
	static const char y[] =
		HEAD "relay: pipelined\nchunk_kb: 100\nnever_slower: false\n"
		"weights: {stretch: 0}\n"
		"servers:\n"
		SRV("g", "rA") SRV("l1", "rB") SRV("l2", "rB")
		AGG_TASK("0.01");
	const double p_ = 0.49e-3;
	struct scenario *sc;
	struct plan *p = predicted(y, &sched_mst, &sc);
	const struct task_plan *tp = &p->tasks[0];

	cr_assert_neq(tp->up.parent[1], tp->up.parent[2], "a chain");
	cr_expect_geq(tp->upload_s, 20e-3 + p_ - 1e-9, "%.6f ms",
		      tp->upload_s * 1e3);
	cr_expect_leq(tp->upload_s, 20e-3 + p_ + T, "%.6f ms",
		      tp->upload_s * 1e3);
	plan_free(p);
	scenario_free(sc);
}

/*
 * A long round: the teaching ring with 3000 s of training, so the uploads
 * run at t ~ 3000 s, where a double's resolution is ~5e-13 s. The
 * predictor waited there for a transfer's last bits to take a time the
 * clock could not add, and never ended. Now it ends, and the network
 * phases are those of the ring's ordinary round.
 */
Test(predict, long_rounds_end, .timeout = 20)
{
	FILE *f = fopen("scenarios/teaching-ring.yaml", "r");
	char buf[16384], *w;
	size_t n;
	struct scn_error err;

	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (int i = 0; sched_list[i]; i++) {
		struct scenario *sc, *ref;
		struct plan *p, *q;
		char *y = strdup(buf);

		cr_assert_not_null(y);
		while ((w = strstr(y, "work_core_s: 0.02\n")))
			memcpy(w, "work_core_s: 3000\n", 18);
		sc = scenario_parse(y, strlen(y), "ring", &err);
		ref = scenario_parse(buf, n, "ring", &err);
		cr_assert(sc && ref, "%d: %s", err.line, err.msg);
		p = sched_plan(sc, sched_list[i]);
		q = sched_plan(ref, sched_list[i]);
		cr_assert(p && q);
		cr_assert_eq(predict_round(p), 0);
		cr_assert_eq(predict_round(q), 0);
		for (int t = 0; t < p->ntasks; t++) {
			cr_assert_float_eq(p->tasks[t].bcast_s,
					   q->tasks[t].bcast_s, 1e-9);
			cr_assert_gt(p->tasks[t].compute_s, 3000);
			cr_assert_float_eq(p->tasks[t].upload_s,
					   q->tasks[t].upload_s, 1e-6);
		}
		plan_free(p);
		plan_free(q);
		scenario_free(sc);
		scenario_free(ref);
		free(y);
	}
}

/*
 * The packet-level predictor on one_local's line, by hand. The message is
 * 863 full frames of 1514 bytes (12,112 bits: 1.2112 us at 10 Gbit/s,
 * 0.12112 us at 100 Gbit/s) and a last one of 1,250,040 - 863 x 1448 =
 * 416 bytes + 66 = 482 bytes (3,856 bits: 0.3856 us, 0.03856 us). The
 * first access link sends everything by T. The last full frame leaves it
 * at T - 0.3856 us, crosses the lightpath (0.12112 us) and the fibre
 * (0.49 ms) and takes the far access link until T + 0.94672 us + 0.49 ms;
 * the last frame, there 0.03856 us + 0.49 ms after T, waits for it and
 * is received 0.3856 us later: T + 0.49 ms + 1.33232 us.
 */
Test(predict, packets_one_local)
{
	static const char y[] = HEAD "servers:\n" SRV("g", "rA") SRV("l", "rB")
		TASK("[l]");
	const double d = T + 0.49e-3 + 1.33232e-6;

	for (int i = 0; sched_list[i]; i++) {
		struct scn_error err;
		struct scenario *sc = scenario_parse(y, strlen(y), "t", &err);
		struct plan *p;
		const struct task_plan *tp;

		cr_assert_not_null(sc);
		p = sched_plan(sc, sched_list[i]);
		cr_assert_not_null(p);
		cr_assert_eq(predict_round_packets(p), 0);
		tp = &p->tasks[0];
		cr_assert_float_eq(tp->bcast_s, d, 1e-12, "%.12f", tp->bcast_s);
		cr_assert_float_eq(tp->compute_s, 2e-3, 1e-12);
		cr_assert_float_eq(tp->upload_s, d, 1e-12, "%.12f",
				   tp->upload_s);
		cr_assert_float_eq(p->mean_round_s, 2 * d + 2e-3, 1e-12);
		/* the bytes on the links are the fluid model's */
		cr_assert_float_eq(p->link_bytes[plan_link(p, &tp->bcast.path[1]
							   .hops[0])],
				   DATA + ACKS, 1e-3);
		plan_free(p);
		scenario_free(sc);
	}
}

/*
 * Two copies leave g's access link together and are served a frame each
 * in turn: the last ends a few frames' time after 2T + 0.49 ms, which is
 * what the fluid model says for both.
 */
Test(predict, packets_share_a_link_in_turn)
{
	static const char y[] = TWO_LOCALS("");
	struct scn_error err;
	struct scenario *sc = scenario_parse(y, strlen(y), "t", &err);
	struct plan *p = sched_plan(sc, &sched_spff), *q;
	const struct task_plan *tp;

	cr_assert_not_null(p);
	cr_assert_eq(predict_round_packets(p), 0);
	tp = &p->tasks[0];
	cr_assert_geq(tp->bcast_s, 2 * T + 0.49e-3);
	cr_assert_leq(tp->bcast_s, 2 * T + 0.49e-3 + 4e-6, "%.9f",
		      tp->bcast_s);
	/*
	 * Both locals have the model at about 2T, so both upload at about
	 * 2T + 2 ms, sharing g's link again: 4T + 2.98 ms, as fluid. (In
	 * turn-less FIFO order one would upload alone from T + 2 ms and the
	 * round would end about T sooner.)
	 */
	cr_assert_geq(tp->round_s, 4 * T + 2.98e-3);
	cr_assert_leq(tp->round_s, 4 * T + 2.98e-3 + 8e-6, "%.9f",
		      tp->round_s);
	q = sched_plan(sc, &sched_spff);
	cr_assert_eq(predict_round(q), 0);
	cr_assert_float_eq(q->tasks[0].bcast_s, 2 * T + 0.49e-3, 1e-9);
	plan_free(q);
	plan_free(p);
	scenario_free(sc);
}

/*
 * Background traffic in the packet model: what the generator sends, a
 * full-size datagram every gap at its rate, served in turn with the
 * transfers. `traffic` is the scenario's events: list; cuts and traffic
 * play in the round that starts at 0.
 */
static struct plan *packets_with(const char *servers, const char *task,
				 const char *events, bool packets,
				 struct scenario **out)
{
	char y[2048];
	struct scn_error err;
	struct scenario *sc;
	struct plan *p;

	snprintf(y, sizeof(y), HEAD "servers:\n%s%s%s", servers, task,
		 events);
	sc = scenario_parse(y, strlen(y), "t", &err);
	cr_assert_not_null(sc, "%d:%d: %s", err.line, err.col, err.msg);
	cr_assert_eq(scenario_traffic_all(sc), 0);
	p = sched_plan(sc, &sched_spff);
	cr_assert_not_null(p);
	cr_assert_eq(plan_traffic_windows(p, 0), 0);
	cr_assert_eq(plan_cut_windows(p, 0), 0);
	cr_assert_eq(packets ? predict_round_packets(p) : predict_round(p), 0);
	*out = sc;
	return p;
}

static double bcast_with(const char *task, const char *events, bool packets)
{
	struct scenario *sc;
	struct plan *p = packets_with(SRV("g", "rA") SRV("l", "rB"), task,
				      events, packets, &sc);
	double b = p->tasks[0].bcast_s;

	cr_assert(p->predicted);
	plan_free(p);
	scenario_free(sc);
	return b;
}

#define HALF_G_TO_L \
	"events:\n  - {at_s: 0, traffic: {from: g, to: l, gbps: 5, " \
	"for_s: 10}}\n"

/*
 * A message of 864 frames beside traffic at half its 10 Gbit/s access
 * link: the traffic queues whenever the message does and the link serves
 * them in turn, so the copy gets half the link, as the fluid model's
 * max-min sharing has it (2T + 0.49 ms), within a few frames; the upload,
 * which the traffic does not meet, is as alone.
 */
Test(predict, packets_share_a_link_with_background_traffic)
{
	double alone = bcast_with(TASK("[l]"), "", true);
	double fluid = bcast_with(TASK("[l]"), HALF_G_TO_L, false);
	double pkt = bcast_with(TASK("[l]"), HALF_G_TO_L, true);
	const double frame = 1514 * 8 / 10e9;
	struct scenario *sc;
	struct plan *p;

	cr_log_info("alone %.9f, fluid %.9f, packets %.9f", alone, fluid, pkt);
	cr_assert_float_eq(fluid, 2 * T + 0.49e-3, 1e-9);
	cr_assert_gt(pkt, alone + 0.9 * T);
	cr_assert_leq(fabs(pkt - fluid), 4 * frame, "%.9f against %.9f", pkt,
		      fluid);
	p = packets_with(SRV("g", "rA") SRV("l", "rB"), TASK("[l]"),
			 HALF_G_TO_L, true, &sc);
	cr_assert_float_eq(p->tasks[0].upload_s, alone, 1e-12);
	cr_assert_str_eq(p->predictor, "packet");
	plan_free(p);
	scenario_free(sc);
}

/*
 * A message of three frames beside the same traffic: where the fluid
 * model has it take half the link from start to end, the link sends its
 * frames in the traffic's gaps, so it is slowed, by less: the gap the
 * fluid model leaves to measurement on short messages.
 */
Test(predict, packets_of_a_short_message_take_the_traffics_gaps)
{
	static const char task[] =
		"tasks:\n  - {name: t, global: g, locals: [l], "
		"parameters: 1000, bytes_per_parameter: 4, "
		"work_core_s: 0.002}\n";
	double alone = bcast_with(task, "", true);
	double fluid_alone = bcast_with(task, "", false);
	double fluid = bcast_with(task, HALF_G_TO_L, false);
	double pkt = bcast_with(task, HALF_G_TO_L, true);

	cr_log_info("alone %.9f (fluid %.9f), with the traffic: fluid %.9f, "
		    "packets %.9f", alone, fluid_alone, fluid, pkt);
	cr_assert_gt(pkt, alone);
	cr_assert_lt(pkt - alone, fluid - fluid_alone);
	/* the same plan, the same prediction */
	cr_assert_eq(pkt, bcast_with(task, HALF_G_TO_L, true));
}

/* Traffic whose window opens after the round changes nothing. */
Test(predict, packets_after_the_traffic_are_as_alone)
{
	static const char later[] =
		"events:\n  - {at_s: 1, traffic: {from: g, to: l, gbps: 5, "
		"for_s: 10}}\n";

	cr_assert_eq(bcast_with(TASK("[l]"), later, true),
		     bcast_with(TASK("[l]"), "", true));
}

/*
 * A cut of A-B from 0.5 ms to 1.5 ms of the round: the broadcast, halfway
 * through its 10 Gbit/s access link, loses what crosses the lightpath and
 * sends again at TCP's retransmission timeout, 200 ms + 0.98 ms after the
 * cut, then in slow start, as the fluid model has it (within a round trip:
 * the fluid model counts what is on its way at its rate, the packets are
 * counted one by one); a cut never repaired cannot end the round.
 */
Test(predict, packets_wait_out_a_cut)
{
	static const char cut[] =
		"events:\n  - {at_s: 0.0005, cut: {a: A, b: B}}\n"
		"  - {at_s: 0.0015, repair: {a: A, b: B}}\n";
	static const char never[] =
		"events:\n  - {at_s: 0.0005, cut: {a: A, b: B}}\n";
	double alone = bcast_with(TASK("[l]"), "", true);
	double fluid = bcast_with(TASK("[l]"), cut, false);
	double pkt = bcast_with(TASK("[l]"), cut, true);
	char y[2048];
	struct scn_error err;
	struct scenario *sc;
	struct plan *p;

	cr_log_info("alone %.9f, cut 1 ms: fluid %.9f, packets %.9f", alone,
		    fluid, pkt);
	cr_assert_geq(pkt, 0.5e-3 + 0.20098);
	cr_assert_geq(fluid, 0.5e-3 + 0.20098);
	cr_assert_leq(pkt, alone + 0.20098 + 12 * 0.98e-3, "%.9f", pkt);
	cr_assert_leq(fabs(pkt - fluid), 0.98e-3 + 4e-6, "%.9f against %.9f",
		      pkt, fluid);
	snprintf(y, sizeof(y), HEAD "servers:\n" SRV("g", "rA") SRV("l", "rB")
		 TASK("[l]") "%s", never);
	sc = scenario_parse(y, strlen(y), "t", &err);
	cr_assert_not_null(sc);
	p = sched_plan(sc, &sched_spff);
	cr_assert_not_null(p);
	cr_assert_eq(plan_cut_windows(p, 0), 0);
	cr_assert_eq(predict_round_packets(p), -EDEADLK);
	plan_free(p);
	scenario_free(sc);
}

/*
 * A transfer over no link (a plan no scheduler makes: here one cut short
 * by hand) stands still: the round cannot end (-EDEADLK), and the
 * prediction says so instead of spinning.
 */
Test(predict, a_transfer_over_no_link_is_refused)
{
	static const char y[] = HEAD "servers:\n" SRV("g", "rA") SRV("l", "rB")
		TASK("[l]");
	struct scenario *sc;
	struct plan *p = predicted(y, &sched_spff, &sc);
	int err;

	plan_prediction_forget(p);
	p->tasks[0].bcast.path[1].nhops = 0;
	err = predict_round(p);
	cr_expect_eq(err, -EDEADLK, "%d", err);
	p->tasks[0].bcast.path[1].nhops = 3;
	plan_free(p);
	scenario_free(sc);
}

/*
 * The packet model's work is bounded before it starts: NSFNET's tasks
 * with a trillion parameters each (about 10^12 segments x links) are
 * refused at once with what to use instead, while the same network at
 * its shipped size is simulated.
 */
Test(predict, packets_refuse_more_work_than_their_bound, .timeout = 20)
{
	struct scn_error err;
	struct scenario *sc = scenario_load("scenarios/nsfnet.yaml", &err);
	struct plan *p;

	cr_assert_not_null(sc, "%s", err.msg);
	p = sched_plan(sc, &sched_spff);
	cr_assert_not_null(p);
	cr_assert_eq(predict_round_packets(p), 0);
	plan_free(p);
	for (int t = 0; t < sc->ntasks; t++)
		sc->tasks[t].parameters = 1000000000000ull;
	p = sched_plan(sc, &sched_spff);
	cr_assert_not_null(p);
	cr_expect_eq(predict_round_packets(p), -EFBIG);
	cr_expect(strstr(predict_strerror(-EFBIG), "use the fluid predictor"));
	plan_free(p);
	scenario_free(sc);
}

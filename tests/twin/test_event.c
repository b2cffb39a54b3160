// SPDX-License-Identifier: MIT
/*
 * A scenario's events (twin/event.c): every kind read and resolved, the
 * list put in time order, each refusal at its line with the words a user
 * needs, the story checked in time order (a repair before its cut, a
 * departure of a task that is not there), events from a file of their
 * own, and events written back exactly.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "twin/scenario.h"

/* Lines 1-13; events start at line 15 ("events:" is line 14). */
#define NET                                                                   \
	"name: ev\n"							      \
	"wavelength_gbps: 100\nwavelengths: 4\ndemand_gbps: 10\n"	      \
	"roadms: [A, B, C]\n"						      \
	"fibres: [{a: A, b: B, km: 10}, {a: B, b: C, km: 10},"		      \
	" {a: A, b: C, km: 30}]\n"					      \
	"routers: [{name: rA, roadm: A}, {name: rB, roadm: B},"		      \
	" {name: rC, roadm: C}]\n"					      \
	"servers:\n"							      \
	"  - {name: sA, router: rA, access_gbps: 100, cpu: 1, memory_mib: 64}\n" \
	"  - {name: sB, router: rB, access_gbps: 100, cpu: 1, memory_mib: 64}\n" \
	"  - {name: sC, router: rC, access_gbps: 100, cpu: 1, memory_mib: 64}\n" \
	"tasks:\n"							      \
	"  - {name: t1, global: sA, locals: [sB, sC], parameters: 1000,"     \
	" bytes_per_parameter: 4, work_core_s: 0}\n"			      \
	"events:\n"

#define ARRIVE_T2                                                             \
	"arrive: {name: t2, global: sC, locals: [sA], parameters: 1000,"     \
	" bytes_per_parameter: 4, work_core_s: 0}"

static const char story[] = NET
	"  - {at_s: 2, repair: {a: B, b: A}}\n"			/* 15 */
	"  - {at_s: 1, cut: {a: A, b: B}}\n"			/* 16 */
	"  - {at_s: 3, " ARRIVE_T2 "}\n"			/* 17 */
	"  - {at_s: 4, leave: t2}\n"				/* 18 */
	"  - {at_s: 0.5, traffic: {from: rA, to: sC, gbps: 5, for_s: 2}}\n"
	"  - {at_s: 4, leave: t1}\n";				/* 20 */

static struct scenario *parse(const char *yaml, struct scn_error *err)
{
	return scenario_parse(yaml, strlen(yaml), "ev.yaml", err);
}

Test(event, every_kind_in_time_order)
{
	struct scn_error err;
	struct scenario *sc = parse(story, &err);
	const struct scn_event *e;

	cr_assert_not_null(sc, "%d:%d: %s", err.line, err.col, err.msg);
	cr_assert_eq(sc->nevents, 6);
	e = sc->events;
	cr_assert_eq(e[0].kind, SCN_EV_TRAFFIC);
	cr_assert_float_eq(e[0].at_s, 0.5, 0);
	cr_assert_str_eq(sc->nodes[e[0].from].name, "rA");
	cr_assert_str_eq(sc->nodes[e[0].to].name, "sC");
	cr_assert_float_eq(e[0].gbps, 5, 0);
	cr_assert_float_eq(e[0].for_s, 2, 0);
	cr_assert_eq(e[1].kind, SCN_EV_CUT);
	cr_assert_eq(e[1].fibre, 0, "the fibre A-B");
	cr_assert_eq(e[2].kind, SCN_EV_REPAIR);
	cr_assert_eq(e[2].fibre, 0, "B-A is the same fibre");
	cr_assert_eq(e[3].kind, SCN_EV_ARRIVE);
	cr_assert_str_eq(e[3].task.name, "t2");
	cr_assert_eq(e[3].task.nlocals, 1);
	cr_assert_str_eq(sc->nodes[e[3].task.global].name, "sC");
	/* ties keep file order: t2 (line 18) leaves before t1 (line 20) */
	cr_assert_eq(e[4].kind, SCN_EV_LEAVE);
	cr_assert_eq(e[4].leave, sc->ntasks + 3, "t2 is the arrival event 3");
	cr_assert_eq(e[5].kind, SCN_EV_LEAVE);
	cr_assert_eq(e[5].leave, 0, "t1 is task 0");
	cr_assert_eq(e[4].line, 18);
	cr_assert_eq(e[5].line, 20);
	/* the static scenario is untouched: one task */
	cr_assert_eq(sc->ntasks, 1);
	scenario_free(sc);
}

struct bad_event {
	const char *events;	/* from line 15 on */
	int line;
	const char *fragment;
};

static const struct bad_event bad[] = {
	{ "  - {at_s: -1, cut: {a: A, b: B}}\n", 15,
	  "'at_s' must be >= 0, got '-1'" },
	{ "  - {at_s: 2e6, cut: {a: A, b: B}}\n", 15, "'at_s' must be <=" },
	{ "  - {at_s: nan, cut: {a: A, b: B}}\n", 15, "at_s" },
	{ "  - {cut: {a: A, b: B}}\n", 15, "at_s" },
	{ "  - {at_s: 1}\n", 15, "an event needs one of 'cut', 'repair'" },
	{ "  - {at_s: 1, cut: {a: A, b: B}, leave: t1}\n", 15,
	  "this one has both 'cut' and 'leave'" },
	{ "  - {at_s: 1, explode: {a: A}}\n", 15, "unknown key 'explode'" },
	{ "  - {at_s: 1, cut: {a: A, b: Q}}\n", 15,
	  "'b' names unknown node 'Q'" },
	{ "  - {at_s: 1, cut: {a: A, b: rB}}\n", 15,
	  "'b' must name a ROADM, but 'rB' is a router" },
	{ "  - {at_s: 1, cut: {a: A}}\n", 15, "'b'" },
	{ "  - {at_s: 1, cut: [A, B]}\n", 15, "must be a mapping" },
	{ "  - {at_s: 1, repair: {a: A, b: B}}\n", 15,
	  "repair at 1 s: the fibre A-B is not cut then" },
	{ "  - {at_s: 1, cut: {a: A, b: B}}\n"
	  "  - {at_s: 2, cut: {a: B, b: A}}\n", 16,
	  "cut at 2 s: the fibre A-B is already cut then" },
	{ "  - {at_s: 1, leave: t9}\n", 15,
	  "leave at 1 s: task 't9' is not in the scenario by then" },
	{ "  - {at_s: 5, " ARRIVE_T2 "}\n"
	  "  - {at_s: 4, leave: t2}\n", 16,
	  "leave at 4 s: task 't2' is not in the scenario by then" },
	{ "  - {at_s: 1, leave: t1}\n  - {at_s: 2, leave: t1}\n", 16,
	  "task 't1' has already left" },
	{ "  - {at_s: 1, leave: [t1]}\n", 15, "leave" },
	{ "  - {at_s: 1, arrive: {name: t1, global: sC, locals: [sA],"
	  " parameters: 1000, bytes_per_parameter: 4, work_core_s: 0}}\n", 15,
	  "a task named 't1' is already in the scenario (line 13)" },
	{ "  - {at_s: 1, arrive: {name: t3, global: sC, locals: [sC],"
	  " parameters: 1000, bytes_per_parameter: 4, work_core_s: 0}}\n", 15,
	  "cannot also hold a local one" },
	{ "  - {at_s: 1, arrive: {name: t3, global: sC, locals: [sA],"
	  " parameters: 1000, bytes_per_parameter: 4, work_core_s: 0,"
	  " arrival: 3}}\n", 15, "it takes no 'arrival'" },
	{ "  - {at_s: 1, traffic: {from: A, to: sC, gbps: 1, for_s: 1}}\n", 15,
	  "'from' must name a router or a server, but 'A' is a roadm" },
	{ "  - {at_s: 1, traffic: {from: nowhere, to: sC, gbps: 1,"
	  " for_s: 1}}\n", 15, "'from' names unknown node 'nowhere'" },
	{ "  - {at_s: 1, traffic: {from: sC, to: sC, gbps: 1, for_s: 1}}\n", 15,
	  "'traffic' from 'sC' to itself" },
	{ "  - {at_s: 1, traffic: {from: sA, to: sC, gbps: 0, for_s: 1}}\n", 15,
	  "'gbps' must be > 0" },
	{ "  - {at_s: 1, traffic: {from: sA, to: sC, gbps: 1}}\n", 15,
	  "'for_s'" },
	{ "  - {at_s: 1, traffic: {from: sA, to: sC, gbps: 1, for_s: 1,"
	  " burst: 2}}\n", 15, "unknown key 'burst'" },
	{ "  {at_s: 1}\n", 15, "'events' must be a list, not a mapping" },
};

Test(event, refused_at_their_line)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = strlen(NET) + strlen(bad[i].events) + 1;
		char *yaml = malloc(n);
		struct scn_error err;
		struct scenario *sc;

		cr_assert_not_null(yaml);
		snprintf(yaml, n, "%s%s", NET, bad[i].events);
		errno = 0;
		sc = parse(yaml, &err);
		if (sc) {
			scenario_free(sc);
			cr_assert_fail("case %zu loaded: %s", i, bad[i].events);
		}
		cr_assert_eq(errno, EINVAL, "case %zu: errno %d", i, errno);
		cr_assert(strstr(err.msg, bad[i].fragment),
			  "case %zu: '%s' lacks '%s'", i, err.msg,
			  bad[i].fragment);
		cr_assert_eq(err.line, bad[i].line, "case %zu: line %d, want "
			     "%d: %s", i, err.line, bad[i].line, err.msg);
		cr_assert_gt(err.col, 0, "case %zu", i);
		free(yaml);
	}
}

Test(event, too_many_events_are_refused)
{
	size_t per = strlen("  - {at_s: 1, leave: t1}\n");
	size_t n = strlen(NET) + (SCN_EVENTS_MAX + 1) * per + 1;
	char *yaml = malloc(n), *p;
	struct scn_error err;

	cr_assert_not_null(yaml);
	p = yaml + sprintf(yaml, "%s", NET);
	for (int i = 0; i <= SCN_EVENTS_MAX; i++)
		p += sprintf(p, "  - {at_s: 1, leave: t1}\n");
	cr_assert_null(parse(yaml, &err));
	cr_assert(strstr(err.msg, "10001 events: at most 10000"), "%s",
		  err.msg);
	free(yaml);
}

/*
 * Many flows at once: each of 2 x 2,000 + 1 epochs would be planned with
 * every flow (the memory quadratic in them); refused before any is, at
 * the events' line, with the count. 300 flows (601 x 301 cells) pass.
 */
Test(event, a_timeline_too_large_to_plan_is_refused)
{
	size_t per = strlen("  - {at_s: 0.05, traffic: {from: sA, to: sC, "
			    "gbps: 1, for_s: 0.3}}\n");
	size_t n = strlen(NET) + 2000 * per + 1;
	char *yaml = malloc(n), *p;
	struct scn_error err;
	struct scenario *sc;

	cr_assert_not_null(yaml);
	p = yaml + sprintf(yaml, "%s", NET);
	for (int i = 0; i < 2000; i++)
		p += sprintf(p, "  - {at_s: 0.05, traffic: {from: sA, to: sC, "
			     "gbps: 1, for_s: 0.3}}\n");
	cr_assert_null(parse(yaml, &err));
	cr_assert_str_eq(err.msg, "2000 events make 4001 epochs (one per "
			 "event and per end of traffic), each planned with up "
			 "to 1 tasks and 2000 background flows: 8006001 "
			 "cells, more than the 200000 the twin plans; use "
			 "fewer events, arrivals or flows");
	cr_assert_eq(err.line, 15, "%d", err.line);
	p = yaml + sprintf(yaml, "%s", NET);
	for (int i = 0; i < 300; i++)
		p += sprintf(p, "  - {at_s: 0.05, traffic: {from: sA, to: sC, "
			     "gbps: 1, for_s: 0.3}}\n");
	sc = parse(yaml, &err);
	cr_assert_not_null(sc, "%s", err.msg);
	scenario_free(sc);
	free(yaml);
}

/* Written and read back: the same events, numbers exact. */
Test(event, written_back_the_same)
{
	struct scn_error err;
	struct scenario *a = parse(story, &err), *b;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	cr_assert_not_null(a, "%s", err.msg);
	f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	cr_assert_eq(scenario_write(a, f), 0);
	cr_assert_eq(fclose(f), 0);
	b = scenario_parse(text, len, "written", &err);
	cr_assert_not_null(b, "%d:%d: %s\n%s", err.line, err.col, err.msg,
			   text);
	cr_assert_eq(b->nevents, a->nevents);
	for (int k = 0; k < a->nevents; k++) {
		const struct scn_event *x = &a->events[k], *y = &b->events[k];

		cr_assert_eq(x->kind, y->kind, "event %d", k);
		cr_assert_eq(x->at_s, y->at_s, "event %d", k);
		cr_assert_eq(x->leave, y->leave, "event %d", k);
		if (x->kind == SCN_EV_CUT || x->kind == SCN_EV_REPAIR)
			cr_assert_eq(x->fibre, y->fibre, "event %d", k);
		if (x->kind == SCN_EV_TRAFFIC) {
			cr_assert_eq(x->from, y->from);
			cr_assert_eq(x->to, y->to);
			cr_assert_eq(x->gbps, y->gbps);
			cr_assert_eq(x->for_s, y->for_s);
		}
		if (x->kind == SCN_EV_ARRIVE) {
			cr_assert_str_eq(x->task.name, y->task.name);
			cr_assert_eq(x->task.global, y->task.global);
			cr_assert_eq(x->task.nlocals, y->task.nlocals);
			cr_assert_eq(x->task.parameters, y->task.parameters);
		}
	}
	scenario_free(a);
	scenario_free(b);
	free(text);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fputs(text, f) >= 0, 1);
	cr_assert_eq(fclose(f), 0);
}

/* --events FILE: the same story from a file of its own, checked alike. */
Test(event, from_a_file_of_their_own)
{
	char path[64];
	struct scn_error err;
	struct scenario *sc;
	/* the network without its events key */
	char net[sizeof(NET)];

	snprintf(net, sizeof(net), "%s", NET);
	*strstr(net, "events:\n") = '\0';
	sc = parse(net, &err);
	cr_assert_not_null(sc, "%s", err.msg);
	snprintf(path, sizeof(path), "/tmp/twinlab-events-%d.yaml",
		 (int)getpid());

	write_file(path, "events:\n  - {at_s: 1, cut: {a: A, b: C}}\n"
			 "  - {at_s: 1, repair: {a: A, b: B}}\n");
	cr_assert_eq(scenario_load_events(sc, path, &err), -EINVAL);
	cr_assert_str_eq(err.file, path);
	cr_assert_eq(err.line, 3, "%d: %s", err.line, err.msg);
	cr_assert(strstr(err.msg, "the fibre A-B is not cut then"), "%s",
		  err.msg);
	cr_assert_eq(sc->nevents, 0, "a refused file adds nothing");

	write_file(path, "cut: {a: A, b: C}\n");
	cr_assert_eq(scenario_load_events(sc, path, &err), -EINVAL);
	cr_assert(strstr(err.msg, "unknown key 'cut' in an events file"),
		  "%s", err.msg);

	write_file(path, "events:\n  - {at_s: 1, cut: {a: A, b: C}}\n"
			 "  - {at_s: 2, repair: {a: C, b: A}}\n");
	cr_assert_eq(scenario_load_events(sc, path, &err), 0, "%s", err.msg);
	cr_assert_eq(sc->nevents, 2);
	cr_assert_eq(sc->events[0].fibre, 2);
	/* a second list is refused: events live in one place */
	cr_assert_eq(scenario_load_events(sc, path, &err), -EINVAL);
	cr_assert(strstr(err.msg, "has events of its own"), "%s", err.msg);
	cr_assert_eq(sc->nevents, 2);
	scenario_free(sc);
	unlink(path);

	sc = parse(net, &err);
	cr_assert_not_null(sc);
	cr_assert_eq(scenario_load_events(sc, "/nonexistent/events.yaml",
					  &err), -ENOENT);
	cr_assert_eq(scenario_load_events(sc, "/dev/zero", &err), -EINVAL,
		     "only regular files");
	cr_assert_eq(sc->nevents, 0);
	scenario_free(sc);
}

/*
 * An event added to a told story (a cut from the live view): placed in
 * time order after the file's own of that time, the departures' arrivals
 * found again where it moved them, and one the story cannot take refused
 * with the scenario as it was; a dry run changes nothing.
 */
Test(event, a_cut_added_to_the_story)
{
	struct scn_error err;
	struct scenario *sc = parse(story, &err);
	const struct scn_event *e;

	cr_assert_not_null(sc, "%d:%d: %s", err.line, err.col, err.msg);
	/* B-C at 3: after the traffic, the cut, the repair; with t2's arrival */
	cr_assert_eq(scenario_add_fibre_event(sc, 1, true, 3, true, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(sc->nevents, 6, "a dry run added it");
	cr_assert_eq(scenario_add_fibre_event(sc, 1, true, 3, false, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(sc->nevents, 7);
	e = sc->events;
	cr_expect_eq(e[3].kind, SCN_EV_ARRIVE, "the file's event of 3 s first");
	cr_expect_eq(e[4].kind, SCN_EV_CUT);
	cr_expect_eq(e[4].fibre, 1);
	cr_expect_float_eq(e[4].at_s, 3, 0);
	cr_expect_eq(e[5].kind, SCN_EV_LEAVE);
	cr_expect_eq(e[5].leave, sc->ntasks + 3, "t2 is still arrival 3");
	/* A-B is cut from 1 s to 2 s, B-C from 3 s on */
	cr_expect_eq(scenario_add_fibre_event(sc, 0, true, 1.5, false, &err),
		     -EINVAL);
	cr_expect(strstr(err.msg, "cut at 1.5 s: the fibre A-B is already cut "
			 "then"), "%s", err.msg);
	cr_expect_eq(err.line, 0, "not a line of the file");
	cr_expect_eq(scenario_add_fibre_event(sc, 1, false, 2.5, false, &err),
		     -EINVAL);
	cr_expect(strstr(err.msg, "the fibre B-C is not cut then"), "%s",
		  err.msg);
	cr_expect_eq(scenario_add_fibre_event(sc, 3, true, 1, false, &err),
		     -EINVAL, "no fibre 3");
	cr_expect_eq(scenario_add_fibre_event(sc, 0, true, -1, false, &err),
		     -EINVAL, "a time before the start");
	cr_assert_eq(sc->nevents, 7, "a refused event was added");
	cr_expect_eq(sc->events[5].leave, sc->ntasks + 3);
	/* a repair of B-C later holds */
	cr_expect_eq(scenario_add_fibre_event(sc, 1, false, 5, false, &err), 0,
		     "%s", err.msg);
	cr_expect_eq(sc->events[7].kind, SCN_EV_REPAIR);
	scenario_free(sc);
}

// SPDX-License-Identifier: MIT
/*
 * A scenario's events: read from its 'events' key (or from a file of
 * their own), each checked where it stands — names, kinds, numbers — and
 * then the list as a story, in time order: a fibre is cut only while it
 * is up and repaired only while it is cut, a task leaves only while it is
 * there, an arriving task takes a name no other task has. Every error is
 * at file:line:col, before anything is scheduled or built.
 */
#include "scenario.h"
#include "scenario_impl.h"
#include "yamlf.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *scn_event_kind_name(enum scn_event_kind k)
{
	switch (k) {
	case SCN_EV_CUT:
		return "cut";
	case SCN_EV_REPAIR:
		return "repair";
	case SCN_EV_ARRIVE:
		return "arrive";
	case SCN_EV_LEAVE:
		return "leave";
	case SCN_EV_TRAFFIC:
		return "traffic";
	}
	return "?";
}

struct event_rec {
	double at_s;
};

enum { EF_AT, EF_CUT, EF_REPAIR, EF_ARRIVE, EF_LEAVE, EF_TRAFFIC };

static const struct yf_field event_fields[] = {
	{ "at_s", YF_DOUBLE, YF_REQUIRED | YF_NONNEG,
	  offsetof(struct event_rec, at_s), SCN_EVENT_AT_MAX, 0 },
	{ "cut", YF_ANY, 0, 0, 0, 0 },
	{ "repair", YF_ANY, 0, 0, 0, 0 },
	{ "arrive", YF_ANY, 0, 0, 0, 0 },
	{ "leave", YF_ANY, 0, 0, 0, 0 },
	{ "traffic", YF_ANY, 0, 0, 0, 0 },
};

struct ends_rec {
	char a[SCN_NAME_MAX + 1], b[SCN_NAME_MAX + 1];
};

static const struct yf_field ends_fields[] = {
	{ "a", YF_NAME, YF_REQUIRED, offsetof(struct ends_rec, a), 0,
	  SCN_NAME_MAX + 1 },
	{ "b", YF_NAME, YF_REQUIRED, offsetof(struct ends_rec, b), 0,
	  SCN_NAME_MAX + 1 },
};

struct traffic_rec {
	char from[SCN_NAME_MAX + 1], to[SCN_NAME_MAX + 1];
	double gbps, for_s;
};

static const struct yf_field traffic_fields[] = {
	{ "from", YF_NAME, YF_REQUIRED, offsetof(struct traffic_rec, from), 0,
	  SCN_NAME_MAX + 1 },
	{ "to", YF_NAME, YF_REQUIRED, offsetof(struct traffic_rec, to), 0,
	  SCN_NAME_MAX + 1 },
	{ "gbps", YF_DOUBLE, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct traffic_rec, gbps), 1e6, 0 },
	{ "for_s", YF_DOUBLE, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct traffic_rec, for_s), SCN_EVENT_AT_MAX, 0 },
};

/* A node of one of the kinds allowed (bit per enum node_kind), or -1. */
static int node_of(struct ctx *c, const yaml_node_t *at, const char *key,
		   const char *name, unsigned kinds, const char *want)
{
	int i = scenario_find(c->sc, name);

	if (i < 0) {
		yf_err(&c->y, at, "'%s' names unknown node '%s'", key, name);
		return -1;
	}
	if (!(kinds & 1u << c->sc->nodes[i].kind)) {
		yf_err(&c->y, at, "'%s' must name %s, but '%s' is a %s", key,
		       want, name, node_kind_name(c->sc->nodes[i].kind));
		return -1;
	}
	return i;
}

/* The fibre joining ROADMs {a, b} (either way round). */
static int load_ends(struct ctx *c, yaml_node_t *v, const char *what,
		     struct scn_event *e)
{
	const struct scenario *sc = c->sc;
	yaml_node_t *val[NFIELDS(ends_fields)] = { 0 };
	bool seen[NFIELDS(ends_fields)];
	struct ends_rec r = { 0 };
	int a, b, found;

	if (yf_apply(&c->y, v, what, ends_fields, NFIELDS(ends_fields), &r,
		     seen, val))
		return -EINVAL;
	a = node_of(c, val[0], "a", r.a, 1u << NODE_ROADM, "a ROADM");
	b = a < 0 ? -1 : node_of(c, val[1], "b", r.b, 1u << NODE_ROADM,
				 "a ROADM");
	if (a < 0 || b < 0)
		return -EINVAL;
	found = scenario_fibre(sc, a, b);
	if (found < 0) {
		yf_err(&c->y, v, "%s: no fibre joins '%s' and '%s'", what, r.a,
		       r.b);
		return -EINVAL;
	}
	e->fibre = found;
	return 0;
}

static int load_traffic(struct ctx *c, yaml_node_t *v, struct scn_event *e)
{
	const unsigned kinds = 1u << NODE_ROUTER | 1u << NODE_SERVER;
	yaml_node_t *val[NFIELDS(traffic_fields)] = { 0 };
	bool seen[NFIELDS(traffic_fields)];
	struct traffic_rec r = { 0 };

	if (yf_apply(&c->y, v, "'traffic'", traffic_fields,
		     NFIELDS(traffic_fields), &r, seen, val))
		return -EINVAL;
	e->from = node_of(c, val[0], "from", r.from, kinds,
			  "a router or a server");
	if (e->from < 0)
		return -EINVAL;
	e->to = node_of(c, val[1], "to", r.to, kinds, "a router or a server");
	if (e->to < 0)
		return -EINVAL;
	if (e->from == e->to) {
		yf_err(&c->y, val[1], "'traffic' from '%s' to itself", r.to);
		return -EINVAL;
	}
	e->gbps = r.gbps;
	e->for_s = r.for_s;
	return 0;
}

/* One event mapping: its time and exactly one of the kinds. */
static int load_event(struct ctx *c, yaml_node_t *v, struct scn_event *e)
{
	yaml_node_t *any[NFIELDS(event_fields)] = { 0 };
	bool seen[NFIELDS(event_fields)];
	struct event_rec r = { 0 };
	int kind = -1, err;

	if (yf_apply(&c->y, v, "an event", event_fields,
		     NFIELDS(event_fields), &r, seen, any))
		return -EINVAL;
	for (int k = EF_CUT; k <= EF_TRAFFIC; k++) {
		if (!seen[k])
			continue;
		if (kind >= 0) {
			yf_err(&c->y, any[k], "an event is one of cut, repair, "
			       "arrive, leave or traffic: this one has both "
			       "'%s' and '%s'", event_fields[kind].key,
			       event_fields[k].key);
			return -EINVAL;
		}
		kind = k;
	}
	if (kind < 0) {
		yf_err(&c->y, v, "an event needs one of 'cut', 'repair', "
		       "'arrive', 'leave' or 'traffic'");
		return -EINVAL;
	}
	e->at_s = r.at_s;
	e->line = (int)v->start_mark.line + 1;
	e->col = (int)v->start_mark.column + 1;
	e->leave = -1;
	switch (kind) {
	case EF_CUT:
	case EF_REPAIR:
		e->kind = kind == EF_CUT ? SCN_EV_CUT : SCN_EV_REPAIR;
		return load_ends(c, any[kind], kind == EF_CUT ? "'cut'" :
							     "'repair'", e);
	case EF_ARRIVE:
		e->kind = SCN_EV_ARRIVE;
		e->task.arrival = -1;
		err = scn_load_task(c, any[kind], &e->task);
		if (!err && e->task.arrival != -1) {
			yf_err(&c->y, any[kind], "task '%s' arrives at 'at_s' "
			       "(%g s): it takes no 'arrival'", e->task.name,
			       e->at_s);
			err = -EINVAL;
		}
		return err;
	case EF_LEAVE:
		e->kind = SCN_EV_LEAVE;
		/* the name is resolved once every arrival is known */
		if (yf_want_scalar(&c->y, any[kind], "leave"))
			return -EINVAL;
		if (!scn_name_ok(yf_scalar(any[kind]), SCN_TASK_NAME_MAX,
				 true)) {
			yf_err(&c->y, any[kind], "'leave' must name a task, "
			       "got '%s'", yf_scalar(any[kind]));
			return -EINVAL;
		}
		snprintf(e->task.name, sizeof(e->task.name), "%s",
			 yf_scalar(any[kind]));
		return 0;
	default:
		e->kind = SCN_EV_TRAFFIC;
		return load_traffic(c, any[kind], e);
	}
}

static int cmp_event(const void *x, const void *y)
{
	const struct scn_event *a = x, *b = y;

	if (a->at_s != b->at_s)
		return a->at_s < b->at_s ? -1 : 1;
	return scn_file_order(a->line, a->col, b->line, b->col);
}

/* A task by name among the scenario's and the arrivals before event k. */
static int task_named(const struct scenario *sc, const char *name, int k)
{
	for (int i = 0; i < sc->ntasks; i++)
		if (!strcmp(sc->tasks[i].name, name))
			return i;
	for (int i = 0; i < k; i++)
		if (sc->events[i].kind == SCN_EV_ARRIVE &&
		    !strcmp(sc->events[i].task.name, name))
			return sc->ntasks + i;
	return -1;
}

/* The events in time order, told as a story: each must make sense then. */
static int check_story(struct ctx *c)
{
	struct scenario *sc = c->sc;
	struct scn_error *err = c->y.err;
	bool *cut = calloc((size_t)sc->nfibres + 1, sizeof(*cut));
	bool *gone = calloc((size_t)(sc->ntasks + sc->nevents) + 1,
			    sizeof(*gone));
	int rc = 0;

	if (!cut || !gone) {
		free(cut);
		free(gone);
		return -ENOMEM;
	}
	for (int k = 0; k < sc->nevents && !rc; k++) {
		struct scn_event *e = &sc->events[k];
		const struct scn_fibre *f = &sc->fibres[e->fibre];
		int t;

		err->line = e->line;
		err->col = e->col;
		rc = -EINVAL;
		switch (e->kind) {
		case SCN_EV_CUT:
		case SCN_EV_REPAIR:
			if (cut[e->fibre] == (e->kind == SCN_EV_CUT)) {
				snprintf(err->msg, sizeof(err->msg),
					 "%s at %g s: the fibre %s-%s is %s "
					 "then", scn_event_kind_name(e->kind),
					 e->at_s, sc->nodes[f->a].name,
					 sc->nodes[f->b].name,
					 e->kind == SCN_EV_CUT ? "already cut" :
							     "not cut");
				break;
			}
			cut[e->fibre] = e->kind == SCN_EV_CUT;
			rc = 0;
			break;
		case SCN_EV_ARRIVE:
			t = task_named(sc, e->task.name, k);
			if (t >= 0) {
				snprintf(err->msg, sizeof(err->msg),
					 "arrive at %g s: a task named '%s' "
					 "is already in the scenario (line %d)",
					 e->at_s, e->task.name,
					 t < sc->ntasks ? sc->tasks[t].line :
					 sc->events[t - sc->ntasks].line);
				break;
			}
			rc = 0;
			break;
		case SCN_EV_LEAVE:
			t = task_named(sc, e->task.name, k);
			if (t < 0 || gone[t]) {
				snprintf(err->msg, sizeof(err->msg),
					 "leave at %g s: task '%s' %s", e->at_s,
					 e->task.name, t < 0 ?
					 "is not in the scenario by then" :
					 "has already left");
				break;
			}
			gone[t] = true;
			e->leave = t;
			rc = 0;
			break;
		case SCN_EV_TRAFFIC:
			rc = 0;
			break;
		}
	}
	if (!rc) {
		err->line = err->col = 0;
		err->msg[0] = '\0';
	}
	free(cut);
	free(gone);
	return rc;
}

/*
 * The timeline's cells, bounded (SCN_TIMELINE_CELLS_MAX): epochs times
 * the tasks and flows a run plays in each, counted before anything is
 * planned, so that a file of many tasks or flows at once is refused at
 * once rather than after minutes and gigabytes.
 */
static long story_cells(const struct scenario *sc, long *epochs,
			long *tasks, long *flows)
{
	*epochs = 1 + sc->nevents;
	*tasks = sc->ntasks;
	*flows = 0;
	for (int k = 0; k < sc->nevents; k++) {
		*epochs += sc->events[k].kind == SCN_EV_TRAFFIC;
		*flows += sc->events[k].kind == SCN_EV_TRAFFIC;
		*tasks += sc->events[k].kind == SCN_EV_ARRIVE;
	}
	return *epochs * (*tasks + *flows);
}

static int check_cells(struct ctx *c, yaml_node_t *seq)
{
	const struct scenario *sc = c->sc;
	long epochs, tasks, flows;

	if (story_cells(sc, &epochs, &tasks, &flows) <= SCN_TIMELINE_CELLS_MAX)
		return 0;
	yf_err(&c->y, seq, "%d events make %ld epochs (one per event and per "
	       "end of traffic), each planned with up to %ld tasks and %ld "
	       "background flows: %ld cells, more than the %d the twin plans; "
	       "use fewer events, arrivals or flows", sc->nevents, epochs,
	       tasks, flows, epochs * (tasks + flows), SCN_TIMELINE_CELLS_MAX);
	return -E2BIG;
}

int scn_load_events(struct ctx *c, yaml_node_t *seq)
{
	struct scenario *sc = c->sc;
	size_t n;
	int err;

	if (yf_want_seq(&c->y, seq, "events"))
		return -EINVAL;
	n = yf_seq_len(seq);
	if (n > SCN_EVENTS_MAX) {
		yf_err(&c->y, seq, "%zu events: at most %d", n,
		       SCN_EVENTS_MAX);
		return -EINVAL;
	}
	sc->events = calloc(n + 1, sizeof(*sc->events));
	if (!sc->events)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct scn_event *e = &sc->events[sc->nevents];

		sc->nevents++;	/* so scenario_free frees an arrival's locals */
		err = load_event(c, yf_seq_at(&c->y, seq, i), e);
		if (err)
			return err;
	}
	qsort(sc->events, (size_t)sc->nevents, sizeof(*sc->events),
	      cmp_event);
	err = check_story(c);
	return err ? err : check_cells(c, seq);
}

int scenario_add_fibre_event(struct scenario *sc, int fibre, bool cut,
			     double at_s, bool dry, struct scn_error *err)
{
	struct scenario trial = *sc;
	struct ctx c = { .y = { .err = err }, .sc = &trial };
	struct scn_event *ev;
	long epochs, tasks, flows;
	int rc;

	memset(err, 0, sizeof(*err));
	if (fibre < 0 || fibre >= sc->nfibres || !(at_s >= 0) ||
	    !(at_s <= SCN_EVENT_AT_MAX)) {
		snprintf(err->msg, sizeof(err->msg), "no such fibre, or a "
			 "time out of range");
		return -EINVAL;
	}
	if (sc->nevents >= SCN_EVENTS_MAX) {
		snprintf(err->msg, sizeof(err->msg), "%d events: at most %d",
			 sc->nevents + 1, SCN_EVENTS_MAX);
		return -E2BIG;
	}
	/* the story told again with the event in it, on a copy: the
	 * scenario changes only if it holds */
	ev = calloc((size_t)sc->nevents + 2, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	if (sc->nevents)
		memcpy(ev, sc->events, (size_t)sc->nevents * sizeof(*ev));
	ev[sc->nevents] = (struct scn_event){
		.at_s = at_s,
		.kind = cut ? SCN_EV_CUT : SCN_EV_REPAIR,
		.fibre = fibre,
		/* after the file's events of the same time */
		.line = INT_MAX,
		.col = sc->nevents,
	};
	trial.events = ev;
	trial.nevents = sc->nevents + 1;
	qsort(ev, (size_t)trial.nevents, sizeof(*ev), cmp_event);
	rc = check_story(&c);
	if (!rc && story_cells(&trial, &epochs, &tasks, &flows) >
		   SCN_TIMELINE_CELLS_MAX) {
		snprintf(err->msg, sizeof(err->msg), "%d events make %ld "
			 "epochs: more than the twin plans", trial.nevents,
			 epochs);
		rc = -E2BIG;
	}
	if (rc || dry) {
		free(ev);	/* the arrivals' locals stay sc's */
		err->line = err->col = 0;	/* not the file's */
		return rc;
	}
	free(sc->events);
	sc->events = ev;
	sc->nevents = trial.nevents;
	return 0;
}

static const struct yf_field events_file_fields[] = {
	{ "events", YF_ANY, YF_REQUIRED, 0, 0, 0 },
};

int scenario_load_events(struct scenario *sc, const char *path,
			 struct scn_error *err)
{
	struct ctx c = { .y = { .err = err }, .sc = sc };
	yaml_document_t doc;
	yaml_node_t *root, *any[1] = { 0 };
	bool seen[1];
	size_t len;
	char *buf, unused;
	int rc;

	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", path);
	if (sc->nevents) {
		snprintf(err->msg, sizeof(err->msg), "scenario '%s' has events "
			 "of its own (line %d): put all of them in one place",
			 sc->name, sc->events[0].line);
		return -EINVAL;
	}
	rc = yf_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = yf_load(buf ? buf : "", len, "events file", "an events file",
		     &doc, &root, err);
	free(buf);
	if (rc)
		return rc;
	c.y.doc = &doc;
	rc = yf_apply(&c.y, root, "an events file", events_file_fields, 1,
		      &unused, seen, any);
	if (!rc)
		rc = scn_load_events(&c, any[0]);
	if (rc == -ENOMEM)
		snprintf(err->msg, sizeof(err->msg), "out of memory");
	yaml_document_delete(&doc);
	if (rc) {
		/* the scenario stays as it was */
		scn_events_release(sc);
	}
	return rc;
}

void scn_events_release(struct scenario *sc)
{
	for (int i = 0; i < sc->nevents; i++)
		scn_task_release(&sc->events[i].task);
	free(sc->events);
	sc->events = NULL;
	sc->nevents = 0;
}

void scn_events_write(const struct scenario *sc, FILE *f)
{
	if (sc->nevents)
		fputs("events:\n", f);
	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];
		const struct scn_fibre *fb = &sc->fibres[e->fibre];
		const struct scn_task *t = &e->task;

		fprintf(f, "  - {at_s: %.17g, ", e->at_s);
		switch (e->kind) {
		case SCN_EV_CUT:
		case SCN_EV_REPAIR:
			fprintf(f, "%s: {a: %s, b: %s}}\n",
				scn_event_kind_name(e->kind),
				sc->nodes[fb->a].name, sc->nodes[fb->b].name);
			break;
		case SCN_EV_ARRIVE:
			fprintf(f, "arrive: {name: %s, global: %s, locals: [",
				t->name, sc->nodes[t->global].name);
			for (int i = 0; i < t->nlocals; i++)
				fprintf(f, "%s%s", i ? ", " : "",
					sc->nodes[t->locals[i]].name);
			fprintf(f, "], parameters: %llu, bytes_per_parameter: "
				   "%u, work_core_s: %.17g, rounds: %u, "
				   "demand_gbps: %.17g",
				(unsigned long long)t->parameters,
				t->bytes_per_parameter, t->work_core_s,
				t->rounds, t->demand_gbps);
			if (t->agg_core_s > 0)
				fprintf(f, ", agg_core_s: %.17g",
					t->agg_core_s);
			scn_write_split(f, t);
			fputs("}}\n", f);
			break;
		case SCN_EV_LEAVE:
			fprintf(f, "leave: %s}\n", t->name);
			break;
		case SCN_EV_TRAFFIC:
			fprintf(f, "traffic: {from: %s, to: %s, gbps: %.17g, "
				   "for_s: %.17g}}\n", sc->nodes[e->from].name,
				sc->nodes[e->to].name, e->gbps, e->for_s);
			break;
		}
	}
}

int scenario_traffic_all(struct scenario *sc)
{
	free(sc->bg);
	sc->nbg = 0;
	sc->bg = calloc((size_t)sc->nevents + 1, sizeof(*sc->bg));
	if (!sc->bg)
		return -ENOMEM;
	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];

		if (e->kind == SCN_EV_TRAFFIC)
			sc->bg[sc->nbg++] = (struct scn_bg){ k, e->from, e->to,
							     e->gbps };
	}
	return 0;
}


static int moment_cmp(const void *a, const void *b)
{
	const struct scn_moment *x = a, *y = b;

	if (x->at_s != y->at_s)
		return x->at_s < y->at_s ? -1 : 1;
	if (x->ends != y->ends)		/* traffic ends before what starts */
		return x->ends ? -1 : 1;
	return x->event - y->event;
}

int scn_moments(const struct scenario *sc, struct scn_moment **out)
{
	struct scn_moment *m = calloc(2 * (size_t)sc->nevents + 1,
				      sizeof(*m));
	int n = 0;

	*out = m;
	if (!m)
		return -ENOMEM;
	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];

		m[n++] = (struct scn_moment){ e->at_s, k, false };
		if (e->kind == SCN_EV_TRAFFIC)
			m[n++] = (struct scn_moment){ e->at_s + e->for_s, k,
						      true };
	}
	qsort(m, (size_t)n, sizeof(*m), moment_cmp);
	return n;
}

int scn_repair_of(const struct scenario *sc, int k)
{
	/* events are in time order: the first repair after it */
	for (int j = k + 1; j < sc->nevents; j++)
		if (sc->events[j].kind == SCN_EV_REPAIR &&
		    sc->events[j].fibre == sc->events[k].fibre)
			return j;
	return -1;
}

// SPDX-License-Identifier: MIT
#include "experiment.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl.h"
#include "sched.h"
#include "timeline.h"
#include "yamlf.h"

struct exp_rec {
	char kind[16];
	char name[SCN_NAME_MAX + 1];
	char base[512], events[512];
	long tasks, rounds, parameters, bpp, roadms;
	double work, agg;
};

enum { E_NAME, E_BASE, E_SCHED, E_LOCALS, E_TASKS, E_SEEDS, E_ROUNDS,
       E_PARAMS, E_BPP, E_WORK, E_KIND, E_LOADS, E_ROADMS, E_EVENTS,
       E_POLICIES, E_AGG, E_N };

/* The scenario's own limits (twin/scenario.c); tasks: a point's file
 * stays well under SCN_FILE_MAX. */
static const struct yf_field exp_fields[E_N] = {
	[E_NAME] = { "name", YF_TEXT, YF_REQUIRED,
		     offsetof(struct exp_rec, name), 0, SCN_NAME_MAX + 1 },
	[E_BASE] = { "base", YF_TEXT, YF_REQUIRED,
		     offsetof(struct exp_rec, base), 0, 512 },
	[E_SCHED] = { "schedulers", YF_ANY, YF_REQUIRED, 0, 0, 0 },
	[E_LOCALS] = { "locals", YF_ANY, 0, 0, 0, 0 },
	[E_TASKS] = { "tasks", YF_LONG, YF_POSITIVE,
		      offsetof(struct exp_rec, tasks), EXP_TASKS_MAX, 0 },
	[E_SEEDS] = { "seeds", YF_ANY, 0, 0, 0, 0 },
	[E_ROUNDS] = { "rounds", YF_LONG, YF_POSITIVE,
		       offsetof(struct exp_rec, rounds), 1e6, 0 },
	[E_PARAMS] = { "parameters", YF_LONG, YF_POSITIVE,
		       offsetof(struct exp_rec, parameters), 1e12, 0 },
	[E_BPP] = { "bytes_per_parameter", YF_LONG, YF_POSITIVE,
		    offsetof(struct exp_rec, bpp), 8, 0 },
	[E_WORK] = { "work_core_s", YF_DOUBLE, YF_NONNEG,
		     offsetof(struct exp_rec, work), 1e6, 0 },
	[E_KIND] = { "kind", YF_TEXT, 0, offsetof(struct exp_rec, kind), 0,
		     16 },
	[E_LOADS] = { "loads", YF_ANY, 0, 0, 0, 0 },
	[E_ROADMS] = { "roadms", YF_LONG, YF_POSITIVE,
		       offsetof(struct exp_rec, roadms), EXP_RANDOM_MAX, 0 },
	[E_EVENTS] = { "events", YF_TEXT, 0, offsetof(struct exp_rec, events),
		       0, 512 },
	[E_POLICIES] = { "policies", YF_ANY, 0, 0, 0, 0 },
	[E_AGG] = { "agg_core_s", YF_DOUBLE, YF_NONNEG,
		    offsetof(struct exp_rec, agg), 1e6, 0 },
};

/* The re-scheduling policies named in v, in order, each once. */
static int policies(struct yf *c, yaml_node_t *v, struct experiment *x)
{
	if (yf_want_seq(c, v, "policies"))
		return -EINVAL;
	if (yf_seq_len(v) == 0 || yf_seq_len(v) > 3) {
		yf_err(c, v, "'policies' must list 1 to 3 of none, full and "
		       "auto");
		return -EINVAL;
	}
	x->npolicies = 0;
	for (size_t i = 0; i < yf_seq_len(v); i++) {
		yaml_node_t *n = yf_seq_at(c, v, i);
		int k;

		if (yf_want_scalar(c, n, "policies"))
			return -EINVAL;
		k = resched_find(yf_scalar(n));
		if (k < 0) {
			yf_err(c, n, "unknown policy '%s' in 'policies': none, "
			       "full or auto", yf_scalar(n));
			return -EINVAL;
		}
		for (int j = 0; j < x->npolicies; j++)
			if (x->policy[j] == (enum resched)k) {
				yf_err(c, n, "policy '%s' twice in 'policies'",
				       yf_scalar(n));
				return -EINVAL;
			}
		x->policy[x->npolicies++] = (enum resched)k;
	}
	return 0;
}

/* path relative to the experiment file `name`, as an include is, into out
 * (len bytes). False if it does not fit or is empty. */
static bool relative(const char *name, const char *path, char *out,
		     size_t len)
{
	const char *slash = strrchr(name, '/');
	int dl = path[0] != '/' && slash ? (int)(slash - name + 1) : 0;

	return path[0] && (size_t)snprintf(out, len, "%.*s%s", dl, name,
					   path) < len;
}

/* A list of whole numbers in [1, 1e6] (out) or of scheduler names. */
/* An entry listed twice would run (and count) the same points twice. */
static int twice(struct yf *c, yaml_node_t *x, const char *key, const char *s,
		 yaml_node_t *v, int first)
{
	yaml_node_t *at = yf_seq_at(c, v, (size_t)first);

	yf_err(c, x, "'%s' twice in '%s' (first at line %lu): each would "
	       "run the same points again", s, key,
	       at ? (unsigned long)at->start_mark.line + 1 : 0ul);
	return -EINVAL;
}

static int list(struct yf *c, yaml_node_t *v, const char *key, long *out,
		char (*names)[16], int *n)
{
	if (yf_want_seq(c, v, key))
		return -EINVAL;
	*n = 0;
	if (yf_seq_len(v) == 0 || yf_seq_len(v) > EXP_LIST_MAX) {
		yf_err(c, v, "'%s' must list 1 to %d entries", key,
		       EXP_LIST_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < yf_seq_len(v); i++) {
		yaml_node_t *x = yf_seq_at(c, v, i);
		const char *s;

		if (yf_want_scalar(c, x, key))
			return -EINVAL;
		s = yf_scalar(x);
		if (names) {
			bool known = false;

			for (int k = 0; sched_list[k] && !known; k++)
				known = !strcmp(sched_list[k]->name, s);
			if (!known || strlen(s) >= 16) {
				yf_err(c, x, "unknown scheduler '%s' in '%s'",
				       s, key);
				return -EINVAL;
			}
			for (int k = 0; k < *n; k++)
				if (!strcmp(names[k], s))
					return twice(c, x, key, s, v, k);
			snprintf(names[(*n)++], 16, "%s", s);
			continue;
		}
		if (!*s || strspn(s, "0123456789") != strlen(s) ||
		    strlen(s) > 7 || atol(s) < 1 || atol(s) > 1000000) {
			yf_err(c, x, "'%s': a whole number in [1, 1000000], "
			       "got '%s'", key, s);
			return -EINVAL;
		}
		for (int k = 0; k < *n; k++)
			if (out[k] == atol(s))
				return twice(c, x, key, s, v, k);
		out[(*n)++] = atol(s);
	}
	return 0;
}

/* An experiment's fields as read, which were given, and where. */
struct exp_parse {
	struct yf *c;
	const char *name;	/* the file's */
	const struct exp_rec *r;
	const bool *seen;
	yaml_node_t *const *any, *root;
};

/* Refuse the first of fields (n of them) given, saying why. */
static int refuse_given(const struct exp_parse *e, const int *fields, size_t n,
			const char *why)
{
	for (size_t k = 0; k < n; k++) {
		if (!e->seen[fields[k]])
			continue;
		yf_err(e->c, e->any[fields[k]], "%s: '%s' is not for it", why,
		       exp_fields[fields[k]].key);
		return -EINVAL;
	}
	return 0;
}

static int kind_dynamics(const struct exp_parse *e, struct experiment *x)
{
	static const int never[] = { E_TASKS, E_LOADS, E_LOCALS, E_SEEDS,
				     E_PARAMS, E_BPP, E_WORK, E_AGG };
	static const enum resched all[] = { RESCHED_NONE, RESCHED_FULL,
					    RESCHED_AUTO };

	x->kind = EXP_DYNAMICS;
	if (refuse_given(e, never, sizeof(never) / sizeof(never[0]),
			 "a dynamics experiment runs the base's own tasks "
			 "through its events"))
		return -EINVAL;
	if (!e->seen[E_EVENTS]) {
		yf_err(e->c, e->root, "a dynamics experiment needs 'events' "
		       "(a file of events, as run --events reads)");
		return -EINVAL;
	}
	if (!relative(e->name, e->r->events, x->events, sizeof(x->events))) {
		yf_err(e->c, e->any[E_EVENTS], "'events' must name a file (at "
		       "most %zu characters with the experiment's directory)",
		       sizeof(x->events) - 1);
		return -EINVAL;
	}
	if (e->seen[E_POLICIES])
		return policies(e->c, e->any[E_POLICIES], x);
	memcpy(x->policy, all, sizeof(all));
	x->npolicies = 3;
	return 0;
}

static int kind_emulation(const struct exp_parse *e, struct experiment *x)
{
	static const int need[] = { E_TASKS, E_PARAMS, E_WORK };

	x->kind = EXP_EMULATION;
	for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++) {
		if (e->seen[need[k]])
			continue;
		yf_err(e->c, e->root, "an experiment on the emulation needs "
		       "'%s'", exp_fields[need[k]].key);
		return -EINVAL;
	}
	if (e->seen[E_LOADS]) {
		yf_err(e->c, e->any[E_LOADS], "'loads' is for 'kind: "
		       "blocking'");
		return -EINVAL;
	}
	return 0;
}

static int kind_blocking(const struct exp_parse *e, struct experiment *x)
{
	x->kind = EXP_BLOCKING;
	if (!e->seen[E_LOADS]) {
		yf_err(e->c, e->root, "a blocking experiment needs 'loads' "
		       "(numbers of tasks)");
		return -EINVAL;
	}
	if (e->seen[E_TASKS]) {
		yf_err(e->c, e->any[E_TASKS], "a blocking experiment takes "
		       "'loads', not 'tasks'");
		return -EINVAL;
	}
	if (list(e->c, e->any[E_LOADS], "loads", x->loads, NULL, &x->nloads))
		return -EINVAL;
	for (int i = 0; i < x->nloads; i++)
		if (x->loads[i] > EXP_TASKS_MAX) {
			yf_err(e->c, e->any[E_LOADS], "'loads': at most %d "
			       "tasks, got %ld", EXP_TASKS_MAX, x->loads[i]);
			return -EINVAL;
		}
	return 0;
}

static int kind_gap(const struct exp_parse *e, struct experiment *x)
{
	static const int never[] = { E_TASKS, E_LOADS };

	x->kind = EXP_GAP;
	if (refuse_given(e, never, sizeof(never) / sizeof(never[0]),
			 "a gap experiment schedules one task per instance"))
		return -EINVAL;
	for (int k = 0; k < x->nsched; k++)
		if (!strcmp(x->sched[k], sched_opt.name)) {
			yf_err(e->c, e->any[E_SCHED], "a gap experiment "
			       "compares each scheduler with opt: list the "
			       "others");
			return -EINVAL;
		}
	return 0;
}

/* What each kind needs, and only what it uses. */
static int check_kind(const struct exp_parse *e, struct experiment *x)
{
	const char *kind = e->seen[E_KIND] ? e->r->kind : "emulation";

	if (!strcmp(kind, "dynamics"))
		return kind_dynamics(e, x);
	if (e->seen[E_EVENTS] || e->seen[E_POLICIES]) {
		int at = e->seen[E_EVENTS] ? E_EVENTS : E_POLICIES;

		yf_err(e->c, e->any[at], "'%s' is for 'kind: dynamics'",
		       exp_fields[at].key);
		return -EINVAL;
	}
	if (!e->seen[E_LOCALS] || !e->seen[E_SEEDS]) {
		yf_err(e->c, e->root, "an experiment needs '%s'",
		       !e->seen[E_LOCALS] ? "locals" : "seeds");
		return -EINVAL;
	}
	if (!strcmp(kind, "emulation"))
		return kind_emulation(e, x);
	if (!strcmp(kind, "blocking"))
		return kind_blocking(e, x);
	if (!strcmp(kind, "gap"))
		return kind_gap(e, x);
	yf_err(e->c, e->any[E_KIND], "'kind' must be emulation, blocking, gap "
	       "or dynamics, got '%s'", kind);
	return -EINVAL;
}

/* The base scenario: a file beside the experiment, or random networks. */
static int check_base(const struct exp_parse *e, struct experiment *x)
{
	const struct exp_rec *r = e->r;

	if (e->seen[E_ROADMS] || !strcmp(r->base, "random")) {
		yaml_node_t *at = e->any[e->seen[E_ROADMS] ? E_ROADMS : E_BASE];

		if (x->kind != EXP_GAP) {
			yf_err(e->c, at, "random networks ('base: random' with "
			       "'roadms') are for 'kind: gap'");
			return -EINVAL;
		}
		if (!e->seen[E_ROADMS] || strcmp(r->base, "random")) {
			yf_err(e->c, at, "'base: random' and 'roadms' go "
			       "together");
			return -EINVAL;
		}
		if (r->roadms < 4) {
			yf_err(e->c, at, "'roadms' must be 4 to %d, got %ld",
			       EXP_RANDOM_MAX, r->roadms);
			return -EINVAL;
		}
		x->random_roadms = r->roadms;
		snprintf(x->base, sizeof(x->base), "random");
		return 0;
	}
	/* relative to the experiment file, as an include is */
	if (!relative(e->name, r->base, x->base, sizeof(x->base))) {
		yf_err(e->c, e->any[E_BASE], "'base' must name a scenario file "
		       "(at most %zu characters with the experiment's "
		       "directory)", sizeof(x->base) - 1);
		return -EINVAL;
	}
	return 0;
}

int experiment_parse(const char *buf, size_t len, const char *name,
		     struct experiment *x, struct scn_error *err)
{
	yaml_document_t doc;
	struct yf c = { .err = err };
	struct exp_rec r = { .rounds = 1, .bpp = 4, .parameters = 1000000 };
	yaml_node_t *root, *any[E_N] = { 0 };
	bool seen[E_N];
	struct exp_parse e = { &c, name, &r, seen, any, NULL };
	int rc;

	memset(x, 0, sizeof(*x));
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", name);
	rc = yf_load(buf, len, "experiment", "an experiment", &doc, &root, err);
	if (rc)
		return rc;
	rc = -EINVAL;
	c.doc = &doc;
	e.root = root;
	if (yf_apply(&c, root, "an experiment", exp_fields, E_N, &r, seen,
		     any))
		goto out;
	/* it names files: one component, nothing hidden */
	if (!scn_name_ok(r.name, SCN_NAME_MAX, true)) {
		yf_err(&c, any[E_NAME], "'name' must be 1-%d characters of "
		       "[A-Za-z0-9_.-], not starting with '.' or '-', got "
		       "'%s'", SCN_NAME_MAX, r.name);
		goto out;
	}
	if (seen[E_BPP] && !fl_wire_supported((unsigned)r.bpp)) {
		yf_err(&c, any[E_BPP], "'bytes_per_parameter' must be 1, 2, 4 "
		       "or 8, got %ld", r.bpp);
		goto out;
	}
	if (list(&c, any[E_SCHED], "schedulers", NULL, x->sched,
		 &x->nsched) ||
	    (seen[E_LOCALS] && list(&c, any[E_LOCALS], "locals", x->locals,
				    NULL, &x->nlocals)) ||
	    (seen[E_SEEDS] && list(&c, any[E_SEEDS], "seeds", x->seeds, NULL,
				   &x->nseeds)) ||
	    check_kind(&e, x) || check_base(&e, x))
		goto out;
	memcpy(x->name, r.name, sizeof(x->name));
	x->tasks = r.tasks;
	x->rounds = r.rounds;
	x->parameters = r.parameters;
	x->bpp = r.bpp;
	x->work = r.work;
	x->agg = r.agg;
	rc = 0;
out:
	yaml_document_delete(&doc);
	return rc;
}

int experiment_load(const char *path, struct experiment *x,
		    struct scn_error *err)
{
	size_t len;
	char *buf;
	int e = yf_read_file(path, &buf, &len, err);

	if (e)
		return e;
	e = experiment_parse(buf ? buf : "", len, path, x, err);
	free(buf);
	return e;
}

int experiment_point(const struct experiment *x, const struct scenario *base,
		     long nl, long seed, long ntasks, struct scenario *pt)
{
	struct scn_task *tasks = calloc((size_t)ntasks + 1, sizeof(*tasks));
	int *srv = calloc((size_t)base->nnodes + 1, sizeof(*srv));
	int *locals = calloc((size_t)(ntasks * nl) + 1, sizeof(*locals));
	int ns = 0;
	struct fl_rng r;

	*pt = *base;		/* the base's network, shared */
	pt->tasks = NULL;
	pt->ntasks = 0;
	pt->bg = NULL;
	pt->nbg = 0;
	if (!tasks || !srv || !locals) {
		free(tasks);
		free(srv);
		free(locals);
		return -ENOMEM;
	}
	for (int i = 0; i < base->nnodes; i++)
		if (base->nodes[i].kind == NODE_SERVER)
			srv[ns++] = i;
	if (nl < 1 || nl + 1 > ns) {
		free(tasks);
		free(srv);
		free(locals);
		return -EINVAL;
	}
	fl_rng_seed(&r, fl_seed_derive((uint64_t)seed, (uint64_t)nl));
	for (long t = 0; t < ntasks; t++) {
		struct scn_task *tk = &tasks[t];

		for (int i = 0; i <= nl; i++) {
			int j = i + (int)fl_rng_below(&r, (uint32_t)(ns - i));
			int tmp = srv[i];

			srv[i] = srv[j];
			srv[j] = tmp;
		}
		snprintf(tk->name, sizeof(tk->name), "t%02ld", t + 1);
		tk->global = srv[0];
		tk->nlocals = (int)nl;
		tk->locals = &locals[t * nl];
		for (int i = 1; i <= nl; i++)
			tk->locals[i - 1] = srv[i];
		tk->parameters = (uint64_t)x->parameters;
		tk->bytes_per_parameter = (unsigned)x->bpp;
		tk->work_core_s = x->work;
		tk->agg_core_s = x->agg;
		tk->rounds = (unsigned)x->rounds;
		tk->demand_gbps = base->demand_gbps;
		tk->arrival = LONG_MAX;	/* file order */
	}
	free(srv);
	pt->tasks = tasks;
	pt->ntasks = (int)ntasks;
	return 0;
}

void experiment_point_release(struct scenario *pt)
{
	if (pt->tasks)
		free(pt->tasks[0].locals);	/* one block for all */
	free(pt->tasks);
	pt->tasks = NULL;
	pt->ntasks = 0;
}

int experiment_load_point(const struct scenario *pt,
			  const struct sched_ops *ops, struct exp_load *out)
{
	struct plan *p = sched_plan(pt, ops);

	memset(out, 0, sizeof(*out));
	if (!p)
		return -errno;
	out->tasks = p->ntasks;
	out->blocked = p->blocked;
	out->wl_used = p->wavelength_links;
	for (int i = 0; i < pt->nfibres; i++)
		out->wl_total += pt->fibres[i].wavelengths;
	out->bytes_links = p->bytes_links;
	plan_free(p);
	return 0;
}

int experiment_random_base(long nroadm, long seed, struct scenario **out)
{
	size_t cap = 256 + (size_t)nroadm * 256, off;
	char *y = malloc(cap);
	bool *edge = calloc((size_t)(nroadm * nroadm), sizeof(*edge));
	struct scn_error err;
	struct fl_rng r;
	int e = 0;

	*out = NULL;
	if (!y || !edge) {
		e = -ENOMEM;
		goto out;
	}
	if (nroadm < 4 || nroadm > EXP_RANDOM_MAX) {
		e = -EINVAL;
		goto out;
	}
	fl_rng_seed(&r, fl_seed_derive((uint64_t)seed, 0x70b0 + (uint64_t)nroadm));
	off = (size_t)snprintf(y, cap, "name: random-%ld-%ld\n"
			       "wavelength_gbps: 100\nwavelengths: 16\n"
			       "demand_gbps: 10\nroadms: [", nroadm, seed);
	for (long i = 0; i < nroadm; i++)
		off += (size_t)snprintf(y + off, cap - off, "%sX%ld",
					i ? ", " : "", i);
	off += (size_t)snprintf(y + off, cap - off, "]\nfibres:\n");
	/* a random tree, then half as many chords again */
	for (long i = 1; i < nroadm + nroadm / 2; i++) {
		long a = i < nroadm ? i : (long)fl_rng_below(&r, (uint32_t)nroadm);
		long b = (long)fl_rng_below(&r, (uint32_t)(i < nroadm ? i :
							       nroadm));

		if (a == b || edge[a * nroadm + b])
			continue;
		edge[a * nroadm + b] = edge[b * nroadm + a] = true;
		off += (size_t)snprintf(y + off, cap - off,
					"  - {a: X%ld, b: X%ld, km: %u}\n", a,
					b, 50 + fl_rng_below(&r, 951));
	}
	off += (size_t)snprintf(y + off, cap - off, "routers:\n");
	for (long i = 0; i < nroadm; i++)
		off += (size_t)snprintf(y + off, cap - off,
					"  - {name: r%ld, roadm: X%ld}\n", i, i);
	off += (size_t)snprintf(y + off, cap - off, "servers:\n");
	for (long i = 0; i < nroadm; i++)
		off += (size_t)snprintf(y + off, cap - off,
					"  - {name: s%ld, router: r%ld, "
					"access_gbps: 100, access_km: %u, "
					"cpu: 1, memory_mib: 64}\n", i, i,
					fl_rng_below(&r, 21));
	*out = scenario_parse(y, off, "random", &err);
	if (!*out)
		e = -EPROTO;	/* a generator bug: the text is ours */
out:
	free(y);
	free(edge);
	return e;
}

int experiment_gap_point(const struct scenario *pt,
			 const struct sched_ops *ops, struct exp_gap *out)
{
	/*
	 * The trees as each scheduler builds them for their weight: the gap
	 * is that weight, so mst trades its tree neither for a faster star
	 * nor, bounding its depth (stretch), for a shallower tree here.
	 */
	struct scenario trees = *pt;
	struct plan *p;

	trees.never_slower = false;
	trees.weights.stretch = 0;
	p = sched_plan(&trees, ops);

	memset(out, 0, sizeof(*out));
	if (!p)
		return -errno;
	out->blocked = p->tasks[0].blocked;
	out->weight = out->blocked ? NAN : p->tasks[0].tree_weight;
	plan_free(p);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * Scenario loader. libyaml builds the document tree (with line and column
 * of every node); this file walks it against small field tables, so every
 * mapping is checked the same way: unknown keys, duplicates, types, ranges,
 * required keys. References between objects are resolved only after every
 * node is declared, so the order of top-level keys does not matter.
 */
#include "scenario.h"
#include "fl.h"
#include "scenario_impl.h"
#include "wire.h"
#include "yamlf.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <yaml.h>


const char *node_kind_name(enum node_kind k)
{
	switch (k) {
	case NODE_ROADM:
		return "roadm";
	case NODE_ROUTER:
		return "router";
	case NODE_SERVER:
		return "server";
	}
	return "?";
}

/* ---- scalar helpers ---------------------------------------------------- */






bool scn_name_ok(const char *s, size_t max, bool allow_dot)
{
	size_t n = strlen(s);

	if (n == 0 || n > max || s[0] == '-' || s[n - 1] == '-' ||
	    s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
		      (allow_dot && ch == '.')))
			return false;
	}
	return true;
}

/* ---- nodes ------------------------------------------------------------- */

static int add_node(struct ctx *c, const yaml_node_t *at, const char *name,
		    enum node_kind kind)
{
	struct scenario *sc = c->sc;
	struct scn_node *n;
	int dup;

	if (!scn_name_ok(name, SCN_NODE_NAME_MAX, false)) {
		yf_err(&c->y, at, "bad %s name '%s': use 1-%d characters of "
			"[A-Za-z0-9_] and inner '-'", node_kind_name(kind),
			name, SCN_NODE_NAME_MAX);
		return -EINVAL;
	}
	dup = scenario_find(sc, name);
	if (dup >= 0) {
		yf_err(&c->y, at, "duplicate node name '%s' (first declared as "
			"%s at line %d)", name,
			node_kind_name(sc->nodes[dup].kind),
			sc->nodes[dup].line);
		return -EINVAL;
	}
	n = &sc->nodes[sc->nnodes++];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->kind = kind;
	n->line = (int)at->start_mark.line + 1;
	n->col = (int)at->start_mark.column + 1;
	n->attach = -1;
	n->router = -1;
	return sc->nnodes - 1;
}




/* Look up a reference of the wanted kind; error at the referring node. */
static int ref(struct ctx *c, const yaml_node_t *at, const char *key,
	       const char *name, enum node_kind kind)
{
	int i = scenario_find(c->sc, name);

	if (i < 0) {
		yf_err(&c->y, at, "'%s' names unknown %s '%s'", key,
			node_kind_name(kind), name);
		return -EINVAL;
	}
	if (c->sc->nodes[i].kind != kind) {
		yf_err(&c->y, at, "'%s' must name a %s, but '%s' is a %s", key,
			node_kind_name(kind), name,
			node_kind_name(c->sc->nodes[i].kind));
		return -EINVAL;
	}
	return i;
}

static int load_roadms(struct ctx *c, yaml_node_t *seq)
{
	if (yf_want_seq(&c->y, seq, "roadms"))
		return -EINVAL;
	if (yf_seq_len(seq) == 0) {
		yf_err(&c->y, seq, "'roadms' must list at least one ROADM");
		return -EINVAL;
	}
	for (size_t i = 0; i < yf_seq_len(seq); i++) {
		yaml_node_t *v = yf_seq_at(&c->y, seq, i);

		if (yf_want_scalar(&c->y, v, "roadms"))
			return -EINVAL;
		if (add_node(c, v, yf_scalar(v), NODE_ROADM) < 0)
			return -EINVAL;
	}
	return 0;
}

/* positions: {ROADM: [x, y], ...}: where pictures draw the ROADMs. */
static int load_positions(struct ctx *c, yaml_node_t *map)
{
	if (map->type != YAML_MAPPING_NODE) {
		yf_err(&c->y, map, "'positions' must map ROADM names to "
			"[x, y], got %s", yf_type_name(map));
		return -EINVAL;
	}
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
	     pr < map->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(c->y.doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(c->y.doc, pr->value);
		double xy[2];
		int i;

		if (yf_want_scalar(&c->y, k, "positions"))
			return -EINVAL;
		i = ref(c, k, "positions", yf_scalar(k), NODE_ROADM);
		if (i < 0)
			return -EINVAL;
		if (c->sc->nodes[i].placed) {
			yf_err(&c->y, k, "'positions' places ROADM '%s' "
				"twice", yf_scalar(k));
			return -EINVAL;
		}
		if (yf_want_seq(&c->y, v, "positions"))
			return -EINVAL;
		if (yf_seq_len(v) != 2) {
			yf_err(&c->y, v, "the position of '%s' must be [x, "
				"y], got %zu numbers", yf_scalar(k),
				yf_seq_len(v));
			return -EINVAL;
		}
		for (size_t j = 0; j < 2; j++) {
			yaml_node_t *n = yf_seq_at(&c->y, v, j);

			if (yf_double(&c->y, n, "positions", &xy[j]))
				return -EINVAL;
			if (fabs(xy[j]) > SCN_POS_MAX) {
				yf_err(&c->y, n, "a position must be within "
					"+-%g, got %g", SCN_POS_MAX, xy[j]);
				return -EINVAL;
			}
		}
		c->sc->nodes[i].placed = true;
		c->sc->nodes[i].x = xy[0];
		c->sc->nodes[i].y = xy[1];
	}
	return 0;
}

struct router_rec {
	char name[SCN_NAME_MAX + 1];
	char roadm[SCN_NAME_MAX + 1];
};

static const struct yf_field router_fields[] = {
	{ "name", YF_NAME, YF_REQUIRED, offsetof(struct router_rec, name), 0,
	  SCN_NAME_MAX + 1 },
	{ "roadm", YF_NAME, YF_REQUIRED, offsetof(struct router_rec, roadm), 0,
	  SCN_NAME_MAX + 1 },
};

/* Pass 1 declares routers; their ROADM is resolved in pass 2. */
static int load_routers(struct ctx *c, yaml_node_t *seq, bool resolve)
{
	bool seen[2];
	yaml_node_t *val[2];

	if (yf_want_seq(&c->y, seq, "routers"))
		return -EINVAL;
	for (size_t i = 0; i < yf_seq_len(seq); i++) {
		yaml_node_t *v = yf_seq_at(&c->y, seq, i);
		struct router_rec r = { 0 };
		int self, rd;

		if (yf_apply(&c->y, v, "a router", router_fields, 2, &r, seen,
				 val))
			return -EINVAL;
		if (!resolve) {
			if (add_node(c, val[0], r.name, NODE_ROUTER) < 0)
				return -EINVAL;
			continue;
		}
		self = scenario_find(c->sc, r.name);
		rd = ref(c, val[1], "roadm", r.roadm, NODE_ROADM);
		if (rd < 0)
			return -EINVAL;
		if (c->sc->nodes[rd].router >= 0) {
			yf_err(&c->y, val[1], "ROADM '%s' already has router '%s'; "
				"a ROADM has at most one router", r.roadm,
				c->sc->nodes[c->sc->nodes[rd].router].name);
			return -EINVAL;
		}
		c->sc->nodes[rd].router = self;
		c->sc->nodes[self].attach = rd;
	}
	return 0;
}

struct server_rec {
	char name[SCN_NAME_MAX + 1];
	char router[SCN_NAME_MAX + 1];
	double access_gbps, access_km, cpu, memory_mib;
};

static const struct yf_field server_fields[] = {
	{ "name", YF_NAME, YF_REQUIRED, offsetof(struct server_rec, name), 0,
	  SCN_NAME_MAX + 1 },
	{ "router", YF_NAME, YF_REQUIRED, offsetof(struct server_rec, router), 0,
	  SCN_NAME_MAX + 1 },
	{ "access_gbps", YF_DOUBLE, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct server_rec, access_gbps), 1e6, 0 },
	{ "access_km", YF_DOUBLE, YF_NONNEG,
	  offsetof(struct server_rec, access_km), 1e5, 0 },
	{ "cpu", YF_DOUBLE, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct server_rec, cpu), 4096, 0 },
	{ "memory_mib", YF_DOUBLE, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct server_rec, memory_mib), 1 << 24, 0 },
};


static int load_servers(struct ctx *c, yaml_node_t *seq, bool resolve)
{
	bool seen[NFIELDS(server_fields)];
	yaml_node_t *val[NFIELDS(server_fields)];

	if (yf_want_seq(&c->y, seq, "servers"))
		return -EINVAL;
	for (size_t i = 0; i < yf_seq_len(seq); i++) {
		yaml_node_t *v = yf_seq_at(&c->y, seq, i);
		struct server_rec r = { 0 };
		struct scn_node *n;
		int self, rt;

		if (yf_apply(&c->y, v, "a server", server_fields,
				 NFIELDS(server_fields), &r, seen, val))
			return -EINVAL;
		if (!resolve) {
			self = add_node(c, val[0], r.name, NODE_SERVER);
			if (self < 0)
				return -EINVAL;
			n = &c->sc->nodes[self];
			n->access_gbps = r.access_gbps;
			n->access_km = r.access_km;
			n->cpu = r.cpu;
			n->memory_mib = r.memory_mib;
			continue;
		}
		rt = ref(c, val[1], "router", r.router, NODE_ROUTER);
		if (rt < 0)
			return -EINVAL;
		c->sc->nodes[scenario_find(c->sc, r.name)].attach = rt;
	}
	return 0;
}

struct fibre_rec {
	char a[SCN_NAME_MAX + 1], b[SCN_NAME_MAX + 1];
	double km;
	unsigned wavelengths;
	double loss;
};

static const struct yf_field fibre_fields[] = {
	{ "a", YF_NAME, YF_REQUIRED, offsetof(struct fibre_rec, a), 0,
	  SCN_NAME_MAX + 1 },
	{ "b", YF_NAME, YF_REQUIRED, offsetof(struct fibre_rec, b), 0,
	  SCN_NAME_MAX + 1 },
	{ "km", YF_DOUBLE, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct fibre_rec, km), 1e5, 0 },
	{ "wavelengths", YF_UINT, YF_POSITIVE,
	  offsetof(struct fibre_rec, wavelengths), 4096, 0 },
	{ "loss", YF_DOUBLE, YF_NONNEG,
	  offsetof(struct fibre_rec, loss), SCN_LOSS_MAX, 0 },
};

static int load_fibres(struct ctx *c, yaml_node_t *seq, unsigned wdefault)
{
	struct scenario *sc = c->sc;
	bool seen[NFIELDS(fibre_fields)];
	yaml_node_t *val[NFIELDS(fibre_fields)];

	if (yf_want_seq(&c->y, seq, "fibres"))
		return -EINVAL;
	sc->fibres = calloc(yf_seq_len(seq) + 1, sizeof(*sc->fibres));
	if (!sc->fibres)
		return -ENOMEM;
	for (size_t i = 0; i < yf_seq_len(seq); i++) {
		yaml_node_t *v = yf_seq_at(&c->y, seq, i);
		struct fibre_rec r = { 0 };
		struct scn_fibre *f = &sc->fibres[sc->nfibres];

		if (yf_apply(&c->y, v, "a fibre", fibre_fields,
				 NFIELDS(fibre_fields), &r, seen, val))
			return -EINVAL;
		f->a = ref(c, val[0], "a", r.a, NODE_ROADM);
		if (f->a < 0)
			return -EINVAL;
		f->b = ref(c, val[1], "b", r.b, NODE_ROADM);
		if (f->b < 0)
			return -EINVAL;
		if (f->a == f->b) {
			yf_err(&c->y, val[1], "fibre joins ROADM '%s' to itself",
				r.a);
			return -EINVAL;
		}
		for (int j = 0; j < sc->nfibres; j++) {
			const struct scn_fibre *g = &sc->fibres[j];

			if ((g->a == f->a && g->b == f->b) ||
			    (g->a == f->b && g->b == f->a)) {
				yf_err(&c->y, v, "second fibre between '%s' and "
					"'%s' (first at line %d)", r.a, r.b,
					g->line);
				return -EINVAL;
			}
		}
		f->km = r.km;
		f->wavelengths = seen[3] ? (int)r.wavelengths : (int)wdefault;
		f->loss = r.loss;
		f->line = (int)v->start_mark.line + 1;
		f->col = (int)v->start_mark.column + 1;
		sc->nfibres++;
	}
	return 0;
}

struct task_rec {
	char name[SCN_NAME_MAX + 1];
	char global[SCN_NAME_MAX + 1];
	uint64_t parameters;
	unsigned bytes_per_parameter;
	double work_core_s;
	unsigned rounds;
	long arrival;
	double demand_gbps;
	unsigned split_over;
	double agg_core_s;
};

enum { TF_LOCALS = 2, TF_ROUNDS = 6, TF_ARRIVAL = 7, TF_DEMAND = 8,
       TF_SPLIT = 9, TF_SHARES = 10 };

static const struct yf_field task_fields[] = {
	{ "name", YF_NAME, YF_REQUIRED, offsetof(struct task_rec, name), 0,
	  SCN_NAME_MAX + 1 },
	{ "global", YF_NAME, YF_REQUIRED, offsetof(struct task_rec, global), 0,
	  SCN_NAME_MAX + 1 },
	{ "locals", YF_ANY, YF_REQUIRED, 0, 0, 0 },
	{ "parameters", YF_U64, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct task_rec, parameters), 1e12, 0 },
	{ "bytes_per_parameter", YF_UINT, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct task_rec, bytes_per_parameter), 16, 0 },
	{ "work_core_s", YF_DOUBLE, YF_REQUIRED | YF_NONNEG,
	  offsetof(struct task_rec, work_core_s), 1e6, 0 },
	{ "rounds", YF_UINT, YF_POSITIVE, offsetof(struct task_rec, rounds),
	  1e6, 0 },
	{ "arrival", YF_LONG, 0, offsetof(struct task_rec, arrival), 1e15, 0 },
	{ "demand_gbps", YF_DOUBLE, YF_POSITIVE,
	  offsetof(struct task_rec, demand_gbps), 1e6, 0 },
	{ "split_over", YF_UINT, YF_POSITIVE,
	  offsetof(struct task_rec, split_over), SCN_SPLIT_MAX, 0 },
	{ "shares", YF_ANY, 0, 0, 0, 0 },
	{ "agg_core_s", YF_DOUBLE, YF_NONNEG,
	  offsetof(struct task_rec, agg_core_s), 1e6, 0 },
};

static bool fibre_reachable(const struct scenario *sc, int from, int to);

/*
 * A task's data split: split_over shares (0: as many as locals), and which
 * one each local holds, in locals order (shares NULL: 0, 1, ...).
 */
static int scn_load_shares(struct ctx *c, struct scn_task *t,
			   const char *name, int split, yaml_node_t *at_split,
			   yaml_node_t *shares)
{
	if (split && split < t->nlocals) {
		yf_err(&c->y, at_split, "task '%s': 'split_over' %d is fewer "
		       "than its %d local models", name, split, t->nlocals);
		return -EINVAL;
	}
	t->split_over = split;
	if (!shares)
		return 0;
	if (!split) {
		yf_err(&c->y, shares, "task '%s': 'shares' needs 'split_over' "
		       "(how many shares the data are split into)", name);
		return -EINVAL;
	}
	if (yf_want_seq(&c->y, shares, "shares"))
		return -EINVAL;
	if (yf_seq_len(shares) != (size_t)t->nlocals) {
		yf_err(&c->y, shares, "task '%s': 'shares' lists %zu, one per "
		       "local model (%d)", name, yf_seq_len(shares),
		       t->nlocals);
		return -EINVAL;
	}
	t->share = calloc((size_t)t->nlocals, sizeof(*t->share));
	if (!t->share)
		return -ENOMEM;
	for (int i = 0; i < t->nlocals; i++) {
		yaml_node_t *x = yf_seq_at(&c->y, shares, (size_t)i);
		uint64_t k;

		if (yf_want_scalar(&c->y, x, "shares"))
			return -EINVAL;
		if (!yf_parse_u64(yf_scalar(x), &k) || k >= (uint64_t)split) {
			yf_err(&c->y, x, "task '%s': a share is a whole number "
			       "in [0, %d), got '%s'", name, split,
			       yf_scalar(x));
			return -EINVAL;
		}
		for (int j = 0; j < i; j++)
			if (t->share[j] == (int)k) {
				yf_err(&c->y, x, "task '%s': share %d held "
				       "twice", name, (int)k);
				return -EINVAL;
			}
		t->share[i] = (int)k;
	}
	return 0;
}

int scn_load_task(struct ctx *c, yaml_node_t *v, struct scn_task *t)
{
	struct scenario *sc = c->sc;
	bool seen[NFIELDS(task_fields)];
	yaml_node_t *any[NFIELDS(task_fields)] = { 0 };
	struct task_rec r = { 0 };
	yaml_node_t *locals, *demand;

	if (yf_apply(&c->y, v, "a task", task_fields, NFIELDS(task_fields),
			 &r, seen, any))
		return -EINVAL;
	if (!scn_name_ok(r.name, SCN_TASK_NAME_MAX, true)) {
		yf_err(&c->y, any[0], "bad task name '%s': use 1-%d characters of "
			"[A-Za-z0-9_.-]", r.name, SCN_TASK_NAME_MAX);
		return -EINVAL;
	}
	memcpy(t->name, r.name, strlen(r.name) + 1);
	t->line = (int)v->start_mark.line + 1;
	t->col = (int)v->start_mark.column + 1;
	t->global = ref(c, any[1], "global", r.global, NODE_SERVER);
	if (t->global < 0)
		return -EINVAL;
	if (r.parameters > UINT64_MAX / 16) {
		yf_err(&c->y, v, "task '%s': 'parameters' is too large", r.name);
		return -EINVAL;
	}
	if (!fl_wire_supported(r.bytes_per_parameter)) {
		yf_err(&c->y, any[4], "task '%s': 'bytes_per_parameter' must be "
			"1, 2, 4 or 8 (int8, float16, float32 or float64 on "
			"the wire), got %u", r.name, r.bytes_per_parameter);
		return -EINVAL;
	}
	t->parameters = r.parameters;
	t->bytes_per_parameter = r.bytes_per_parameter;
	{
		struct wire_msg wm;

		if (wire_message(sc, t, &wm)) {
			yf_err(&c->y, any[3], "task '%s': the emulated model "
				"(parameters / scale = %.3g) is too large: at "
				"most %.3g parameters", r.name,
				(double)r.parameters / sc->scale,
				(double)INT_MAX * FL_CLASSES);
			return -EINVAL;
		}
	}
	t->work_core_s = r.work_core_s;
	t->agg_core_s = r.agg_core_s;	/* 0 unless seen */
	t->rounds = seen[TF_ROUNDS] ? r.rounds : 1;
	t->demand_gbps = seen[TF_DEMAND] ? r.demand_gbps : sc->demand_gbps;
	t->arrival = seen[TF_ARRIVAL] ? r.arrival : -1;

	locals = any[TF_LOCALS];
	if (yf_want_seq(&c->y, locals, "locals"))
		return -EINVAL;
	if (yf_seq_len(locals) == 0) {
		yf_err(&c->y, locals, "task '%s' has no local models", r.name);
		return -EINVAL;
	}
	t->locals = calloc(yf_seq_len(locals), sizeof(*t->locals));
	if (!t->locals)
		return -ENOMEM;
	for (size_t i = 0; i < yf_seq_len(locals); i++) {
		yaml_node_t *l = yf_seq_at(&c->y, locals, i);
		int s;

		if (yf_want_scalar(&c->y, l, "locals"))
			return -EINVAL;
		s = ref(c, l, "locals", yf_scalar(l), NODE_SERVER);
		if (s < 0)
			return -EINVAL;
		if (s == t->global) {
			yf_err(&c->y, l, "task '%s': server '%s' holds the global "
				"model and cannot also hold a local one",
				r.name, yf_scalar(l));
			return -EINVAL;
		}
		for (int j = 0; j < t->nlocals; j++)
			if (t->locals[j] == s) {
				yf_err(&c->y, l, "task '%s' lists server '%s' "
					"twice", r.name, yf_scalar(l));
				return -EINVAL;
			}
		if (!fibre_reachable(sc, t->global, s)) {
			yf_err(&c->y, l, "task '%s': server '%s' is not reachable "
				"from global model server '%s'", r.name,
				yf_scalar(l), r.global);
			return -EINVAL;
		}
		t->locals[t->nlocals++] = s;
	}
	if (scn_load_shares(c, t, r.name, seen[TF_SPLIT] ? (int)r.split_over :
			    0, any[TF_SPLIT], any[TF_SHARES]))
		return -EINVAL;
	/* Every server of the task carries demand on its access link. */
	demand = seen[TF_DEMAND] ? any[TF_DEMAND] : v;
	for (int j = -1; j < t->nlocals; j++) {
		int s = j < 0 ? t->global : t->locals[j];

		if (t->demand_gbps > sc->nodes[s].access_gbps) {
			yf_err(&c->y, demand, "task '%s': demand %g Gbit/s "
				"exceeds the access link of server '%s' "
				"(%g Gbit/s)",
				r.name, t->demand_gbps, sc->nodes[s].name,
				sc->nodes[s].access_gbps);
			return -EINVAL;
		}
	}
	if (t->demand_gbps > sc->wavelength_gbps) {
		yf_err(&c->y, demand, "task '%s': demand %g Gbit/s exceeds the "
			"wavelength capacity %g Gbit/s", r.name,
			t->demand_gbps, sc->wavelength_gbps);
		return -EINVAL;
	}
	return 0;
}

void scn_task_release(struct scn_task *t)
{
	free(t->locals);
	free(t->share);
}

void scn_write_split(FILE *f, const struct scn_task *t)
{
	if (t->split_over)
		fprintf(f, ", split_over: %d", t->split_over);
	for (int k = 0; t->share && k < t->nlocals; k++)
		fprintf(f, "%s%d", k ? ", " : ", shares: [", t->share[k]);
	if (t->share)
		fputc(']', f);
}

/* Reachability over fibres between two servers (router → ROADM → ...). */
static bool fibre_reachable(const struct scenario *sc, int from, int to)
{
	int a = sc->nodes[sc->nodes[from].attach].attach;
	int b = sc->nodes[sc->nodes[to].attach].attach;
	int *stack, top = 0;
	bool *seen, found = false;

	if (a == b)
		return true;
	stack = calloc((size_t)sc->nnodes + 1, sizeof(*stack));
	seen = calloc((size_t)sc->nnodes + 1, sizeof(*seen));
	if (!stack || !seen)
		goto out;
	stack[top++] = a;
	seen[a] = true;
	while (top && !found) {
		int u = stack[--top];

		for (int i = 0; i < sc->nfibres; i++) {
			const struct scn_fibre *f = &sc->fibres[i];
			int w = f->a == u ? f->b : f->b == u ? f->a : -1;

			if (w < 0 || seen[w])
				continue;
			if (w == b) {
				found = true;
				break;
			}
			seen[w] = true;
			stack[top++] = w;
		}
	}
out:
	free(stack);
	free(seen);
	return found;
}

int scn_file_order(int la, int ca, int lb, int cb)
{
	if (la != lb)
		return la < lb ? -1 : 1;
	return ca < cb ? -1 : ca > cb;
}

static int cmp_task(const void *x, const void *y)
{
	const struct scn_task *a = x, *b = y;

	if (a->arrival != b->arrival)
		return a->arrival < b->arrival ? -1 : 1;
	return scn_file_order(a->line, a->col, b->line, b->col);
}

static int load_tasks(struct ctx *c, yaml_node_t *seq)
{
	struct scenario *sc = c->sc;
	size_t n;

	if (yf_want_seq(&c->y, seq, "tasks"))
		return -EINVAL;
	n = yf_seq_len(seq);
	sc->tasks = calloc(n + 1, sizeof(*sc->tasks));
	if (!sc->tasks)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *v = yf_seq_at(&c->y, seq, i);
		struct scn_task *t = &sc->tasks[sc->ntasks];
		int err = scn_load_task(c, v, t);

		sc->ntasks++;	/* so scenario_free frees t->locals */
		if (err)
			return err;
		for (int j = 0; j < sc->ntasks - 1; j++)
			if (!strcmp(sc->tasks[j].name, t->name)) {
				yf_err(&c->y, v, "duplicate task name '%s' (first "
					"at line %d)", t->name,
					sc->tasks[j].line);
				return -EINVAL;
			}
	}
	/* Tasks without arrival keep file order after those with one. */
	for (int i = 0; i < sc->ntasks; i++)
		if (sc->tasks[i].arrival < 0)
			sc->tasks[i].arrival = LONG_MAX;
	qsort(sc->tasks, (size_t)sc->ntasks, sizeof(*sc->tasks), cmp_task);
	return 0;
}

static const struct yf_field weight_fields[] = {
	{ "alpha", YF_DOUBLE, YF_NONNEG, offsetof(struct scn_weights, alpha),
	  1e9, 0 },
	{ "beta", YF_DOUBLE, YF_NONNEG, offsetof(struct scn_weights, beta), 1e9,
	  0 },
	{ "reuse", YF_DOUBLE, YF_NONNEG, offsetof(struct scn_weights, reuse), 1,
	  0 },
	{ "adddrop", YF_DOUBLE, YF_NONNEG,
	  offsetof(struct scn_weights, adddrop), 1e9, 0 },
	{ "stretch", YF_DOUBLE, YF_NONNEG,
	  offsetof(struct scn_weights, stretch), 1e9, 0 },
};

static int check_cidr(struct ctx *c, const yaml_node_t *at, const char *s)
{
	char buf[32];
	char *slash, *end;
	struct in_addr a;
	long len;

	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (!slash)
		goto bad;
	*slash = '\0';
	len = strtol(slash + 1, &end, 10);
	if (*end || end == slash + 1 || len < 8 || len > 24)
		goto bad;
	if (inet_pton(AF_INET, buf, &a) != 1)
		goto bad;
	if (ntohl(a.s_addr) & (len == 32 ? 0 : 0xffffffffu >> len))
		goto bad;
	return 0;
bad:
	yf_err(&c->y, at, "'addressing' must be an IPv4 network 'a.b.c.d/len' "
		"with len 8-24 and no host bits, got '%s'", s);
	return -EINVAL;
}

/* Top level: everything but the node lists is a plain field. */
struct top_rec {
	char name[SCN_NAME_MAX + 1];
	char description[1024];
	char source[1024];
	uint64_t seed;
	double scale;
	char addressing[32];
	double wavelength_gbps;
	unsigned wavelengths;
	double demand_gbps;
	double reconfig_ms;
	char relay[16];
	double chunk_kb;
	char never_slower[8];
};

enum {
	T_ADDRESSING = 5, T_DEMAND = 8, T_WEIGHTS, T_ROADMS, T_FIBRES,
	T_ROUTERS, T_SERVERS, T_TASKS, T_POSITIONS, T_EVENTS, T_RECONFIG, T_RELAY, T_CHUNK, T_NEVER_SLOWER,
};

static const struct yf_field top_fields[] = {
	{ "name", YF_NAME, YF_REQUIRED, offsetof(struct top_rec, name), 0,
	  SCN_NAME_MAX + 1 },
	{ "description", YF_TEXT, 0, offsetof(struct top_rec, description), 0,
	  1024 },
	{ "source", YF_TEXT, 0, offsetof(struct top_rec, source), 0, 1024 },
	{ "seed", YF_U64, 0, offsetof(struct top_rec, seed), 0, 0 },
	{ "scale", YF_DOUBLE, YF_POSITIVE, offsetof(struct top_rec, scale), 1e9,
	  0 },
	{ "addressing", YF_TEXT, 0, offsetof(struct top_rec, addressing), 0,
	  32 },
	{ "wavelength_gbps", YF_DOUBLE, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct top_rec, wavelength_gbps), 1e6, 0 },
	{ "wavelengths", YF_UINT, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct top_rec, wavelengths), 4096, 0 },
	{ "demand_gbps", YF_DOUBLE, YF_REQUIRED | YF_POSITIVE,
	  offsetof(struct top_rec, demand_gbps), 1e6, 0 },
	{ "weights", YF_ANY, 0, 0, 0, 0 },
	{ "roadms", YF_ANY, YF_REQUIRED, 0, 0, 0 },
	{ "fibres", YF_ANY, 0, 0, 0, 0 },
	{ "routers", YF_ANY, 0, 0, 0, 0 },
	{ "servers", YF_ANY, 0, 0, 0, 0 },
	{ "tasks", YF_ANY, 0, 0, 0, 0 },
	{ "positions", YF_ANY, 0, 0, 0, 0 },
	{ "events", YF_ANY, 0, 0, 0, 0 },
	{ "reconfig_ms", YF_DOUBLE, YF_NONNEG,
	  offsetof(struct top_rec, reconfig_ms), 1e6, 0 },
	{ "relay", YF_TEXT, 0, offsetof(struct top_rec, relay), 0, 16 },
	{ "chunk_kb", YF_DOUBLE, YF_POSITIVE,
	  offsetof(struct top_rec, chunk_kb), 1e9, 0 },
	{ "never_slower", YF_TEXT, 0, offsetof(struct top_rec, never_slower),
	  0, 8 },
};

static size_t count_items(yaml_node_t *n)
{
	return n && n->type == YAML_SEQUENCE_NODE ? yf_seq_len(n) : 0;
}

static int load_top(struct ctx *c, yaml_node_t *root)
{
	struct scenario *sc = c->sc;
	bool seen[NFIELDS(top_fields)];
	yaml_node_t *any[NFIELDS(top_fields)] = { 0 };
	struct top_rec r = { 0 };
	size_t nodes;
	int err;

	if (yf_apply(&c->y, root, "the scenario", top_fields,
			 NFIELDS(top_fields), &r, seen, any))
		return -EINVAL;
	if (!scn_name_ok(r.name, SCN_NAME_MAX, true)) {
		yf_err(&c->y, any[0], "bad scenario name '%s'", r.name);
		return -EINVAL;
	}
	snprintf(sc->name, sizeof(sc->name), "%s", r.name);
	sc->seed = seen[3] ? r.seed : 1;
	sc->scale = seen[4] ? r.scale : 1.0;
	snprintf(sc->addressing, sizeof(sc->addressing), "%s",
		 seen[T_ADDRESSING] ? r.addressing : "198.18.0.0/15");
	if (check_cidr(c, any[T_ADDRESSING] ? any[T_ADDRESSING] : root,
		       sc->addressing))
		return -EINVAL;
	sc->wavelength_gbps = r.wavelength_gbps;
	sc->demand_gbps = r.demand_gbps;
	sc->reconfig_s = seen[T_RECONFIG] ? r.reconfig_ms / 1e3 :
					    SCN_RECONFIG_MS / 1e3;
	if (sc->demand_gbps > sc->wavelength_gbps) {
		yf_err(&c->y, any[T_DEMAND], "'demand_gbps' (%g) exceeds "
			"'wavelength_gbps' (%g)", sc->demand_gbps,
			sc->wavelength_gbps);
		return -EINVAL;
	}
	sc->relay = SCN_RELAY_PIPELINED;
	if (seen[T_RELAY]) {
		sc->relay_line = (int)any[T_RELAY]->start_mark.line + 1;
		sc->relay_col = (int)any[T_RELAY]->start_mark.column + 1;
	}
	if (seen[T_RELAY] && !strcmp(r.relay, "store")) {
		sc->relay = SCN_RELAY_STORE;
	} else if (seen[T_RELAY] && strcmp(r.relay, "pipelined")) {
		yf_err(&c->y, any[T_RELAY], "'relay' must be 'store' or "
			"'pipelined', got '%s'", r.relay);
		return -EINVAL;
	}
	sc->chunk_bytes = 1e3 * (seen[T_CHUNK] ? r.chunk_kb : SCN_CHUNK_KB);
	sc->never_slower = !seen[T_NEVER_SLOWER] ||
			   !strcmp(r.never_slower, "true");
	if (seen[T_NEVER_SLOWER] && strcmp(r.never_slower, "true") &&
	    strcmp(r.never_slower, "false")) {
		yf_err(&c->y, any[T_NEVER_SLOWER], "'never_slower' must be "
			"true or false, got '%s'", r.never_slower);
		return -EINVAL;
	}
	sc->weights = (struct scn_weights){ 1.0, SCN_BETA, 0.1, 0.05,
					    SCN_STRETCH };
	if (any[T_WEIGHTS]) {
		bool wseen[NFIELDS(weight_fields)];
		yaml_node_t *wat[NFIELDS(weight_fields)];
		struct scn_weights w = sc->weights;

		if (yf_apply(&c->y, any[T_WEIGHTS], "'weights'",
				 weight_fields, NFIELDS(weight_fields), &w,
				 wseen, wat))
			return -EINVAL;
		for (size_t i = 0; i < NFIELDS(weight_fields); i++)
			if (wseen[i])
				memcpy((char *)&sc->weights +
					       weight_fields[i].off,
				       (char *)&w + weight_fields[i].off,
				       sizeof(double));
		if (sc->weights.stretch > 0 && sc->weights.stretch < 1) {
			yf_err(&c->y, wat[NFIELDS(weight_fields) - 1],
			       "'stretch' must be 0 (no bound) or at least 1, "
			       "got %g", sc->weights.stretch);
			return -EINVAL;
		}
	}

	nodes = count_items(any[T_ROADMS]) + count_items(any[T_ROUTERS]) +
		count_items(any[T_SERVERS]);
	sc->nodes = calloc(nodes + 1, sizeof(*sc->nodes));
	if (!sc->nodes)
		return -ENOMEM;
	if (load_roadms(c, any[T_ROADMS]))
		return -EINVAL;
	if (any[T_ROUTERS] && load_routers(c, any[T_ROUTERS], false))
		return -EINVAL;
	if (any[T_SERVERS] && load_servers(c, any[T_SERVERS], false))
		return -EINVAL;
	if (any[T_ROUTERS] && load_routers(c, any[T_ROUTERS], true))
		return -EINVAL;
	if (any[T_SERVERS] && load_servers(c, any[T_SERVERS], true))
		return -EINVAL;
	if (any[T_POSITIONS] && load_positions(c, any[T_POSITIONS]))
		return -EINVAL;
	if (any[T_FIBRES]) {
		err = load_fibres(c, any[T_FIBRES], r.wavelengths);
		if (err)
			return err;
	}
	if (any[T_TASKS]) {
		err = load_tasks(c, any[T_TASKS]);
		if (err)
			return err;
	}
	if (any[T_EVENTS]) {
		err = scn_load_events(c, any[T_EVENTS]);
		if (err)
			return err;
	}
	/*
	 * Pipelined by default, but an aggregator cannot stream a mean of
	 * int8 parameters, whose one scale it knows only at the end: a file
	 * with such a task relays that store unless it says otherwise.
	 */
	for (int i = 0; !seen[T_RELAY] && i < sc->ntasks + sc->nevents; i++) {
		const struct scn_event *e = i < sc->ntasks ? NULL :
					    &sc->events[i - sc->ntasks];

		if (e && e->kind != SCN_EV_ARRIVE)
			continue;
		if ((e ? e->task.bytes_per_parameter :
			 sc->tasks[i].bytes_per_parameter) == 1)
			sc->relay = SCN_RELAY_STORE;
	}
	return 0;
}

/* ---- entry points ------------------------------------------------------ */

struct scenario *scenario_parse(const char *buf, size_t len, const char *name,
				struct scn_error *err)
{
	yaml_document_t doc;
	struct scenario *sc;
	struct ctx c = { .y = { .err = err } };
	yaml_node_t *root;
	int rc;

	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", name);
	sc = calloc(1, sizeof(*sc));
	if (!sc) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	snprintf(sc->file, sizeof(sc->file), "%s", name);
	c.sc = sc;
	rc = yf_load(buf, len, "scenario", "a scenario", &doc, &root, err);
	if (!rc) {
		c.y.doc = &doc;
		rc = load_top(&c, root);
		if (rc == -ENOMEM)
			snprintf(err->msg, sizeof(err->msg), "out of memory");
		yaml_document_delete(&doc);
	}
	if (rc) {
		scenario_free(sc);
		errno = -rc;
		return NULL;
	}
	return sc;
}

struct scenario *scenario_load(const char *path, struct scn_error *err)
{
	struct scenario *sc;
	size_t len;
	char *buf;
	int e = yf_read_file(path, &buf, &len, err), saved;

	if (e) {
		errno = -e;
		return NULL;
	}
	sc = scenario_parse(buf ? buf : "", len, path, err);
	saved = errno;
	free(buf);
	errno = saved;
	return sc;
}

void scenario_free(struct scenario *sc)
{
	if (!sc)
		return;
	for (int i = 0; i < sc->ntasks; i++)
		scn_task_release(&sc->tasks[i]);
	free(sc->tasks);
	scn_events_release(sc);
	free(sc->fibres);
	free(sc->nodes);
	free(sc->bg);
	free(sc);
}

int scenario_find(const struct scenario *sc, const char *name)
{
	for (int i = 0; i < sc->nnodes; i++)
		if (!strcmp(sc->nodes[i].name, name))
			return i;
	return -1;
}

bool scenario_has_loss(const struct scenario *sc)
{
	for (int i = 0; i < sc->nfibres; i++)
		if (sc->fibres[i].loss > 0)
			return true;
	return false;
}

int scenario_fibre(const struct scenario *sc, int a, int b)
{
	/* at most one fibre joins a pair (load_fibres) */
	for (int i = 0; i < sc->nfibres; i++) {
		const struct scn_fibre *f = &sc->fibres[i];

		if ((f->a == a && f->b == b) || (f->a == b && f->b == a))
			return i;
	}
	return -1;
}

/* ---- writing ----------------------------------------------------------- */

int scenario_write(const struct scenario *sc, FILE *f)
{
	const struct scn_weights *w = &sc->weights;
	int wl = 1;
	bool any;

	for (int i = 0; i < sc->nfibres; i++)
		if (sc->fibres[i].wavelengths > wl)
			wl = sc->fibres[i].wavelengths;
	/* %.17g: every number reads back as the same double */
	fprintf(f, "# written by twinlab (scenario_write)\n"
		   "name: %s\nseed: %llu\nscale: %.17g\naddressing: %s\n"
		   "wavelength_gbps: %.17g\nwavelengths: %d\n"
		   "demand_gbps: %.17g\nreconfig_ms: %.17g\n"
		   "weights: {alpha: %.17g, beta: %.17g, reuse: %.17g, "
		   "adddrop: %.17g, stretch: %.17g}\nrelay: %s\n"
		   "chunk_kb: %.17g\n"
		   "never_slower: %s\n",
		sc->name, (unsigned long long)sc->seed, sc->scale,
		sc->addressing, sc->wavelength_gbps, wl, sc->demand_gbps,
		sc->reconfig_s * 1e3, w->alpha, w->beta, w->reuse, w->adddrop,
		w->stretch, 		sc->relay == SCN_RELAY_PIPELINED ? "pipelined" : "store",
		sc->chunk_bytes / 1e3, sc->never_slower ? "true" : "false");
	fputs("roadms: [", f);
	any = false;
	for (int i = 0; i < sc->nnodes; i++)
		if (sc->nodes[i].kind == NODE_ROADM) {
			fprintf(f, "%s%s", any ? ", " : "", sc->nodes[i].name);
			any = true;
		}
	fputs("]\n", f);
	any = false;
	for (int i = 0; i < sc->nnodes; i++)
		if (sc->nodes[i].placed) {
			fprintf(f, "%s  %s: [%.17g, %.17g]\n",
				any ? "" : "positions:\n", sc->nodes[i].name,
				sc->nodes[i].x, sc->nodes[i].y);
			any = true;
		}
	if (sc->nfibres)
		fputs("fibres:\n", f);
	for (int i = 0; i < sc->nfibres; i++) {
		const struct scn_fibre *fb = &sc->fibres[i];

		fprintf(f, "  - {a: %s, b: %s, km: %.17g, wavelengths: %d",
			sc->nodes[fb->a].name, sc->nodes[fb->b].name, fb->km,
			fb->wavelengths);
		if (fb->loss > 0)
			fprintf(f, ", loss: %.17g", fb->loss);
		fputs("}\n", f);
	}
	any = false;
	for (int i = 0; i < sc->nnodes; i++) {
		const struct scn_node *n = &sc->nodes[i];

		if (n->kind != NODE_ROUTER)
			continue;
		fprintf(f, "%s  - {name: %s, roadm: %s}\n",
			any ? "" : "routers:\n", n->name,
			sc->nodes[n->attach].name);
		any = true;
	}
	any = false;
	for (int i = 0; i < sc->nnodes; i++) {
		const struct scn_node *n = &sc->nodes[i];

		if (n->kind != NODE_SERVER)
			continue;
		fprintf(f, "%s  - {name: %s, router: %s, access_gbps: %.17g, "
			   "access_km: %.17g, cpu: %.17g, memory_mib: %.17g}\n",
			any ? "" : "servers:\n", n->name,
			sc->nodes[n->attach].name, n->access_gbps,
			n->access_km, n->cpu, n->memory_mib);
		any = true;
	}
	if (sc->ntasks)
		fputs("tasks:\n", f);
	for (int i = 0; i < sc->ntasks; i++) {
		const struct scn_task *t = &sc->tasks[i];

		fprintf(f, "  - {name: %s, global: %s, locals: [", t->name,
			sc->nodes[t->global].name);
		for (int k = 0; k < t->nlocals; k++)
			fprintf(f, "%s%s", k ? ", " : "",
				sc->nodes[t->locals[k]].name);
		fprintf(f, "],\n     parameters: %llu, bytes_per_parameter: "
			   "%u, work_core_s: %.17g, rounds: %u,\n"
			   "     demand_gbps: %.17g",
			(unsigned long long)t->parameters,
			t->bytes_per_parameter, t->work_core_s, t->rounds,
			t->demand_gbps);
		if (t->agg_core_s > 0)
			fprintf(f, ", agg_core_s: %.17g", t->agg_core_s);
		/* a task without arrival keeps its place in file order */
		if (t->arrival != LONG_MAX)
			fprintf(f, ", arrival: %ld", t->arrival);
		scn_write_split(f, t);
		fputs("}\n", f);
	}
	scn_events_write(sc, f);
	return ferror(f) ? -EIO : 0;
}

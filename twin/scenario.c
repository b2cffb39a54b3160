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
#include "wire.h"

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

struct ctx {
	yaml_document_t *doc;
	struct scn_error *err;
	struct scenario *sc;
};

static void set_err(struct ctx *c, const yaml_node_t *at, const char *fmt,
		    ...) __attribute__((format(printf, 3, 4)));

static void set_err(struct ctx *c, const yaml_node_t *at, const char *fmt, ...)
{
	va_list ap;

	c->err->line = at ? (int)at->start_mark.line + 1 : 0;
	c->err->col = at ? (int)at->start_mark.column + 1 : 0;
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
}

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

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static const char *type_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

static int want_scalar(struct ctx *c, const yaml_node_t *n, const char *key)
{
	if (n->type == YAML_SCALAR_NODE)
		return 0;
	set_err(c, n, "'%s' must be a scalar, not %s", key, type_name(n));
	return -EINVAL;
}

static int get_double(struct ctx *c, const yaml_node_t *n, const char *key,
		      double *out)
{
	const char *s;
	char *end;
	double v;

	if (want_scalar(c, n, key))
		return -EINVAL;
	s = scalar(n);
	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v)) {
		set_err(c, n, "'%s' must be a finite number, got '%s'", key, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int get_u64(struct ctx *c, const yaml_node_t *n, const char *key,
		   uint64_t *out)
{
	const char *s;
	char *end;
	unsigned long long v;

	if (want_scalar(c, n, key))
		return -EINVAL;
	s = scalar(n);
	errno = 0;
	v = strtoull(s, &end, 10);
	/* strtoull skips blanks and negates "-1": only digits are taken. */
	if (*s < '0' || *s > '9' || *end || errno) {
		set_err(c, n, "'%s' must be a non-negative integer, got '%s'",
			key, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

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

/* ---- field tables ------------------------------------------------------ */

enum ftype { F_DOUBLE, F_U64, F_UINT, F_LONG, F_NAME, F_TEXT, F_ANY };

#define F_REQUIRED 1u
#define F_POSITIVE 2u		/* > 0 */
#define F_NONNEG 4u		/* >= 0 */

struct field {
	const char *key;
	enum ftype type;
	unsigned flags;
	size_t off;		/* into the target struct, F_ANY: unused */
	double max;		/* 0: no upper bound */
	size_t len;		/* F_NAME/F_TEXT: buffer size */
};

/*
 * Fill *target from mapping n by table f. seen[i] is set for each field
 * found; value nodes of F_ANY fields are returned through any[i].
 */
static int apply_fields(struct ctx *c, yaml_node_t *n, const char *what,
			const struct field *f, size_t nf, void *target,
			bool *seen, yaml_node_t **any)
{
	yaml_node_pair_t *p;

	if (n->type != YAML_MAPPING_NODE) {
		set_err(c, n, "%s must be a mapping, not %s", what,
			type_name(n));
		return -EINVAL;
	}
	memset(seen, 0, nf * sizeof(*seen));
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *key;
		char *dst;
		size_t i;

		if (k->type != YAML_SCALAR_NODE) {
			set_err(c, k, "keys of %s must be scalars", what);
			return -EINVAL;
		}
		key = scalar(k);
		for (i = 0; i < nf; i++)
			if (!strcmp(f[i].key, key))
				break;
		if (i == nf) {
			set_err(c, k, "unknown key '%s' in %s", key, what);
			return -EINVAL;
		}
		if (seen[i]) {
			set_err(c, k, "duplicate key '%s' in %s", key, what);
			return -EINVAL;
		}
		seen[i] = true;
		dst = (char *)target + f[i].off;
		switch (f[i].type) {
		case F_DOUBLE: {
			double d;

			if (get_double(c, v, key, &d))
				return -EINVAL;
			if ((f[i].flags & F_POSITIVE) && !(d > 0)) {
				set_err(c, v, "'%s' must be > 0, got '%s'", key,
					scalar(v));
				return -EINVAL;
			}
			if ((f[i].flags & F_NONNEG) && d < 0) {
				set_err(c, v, "'%s' must be >= 0, got '%s'",
					key, scalar(v));
				return -EINVAL;
			}
			if (f[i].max > 0 && d > f[i].max) {
				set_err(c, v, "'%s' must be <= %g, got '%s'",
					key, f[i].max, scalar(v));
				return -EINVAL;
			}
			memcpy(dst, &d, sizeof(d));
			break;
		}
		case F_U64:
		case F_UINT:
		case F_LONG: {
			uint64_t u;

			if (get_u64(c, v, key, &u))
				return -EINVAL;
			if ((f[i].flags & F_POSITIVE) && u == 0) {
				set_err(c, v, "'%s' must be > 0, got '%s'", key,
					scalar(v));
				return -EINVAL;
			}
			if (f[i].max > 0 && (double)u > f[i].max) {
				set_err(c, v, "'%s' must be <= %.0f, got '%s'",
					key, f[i].max, scalar(v));
				return -EINVAL;
			}
			if (f[i].type == F_U64) {
				memcpy(dst, &u, sizeof(u));
			} else if (f[i].type == F_UINT) {
				unsigned x = (unsigned)u;

				memcpy(dst, &x, sizeof(x));
			} else {
				long x = (long)u;

				memcpy(dst, &x, sizeof(x));
			}
			break;
		}
		case F_NAME:
		case F_TEXT:
			if (want_scalar(c, v, key))
				return -EINVAL;
			if (strlen(scalar(v)) >= f[i].len) {
				set_err(c, v, "'%s' is too long (at most %zu "
					"characters): '%s'", key,
					f[i].len - 1, scalar(v));
				return -EINVAL;
			}
			snprintf(dst, f[i].len, "%s", scalar(v));
			break;
		case F_ANY:
			break;
		}
		if (any)
			any[i] = v;
	}
	for (size_t i = 0; i < nf; i++)
		if ((f[i].flags & F_REQUIRED) && !seen[i]) {
			set_err(c, n, "%s lacks required key '%s'", what,
				f[i].key);
			return -EINVAL;
		}
	return 0;
}

/* ---- nodes ------------------------------------------------------------- */

static int add_node(struct ctx *c, const yaml_node_t *at, const char *name,
		    enum node_kind kind)
{
	struct scenario *sc = c->sc;
	struct scn_node *n;
	int dup;

	if (!scn_name_ok(name, SCN_NODE_NAME_MAX, false)) {
		set_err(c, at, "bad %s name '%s': use 1-%d characters of "
			"[A-Za-z0-9_] and inner '-'", node_kind_name(kind),
			name, SCN_NODE_NAME_MAX);
		return -EINVAL;
	}
	dup = scenario_find(sc, name);
	if (dup >= 0) {
		set_err(c, at, "duplicate node name '%s' (first declared as "
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

static int want_seq(struct ctx *c, yaml_node_t *n, const char *key)
{
	if (n->type == YAML_SEQUENCE_NODE)
		return 0;
	set_err(c, n, "'%s' must be a list, not %s", key, type_name(n));
	return -EINVAL;
}

static size_t seq_len(const yaml_node_t *n)
{
	return (size_t)(n->data.sequence.items.top -
			n->data.sequence.items.start);
}

static yaml_node_t *seq_at(struct ctx *c, yaml_node_t *n, size_t i)
{
	return yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
}

/* Look up a reference of the wanted kind; error at the referring node. */
static int ref(struct ctx *c, const yaml_node_t *at, const char *key,
	       const char *name, enum node_kind kind)
{
	int i = scenario_find(c->sc, name);

	if (i < 0) {
		set_err(c, at, "'%s' names unknown %s '%s'", key,
			node_kind_name(kind), name);
		return -EINVAL;
	}
	if (c->sc->nodes[i].kind != kind) {
		set_err(c, at, "'%s' must name a %s, but '%s' is a %s", key,
			node_kind_name(kind), name,
			node_kind_name(c->sc->nodes[i].kind));
		return -EINVAL;
	}
	return i;
}

static int load_roadms(struct ctx *c, yaml_node_t *seq)
{
	if (want_seq(c, seq, "roadms"))
		return -EINVAL;
	if (seq_len(seq) == 0) {
		set_err(c, seq, "'roadms' must list at least one ROADM");
		return -EINVAL;
	}
	for (size_t i = 0; i < seq_len(seq); i++) {
		yaml_node_t *v = seq_at(c, seq, i);

		if (want_scalar(c, v, "roadms"))
			return -EINVAL;
		if (add_node(c, v, scalar(v), NODE_ROADM) < 0)
			return -EINVAL;
	}
	return 0;
}

struct router_rec {
	char name[SCN_NAME_MAX + 1];
	char roadm[SCN_NAME_MAX + 1];
};

static const struct field router_fields[] = {
	{ "name", F_NAME, F_REQUIRED, offsetof(struct router_rec, name), 0,
	  SCN_NAME_MAX + 1 },
	{ "roadm", F_NAME, F_REQUIRED, offsetof(struct router_rec, roadm), 0,
	  SCN_NAME_MAX + 1 },
};

/* Pass 1 declares routers; their ROADM is resolved in pass 2. */
static int load_routers(struct ctx *c, yaml_node_t *seq, bool resolve)
{
	bool seen[2];
	yaml_node_t *val[2];

	if (want_seq(c, seq, "routers"))
		return -EINVAL;
	for (size_t i = 0; i < seq_len(seq); i++) {
		yaml_node_t *v = seq_at(c, seq, i);
		struct router_rec r = { 0 };
		int self, rd;

		if (apply_fields(c, v, "a router", router_fields, 2, &r, seen,
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
			set_err(c, val[1], "ROADM '%s' already has router '%s'; "
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

static const struct field server_fields[] = {
	{ "name", F_NAME, F_REQUIRED, offsetof(struct server_rec, name), 0,
	  SCN_NAME_MAX + 1 },
	{ "router", F_NAME, F_REQUIRED, offsetof(struct server_rec, router), 0,
	  SCN_NAME_MAX + 1 },
	{ "access_gbps", F_DOUBLE, F_REQUIRED | F_POSITIVE,
	  offsetof(struct server_rec, access_gbps), 1e6, 0 },
	{ "access_km", F_DOUBLE, F_NONNEG,
	  offsetof(struct server_rec, access_km), 1e5, 0 },
	{ "cpu", F_DOUBLE, F_REQUIRED | F_POSITIVE,
	  offsetof(struct server_rec, cpu), 4096, 0 },
	{ "memory_mib", F_DOUBLE, F_REQUIRED | F_POSITIVE,
	  offsetof(struct server_rec, memory_mib), 1 << 24, 0 },
};

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

static int load_servers(struct ctx *c, yaml_node_t *seq, bool resolve)
{
	bool seen[NFIELDS(server_fields)];
	yaml_node_t *val[NFIELDS(server_fields)];

	if (want_seq(c, seq, "servers"))
		return -EINVAL;
	for (size_t i = 0; i < seq_len(seq); i++) {
		yaml_node_t *v = seq_at(c, seq, i);
		struct server_rec r = { 0 };
		struct scn_node *n;
		int self, rt;

		if (apply_fields(c, v, "a server", server_fields,
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
};

static const struct field fibre_fields[] = {
	{ "a", F_NAME, F_REQUIRED, offsetof(struct fibre_rec, a), 0,
	  SCN_NAME_MAX + 1 },
	{ "b", F_NAME, F_REQUIRED, offsetof(struct fibre_rec, b), 0,
	  SCN_NAME_MAX + 1 },
	{ "km", F_DOUBLE, F_REQUIRED | F_POSITIVE,
	  offsetof(struct fibre_rec, km), 1e5, 0 },
	{ "wavelengths", F_UINT, F_POSITIVE,
	  offsetof(struct fibre_rec, wavelengths), 4096, 0 },
};

static int load_fibres(struct ctx *c, yaml_node_t *seq, unsigned wdefault)
{
	struct scenario *sc = c->sc;
	bool seen[NFIELDS(fibre_fields)];
	yaml_node_t *val[NFIELDS(fibre_fields)];

	if (want_seq(c, seq, "fibres"))
		return -EINVAL;
	sc->fibres = calloc(seq_len(seq) + 1, sizeof(*sc->fibres));
	if (!sc->fibres)
		return -ENOMEM;
	for (size_t i = 0; i < seq_len(seq); i++) {
		yaml_node_t *v = seq_at(c, seq, i);
		struct fibre_rec r = { 0 };
		struct scn_fibre *f = &sc->fibres[sc->nfibres];

		if (apply_fields(c, v, "a fibre", fibre_fields,
				 NFIELDS(fibre_fields), &r, seen, val))
			return -EINVAL;
		f->a = ref(c, val[0], "a", r.a, NODE_ROADM);
		if (f->a < 0)
			return -EINVAL;
		f->b = ref(c, val[1], "b", r.b, NODE_ROADM);
		if (f->b < 0)
			return -EINVAL;
		if (f->a == f->b) {
			set_err(c, val[1], "fibre joins ROADM '%s' to itself",
				r.a);
			return -EINVAL;
		}
		for (int j = 0; j < sc->nfibres; j++) {
			const struct scn_fibre *g = &sc->fibres[j];

			if ((g->a == f->a && g->b == f->b) ||
			    (g->a == f->b && g->b == f->a)) {
				set_err(c, v, "second fibre between '%s' and "
					"'%s' (first at line %d)", r.a, r.b,
					g->line);
				return -EINVAL;
			}
		}
		f->km = r.km;
		f->wavelengths = seen[3] ? (int)r.wavelengths : (int)wdefault;
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
};

enum { TF_LOCALS = 2, TF_ROUNDS = 6, TF_ARRIVAL = 7, TF_DEMAND = 8 };

static const struct field task_fields[] = {
	{ "name", F_NAME, F_REQUIRED, offsetof(struct task_rec, name), 0,
	  SCN_NAME_MAX + 1 },
	{ "global", F_NAME, F_REQUIRED, offsetof(struct task_rec, global), 0,
	  SCN_NAME_MAX + 1 },
	{ "locals", F_ANY, F_REQUIRED, 0, 0, 0 },
	{ "parameters", F_U64, F_REQUIRED | F_POSITIVE,
	  offsetof(struct task_rec, parameters), 1e12, 0 },
	{ "bytes_per_parameter", F_UINT, F_REQUIRED | F_POSITIVE,
	  offsetof(struct task_rec, bytes_per_parameter), 16, 0 },
	{ "work_core_s", F_DOUBLE, F_REQUIRED | F_NONNEG,
	  offsetof(struct task_rec, work_core_s), 1e6, 0 },
	{ "rounds", F_UINT, F_POSITIVE, offsetof(struct task_rec, rounds),
	  1e6, 0 },
	{ "arrival", F_LONG, 0, offsetof(struct task_rec, arrival), 1e15, 0 },
	{ "demand_gbps", F_DOUBLE, F_POSITIVE,
	  offsetof(struct task_rec, demand_gbps), 1e6, 0 },
};

static bool fibre_reachable(const struct scenario *sc, int from, int to);

static int load_task(struct ctx *c, yaml_node_t *v, struct scn_task *t)
{
	struct scenario *sc = c->sc;
	bool seen[NFIELDS(task_fields)];
	yaml_node_t *any[NFIELDS(task_fields)] = { 0 };
	struct task_rec r = { 0 };
	yaml_node_t *locals, *demand;

	if (apply_fields(c, v, "a task", task_fields, NFIELDS(task_fields),
			 &r, seen, any))
		return -EINVAL;
	if (!scn_name_ok(r.name, SCN_TASK_NAME_MAX, true)) {
		set_err(c, any[0], "bad task name '%s': use 1-%d characters of "
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
		set_err(c, v, "task '%s': 'parameters' is too large", r.name);
		return -EINVAL;
	}
	if (!fl_wire_supported(r.bytes_per_parameter)) {
		set_err(c, any[4], "task '%s': 'bytes_per_parameter' must be "
			"1, 2, 4 or 8 (int8, float16, float32 or float64 on "
			"the wire), got %u", r.name, r.bytes_per_parameter);
		return -EINVAL;
	}
	t->parameters = r.parameters;
	t->bytes_per_parameter = r.bytes_per_parameter;
	{
		struct wire_msg wm;

		if (wire_message(sc, t, &wm)) {
			set_err(c, any[3], "task '%s': the emulated model "
				"(parameters / scale = %.3g) is too large: at "
				"most %.3g parameters", r.name,
				(double)r.parameters / sc->scale,
				(double)INT_MAX * FL_CLASSES);
			return -EINVAL;
		}
	}
	t->work_core_s = r.work_core_s;
	t->rounds = seen[TF_ROUNDS] ? r.rounds : 1;
	t->demand_gbps = seen[TF_DEMAND] ? r.demand_gbps : sc->demand_gbps;
	t->arrival = seen[TF_ARRIVAL] ? r.arrival : -1;

	locals = any[TF_LOCALS];
	if (want_seq(c, locals, "locals"))
		return -EINVAL;
	if (seq_len(locals) == 0) {
		set_err(c, locals, "task '%s' has no local models", r.name);
		return -EINVAL;
	}
	t->locals = calloc(seq_len(locals), sizeof(*t->locals));
	if (!t->locals)
		return -ENOMEM;
	for (size_t i = 0; i < seq_len(locals); i++) {
		yaml_node_t *l = seq_at(c, locals, i);
		int s;

		if (want_scalar(c, l, "locals"))
			return -EINVAL;
		s = ref(c, l, "locals", scalar(l), NODE_SERVER);
		if (s < 0)
			return -EINVAL;
		if (s == t->global) {
			set_err(c, l, "task '%s': server '%s' holds the global "
				"model and cannot also hold a local one",
				r.name, scalar(l));
			return -EINVAL;
		}
		for (int j = 0; j < t->nlocals; j++)
			if (t->locals[j] == s) {
				set_err(c, l, "task '%s' lists server '%s' "
					"twice", r.name, scalar(l));
				return -EINVAL;
			}
		if (!fibre_reachable(sc, t->global, s)) {
			set_err(c, l, "task '%s': server '%s' is not reachable "
				"from global model server '%s'", r.name,
				scalar(l), r.global);
			return -EINVAL;
		}
		t->locals[t->nlocals++] = s;
	}
	/* Every server of the task carries demand on its access link. */
	demand = seen[TF_DEMAND] ? any[TF_DEMAND] : v;
	for (int j = -1; j < t->nlocals; j++) {
		int s = j < 0 ? t->global : t->locals[j];

		if (t->demand_gbps > sc->nodes[s].access_gbps) {
			set_err(c, demand, "task '%s': demand %g Gbit/s "
				"exceeds the access link of server '%s' "
				"(%g Gbit/s)",
				r.name, t->demand_gbps, sc->nodes[s].name,
				sc->nodes[s].access_gbps);
			return -EINVAL;
		}
	}
	if (t->demand_gbps > sc->wavelength_gbps) {
		set_err(c, demand, "task '%s': demand %g Gbit/s exceeds the "
			"wavelength capacity %g Gbit/s", r.name,
			t->demand_gbps, sc->wavelength_gbps);
		return -EINVAL;
	}
	return 0;
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

static int cmp_task(const void *x, const void *y)
{
	const struct scn_task *a = x, *b = y;

	if (a->arrival != b->arrival)
		return a->arrival < b->arrival ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->col < b->col ? -1 : a->col > b->col;
}

static int load_tasks(struct ctx *c, yaml_node_t *seq)
{
	struct scenario *sc = c->sc;
	size_t n;

	if (want_seq(c, seq, "tasks"))
		return -EINVAL;
	n = seq_len(seq);
	sc->tasks = calloc(n + 1, sizeof(*sc->tasks));
	if (!sc->tasks)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *v = seq_at(c, seq, i);
		struct scn_task *t = &sc->tasks[sc->ntasks];
		int err = load_task(c, v, t);

		sc->ntasks++;	/* so scenario_free frees t->locals */
		if (err)
			return err;
		for (int j = 0; j < sc->ntasks - 1; j++)
			if (!strcmp(sc->tasks[j].name, t->name)) {
				set_err(c, v, "duplicate task name '%s' (first "
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

static const struct field weight_fields[] = {
	{ "alpha", F_DOUBLE, F_NONNEG, offsetof(struct scn_weights, alpha),
	  1e9, 0 },
	{ "beta", F_DOUBLE, F_NONNEG, offsetof(struct scn_weights, beta), 1e9,
	  0 },
	{ "reuse", F_DOUBLE, F_NONNEG, offsetof(struct scn_weights, reuse), 1,
	  0 },
	{ "adddrop", F_DOUBLE, F_NONNEG,
	  offsetof(struct scn_weights, adddrop), 1e9, 0 },
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
	set_err(c, at, "'addressing' must be an IPv4 network 'a.b.c.d/len' "
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
};

enum {
	T_ADDRESSING = 5, T_DEMAND = 8, T_WEIGHTS, T_ROADMS, T_FIBRES,
	T_ROUTERS, T_SERVERS, T_TASKS,
};

static const struct field top_fields[] = {
	{ "name", F_NAME, F_REQUIRED, offsetof(struct top_rec, name), 0,
	  SCN_NAME_MAX + 1 },
	{ "description", F_TEXT, 0, offsetof(struct top_rec, description), 0,
	  1024 },
	{ "source", F_TEXT, 0, offsetof(struct top_rec, source), 0, 1024 },
	{ "seed", F_U64, 0, offsetof(struct top_rec, seed), 0, 0 },
	{ "scale", F_DOUBLE, F_POSITIVE, offsetof(struct top_rec, scale), 1e9,
	  0 },
	{ "addressing", F_TEXT, 0, offsetof(struct top_rec, addressing), 0,
	  32 },
	{ "wavelength_gbps", F_DOUBLE, F_REQUIRED | F_POSITIVE,
	  offsetof(struct top_rec, wavelength_gbps), 1e6, 0 },
	{ "wavelengths", F_UINT, F_REQUIRED | F_POSITIVE,
	  offsetof(struct top_rec, wavelengths), 4096, 0 },
	{ "demand_gbps", F_DOUBLE, F_REQUIRED | F_POSITIVE,
	  offsetof(struct top_rec, demand_gbps), 1e6, 0 },
	{ "weights", F_ANY, 0, 0, 0, 0 },
	{ "roadms", F_ANY, F_REQUIRED, 0, 0, 0 },
	{ "fibres", F_ANY, 0, 0, 0, 0 },
	{ "routers", F_ANY, 0, 0, 0, 0 },
	{ "servers", F_ANY, 0, 0, 0, 0 },
	{ "tasks", F_ANY, 0, 0, 0, 0 },
};

static size_t count_items(yaml_node_t *n)
{
	return n && n->type == YAML_SEQUENCE_NODE ? seq_len(n) : 0;
}

static int load_top(struct ctx *c, yaml_node_t *root)
{
	struct scenario *sc = c->sc;
	bool seen[NFIELDS(top_fields)];
	yaml_node_t *any[NFIELDS(top_fields)] = { 0 };
	struct top_rec r = { 0 };
	size_t nodes;
	int err;

	if (apply_fields(c, root, "the scenario", top_fields,
			 NFIELDS(top_fields), &r, seen, any))
		return -EINVAL;
	if (!scn_name_ok(r.name, SCN_NAME_MAX, true)) {
		set_err(c, any[0], "bad scenario name '%s'", r.name);
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
	if (sc->demand_gbps > sc->wavelength_gbps) {
		set_err(c, any[T_DEMAND], "'demand_gbps' (%g) exceeds "
			"'wavelength_gbps' (%g)", sc->demand_gbps,
			sc->wavelength_gbps);
		return -EINVAL;
	}
	sc->weights = (struct scn_weights){ 1.0, 0.1, 0.1, 0.05 };
	if (any[T_WEIGHTS]) {
		bool wseen[NFIELDS(weight_fields)];
		struct scn_weights w = sc->weights;

		if (apply_fields(c, any[T_WEIGHTS], "'weights'",
				 weight_fields, NFIELDS(weight_fields), &w,
				 wseen, NULL))
			return -EINVAL;
		for (size_t i = 0; i < NFIELDS(weight_fields); i++)
			if (wseen[i])
				memcpy((char *)&sc->weights +
					       weight_fields[i].off,
				       (char *)&w + weight_fields[i].off,
				       sizeof(double));
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
	return 0;
}

/* ---- entry points ------------------------------------------------------ */

static void yaml_err(const yaml_parser_t *parser, struct scn_error *err)
{
	err->line = (int)parser->problem_mark.line + 1;
	err->col = (int)parser->problem_mark.column + 1;
	snprintf(err->msg, sizeof(err->msg), "YAML: %s%s%s",
		 parser->problem ? parser->problem : "syntax error",
		 parser->context ? " " : "",
		 parser->context ? parser->context : "");
}

/*
 * A scenario is one document. yaml_parser_load() stops after the first,
 * so whatever follows it (another document, or a syntax error there)
 * would be silently ignored unless it is read too.
 */
static int check_one_document(yaml_parser_t *parser, struct scn_error *err)
{
	yaml_document_t next;
	bool more;

	if (!yaml_parser_load(parser, &next)) {
		yaml_err(parser, err);
		return -EINVAL;
	}
	more = yaml_document_get_root_node(&next) != NULL;
	if (more) {
		err->line = (int)next.start_mark.line + 1;
		err->col = (int)next.start_mark.column + 1;
		snprintf(err->msg, sizeof(err->msg), "a scenario is one YAML "
			 "document, but another starts here");
	}
	yaml_document_delete(&next);
	return more ? -EINVAL : 0;
}

/*
 * Nesting deeper than SCN_DEPTH_MAX, found with libyaml's event parser
 * before the document is built (building a 100,000-deep one took a
 * minute). True after filling err with where; a syntax error is left to
 * the real parse, which says it better.
 */
static bool too_deep(const char *buf, size_t len, struct scn_error *err)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0;
	bool deep = false, done = false;

	if (!yaml_parser_initialize(&p))
		return false;
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done && !deep && yaml_parser_parse(&p, &ev)) {
		if (ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > SCN_DEPTH_MAX) {
				deep = true;
				err->line = (int)ev.start_mark.line + 1;
				err->col = (int)ev.start_mark.column + 1;
				snprintf(err->msg, sizeof(err->msg),
					 "nested deeper than %d levels",
					 SCN_DEPTH_MAX);
			}
		} else if (ev.type == YAML_SEQUENCE_END_EVENT ||
			   ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return deep;
}

struct scenario *scenario_parse(const char *buf, size_t len, const char *name,
				struct scn_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct scenario *sc;
	struct ctx c = { .err = err };
	yaml_node_t *root;
	int rc = -EINVAL;

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
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		free(sc);
		errno = ENOMEM;
		return NULL;
	}
	if (too_deep(buf, len, err)) {
		yaml_parser_delete(&parser);
		free(sc);
		errno = EINVAL;
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_err(&parser, err);
		yaml_parser_delete(&parser);
		free(sc);
		errno = EINVAL;
		return NULL;
	}
	c.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		err->line = 1;
		err->col = 1;
		snprintf(err->msg, sizeof(err->msg), "empty scenario");
	} else if (!check_one_document(&parser, err)) {
		rc = load_top(&c, root);
		if (rc == -ENOMEM)
			snprintf(err->msg, sizeof(err->msg), "out of memory");
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
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
	FILE *f;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int saved;

	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", path);
	f = fopen(path, "rb");
	if (!f) {
		saved = errno;
		snprintf(err->msg, sizeof(err->msg), "cannot open: %s",
			 strerror(saved));
		errno = saved;
		return NULL;
	}
	/* a scenario is a regular file of bounded size: never a device,
	 * a pipe or a directory, read in full or refused at once */
	{
		struct stat st;

		if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) ||
		    st.st_size > SCN_FILE_MAX) {
			saved = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
			snprintf(err->msg, sizeof(err->msg), "%s",
				 !S_ISREG(st.st_mode) ? "not a regular file" :
				 "larger than " SCN_FILE_MAX_TEXT);
			fclose(f);
			errno = saved;
			return NULL;
		}
	}
	for (;;) {
		size_t n;

		if (len > SCN_FILE_MAX) {	/* it grew while we read */
			free(buf);
			fclose(f);
			snprintf(err->msg, sizeof(err->msg),
				 "larger than " SCN_FILE_MAX_TEXT);
			errno = EFBIG;
			return NULL;
		}

		if (len + 4096 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);

			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err->msg, sizeof(err->msg),
					 "out of memory");
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		saved = errno ? errno : EIO;
		free(buf);
		fclose(f);
		snprintf(err->msg, sizeof(err->msg), "cannot read: %s",
			 strerror(saved));
		errno = saved;
		return NULL;
	}
	fclose(f);
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
		free(sc->tasks[i].locals);
	free(sc->tasks);
	free(sc->fibres);
	free(sc->nodes);
	free(sc);
}

int scenario_find(const struct scenario *sc, const char *name)
{
	for (int i = 0; i < sc->nnodes; i++)
		if (!strcmp(sc->nodes[i].name, name))
			return i;
	return -1;
}

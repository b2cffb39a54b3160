// SPDX-License-Identifier: MIT
#include "experiment.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl.h"
#include "sched.h"
#include "yamlf.h"

struct exp_rec {
	char name[SCN_NAME_MAX + 1];
	char base[512];
	long tasks, rounds, parameters, bpp;
	double work;
};

enum { E_NAME, E_BASE, E_SCHED, E_LOCALS, E_TASKS, E_SEEDS, E_ROUNDS,
       E_PARAMS, E_BPP, E_WORK, E_N };

/* The scenario's own limits (twin/scenario.c); tasks: a point's file
 * stays well under SCN_FILE_MAX. */
static const struct yf_field exp_fields[E_N] = {
	[E_NAME] = { "name", YF_TEXT, YF_REQUIRED,
		     offsetof(struct exp_rec, name), 0, SCN_NAME_MAX + 1 },
	[E_BASE] = { "base", YF_TEXT, YF_REQUIRED,
		     offsetof(struct exp_rec, base), 0, 512 },
	[E_SCHED] = { "schedulers", YF_ANY, YF_REQUIRED, 0, 0, 0 },
	[E_LOCALS] = { "locals", YF_ANY, YF_REQUIRED, 0, 0, 0 },
	[E_TASKS] = { "tasks", YF_LONG, YF_REQUIRED | YF_POSITIVE,
		      offsetof(struct exp_rec, tasks), EXP_TASKS_MAX, 0 },
	[E_SEEDS] = { "seeds", YF_ANY, YF_REQUIRED, 0, 0, 0 },
	[E_ROUNDS] = { "rounds", YF_LONG, YF_POSITIVE,
		       offsetof(struct exp_rec, rounds), 1e6, 0 },
	[E_PARAMS] = { "parameters", YF_LONG, YF_REQUIRED | YF_POSITIVE,
		       offsetof(struct exp_rec, parameters), 1e12, 0 },
	[E_BPP] = { "bytes_per_parameter", YF_LONG, YF_POSITIVE,
		    offsetof(struct exp_rec, bpp), 8, 0 },
	[E_WORK] = { "work_core_s", YF_DOUBLE, YF_REQUIRED | YF_NONNEG,
		     offsetof(struct exp_rec, work), 1e6, 0 },
};

/* A list of whole numbers in [1, 1e6] (out) or of scheduler names. */
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
			snprintf(names[(*n)++], 16, "%s", s);
			continue;
		}
		if (!*s || strspn(s, "0123456789") != strlen(s) ||
		    strlen(s) > 7 || atol(s) < 1 || atol(s) > 1000000) {
			yf_err(c, x, "'%s': a whole number in [1, 1000000], "
			       "got '%s'", key, s);
			return -EINVAL;
		}
		out[(*n)++] = atol(s);
	}
	return 0;
}

int experiment_parse(const char *buf, size_t len, const char *name,
		     struct experiment *x, struct scn_error *err)
{
	yaml_document_t doc;
	struct yf c = { .err = err };
	struct exp_rec r = { .rounds = 1, .bpp = 4 };
	yaml_node_t *root, *any[E_N] = { 0 };
	bool seen[E_N];
	int rc;

	memset(x, 0, sizeof(*x));
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", name);
	rc = yf_load(buf, len, "experiment", "an experiment", &doc, &root, err);
	if (rc)
		return rc;
	rc = -EINVAL;
	c.doc = &doc;
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
	    list(&c, any[E_LOCALS], "locals", x->locals, NULL, &x->nlocals) ||
	    list(&c, any[E_SEEDS], "seeds", x->seeds, NULL, &x->nseeds))
		goto out;
	{
		/* relative to the experiment file, as an include is */
		const char *slash = strrchr(name, '/');
		int dl = r.base[0] != '/' && slash ?
				 (int)(slash - name + 1) : 0;

		if (!r.base[0] ||
		    (size_t)snprintf(x->base, sizeof(x->base), "%.*s%s", dl,
				     name, r.base) >= sizeof(x->base)) {
			yf_err(&c, any[E_BASE], "'base' must name a scenario "
			       "file (at most %zu characters with the "
			       "experiment's directory)", sizeof(x->base) - 1);
			goto out;
		}
	}
	memcpy(x->name, r.name, sizeof(x->name));
	x->tasks = r.tasks;
	x->rounds = r.rounds;
	x->parameters = r.parameters;
	x->bpp = r.bpp;
	x->work = r.work;
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

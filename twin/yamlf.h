/* SPDX-License-Identifier: MIT */
/*
 * The YAML machinery shared by the twin's files (scenarios, experiments):
 * a bounded read, a parse with a nesting cap and one document only, field
 * tables that fill a struct from a mapping with strict numbers and ranges,
 * and every error at file:line:col in a struct scn_error. Internal to the
 * twin (libyaml types in the interface).
 */
#ifndef TWIN_YAMLF_H
#define TWIN_YAMLF_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "scenario.h"

#define YF_FILE_MAX SCN_FILE_MAX
#define YF_FILE_MAX_TEXT SCN_FILE_MAX_TEXT
#define YF_DEPTH_MAX SCN_DEPTH_MAX

/* A document being read, and where its first error goes. */
struct yf {
	yaml_document_t *doc;
	struct scn_error *err;
};

void yf_err(struct yf *c, const yaml_node_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *yf_scalar(const yaml_node_t *n);
const char *yf_type_name(const yaml_node_t *n);
int yf_want_scalar(struct yf *c, const yaml_node_t *n, const char *key);
int yf_want_seq(struct yf *c, yaml_node_t *n, const char *key);
size_t yf_seq_len(const yaml_node_t *n);
yaml_node_t *yf_seq_at(struct yf *c, yaml_node_t *n, size_t i);
/* yf_parse_u64 - s is digits only (no sign, blank or base prefix) and
 * fits: true with *out. Says nothing. */
bool yf_parse_u64(const char *s, uint64_t *out);

/* A finite number in decimal notation; else an error naming key. */
int yf_double(struct yf *c, const yaml_node_t *n, const char *key,
	      double *out);

enum yf_type { YF_DOUBLE, YF_U64, YF_UINT, YF_LONG, YF_NAME, YF_TEXT,
	       YF_ANY };

#define YF_REQUIRED 1u
#define YF_POSITIVE 2u		/* > 0 */
#define YF_NONNEG 4u		/* >= 0 */

struct yf_field {
	const char *key;
	enum yf_type type;
	unsigned flags;
	size_t off;		/* into the target struct, YF_ANY: unused */
	double max;		/* 0: no upper bound */
	size_t len;		/* YF_NAME/YF_TEXT: buffer size */
};

/*
 * yf_apply - fill *target from mapping n by table f: unknown and duplicate
 * keys, wrong types, numbers out of range and missing required keys are
 * errors (at the node). seen[i] is set for each field found; value nodes
 * are returned through any[i] (any may be NULL). 0 or -EINVAL.
 */
int yf_apply(struct yf *c, yaml_node_t *n, const char *what,
	     const struct yf_field *f, size_t nf, void *target, bool *seen,
	     yaml_node_t **any);

/* libyaml's own error, at its position. */
void yf_yaml_err(const yaml_parser_t *parser, struct scn_error *err);

/* 0 if the parser holds no second document; else -EINVAL ("<what> is..."). */
int yf_one_document(yaml_parser_t *parser, struct scn_error *err,
		    const char *what);

/*
 * yf_load - buf as one YAML document into *doc (the caller deletes it),
 * its root in *root: refused when nested deeper than YF_DEPTH_MAX, not
 * YAML, empty ("empty <noun>") or followed by another document ("<what>
 * is one YAML document"). 0, -EINVAL or -ENOMEM, with err filled.
 */
int yf_load(const char *buf, size_t len, const char *noun, const char *what,
	    yaml_document_t *doc, yaml_node_t **root, struct scn_error *err)
	__attribute__((warn_unused_result));

/* Whether buf nests deeper than YF_DEPTH_MAX (err says where). */
bool yf_too_deep(const char *buf, size_t len, struct scn_error *err);

/*
 * yf_read_file - the whole of path, if it is a regular file of at most
 * YF_FILE_MAX bytes. 0 (*out malloc'ed, free it) or -errno with err
 * filled.
 */
int yf_read_file(const char *path, char **out, size_t *outlen,
		 struct scn_error *err);

#endif

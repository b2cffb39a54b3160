// SPDX-License-Identifier: MIT
/* The YAML machinery of the twin's files (see yamlf.h). */
#include "yamlf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void yf_err(struct yf *c, const yaml_node_t *at, const char *fmt, ...)
{
	va_list ap;

	c->err->line = at ? (int)at->start_mark.line + 1 : 0;
	c->err->col = at ? (int)at->start_mark.column + 1 : 0;
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
}

const char *yf_scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

const char *yf_type_name(const yaml_node_t *n)
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

int yf_want_scalar(struct yf *c, const yaml_node_t *n, const char *key)
{
	if (n->type == YAML_SCALAR_NODE)
		return 0;
	yf_err(c, n, "'%s' must be a scalar, not %s", key, yf_type_name(n));
	return -EINVAL;
}

int yf_want_seq(struct yf *c, yaml_node_t *n, const char *key)
{
	if (n->type == YAML_SEQUENCE_NODE)
		return 0;
	yf_err(c, n, "'%s' must be a list, not %s", key, yf_type_name(n));
	return -EINVAL;
}

size_t yf_seq_len(const yaml_node_t *n)
{
	return (size_t)(n->data.sequence.items.top -
			n->data.sequence.items.start);
}

yaml_node_t *yf_seq_at(struct yf *c, yaml_node_t *n, size_t i)
{
	return yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
}

int yf_double(struct yf *c, const yaml_node_t *n, const char *key,
	      double *out)
{
	const char *s;
	char *end;
	double v;

	if (yf_want_scalar(c, n, key))
		return -EINVAL;
	s = yf_scalar(n);
	errno = 0;
	v = strtod(s, &end);
	/* decimal only: strtod would also take hex, "inf" and blanks */
	if (!*s || *end || errno || !isfinite(v) ||
	    strspn(s, "0123456789+-.eE") != strlen(s)) {
		yf_err(c, n, "'%s' must be a finite number, got '%s'", key, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

bool yf_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	/* strtoull skips blanks and negates "-1": only digits are taken. */
	if (*s < '0' || *s > '9' || *end || errno)
		return false;
	*out = v;
	return true;
}

static int get_u64(struct yf *c, const yaml_node_t *n, const char *key,
		   uint64_t *out)
{
	if (yf_want_scalar(c, n, key))
		return -EINVAL;
	if (!yf_parse_u64(yf_scalar(n), out)) {
		yf_err(c, n, "'%s' must be a non-negative integer, got '%s'",
			key, yf_scalar(n));
		return -EINVAL;
	}
	return 0;
}

int yf_apply(struct yf *c, yaml_node_t *n, const char *what,
	     const struct yf_field *f, size_t nf, void *target, bool *seen,
	     yaml_node_t **any)
{
	yaml_node_pair_t *p;

	if (n->type != YAML_MAPPING_NODE) {
		yf_err(c, n, "%s must be a mapping, not %s", what,
			yf_type_name(n));
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
			yf_err(c, k, "keys of %s must be scalars", what);
			return -EINVAL;
		}
		key = yf_scalar(k);
		for (i = 0; i < nf; i++)
			if (!strcmp(f[i].key, key))
				break;
		if (i == nf) {
			yf_err(c, k, "unknown key '%s' in %s", key, what);
			return -EINVAL;
		}
		if (seen[i]) {
			yf_err(c, k, "duplicate key '%s' in %s", key, what);
			return -EINVAL;
		}
		seen[i] = true;
		dst = (char *)target + f[i].off;
		switch (f[i].type) {
		case YF_DOUBLE: {
			double d;

			if (yf_double(c, v, key, &d))
				return -EINVAL;
			if ((f[i].flags & YF_POSITIVE) && !(d > 0)) {
				yf_err(c, v, "'%s' must be > 0, got '%s'", key,
					yf_scalar(v));
				return -EINVAL;
			}
			if ((f[i].flags & YF_NONNEG) && d < 0) {
				yf_err(c, v, "'%s' must be >= 0, got '%s'",
					key, yf_scalar(v));
				return -EINVAL;
			}
			if (f[i].max > 0 && d > f[i].max) {
				yf_err(c, v, "'%s' must be <= %g, got '%s'",
					key, f[i].max, yf_scalar(v));
				return -EINVAL;
			}
			memcpy(dst, &d, sizeof(d));
			break;
		}
		case YF_U64:
		case YF_UINT:
		case YF_LONG: {
			uint64_t u;

			if (get_u64(c, v, key, &u))
				return -EINVAL;
			if ((f[i].flags & YF_POSITIVE) && u == 0) {
				yf_err(c, v, "'%s' must be > 0, got '%s'", key,
					yf_scalar(v));
				return -EINVAL;
			}
			if (f[i].max > 0 && (double)u > f[i].max) {
				yf_err(c, v, "'%s' must be <= %.0f, got '%s'",
					key, f[i].max, yf_scalar(v));
				return -EINVAL;
			}
			if (f[i].type == YF_U64) {
				memcpy(dst, &u, sizeof(u));
			} else if (f[i].type == YF_UINT) {
				unsigned x = (unsigned)u;

				memcpy(dst, &x, sizeof(x));
			} else {
				long x = (long)u;

				memcpy(dst, &x, sizeof(x));
			}
			break;
		}
		case YF_NAME:
		case YF_TEXT:
			if (yf_want_scalar(c, v, key))
				return -EINVAL;
			if (strlen(yf_scalar(v)) >= f[i].len) {
				yf_err(c, v, "'%s' is too long (at most %zu "
					"characters): '%s'", key,
					f[i].len - 1, yf_scalar(v));
				return -EINVAL;
			}
			snprintf(dst, f[i].len, "%s", yf_scalar(v));
			break;
		case YF_ANY:
			break;
		}
		if (any)
			any[i] = v;
	}
	for (size_t i = 0; i < nf; i++)
		if ((f[i].flags & YF_REQUIRED) && !seen[i]) {
			yf_err(c, n, "%s lacks required key '%s'", what,
				f[i].key);
			return -EINVAL;
		}
	return 0;
}


void yf_yaml_err(const yaml_parser_t *parser, struct scn_error *err)
{
	err->line = (int)parser->problem_mark.line + 1;
	err->col = (int)parser->problem_mark.column + 1;
	snprintf(err->msg, sizeof(err->msg), "YAML: %s%s%s",
		 parser->problem ? parser->problem : "syntax error",
		 parser->context ? " " : "",
		 parser->context ? parser->context : "");
}

int yf_one_document(yaml_parser_t *parser, struct scn_error *err,
		    const char *what)
{
	yaml_document_t next;
	bool more;

	if (!yaml_parser_load(parser, &next)) {
		yf_yaml_err(parser, err);
		return -EINVAL;
	}
	more = yaml_document_get_root_node(&next) != NULL;
	if (more) {
		err->line = (int)next.start_mark.line + 1;
		err->col = (int)next.start_mark.column + 1;
		snprintf(err->msg, sizeof(err->msg), "%s is one YAML "
			 "document, but another starts here", what);
	}
	yaml_document_delete(&next);
	return more ? -EINVAL : 0;
}

/*
 * Depth is checked on libyaml's events before the document is built
 * (building a 100,000-deep one took a minute). yaml_parser_load() stops
 * after the first document, so whatever follows (another document, or a
 * syntax error there) would be ignored unless it is read too.
 */
int yf_load(const char *buf, size_t len, const char *noun, const char *what,
	    yaml_document_t *doc, yaml_node_t **root, struct scn_error *err)
{
	yaml_parser_t parser;
	int rc = 0;

	*root = NULL;
	if (yf_too_deep(buf, len, err))
		return -EINVAL;
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, doc)) {
		yf_yaml_err(&parser, err);
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	*root = yaml_document_get_root_node(doc);
	if (!*root) {
		err->line = err->col = 1;
		snprintf(err->msg, sizeof(err->msg), "empty %s", noun);
		rc = -EINVAL;
	} else {
		rc = yf_one_document(&parser, err, what);
	}
	yaml_parser_delete(&parser);
	if (rc)
		yaml_document_delete(doc);
	return rc;
}

bool yf_too_deep(const char *buf, size_t len, struct scn_error *err)
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
			if (++depth > YF_DEPTH_MAX) {
				deep = true;
				err->line = (int)ev.start_mark.line + 1;
				err->col = (int)ev.start_mark.column + 1;
				snprintf(err->msg, sizeof(err->msg),
					 "nested deeper than %d levels",
					 YF_DEPTH_MAX);
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

int yf_read_file(const char *path, char **out, size_t *outlen,
		 struct scn_error *err)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat st;
	int saved, fd;
	FILE *f;

	*out = NULL;
	*outlen = 0;
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", path);
	/*
	 * A regular file of bounded size: never a device, a pipe or a
	 * directory, read in full or refused at once. Opened without
	 * waiting (a FIFO with no writer would block the open itself),
	 * checked before the first read.
	 */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		snprintf(err->msg, sizeof(err->msg), "cannot open: %s",
			 strerror(saved));
		return -saved;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > YF_FILE_MAX) {
		bool reg = !fstat(fd, &st) && S_ISREG(st.st_mode);

		snprintf(err->msg, sizeof(err->msg), "%s",
			 !reg ? "not a regular file" :
			 "larger than " YF_FILE_MAX_TEXT);
		close(fd);
		return reg ? -EFBIG : -EINVAL;
	}
	f = fdopen(fd, "rb");
	if (!f) {
		saved = errno;
		close(fd);
		snprintf(err->msg, sizeof(err->msg), "cannot open: %s",
			 strerror(saved));
		return -saved;
	}
	for (;;) {
		size_t n;

		if (len > YF_FILE_MAX) {	/* it grew while we read */
			free(buf);
			fclose(f);
			snprintf(err->msg, sizeof(err->msg),
				 "larger than " YF_FILE_MAX_TEXT);
			return -EFBIG;
		}
		if (len + 4096 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);

			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err->msg, sizeof(err->msg),
					 "out of memory");
				return -ENOMEM;
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
		return -saved;
	}
	fclose(f);
	*out = buf;
	*outlen = len;
	return 0;
}

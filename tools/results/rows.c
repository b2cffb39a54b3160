// SPDX-License-Identifier: MIT
/* Rows as column tables, and statements bound from a list of types. */
#include "tools/results/impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int col_list(const struct table *t, char *buf, size_t len)
{
	size_t off = 0;

	for (int i = 0; i < t->ncol; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				 t->col[i].name);

		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return 0;
}

int table_select(const struct table *t, const char *tail, char *buf,
		 size_t len)
{
	size_t off;
	int n = snprintf(buf, len, "SELECT ");

	if (n < 0 || (size_t)n >= len || col_list(t, buf + n, len - (size_t)n))
		return -ENOSPC;
	off = strlen(buf);
	n = snprintf(buf + off, len - off, " FROM %s %s", t->name, tail);
	return n < 0 || (size_t)n >= len - off ? -ENOSPC : 0;
}

int row_prepare(sqlite3 *db, const char *verb, const struct table *t,
		sqlite3_stmt **st)
{
	char cols[1024], sql[2048];
	size_t off;
	int n;

	*st = NULL;
	if (col_list(t, cols, sizeof(cols)))
		return -EIO;
	n = snprintf(sql, sizeof(sql), "%s INTO %s (%s) VALUES (", verb,
		     t->name, cols);
	if (n < 0 || (size_t)n + 2 * (size_t)t->ncol + 1 > sizeof(sql))
		return -EIO;
	off = (size_t)n;
	for (int i = 0; i < t->ncol; i++) {
		sql[off++] = i ? ',' : '?';
		if (i)
			sql[off++] = '?';
	}
	sql[off++] = ')';
	sql[off] = '\0';
	return sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK ? 0 :
									 -EIO;
}

static void bind_col(sqlite3_stmt *st, int i, const struct col *c,
		     const void *row)
{
	const char *at = (const char *)row + c->off;
	double v;

	switch (c->type) {
	case COL_TEXT:
		sqlite3_bind_text(st, i, *(const char *const *)at, -1,
				  SQLITE_TRANSIENT);
		break;
	case COL_CHARS:
		sqlite3_bind_text(st, i, at, -1, SQLITE_TRANSIENT);
		break;
	case COL_INT:
		sqlite3_bind_int(st, i, *(const int *)at);
		break;
	case COL_BOOL:
		sqlite3_bind_int(st, i, *(const bool *)at);
		break;
	case COL_I64:
		sqlite3_bind_int64(st, i, *(const int64_t *)at);
		break;
	case COL_U64:
		sqlite3_bind_int64(st, i, (int64_t)*(const uint64_t *)at);
		break;
	case COL_REAL:
	case COL_FINITE:
		v = *(const double *)at;
		if (isnan(v) || (c->type == COL_FINITE && !isfinite(v)))
			sqlite3_bind_null(st, i);
		else
			sqlite3_bind_double(st, i, v);
		break;
	}
}

int row_step(sqlite3_stmt *st, const struct table *t, const void *row)
{
	sqlite3_reset(st);
	for (int i = 0; i < t->ncol; i++)
		bind_col(st, i + 1, &t->col[i], row);
	return sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
}

int row_insert(sqlite3 *db, const char *verb, const struct table *t,
	       const void *row)
{
	sqlite3_stmt *st;
	int e = row_prepare(db, verb, t, &st);

	if (!e)
		e = row_step(st, t, row);
	sqlite3_finalize(st);
	return e;
}

const char *col_text(sqlite3_stmt *st, int col, const char *dflt)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	return s ? (const char *)s : dflt;
}

double col_real(sqlite3_stmt *st, int col, double dflt)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ?
		       dflt :
		       sqlite3_column_double(st, col);
}

void row_read(sqlite3_stmt *st, const struct table *t, void *row)
{
	for (int i = 0; i < t->ncol; i++) {
		const struct col *c = &t->col[i];
		char *at = (char *)row + c->off;

		switch (c->type) {
		case COL_TEXT:
			*(const char **)at = col_text(st, i, c->dflt);
			break;
		case COL_CHARS:	/* written only */
			break;
		case COL_INT:
			*(int *)at = sqlite3_column_int(st, i);
			break;
		case COL_BOOL:
			*(bool *)at = sqlite3_column_int(st, i) != 0;
			break;
		case COL_I64:
			*(int64_t *)at = sqlite3_column_int64(st, i);
			break;
		case COL_U64:
			*(uint64_t *)at = (uint64_t)sqlite3_column_int64(st, i);
			break;
		case COL_REAL:
		case COL_FINITE:
			*(double *)at = col_real(st, i, NAN);
			break;
		}
	}
}

int db_run(sqlite3 *db, const char *sql, const char *types, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int rc, i = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	va_start(ap, types);
	for (const char *p = types; *p; p++) {
		switch (*p) {
		case 't':
			sqlite3_bind_text(st, ++i, va_arg(ap, const char *), -1,
					  SQLITE_TRANSIENT);
			break;
		case 'i':
			sqlite3_bind_int(st, ++i, va_arg(ap, int));
			break;
		case 'I':
			sqlite3_bind_int64(st, ++i, va_arg(ap, int64_t));
			break;
		case 'd':
			sqlite3_bind_double(st, ++i, va_arg(ap, double));
			break;
		}
	}
	va_end(ap);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

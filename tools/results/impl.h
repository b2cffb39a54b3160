/* SPDX-License-Identifier: MIT */
/*
 * Inside the results database (private to tools/results/): the two
 * handles, and rows as column tables.
 *
 * A table's row is a C struct; struct col says, per column, its SQL name
 * (or, read, the expression that gives it), its C type and where it is
 * in the struct. One table drives both the INSERT that writes a row
 * (row_insert, or row_prepare + row_step for many) and the reading of a
 * SELECT whose columns come in the same order (row_read), as
 * twin/yamlf.h's field tables drive parsing. db_run binds a statement's
 * few values from a list of types, for the updates that have no row.
 */
#ifndef TWINLAB_RESULTS_IMPL_H
#define TWINLAB_RESULTS_IMPL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "tools/results/results.h"

struct results {
	sqlite3 *db;
	int64_t run;
	/*
	 * Per task of the run's plan: the task it is stored as, the first of
	 * its name (a task that carries another on over new trees,
	 * twin/lpset.h, is the same task: its rounds go on under it)
	 */
	int *as;
	int nas;
};

struct results_reader {
	sqlite3 *db;
	const char *path;
	bool has_points, has_dot, has_verdict, has_predictor, has_pictures;
	bool has_moves;		/* events: policy, live_s, first_round_s */
	bool has_round_bl;	/* rounds: pred_bytes_links */
	bool has_touched;	/* fidelity: touched */
	bool has_owner;		/* runs: owner_pid, owner_start (and the
				 * owner_alive function registered) */
};

enum col_type {
	COL_TEXT,	/* const char *; NULL is NULL */
	COL_CHARS,	/* char[], in the struct */
	COL_INT,	/* int */
	COL_BOOL,	/* bool */
	COL_I64,	/* int64_t */
	COL_U64,	/* uint64_t, stored as a signed 64-bit integer */
	COL_REAL,	/* double; NaN is NULL, and NULL reads as NaN */
	COL_FINITE,	/* double; anything not finite is NULL */
};

struct col {
	const char *name;
	enum col_type type;
	size_t off;
	const char *dflt;	/* read: a NULL text as this */
};

/*
 * A column's type from its field's C type, so that a table names each
 * column once and cannot say a type its field does not have. A char[]
 * field reads here as char * (the array decays), so rows hold their
 * text as const char *, never char *.
 */
#define COL_TYPE(T, field)						\
	_Generic(((T *)0)->field, const char *: COL_TEXT,		\
		 char *: COL_CHARS, int: COL_INT, bool: COL_BOOL,	\
		 int64_t: COL_I64, uint64_t: COL_U64, double: COL_REAL)

#define COL(T, field)							\
	{ #field, COL_TYPE(T, field), offsetof(T, field), NULL }
#define COL_AS(T, field, name)						\
	{ name, COL_TYPE(T, field), offsetof(T, field), NULL }
/* a double stored only where it is finite */
#define COL_FIN(T, field) { #field, COL_FINITE, offsetof(T, field), NULL }
/* text that reads as dflt where it is NULL */
#define COL_D(T, field, dflt) { #field, COL_TEXT, offsetof(T, field), dflt }

struct table {
	const char *name;
	const struct col *col;
	int ncol;
};

#define TABLE(name, cols) { name, cols, (int)(sizeof(cols) / sizeof(cols[0])) }

/* "VERB INTO t (its columns) VALUES (?, ...)" prepared in *st. */
int row_prepare(sqlite3 *db, const char *verb, const struct table *t,
		sqlite3_stmt **st);
/* One row through st; 0 or -EIO. */
int row_step(sqlite3_stmt *st, const struct table *t, const void *row);
/* One row, prepared and finalized here. */
int row_insert(sqlite3 *db, const char *verb, const struct table *t,
	       const void *row);
/* Columns 0.. of st's current row into row, as t says. */
void row_read(sqlite3_stmt *st, const struct table *t, void *row);
/* "a, b, c": t's column names, for a SELECT; 0 or -ENOSPC. */
int col_list(const struct table *t, char *buf, size_t len);

/* "SELECT its columns FROM t tail" in buf; 0 or -ENOSPC. */
int table_select(const struct table *t, const char *tail, char *buf,
		 size_t len);

/*
 * db_run - prepare sql, bind its parameters one per letter of types
 * (t text, i int, I int64_t, d double) from the arguments, step it once
 * and finalize it. 0, or -EIO when any of that fails.
 */
int db_run(sqlite3 *db, const char *sql, const char *types, ...);

/* the tables written and read with the same columns (write.c) */
extern const struct table results_events_table, results_blocking_table;
extern const struct table results_gap_table;

int results_db_err(struct results *r, char *err, size_t len,
		   const char *what);
bool has_table(sqlite3 *db, const char *name, int *rc);
const char *col_text(sqlite3_stmt *st, int col, const char *dflt);
double col_real(sqlite3_stmt *st, int col, double dflt);

#endif

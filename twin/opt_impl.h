// SPDX-License-Identifier: MIT
/*
 * opt's insides, shared by its graph (sched_opt.c) and its integer
 * program (opt_program.c).
 */
#ifndef TWINLAB_OPT_IMPL_H
#define TWINLAB_OPT_IMPL_H

#include "sched_impl.h"

#include <stdbool.h>

/*
 * Largest program solved, in columns (six per edge): 100 routers and 50
 * terminals need about 60,000.
 */
#define OPT_MAX_COLS 200000
/*
 * Most routers of a network opt takes: its graph has a candidate edge per
 * pair of them before pruning (about 180,000 pairs at most).
 */
#define OPT_ROUTERS_MAX 600
/* Seconds opt may take for one task, all its programs, before it gives up. */
#define OPT_TIME_LIMIT_S 120
/* Most candidate lightpaths of the joint program (see the top). */
#define OPT_JOINT_MAX 1000
/* Most steps the search for them may take before giving up on it. */
#define OPT_JOINT_STEPS 200000

enum oedge_kind { OE_ACCESS, OE_LIT, OE_NEW };

/* An edge of the IP-layer graph, between vertices u and v. */
struct oedge {
	enum oedge_kind kind;
	int u, v;		/* vertices; OE_ACCESS: u is the server */
	int idx;		/* OE_ACCESS: server; OE_LIT: lightpath */
	double w;		/* weight of buying it (lighting it, for new) */
	double w_reuse;		/* OE_NEW: as a lit lightpath, once lit */
	bool room[2];		/* OE_LIT: data may cross u->v, v->u */
	int nfib;		/* OE_NEW: fibres from u's ROADM to v's */
	int *fib;
	int *roadm;		/* nfib + 1 ROADMs along them */
	int lambda;		/* OE_NEW, joint program: its wavelength */
};

struct ograph {
	bool joint;		/* the joint program (see the top) */
	int nfibres, nlambda;	/* fibres, wavelengths a fibre may have */
	int nv, ne, cap;
	int *node;		/* vertex -> scenario node */
	int *vert;		/* scenario node -> vertex, or -1 */
	int nserv;		/* the task's servers: vertices 0..nserv-1 */
	int *access;		/* per server vertex: its access edge */
	struct oedge *e;
};

/* Columns of the program over ne edges: per arc, each tree's and reuse. */
static inline long program_cols(long ne)
{
	return 3 * 2 * ne;
}

/* Arc a of edge a / 2: from u to v when even. */
static inline int arc_tail(const struct ograph *g, int a)
{
	return a & 1 ? g->e[a / 2].v : g->e[a / 2].u;
}

static inline int arc_head(const struct ograph *g, int a)
{
	return a & 1 ? g->e[a / 2].u : g->e[a / 2].v;
}

/* deadline: in mono_s() seconds (clock.h). */
int opt_solve(const struct ograph *g, const bool *closed, const int *term,
	      int nt, bool *bought[2], bool *reused, double deadline);

#endif

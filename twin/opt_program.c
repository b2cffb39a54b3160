// SPDX-License-Identifier: MIT
/*
 * opt's integer program: the broadcast's and the upload's trees, each a
 * Steiner arborescence from the global model's server over the graph of
 * sched_opt.c, at least cost together (the upload may cross a lightpath
 * the broadcast lights at the lit lightpath's weight).
 *
 * The formulation is by directed cuts: a tree buys arc a (x[P][a] = 1),
 * and every set of vertices holding the root but not some terminal has a
 * bought arc leaving it. There are exponentially many such rows, so none
 * is written up front: the relaxation is solved, the cuts it violates are
 * found by a maximum flow from the root to each terminal (capacities: the
 * arcs' values; a flow below 1 names the set its minimum cut leaves), and
 * added, until it violates none (a cutting-plane loop). Branch and bound
 * then goes on adding the cuts each of its relaxations violates (GLPK's
 * row generation), so that no integer solution is accepted unless it
 * connects every terminal. The relaxation equals the multi-commodity flow
 * one's in strength, without a flow per terminal and arc: the columns grow
 * with the edges only (six per edge), not with edges times terminals.
 *
 * Rows written up front, each valid for some optimal pair of trees (the
 * weights are never negative): a vertex has at most one arc in (a
 * terminal exactly one); an edge is crossed one way per tree; the upload
 * reuses only what the broadcast lit; in the joint program, a wavelength
 * on a fibre carries at most one of the new lightpaths. And, found like
 * the cuts: a vertex that is no terminal sends out nothing it does not
 * receive (x(in(v)) >= x(a) for each arc a out of v).
 */
#include "opt_impl.h"
#include "clock.h"

#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A row is added when the relaxation violates it by more than this. */
#define CUT_EPS 1e-4
/* Residual capacity below this is none. */
#define FLOW_EPS 1e-9

struct prog {
	const struct ograph *g;
	const bool *closed;
	const int *term;
	int nt, na, ncols;
	double deadline;	/* mono_s() seconds */
	int err;		/* from inside GLPK's callback */
	bool *is_term;		/* per vertex */
	/* the open arcs out of and into each vertex (CSR) */
	int *ostart, *oarc, *istart, *iarc;
	/* separation workspace */
	double *xv;		/* column values, 1-based */
	double *cap, *flow;	/* per arc */
	int *level, *it, *queue;
	bool *reach;		/* per vertex: reaches the terminal */
	int *ind;		/* a row, 1-based */
	double *val;
};

static int col_x(const struct prog *p, int P, int a)
{
	return 1 + P * p->na + a;
}

static int col_r(const struct prog *p, int a)
{
	return 1 + 2 * p->na + a;
}

/*
 * Whether tree P may buy arc a: the edge is not closed, data crosses a
 * lit lightpath only where it has room (the upload's against the arc),
 * nothing enters the root and no other server sends on (a server has one
 * link: it is a leaf).
 */
static bool usable(const struct prog *p, int P, int a)
{
	const struct ograph *g = p->g;
	const struct oedge *e = &g->e[a / 2];

	if (p->closed[a / 2] || arc_head(g, a) == 0 ||
	    (arc_tail(g, a) && arc_tail(g, a) < g->nserv))
		return false;
	if (e->kind != OE_LIT)
		return true;
	return e->room[P ? 1 - (a & 1) : a & 1];
}

/* Whether the upload may cross arc a on the lightpath the broadcast lit. */
static bool reusable(const struct prog *p, int a)
{
	return p->g->e[a / 2].kind == OE_NEW && usable(p, 1, a);
}

/* Tree P's use of arc a as row coefficients at p->ind[*n + 1 ...]. */
static void put_arc(struct prog *p, int P, int a, double c, int *n)
{
	p->ind[++*n] = col_x(p, P, a);
	p->val[*n] = c;
	if (P && reusable(p, a)) {
		p->ind[++*n] = col_r(p, a);
		p->val[*n] = c;
	}
}

static void add_row(glp_prob *lp, const struct prog *p, int n, int type,
		    double lb, double ub)
{
	int r = glp_add_rows(lp, 1);

	glp_set_row_bnds(lp, r, type, lb, ub);
	glp_set_mat_row(lp, r, n, p->ind, p->val);
}

/* ---- maximum flow from the root, Dinic's ------------------------------ */

/* Level the residual graph from s; whether t is reached. */
static bool levels(struct prog *p, int s, int t)
{
	const struct ograph *g = p->g;
	int head = 0, tail = 0;

	for (int v = 0; v < g->nv; v++)
		p->level[v] = -1;
	p->level[s] = 0;
	p->queue[tail++] = s;
	while (head < tail) {
		int v = p->queue[head++];

		for (int k = p->ostart[v]; k < p->ostart[v + 1]; k++) {
			int a = p->oarc[k], w = arc_head(g, a);

			if (p->level[w] < 0 && p->cap[a] - p->flow[a] > FLOW_EPS) {
				p->level[w] = p->level[v] + 1;
				p->queue[tail++] = w;
			}
		}
		for (int k = p->istart[v]; k < p->istart[v + 1]; k++) {
			int a = p->iarc[k], w = arc_tail(g, a);

			if (p->level[w] < 0 && p->flow[a] > FLOW_EPS) {
				p->level[w] = p->level[v] + 1;
				p->queue[tail++] = w;
			}
		}
	}
	return p->level[t] >= 0;
}

/* One augmenting path of the level graph from v, at most lim. */
static double augment(struct prog *p, int v, int t, double lim)
{
	const struct ograph *g = p->g;
	int no = p->ostart[v + 1] - p->ostart[v];
	int ni = p->istart[v + 1] - p->istart[v];

	if (v == t)
		return lim;
	for (; p->it[v] < no + ni; p->it[v]++) {
		int k = p->it[v], a, w;
		double room, f;

		if (k < no) {
			a = p->oarc[p->ostart[v] + k];
			w = arc_head(g, a);
			room = p->cap[a] - p->flow[a];
		} else {
			a = p->iarc[p->istart[v] + k - no];
			w = arc_tail(g, a);
			room = p->flow[a];
		}
		if (room <= FLOW_EPS || p->level[w] != p->level[v] + 1)
			continue;
		f = augment(p, w, t, fmin(lim, room));
		if (f > 0) {
			p->flow[a] += k < no ? f : -f;
			return f;
		}
	}
	return 0;
}

/*
 * The flow from the root to t, up to 1. When it is less, level[] >= 0
 * marks the vertices the root still reaches: the minimum cut's source side.
 */
static double max_flow(struct prog *p, int t)
{
	double total = 0, f;

	memset(p->flow, 0, (size_t)p->na * sizeof(*p->flow));
	while (total < 1 - CUT_EPS && levels(p, 0, t)) {
		memset(p->it, 0, (size_t)p->g->nv * sizeof(*p->it));
		while (total < 1 - CUT_EPS &&
		       (f = augment(p, 0, t, 1 - total)) > FLOW_EPS)
			total += f;
	}
	return total;
}

/* reach[]: the vertices that still reach t in the residual graph. */
static void reaching(struct prog *p, int t)
{
	const struct ograph *g = p->g;
	int head = 0, tail = 0;

	memset(p->reach, 0, (size_t)g->nv * sizeof(*p->reach));
	p->reach[t] = true;
	p->queue[tail++] = t;
	while (head < tail) {
		int w = p->queue[head++];

		for (int k = p->istart[w]; k < p->istart[w + 1]; k++) {
			int a = p->iarc[k], v = arc_tail(g, a);

			if (!p->reach[v] && p->cap[a] - p->flow[a] > FLOW_EPS) {
				p->reach[v] = true;
				p->queue[tail++] = v;
			}
		}
		for (int k = p->ostart[w]; k < p->ostart[w + 1]; k++) {
			int a = p->oarc[k], v = arc_head(g, a);

			if (!p->reach[v] && p->flow[a] > FLOW_EPS) {
				p->reach[v] = true;
				p->queue[tail++] = v;
			}
		}
	}
}

/* ---- separation -------------------------------------------------------- */

/*
 * The rows tree P's values violate, added to lp: a terminal the root
 * cannot send a unit to gets the cut its minimum cut names and the one
 * next to the terminal (if another); a vertex sending out more than it
 * receives, the row that forbids it. The number of rows added.
 */
static int separate_tree(struct prog *p, glp_prob *lp, int P)
{
	const struct ograph *g = p->g;
	int added = 0;

	for (int a = 0; a < p->na; a++) {
		double y = p->xv[col_x(p, P, a)];

		if (P && reusable(p, a))
			y += p->xv[col_r(p, a)];
		p->cap[a] = usable(p, P, a) ? fmin(fmax(y, 0), 1) : 0;
	}
	for (int v = 1; v < g->nv; v++) {
		double in = 0, most = 0;
		int worst = -1, n = 0;

		if (p->is_term[v])
			continue;
		for (int k = p->istart[v]; k < p->istart[v + 1]; k++)
			in += p->cap[p->iarc[k]];
		for (int k = p->ostart[v]; k < p->ostart[v + 1]; k++)
			if (p->cap[p->oarc[k]] - in > most) {
				most = p->cap[p->oarc[k]] - in;
				worst = p->oarc[k];
			}
		if (most <= CUT_EPS)
			continue;
		for (int k = p->istart[v]; k < p->istart[v + 1]; k++)
			put_arc(p, P, p->iarc[k], 1, &n);
		put_arc(p, P, worst, -1, &n);
		add_row(lp, p, n, GLP_LO, 0, 0);
		added++;
	}
	for (int i = 0; i < p->nt; i++) {
		int t = p->term[i], n = 0;
		bool same = true;

		if (max_flow(p, t) >= 1 - CUT_EPS)
			continue;
		for (int a = 0; a < p->na; a++)
			if (p->level[arc_tail(g, a)] >= 0 &&
			    p->level[arc_head(g, a)] < 0 && usable(p, P, a))
				put_arc(p, P, a, 1, &n);
		add_row(lp, p, n, GLP_LO, 1, 0);
		added++;
		reaching(p, t);
		for (int v = 0; v < g->nv && same; v++)
			same = p->reach[v] == (p->level[v] < 0);
		if (same)
			continue;
		n = 0;
		for (int a = 0; a < p->na; a++)
			if (!p->reach[arc_tail(g, a)] && p->reach[arc_head(g, a)] &&
			    usable(p, P, a))
				put_arc(p, P, a, 1, &n);
		add_row(lp, p, n, GLP_LO, 1, 0);
		added++;
	}
	return added;
}

/* Rows both trees' values (the relaxation's, or mip's) violate, added. */
static int separate(struct prog *p, glp_prob *lp, bool mip)
{
	for (int j = 1; j <= p->ncols; j++)
		p->xv[j] = mip ? glp_mip_col_val(lp, j) : glp_get_col_prim(lp, j);
	return separate_tree(p, lp, 0) + separate_tree(p, lp, 1);
}

static void rowgen(glp_tree *T, void *info)
{
	struct prog *p = info;

	if (glp_ios_reason(T) == GLP_IROWGEN)
		separate(p, glp_ios_get_prob(T), false);
}

/* ---- the program --------------------------------------------------------- */

static void prog_release(struct prog *p)
{
	free(p->is_term);
	free(p->ostart);
	free(p->oarc);
	free(p->istart);
	free(p->iarc);
	free(p->xv);
	free(p->cap);
	free(p->flow);
	free(p->level);
	free(p->it);
	free(p->queue);
	free(p->reach);
	free(p->ind);
	free(p->val);
}

static int prog_init(struct prog *p)
{
	const struct ograph *g = p->g;
	int nv = g->nv, na = p->na, maxrow = 2 * na + 1, no = 0, ni = 0;

	p->ncols = (int)program_cols(g->ne);
	p->is_term = calloc((size_t)nv, sizeof(*p->is_term));
	p->ostart = calloc((size_t)nv + 1, sizeof(int));
	p->istart = calloc((size_t)nv + 1, sizeof(int));
	p->oarc = malloc((size_t)na * sizeof(int) + 1);
	p->iarc = malloc((size_t)na * sizeof(int) + 1);
	p->xv = malloc(((size_t)p->ncols + 1) * sizeof(double));
	p->cap = malloc((size_t)na * sizeof(double) + 1);
	p->flow = malloc((size_t)na * sizeof(double) + 1);
	p->level = malloc((size_t)nv * sizeof(int));
	p->it = malloc((size_t)nv * sizeof(int));
	p->queue = malloc((size_t)nv * sizeof(int));
	p->reach = malloc((size_t)nv * sizeof(bool));
	p->ind = malloc(((size_t)maxrow + 1) * sizeof(int));
	p->val = malloc(((size_t)maxrow + 1) * sizeof(double));
	if (!p->is_term || !p->ostart || !p->istart || !p->oarc ||
	    !p->iarc || !p->xv || !p->cap || !p->flow || !p->level ||
	    !p->it || !p->queue || !p->reach || !p->ind || !p->val)
		return -ENOMEM;
	for (int i = 0; i < p->nt; i++)
		p->is_term[p->term[i]] = true;
	/* the arcs either tree may buy, by tail and by head */
	for (int a = 0; a < na; a++)
		if (usable(p, 0, a) || usable(p, 1, a)) {
			p->ostart[arc_tail(g, a) + 1]++;
			p->istart[arc_head(g, a) + 1]++;
		}
	for (int v = 0; v < nv; v++) {
		p->ostart[v + 1] += p->ostart[v];
		p->istart[v + 1] += p->istart[v];
	}
	for (int v = 0; v < nv; v++) {
		p->level[v] = p->ostart[v];	/* fill positions */
		p->it[v] = p->istart[v];
	}
	for (int a = 0; a < na; a++)
		if (usable(p, 0, a) || usable(p, 1, a)) {
			p->oarc[p->level[arc_tail(g, a)]++] = a;
			p->iarc[p->it[arc_head(g, a)]++] = a;
			no++;
			ni++;
		}
	return no == p->ostart[nv] && ni == p->istart[nv] ? 0 : -EPROTO;
}

/*
 * The joint program's rows: a wavelength on a fibre carries one new
 * lightpath at most. The open new edges are bucketed by (fibre,
 * wavelength) first, so each row is written from its own edges. 0 or
 * -ENOMEM.
 */
static int wavelength_rows(struct prog *p, glp_prob *lp)
{
	const struct ograph *g = p->g;
	long nkeys = (long)g->nfibres * g->nlambda, npairs = 0;
	int *start = calloc((size_t)nkeys + 2, sizeof(*start)), *edge;

	if (!start)
		return -ENOMEM;
	for (int e = 0; e < g->ne; e++)
		if (g->e[e].kind == OE_NEW && !p->closed[e])
			for (int i = 0; i < g->e[e].nfib; i++) {
				start[(long)g->e[e].fib[i] * g->nlambda +
				      g->e[e].lambda + 2]++;
				npairs++;
			}
	edge = malloc(((size_t)npairs + 1) * sizeof(*edge));
	if (!edge) {
		free(start);
		return -ENOMEM;
	}
	for (long k = 2; k <= nkeys + 1; k++)
		start[k] += start[k - 1];
	/* start[k + 1]: where key k's edges go next; then where they end */
	for (int e = 0; e < g->ne; e++)
		if (g->e[e].kind == OE_NEW && !p->closed[e])
			for (int i = 0; i < g->e[e].nfib; i++)
				edge[start[(long)g->e[e].fib[i] * g->nlambda +
					   g->e[e].lambda + 1]++] = e;
	for (long k = 0; k < nkeys; k++) {
		int n = 0;

		for (int j = start[k]; j < start[k + 1]; j++)
			for (int P = 0; P < 2; P++)
				for (int d = 0; d < 2; d++)
					if (usable(p, P, 2 * edge[j] + d)) {
						p->ind[++n] =
							col_x(p, P, 2 * edge[j] + d);
						p->val[n] = 1;
					}
		if (n > 1)
			add_row(lp, p, n, GLP_UP, 0, 1);
	}
	free(edge);
	free(start);
	return 0;
}

/* The columns and the rows written up front (see the top). */
static int load(struct prog *p, glp_prob *lp)
{
	const struct ograph *g = p->g;
	int n;

	glp_set_obj_dir(lp, GLP_MIN);
	glp_add_cols(lp, p->ncols);
	for (int j = 1; j <= p->ncols; j++) {
		glp_set_col_kind(lp, j, GLP_BV);
		glp_set_col_bnds(lp, j, GLP_FX, 0, 0);
	}
	for (int a = 0; a < p->na; a++) {
		const struct oedge *e = &g->e[a / 2];

		for (int P = 0; P < 2; P++)
			if (usable(p, P, a)) {
				glp_set_col_bnds(lp, col_x(p, P, a), GLP_DB, 0, 1);
				glp_set_obj_coef(lp, col_x(p, P, a), e->w);
			}
		if (reusable(p, a)) {
			glp_set_col_bnds(lp, col_r(p, a), GLP_DB, 0, 1);
			glp_set_obj_coef(lp, col_r(p, a), e->w_reuse);
		}
	}
	for (int P = 0; P < 2; P++) {
		for (int v = 1; v < g->nv; v++) {
			n = 0;
			for (int k = p->istart[v]; k < p->istart[v + 1]; k++)
				if (usable(p, P, p->iarc[k]))
					put_arc(p, P, p->iarc[k], 1, &n);
			if (p->is_term[v])
				add_row(lp, p, n, GLP_FX, 1, 1);
			else if (n > 1)
				add_row(lp, p, n, GLP_UP, 0, 1);
		}
		for (int e = 0; e < g->ne; e++) {
			n = 0;
			for (int d = 0; d < 2; d++)
				if (usable(p, P, 2 * e + d))
					put_arc(p, P, 2 * e + d, 1, &n);
			if (n > 1)
				add_row(lp, p, n, GLP_UP, 0, 1);
		}
	}
	for (int e = 0; e < g->ne; e++) {
		n = 0;
		for (int d = 0; d < 2; d++)
			if (reusable(p, 2 * e + d)) {
				p->ind[++n] = col_r(p, 2 * e + d);
				p->val[n] = 1;
				if (usable(p, 0, 2 * e + d)) {
					p->ind[++n] = col_x(p, 0, 2 * e + d);
					p->val[n] = -1;
				}
			}
		if (n)
			add_row(lp, p, n, GLP_UP, 0, 0);
	}
	if (!g->joint)
		return 0;
	return wavelength_rows(p, lp);
}

/* Milliseconds left before the deadline, at least 1. */
static int left_ms(const struct prog *p)
{
	double ms = (p->deadline - mono_s()) * 1000;

	return ms < 1 ? 1 : ms > 1e9 ? 1000000000 : (int)ms;
}

/*
 * The relaxation with every cut it violates added, from the basis it was
 * left with. 0, -ENOSPC if it has no solution (a terminal cut off),
 * -ETIMEDOUT, -EPROTO.
 */
static int relax(struct prog *p, glp_prob *lp)
{
	glp_smcp smcp;

	glp_init_smcp(&smcp);
	smcp.msg_lev = GLP_MSG_OFF;
	smcp.meth = GLP_DUALP;
	for (;;) {
		int r, n;

		if (mono_s() >= p->deadline)
			return -ETIMEDOUT;
		smcp.tm_lim = left_ms(p);
		r = glp_simplex(lp, &smcp);
		if (r == GLP_EBADB || r == GLP_ESING || r == GLP_ECOND) {
			/* branch and bound left no basis to start from */
			glp_std_basis(lp);
			r = glp_simplex(lp, &smcp);
		}
		if (r == GLP_ETMLIM)
			return -ETIMEDOUT;
		if (r)
			return -EPROTO;
		if (glp_get_status(lp) == GLP_NOFEAS)
			return -ENOSPC;
		if (glp_get_status(lp) != GLP_OPT)
			return -EPROTO;
		n = separate(p, lp, false);
		if (!n)
			return 0;
	}
}

/*
 * Solve without the edges closed: bought[P][a] gets whether procedure P's
 * tree buys arc a, reused[a] whether the upload crosses arc a on the
 * broadcast's lightpath, by deadline (mono_s). 0, -ENOSPC if the
 * servers are not connected, -ETIMEDOUT, -ENOMEM, -EPROTO.
 */
int opt_solve(const struct ograph *g, const bool *closed, const int *term,
	      int nt, bool *bought[2], bool *reused, double deadline)
{
	struct prog p = { .g = g, .closed = closed, .term = term, .nt = nt,
			  .na = 2 * g->ne, .deadline = deadline };
	glp_prob *lp = NULL;
	glp_iocp parm;
	int err = prog_init(&p), r;

	if (err)
		goto out;
	glp_term_out(GLP_OFF);	/* nothing on stdout: plan --json is there */
	lp = glp_create_prob();
	err = load(&p, lp);
	if (err)
		goto out;
	glp_init_iocp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.sr_heur = GLP_OFF;	/* its roundings never meet the cuts */
	parm.cb_func = rowgen;
	parm.cb_info = &p;
	/*
	 * Branch and cut; its answer is checked once more against every
	 * cut (exactly, on integers) and the search resumed with those it
	 * violates, should GLPK have lost one on the way.
	 */
	for (;;) {
		err = relax(&p, lp);
		if (err)
			goto out;
		parm.tm_lim = left_ms(&p);
		r = glp_intopt(lp, &parm);
		if (r == GLP_ETMLIM || (!r && glp_mip_status(lp) == GLP_FEAS)) {
			err = -ETIMEDOUT;
			goto out;
		}
		if (!r && glp_mip_status(lp) == GLP_NOFEAS) {
			err = -ENOSPC;
			goto out;
		}
		if (r || glp_mip_status(lp) != GLP_OPT) {
			err = -EPROTO;
			goto out;
		}
		if (!separate(&p, lp, true))
			break;
	}
	for (int P = 0; P < 2; P++)
		for (int a = 0; a < p.na; a++)
			bought[P][a] = glp_mip_col_val(lp, col_x(&p, P, a)) > 0.5;
	for (int a = 0; a < p.na; a++)
		reused[a] = glp_mip_col_val(lp, col_r(&p, a)) > 0.5;
	err = 0;
out:
	if (lp)
		glp_delete_prob(lp);
	prog_release(&p);
	return err;
}

// SPDX-License-Identifier: MIT
/* A plan's emulation split over hosts at ROADM fibres (partition.h). */
#include "partition.h"

#include <errno.h>
#include <math.h>
#include <metis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"
#include "grow.h"

/* VXLAN's network identifiers are 24 bits. */
#define VNI_MAX ((1u << 24) - 1)
/* A fibre's weight: cutting a lit wavelength costs this much more than
 * cutting an unlit fibre (which costs only a link between hosts that
 * carries nothing; METIS wants weights above 0). */
#define LIT_WEIGHT 1000
/* METIS runs of each kind (k-way, recursive), a seed each. */
#define PART_TRIES 8

struct graph {
	int nsites;
	int *site;		/* per node: its site (ROADM) index */
	int *roadm;		/* per site: its ROADM node */
	long *workers;		/* per site */
	long *lit;		/* per fibre: wavelengths lit over it */
};

static int said(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int said(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return err;
}

static void graph_release(struct graph *g)
{
	FREE_ALL(g->site, g->roadm, g->workers, g->lit);
}

/* Each node's site, the sites' workers and each fibre's lit wavelengths. */
static int graph_of(const struct plan *p, struct graph *g)
{
	const struct scenario *sc = p->sc;

	g->site = malloc((size_t)sc->nnodes * sizeof(*g->site));
	g->roadm = malloc((size_t)sc->nnodes * sizeof(*g->roadm));
	g->workers = calloc((size_t)sc->nnodes, sizeof(*g->workers));
	g->lit = calloc((size_t)sc->nfibres + 1, sizeof(*g->lit));
	if (!g->site || !g->roadm || !g->workers || !g->lit)
		return -ENOMEM;
	g->nsites = 0;
	for (int n = 0; n < sc->nnodes; n++)
		if (sc->nodes[n].kind == NODE_ROADM) {
			g->roadm[g->nsites] = n;
			g->site[n] = g->nsites++;
		}
	/* routers after ROADMs, servers after routers: attach is known */
	for (int kind = NODE_ROUTER; kind <= NODE_SERVER; kind++)
		for (int n = 0; n < sc->nnodes; n++)
			if (sc->nodes[n].kind == (enum node_kind)kind)
				g->site[n] = g->site[sc->nodes[n].attach];
	for (int t = 0; t < p->ntasks; t++)
		for (int m = 0; !p->tasks[t].blocked &&
				m < p->tasks[t].nmodels; m++)
			g->workers[g->site[p->tasks[t].server[m]]]++;
	for (int l = 0; l < p->net->nlp; l++)
		for (int k = 0; k < p->net->lp[l].nfib; k++)
			g->lit[p->net->lp[l].fib[k]]++;
	return 0;
}

/* Sites in file order, host by host up to an equal share of workers. */
static void naive_split(const struct graph *g, int nhosts, idx_t *part)
{
	long total = 0, before = 0;

	for (int s = 0; s < g->nsites; s++)
		total += g->workers[s];
	for (int s = 0; s < g->nsites; s++) {
		long h = total ? (2 * before + g->workers[s]) * nhosts /
					 (2 * total) :
				 (long)s * nhosts / g->nsites;

		part[s] = (idx_t)(h < nhosts ? h : nhosts - 1);
		before += g->workers[s];
	}
}

/* A split's most loaded host over the mean, and its lit cut (*cut). */
static double score(const struct plan *p, const struct graph *g, int nhosts,
		    const idx_t *part, long *cut)
{
	const struct scenario *sc = p->sc;
	long load[PART_HOSTS_MAX] = { 0 }, total = 0, most = 0;

	*cut = 0;
	for (int f = 0; f < sc->nfibres; f++)
		if (part[g->site[sc->fibres[f].a]] !=
		    part[g->site[sc->fibres[f].b]])
			*cut += g->lit[f];
	for (int s = 0; s < g->nsites; s++) {
		load[part[s]] += g->workers[s];
		total += g->workers[s];
	}
	for (int h = 0; h < nhosts; h++)
		most = load[h] > most ? load[h] : most;
	return total ? (double)most * nhosts / (double)total : 1;
}

/* Whether a split (balance b, lit cut c) beats the best so far: within
 * the balance bound the fewer tunnels, else the better balance. */
static bool better(double b, long c, double bb, long bc)
{
	bool ok = b <= PART_BALANCE + 1e-9, bok = bb <= PART_BALANCE + 1e-9;

	if (ok != bok)
		return ok;
	if (!ok)
		return b < bb - 1e-9 || (b < bb + 1e-9 && c < bc);
	return c < bc || (c == bc && b < bb - 1e-9);
}

/*
 * Where METIS's best split is over PART_BALANCE (a few coarse sites can
 * defeat it: on NSFNET over 4 hosts its best was 1.133, where 1.080 can
 * be had), sites leave the most loaded host one at a time, by a move or
 * else a swap, whichever lowers the most loaded host the most, fewest
 * tunnels first among equals; no host is emptied. Bounded: each step
 * lowers the sum of the loads' squares.
 */
static void rebalance(const struct plan *p, const struct graph *g,
		      int nhosts, idx_t *part)
{
	for (int step = 0; step < 4 * g->nsites; step++) {
		long c, bc = 0, cnt[PART_HOSTS_MAX] = { 0 };
		double b = score(p, g, nhosts, part, &c), bb = b;
		int bs = -1, bt = -1, bh = -1;

		if (b <= PART_BALANCE + 1e-9)
			return;
		bc = c;
		for (int s = 0; s < g->nsites; s++)
			cnt[part[s]]++;
		for (int s = 0; s < g->nsites; s++) {
			idx_t from = part[s];

			for (int h = 0; h < nhosts; h++) {
				double nb;
				long nc;

				if (h == from || cnt[from] < 2)
					continue;
				part[s] = h;
				nb = score(p, g, nhosts, part, &nc);
				part[s] = from;
				if (nb < bb - 1e-9 ||
				    (nb < bb + 1e-9 && bs >= 0 && nc < bc)) {
					bb = nb, bc = nc, bs = s, bh = h, bt = -1;
				}
			}
		}
		for (int s = 0; bs < 0 && s < g->nsites; s++)
			for (int t = s + 1; t < g->nsites; t++) {
				idx_t hs = part[s], ht = part[t];
				double nb;
				long nc;

				if (hs == ht || g->workers[s] == g->workers[t])
					continue;
				part[s] = ht, part[t] = hs;
				nb = score(p, g, nhosts, part, &nc);
				part[s] = hs, part[t] = ht;
				if (nb < bb - 1e-9 ||
				    (nb < bb + 1e-9 && bt >= 0 && nc < bc))
					bb = nb, bc = nc, bs = s, bt = t;
			}
		if (bs < 0)
			return;		/* nothing lowers it */
		if (bt >= 0) {
			idx_t h = part[bs];

			part[bs] = part[bt];
			part[bt] = h;
		} else {
			part[bs] = bh;
		}
	}
}

/*
 * METIS on the sites (weights: workers) and fibres (lit wavelengths):
 * k-way and recursive bisection, aiming at 1.1 and at 1.03 of the mean,
 * PART_TRIES seeds each, the best split
 * kept (better()). A small graph's coarse sites can defeat a single run.
 */
static int metis_split(const struct plan *p, const struct graph *g,
		       int nhosts, idx_t *part)
{
	const struct scenario *sc = p->sc;
	idx_t nv = g->nsites, ncon = 1, np = nhosts, cut = 0;
	idx_t opt[METIS_NOPTIONS];
	idx_t *xadj = calloc((size_t)nv + 1, sizeof(*xadj));
	idx_t *adj = malloc(2 * ((size_t)sc->nfibres + 1) * sizeof(*adj));
	idx_t *wadj = malloc(2 * ((size_t)sc->nfibres + 1) * sizeof(*wadj));
	idx_t *vw = malloc(((size_t)nv + 1) * sizeof(*vw));
	idx_t *try = malloc(((size_t)nv + 1) * sizeof(*try));
	long total = 0, bc = 0;
	double bb = INFINITY;
	int err = -ENOMEM, ne = 0;

	if (!xadj || !adj || !wadj || !vw || !try)
		goto out;
	for (int s = 0; s < nv; s++)
		total += g->workers[s];
	for (int s = 0; s < nv; s++)
		vw[s] = (idx_t)(total ? g->workers[s] : 1);
	/* CSR, a fibre each way; parallel fibres merged into one edge */
	for (int s = 0; s < nv; s++) {
		xadj[s] = ne;
		for (int f = 0; f < sc->nfibres; f++) {
			int a = g->site[sc->fibres[f].a];
			int b = g->site[sc->fibres[f].b];
			int o = a == s ? b : b == s ? a : -1;
			idx_t w = 1 + (idx_t)(LIT_WEIGHT * g->lit[f]);
			int k;

			if (o < 0 || o == s)
				continue;
			for (k = xadj[s]; k < ne && adj[k] != o; k++)
				;
			if (k < ne) {
				wadj[k] += w;
				continue;
			}
			adj[ne] = o;
			wadj[ne++] = w;
		}
	}
	xadj[nv] = ne;
	err = -EIO;
	for (int k = 0; k < 4 * PART_TRIES; k++) {
		double b;
		long c;
		int rc;

		METIS_SetDefaultOptions(opt);
		opt[METIS_OPTION_SEED] = 1 + k / 4;
		/* 1.1 at most, or tighter: a coarse graph may need that to
		 * land within 1.1 */
		opt[METIS_OPTION_UFACTOR] = k / 2 % 2 ? 30 : 100;
		opt[METIS_OPTION_NUMBERING] = 0;
		rc = k % 2 ? METIS_PartGraphRecursive(&nv, &ncon, xadj, adj,
						      vw, NULL, wadj, &np, NULL,
						      NULL, opt, &cut, try) :
			     METIS_PartGraphKway(&nv, &ncon, xadj, adj, vw,
						 NULL, wadj, &np, NULL, NULL,
						 opt, &cut, try);
		if (rc != METIS_OK)
			continue;
		b = score(p, g, nhosts, try, &c);
		if (err || better(b, c, bb, bc)) {
			memcpy(part, try, (size_t)nv * sizeof(*part));
			bb = b;
			bc = c;
			err = 0;
		}
	}
out:
	FREE_ALL(try, xadj, adj, wadj, vw);
	return err;
}

unsigned partition_vni(const struct partition *pt, int fibre, int lambda,
		       int dir)
{
	return 1 + 2 * ((unsigned)fibre * (unsigned)pt->wmax +
			(unsigned)lambda) + (unsigned)dir;
}

/*
 * out from each site's host: hosts per node, loads, tunnels (their VNIs
 * from wmax, the most wavelengths any fibre has).
 */
static int fill(const struct plan *p, const struct graph *g,
		const idx_t *part, int wmax, struct partition *out)
{
	const struct scenario *sc = p->sc;
	long total = 0, most = 0;

	out->wmax = wmax;
	out->host = malloc((size_t)sc->nnodes * sizeof(*out->host));
	out->workers = calloc((size_t)out->nhosts, sizeof(*out->workers));
	out->namespaces = calloc((size_t)out->nhosts,
				 sizeof(*out->namespaces));
	out->tunnel = NULL;
	if (!out->host || !out->workers || !out->namespaces)
		return -ENOMEM;
	for (int n = 0; n < sc->nnodes; n++) {
		out->host[n] = (int)part[g->site[n]];
		out->namespaces[out->host[n]]++;
	}
	for (int s = 0; s < g->nsites; s++)
		out->workers[part[s]] += g->workers[s];
	for (int f = 0; f < sc->nfibres; f++) {
		bool cut = out->host[sc->fibres[f].a] !=
			   out->host[sc->fibres[f].b];

		out->ncut_fibres += cut;
		out->ntunnels += cut ? 2 * (int)g->lit[f] : 0;
	}
	out->tunnel = calloc((size_t)out->ntunnels + 1, sizeof(*out->tunnel));
	if (!out->tunnel)
		return -ENOMEM;
	out->ntunnels = 0;
	for (int l = 0; l < p->net->nlp; l++) {
		const struct lightpath *lp = &p->net->lp[l];

		for (int k = 0; k < lp->nfib; k++) {
			const struct scn_fibre *fb = &sc->fibres[lp->fib[k]];
			int ha = out->host[fb->a], hb = out->host[fb->b];

			for (int d = 0; ha != hb && d < 2; d++)
				out->tunnel[out->ntunnels++] =
					(struct part_tunnel){
						lp->fib[k], lp->lambda, d,
						d ? hb : ha, d ? ha : hb,
						partition_vni(out, lp->fib[k],
							      lp->lambda, d) };
		}
	}
	for (int h = 0; h < out->nhosts; h++) {
		total += out->workers[h];
		if (out->workers[h] > most)
			most = out->workers[h];
	}
	out->balance = total ? (double)most * out->nhosts / (double)total : 1;
	return 0;
}

int partition_plan(const struct plan *p, int nhosts, bool naive,
		   struct partition *out, char *why, size_t len)
{
	const struct scenario *sc = p->sc;
	struct graph g = { 0 };
	idx_t *part = NULL;
	int err, wmax = 1;

	memset(out, 0, sizeof(*out));
	if (nhosts < 1 || nhosts > PART_HOSTS_MAX)
		return said(why, len, -EINVAL, "a split over %d hosts: from 1 "
			    "to %d", nhosts, PART_HOSTS_MAX);
	for (int f = 0; f < sc->nfibres; f++)
		if (sc->fibres[f].wavelengths > wmax)
			wmax = sc->fibres[f].wavelengths;
	if (1 + 2 * ((double)sc->nfibres * wmax) > VNI_MAX)
		return said(why, len, -EINVAL, "%d fibres of up to %d "
			    "wavelengths need more tunnel identifiers than "
			    "VXLAN's %u", sc->nfibres, wmax, VNI_MAX);
	err = graph_of(p, &g);
	if (!err && g.nsites < nhosts)
		err = said(why, len, -EINVAL, "'%s' has %d ROADM sites, which "
			   "stay whole on one host each: it cannot be split "
			   "over %d hosts", sc->name, g.nsites, nhosts);
	part = err ? NULL : calloc((size_t)g.nsites + 1, sizeof(*part));
	if (!err && !part)
		err = -ENOMEM;
	if (!err && nhosts > 1 && naive)
		naive_split(&g, nhosts, part);
	else if (!err && nhosts > 1 && metis_split(p, &g, nhosts, part))
		err = said(why, len, -EIO, "METIS could not split '%s' over "
			   "%d hosts", sc->name, nhosts);
	else if (!err && nhosts > 1)
		rebalance(p, &g, nhosts, part);
	out->nhosts = nhosts;
	if (!err)
		err = fill(p, &g, part, wmax, out);
	for (int h = 0; !err && h < nhosts; h++)
		if (!out->namespaces[h])
			err = said(why, len, -EIO, "the split of '%s' left host "
				   "%d of %d with nothing", sc->name, h + 1,
				   nhosts);
	if (err == -ENOMEM)
		said(why, len, err, "out of memory");
	if (err)
		partition_release(out);
	free(part);
	graph_release(&g);
	return err;
}

void partition_release(struct partition *pt)
{
	if (!pt)
		return;
	FREE_ALL(pt->host, pt->workers, pt->namespaces, pt->tunnel);
	memset(pt, 0, sizeof(*pt));
}

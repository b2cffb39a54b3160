// SPDX-License-Identifier: MIT
#include "tools/planout.h"
#include "tools/twinlab.h"
#include "tools/json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "twin/addr.h"
#include "twin/predict.h"
#include "twin/sched.h"

static const char *nm(const struct plan *p, int node)
{
	return p->sc->nodes[node].name;
}

void link_name(const struct plan *p, int link, char *buf, size_t len)
{
	int n2 = 2 * p->sc->nnodes;

	if (link < n2) {
		int s = link / 2, r = p->sc->nodes[s].attach;

		snprintf(buf, len, "%s>%s", link % 2 ? nm(p, r) : nm(p, s),
			 link % 2 ? nm(p, s) : nm(p, r));
	} else {
		int l = (link - n2) / 2;
		const struct lightpath *lp = &p->net->lp[l];

		snprintf(buf, len, "lp%d:%s>%s", l,
			 link % 2 ? nm(p, lp->b) : nm(p, lp->a),
			 link % 2 ? nm(p, lp->a) : nm(p, lp->b));
	}
}

static struct json_object *path_json(const struct plan *p,
				     const struct ppath *pp,
				     const struct endpoint *ep)
{
	struct json_object *o = json_object_new_object();
	struct json_object *nodes = json_object_new_array();
	struct json_object *via = json_object_new_array();
	int at = pp->from;

	if (!o || !nodes || !via) {
		json_object_put(nodes);
		json_object_put(via);
		goto fail;
	}
	if (json_add(o, "nodes", nodes)) {
		json_object_put(via);
		goto fail;
	}
	if (json_add(o, "via", via))
		goto fail;
	J(!json_push(nodes, json_object_new_string(nm(p, at))));
	for (int h = 0; h < pp->nhops; h++) {
		const struct hop *x = &pp->hops[h];
		char buf[32];

		if (x->kind == HOP_ACCESS)
			snprintf(buf, sizeof(buf), "access");
		else
			snprintf(buf, sizeof(buf), "lp%d", x->idx);
		J(!json_push(via, json_object_new_string(buf)));
		at = hop_next(p, at, x);
		J(!json_push(nodes, json_object_new_string(nm(p, at))));
	}
	J(!json_add(o, "from", json_object_new_string(nm(p, pp->from))));
	J(!json_add(o, "to", json_object_new_string(nm(p, pp->to))));
	J(!json_add(o, "km", json_object_new_double(pp->km)));
	J(!json_add(o, "fibre_hops", json_object_new_int(pp->fibre_hops)));
	if (ep) {
		char buf[32];

		J(!json_add(o, "src",
			    json_object_new_string(addr_str(ep->src, buf))));
		J(!json_add(o, "dst",
			    json_object_new_string(addr_str(ep->dst, buf))));
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

/* A tree's paths, each with its transfer's addresses where ep (the
 * task's endpoints) is given. */
static struct json_object *tree_json(const struct plan *p,
				     const struct task_plan *tp,
				     const struct tree *t,
				     const struct endpoint *ep)
{
	struct json_object *a = json_object_new_array();
	int up = t == &tp->up;

	if (!a)
		return NULL;
	for (int m = 1; m < tp->nmodels; m++)
		J(!json_push(a, path_json(p, &t->path[m],
					  ep ? &ep[2 * m + up] : NULL)));
	return a;
fail:
	json_object_put(a);
	return NULL;
}

static struct json_object *task_json(const struct plan *p,
				     const struct task_plan *tp,
				     const struct endpoint *ep)
{
	const struct scn_task *t = tp->task;
	struct json_object *o = json_object_new_object();
	struct json_object *locals = json_object_new_array();
	struct json_object *agg;

	if (!o || json_add(o, "locals", locals))
		goto fail;
	J(!json_add(o, "name", json_object_new_string(t->name)));
	J(!json_add(o, "global", json_object_new_string(nm(p, t->global))));
	for (int i = 0; i < t->nlocals; i++)
		J(!json_push(locals,
			     json_object_new_string(nm(p, t->locals[i]))));
	J(!json_add(o, "model_bytes",
		    json_object_new_int64((int64_t)scn_task_bytes(t))));
	J(!json_add(o, "demand_gbps", json_object_new_double(t->demand_gbps)));
	J(!json_add(o, "blocked", json_object_new_boolean(tp->blocked)));
	if (tp->blocked) {
		J(!json_add(o, "why", json_object_new_string(tp->why)));
		return o;
	}
	J(!json_add(o, "wavelength_links",
		    json_object_new_int64(tp->wavelength_links)));
	J(!json_add(o, "bytes_links", json_object_new_double(tp->bytes_links)));
	J(!json_add(o, "tree_weight", json_object_new_double(tp->tree_weight)));
	if (tp->program)
		J(!json_add(o, "opt_program",
			    json_object_new_string(tp->program)));
	if (tp->trees_by)
		J(!json_add(o, "trees_by",
			    json_object_new_string(tp->trees_by)));
	if (tp->shape) {
		J(!json_add(o, "shape", json_object_new_string(tp->shape)));
		if (isfinite(tp->tree_sum_s))
			J(!json_add(o, "tree_rounds_sum_s",
				    json_object_new_double(tp->tree_sum_s)));
		if (isfinite(tp->star_sum_s))
			J(!json_add(o, "star_rounds_sum_s",
				    json_object_new_double(tp->star_sum_s)));
		J(!json_add(o, "reshaped",
			    json_object_new_boolean(tp->reshaped)));
	}
	if (p->predicted) {
		J(!json_add(o, "round_s", json_object_new_double(tp->round_s)));
		J(!json_add(o, "broadcast_s",
			    json_object_new_double(tp->bcast_s)));
		J(!json_add(o, "compute_s",
			    json_object_new_double(tp->compute_s)));
		J(!json_add(o, "upload_s",
			    json_object_new_double(tp->upload_s)));
	}
	agg = json_object_new_array();
	J(!json_add(o, "aggregation", agg));
	for (int m = 0; m < tp->nmodels; m++)
		if (task_aggregates(tp, m))
			J(!json_push(agg, json_object_new_string(
						  nm(p, tp->server[m]))));
	J(!json_add(o, "broadcast", tree_json(p, tp, &tp->bcast, ep)));
	J(!json_add(o, "upload", tree_json(p, tp, &tp->up, ep)));
	return o;
fail:
	json_object_put(o);
	return NULL;
}

static struct json_object *lightpath_json(const struct plan *p, int l)
{
	const struct lightpath *lp = &p->net->lp[l];
	const struct scenario *sc = p->sc;
	struct json_object *o = json_object_new_object();
	struct json_object *roadms = json_object_new_array();
	int at = sc->nodes[lp->a].attach;

	if (!o || json_add(o, "roadms", roadms))
		goto fail;
	J(!json_add(o, "id", json_object_new_int(l)));
	J(!json_add(o, "a", json_object_new_string(nm(p, lp->a))));
	J(!json_add(o, "b", json_object_new_string(nm(p, lp->b))));
	J(!json_add(o, "wavelength", json_object_new_int(lp->lambda)));
	J(!json_add(o, "km", json_object_new_double(lp->km)));
	J(!json_add(o, "capacity_gbps", json_object_new_double(lp->cap_gbps)));
	J(!json_add(o, "residual_gbps_ab",
		    json_object_new_double(lp->resid[0])));
	J(!json_add(o, "residual_gbps_ba",
		    json_object_new_double(lp->resid[1])));
	J(!json_add(o, "lit_by",
		    json_object_new_string(sc->tasks[lp->task].name)));
	J(!json_push(roadms, json_object_new_string(nm(p, at))));
	for (int i = 0; i < lp->nfib; i++) {
		const struct scn_fibre *f = &sc->fibres[lp->fib[i]];

		at = f->a == at ? f->b : f->a;
		J(!json_push(roadms, json_object_new_string(nm(p, at))));
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

/* One event as the file gives it, names resolved. */
static struct json_object *event_json(const struct scenario *sc,
				      const struct scn_event *e)
{
	struct json_object *o = json_object_new_object();
	const struct scn_fibre *fb = &sc->fibres[e->fibre];

	J(o);
	J(!json_add(o, "at_s", json_object_new_double(e->at_s)));
	J(!json_add(o, "kind",
		    json_object_new_string(scn_event_kind_name(e->kind))));
	switch (e->kind) {
	case SCN_EV_CUT:
	case SCN_EV_REPAIR:
		J(!json_add(o, "a",
			    json_object_new_string(sc->nodes[fb->a].name)));
		J(!json_add(o, "b",
			    json_object_new_string(sc->nodes[fb->b].name)));
		break;
	case SCN_EV_ARRIVE:
	case SCN_EV_LEAVE:
		J(!json_add(o, "task", json_object_new_string(e->task.name)));
		break;
	case SCN_EV_TRAFFIC:
		J(!json_add(o, "from",
			    json_object_new_string(sc->nodes[e->from].name)));
		J(!json_add(o, "to",
			    json_object_new_string(sc->nodes[e->to].name)));
		J(!json_add(o, "gbps", json_object_new_double(e->gbps)));
		J(!json_add(o, "for_s", json_object_new_double(e->for_s)));
		break;
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

struct json_object *json_addr(uint32_t a)
{
	char buf[32];

	return json_object_new_string(addr_str(a, buf));
}

/* A task's transfers as addr_task_transfers walks them, into an array. */
struct transfers_ctx {
	const struct plan *p;
	int task, node, k;	/* the k-th: broadcast first, then upload */
	struct json_object *arr;
};

static int transfer_json(void *ctx, const struct ppath *pp,
			 const struct endpoint *ep)
{
	struct transfers_ctx *tj = ctx;
	const struct task_plan *tp = &tj->p->tasks[tj->task];
	const struct scn_node *nodes = tj->p->sc->nodes;
	struct json_object *x;
	bool up = tj->k++ >= tp->nmodels - 1;

	if (tj->node >= 0 && pp->from != tj->node && pp->to != tj->node)
		return 0;
	x = json_object_new_object();
	return json_push(tj->arr, x) ||
	       json_add(x, "task", json_object_new_string(tp->task->name)) ||
	       json_add(x, "phase",
			json_object_new_string(up ? "upload" : "broadcast")) ||
	       json_add(x, "from",
			json_object_new_string(nodes[pp->from].name)) ||
	       json_add(x, "to", json_object_new_string(nodes[pp->to].name)) ||
	       json_add(x, "src", json_addr(ep->src)) ||
	       json_add(x, "dst", json_addr(ep->dst)) ? -ENOMEM : 0;
}

int transfers_json(const struct plan *p, const struct addressing *a,
		   int task, int node, struct json_object *arr)
{
	int err = 0;

	for (int t = task < 0 ? 0 : task;
	     !err && t < (task < 0 ? p->ntasks : task + 1); t++) {
		struct transfers_ctx tj = { .p = p, .task = t, .node = node,
					    .arr = arr };

		err = addr_task_transfers(p, a, t, transfer_json, &tj);
	}
	return err;
}

struct json_object *plan_json(const struct plan *p)
{
	return plan_json_addressed(p, NULL);
}

struct json_object *plan_json_addressed(const struct plan *p,
					const struct addressing *a)
{
	struct json_object *o = json_object_new_object();
	struct json_object *sum = json_object_new_object();
	struct json_object *lps = json_object_new_array();
	struct json_object *links = json_object_new_array();
	struct json_object *tasks = json_object_new_array();

	if (!o || json_add(o, "summary", sum)) {
		json_object_put(lps);
		json_object_put(links);
		json_object_put(tasks);
		goto fail;
	}
	if (json_add(o, "lightpaths", lps)) {
		json_object_put(links);
		json_object_put(tasks);
		goto fail;
	}
	if (json_add(o, "links", links)) {
		json_object_put(tasks);
		goto fail;
	}
	if (json_add(o, "tasks", tasks))
		goto fail;
	J(!json_add(o, "scenario", json_object_new_string(p->sc->name)));
	J(!json_add(o, "scheduler", json_object_new_string(p->scheduler)));
	J(!json_add(sum, "tasks", json_object_new_int(p->ntasks)));
	J(!json_add(sum, "blocked", json_object_new_int(p->blocked)));
	J(!json_add(sum, "lightpaths", json_object_new_int(p->net->nlp)));
	J(!json_add(sum, "wavelength_links",
		    json_object_new_int64(p->wavelength_links)));
	J(!json_add(sum, "bytes_links",
		    json_object_new_double(p->bytes_links)));
	if (p->predicted)
		J(!json_add(sum, "mean_round_s",
			    json_object_new_double(p->mean_round_s)));
	if (p->predicted)
		J(!json_add(sum, "predictor",
			    json_object_new_string(p->predictor)));
	if (p->polish.evals) {
		const struct plan_polish *po = &p->polish;
		struct json_object *x = json_object_new_object();

		J(x);
		if (json_add(sum, "polish", x))
			goto fail;
		J(!json_add(x, "plans_predicted",
			    json_object_new_int(po->evals)));
		J(!json_add(x, "greedy_rounds_sum_s",
			    json_object_new_double(po->greedy_s)));
		J(!json_add(x, "all_star_rounds_sum_s",
			    json_object_new_double(po->stars_s)));
		J(!json_add(x, "all_star_blocked",
			    json_object_new_int(po->stars_blocked)));
		J(!json_add(x, "rounds_sum_s",
			    json_object_new_double(po->final_s)));
	}
	for (int l = 0; l < p->net->nlp; l++)
		J(!json_push(lps, lightpath_json(p, l)));
	for (int l = 0; p->predicted && l < plan_nlinks(p); l++) {
		struct json_object *x;
		char buf[64];

		if (p->link_bytes[l] == 0)
			continue;
		link_name(p, l, buf, sizeof(buf));
		x = json_object_new_object();
		J(!json_push(links, x));
		J(!json_add(x, "link", json_object_new_string(buf)));
		J(!json_add(x, "gbps",
			    json_object_new_double(plan_link_gbps(p, l))));
		J(!json_add(x, "bytes",
			    json_object_new_double(p->link_bytes[l])));
	}
	for (int i = 0; i < p->ntasks; i++)
		J(!json_push(tasks, task_json(p, &p->tasks[i],
						  a ? a->ep[i] : NULL)));
	if (p->sc->nevents) {
		struct json_object *ev = json_object_new_array();

		J(!json_add(o, "events", ev));
		for (int k = 0; k < p->sc->nevents; k++)
			J(!json_push(ev, event_json(p->sc, &p->sc->events[k])));
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

/* The background traffic of an epoch's plan, as routed. */
static struct json_object *background_json(const struct scenario *sc,
					   const struct plan *p)
{
	struct json_object *a = json_object_new_array();

	J(a);
	for (int i = 0; i < p->nbg; i++) {
		const struct bg_flow *f = &p->bg[i];
		struct json_object *o = json_object_new_object();

		J(!json_push(a, o));
		J(!json_add(
			o, "from",
			json_object_new_string(sc->nodes[f->bg->from].name)));
		J(!json_add(o, "to",
			    json_object_new_string(sc->nodes[f->bg->to].name)));
		J(!json_add(o, "gbps", json_object_new_double(f->bg->gbps)));
		J(!json_add(o, "routed", json_object_new_boolean(f->routed)));
		if (f->routed) {
			J(!json_add(o, "hops",
				    json_object_new_int(f->path.nhops)));
			J(!json_add(o, "km",
				    json_object_new_double(f->path.km)));
		} else {
			J(!json_add(o, "why", json_object_new_string(f->why)));
		}
	}
	return a;
fail:
	json_object_put(a);
	return NULL;
}

struct json_object *timeline_json(const struct timeline *tl)
{
	struct json_object *a = json_object_new_array();

	J(a);
	for (int i = 0; i < tl->n; i++) {
		const struct epoch *e = &tl->e[i];
		struct json_object *o = json_object_new_object(), *moved;

		J(!json_push(a, o));
		J(!json_add(o, "at_s", json_object_new_double(e->at_s)));
		J(!json_add(o, "event",
			    json_object_new_string(epoch_name(tl, e))));
		J(!json_add(o, "background", background_json(tl->sc, e->plan)));
		J(!json_add(o, "tasks", json_object_new_int(e->plan->ntasks)));
		J(!json_add(o, "blocked",
			    json_object_new_int(e->plan->blocked)));
		moved = json_object_new_array();
		J(!json_add(o, "moved", moved));
		for (int t = 0; t < e->plan->ntasks; t++)
			if (e->moved[t])
				J(!json_push(
					moved,
					json_object_new_string(
						e->plan->tasks[t].task->name)));
		J(!json_add(o, "lightpaths",
			    json_object_new_int(e->plan->net->nlp)));
		J(!json_add(o, "lit", json_object_new_int(e->lit)));
		J(!json_add(o, "unlit", json_object_new_int(e->unlit)));
		J(!json_add(o, "mean_round_s",
			    json_object_new_double(e->plan->mean_round_s)));
	}
	return a;
fail:
	json_object_put(a);
	return NULL;
}

struct json_object *policies_json(const struct tl_outcome *out, int n)
{
	struct json_object *a = json_object_new_array();

	J(a);
	for (int k = 0; k < n; k++) {
		struct json_object *o = json_object_new_object();

		J(!json_push(a, o));
		J(!json_add(
			o, "policy",
			json_object_new_string(resched_name((enum resched)k))));
		J(!json_add(o, "tasks", json_object_new_int(out[k].ntasks)));
		J(!json_add(o, "finished",
			    json_object_new_int(out[k].finished)));
		J(!json_add(o, "rounds",
			    json_object_new_int64(out[k].rounds_done)));
		J(!json_add(o, "mean_completion_s",
			    json_object_new_double(out[k].mean_completion_s)));
		J(!json_add(o, "moves", json_object_new_int(out[k].moves)));
		J(!json_add(o, "interrupted_s",
			    json_object_new_double(out[k].interrupted_s)));
		J(!json_add(o, "bytes_links",
			    json_object_new_double(out[k].bytes_links)));
	}
	return a;
fail:
	json_object_put(a);
	return NULL;
}

static const char *const palette[] = {
	"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e",
	"#e6ab02", "#a6761d", "#666666", "#1f78b4", "#b2df8a",
};

struct seg {
	int u, v, lambda;	/* lambda -1: not a fibre segment */
};

/* Add segment u -> v once; returns false when the list is full. */
static void seg_add(struct seg *segs, int *n, int cap, int u, int v,
		    int lambda)
{
	for (int i = 0; i < *n; i++)
		if (segs[i].u == u && segs[i].v == v &&
		    segs[i].lambda == lambda)
			return;
	if (*n < cap)
		segs[(*n)++] = (struct seg){ u, v, lambda };
}

/*
 * One task's tree, drawn along the physical route of every hop, each
 * segment once: access and add/drop links, then fibre by fibre with the
 * lightpath's wavelength.
 */
static int dot_tree(const struct plan *p, const struct task_plan *tp,
		    const struct tree *t, const char *style, const char *color,
		    bool *on, FILE *f)
{
	const struct scenario *sc = p->sc;
	int cap = 4 * sc->nnodes + 4 * sc->nfibres + 16, n = 0;
	struct seg *segs = malloc((size_t)cap * sizeof(*segs));

	if (!segs)
		return -ENOMEM;
	for (int m = 1; m < tp->nmodels; m++) {
		const struct ppath *pp = &t->path[m];
		int at = pp->from;

		for (int h = 0; h < pp->nhops; h++) {
			const struct hop *x = &pp->hops[h];
			int next = hop_next(p, at, x);
			const struct lightpath *lp;
			int r;

			if (x->kind == HOP_ACCESS) {
				seg_add(segs, &n, cap, at, next, -1);
				at = next;
				continue;
			}
			lp = &p->net->lp[x->idx];
			r = sc->nodes[at].attach;
			seg_add(segs, &n, cap, at, r, -1);
			for (int i = 0; i < lp->nfib; i++) {
				int k = x->dir ? lp->nfib - 1 - i : i;
				const struct scn_fibre *fb = &sc->fibres[lp->fib[k]];
				int nr = fb->a == r ? fb->b : fb->a;

				seg_add(segs, &n, cap, r, nr, lp->lambda);
				r = nr;
			}
			seg_add(segs, &n, cap, r, next, -1);
			at = next;
		}
	}
	for (int i = 0; i < n; i++) {
		on[segs[i].u] = on[segs[i].v] = true;
		fprintf(f, "  \"%s\" -> \"%s\" [color=\"%s\", style=%s, "
			   "tooltip=\"%s\"", nm(p, segs[i].u), nm(p, segs[i].v),
			color, style, tp->task->name);
		if (segs[i].lambda >= 0)
			fprintf(f, ", label=\"λ%d\", fontcolor=\"%s\", "
				   "fontsize=9", segs[i].lambda, color);
		fprintf(f, "];\n");
	}
	free(segs);
	return 0;
}

#define PLACED_IN 9.0	/* the placed ROADMs' extent, inches */
#define ROUTER_IN 0.75	/* a router from its ROADM, away from the middle */
#define SERVER_IN 0.6	/* a server from its router, fanned out */

/*
 * Where the picture pins every node when the scenario places all ROADMs
 * (else NULL: neato lays the network out): ROADMs scaled, each router
 * beside its ROADM on the side away from the network's middle, its
 * servers fanned out beyond it. xy[2 * node] in inches.
 */
static double *placed_xy(const struct scenario *sc)
{
	double box[4] = { INFINITY, INFINITY, -INFINITY, -INFINITY };
	double scale = 1, mid[2], *xy;
	int nroadm = 0;

	for (int i = 0; i < sc->nnodes; i++) {
		const struct scn_node *n = &sc->nodes[i];

		if (n->kind != NODE_ROADM)
			continue;
		if (!n->placed)
			return NULL;
		nroadm++;
		box[0] = fmin(box[0], n->x);
		box[1] = fmin(box[1], n->y);
		box[2] = fmax(box[2], n->x);
		box[3] = fmax(box[3], n->y);
	}
	if (!nroadm)
		return NULL;
	xy = calloc(2 * (size_t)sc->nnodes, sizeof(*xy));
	if (!xy)
		return NULL;
	if (box[2] - box[0] > 0 || box[3] - box[1] > 0)
		scale = PLACED_IN / fmax(box[2] - box[0], box[3] - box[1]);
	mid[0] = (box[2] - box[0]) * scale / 2;
	mid[1] = (box[3] - box[1]) * scale / 2;
	for (int i = 0; i < sc->nnodes; i++)
		if (sc->nodes[i].kind == NODE_ROADM) {
			xy[2 * i] = (sc->nodes[i].x - box[0]) * scale;
			xy[2 * i + 1] = (sc->nodes[i].y - box[1]) * scale;
		}
	for (int i = 0; i < sc->nnodes; i++) {
		const struct scn_node *r = &sc->nodes[i];
		double dx, dy, d, a;
		int ns = 0, k = 0;

		if (r->kind != NODE_ROUTER || r->attach < 0)
			continue;
		dx = xy[2 * r->attach] - mid[0];
		dy = xy[2 * r->attach + 1] - mid[1];
		d = hypot(dx, dy);
		a = d > 1e-9 ? atan2(dy, dx) : M_PI / 2;
		xy[2 * i] = xy[2 * r->attach] + ROUTER_IN * cos(a);
		xy[2 * i + 1] = xy[2 * r->attach + 1] + ROUTER_IN * sin(a);
		for (int j = 0; j < sc->nnodes; j++)
			ns += sc->nodes[j].kind == NODE_SERVER &&
			      sc->nodes[j].attach == i;
		for (int j = 0; j < sc->nnodes; j++) {
			double b;

			if (sc->nodes[j].kind != NODE_SERVER ||
			    sc->nodes[j].attach != i)
				continue;
			/* fanned over 100 degrees, centred on the way out */
			b = a + (ns > 1 ? (k * 100.0 / (ns - 1) - 50) * M_PI /
						  180 :
					  0);
			xy[2 * j] = xy[2 * i] + SERVER_IN * cos(b);
			xy[2 * j + 1] = xy[2 * i + 1] + SERVER_IN * sin(b);
			k++;
		}
	}
	return xy;
}

/*
 * The network once: ROADMs (boxes), each fibre one edge with its length
 * and its lit wavelengths out of all (pen width and colour by the share
 * lit), routers and servers beside their ROADM; every node pinned where
 * placed_xy() puts it when the scenario places the ROADMs. The trees are
 * per task.
 */
int plan_dot(const struct plan *p, FILE *f)
{
	const struct scenario *sc = p->sc;
	int *lit = calloc((size_t)sc->nfibres + 1, sizeof(*lit));
	double *xy = placed_xy(sc);
	char pos[64];

	if (!lit) {
		free(xy);
		return -ENOMEM;
	}
	for (int l = 0; l < p->net->nlp; l++)
		for (int k = 0; k < p->net->lp[l].nfib; k++)
			lit[p->net->lp[l].fib[k]]++;
	fprintf(f, "// twinlab plan: scenario '%s', scheduler '%s': the "
		   "network; each task's trees are drawn on their own\n"
		   "graph \"%s\" {\n  layout=neato; overlap=false; "
		   "splines=false; sep=\"+12\";\n"
		   "  node [fontname=\"Helvetica\", fontsize=11];\n"
		   "  edge [fontname=\"Helvetica\", fontsize=10];\n",
		sc->name, p->scheduler, sc->name);
	for (int i = 0; i < sc->nnodes; i++) {
		const struct scn_node *n = &sc->nodes[i];

		pos[0] = '\0';
		if (xy)
			snprintf(pos, sizeof(pos), ", pos=\"%.2f,%.2f!\"",
				 xy[2 * i], xy[2 * i + 1]);
		if (n->kind == NODE_ROADM)
			fprintf(f, "  \"%s\" [shape=box, style=filled, "
				   "fillcolor=\"#dddddd\", fontsize=14%s];\n",
				n->name, pos);
		else
			fprintf(f, "  \"%s\" [shape=%s, fontsize=9, "
				   "width=0.3, height=0.2, margin=0.02%s];\n",
				n->name, n->kind == NODE_ROUTER ? "ellipse" :
								  "circle", pos);
	}
	for (int i = 0; i < sc->nfibres; i++) {
		const struct scn_fibre *fb = &sc->fibres[i];
		double share = fb->wavelengths > 0 ?
				       (double)lit[i] / fb->wavelengths : 0;

		fprintf(f, "  \"%s\" -- \"%s\" [len=2.5, penwidth=%.1f, "
			   "color=\"%s\", label=\"%g km\\n%d/%d λ\"];\n",
			nm(p, fb->a), nm(p, fb->b), 1 + 6 * share,
			lit[i] == 0 ? "#bbbbbb" : share < 0.5 ? "#6baed6" :
			share < 1 ? "#2171b5" : "#cb181d", fb->km, lit[i],
			fb->wavelengths);
	}
	for (int i = 0; i < sc->nnodes; i++)
		if (sc->nodes[i].kind != NODE_ROADM && sc->nodes[i].attach >= 0)
			fprintf(f, "  \"%s\" -- \"%s\" [len=0.6, "
				   "color=\"#bbbbbb\"];\n",
				sc->nodes[i].name,
				nm(p, sc->nodes[i].attach));
	fprintf(f, "}\n");
	free(lit);
	free(xy);
	return ferror(f) ? -EIO : 0;
}

/*
 * Task t alone: the nodes its trees pass, the broadcast tree solid and
 * the upload tree dashed along the physical route of every hop (fibre by
 * fibre, with the lightpath's wavelength), the global model's server
 * marked G, the locals L1..Ln, servers that aggregate on the way drawn
 * as double circles.
 */
int plan_dot_task(const struct plan *p, int t, FILE *f)
{
	const struct scenario *sc = p->sc;
	const struct task_plan *tp = &p->tasks[t];
	const char *c = palette[t % (sizeof(palette) / sizeof(*palette))];
	bool *on = calloc((size_t)sc->nnodes + 1, sizeof(*on));

	if (!on)
		return -ENOMEM;
	fprintf(f, "// twinlab plan: scenario '%s', scheduler '%s', task "
		   "'%s'\ndigraph \"%s\" {\n  layout=dot; rankdir=LR; "
		   "splines=false;\n  label=\"task %s: %d local models; "
		   "solid: broadcast, dashed: upload; double circle: "
		   "aggregates\"; labelloc=t;\n"
		   "  node [fontname=\"Helvetica\", fontsize=11];\n"
		   "  edge [fontname=\"Helvetica\", fontsize=9];\n",
		sc->name, p->scheduler, tp->task->name, tp->task->name,
		tp->task->name, tp->task->nlocals);
	if (tp->blocked) {
		fprintf(f, "  blocked [shape=plaintext, label=\"blocked: "
			   "%s\"];\n}\n", tp->why);
		free(on);
		return ferror(f) ? -EIO : 0;
	}
	for (int m = 0; m < tp->nmodels; m++) {
		int s = tp->server[m];

		on[s] = true;
		fprintf(f, "  \"%s\" [shape=%s, label=\"%s\\n%s%d\"%s];\n",
			nm(p, s), task_aggregates(tp, m) ? "doublecircle" :
							   "circle",
			nm(p, s), m ? "L" : "G", m,
			m ? "" : ", style=filled, fillcolor=\"#fff3b0\"");
	}
	if (dot_tree(p, tp, &tp->bcast, "solid", c, on, f) ||
	    dot_tree(p, tp, &tp->up, "dashed", c, on, f)) {
		free(on);
		return -ENOMEM;
	}
	/* the ROADMs and routers the trees pass, as in the network */
	for (int i = 0; i < sc->nnodes; i++)
		if (on[i] && sc->nodes[i].kind == NODE_ROADM)
			fprintf(f, "  \"%s\" [shape=box, style=filled, "
				   "fillcolor=\"#dddddd\"];\n", nm(p, i));
		else if (on[i] && sc->nodes[i].kind == NODE_ROUTER)
			fprintf(f, "  \"%s\" [shape=ellipse, fontsize=9];\n",
				nm(p, i));
	fprintf(f, "}\n");
	free(on);
	return ferror(f) ? -EIO : 0;
}

/*
 * Where mst compared its trees with a star (twin/sched_mst.c): how many,
 * and each task sent as a star, with the two predictions.
 */
static void plan_shapes(const struct plan *p, FILE *f)
{
	int checked = 0, stars = 0;

	for (int i = 0; i < p->ntasks; i++) {
		checked += p->tasks[i].shape != NULL;
		stars += p->tasks[i].shape && !strcmp(p->tasks[i].shape, "star");
	}
	if (!checked)
		return;
	fprintf(f, "\nnever slower than a star: %d of %d tasks compared "
		   "(the first, while the tasks placed have at most %d "
		   "transfers), %d sent as a star:\n", checked, p->ntasks,
		SCHED_STAR_CHECK_TRANSFERS, stars);
	if (p->polish.evals)
		fprintf(f, "then the whole plan judged a shape at a time (%d "
			   "plans predicted), rounds summed: %.4f ms as placed, "
			   "%.4f ms with every task a star%s, %.4f ms polished"
			   "%s\n", p->polish.evals, p->polish.greedy_s * 1e3,
			p->polish.stars_s * 1e3,
			p->polish.stars_blocked > p->blocked ?
				" (blocking more)" : "",
			p->polish.final_s * 1e3,
			stars ? "; the stars:" : "");
	for (int i = 0; i < p->ntasks; i++) {
		const struct task_plan *tp = &p->tasks[i];

		if (tp->reshaped)
			fprintf(f, "  %-12s %s: the whole plan's rounds end "
				   "sooner (or send fewer bytes within the "
				   "margin) so\n", tp->task->name, tp->shape);
		if (!tp->shape || strcmp(tp->shape, "star") || tp->reshaped)
			continue;
		if (isfinite(tp->tree_sum_s))
			fprintf(f, "  %-12s rounds placed so far, summed: "
				   "star %.4f ms < tree %.4f ms\n",
				tp->task->name, tp->star_sum_s * 1e3,
				tp->tree_sum_s * 1e3);
		else
			fprintf(f, "  %-12s its tree could not be placed or "
				   "predicted\n", tp->task->name);
	}
}

/*
 * Whose trees kmb, tm and svi kept (sched_lightest): each name, with the
 * tasks that got its trees, in the order first met.
 */
static void plan_trees_by(const struct plan *p, FILE *f)
{
	const char *sep = "\ntrees kept as the lightest once lit: ";

	for (int i = 0; i < p->ntasks; i++) {
		const char *by = p->tasks[i].trees_by;
		int n = 0;
		bool seen = false;

		for (int j = 0; by && j < i && !seen; j++)
			seen = p->tasks[j].trees_by &&
			       !strcmp(p->tasks[j].trees_by, by);
		if (!by || seen)
			continue;
		for (int j = i; j < p->ntasks; j++)
			n += p->tasks[j].trees_by &&
			     !strcmp(p->tasks[j].trees_by, by);
		fprintf(f, "%s%s's for %d task%s", sep, by, n,
			n == 1 ? "" : "s");
		sep = ", ";
	}
	if (sep[0] == ',')
		fputc('\n', f);
}

void plan_summary(const struct plan *p, FILE *f)
{
	fprintf(f, "scenario %s, scheduler %s: %d tasks, %d blocked, "
		   "%d lightpaths\n", p->sc->name, p->scheduler, p->ntasks,
		p->blocked, p->net->nlp);
	fprintf(f, "bandwidth: %ld wavelength-links, %.4g byte-links per "
		   "round\n", p->wavelength_links, p->bytes_links);
	if (p->predicted)
		fprintf(f, "predicted mean round: %.4g ms (%s model)\n",
			p->mean_round_s * 1e3, p->predictor);
	fprintf(f, "\n%-12s %6s %6s %9s %12s %10s %10s %10s %10s\n", "task",
		"locals", "aggr", "wl-links", "byte-links", "round ms",
		"bcast ms", "train ms", "upload ms");
	for (int i = 0; i < p->ntasks; i++) {
		const struct task_plan *tp = &p->tasks[i];
		int agg = 0;

		if (tp->blocked) {
			fprintf(f, "%-12s %6d BLOCKED: %s\n", tp->task->name,
				tp->task->nlocals, tp->why);
			continue;
		}
		for (int m = 0; m < tp->nmodels; m++)
			agg += task_aggregates(tp, m);
		fprintf(f, "%-12s %6d %6d %9ld %12.4g %10.4f %10.4f %10.4f "
			   "%10.4f\n", tp->task->name, tp->task->nlocals, agg,
			tp->wavelength_links, tp->bytes_links,
			tp->round_s * 1e3, tp->bcast_s * 1e3,
			tp->compute_s * 1e3, tp->upload_s * 1e3);
	}
	plan_trees_by(p, f);
	plan_shapes(p, f);
}

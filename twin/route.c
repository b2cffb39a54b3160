// SPDX-License-Identifier: MIT
/* The routes of every transfer; see route.h. */
#include "route.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>

static int push_route(struct addressing *a, int *cap, struct route r)
{
	struct route *nr =
		grow_array(a->routes, cap, a->nroutes, sizeof(*nr), 256);

	if (!nr)
		return -ENOMEM;
	a->routes = nr;
	a->routes[a->nroutes++] = r;
	return 0;
}

/*
 * Routes for one transfer: towards ep->dst along the path, towards
 * ep->src back along it. Hop h leaves node at[h] on link l[h].
 */
static int path_routes(const struct plan *p, struct addressing *a, int *cap,
		       const struct ppath *pp, const struct endpoint *ep)
{
	int at = pp->from, err = 0;
	int *nodes = malloc((size_t)(pp->nhops + 1) * sizeof(*nodes));

	if (!nodes)
		return -ENOMEM;
	for (int h = 0; h < pp->nhops; h++) {
		nodes[h] = at;
		at = hop_next(p, at, &pp->hops[h]);
	}
	nodes[pp->nhops] = at;
	/* forward, at every router on the way (a server's own route is its
	 * router); a transfer's are nodes[1..nhops-1] */
	for (int h = 0; h < pp->nhops && !err; h++) {
		int link = plan_link(p, &pp->hops[h]);

		if (p->sc->nodes[nodes[h]].kind != NODE_ROUTER)
			continue;
		err = push_route(a, cap, (struct route){
			.node = nodes[h], .dst = ep->dst,
			.via = addr_on_link(p, a, link, nodes[h + 1]),
			.link = link });
	}
	/* backward: the reverse of hop h-1, leaving nodes[h] */
	for (int h = 1; h <= pp->nhops && !err; h++) {
		struct hop back = pp->hops[h - 1];
		int link;

		if (p->sc->nodes[nodes[h]].kind != NODE_ROUTER)
			continue;
		back.dir = 1 - back.dir;
		link = plan_link(p, &back);
		err = push_route(a, cap, (struct route){
			.node = nodes[h], .dst = ep->src,
			.via = addr_on_link(p, a, link, nodes[h - 1]),
			.link = link });
	}
	free(nodes);
	return err;
}

struct routing {
	const struct plan *p;
	struct addressing *a;
	int cap;
};

static int transfer_routes(void *ctx, const struct ppath *pp,
			   const struct endpoint *ep)
{
	struct routing *rt = ctx;

	return path_routes(rt->p, rt->a, &rt->cap, pp, ep);
}

int routes_compute(const struct plan *p, struct addressing *a)
{
	struct routing rt = { p, a, 0 };
	int err = addr_each_transfer(p, a, transfer_routes, &rt);

	for (int i = 0; i < p->nbg && !err; i++)
		if (p->bg[i].routed)
			err = path_routes(p, a, &rt.cap, &p->bg[i].path,
					  &a->bg[i]);
	return err;
}

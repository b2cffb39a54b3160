// SPDX-License-Identifier: MIT
#include "addr.h"
#include "route.h"
#include "grow.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *addr_str(uint32_t a, char *buf)
{
	snprintf(buf, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255,
		 (a >> 8) & 255, a & 255);
	return buf;
}

static int parse_range(const char *cidr, uint32_t *base, int *prefix)
{
	char buf[32], *slash;
	struct in_addr in;

	snprintf(buf, sizeof(buf), "%s", cidr);
	slash = strchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	if (inet_pton(AF_INET, buf, &in) != 1)
		return -EINVAL;
	*base = ntohl(in.s_addr);
	*prefix = atoi(slash + 1);
	return 0;
}

uint32_t addr_on_link(const struct plan *p, const struct addressing *a,
		      int link, int node)
{
	int n2 = 2 * p->sc->nnodes;

	if (link < n2) {
		int s = link / 2;

		return a->access[s] + (node == s ? 1 : 0);
	}
	{
		int l = (link - n2) / 2;

		return a->lightpath[l] + (node == p->net->lp[l].a ? 0 : 1);
	}
}

struct addressing *addressing_new(const struct plan *p)
{
	const struct scenario *sc = p->sc;
	struct addressing *a = calloc(1, sizeof(*a));
	uint64_t need, size;
	int err = -ENOMEM;
	uint32_t next;

	if (!a)
		goto fail;
	if (parse_range(sc->addressing, &a->base, &a->prefix)) {
		err = -EINVAL;
		goto fail;
	}
	need = 0;
	for (int i = 0; i < sc->nnodes; i++)
		need += sc->nodes[i].kind == NODE_SERVER ? 2 : 0;
	need += 2 * (uint64_t)p->net->nlp;
	for (int t = 0; t < p->ntasks; t++)
		need += 4 * (uint64_t)(p->tasks[t].nmodels - 1);
	need += 2 * (uint64_t)p->nbg;
	size = 1ull << (32 - a->prefix);
	/* keep the network address itself unused */
	if (need + 2 > size) {
		err = -ENOSPC;
		goto fail;
	}
	a->access = calloc((size_t)sc->nnodes + 1, sizeof(*a->access));
	a->lightpath = calloc((size_t)p->net->nlp + 1, sizeof(*a->lightpath));
	a->ep = calloc((size_t)p->ntasks + 1, sizeof(*a->ep));
	a->bg = calloc((size_t)p->nbg + 1, sizeof(*a->bg));
	if (!a->access || !a->lightpath || !a->ep || !a->bg)
		goto fail;
	a->nbg = p->nbg;
	a->ntasks = p->ntasks;
	next = a->base + 2;
	for (int i = 0; i < sc->nnodes; i++)
		if (sc->nodes[i].kind == NODE_SERVER) {
			a->access[i] = next;
			next += 2;
		}
	for (int l = 0; l < p->net->nlp; l++) {
		a->lightpath[l] = next;
		next += 2;
	}
	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];

		a->ep[t] = calloc((size_t)2 * tp->nmodels, sizeof(**a->ep));
		if (!a->ep[t]) {
			err = -ENOMEM;
			goto fail;
		}
		for (int up = 0; up < 2; up++)
			for (int m = 1; m < tp->nmodels; m++) {
				struct endpoint *ep = &a->ep[t][2 * m + up];

				ep->src = next++;
				ep->dst = next++;
			}
	}
	for (int i = 0; i < p->nbg; i++) {
		a->bg[i].src = next++;
		a->bg[i].dst = next++;
	}
	a->used = next - a->base;
	err = routes_compute(p, a);
	if (err)
		goto fail;
	return a;
fail:
	addressing_free(a);
	errno = -err;
	return NULL;
}

int addr_task_transfers(const struct plan *p, const struct addressing *a,
			int t, int (*fn)(void *ctx, const struct ppath *pp,
					 const struct endpoint *ep),
			void *ctx)
{
	const struct task_plan *tp = &p->tasks[t];
	int err = 0;

	for (int up = 0; !tp->blocked && up < 2 && !err; up++) {
		const struct tree *tr = up ? &tp->up : &tp->bcast;

		for (int m = 1; m < tp->nmodels && !err; m++)
			err = fn(ctx, &tr->path[m], &a->ep[t][2 * m + up]);
	}
	return err;
}

int addr_each_transfer(const struct plan *p, const struct addressing *a,
		       int (*fn)(void *ctx, const struct ppath *pp,
				 const struct endpoint *ep),
		       void *ctx)
{
	int err = 0;

	for (int t = 0; t < p->ntasks && !err; t++)
		err = addr_task_transfers(p, a, t, fn, ctx);
	return err;
}

void addressing_free(struct addressing *a)
{
	if (!a)
		return;
	for (int t = 0; a->ep && t < a->ntasks; t++)
		free(a->ep[t]);
	FREE_ALL(a->routes, a->access, a->lightpath, a->ep, a->bg, a);
}

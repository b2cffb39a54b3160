// SPDX-License-Identifier: MIT
/*
 * What the harness gives a forked worker: its conf (its part of the plan,
 * its peers' addresses, its learning) and its listening sockets, made in
 * its namespace before any worker of its task is forked (wk_conf.lfd_*).
 *
 * A worker dials its broadcast children and its upload parent as soon as
 * it is set up. The harness forks a task's workers one by one, so a dial
 * to one forked later was refused and made again every 5 ms: 1,673 such
 * attempts while the demo's largest point started its 480 workers, and
 * 30,002 when the harness forked faster than they set up, each a
 * handshake through the delay line. A socket that listens before any
 * worker starts takes every handshake as it comes, and the worker accepts
 * it once set up.
 */
#include "fleet_impl.h"
#include "lab.h"
#include "netns.h"
#include "wksock.h"
#include "twin/predict.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const struct scn_node *fleet_server_of(const struct fleet *f, int t, int m)
{
	const struct plan *p = f->t[t].plan;

	return &p->sc->nodes[p->tasks[t].server[m]];
}

void fleet_fill_conf(const struct fleet *f, int t, int m, struct wk_conf *c)
{
	const struct plan *p = f->t[t].plan;
	const struct task_plan *tp = &p->tasks[t];
	const struct scn_task *st = tp->task;
	const struct endpoint *ep = f->a->ep[t];
	struct sel_learning l;

	memset(c, 0, sizeof(*c));
	c->lfd_bcast = -1;
	for (int i = 0; i < WK_MAX_CHILDREN; i++)
		c->lfd_up[i] = -1;
	c->task = t;
	c->model = m;
	snprintf(c->task_name, sizeof(c->task_name), "%s", st->name);
	lab_ns_name(f->o.prefix, p->sc->nodes[tp->server[m]].name, c->netns,
		    sizeof(c->netns));
	c->rounds = f->o.rounds - (f->t[t].first - 1);
	c->first_round = f->t[t].from;
	c->model_fd = m == 0 ? f->t[t].model_fd : -1;
	c->timeout_s = f->o.timeout_s;
	c->dilation = f->o.dilation;
	/* the scenario's compute time: work on this worker's share */
	c->train_s = m ? st->work_core_s / fleet_cpu_share(p, t, m) : 0;
	c->agg_s = predict_agg_tree_s(p, tp, m);
	if (m) {
		c->bcast_in = (struct wk_link){ tp->bcast.parent[m],
						ep[2 * m].src, ep[2 * m].dst };
		c->up_out = (struct wk_link){ tp->up.parent[m],
					      ep[2 * m + 1].src,
					      ep[2 * m + 1].dst };
	}
	for (int k = 1; k < tp->nmodels; k++) {
		if (tp->bcast.parent[k] == m)
			c->bcast_out[c->nbc++] = (struct wk_link){
				k, ep[2 * k].src, ep[2 * k].dst };
		if (tp->up.parent[k] == m)
			c->up_in[c->nuc++] = (struct wk_link){
				k, ep[2 * k + 1].src, ep[2 * k + 1].dst };
	}
	/* the data: the pool split over its shares, this local's share */
	c->nlocals = scenario_task_split(st);
	c->share = m ? scenario_task_share(st, m - 1) : 0;
	c->bpp = st->bytes_per_parameter;
	c->piped = p->sc->relay == SCN_RELAY_PIPELINED;
	/* the scenario's chunk of physical bytes, as the model is scaled */
	c->chunk = (size_t)(p->sc->chunk_bytes / p->sc->scale) / c->bpp *
		   c->bpp;
	if (c->chunk < c->bpp)
		c->chunk = c->bpp;
	/* checked when the fleet was made (its model has a wire format) */
	if (!fleet_learning(p->sc, t, f->o.samples_per_local, &l)) {
		c->seed = l.seed;
		c->samples = l.samples_per_local * c->nlocals;
		c->classes = l.classes;
		c->dim = l.dim;
		c->train_samples = l.train_samples;
	}
}

void fleet_unlisten(struct wk_conf *c)
{
	if (c->lfd_bcast >= 0)
		close(c->lfd_bcast);
	c->lfd_bcast = -1;
	for (int i = 0; i < WK_MAX_CHILDREN; i++) {
		if (c->lfd_up[i] >= 0)
			close(c->lfd_up[i]);
		c->lfd_up[i] = -1;
	}
}

/* One listening socket on addr, or a said error. */
static int listen_on(uint32_t addr, size_t buf, const struct wk_conf *c,
		     const char *host, int *fd, char *err, size_t len)
{
	struct in_addr a = { htonl(addr) };
	char s[INET_ADDRSTRLEN];

	*fd = wks_listen_buffered(addr, buf);
	if (*fd >= 0)
		return 0;
	/* as the worker said it when it listened itself */
	snprintf(err, len, "worker on %s (model %d): cannot listen on %s: "
		 "%s (namespace '%s')", host, c->model,
		 inet_ntop(AF_INET, &a, s, sizeof(s)) ? s : "?",
		 strerror(-*fd), c->netns);
	return *fd;
}

int fleet_listen(struct wk_conf *c, const char *host, char *err, size_t len)
{
	size_t buf = wk_sock_buffer(c);
	int saved, e;

	e = netns_enter(c->netns, &saved);
	if (e) {
		snprintf(err, len, "worker on %s (model %d): cannot enter "
			 "namespace '%s': %s", host, c->model, c->netns,
			 strerror(-e));
		return e;
	}
	if (c->model)
		e = listen_on(c->bcast_in.dst, buf, c, host, &c->lfd_bcast,
			      err, len);
	for (int i = 0; i < c->nuc && !e; i++)
		e = listen_on(c->up_in[i].dst, buf, c, host, &c->lfd_up[i],
			      err, len);
	netns_leave(saved);
	if (e)
		fleet_unlisten(c);
	return e;
}

// SPDX-License-Identifier: MIT
/* The emulation's rates and shapers: what each link serves, and how. */
#include "lab_impl.h"
#include "twin/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "delayline.h"
#include "impair.h"
#include "traffic.h"
#include "labstate.h"
#include "netns.h"
#include "nl.h"
#include "proc.h"
#include "twin/fl.h"
#include "twin/lpset.h"

/* A link's emulated rate: physical / scale / dilation. */
double lab_emulated_bps(const struct scenario *sc, double gbps, double dilation)
{
	return gbps * 1e9 / sc->scale / dilation;
}

uint64_t lab_rate_bps(const struct lab *lab, double gbps)
{
	return (uint64_t)lab_emulated_bps(lab->p->sc, gbps, lab->dilation);
}

/*
 * Every shaped link: a token bucket at `bps` of about one frame, so
 * that it shapes at the time scale of a message, not only of a round (a
 * bucket of 64 KiB let a whole round's bytes through at the speed of the
 * host). At high emulated rates the bucket holds LAB_BURST_US of sending
 * instead, because this host's timers wake 50-100 us late and a one-frame
 * bucket then loses tokens; dilation brings rates down to where one frame
 * is the bucket.
 *
 * Where more than one transfer's data, or data and ACKs, leave on the
 * link (the transfers' /32s, see twin/addr.h), the bucket (tbf) has an
 * htb under it with one class per data destination and one for whatever
 * else is sent (traffic nobody planned: a teacher's iperf3 towards a
 * transfer's source, a ping of 1,400 bytes), served a frame at a time in
 * turn, and packets under LAB_SMALL bytes (the ACKs of every transfer the
 * link answers, small pings) ahead of them in htb's direct queue:
 * transfers that share a link share it max-min fairly, as the twin
 * assumes, traffic nobody planned is one more flow among them, never
 * ahead (in the direct queue it took 234.8 of 240 Mbit/s from a planned
 * transfer), and ACKs never wait behind a queue of data; all of it passes
 * the one bucket. Where one transfer alone sends, or only ACKs, the
 * bucket alone: a FIFO, where other traffic queues with it. Every htb
 * class costs the kernel a filter block, each registered in a host-wide
 * list that it walks when the next is made: no class for the link's
 * rate (the bucket is it), none for ACKs, none where nothing is shared.
 * A single FIFO would serve whole messages in their order of arrival (TCP
 * sends a message at once: no slow start), which finishes some earlier
 * and none later than fair sharing, so measured rounds came out shorter
 * than the twin's. Each class queues at most 50 ms of scenario time at
 * the link's rate, at least 64 KiB.
 */
#define LAB_BURST 2048u
#define LAB_QUANTUM 1514u /* one Ethernet frame per turn */
/* the class of what no other claims: its leaf's handle is minor:, so
 * neither 1 (htb's own) nor NL_TBF_OVER's */
#define LAB_DEFAULT_MINOR 0xffe0
#define LAB_SMALL 128u /* shorter IPv4 packets go ahead: ACKs */
static int dst_add(struct dsts *d, uint32_t a)
{
	uint32_t *x;

	for (int i = 0; i < d->n; i++)
		if (d->a[i] == a)
			return 0;
	x = grow_array(d->a, &d->cap, d->n, sizeof(*x), 8);
	if (!x)
		return -ENOMEM;
	d->a = x;
	d->a[d->n++] = a;
	return 0;
}

void lab_dsts_free(struct dsts *d, int n)
{
	for (int i = 0; d && i < n; i++)
		free(d[i].a);
	free(d);
}

/* Per directed link (plan_link), the destinations that leave on it. */
static int access_dsts(void *ctx, const struct ppath *pp,
		       const struct endpoint *ep)
{
	struct dsts *d = ctx;

	d[2 * pp->to].acks = true;
	return dst_add(&d[2 * pp->from], ep->dst);
}

/*
 * fn for every transfer of every task the lab will run: those of its plan
 * and, following a set, each other task in the first epoch it runs (its
 * addresses are the same in every epoch; its paths may not be).
 */
int lab_each_transfer(const struct lab *lab,
		      int (*fn)(void *ctx, const struct ppath *pp,
				const struct endpoint *ep),
		      void *ctx)
{
	const struct lpset *set = lab->set;
	int err = 0;

	for (int t = 0; t < lab->p->ntasks && !err; t++) {
		int e = 0;

		while (set && e < set->nepochs - 1 && !set->runs[e][t])
			e++;
		err = addr_task_transfers(set ? set->plan[e] : lab->p, lab->a,
					  t, fn, ctx);
	}
	return err;
}

/* The addresses that only answer (a transfer's or a flow's source). */
struct answers {
	uint32_t *a;
	size_t n, cap;
};

static int answer_add(void *ctx, const struct ppath *pp,
		      const struct endpoint *ep)
{
	struct answers *s = ctx;

	(void)pp;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint32_t *x = realloc(s->a, cap * sizeof(*x));

		if (!x)
			return -ENOMEM;
		s->a = x;
		s->cap = cap;
	}
	s->a[s->n++] = ep->src;
	return 0;
}

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

/* The destinations of p's routes (addressed by ad) on the links they take. */
static int route_dsts(struct dsts *d, const struct plan *p,
		      const struct addressing *ad)
{
	struct answers s = {0};
	int err = addr_each_transfer(p, ad, answer_add, &s);

	for (int i = 0; i < ad->nbg && !err; i++)
		err = answer_add(&s, NULL, &ad->bg[i]);
	if (s.n)
		qsort(s.a, s.n, sizeof(*s.a), u32_cmp);
	for (int i = 0; i < ad->nroutes && !err; i++) {
		const struct route *rt = &ad->routes[i];

		if (s.n && bsearch(&rt->dst, s.a, s.n, sizeof(*s.a), u32_cmp))
			d[rt->link].acks = true;
		else
			err = dst_add(&d[rt->link], rt->dst);
	}
	free(s.a);
	return err;
}

struct dsts *lab_link_dsts(const struct lab *lab)
{
	const struct plan *p = lab->p;
	const struct addressing *ad = lab->a;
	struct dsts *d = calloc((size_t)plan_nlinks(p) + 1, sizeof(*d));
	int err = d ? route_dsts(d, p, ad) : -ENOMEM;

	/* and every other epoch's, on the links it will take */
	for (int e = 1; lab->set && e < lab->set->nepochs && !err; e++) {
		struct addressing *x = addressing_new(lab->set->plan[e]);

		err = x ? route_dsts(d, lab->set->plan[e], x) : -errno;
		addressing_free(x);
	}
	/* servers send on their access link: data one way, ACKs back */
	if (!err)
		err = lab_each_transfer(lab, access_dsts, d);
	/* and background traffic from a server (to one: what it answers) */
	for (int i = 0; i < p->nbg && !err; i++) {
		const struct scn_bg *bg = p->bg[i].bg;

		if (p->sc->nodes[bg->from].kind == NODE_SERVER)
			err = dst_add(&d[2 * bg->from], ad->bg[i].dst);
		if (p->sc->nodes[bg->to].kind == NODE_SERVER)
			d[2 * bg->to].acks = true;
	}
	if (err) {
		lab_dsts_free(d, d ? plan_nlinks(p) : 0);
		errno = -err;
		return NULL;
	}
	return d;
}

int lab_shape_link(struct lab *lab, struct nl *nl, int index, const char *name,
		   uint64_t bps, const struct dsts *d)
{
	double bytes = (double)bps / 8;
	double limit = bytes * 0.050 * lab->dilation;
	double burst = bytes * LAB_BURST_US / 1e6;
	int err;

	if (d->n > LAB_CLASSES_MAX)
		return -E2BIG;
	if (limit < 65536)
		limit = 65536;
	if (limit > UINT32_MAX)
		limit = UINT32_MAX;
	if (burst < LAB_BURST)
		burst = LAB_BURST;
	if (d->n + d->acks <= 1)
		return nl_tbf(nl, index, name, bps, (uint32_t)burst,
			      (uint32_t)limit);
	/*
	 * The bucket over all; under it the classes at twice the link's rate,
	 * which they never reach together, so every class with a frame
	 * waiting may send and htb serves them in turn.
	 */
	err = nl_tbf_over(nl, index, name, bps, (uint32_t)burst);
	if (!err)
		err = nl_htb(nl, index, name, LAB_DEFAULT_MINOR, true);
	if (!err)
		err = nl_classify_small(nl, index, name, LAB_SMALL);
	/* first what no other class claims, then the destinations */
	for (int i = -1; i < d->n && !err; i++) {
		uint16_t minor = i < 0 ? LAB_DEFAULT_MINOR : (uint16_t)(2 + i);

		err = nl_htb_class(nl, index, name, 0, minor, 2 * bps, 2 * bps,
				   (uint32_t)burst, LAB_QUANTUM);
		if (!err)
			err = nl_bfifo(nl, index, name, minor, (uint32_t)limit);
		if (!err && i >= 0)
			err = nl_classify_dst(nl, index, name, d->a[i], minor);
	}
	return err;
}

/*
 * TCP on the servers' routes, so that the transport realises the twin's
 * model and no clock of the host leaks into a dilated run: the least RTO
 * is the host's 200 ms times N (capped at TCP's own 120 s), no delayed ACKs,
 * and windows that hold a whole message from the first round (the twin
 * has no slow start: a transfer takes its fair share at once).
 */
struct nl_tcp_metrics lab_tcp_metrics(const struct lab *lab)
{
	double rto = WIRE_RTO_MIN_S * 1e3 * lab->dilation;

	return (struct nl_tcp_metrics){
		.rto_min_ms = (uint32_t)(rto > 120000 ? 120000 : rto),
		.initcwnd = 1024,
		.initrwnd = 1024,
		.quickack = true,
	};
}

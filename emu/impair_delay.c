// SPDX-License-Identifier: MIT
/*
 * Propagation delay by the delay line: each hop's packets sent to an
 * NFQUEUE queue of their own (iptables rules, a lab's added together at
 * the start) and held there for the hop's delay by the delay line, which
 * its supervisor runs (dlsup.h) once every hop is known.
 */
#include "impair.h"
#include "twin/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delayline.h"
#include "dlsup.h"
#include "nfqrule.h"

struct delay {
	struct dl_queue *q;
	int n, cap;
	struct nfqrule_batch rules;
};

static int delay_add(void *priv, const struct impair_hop *h, char *err,
		     size_t len)
{
	struct delay *d = priv;
	struct dl_queue *x;
	uint64_t ns = (uint64_t)(h->delay_s * 1e9 + 0.5);
	int e;

	if (ns == 0)
		return 0;
	x = grow_array(d->q, &d->cap, d->n, sizeof(*x), 64);
	if (!x)
		return -ENOMEM;
	d->q = x;
	x = &d->q[d->n];
	memset(x, 0, sizeof(*x));
	snprintf(x->netns, sizeof(x->netns), "%s", h->netns);
	x->num = h->num;
	x->delay_ns = ns;
	x->maxlen = dl_queue_maxlen((uint64_t)h->rate_bps, ns);
	/*
	 * Out of a router: what it forwards in FORWARD, where the packet
	 * still has the stamp of its arrival (forwarding clears it before
	 * POSTROUTING), and what it sends itself (a ping's reply, an ICMP
	 * error) in OUTPUT, into the same queue.
	 */
	e = nfqrule_batch_queue(&d->rules, h->netns,
				h->in ? "PREROUTING" : "FORWARD", h->in,
				h->ifname, h->num);
	if (!e && !h->in)
		e = nfqrule_batch_queue(&d->rules, h->netns, "OUTPUT", false,
					h->ifname, h->num);
	if (e) {
		snprintf(err, len, "cannot add the delay rule for '%s' in "
			 "netns '%s': %s", h->ifname, h->netns, strerror(-e));
		return e;
	}
	d->n++;
	return 0;
}

static int delay_start(void *priv, const struct impair_env *env, char *err,
		       size_t len)
{
	struct delay *d = priv;
	pid_t pid;
	int e;

	if (d->n == 0)
		return 0;
	/* the rules before the line: no packet flows while a lab is built */
	e = nfqrule_batch_apply(&d->rules, err, len);
	if (e)
		return e;
	pid = dlsup_start(d->q, d->n, env->proc_name, env->live, env->record,
			  env->ctx, err, len);
	return pid < 0 ? (int)pid : 0;
}

static void delay_release(void *priv)
{
	struct delay *d = priv;

	free(d->q);
	nfqrule_batch_release(&d->rules);
}

const struct impair_ops impair_delay_ops = {
	.id = "delay",
	.bit = IMPAIR_DELAY,
	.priv_size = sizeof(struct delay),
	.add = delay_add,
	.start = delay_start,
	.release = delay_release,
};

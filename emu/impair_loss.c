// SPDX-License-Identifier: MIT
/*
 * Random loss: a share of a hop's packets dropped where the router sends
 * them, by an iptables rule, all of a lab's added together at the start.
 * Nothing to stop: the rule goes with the namespace.
 */
#include "impair.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nfqrule.h"

static int loss_add(void *priv, const struct impair_hop *h, char *err,
		    size_t len)
{
	int e;

	if (!(h->loss > 0))
		return 0;
	if (h->in) {
		snprintf(err, len, "loss on '%s' in netns '%s': only packets "
			 "a router sends can be dropped", h->ifname, h->netns);
		return -EINVAL;
	}
	e = nfqrule_batch_loss(priv, h->netns, h->ifname, h->loss);
	if (e)
		snprintf(err, len, "cannot add the loss rule (%g) for '%s' in "
			 "netns '%s': %s", h->loss, h->ifname, h->netns,
			 strerror(-e));
	return e;
}

static int loss_start(void *priv, const struct impair_env *env, char *err,
		      size_t len)
{
	(void)env;
	return nfqrule_batch_apply(priv, err, len);
}

static void loss_release(void *priv)
{
	nfqrule_batch_release(priv);
}

const struct impair_ops impair_loss_ops = {
	.id = "loss",
	.bit = IMPAIR_LOSS,
	.priv_size = sizeof(struct nfqrule_batch),
	.add = loss_add,
	.start = loss_start,
	.release = loss_release,
};

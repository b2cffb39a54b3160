// SPDX-License-Identifier: MIT
/*
 * Random loss: a share of a hop's packets dropped where the router sends
 * them, by an iptables rule (nfqrule_loss_set). Nothing to start, nothing
 * to stop: the rule goes with the namespace.
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

	(void)priv;
	if (!(h->loss > 0))
		return 0;
	if (h->in) {
		snprintf(err, len, "loss on '%s' in netns '%s': only packets "
			 "a router sends can be dropped", h->ifname, h->netns);
		return -EINVAL;
	}
	e = nfqrule_loss_set(h->netns, true, h->ifname, h->loss);
	if (e)
		snprintf(err, len, "cannot add the loss rule (%g) for '%s' in "
			 "netns '%s': %s", h->loss, h->ifname, h->netns,
			 strerror(-e));
	return e;
}

const struct impair_ops impair_loss_ops = {
	.id = "loss",
	.bit = IMPAIR_LOSS,
	.priv_size = 1,
	.add = loss_add,
};

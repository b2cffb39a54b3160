/* SPDX-License-Identifier: MIT */
/*
 * The impairments' iptables rules, in the namespace of the node that
 * forwards a link's packets: the rule that sends them to the delay line's
 * NFQUEUE queue, and the rule that drops a share of them at random (loss).
 */
#ifndef EMU_NFQRULE_H
#define EMU_NFQRULE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * nfqrule_set - add or remove, in namespace netns, the rule
 *
 *   iptables -t mangle -A|-D CHAIN -i|-o IFNAME -j NFQUEUE --queue-num NUM
 *
 * chain is "FORWARD" (either direction), "PREROUTING" (match_in only),
 * "POSTROUTING" or "OUTPUT" (!match_in only). No --queue-bypass: a packet must never
 * skip its delay, so with no delay line bound the kernel drops it.
 * Runs /usr/sbin/iptables-nft (else /usr/sbin/iptables) through
 * emu/spawn.h, entering the namespace, with a 10 s limit.
 *
 * Returns 0, or -errno: EINVAL for a bad argument or a rule iptables
 * rejects, ENOENT when the namespace or iptables is missing or (remove) the
 * rule does not exist, EEXIST when (add) it already does, EAGAIN when
 * iptables reports a resource problem, ETIMEDOUT when it ran out of time,
 * EIO when it fails otherwise.
 */
int nfqrule_set(const char *netns, bool add, const char *chain,
		bool match_in, const char *ifname, uint16_t num)
	__attribute__((warn_unused_result));

/*
 * nfqrule_loss_set - add or remove, in namespace netns, the rule
 *
 *   iptables -t filter -A|-D FORWARD -o IFNAME -m statistic --mode random
 *            --probability P -j DROP
 *
 * (0 < p <= 1). In the filter table, so it applies after any delay rule
 * of the same link whatever the order they were added in. Returns as
 * nfqrule_set.
 */
int nfqrule_loss_set(const char *netns, bool add, const char *ifname,
		     double p) __attribute__((warn_unused_result));

/* The iptables binary nfqrule_set runs, or NULL when there is none. */
const char *nfqrule_iptables(void);

/* An interface name the kernel accepts and iptables cannot read as an
 * option. */
bool nfqrule_ifname_ok(const char *name);

#endif

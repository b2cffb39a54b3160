/* SPDX-License-Identifier: MIT */
/*
 * The impairments' iptables rules, in the namespace of the node that
 * forwards a link's packets: the rule that sends them to the delay line's
 * NFQUEUE queue, and the rule that drops a share of them at random (loss).
 */
#ifndef EMU_NFQRULE_H
#define EMU_NFQRULE_H

#include <stdbool.h>
#include <stddef.h>
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

/*
 * A lab's rules gathered, then added with one iptables-restore --noflush
 * per namespace (an exec of iptables costs milliseconds; a lab has
 * hundreds of rules). Each table of a namespace is committed whole or not
 * at all. No check that a rule is not there already: the batch is for
 * namespaces just made, which have none.
 */
struct nfqrule_ns;
struct nfqrule_batch {
	struct nfqrule_ns *ns;
	int n, cap;
};

/* nfqrule_batch_queue - as nfqrule_set(netns, true, ...), gathered. 0 or
 * -errno: EINVAL (as nfqrule_set), ENOMEM. */
int nfqrule_batch_queue(struct nfqrule_batch *b, const char *netns,
			const char *chain, bool match_in, const char *ifname,
			uint16_t num) __attribute__((warn_unused_result));

/* nfqrule_batch_loss - as nfqrule_loss_set(netns, true, ...), gathered. */
int nfqrule_batch_loss(struct nfqrule_batch *b, const char *netns,
		       const char *ifname, double p)
	__attribute__((warn_unused_result));

/*
 * nfqrule_batch_apply - add every gathered rule: one iptables-restore per
 * namespace, in the order the namespaces came. 0, or -errno with err
 * naming the namespace and what iptables-restore said; the namespaces
 * before it have their rules.
 */
int nfqrule_batch_apply(const struct nfqrule_batch *b, char *err, size_t len)
	__attribute__((warn_unused_result));

void nfqrule_batch_release(struct nfqrule_batch *b);

/* The iptables binary nfqrule_set runs, or NULL when there is none. */
const char *nfqrule_iptables(void);

/* An interface name the kernel accepts and iptables cannot read as an
 * option. */
bool nfqrule_ifname_ok(const char *name);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The bare netlink baseline: the minimum twinlab's own primitives can do
 * for a plan, in this process, through emu/netns.c and emu/nl.c directly.
 * It makes the same namespaces (netns_add with lab_ns_flags: IPv6 off,
 * forwarding on routers, TCP's settings on servers), the same veth pairs with the same names and ifindices, the
 * same /31 addresses on the access and lightpath links and the same tbf
 * qdiscs — and nothing else: no endpoint addresses, no routes, no
 * cross-connects, no delay line, no state file, no scenario parsing or
 * scheduling. What twinlab costs above it is its overhead.
 *
 * Teardown closes the sockets and descriptors it holds (they keep the
 * namespaces alive) and deletes the namespaces.
 */
#ifndef BENCH_EMU_BARE_H
#define BENCH_EMU_BARE_H

#include "twin/addr.h"
#include "twin/plan.h"

struct bare;

/* Seconds spent in each phase of bare_up(). */
struct bare_phases {
	double netns;		/* namespaces, their fds and sockets */
	double veth;		/* veth pairs (and lo up) */
	double config;		/* peers up, addresses, tbf */
};

/*
 * bare_up - build it with namespaces "<prefix>-<node>". 0 and *out, or
 * -errno with a message in err (what was made is removed).
 */
int bare_up(const struct plan *p, const struct addressing *a,
	    const char *prefix, struct bare **out, struct bare_phases *t,
	    char *err, size_t len) __attribute__((warn_unused_result));

/* bare_down - close, delete every namespace, free. 0 or the first -errno. */
int bare_down(struct bare *b);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The links' shapers read from their namespaces: bytes sent on the wire
 * (headers of every segment included) and packets dropped, per directed
 * IP link of a plan (plan_link). One netlink socket per namespace, shared
 * by the links there; a set is for one thread.
 */
#ifndef TOOLS_COUNTERS_H
#define TOOLS_COUNTERS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "emu/nl.h"
#include "twin/plan.h"

struct lpset;
struct agents;

struct counter {
	int link;
	char ns[64], ifname[16];
	int ifindex;
	struct nl *nl;		/* borrowed from the namespace cache */
	struct agents *ag;	/* or read by its node's agent (emu/agent.h) */
	int agent;
	struct nl_qstats before;
};

struct nscache {
	char ns[64];
	struct nl *nl;
};

/*
 * counters_open - a counter for every link of p that carries transfers
 * (predicted bytes), and with traffic also every link its routed
 * background flows cross, in prefix's emulation; with a timeline followed
 * live (set, p its first epoch's plan), every link that does so in some
 * epoch; read in the namespaces, or with ag by the nodes' agents. 0 or
 * -errno; close with counters_close even on failure.
 */
int counters_open(const struct plan *p, const struct lpset *set,
		  const char *prefix, struct agents *ag, bool traffic,
		  struct counter **out, int *n, struct nscache **cache,
		  int *ncache) __attribute__((warn_unused_result));

/*
 * counters_open_every - a counter for every shaped link of p (each
 * server's access link, each lightpath; both ways), whatever crosses it:
 * for watching traffic nobody planned. As counters_open otherwise.
 */
int counters_open_every(const struct plan *p, const char *prefix,
			struct counter **out, int *n, struct nscache **cache,
			int *ncache) __attribute__((warn_unused_result));

void counters_close(struct counter *c, struct nscache *cache, int ncache);

/*
 * servers_monitor - the fidelity monitor (emu/monitor.h) over TCP in the
 * namespaces of p's servers in prefix's emulation (with am, through the
 * agents: am->servers are set here and freed with agents_mon_free). 0 or
 * -errno.
 */
struct monitor;
struct agents_mon;
int servers_monitor(const struct plan *p, const char *prefix,
		    struct agents_mon *am, struct monitor **out);
void agents_mon_free(struct agents_mon *am);

/*
 * counters_agents - start an agent (argv: `run --agents-via`) on each of
 * p's routers and servers, {prefix} being prefix (with parts, each node's
 * part's: lab_part_prefix). 0 and *out, or -errno with why.
 */
int counters_agents(const struct plan *p, char *const *argv,
		    const char *prefix, bool parts,
		    const volatile sig_atomic_t *stop, struct agents **out,
		    char *why, size_t len) __attribute__((warn_unused_result));

/*
 * counters_deployed - whether the deployment the agents read is p's (its
 * lab_digest: digest) at dilation: every node's part that node's, of that
 * plan, at that dilation; every router's delay line there; every counted
 * link's interface (c[0..n)) on its node. 0, or -errno with why.
 */
int counters_deployed(const struct plan *p, uint64_t digest,
		      struct agents *ag, const struct counter *c, int n,
		      double dilation, char *why, size_t len)
	__attribute__((warn_unused_result));

/* The link's shaper now; zeros if it cannot be read. */
struct nl_qstats counters_read(const struct counter *x);

/*
 * counters_get - the same into *q: 0, or -errno when its node's agent
 * could not answer (*q zeros; a link read here gives zeros for a count
 * it cannot read, as counters_read, and 0).
 */
int counters_get(const struct counter *x, struct nl_qstats *q)
	__attribute__((warn_unused_result));

#endif

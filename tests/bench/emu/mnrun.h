/* SPDX-License-Identifier: MIT */
/*
 * Variant (b): Mininet 2.3.0 (Debian) on LinearTopo(k, n) with Linux-bridge
 * switches and no controller, driven through mininet_linear.py inside a
 * network namespace of its own, which is deleted afterwards. Mininet's
 * cleanup (`mn -c`), which kills processes by name, is never run: what
 * Mininet leaves is ended by PID (the benchmark is a child subreaper, so
 * Mininet's orphaned node shells become its children).
 */
#ifndef BENCH_EMU_MNRUN_H
#define BENCH_EMU_MNRUN_H

#include "census.h"
#include "watch.h"

struct mn_opts {
	const char *python;	/* /usr/bin/python3 (Debian's, with mininet) */
	const char *script;	/* mininet_linear.py */
	const char *ip;		/* /usr/sbin/ip */
};

struct mn_result {
	double build, start;	/* Mininet's net.build(), net.start() */
	double stop;		/* Mininet's net.stop() */
	double down;		/* stop, Python's exit, our namespace deleted */
	double kstart, done;	/* since net.stop() began, see watch.h */
	int hosts, switches, links;
	int leftovers;		/* processes alive 5 s after Python exited */
};

/*
 * mn_run - one Mininet run in namespace `ns` (made and deleted here).
 * The census c (may be NULL) gets the hosts' namespaces and ns. 0 or
 * -errno with a message in err; on failure nothing of it is left.
 */
int mn_run(const struct mn_opts *o, const char *ns, int k, int n,
	   struct watch *w, struct census *c, struct mn_result *r, char *err,
	   size_t len);

/* Whether Mininet can run here; if not, why in why. */
int mn_check(const struct mn_opts *o, char *why, size_t len);

#endif

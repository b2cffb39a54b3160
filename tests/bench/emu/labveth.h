/* SPDX-License-Identifier: MIT */
/*
 * The veth pairs twinlab makes for a plan (emu/lab_build.c make_links()),
 * in its order and with its interface names, for the variants that
 * mirror it (ip/tc commands, bare netlink): a change there is made here
 * once, for both.
 */
#ifndef BENCH_EMU_LABVETH_H
#define BENCH_EMU_LABVETH_H

#include "twin/plan.h"

/* One veth pair: node u's end named un, node v's end named vn. */
struct lab_veth {
	int u, v;
	const char *un, *vn;
	int server;		/* an access link: the server (u), else -1 */
	int lp, end;		/* a lightpath's add link: the lightpath and
				 * its end (0: a, 1: b) at u, else lp -1 */
};

/*
 * lab_veths - fn(veth, arg) for each veth pair of p, in twinlab's order,
 * until one returns nonzero: that, or 0.
 */
int lab_veths(const struct plan *p,
	      int (*fn)(const struct lab_veth *v, void *arg), void *arg);

#endif

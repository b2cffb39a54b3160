/* SPDX-License-Identifier: MIT */
/*
 * Variant (a): the objects twinlab builds for a plan, made by a plain
 * sequence of `ip` and `tc` commands, each its own fork + execve, one
 * after the other, the way a shell script would. The sequence is derived
 * from the same plan and addressing as emu/lab.c and in the same order
 * (namespaces, veths, then addresses, shaping, cross-connects, routes),
 * and the benchmark checks with a census that the kernel ends up with
 * exactly the same objects.
 *
 * Per namespace: `ip netns add`, `ip -n NS link set lo up`, and one
 * `ip netns exec NS sysctl -w ...` for what netns_add() writes from
 * inside (IPv6 off, forwarding on for routers). Per veth: `ip -n A link
 * add NAME up type veth peer name PEER netns B` (peer made directly in
 * B, as twinlab does) and `ip -n B link set PEER up`. Teardown is one
 * `ip netns del` per namespace.
 */
#ifndef BENCH_EMU_IPTC_H
#define BENCH_EMU_IPTC_H

#include <stdio.h>

#include "twin/addr.h"
#include "twin/plan.h"

struct iptc {
	char ***cmd;		/* NULL-terminated argv vectors */
	int n, cap;
	int nsetup;		/* namespace commands (the first ones) */
	char ip[64], tc[64];	/* absolute paths */
};

/* Paths of ip and tc. 0 or -ENOENT. */
int iptc_init(struct iptc *s);
void iptc_release(struct iptc *s);

/* iptc_build - the commands that build p for prefix. 0 or -errno. */
int iptc_build(struct iptc *s, const struct plan *p, const struct addressing *a,
	       const char *prefix) __attribute__((warn_unused_result));

/* iptc_teardown - one `ip netns del` per namespace. 0 or -errno. */
int iptc_teardown(struct iptc *s, const struct scenario *sc, const char *prefix)
	__attribute__((warn_unused_result));

/*
 * iptc_run - run the commands in order, stopping at the first failure.
 * Returns 0, or the failing command's status (see proc_wait) with its
 * index in *failed.
 */
int iptc_run(const struct iptc *s, int *failed);

/* Print command i as one line. */
void iptc_print(const struct iptc *s, int i, FILE *f);

#endif

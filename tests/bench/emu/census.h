/* SPDX-License-Identifier: MIT */
/*
 * A census of what a variant really built, read back from the kernel with
 * rtnetlink dumps in each of its namespaces: links, IPv4 addresses, main
 * table routes, qdiscs and ingress filters. Besides the counts it keeps one
 * line per object, named by node and interface (not by prefix or ifindex),
 * so two variants can be compared object by object: the ip/tc script must
 * build exactly what twinlab builds.
 *
 * The teardown watchers' interfaces ("tbwatch") are not counted.
 */
#ifndef BENCH_EMU_CENSUS_H
#define BENCH_EMU_CENSUS_H

#include <stdbool.h>
#include <stdio.h>

#define CENSUS_WATCH_IF "tbwatch"

struct census {
	int netns;
	int veth_ends;		/* devices of kind veth */
	int bridges;
	int addrs;		/* IPv4, loopback excluded */
	int routes;		/* main table, not made by the kernel */
	int tbf, ingress, htb, netem;
	int filters;		/* tc filters with a selector (rules) */
	int redirects;		/* ... of which mirred egress redirects */
	/* object lines, when kept */
	bool keep;
	char **line;
	int nlines, cap;
};

void census_init(struct census *c, bool keep_lines);
void census_release(struct census *c);

/*
 * census_ns - add namespace nsfd, its objects named "<label>|...".
 * 0 or -errno.
 */
int census_ns(struct census *c, int nsfd, const char *label);

/* Whether the counts are equal (lines not compared). */
bool census_same_counts(const struct census *a, const struct census *b);

/*
 * census_diff - compare the kept lines of a and b (sorted); print up to
 * max differing lines to f ("- " only in a, "+ " only in b). Returns the
 * number of differing lines.
 */
int census_diff(struct census *a, struct census *b, FILE *f, int max);

#endif

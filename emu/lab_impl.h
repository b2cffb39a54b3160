/* SPDX-License-Identifier: MIT */
/*
 * What the files of the emulation's build and teardown share (lab.h is
 * the interface): the lab being built and the helpers more than one of
 * them calls. lab.c: names, the state file, locks and digests; lab_build.c:
 * namespaces, veths, addresses, routes and cross-connects, impairments,
 * lab_up; lab_shape.c: rates and the shapers; lab_down.c: teardown and
 * the processes recorded; lab_live.c: background traffic, fibres cut and
 * repaired, and a timeline followed live.
 */
#ifndef EMU_LAB_IMPL_H
#define EMU_LAB_IMPL_H

#include "lab.h"

#include <stdio.h>

#include "delayline.h"
#include "nl.h"

struct lab_node {
	char ns[DL_NETNS_MAX];
	int fd;
	struct nl *nl;
	int next; /* next free ifindex */
};

/*
 * A veth's far end: created in another namespace by the near end's
 * request, it is brought up from its own namespace in the next phase (the
 * kernel refuses IFF_UP on a peer created in another namespace).
 */
struct peer_end {
	int node, index;
	char name[16];
};

struct lab {
	char prefix[LAB_PREFIX_MAX + 1];
	double dilation; /* N: rates / N, delays and TCP clocks x N */
	const struct plan *p;
	const struct addressing *a;
	struct lab_node *n;	 /* per scenario node */
	int *acc;		 /* per server: index of acc<s> at its router */
	int *lp;		 /* per lightpath: [2l] at a, [2l+1] at b */
	int *ad;		 /* per lightpath: ROADM ends, same layout */
	int *line;		 /* per (fibre, wavelength, end): index or 0 */
	bool *ing;		 /* per line slot: its ingress qdisc is made */
	int words;		 /* wavelengths per fibre in `line` */
	const struct lpset *set; /* the timeline followed, or NULL */
	int only;		 /* the one node built (lab_opts.node), or -1 */
	struct nl *void_nl;	 /* with `only`: every other node's */
	bool here;		 /* lab_opts.here */
	/*
	 * A split over hosts (lab_opts.hosts > 1), or NULL: namespace
	 * nnodes + k is host k's, nnodes + nhosts the underlay's switch.
	 */
	struct partition *pt;
	int *split_und, *split_side; /* per host: "und", its switch port */
	int *split_vs;		     /* per line slot: its veth's host end */
	int split_br;		     /* the switch's bridge */
	struct peer_end *peers;	 /* veth ends to bring up after creation */
	int npeers, cappeers;
	FILE *state;
	char *err;
	size_t errlen;
};

/* How many htb classes one link may have (a destination each). */
#define LAB_CLASSES_MAX 60000

/* Per directed link: its data destinations, and whether it carries ACKs. */
struct dsts {
	uint32_t *a;
	int n, cap;
	bool acks;
};

/*
 * The ports lightpath l joins in each ROADM it crosses, from end a: the
 * ROADM, and the two ports' names (ad<l>, f<fibre>w<lambda>) and their
 * line slots (an add/drop port: -1 at end a, -2 at end b).
 */
struct join {
	int roadm;
	char x[16], y[16];
	int xslot, yslot; /* line slot, or -1 - end for ad<l> */
};

/* lab.c: the state file, its lines, failures said into lab->err */
void lab_state_path(const char *prefix, char *buf, size_t len);
void lab_live_path(const char *prefix, char *buf, size_t len);
struct dl_live *lab_live_create(const char *prefix);
int lab_open_state(struct lab *lab, const struct lab_opts *o);
int lab_record(struct lab *lab, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int lab_fail(struct lab *lab, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void lab_release(struct lab *lab);
int lab_open_nl(void *ctx);
void lab_side_by_side(void *(*fn)(void *), void *arg, size_t size, int n);

/* lab_build.c: namespaces, veths, ROADM ports and cross-connects */
/* A namespace n just made: recorded, its lo up (its own queue). */
int lab_ns_made(struct lab *lab, struct lab_node *n);
int lab_veth(struct lab *lab, int u, const char *un, int v, const char *vn,
	     int *ui, int *vi);
int lab_max_wavelengths(const struct scenario *sc);
/* Where (fibre, lambda)'s end (0: the fibre's a) is in `line`. */
int lab_line_slot(int words, int fibre, int lambda, int end);
int lab_lightpath_joins(int words, const struct scenario *sc,
			const struct lightpath *lp, int l,
			int (*fn)(void *ctx, const struct join *j), void *ctx);
int lab_cross(struct nl *nl, int x, const char *xn, int y, const char *yn,
	      bool replace);

/* lab_split.c: a split over hosts, built here (lab_split.c says how) */
void lab_split_ns_name(const char *prefix, int host, char *buf, size_t len);
int lab_split_namespaces(struct lab *lab);
int lab_split_underlay(struct lab *lab);
bool lab_split_cut(const struct lab *lab, int fibre);
/* Wavelength lambda of a cut fibre: its two ROADM ports, each by a veth
 * into its host (line and split_vs, at the wavelength's line slots). */
int lab_split_line(struct lab *lab, int fibre, int lambda);
int lab_split_configure(struct lab *lab);
/* Namespaces of the lab: its nodes', and a split's hosts' and switch. */
int lab_nns(const struct lab *lab);

/* lab_shape.c: rates, the destinations each link serves, its shaper */
double lab_emulated_bps(const struct scenario *sc, double gbps,
			double dilation);
uint64_t lab_rate_bps(const struct lab *lab, double gbps);
int lab_each_transfer(const struct lab *lab,
		      int (*fn)(void *ctx, const struct ppath *pp,
				const struct endpoint *ep),
		      void *ctx);
struct dsts *lab_link_dsts(const struct lab *lab);
void lab_dsts_free(struct dsts *d, int n);
int lab_shape_link(struct lab *lab, struct nl *nl, int index, const char *name,
		   uint64_t bps, const struct dsts *d);
struct nl_tcp_metrics lab_tcp_metrics(const struct lab *lab);

#endif

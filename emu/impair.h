/* SPDX-License-Identifier: MIT */
/*
 * Impairments: what a link does to its packets besides its rate (the
 * shapers are lab.c's). Each kind is an ops table in a file of its own, in
 * the manner of iproute2's tc/q_*.c — impair_delay.c (propagation, by the
 * delay line), impair_loss.c (random loss, by iptables) — listed once in
 * impair.c. lab.c offers every kind each hop of the emulation (where a
 * router forwards into a lightpath, or to or from a server), then starts
 * them; a kind takes the hops it has something to do on. A new impairment
 * is a new file and a line in the table.
 *
 * Everything a kind adds lives in the lab's namespaces (rules, qdiscs) or
 * is a process recorded in the state file before it starts, so `down` and
 * `clean` remove it with the rest.
 */
#ifndef EMU_IMPAIR_H
#define EMU_IMPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct dl_live;

/* One direction of a link, where a router forwards it. */
struct impair_hop {
	const char *netns;	/* the router's namespace */
	const char *ifname;	/* its interface on the link */
	bool in;		/* packets arriving on ifname (else leaving) */
	uint16_t num;		/* unique in the lab (queue numbers) */
	double delay_s;		/* propagation, dilated */
	double loss;		/* probability that a packet is lost */
	double rate_bps;	/* the shaped rate */
};

/* What a kind may need from the lab to start. */
struct impair_env {
	/* write a process down where `down` and `clean` find it: called by
	 * the process's parent before it starts anything; 0 or -errno */
	int (*record)(pid_t pid, unsigned long long start, void *ctx);
	void *ctx;
	const char *proc_name;	/* a process's name (see lab_delay_name) */
	struct dl_live *live;	/* the delay line's counters, or NULL */
};

struct impair_ops {
	const char *id;
	unsigned bit;		/* IMPAIR_* */
	size_t priv_size;
	/* take hop h if there is something to do on it: 0 (taken or not)
	 * or -errno with the reason, naming the object and namespace */
	int (*add)(void *priv, const struct impair_hop *h, char *err,
		   size_t len);
	/* after the last hop (NULL: nothing to start) */
	int (*start)(void *priv, const struct impair_env *env, char *err,
		     size_t len);
	void (*release)(void *priv);
};

enum {
	IMPAIR_DELAY = 1u << 0,
	IMPAIR_LOSS = 1u << 1,
	IMPAIR_ALL = ~0u,
};

extern const struct impair_ops impair_delay_ops, impair_loss_ops;

struct impair;

/* impair_new - a set of the kinds in mask (IMPAIR_*). NULL: no memory. */
struct impair *impair_new(unsigned mask);

/* impair_add - offer h to every kind of the set. 0 or -errno (err says). */
int impair_add(struct impair *im, const struct impair_hop *h, char *err,
	       size_t len) __attribute__((warn_unused_result));

/* impair_start - start every kind, in table order. 0 or -errno. */
int impair_start(struct impair *im, const struct impair_env *env, char *err,
		 size_t len) __attribute__((warn_unused_result));

/* impair_free - release the set's memory (what was started keeps running:
 * `down` removes it). NULL is a no-op. */
void impair_free(struct impair *im);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The emulation of a plan: every ROADM, router and server a named network
 * namespace "<prefix>-<node>", every lightpath a chain of veth segments
 * router -> ROADM -> ... -> ROADM -> router joined inside each ROADM by tc
 * cross-connects (ingress + u32 + mirred redirect, no IP), every server on
 * its router by an access veth; tbf shaping at capacity / scale; the
 * plan's addresses and per-transfer routes; propagation delay from the
 * delay line on the routers' egress. Everything made is recorded in the
 * state file /run/twinlab/<prefix>/state as it is made, so teardown — and
 * clean-up after a crash — removes exactly that.
 *
 * Interface names: server "up0"; router "acc<server>" towards each server
 * and "lp<id>" on each lightpath; ROADM "ad<id>" (add/drop of lightpath
 * id) and "f<fibre>w<wavelength>" (a wavelength on a fibre).
 */
#ifndef EMU_LAB_H
#define EMU_LAB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "labstate.h"
#include "twin/addr.h"
#include "twin/plan.h"

struct lab;
struct dl_live;
struct lpset;

struct lab_opts {
	const char *prefix;
	const char *scenario_path;	/* recorded in the state file */
	bool delay;			/* start the delay line (default) */
	double dilation;		/* time dilation N >= 1 (0: 1): rates
					 * / N, delays and TCP clocks x N */
	/* a timeline to follow live (lab_epoch), or NULL: the plan given
	 * lab_up is then its first epoch's (set->plan[0]), every lightpath
	 * of the set is built and those it does not light are dark */
	const struct lpset *set;
	/*
	 * Build only this node's part (NULL: all), in a namespace made with
	 * its interfaces by someone else (a container, a deployment of an
	 * exported topology): "<prefix>-<node>" if there is one, else (here)
	 * the caller's own, named so. Its interfaces are found by name; its
	 * addresses, shapers, routes, cross-connects and delay line are made
	 * as a whole build makes them. No timeline.
	 */
	const char *node;
	bool here;
	/*
	 * Split over this many hosts (0 or 1: none), each a namespace of its
	 * own on this machine, the fibres cut between them carried by VXLAN
	 * over an underlay, as the exported containerlab files deploy it
	 * (lab_split.c).
	 */
	int hosts;
};

/*
 * lab_up - build the emulation of p. Returns 0 and *out, or -errno with a
 * message in err ("cannot <what> in netns '<ns>': <reason>"); on failure
 * everything made so far has been removed. -EEXIST: prefix in use.
 */
int lab_up(const struct plan *p, const struct addressing *a,
	   const struct lab_opts *o, struct lab **out, char *err, size_t len)
	__attribute__((warn_unused_result));

/*
 * lab_digest - a digest of everything lab_up builds from p, a and set:
 * the nodes, fibres and their lengths, losses and wavelengths, the
 * lightpaths, every task's routes and the addresses (the dilation is
 * recorded beside it). An emulation that is up is the one a run plans
 * only if the two agree. 0 when out of memory.
 */
uint64_t lab_digest(const struct plan *p, const struct addressing *a,
		    const struct lpset *set);

/*
 * lab_same - whether the emulation up under prefix is the one lab_up
 * would build from p, a and set at dilation: 0, or -ESTALE with what
 * differs in err (-errno when its state cannot be read).
 */
int lab_same(const char *prefix, const struct plan *p,
	     const struct addressing *a, const struct lpset *set,
	     double dilation, char *err, size_t len);

/* Forget the in-memory handle; the emulation stays up. */
void lab_free(struct lab *lab);

/*
 * lab_down - remove everything recorded for `prefix` and any namespace or
 * process that carries it. report(what, arg) is called for each object
 * removed. Returns the number removed or -errno.
 */
int lab_down(const char *prefix, void (*report)(const char *what, void *arg),
	     void *arg);

/*
 * lab_down_recorded - as lab_down, but only what the state file records
 * (and the prefix's cgroups): a namespace that carries the prefix's name
 * without being recorded is left (twinlab down; clean sweeps them).
 */
int lab_down_recorded(const char *prefix,
		      void (*report)(const char *what, void *arg), void *arg);

/*
 * lab_lock - make the calling process the prefix's one owner until
 * lab_unlock (or its exit: the lock is a POSIX record lock on
 * LAB_STATE_DIR/<prefix>.lock, which dies with its process and which no
 * child inherits). `who` ("twinlab run") is written into the file for
 * whoever finds the prefix taken. Returns the lock's fd, or -EBUSY with
 * the owner named in err ("prefix 'x' is in use by twinlab run, pid N"),
 * or -errno.
 */
int lab_lock(const char *prefix, const char *who, char *err, size_t len)
	__attribute__((warn_unused_result));

/* lab_unlock - give the prefix up: remove the lock file, close fd (< 0: no-op). */
void lab_unlock(const char *prefix, int fd);

struct tg;
struct tg_flow;

/*
 * lab_traffic_flows - whether background flow i of p is played: routed in
 * p, or, with a timeline followed live (set: p is its first epoch's
 * plan), in some epoch of it. A flow played over its whole window whose
 * epoch routes it nowhere (a cut with no lit way round) is dropped at the
 * first router without a route.
 */
bool lab_traffic_flows(const struct plan *p, const struct lpset *set, int i);

/*
 * lab_traffic_start - start the traffic generator of plan p's background
 * flows that are played (lab_traffic_flows, addressed by a) in prefix's
 * emulation at dilation: each flow at its rate (physical / scale /
 * dilation) in the window of its event, [at_s, at_s + for_s) of scenario
 * time (x dilation) from tg_go's t0. Recorded in the state file first.
 * The generator's flows are those played, in p's order. 0 with *out
 * (NULL when none is), or -errno with err.
 */
int lab_traffic_start(const struct plan *p, const struct lpset *set,
		      const struct addressing *a, const char *prefix,
		      double dilation, struct tg **out, char *err, size_t len)
	__attribute__((warn_unused_result));

/*
 * lab_traffic_reverse - start a generator of one flow of background
 * traffic at gbps (physical) for for_s scenario seconds from tg_go, from
 * the server that receives task's first broadcast transfer back to the
 * address that transfer is sent from — the way a person's `iperf3 -R`
 * goes, on the routes its acknowledgements take, in the links' default
 * class (traffic nobody planned). Recorded in the state file first. 0 and
 * *out, or -errno with err.
 */
int lab_traffic_reverse(const struct plan *p, const struct addressing *a,
			const char *prefix, int task, double gbps,
			double for_s, double dilation, struct tg **out,
			char *err, size_t len)
	__attribute__((warn_unused_result));

/*
 * lab_fibre_state - how many of fibre's wavelength segments (veth ends
 * f<fibre>w<lambda> in its two ROADMs' namespaces) are up and how many
 * down in prefix's running emulation: a fibre cut has none up. 0, or
 * -errno with err naming the namespace.
 */
int lab_fibre_state(const char *prefix, const struct scenario *sc, int fibre,
		    int *up, int *down, char *err, size_t len);

/*
 * lab_fibre_set - cut (up false) or repair fibre `fibre` of sc (the
 * scenario prefix's running emulation was built from): every wavelength
 * segment on it (the veths f<fibre>w<lambda> between its two ROADMs'
 * namespaces) is taken down, or brought up, at both ends at once.
 * *segments gets the veth ends set (two per lit wavelength). 0, or -errno
 * with err naming the object and namespace (-ENOENT: not up, or no
 * segment: nothing lit on it).
 */
int lab_fibre_set(const char *prefix, const struct scenario *sc, int fibre,
		  bool up, int *segments, char *err, size_t len)
	__attribute__((warn_unused_result));

/*
 * lab_epoch - move prefix's running emulation, built with o.set = set,
 * from epoch `from` of the set to epoch `to`, live: the lightpaths `to`
 * lights and `from` did not are joined in their ROADMs and brought up at
 * their routers, every route that differs is replaced (or removed), then
 * the lightpaths `to` does not light are taken down at their routers.
 * Nothing is made or removed: transfers keep their addresses, so their
 * connections carry on over the new paths. *changes gets the number of
 * lightpaths lit and darkened and routes changed. 0, or -errno with err
 * naming the object and namespace.
 */
int lab_epoch(const char *prefix, const struct lpset *set, int from, int to,
	      int *changes, char *err, size_t len)
	__attribute__((warn_unused_result));

/*
 * lab_record_pid - write process pid (started at start, clock ticks since
 * boot; named name: lab_traffic_name) into prefix's state file, so that
 * `down` and `clean` end it. Its executable is read from /proc. 0 or
 * -errno.
 */
int lab_record_pid(const char *prefix, pid_t pid, unsigned long long start,
		   const char *name) __attribute__((warn_unused_result));

/*
 * lab_delay_pid - the delay line's supervisor of prefix, as the state
 * file records it and only if that process still is the one recorded
 * (pid, start time, name, executable). 0, -ENOENT (none: no state, no
 * delay line, or it is gone).
 */
int lab_delay_pid(const char *prefix, pid_t *pid);

/*
 * lab_delay_line - a delay line the supervisor sup runs now (its first
 * child; emu/dlsup.h: one line per CPU), 0 if none: a different pid
 * after a while means one restarted. (Each line also counts its starts
 * in the live counters: struct dl_live.)
 */
pid_t lab_delay_line(pid_t sup);

/*
 * lab_delay_live_open - map the live counters of prefix's delay line
 * (struct dl_live, in its state directory), checked as input: a regular
 * file of exactly that size, magic and version. 0, or -errno (-ENOENT:
 * no delay line, -EINVAL: not such a file). Unmap with
 * lab_delay_live_close (NULL is a no-op).
 */
int lab_delay_live_open(const char *prefix, struct dl_live **out)
	__attribute__((warn_unused_result));
void lab_delay_live_close(struct dl_live *l);

/*
 * lab_delay_at_once - the delay line (its live counters l, as mapped by
 * lab_delay_live_open) lets every packet that enters in the next s
 * seconds of host time through at once, undelayed; s <= 0 ends that now.
 * For the workers' handshakes before the first round, when nothing else
 * moves (NULL: nothing to tell). How many it let through so: its
 * `passed`.
 */
void lab_delay_at_once(struct dl_live *l, double s);

/* Whether a run with this prefix exists (state file or namespaces). */
bool lab_exists(const char *prefix);
/* The same, not counting namespace `but` (a node's part is built in it). */
bool lab_exists_but(const char *prefix, const char *but);

/*
 * lab_state_get - the value of `key` ("scenario", "scheduler", "dilation",
 * "part") recorded in the state file of `prefix`. 0, -ENOENT (no state or no such key), -errno.
 */
int lab_state_get(const char *prefix, const char *key, char *buf, size_t len);

/*
 * Interface names, made here only: a server's uplink (LAB_SERVER_IF), a
 * router's port to server s ("acc<s>") and a router's end of lightpath l
 * ("lp<l>").
 */
#define LAB_SERVER_IF "up0"

/*
 * A shaper's bucket holds this much of wall time at its rate: a shaper
 * held up that long (its timer late, the CPU taken away) sends what it
 * owes at once when it is let go, and the link loses nothing.
 */
#define LAB_BURST_US 1000
void lab_access_if(int server, char *buf, size_t len);
void lab_lightpath_if(int lp, char *buf, size_t len);

/*
 * lab_link_end - where directed link `link` of p (plan_link numbering)
 * leaves: the namespace (64 bytes) and interface (16) whose shaper sends
 * it.
 */
void lab_link_end(const struct plan *p, const char *prefix, int link,
		  char *ns, char *ifname);

/*
 * lab_part_prefix - the prefix of node i's part of a deployment made of
 * parts (an exported topology: each node's `up --node --prefix`), for
 * prefix: "<prefix><i>".
 */
void lab_part_prefix(const char *prefix, int node, char *buf, size_t len);

/* lab_link_node - the same link's node (its index) and interface. */
int lab_link_node(const struct plan *p, int link, char *ifname);

/* Namespace name of node `node` for prefix: "<prefix>-<name>". */
void lab_ns_name(const char *prefix, const char *node, char *buf, size_t len);

/*
 * lab_ns_flags - the netns_add() flags of node i's namespace: routers
 * forward, TCP ends on servers only (reordering tolerated where sc loses
 * no packet), a ROADM has no IP at all.
 */
unsigned lab_ns_flags(const struct scenario *sc, int i);

/*
 * lab_xconnect - rewire ROADM `roadm`'s cross-connect: frames arriving on
 * in_port leave by out_port (both names of that ROADM's ports). For
 * experiments and tests (a wavelength mismatch). 0 or -errno.
 */
int lab_xconnect(const char *prefix, const char *roadm, const char *in_port,
		 const char *out_port, char *err, size_t len);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The rtnetlink wrapper: the only module that speaks rtnetlink. One socket
 * per network namespace, opened once; requests are queued into a batch and
 * sent together by nl_commit(), which collects one acknowledgement per
 * request and reports the first failure with the object, the namespace and
 * the kernel's own extended-ack text.
 *
 * Interfaces are referred to by ifindex, which the caller chooses when it
 * creates them (namespaces are fresh, so the indices are free). That lets a
 * whole namespace be configured in one batch without lookups.
 */
#ifndef EMU_NL_H
#define EMU_NL_H

#include <stdbool.h>
#include <stdint.h>

struct nl;

/* nl_open - an rtnetlink socket in named namespace netns (NULL: current). */
struct nl *nl_open(const char *netns) __attribute__((warn_unused_result));
void nl_close(struct nl *nl);

/*
 * nl_open_void - a handle that takes every request and sends none (for
 * the namespaces of a build that makes one node's part only); `label`
 * names it in messages.
 */
struct nl *nl_open_void(const char *label) __attribute__((warn_unused_result));

/*
 * nl_map - from now on, `index` in a request means the interface called
 * `name` in this namespace, made by someone else with an index of the
 * kernel's choosing. 0, or -ENODEV (no such interface: nl_error says so)
 * or -errno. Queued requests are sent first.
 */
int nl_map(struct nl *nl, int index, const char *name)
	__attribute__((warn_unused_result));

/* The last failure's message ("cannot ... in netns '...': ..."). */
/* Name the namespace of a socket opened inside it (for messages). */
void nl_label(struct nl *nl, const char *netns);
const char *nl_error(const struct nl *nl);

/*
 * Queue requests. Each returns 0 or -ENOMEM / -ENOSPC (batch full: commit
 * first). Nothing reaches the kernel before nl_commit().
 */

/* A veth pair: `name`/`index` here, `peer`/`peer_index` in the namespace
 * open at peer_ns_fd (-1: here too). Both ends are brought up. */
int nl_veth(struct nl *nl, const char *name, int index, const char *peer,
	    int peer_index, int peer_ns_fd);
/* A bridge, up. */
int nl_bridge(struct nl *nl, const char *name, int index);
/* A VXLAN interface, up: VNI vni to remote from local (host order), UDP
 * port, over interface dev, MTU mtu; no learning (one remote). */
struct nl_vxlan_opts {
	uint32_t vni, remote, local, mtu;
	uint16_t port;
	int dev;
};
int nl_vxlan(struct nl *nl, const char *name, int index,
	     const struct nl_vxlan_opts *o);
int nl_link_mtu(struct nl *nl, int index, const char *name, uint32_t mtu);
/* nl_link_gso_segs - at most segs segments in a GSO packet (1: none), as
 * nl_veth makes its veths. */
int nl_link_gso_segs(struct nl *nl, int index, const char *name,
		     uint32_t segs);
/* Interface `index` made a port of bridge `master`. */
int nl_link_master(struct nl *nl, int index, const char *name, int master);
/* Bring interface `index` (e.g. lo = 1) up, or down. */
int nl_link_set(struct nl *nl, int index, const char *name, bool up);
int nl_link_up(struct nl *nl, int index, const char *name);
int nl_addr(struct nl *nl, int index, const char *name, uint32_t addr,
	    int prefix);
/* TCP settings a route carries (RTA_METRICS); 0 leaves one unset. */
struct nl_tcp_metrics {
	uint32_t rto_min_ms;	/* RTAX_RTO_MIN */
	uint32_t initcwnd;	/* RTAX_INITCWND, segments */
	uint32_t initrwnd;	/* RTAX_INITRWND, segments */
	bool quickack;		/* RTAX_QUICKACK: no delayed ACKs */
};

/* Route to dst/prefix via gateway `via` (0: on-link) out of `index`, with
 * TCP metrics m (NULL: none). */
int nl_route(struct nl *nl, uint32_t dst, int prefix, uint32_t via, int index,
	     const char *name, const struct nl_tcp_metrics *m);
/* The route to dst/prefix made (or replaced) to go via `via` out of
 * `index`; and that route removed. */
int nl_route_replace(struct nl *nl, uint32_t dst, int prefix, uint32_t via,
		     int index, const char *name);
int nl_route_del(struct nl *nl, uint32_t dst, int prefix, uint32_t via,
		 int index, const char *name);
/* Token bucket at rate bit/s, burst and limit in bytes, as root qdisc. */
int nl_tbf(struct nl *nl, int index, const char *name, uint64_t rate_bps,
	   uint32_t burst, uint32_t limit);
/*
 * The same, as root qdisc NL_TBF_OVER: with a classful qdisc under it
 * (nl_htb(..., true)) instead of a FIFO of its own: everything the link
 * sends passes one bucket, in the order the qdisc under it chooses.
 */
#define NL_TBF_OVER 0xfff0	/* above every class minor htb is given */
int nl_tbf_over(struct nl *nl, int index, const char *name,
		uint64_t rate_bps, uint32_t burst);
/*
 * Fair shaping: an htb qdisc (handle 1:, at the root or under_tbf)
 * sending unclassified packets to class 1:defcls (none there: ahead of
 * every class, unshaped by htb); a class 1:minor under 1:parent (0: the
 * root) guaranteed rate and borrowing up to ceil (bit/s), bucket `burst`
 * bytes, `quantum` bytes per turn among its siblings; a bfifo of `limit` bytes as
 * the leaf qdisc of 1:minor; a u32 filter sending IPv4 packets to `dst`
 * (host order) to class 1:minor.
 */
int nl_htb(struct nl *nl, int index, const char *name, uint16_t defcls,
	   bool under_tbf);
int nl_htb_class(struct nl *nl, int index, const char *name, uint16_t parent,
		 uint16_t minor, uint64_t rate_bps, uint64_t ceil_bps,
		 uint32_t burst, uint32_t quantum);
int nl_bfifo(struct nl *nl, int index, const char *name, uint16_t minor,
	     uint32_t limit);
int nl_classify_dst(struct nl *nl, int index, const char *name,
		    uint32_t dst, uint16_t minor);
/*
 * A u32 filter sending IPv4 packets shorter than `below` bytes (a power
 * of two) to htb's direct queue, ahead of every class: added before the
 * others, it is tried first.
 */
int nl_classify_small(struct nl *nl, int index, const char *name,
		      uint16_t below);
/* netem delaying every packet by delay_ns, as root qdisc (where the
 * kernel has it: for probing). */
int nl_netem(struct nl *nl, int index, const char *name, uint64_t delay_ns,
	     uint32_t limit);
/* A qdisc of `kind` with default options: clsact and ingress at the
 * ingress hook, any other as root 1: (for probing). */
int nl_qdisc_kind(struct nl *nl, int index, const char *name,
		  const char *kind);
/* Remove the root (or the clsact) qdisc of `index`. */
int nl_qdisc_del(struct nl *nl, int index, const char *name, bool clsact);
/* ingress qdisc on `index` (once per interface). */
int nl_ingress(struct nl *nl, int index, const char *name);
/* Every frame arriving on `from` leaves by `to` (u32 match-all + mirred
 * egress redirect): a cross-connect. replace = true rewires an existing one. */
int nl_redirect(struct nl *nl, int from, const char *from_name, int to,
		const char *to_name, bool replace);

/* Send the batch and wait for every acknowledgement. 0 or the first -errno. */
int nl_commit(struct nl *nl) __attribute__((warn_unused_result));

/*
 * Counters of the root qdisc of `index` since it was made. A qdisc counts
 * a GSO packet as the segments it stands for, each with its own headers:
 * the bytes a real wire would carry, where the interface counts one header.
 */
struct nl_qstats {
	uint64_t bytes, packets, drops;
};
int nl_qdisc_stats(struct nl *nl, int index, struct nl_qstats *out);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The delay line: propagation delay on a forwarding hop without sch_netem.
 *
 * The kernels this project runs on have no netem (see DESIGN.md, "Kernel
 * facts"). An iptables NFQUEUE rule on a router or ROADM namespace hands
 * every packet leaving (or entering) an interface to a numbered queue; the
 * delay line reads the queue's metadata over nfnetlink_queue (copy-meta
 * mode, so no payload crosses to user space), holds each packet's verdict
 * for the queue's delay and then accepts it. The kernel keeps the packet
 * meanwhile; only its id and deadline live here.
 *
 * Put the rule on a forwarding hop, never at a sending host's own egress:
 * there TCP small queues count the held packets against the socket and a
 * 10 ms path falls to a few Mbit/s.
 */
#ifndef EMU_DELAYLINE_H
#define EMU_DELAYLINE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define DL_NETNS_MAX 64

/* Kernel default queue length; also the least dl_queue_maxlen() returns. */
#define DL_MAXLEN_MIN 1024u

/* dl_queue.flags */
#define DL_QUEUE_NO_GSO (1u << 0)	/* let the kernel segment GSO packets
					 * before queueing (for comparison) */

struct dl_queue {
	char netns[DL_NETNS_MAX];	/* named namespace, /run/netns/NAME */
	uint16_t num;			/* NFQUEUE queue number in it */
	uint64_t delay_ns;		/* hold time of every packet */
	uint32_t maxlen;		/* kernel queue length in packets;
					 * 0 means DL_MAXLEN_MIN */
	uint32_t flags;			/* DL_QUEUE_* */
};

/* What one delayline_run() did; filled in when it returns. */
struct dl_stats {
	uint64_t packets;	/* packet messages read from the kernel */
	uint64_t gso_packets;	/* ... of which GSO super-packets */
	uint64_t stamped;	/* ... that carried their arrival time */
	uint64_t stamp_age_ns_sum; /* sum over those of how long before we
				 * read them they had arrived */
	uint64_t accepted;	/* accepted once their deadline passed */
	uint64_t passed;	/* ... of which in the watcher's window at
				 * once (struct dl_live's pass_until) */
	uint64_t flushed;	/* held at stop, accepted early */
	uint64_t overflow;	/* no room to hold: accepted at once */
	uint64_t held_max;	/* most packets held at one time */
	uint64_t enobufs;	/* ENOBUFS on receive: the kernel dropped
				 * packets it could not report to us */
	uint64_t nl_errors;	/* error messages from the kernel */
	int last_error;		/* the last of those, -errno */
	uint64_t verdict_msgs;	/* verdict messages sent (nearly all of them
				 * NFQNL_MSG_VERDICT_BATCH) */
	uint64_t sends;		/* sendmsg calls that carried them (and the
				 * queues' configuration) */
	uint64_t wakeups;	/* timer expirations */
	uint64_t late_ns_sum;	/* sum over accepted packets of how late the
				 * verdict went out after the deadline */
	uint64_t late_ns_max;	/* worst of those */
	uint64_t wake_ns;	/* learnt timer wakeup latency: the timer is
				 * set this much ahead of a deadline */
};

/*
 * What the delay line is doing, while it runs: counters in memory it
 * shares with whoever watches it (the fidelity monitor reads them between
 * rounds through a file mapped by both; see lab_delay_live_open). The
 * delay line only adds to them and raises late_ns_max; a reader may swap
 * late_ns_max for 0 to learn the worst since its last look.
 */
#define DL_LIVE_MAGIC 0x746c646cu	/* "tldl" */
#define DL_LIVE_VERSION 3u

/*
 * How late the accepted packets were, in bins: bin k counts those late by
 * [2^k, 2^(k+1)) x 1024 ns, the last bin everything beyond; under 1024 ns
 * is not counted. So a watcher tells one packet late beyond a limit from
 * many.
 */
#define DL_LATE_BINS 24
#define DL_LATE_UNIT_SHIFT 10		/* a bin's unit: 2^10 ns */

/* The bin of a packet late by `late` ns, or -1: none. */
static inline int dl_late_bin(uint64_t late)
{
	uint64_t u = late >> DL_LATE_UNIT_SHIFT;
	int k;

	if (!u)
		return -1;
	k = 63 - __builtin_clzll(u);
	return k < DL_LATE_BINS ? k : DL_LATE_BINS - 1;
}

/*
 * The one thing a watcher may tell the delay line: until pass_until
 * (CLOCK_MONOTONIC, ns; 0: never), a packet that enters is accepted at
 * once, undelayed (counted in passed as well as in accepted). A run opens
 * such a window while its workers make their connections, before any
 * round (their handshakes need not cross the dilated network, and
 * nothing else moves then), and closes it before the first; the window
 * is bounded by its time, so a watcher that dies with it open leaves
 * the line delaying again soon after.
 */
struct dl_live {
	uint32_t magic;			/* DL_LIVE_MAGIC */
	uint32_t version;		/* DL_LIVE_VERSION */
	_Atomic uint64_t accepted;	/* packets accepted at their deadline */
	_Atomic uint64_t late_ns_sum;	/* how late, summed over those */
	_Atomic uint64_t late_ns_max;	/* the worst since a reader reset it */
	_Atomic uint64_t starts;	/* times a line of the delay line bound
				 * its queues (each once at the start) */
	_Atomic uint64_t pass_until;	/* the watcher's: see above */
	_Atomic uint64_t passed;	/* packets accepted at once for it */
	_Atomic uint64_t late_bins[DL_LATE_BINS];	/* see DL_LATE_BINS */
};

/*
 * dl_queue_maxlen - a kernel queue length for a link of rate_bps with a
 * one-way delay of delay_ns: twice the bandwidth-delay product in
 * full-size (1500 byte) packets, at least DL_MAXLEN_MIN.
 */
uint32_t dl_queue_maxlen(uint64_t rate_bps, uint64_t delay_ns);

/*
 * delayline_run - hold every packet of the n queues q[] for its queue's
 * delay, until told to stop.
 *
 * One nfnetlink_queue socket per distinct namespace, created inside it,
 * bound to that namespace's queues. Once every queue is bound, one byte is
 * written to ready_fd (unless it is negative), which is then closed: it is
 * the caller's no longer (closed too if the delay line never gets ready,
 * so that its waiter sees end of file).
 *
 * A packet's delay counts from when it entered the namespace: the delay
 * line switches the kernel's receive timestamps on while it runs (one
 * socket with SO_TIMESTAMPNS; a system-wide switch) and reads the stamp
 * from each packet's message, so the time the packet waited for us is not
 * added. No packet is accepted before its deadline. To be on time after
 * sleeping, the timer fires ahead by the wakeup latency it has measured and
 * the loop polls for the last ~0.3 ms before a deadline, but for at most
 * 10 % of a CPU; a caller that needs it punctual under heavy load should
 * run it in a SCHED_FIFO thread (the tests do).
 *
 * Stops when *stop becomes nonzero (checked at least every 50 ms and after
 * every signal that interrupts the wait). With stop == NULL it stops on
 * SIGTERM or SIGINT instead: both are blocked in the calling thread while
 * it runs and read from a signalfd, so a single-threaded program needs no
 * handler; a multi-threaded one must block them in its other threads.
 *
 * On stop, every held packet is accepted at once (none is lost): the
 * queues are first switched to fail-open with length 0, so that packets
 * arriving meanwhile pass undelayed instead of being dropped when the
 * socket closes. Packets that meet the rule after return are dropped by the
 * kernel (the rule has no --queue-bypass): remove the rules first, or just
 * after.
 *
 * Returns 0 when stopped, or -errno: EINVAL for a bad q[] (empty, a bad
 * namespace name, a queue listed twice, a delay over an hour), ENOENT for
 * a missing namespace, EPERM or EBUSY when a queue is bound by someone
 * else, or the error of a failed socket call. stats (may be NULL) is
 * filled in either way.
 */
int delayline_run(const struct dl_queue *q, int n, int ready_fd,
		  volatile sig_atomic_t *stop, struct dl_stats *stats)
	__attribute__((warn_unused_result));

/*
 * delayline_run_shared - delayline_run() that also keeps live (unless
 * NULL) up to date: after every batch of verdicts, and starts once bound.
 */
int delayline_run_shared(const struct dl_queue *q, int n, int ready_fd,
			 volatile sig_atomic_t *stop, struct dl_live *live,
			 struct dl_stats *stats)
	__attribute__((warn_unused_result));

#endif

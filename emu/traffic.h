/* SPDX-License-Identifier: MIT */
/*
 * The traffic generator: background traffic as real packets. One process
 * (named lab_traffic_name, recorded in the state file before it starts
 * sending) holds, for each flow, a UDP socket in the source's namespace
 * bound to the flow's source address and a socket in the destination's
 * namespace bound to its destination address, which takes in what
 * arrives (so nothing is answered with ICMP). From the moment the run
 * gives it (tg_go), each flow sends full-size datagrams paced at its rate
 * during its window, through the same routes, shapers and delay line as
 * the tasks: it competes for their capacity. It ends when every window
 * has passed and what was sent in it has had time to arrive (linger_s),
 * on SIGTERM or SIGINT, and with the process that started it.
 */
#ifndef EMU_TRAFFIC_H
#define EMU_TRAFFIC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "delayline.h"
#include "twin/wire.h"

#define TG_PAYLOAD WIRE_DGRAM_PAYLOAD	/* UDP payload of one datagram */
#define TG_FRAME WIRE_DGRAM_FRAME	/* its frame on the wire */
#define TG_PORT 9		/* the discard port, in the flows' own /32s */
#define TG_FLOWS_MAX 10000
#define TG_READY_MS 10000

struct tg_flow {
	char src_ns[DL_NETNS_MAX], dst_ns[DL_NETNS_MAX];
	uint32_t src, dst;	/* IPv4, host order */
	double rate_bps;	/* frames on the wire, as emulated */
	double start_s, stop_s;	/* window, seconds after tg_go's t0 */
	double linger_s;	/* after stop_s, until its last datagrams
				 * are in (its path's delay) */
};

struct tg;

/*
 * tg_start - fork the generator for flows f[0..n), named name. record(pid,
 * start, ctx) writes it down before it may do anything (it leaves if
 * that fails); then it opens its sockets and waits for tg_go. Returns 0
 * and the handle, or -errno with the reason in err (the flow and
 * namespace that failed); nothing is left running then.
 */
int tg_start(const struct tg_flow *f, int n, const char *name,
	     int (*record)(pid_t pid, unsigned long long start, void *ctx),
	     void *ctx, struct tg **out, char *err, size_t len)
	__attribute__((warn_unused_result));

/* tg_go - start the windows' clock at t0_ns (CLOCK_MONOTONIC). 0 or -errno. */
int tg_go(struct tg *g, uint64_t t0_ns) __attribute__((warn_unused_result));

/* tg_bytes - flow i's datagram payload bytes sent and received so far. */
void tg_bytes(const struct tg *g, int i, uint64_t *sent, uint64_t *received);

/* tg_late_ns - the most flow i's datagrams left after their time so far
 * (the generator's own lateness: a stalled host's, or a flow faster than
 * the host sends). */
uint64_t tg_late_ns(const struct tg *g, int i);

/*
 * tg_lateness - over every flow (none when g is NULL): how late its
 * datagrams left after their times, summed since it started, and their
 * number; and the most one left late since the last call, which starts
 * that anew (a round's worst, read before and after it).
 */
void tg_lateness(struct tg *g, uint64_t *sum_ns, uint64_t *dgrams,
		 uint64_t *peak_ns);

/*
 * tg_received_in_time - flow i's payload bytes that arrived (the kernel's
 * stamp) by the end of its window and its linger: what its path carried
 * in the time it had, however late the generator got to read them.
 */
uint64_t tg_received_in_time(const struct tg *g, int i);

/* tg_pid - the generator's pid. */
pid_t tg_pid(const struct tg *g);

/* tg_wait - wait for the generator to end by itself (its windows over);
 * its exit status (0: every flow sent its window; 128 + signal), or -errno
 * (-ECHILD: something else reaped it). The counts stay readable until
 * tg_stop. */
int tg_wait(struct tg *g);

/* tg_wait_done - whether the generator has ended (not reaped: tg_stop
 * still frees it). */
bool tg_wait_done(const struct tg *g);

/* tg_stop - end the generator (SIGTERM), reap it, free g. NULL: no-op. */
void tg_stop(struct tg *g);

#endif

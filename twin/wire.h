/* SPDX-License-Identifier: MIT */
/*
 * What a model transfer puts on the wire, as the twin predicts it and the
 * emulation sends it. A task's model of `parameters` becomes, at the
 * scenario's scale, a softmax model of nparams = classes x (dim + 1)
 * parameters (twin/fl.h, fl_shape_for), encoded in bytes_per_parameter
 * (fl_wire_size): the payload. A message is the payload behind a
 * WIRE_MSG_HDR-byte header, sent over TCP in segments of WIRE_MSS bytes;
 * every segment carries WIRE_SEG_OVERHEAD bytes of Ethernet, IPv4 and TCP
 * headers (with timestamps), as a qdisc counts them. The receiver answers
 * every segment with a pure ACK of WIRE_SEG_OVERHEAD bytes: the emulation
 * turns delayed ACKs off (quick ACKs on every route, so no host timer
 * enters a round) and offloads no segmentation, so each segment arrives
 * alone; a TCP with delayed ACKs would send half as many (RFC 5681, 4.2).
 */
#ifndef TWIN_WIRE_H
#define TWIN_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

#define WIRE_MSG_HDR 40		/* task, round, sender, length, digest,
				 * weight */
#define WIRE_MSS 1448		/* MTU 1500 - IPv4 20 - TCP 20 - TS 12 */
#define WIRE_SEG_OVERHEAD 66	/* Ethernet 14 + IPv4 20 + TCP 32 */
#define WIRE_CLASSES 10		/* the workers' data set (FL_CLASSES) */

/*
 * TCP's least retransmission timeout, seconds of scenario time: Linux's
 * 200 ms, which the emulation keeps in scenario time (locked on the
 * servers' routes, times the dilation). A connection's timeout is this
 * plus its smoothed round trip, doubled at every expiry without an ACK.
 */
#define WIRE_RTO_MIN_S 0.2

/*
 * wire_tcp_resume - when a TCP connection whose data a fibre cut took at
 * lost_s sends again: its retransmission timer, WIRE_RTO_MIN_S plus
 * rtt_s (the round trip it knew), expires lost_s + timeout later and
 * doubles at every expiry that finds no way; the first at or after back_s,
 * when a way is there again, resends. INFINITY if back_s is.
 */
double wire_tcp_resume(double lost_s, double rtt_s, double back_s);

/*
 * wire_slow_start_s - how long TCP takes to send `segments` again after a
 * timeout, from one segment doubling every round trip of rtt_s:
 * ceil(log2(segments + 1)) round trips.
 */
double wire_slow_start_s(double segments, double rtt_s);

/*
 * wire_tcp_stall - until when a transfer that lost data at lost_s, with
 * `segments` the receiver does not have, sends nothing a predictor must
 * share: its resend (wire_tcp_resume) and all of its slow start but the
 * last round trip, which sends the rest at the transfer's share.
 */
double wire_tcp_stall(double lost_s, double rtt_s, double back_s,
		      double segments);

/*
 * Background traffic: full-size UDP datagrams, evenly paced at the
 * traffic's rate (emulated bytes, as for a message).
 */
#define WIRE_DGRAM_PAYLOAD 1472u	/* MTU 1500 - IPv4 20 - UDP 8 */
#define WIRE_DGRAM_FRAME 1514u		/* + UDP, IPv4 and Ethernet */

/* One message of a task, in emulated bytes (divided by the scale). */
struct wire_msg {
	int dim;		/* model shape: classes x (dim + 1) */
	size_t nparams;
	size_t payload;		/* encoded model */
	size_t msg;		/* header + payload */
	uint64_t segments;	/* TCP segments */
	uint64_t data_bytes;	/* msg + per-segment headers: on the path */
	uint64_t acks;		/* pure ACKs, one per segment */
	uint64_t ack_bytes;	/* their bytes: on the reverse path */
};

/*
 * wire_message - the message of task t of scenario sc. 0, or -EINVAL (a
 * bytes_per_parameter with no wire format) / -EOVERFLOW (too large).
 */
int wire_message(const struct scenario *sc, const struct scn_task *t,
		 struct wire_msg *out) __attribute__((warn_unused_result));

#endif

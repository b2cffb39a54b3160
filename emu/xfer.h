/* SPDX-License-Identifier: MIT */
/*
 * The model worker's messages: a header and a model's payload on one TCP
 * connection, moved a step at a time by the worker's event loop without
 * blocking, with how late the loop got to what it received.
 */
#ifndef EMU_XFER_H
#define EMU_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker.h"

#define WK_MAGIC 0x314d4c54u	/* "TLM1" */

struct wk_hdr {
	uint32_t magic, task, round, sender;
	uint64_t length, digest;
	double weight;
};

_Static_assert(sizeof(struct wk_hdr) == WK_HDR_BYTES, "header size");

_Static_assert(offsetof(struct wk_hdr, digest) == 24 &&
	       offsetof(struct wk_hdr, weight) == 32, "header layout");

/*
 * An upload with relays pipelined goes as the header without its digest
 * (whose weight an aggregator needs first), the payload, then the digest,
 * which an aggregator that streams its mean knows only at the end: the
 * same bytes, in another order.
 */
#define WK_SPLIT_HEAD (offsetof(struct wk_hdr, digest) + sizeof(double))

/*
 * whole_segments - what a pipelined sender may send of a message of which
 * `have` bytes are ready: whole segments only, until all of it is (so the
 * segments on the wire are the full ones the twin counts).
 */
size_t whole_segments(size_t have, size_t total);

/* One message in flight on one connection, either way. */
struct xfer {
	int fd;
	struct wk_hdr h;
	unsigned char *buf;	/* payload */
	size_t len;		/* its bytes */
	size_t off;		/* bytes of the message done */
	size_t avail;		/* sending: bytes that may go so far */
	bool split;		/* digest last (WK_SPLIT_HEAD) */
	bool busy, done;
	uint64_t armed;		/* receiving: since when (CLOCK_REALTIME ns) */
	bool streams;		/* receiving: passed on as it comes */
	size_t lowat;		/* receiving whole: SO_RCVLOWAT set (0: 1) */
};

/*
 * xfer_send - x starts sending header h (its length set to len) and the
 * payload buf[0..len); all of it may go (x->avail), split: digest last.
 */
void xfer_send(struct xfer *x, struct wk_hdr h, const unsigned char *buf,
	       size_t len, bool split);

/*
 * xfer_recv - x starts awaiting a message of len payload bytes into buf;
 * streams: its reader passes it on as it comes (for xfer_step's lateness).
 */
void xfer_recv(struct xfer *x, unsigned char *buf, size_t len, bool split,
	       bool streams);

/*
 * xfer_step - move as many bytes as the socket takes or gives now
 * (sending, no more than x->avail). Receiving, *late is raised to how
 * late this loop got to data it awaited. 0 (maybe not done yet: x->done
 * says), or -errno.
 */
int xfer_step(struct xfer *x, bool out, uint64_t *late);

/*
 * xfer_check_head - x's received header is want's (magic, task, round,
 * sender, length), its digest aside. 0, or -EBADMSG with why[0..len).
 */
int xfer_check_head(const struct xfer *x, const struct wk_hdr *want,
		    char *why, size_t len);

/* xfer_check - the same, and the payload matches the digest. */
int xfer_check(const struct xfer *x, const struct wk_hdr *want, char *why,
	       size_t len);

#endif

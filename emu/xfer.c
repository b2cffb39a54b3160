// SPDX-License-Identifier: MIT
/*
 * The model worker's messages, moved without blocking: see xfer.h.
 */
#include "xfer.h"
#include "wksock.h"
#include "twin/clock.h"
#include "twin/fl.h"
#include "twin/wire.h"

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/uio.h>

size_t whole_segments(size_t have, size_t total)
{
	return have >= total ? total : have / WIRE_MSS * WIRE_MSS;
}

void xfer_send(struct xfer *x, struct wk_hdr h, const unsigned char *buf,
	       size_t len, bool split)
{
	x->h = h;
	x->h.magic = WK_MAGIC;
	x->h.length = len;
	x->buf = (unsigned char *)buf;
	x->len = len;
	x->off = 0;
	x->avail = SIZE_MAX;
	x->split = split;
	x->busy = true;
	x->done = false;
}

void xfer_recv(struct xfer *x, unsigned char *buf, size_t len, bool split,
	       bool streams)
{
	x->buf = buf;
	x->len = len;
	x->off = 0;
	x->split = split;
	x->busy = true;
	x->done = false;
	x->armed = real_ns();
	x->streams = streams;
}

/*
 * A receiver that acts on whole messages is woken when the rest of its
 * message is in, not at each segment (SO_RCVLOWAT; the kernel wakes it
 * sooner when the window closes, or at the stream's end): what it waits
 * for, at most XFER_LOWAT_MAX. Back to 1 once the message is whole.
 */
#define XFER_LOWAT_MAX ((size_t)4 << 20)

static void lowat(struct xfer *x, size_t want)
{
	int v;

	if (want > XFER_LOWAT_MAX)
		want = XFER_LOWAT_MAX;
	if (want < 1)
		want = 1;
	if (want == (x->lowat ? x->lowat : 1))
		return;
	v = (int)want;
	if (!setsockopt(x->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof(v)))
		x->lowat = want;
}

/*
 * How late this loop gets to what it awaits, counted where it distorts
 * what is measured. A worker that passes data on as it comes (a
 * pipelined relay, a streaming aggregator) and reads late leaves its
 * outgoing link idle: there, every read counts, from the time the oldest
 * byte waiting reached this namespace. Any other receiver reads into a
 * buffer and acts once the message is whole: there, only the read that
 * completes it counts, from the time its last segment came (a message
 * read late but complete on time is on time). Data that came before its
 * message was awaited waited by design, and is not counted.
 */
static void note_late(const struct xfer *x, uint64_t at, uint64_t *late)
{
	uint64_t now = real_ns();

	if (at >= x->armed && now > at && now - at > *late)
		*late = now - at;
}

/* The message's parts in the order they go on the wire. */
static int msg_parts(struct xfer *x, struct iovec *p)
{
	char *h = (char *)&x->h;

	if (!x->split) {
		p[0] = (struct iovec){ h, sizeof(x->h) };
		p[1] = (struct iovec){ x->buf, x->len };
		return 2;
	}
	p[0] = (struct iovec){ h, offsetof(struct wk_hdr, digest) };
	p[1] = (struct iovec){ h + offsetof(struct wk_hdr, weight),
			       sizeof(double) };
	p[2] = (struct iovec){ x->buf, x->len };
	p[3] = (struct iovec){ h + offsetof(struct wk_hdr, digest),
			       sizeof(uint64_t) };
	return 4;
}

/* A message's parts go in one sendmsg, so its first segment is full. */
int xfer_step(struct xfer *x, bool out, uint64_t *late)
{
	size_t total = sizeof(x->h) + x->len;
	size_t limit = out && x->avail < total ? x->avail : total;
	uint64_t last = 0;	/* receiving: the last segment read came */
	uint64_t oldest;

	if (!out && x->busy && x->streams && wks_oldest(x->fd, &oldest) == 1)
		note_late(x, oldest, late);
	while (x->busy && x->off < limit) {
		struct iovec part[4], iov[4];
		int np = msg_parts(x, part), n = 0;
		size_t at = 0;
		ssize_t k;

		for (int i = 0; i < np; i++) {
			size_t a = at, b = at + part[i].iov_len;
			size_t from = a > x->off ? a : x->off;
			size_t to = b < limit ? b : limit;

			at = b;
			if (from < to)
				iov[n++] = (struct iovec){
					(char *)part[i].iov_base + (from - a),
					to - from };
		}
		if (out) {
			struct msghdr m = { .msg_iov = iov,
					    .msg_iovlen = (size_t)n };

			k = sendmsg(x->fd, &m, MSG_NOSIGNAL);
		} else {
			/* never read past this message: the next round's
			 * header may already be behind it */
			k = wks_recv(x->fd, iov, n, &last);
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!out && !x->streams)
				lowat(x, total - x->off);
			return 0;
		}
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ECONNRESET;	/* the peer went away */
		x->off += (size_t)k;
	}
	if (x->busy && x->off == total) {
		x->busy = false;
		x->done = true;
		if (!out && !x->streams && last)
			note_late(x, last, late);
		if (!out && x->lowat > 1)
			lowat(x, 1);
	}
	return 0;
}

int xfer_check_head(const struct xfer *x, const struct wk_hdr *want,
		    char *why, size_t len)
{
	const struct wk_hdr *h = &x->h;

	if (h->magic != WK_MAGIC || h->task != want->task ||
	    h->round != want->round || h->sender != want->sender ||
	    h->length != want->length) {
		snprintf(why, len, "bad header (task %u round %u sender %u "
			 "length %llu)", h->task, h->round, h->sender,
			 (unsigned long long)h->length);
		return -EBADMSG;
	}
	return 0;
}

int xfer_check(const struct xfer *x, const struct wk_hdr *want, char *why,
	       size_t len)
{
	int err = xfer_check_head(x, want, why, len);

	if (err)
		return err;
	if (fl_digest(x->buf, x->len) != x->h.digest) {
		snprintf(why, len, "payload checksum mismatch");
		return -EBADMSG;
	}
	return 0;
}

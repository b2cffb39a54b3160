// SPDX-License-Identifier: MIT
/*
 * The worker's sockets tell how late their reader is: over the line
 * h1 — r — h2 (forwarded by r, as a worker's data is), a stamped socket
 * in h2 reports when the data waiting arrived — a time that stays as the
 * reader looks at it again — and, once it is read, when the next data
 * did, peeked or read. A reader of whole messages is woken once the rest
 * of its message is in, not at each segment. Root only; prefix "ws<pid>".
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "emu/fleet_impl.h"
#include "emu/wksock.h"
#include "emu/worker.h"
#include "emu/xfer.h"
#include "twin/clock.h"
#include "tests/lib/nettest.h"

static struct nt_line line;

static void line_init(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root");
	cr_assert_eq(nt_line_own(&line, "ws"), 0);
}

static void line_fini(void)
{
	nt_line_down(&line);
}

TestSuite(wksock, .init = line_init, .fini = line_fini, .timeout = 30);

/*
 * A connection from h1 to h2's worker port, both ends with room bytes of
 * buffer (0: the kernel's): the receiving end, *tx the sending one, *lfd
 * the listening one.
 */
static int h1_to_h2(int room, int *tx, int *lfd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(WK_PORT) };
	int rx;

	*lfd = nt_socket(line.h2, AF_INET, SOCK_STREAM, 0);
	*tx = nt_socket(line.h1, AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(*lfd, 0);
	cr_assert_geq(*tx, 0);
	if (room) {
		cr_assert_eq(setsockopt(*lfd, SOL_SOCKET, SO_RCVBUF, &room,
					sizeof(room)), 0);
		cr_assert_eq(setsockopt(*tx, SOL_SOCKET, SO_SNDBUF, &room,
					sizeof(room)), 0);
	}
	cr_assert_eq(inet_pton(AF_INET, NT_H2_ADDR, &sa.sin_addr), 1);
	cr_assert_eq(bind(*lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(*lfd, 1), 0);
	cr_assert_eq(connect(*tx, (struct sockaddr *)&sa, sizeof(sa)), 0);
	rx = wks_accept(*lfd, 5);
	cr_assert_geq(rx, 0, "%s", strerror(-rx));
	return rx;
}

Test(wksock, the_oldest_waiting_byte_is_stamped_with_its_arrival)
{
	int lfd, tx, rx = h1_to_h2(0, &tx, &lfd);
	uint64_t t0, seen, later, first, again, at;
	char buf[2];

	cr_assert_eq(wks_stamped(rx), 0);
	cr_assert_eq(wks_oldest(rx, &at), 0, "nothing waits yet");
	/*
	 * The kernel turns its stamps on a moment after the first socket
	 * asks (a deferred work): bytes are sent, each awaited with poll(),
	 * until one comes stamped.
	 */
	for (bool stamped = false; !stamped;) {
		struct pollfd pfd = { .fd = rx, .events = POLLIN };

		cr_assert_eq(write(tx, "w", 1), 1);
		cr_assert_eq(poll(&pfd, 1, 5000), 1);
		stamped = wks_oldest(rx, &at) == 1;
		cr_assert_eq(read(rx, buf, 1), 1);
	}
	cr_assert_eq(wks_oldest(rx, &at), 0, "nothing waits");

	t0 = real_ns();
	cr_assert_eq(write(tx, "a", 1), 1);
	/* the byte is there once a peek sees it: an event, not a wait */
	while (wks_oldest(rx, &first) == 0)
		;
	seen = real_ns();
	cr_assert(first >= t0 && first <= seen, "stamped %llu, sent at %llu, "
		  "seen at %llu", (unsigned long long)first,
		  (unsigned long long)t0, (unsigned long long)seen);

	/* looked at again, later: the same arrival, so lateness grows */
	cr_assert_eq(wks_oldest(rx, &again), 1);
	cr_assert_eq(again, first, "the waiting byte's stamp moved");

	/* once it is read, data sent later carries its own time */
	cr_assert_eq(read(rx, buf, 1), 1);
	cr_assert_eq(wks_oldest(rx, &at), 0, "nothing waits");
	later = real_ns();
	cr_assert_eq(write(tx, "b", 1), 1);
	while (wks_oldest(rx, &again) == 0)
		;
	cr_assert_geq(again, later, "the second byte, sent after %llu, "
		      "stamped %llu", (unsigned long long)later,
		      (unsigned long long)again);
	{
		struct iovec iov = { buf, 2 };

		/* reading it says the same time */
		at = 0;
		cr_assert_eq(wks_recv(rx, &iov, 1, &at), 1);
		cr_assert_eq(buf[0], 'b');
		cr_assert_eq(at, again);
	}
	close(rx);
	close(tx);
	close(lfd);
}

/* This process's open descriptors. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A worker's conf on h2, as the fleet fills it, for fleet_listen. */
static void conf_on_h2(struct wk_conf *c)
{
	struct in_addr a;

	memset(c, 0, sizeof(*c));
	c->lfd_bcast = -1;
	for (int i = 0; i < WK_MAX_CHILDREN; i++)
		c->lfd_up[i] = -1;
	snprintf(c->task_name, sizeof(c->task_name), "t1");
	snprintf(c->netns, sizeof(c->netns), "%s", line.h2);
	c->model = 1;
	c->classes = 10;
	c->dim = 999;
	c->bpp = 4;
	cr_assert_eq(inet_pton(AF_INET, NT_H2_ADDR, &a), 1);
	c->bcast_in.dst = ntohl(a.s_addr);
}

/* A blocking dial from h1 to h2's worker port: 0 or -errno. */
static int dial_h2(int *fd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(WK_PORT) };

	*fd = nt_socket(line.h1, AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(*fd, 0);
	cr_assert_eq(inet_pton(AF_INET, NT_H2_ADDR, &sa.sin_addr), 1);
	return connect(*fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
}

/*
 * The harness makes a worker's listening sockets in its namespace before
 * the worker exists: a peer's dial is taken at once (no worker accepts
 * yet), with the buffers the worker's connections are to have; the worker
 * accepts it later. Closed, the port refuses again. One that cannot be
 * made is said as the worker would have said it, with its namespace, and
 * none is left open.
 */
Test(wksock, a_worker_listens_before_it_starts)
{
	struct wk_conf c;
	char err[256] = "";
	int fd, rx, buf = 0, fds = open_fds();
	socklen_t bl = sizeof(buf);

	conf_on_h2(&c);
	cr_assert_eq(fleet_listen(&c, "h2", err, sizeof(err)), 0, "%s", err);
	cr_assert_geq(c.lfd_bcast, 0);
	cr_assert_eq(getsockopt(c.lfd_bcast, SOL_SOCKET, SO_RCVBUF, &buf, &bl),
		     0);
	cr_assert_geq((size_t)buf, wk_sock_buffer(&c), "%d bytes", buf);
	cr_assert_eq(dial_h2(&fd), 0, "the dial was refused");
	rx = wks_accept(c.lfd_bcast, 5);
	cr_assert_geq(rx, 0, "%s", strerror(-rx));
	close(rx);
	close(fd);
	fleet_unlisten(&c);
	cr_assert_eq(c.lfd_bcast, -1);
	cr_assert_eq(dial_h2(&fd), -ECONNREFUSED);
	close(fd);
	cr_assert_eq(open_fds(), fds);

	/* an address h2 does not have, for its upload child */
	conf_on_h2(&c);
	c.nuc = 1;
	c.up_in[0].dst = 0x0a0a0a0a;	/* 10.10.10.10 */
	cr_assert_eq(fleet_listen(&c, "h2", err, sizeof(err)), -EADDRNOTAVAIL);
	cr_assert(strstr(err, "worker on h2 (model 1): cannot listen on "
			      "10.10.10.10: ") &&
		  strstr(err, line.h2), "%s", err);
	cr_assert_eq(c.lfd_bcast, -1);
	cr_assert_eq(c.lfd_up[0], -1);
	cr_assert_eq(open_fds(), fds);
}

/* The reader's SO_RCVLOWAT. */
static int rcvlowat(int fd)
{
	int v = 0;
	socklen_t l = sizeof(v);

	cr_assert_eq(getsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &v, &l), 0);
	return v;
}

/* Bytes waiting to be read in fd, whatever it asks for. */
static int waiting(int fd)
{
	int n = 0;

	cr_assert_eq(ioctl(fd, SIOCINQ, &n), 0);
	return n;
}

/* Step x until it has read `upto` bytes of its message (they were sent). */
static void read_upto(struct xfer *x, size_t upto)
{
	uint64_t late = 0;

	while (x->off < upto)
		cr_assert_eq(xfer_step(x, false, &late), 0);
}

/*
 * A worker that acts on whole messages (a local awaiting the model, a
 * root its uploads) is woken once the rest of the message is in: what it
 * has read leaves the socket asking for the rest (SO_RCVLOWAT), part of
 * that waiting does not make it readable, the last of it does, and once
 * whole the socket asks for a byte again. A reader that passes data on
 * as it comes asks for a byte all along.
 */
Test(wksock, a_whole_message_reader_wakes_once_it_is_in)
{
	enum { LEN = 100000, PART = 30000 };
	static unsigned char payload[LEN], got[LEN];
	struct wk_hdr h = { .magic = WK_MAGIC, .length = LEN };
	const size_t total = sizeof(h) + LEN;
	/* room for the message whole, as a worker's sockets have */
	int lfd, tx, rx = h1_to_h2(1 << 20, &tx, &lfd);
	struct pollfd pfd = { .events = POLLIN };
	struct xfer x = { 0 };
	uint64_t late = 0;

	for (int i = 0; i < LEN; i++)
		payload[i] = (unsigned char)(i * 7);
	cr_assert_eq(wks_nonblock(rx), 0);
	pfd.fd = rx;
	x.fd = rx;
	xfer_recv(&x, got, LEN, false, false);

	/* the header and a part, read as they come */
	cr_assert_eq(write(tx, &h, sizeof(h)), (ssize_t)sizeof(h));
	cr_assert_eq(write(tx, payload, PART), PART);
	read_upto(&x, sizeof(h) + PART);
	cr_assert_eq(xfer_step(&x, false, &late), 0);
	cr_assert_not(x.done);
	cr_assert_eq(rcvlowat(rx), (int)(total - x.off));

	/* more, not all: in the socket, and not readable */
	cr_assert_eq(write(tx, payload + PART, PART), PART);
	while (waiting(rx) < PART)
		;
	cr_assert_eq(poll(&pfd, 1, 0), 0, "woken before the message is in");

	/* the rest: readable, and whole once read */
	cr_assert_eq(write(tx, payload + 2 * PART, LEN - 2 * PART),
		     LEN - 2 * PART);
	cr_assert_eq(poll(&pfd, 1, 5000), 1);
	cr_assert_eq(xfer_step(&x, false, &late), 0);
	cr_assert(x.done, "%zu of %zu bytes", x.off, total);
	cr_assert_eq(memcmp(got, payload, LEN), 0);
	cr_assert_eq(rcvlowat(rx), 1);

	/* a reader that passes data on asks for a byte all along */
	xfer_recv(&x, got, LEN, false, true);
	cr_assert_eq(write(tx, &h, sizeof(h)), (ssize_t)sizeof(h));
	cr_assert_eq(write(tx, payload, PART), PART);
	read_upto(&x, sizeof(h) + PART);
	cr_assert_eq(xfer_step(&x, false, &late), 0);
	cr_assert_eq(rcvlowat(rx), 1);
	cr_assert_eq(write(tx, payload + PART, LEN - PART), LEN - PART);
	read_upto(&x, total);
	cr_assert(x.done);
	close(rx);
	close(tx);
	close(lfd);
}

// SPDX-License-Identifier: MIT
/*
 * The model worker's TCP sockets (wksock.h): listening, dialling every
 * child at once across the dilated network, accepting, and the options
 * every worker socket carries.
 */
#include "wksock.h"
#include "twin/clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/*
 * Socket buffers that hold a few whole messages, set before the handshake
 * so the window scale allows them: the window must never be what limits a
 * transfer (the twin has no flow control). Forced past the system's
 * rmem_max/wmem_max: workers run as root.
 */
static size_t bufsize;

void wks_buffers(size_t bytes)
{
	bufsize = bytes;
}

static void buffers_of(int fd, size_t bytes)
{
	int v = (int)bytes;

	if (!v)
		return;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

static void buffers(int fd)
{
	buffers_of(fd, bufsize);
}

void wks_timeouts(int fd, double s)
{
	struct timeval tv = { (time_t)s, (suseconds_t)((s - (time_t)s) * 1e6) };
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int wks_listen(uint32_t addr)
{
	return wks_listen_buffered(addr, bufsize);
}

int wks_listen_buffered(uint32_t addr, size_t bytes)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(WK_PORT),
				  .sin_addr.s_addr = htonl(addr) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	buffers_of(fd, bytes);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 4)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * Not listening yet, or its path not there yet (a cut in progress, its
 * moves still being set up): worth another attempt. So is a handshake
 * the kernel gave up on: its SYNs went into a dark path, and it tries for
 * about 127 s of the host's time whatever the dilation (at 128, a second
 * of scenario time, less than a cut's set-up may take); the caller's own
 * time-out, dilated, is what ends the attempts.
 */
static bool dial_again(int err)
{
	return err == -ECONNREFUSED || err == -EHOSTUNREACH ||
	       err == -ENETUNREACH || err == -ETIMEDOUT;
}

/* An attempt at d, without waiting for it. 0 (made, or on its way). */
static int dial_start(struct wks_dial *d, double timeout)
{
	struct sockaddr_in from = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(d->src) };
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(WK_PORT),
				  .sin_addr.s_addr = htonl(d->dst) };
	int err;

	d->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		       0);
	if (d->fd < 0)
		return -errno;
	if (bind(d->fd, (struct sockaddr *)&from, sizeof(from)))
		goto fail;
	wks_timeouts(d->fd, timeout);
	buffers(d->fd);
	if (connect(d->fd, (struct sockaddr *)&to, sizeof(to)) == 0) {
		d->done = true;
		return 0;
	}
	if (errno == EINPROGRESS)
		return 0;
fail:
	err = -errno;
	close(d->fd);
	d->fd = -1;
	return err;
}

/* d's attempt is over (err 0: made): made, to be made again, or failed. */
static int dial_end(struct wks_dial *d, int err, uint64_t now)
{
	if (!err) {
		int fl = fcntl(d->fd, F_GETFL);

		d->done = true;
		return fl < 0 || fcntl(d->fd, F_SETFL, fl & ~O_NONBLOCK) ?
			       -errno : 0;
	}
	close(d->fd);
	d->fd = -1;
	d->again = now + 5000000u;
	return dial_again(err) ? 0 : err;
}

/*
 * Make every connection of d[0..n) at once: each handshake crosses the
 * dilated network, so side by side they take one round trip, not n. An
 * attempt that may do better later (dial_again) is made again 5 ms later,
 * till timeout.
 * 0 with every d[i].fd connected (blocking), or -errno with *bad the one
 * that failed; what was made is the caller's to close.
 */
int wks_connect_all(struct wks_dial *d, int n, double timeout, int *bad)
{
	uint64_t end = mono_ns() + (uint64_t)(timeout * 1e9);
	struct pollfd p[WK_MAX_CHILDREN + 1];
	int at[WK_MAX_CHILDREN + 1];

	if (n > WK_MAX_CHILDREN + 1)
		return -E2BIG;
	for (int i = 0; i < n; i++) {
		d[i].fd = -1;
		d[i].done = false;
		d[i].again = 0;
	}
	for (;;) {
		uint64_t now = mono_ns(), next = end;
		int np = 0, left = 0, err;

		for (int i = 0; i < n; i++) {
			*bad = i;
			if (d[i].done)
				continue;
			left++;
			if (d[i].fd < 0 && d[i].again <= now) {
				err = dial_start(&d[i], timeout);
				if (err && (err = dial_end(&d[i], err, now)))
					return err;
			}
			if (d[i].done) {
				left--;
			} else if (d[i].fd >= 0) {
				p[np] = (struct pollfd){ .fd = d[i].fd,
							 .events = POLLOUT };
				at[np++] = i;
			} else if (d[i].again < next) {
				next = d[i].again;
			}
		}
		if (!left)
			return 0;
		if (now > end) {
			for (int i = 0; i < n; i++)
				if (!d[i].done)
					*bad = i;
			return -ETIMEDOUT;
		}
		err = poll(p, (nfds_t)np, (int)((next - now) / 1000000u) + 1);
		if (err < 0 && errno != EINTR)
			return -errno;
		now = mono_ns();
		for (int k = 0; k < np; k++) {
			int i = at[k], so = 0;
			socklen_t sl = sizeof(so);

			if (!p[k].revents)
				continue;
			*bad = i;
			if (getsockopt(d[i].fd, SOL_SOCKET, SO_ERROR, &so, &sl))
				so = errno;
			err = dial_end(&d[i], -so, now);
			if (err)
				return err;
		}
	}
}

int wks_accept(int lfd, double timeout)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int fd;

	if (poll(&p, 1, (int)(timeout * 1000)) <= 0)
		return -ETIMEDOUT;
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int wks_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -errno : 0;
}

int wks_stamped(int fd)
{
	int one = 1;

	return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ?
		       -errno : 0;
}

/* The arrival stamp recvmsg() put in m's control data, if any. */
static bool stamp_of(struct msghdr *m, uint64_t *at)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		struct timespec t;

		if (c->cmsg_level != SOL_SOCKET ||
		    c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&t, CMSG_DATA(c), sizeof(t));
		*at = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
		return true;
	}
	return false;
}

/* recvmsg() of iov[0..n) with room for the stamp; *at set when one came. */
static ssize_t recv_stamped(int fd, struct iovec *iov, int n, int flags,
			    uint64_t *at)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct timespec))];
	} ctl;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n,
			    .msg_control = ctl.b,
			    .msg_controllen = sizeof(ctl.b) };
	ssize_t k = recvmsg(fd, &m, flags);

	if (k > 0)
		stamp_of(&m, at);
	return k;
}

ssize_t wks_recv(int fd, struct iovec *iov, int n, uint64_t *at)
{
	return recv_stamped(fd, iov, n, 0, at);
}

/* One byte peeked, not read: TCP stamps it with its own segment's time. */
int wks_oldest(int fd, uint64_t *at)
{
	char one;
	struct iovec iov = { &one, 1 };
	uint64_t t = 0;
	ssize_t k = recv_stamped(fd, &iov, 1, MSG_PEEK | MSG_DONTWAIT, &t);

	if (k < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	if (k == 0 || !t)
		return 0;
	*at = t;
	return 1;
}

void wks_linger(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[256];

	for (;;) {
		ssize_t k;

		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		k = read(p.fd, buf, sizeof(buf));
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
			return;
	}
}

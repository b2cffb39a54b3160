/* SPDX-License-Identifier: MIT */
/*
 * The model worker's TCP sockets: to the worker port (WK_PORT) of each
 * peer, from the address the plan gives the transfer.
 */
#ifndef EMU_WKSOCK_H
#define EMU_WKSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WK_PORT 7347
#define WK_MAX_CHILDREN 64	/* a worker's peers in a tree, at most */

/*
 * wks_buffers - the socket buffers every later socket gets, set before
 * its handshake so the window scale allows them (0: the system's): the
 * window must never be what limits a transfer (the twin has no flow
 * control). Forced past rmem_max/wmem_max: workers run as root.
 */
void wks_buffers(size_t bytes);

/* wks_timeouts - send and receive time-outs of s seconds, and no Nagle. */
void wks_timeouts(int fd, double s);

/* wks_listen - a socket listening on addr's worker port, or -errno. */
int wks_listen(uint32_t addr);

/* wks_listen_buffered - as wks_listen, with buffers of bytes whatever
 * wks_buffers said (what its connections will have). */
int wks_listen_buffered(uint32_t addr, size_t bytes);

/* wks_accept - one connection on lfd within timeout s, or -errno. */
int wks_accept(int lfd, double timeout);

/* wks_nonblock - fd made non-blocking. 0 or -errno. */
int wks_nonblock(int fd);

/*
 * wks_stamped - what is read from fd carries the time its last segment
 * reached this namespace's stack (SCM_TIMESTAMPNS, CLOCK_REALTIME): how
 * late the reader got to it. 0 or -errno. The kernel turns its stamps on
 * a moment later (a deferred work, when no socket had them): data that
 * comes before carries none, and counts as on time.
 */
int wks_stamped(int fd);

/*
 * wks_oldest - when the oldest data waiting on a stamped fd reached this
 * namespace (CLOCK_REALTIME ns, in *at): 1; 0 if nothing waits or it has
 * no stamp; -errno. Nothing is read. TCP merges segments that arrive
 * behind unread ones into their buffer (up to some 17 frames) and gives
 * it the newest one's time: a lower bound on how long data has waited.
 */
int wks_oldest(int fd, uint64_t *at);

struct iovec;

/*
 * wks_recv - readv() of iov[0..n) from fd that also gives, in *at, when
 * the last segment it read reached this namespace (left as it was if the
 * fd is not stamped). What readv() returns, errno as it sets it.
 */
ssize_t wks_recv(int fd, struct iovec *iov, int n, uint64_t *at);

/* A connection being made: from src to dst's worker port. */
struct wks_dial {
	uint32_t src, dst;
	int fd;			/* -1 between attempts */
	bool done;
	uint64_t again;		/* the next attempt, CLOCK_MONOTONIC ns */
};

/*
 * wks_connect_all - make every connection of d[0..n) (n at most
 * WK_MAX_CHILDREN + 1) at once, each attempt that may do better later
 * made again 5 ms later, till timeout s. 0 with every d[i].fd connected
 * (blocking), or -errno with *bad the one that failed; what was made is
 * the caller's to close.
 */
int wks_connect_all(struct wks_dial *d, int n, double timeout, int *bad);

/*
 * wks_linger - after a worker's last round, stay until the fleet ends:
 * exiting (closing sockets, freeing memory) is host work that would fall
 * inside other tasks' last round. Returns when fd (the global model's go
 * pipe, a local one's broadcast parent's connection) ends or fails. The
 * harness ends whatever is left when it stops the fleet.
 */
void wks_linger(int fd);

#endif

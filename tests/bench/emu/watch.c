// SPDX-License-Identifier: MIT
/*
 * The teardown watcher; see watch.h. Watcher veths are made with emu/nl.c
 * (peer directly in the watched namespace, IFLA_NET_NS_FD); nsids, the
 * listener and the resync dumps use libmnl here.
 */
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>

#include "bench.h"
#include "census.h"
#include "emu/netns.h"
#include "emu/nl.h"

#define DUMP_BUF 32768		/* MNL_SOCKET_DUMP_SIZE of newer libmnl */

struct target {
	int nsid;
	char veth[IFNAMSIZ];	/* its watcher veth's end in W, or "" */
	int index;		/* ... and that end's ifindex */
	bool started, gone;
};

struct watch {
	char prefix[32];
	char wname[64];		/* W */
	struct nl *nl;		/* makes the watcher veths, from W */
	struct mnl_socket *ev;	/* RTNLGRP_NSID + RTNLGRP_LINK listener */
	struct mnl_socket *req;	/* nsid requests, resync dumps */
	uint32_t seq;
	int next_nsid;
	unsigned serial;
	int *fds;		/* dup'ed, for the veths, until armed */
	int nfds, capfds;
	struct target *t;
	int nt, capt, to_start, to_gone;
	char sentinel[64];
	int sentinel_nsid;
	bool sentinel_made, sentinel_dropped, sentinel_started;
	struct watch_times times;
	double t_drop, deadline;
	int resyncs, err;
	pthread_t th;
	bool running;
};

/* A libmnl socket in W. */
static struct mnl_socket *open_w(const char *wname)
{
	struct mnl_socket *s;
	int saved, err, rcv = 32 << 20;

	err = netns_enter(wname, &saved);
	if (err) {
		errno = -err;
		return NULL;
	}
	s = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	err = s ? 0 : errno;
	netns_leave(saved);
	if (!s) {
		errno = err;
		return NULL;
	}
	setsockopt(mnl_socket_get_fd(s), SOL_SOCKET, SO_RCVBUFFORCE, &rcv,
		   sizeof(rcv));
	if (mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = errno;
		mnl_socket_close(s);
		errno = err;
		return NULL;
	}
	return s;
}

static int join(struct mnl_socket *s, int group)
{
	return mnl_socket_setsockopt(s, NETLINK_ADD_MEMBERSHIP, &group,
				     sizeof(group)) < 0 ? -errno : 0;
}

struct watch *watch_new(const char *prefix)
{
	struct watch *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	snprintf(w->prefix, sizeof(w->prefix), "%s", prefix);
	snprintf(w->wname, sizeof(w->wname), "%s-w", prefix);
	w->next_nsid = 1;
	err = netns_add(w->wname, 0);
	if (err) {
		free(w);
		errno = -err;
		return NULL;
	}
	w->nl = nl_open(w->wname);
	if (w->nl)
		w->ev = open_w(w->wname);
	if (w->ev)
		w->req = open_w(w->wname);
	err = w->req ? join(w->ev, RTNLGRP_NSID) : -errno;
	if (!err)
		err = join(w->ev, RTNLGRP_LINK);
	if (err) {
		watch_free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

static void close_fds(struct watch *w)
{
	for (int i = 0; i < w->nfds; i++)
		close(w->fds[i]);
	w->nfds = 0;
}

void watch_free(struct watch *w)
{
	if (!w)
		return;
	if (w->running)
		pthread_join(w->th, NULL);
	close_fds(w);
	free(w->fds);
	free(w->t);
	if (w->sentinel_made && !w->sentinel_dropped)
		netns_del(w->sentinel);
	nl_close(w->nl);
	if (w->ev)
		mnl_socket_close(w->ev);
	if (w->req)
		mnl_socket_close(w->req);
	netns_del(w->wname);
	free(w);
}

/* Give the namespace open at nsfd the id `nsid` in W. 0 or -errno. */
static int set_nsid(struct watch *w, int nsfd, int nsid)
{
	char buf[8192] __attribute__((aligned(8)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtgenmsg *g;
	uint32_t seq = ++w->seq;
	ssize_t n;

	nlh->nlmsg_type = RTM_NEWNSID;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NETNSA_FD, (uint32_t)nsfd);
	mnl_attr_put_u32(nlh, NETNSA_NSID, (uint32_t)nsid);
	if (mnl_socket_sendto(w->req, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(w->req, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if (mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(w->req),
		       NULL, NULL) < 0)
		return -errno;
	return 0;
}

static int grow_targets(struct watch *w)
{
	struct target *n;
	int ncap;

	if (w->nt < w->capt)
		return 0;
	ncap = w->capt ? 2 * w->capt : 64;
	n = realloc(w->t, (size_t)ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	w->t = n;
	w->capt = ncap;
	return 0;
}

static int keep_fd(struct watch *w, int nsfd)
{
	int fd;

	if (w->nfds == w->capfds) {
		int ncap = w->capfds ? 2 * w->capfds : 64;
		int *n = realloc(w->fds, (size_t)ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		w->fds = n;
		w->capfds = ncap;
	}
	fd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	w->fds[w->nfds++] = fd;
	return fd;
}

int watch_add(struct watch *w, int nsfd, bool veth)
{
	struct target *t;
	int err = grow_targets(w), fd;

	if (err)
		return err;
	t = &w->t[w->nt];
	memset(t, 0, sizeof(*t));
	t->nsid = w->next_nsid++;
	/* the id first: a veth would make the kernel pick one itself */
	err = set_nsid(w, nsfd, t->nsid);
	if (err)
		return err;
	if (veth) {
		/* the fd must stay open until the batch is sent */
		fd = keep_fd(w, nsfd);
		if (fd < 0)
			return fd;
		snprintf(t->veth, sizeof(t->veth), "w%u", w->serial++);
		err = nl_veth(w->nl, t->veth, 0, CENSUS_WATCH_IF, 0, fd);
		if (err)
			return err;
	}
	w->nt++;
	return 0;
}

/* ---- dumps in W (veth ifindices, resync) ------------------------------ */

struct dump_ctx {
	struct watch *w;
	bool *seen;		/* per target: its veth / its nsid is there */
	bool sentinel_seen;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *c = data;
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	const char *name = NULL;

	mnl_attr_for_each(a, nlh, sizeof(*ifm))
		if (mnl_attr_get_type(a) == IFLA_IFNAME &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			name = mnl_attr_get_str(a);
	for (int i = 0; name && i < c->w->nt; i++)
		if (!strcmp(name, c->w->t[i].veth)) {
			c->w->t[i].index = ifm->ifi_index;
			if (c->seen)
				c->seen[i] = true;
		}
	return MNL_CB_OK;
}

static int nsid_of(const struct nlmsghdr *nlh)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct rtgenmsg))
		if (mnl_attr_get_type(a) == NETNSA_NSID &&
		    mnl_attr_get_payload_len(a) >= 4)
			return (int)mnl_attr_get_u32(a);
	return -1;
}

static int nsid_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *c = data;
	int id = nsid_of(nlh);

	if (id == c->w->sentinel_nsid)
		c->sentinel_seen = true;
	for (int i = 0; id >= 0 && i < c->w->nt; i++)
		if (c->w->t[i].nsid == id)
			c->seen[i] = true;
	return MNL_CB_OK;
}

static int dump(struct watch *w, uint16_t type, mnl_cb_t cb,
		struct dump_ctx *c)
{
	char buf[DUMP_BUF] __attribute__((aligned(8)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	uint32_t seq = ++w->seq, portid = mnl_socket_get_portid(w->req);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	/* zeroed: family AF_UNSPEC */
	mnl_nlmsg_put_extra_header(nlh, type == RTM_GETLINK ?
				   sizeof(struct ifinfomsg) :
				   sizeof(struct rtgenmsg));
	if (mnl_socket_sendto(w->req, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(w->req, buf, sizeof(buf));
		int ret;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, c);
		if (ret < 0)
			return -errno;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

/* ---- the listener ------------------------------------------------------ */

static void drop_sentinel(struct watch *w)
{
	int err;

	w->t_drop = now_s();
	err = netns_del(w->sentinel);
	w->sentinel_dropped = true;
	if (err && !w->err)
		w->err = err;
}

static void started(struct watch *w, struct target *t, double now)
{
	if (t->started)
		return;
	t->started = true;
	if (--w->to_start == 0) {
		w->times.start = now;
		drop_sentinel(w);
	}
}

static void gone(struct watch *w, struct target *t, double now)
{
	if (t->gone || !t->veth[0])
		return;
	t->gone = true;
	if (--w->to_gone == 0)
		w->times.gone = now;
}

static void on_delnsid(struct watch *w, int id, double now)
{
	if (id == w->sentinel_nsid && w->sentinel_dropped) {
		w->sentinel_started = true;
		w->times.done = now;
		return;
	}
	for (int i = 0; i < w->nt; i++)
		if (w->t[i].nsid == id)
			started(w, &w->t[i], now);
}

static void on_dellink(struct watch *w, int index, double now)
{
	for (int i = 0; i < w->nt; i++)
		if (w->t[i].veth[0] && w->t[i].index == index)
			gone(w, &w->t[i], now);
}

/* Events were lost (ENOBUFS): whatever a dump no longer shows is gone. */
static void resync(struct watch *w, double now)
{
	struct dump_ctx c = { .w = w };
	int err;

	w->resyncs++;
	c.seen = calloc((size_t)w->nt + 1, sizeof(*c.seen));
	if (!c.seen) {
		w->err = -ENOMEM;
		return;
	}
	err = dump(w, RTM_GETNSID, nsid_cb, &c);
	for (int i = 0; !err && i < w->nt; i++)
		if (!c.seen[i])
			started(w, &w->t[i], now);
	if (!err && w->sentinel_dropped && !c.sentinel_seen)
		on_delnsid(w, w->sentinel_nsid, now);
	memset(c.seen, 0, (size_t)w->nt * sizeof(*c.seen));
	if (!err)
		err = dump(w, RTM_GETLINK, link_cb, &c);
	for (int i = 0; !err && i < w->nt; i++)
		if (!c.seen[i])
			gone(w, &w->t[i], now);
	if (err)
		w->err = err;
	free(c.seen);
}

static void *listen_thread(void *arg)
{
	struct watch *w = arg;
	char buf[64 * 1024] __attribute__((aligned(8)));
	struct pollfd pfd = {
		.fd = mnl_socket_get_fd(w->ev), .events = POLLIN,
	};

	if (w->to_start == 0)
		drop_sentinel(w);
	while (!w->err && (!w->sentinel_started || w->to_gone > 0)) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		ssize_t n;
		double now;

		if (bench_stop) {
			w->err = -EINTR;
			break;
		}
		if (now_s() > w->deadline) {
			w->err = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = recv(pfd.fd, buf, sizeof(buf), MSG_DONTWAIT);
		now = now_s();
		if (n < 0) {
			if (errno == ENOBUFS)
				resync(w, now);
			else if (errno != EAGAIN && errno != EINTR)
				w->err = -errno;
			continue;
		}
		for (int len = (int)n; mnl_nlmsg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_type == RTM_DELNSID) {
				on_delnsid(w, nsid_of(nlh), now);
			} else if (nlh->nlmsg_type == RTM_DELLINK) {
				const struct ifinfomsg *ifm =
					mnl_nlmsg_get_payload(nlh);

				on_dellink(w, ifm->ifi_index, now);
			}
		}
	}
	return NULL;
}

/* Read and forget the listener's queued events (the creations). */
static void drain(struct watch *w)
{
	char buf[64 * 1024];

	while (recv(mnl_socket_get_fd(w->ev), buf, sizeof(buf),
		    MSG_DONTWAIT) > 0 || errno == ENOBUFS)
		;
}

static int make_sentinel(struct watch *w)
{
	int fd, err;

	snprintf(w->sentinel, sizeof(w->sentinel), "%s-s%d", w->prefix,
		 w->next_nsid);
	err = netns_add(w->sentinel, 0);
	if (err)
		return err;
	w->sentinel_made = true;
	w->sentinel_dropped = false;
	w->sentinel_started = false;
	fd = netns_open(w->sentinel);
	if (fd < 0)
		return fd;
	w->sentinel_nsid = w->next_nsid++;
	err = set_nsid(w, fd, w->sentinel_nsid);
	close(fd);
	return err;
}

int watch_arm(struct watch *w, double timeout_s)
{
	struct dump_ctx c = { .w = w };
	int err;

	err = nl_commit(w->nl);
	close_fds(w);
	if (!err)
		err = make_sentinel(w);
	if (!err)
		err = dump(w, RTM_GETLINK, link_cb, &c);
	if (err)
		return err;
	w->to_start = w->nt;
	w->to_gone = 0;
	for (int i = 0; i < w->nt; i++) {
		if (!w->t[i].veth[0])
			continue;
		if (!w->t[i].index)
			return -ENODEV;
		w->to_gone++;
	}
	drain(w);
	w->err = 0;
	w->resyncs = 0;
	memset(&w->times, 0, sizeof(w->times));
	w->t_drop = 0;
	w->deadline = now_s() + timeout_s;
	err = pthread_create(&w->th, NULL, listen_thread, w);
	if (err)
		return -err;
	w->running = true;
	return 0;
}

int watch_wait(struct watch *w, struct watch_times *t)
{
	int err;

	if (!w->running)
		return -EINVAL;
	pthread_join(w->th, NULL);
	w->running = false;
	err = w->err;
	*t = w->times;
	/* ready for the next round */
	w->nt = 0;
	if (!w->sentinel_dropped)
		drop_sentinel(w);
	w->sentinel_made = false;
	return err;
}

int watch_resyncs(const struct watch *w)
{
	return w->resyncs;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double watch_empty_ns(struct watch *w, int reps)
{
	struct watch_times t;
	double v[32];
	int n = 0;

	if (reps > 32)
		reps = 32;
	for (int i = 0; i < reps && !bench_stop; i++) {
		/* nothing watched: the thread drops the sentinel at once */
		int err = watch_arm(w, 30);

		if (!err)
			err = watch_wait(w, &t);
		if (err)
			return err;
		v[n++] = t.done - w->t_drop;
		usleep(20 * 1000);
	}
	if (n == 0)
		return -EINTR;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// SPDX-License-Identifier: MIT
/*
 * The delay line: an NFQUEUE consumer that holds each packet's verdict for
 * its queue's delay. See delayline.h for the contract.
 *
 * Shape of the loop. Every queue has a constant delay, so the order packets
 * arrive in is the order their deadlines fall in: a queue is a FIFO ring of
 * (packet id, deadline). A binary min-heap orders the non-empty queues by
 * the deadline at their head, and one timerfd (CLOCK_MONOTONIC, absolute)
 * is armed a little ahead of the heap's top (see dl_loop). When a deadline
 * comes, every expired packet of a queue is accepted with a single
 * NFQNL_MSG_VERDICT_BATCH naming the last expired id (the kernel accepts
 * every id up to it in that queue), and the verdicts of all queues of one
 * namespace leave in one sendmsg. Reads use recvmmsg, so one wakeup takes
 * dozens of packet messages. A deadline counts from the kernel's receive
 * stamp of the packet (see dl_arrival), not from when we read it.
 *
 * The kernel holds the packets; a ring slot is 16 bytes. A ring is as long
 * as the kernel queue (queue_maxlen), which bounds what can be held, so it
 * never overflows while the kernel honours its own limit.
 *
 * This module speaks nfnetlink_queue through libmnl directly: the
 * project's netlink wrapper covers rtnetlink, and nfnetlink_queue is a
 * protocol of its own. The rules that feed the queues are nfqrule.h's,
 * the probe of whether NFQUEUE works here is probe.h's.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "atomic_max.h"
#include "delayline.h"
#include "netns.h"
#include "twin/grow.h"

#define DL_RECV_BATCH	64		/* datagrams per recvmmsg() */
#define DL_RECV_BUFSZ	4096		/* a packet message is ~150 bytes */
#define DL_RECV_ROUNDS	8		/* recvmmsg() calls per wakeup */
#define DL_SEND_LIMIT	8192		/* bytes of verdicts per sendmsg() */
#define DL_POLL_MS	50		/* how often *stop is looked at */
#define DL_BIND_MS	5000		/* wait for the kernel to bind */
#define DL_RCVBUF_MIN	(8 << 20)
#define DL_RCVBUF_MAX	(256 << 20)
#define DL_RCVBUF_PER	1024		/* truesize of one packet message */
#define DL_SEND_TRIES	5
#define DL_DELAY_MAX	(3600ull * 1000000000u)	/* an hour */
#define DL_EARLY_MAX	500000		/* most the timer is set ahead, ns */
#define DL_CALIBRATE	9		/* sleeps to guess the wakeup latency */
#define DL_SPIN_LEAD	300000		/* spin this long before a deadline */
#define DL_SPIN_WINDOW	100000000	/* ... for at most DL_SPIN_BUDGET */
#define DL_SPIN_BUDGET	10000000	/* ... of every DL_SPIN_WINDOW (10 %) */

#define DL_TAG_TIMER	0
#define DL_TAG_SIGNAL	1
#define DL_TAG_NS	2

#define DL_MSG_PACKET	((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET)

/* The two clocks read at one moment: packet stamps are realtime. */
struct dl_time {
	uint64_t mono, real;
};

struct dl_slot {
	uint64_t deadline;
	uint32_t id;
};

struct dl_ns;

/* One queue while it runs. */
struct dl_q {
	const struct dl_queue *cfg;
	struct dl_ns *ns;
	uint32_t maxlen;
	struct dl_slot *ring;
	uint32_t head, len;	/* ring has maxlen slots */
	uint64_t last_deadline;	/* of the newest packet held */
	int heap_idx;		/* -1 while empty */
	bool awaiting_ack;	/* bind sent, no answer yet */
	bool bound;
	int err;		/* the kernel's answer to the bind */
};

/* One namespace: its socket and the verdicts queued for it. */
struct dl_ns {
	const char *name;
	struct mnl_socket *nl;
	struct dl_q **qs;	/* sorted by queue number */
	int nq;
	uint64_t rcvbuf;
	char *sbuf;
	struct mnl_nlmsg_batch *batch;
};

struct delayline {
	struct dl_q *q;
	int nq;
	struct dl_ns *ns;
	int nns;
	struct dl_q **heap;
	int nheap;
	uint64_t held;
	size_t locked;		/* bytes of its buffers locked (dl_resident) */
	int epfd, tfd, sfd, stampfd;
	uint64_t armed;		/* when the timer is set to fire, 0: none */
	uint64_t early;		/* how late timer wakeups run (median), ns */
	uint64_t spin_window;	/* start of the current spin budget window */
	uint64_t spin_used;	/* ns spent spinning in it */
	sigset_t oldmask;
	bool masked;
	bool quit;
	char *rbuf;
	struct iovec *iov;
	struct mmsghdr *msgs;
	struct dl_stats st;
	struct dl_live *live;	/* the watcher's counters, or NULL */
};

static uint64_t dl_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t dl_now(void)
{
	return dl_clock(CLOCK_MONOTONIC);
}

uint32_t dl_queue_maxlen(uint64_t rate_bps, uint64_t delay_ns)
{
	double pkts = (double)rate_bps * (double)delay_ns / 1e9 / (8.0 * 1500);
	double len = 2 * ceil(pkts);

	if (len < DL_MAXLEN_MIN)
		return DL_MAXLEN_MIN;
	if (len > (double)(UINT32_MAX / 2))
		return UINT32_MAX / 2;
	return (uint32_t)len;
}

/* --- the heap of non-empty queues, keyed by the deadline at their head --- */

static uint64_t dl_q_head(const struct dl_q *q)
{
	return q->ring[q->head].deadline;
}

static void dl_heap_set(struct delayline *dl, int i, struct dl_q *q)
{
	dl->heap[i] = q;
	q->heap_idx = i;
}

static void dl_heap_up(struct delayline *dl, int i)
{
	struct dl_q *q = dl->heap[i];

	while (i > 0) {
		int parent = (i - 1) / 2;

		if (dl_q_head(dl->heap[parent]) <= dl_q_head(q))
			break;
		dl_heap_set(dl, i, dl->heap[parent]);
		i = parent;
	}
	dl_heap_set(dl, i, q);
}

static void dl_heap_down(struct delayline *dl, int i)
{
	struct dl_q *q = dl->heap[i];

	for (;;) {
		int c = 2 * i + 1;

		if (c >= dl->nheap)
			break;
		if (c + 1 < dl->nheap &&
		    dl_q_head(dl->heap[c + 1]) < dl_q_head(dl->heap[c]))
			c++;
		if (dl_q_head(q) <= dl_q_head(dl->heap[c]))
			break;
		dl_heap_set(dl, i, dl->heap[c]);
		i = c;
	}
	dl_heap_set(dl, i, q);
}

static void dl_heap_push(struct delayline *dl, struct dl_q *q)
{
	dl->heap[dl->nheap] = q;
	dl_heap_up(dl, dl->nheap++);
}

static void dl_heap_pop(struct delayline *dl)
{
	dl->heap[0]->heap_idx = -1;
	if (--dl->nheap > 0) {
		dl->heap[0] = dl->heap[dl->nheap];
		dl_heap_down(dl, 0);
	}
}

/* --- sending: verdicts and configuration, batched per namespace --- */

static int dl_ns_send(struct delayline *dl, struct dl_ns *ns)
{
	size_t len = mnl_nlmsg_batch_size(ns->batch);
	int tries = 0;

	if (len == 0)
		return 0;
	while (mnl_socket_sendto(ns->nl, mnl_nlmsg_batch_head(ns->batch),
				 len) < 0) {
		if (errno == EINTR)
			continue;
		/* the kernel could not allocate: give it a moment */
		if ((errno == ENOBUFS || errno == ENOMEM || errno == EAGAIN) &&
		    ++tries < DL_SEND_TRIES) {
			struct timespec ts = { 0, 100000 };

			nanosleep(&ts, NULL);
			continue;
		}
		return -errno;
	}
	dl->st.sends++;
	mnl_nlmsg_batch_reset(ns->batch);
	return 0;
}

/* Close the message just built; send the batch first if it is full. */
static int dl_ns_next(struct delayline *dl, struct dl_ns *ns)
{
	if (mnl_nlmsg_batch_next(ns->batch))
		return 0;
	return dl_ns_send(dl, ns);
}

static int dl_ns_verdict(struct delayline *dl, struct dl_ns *ns, int type,
			 uint16_t num, uint32_t id)
{
	struct nlmsghdr *nlh;

	nlh = nfq_nlmsg_put(mnl_nlmsg_batch_current(ns->batch), type, num);
	nfq_nlmsg_verdict_put(nlh, (int)id, NF_ACCEPT);
	dl->st.verdict_msgs++;
	return dl_ns_next(dl, ns);
}

static int dl_send_all(struct delayline *dl)
{
	int err = 0;

	for (int i = 0; i < dl->nns; i++) {
		int e = dl->ns[i].nl ? dl_ns_send(dl, &dl->ns[i]) : 0;

		if (e && !err)
			err = e;
	}
	return err;
}

/*
 * Bind (or, at stop, open up) one queue. Bind, copy mode, length and flags
 * travel in one message: a bound queue in the default copy mode (NONE)
 * drops what reaches it, so there must be no moment between bind and mode.
 */
static int dl_q_config(struct delayline *dl, struct dl_q *q, bool bind)
{
	struct nlmsghdr *nlh;
	uint32_t flags, mask;

	nlh = nfq_nlmsg_put(mnl_nlmsg_batch_current(q->ns->batch),
			    NFQNL_MSG_CONFIG, q->cfg->num);
	if (bind) {
		nlh->nlmsg_flags |= NLM_F_ACK;
		nlh->nlmsg_seq = (uint32_t)(q - dl->q) + 1;
		nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
		nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_META, 0);
		nfq_nlmsg_cfg_put_qmaxlen(nlh, q->maxlen);
		mask = NFQA_CFG_F_GSO | NFQA_CFG_F_FAIL_OPEN;
		flags = q->cfg->flags & DL_QUEUE_NO_GSO ? 0 : NFQA_CFG_F_GSO;
		q->awaiting_ack = true;
	} else {
		/*
		 * Length 0 with fail-open: from now on every new packet is
		 * accepted on the spot, so after one more read the socket
		 * holds every packet the kernel still keeps for us.
		 */
		nfq_nlmsg_cfg_put_qmaxlen(nlh, 0);
		mask = NFQA_CFG_F_FAIL_OPEN;
		flags = NFQA_CFG_F_FAIL_OPEN;
	}
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(flags));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(mask));
	return dl_ns_next(dl, q->ns);
}

/* --- receiving --- */

static struct dl_q *dl_ns_lookup(const struct dl_ns *ns, uint16_t num)
{
	int lo = 0, hi = ns->nq - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		uint16_t n = ns->qs[mid]->cfg->num;

		if (n == num)
			return ns->qs[mid];
		if (n < num)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* Hold packet id, which reached the hop at arrival (monotonic ns). */
static int dl_hold(struct delayline *dl, struct dl_q *q, uint32_t id,
		   uint64_t arrival, uint64_t delay)
{
	uint64_t deadline = arrival + delay;
	uint32_t tail;

	if (q->len == q->maxlen) {
		dl->st.overflow++;
		return dl_ns_verdict(dl, q->ns, NFQNL_MSG_VERDICT,
				     q->cfg->num, id);
	}
	tail = q->head + q->len;
	if (tail >= q->maxlen)
		tail -= q->maxlen;
	/*
	 * Keep the ring in deadline order even if arrival stamps taken on
	 * two CPUs come slightly out of order: verdicts go in id order.
	 */
	if (q->len > 0 && deadline < q->last_deadline)
		deadline = q->last_deadline;
	q->last_deadline = deadline;
	q->ring[tail].deadline = deadline;
	q->ring[tail].id = id;
	if (q->len++ == 0)
		dl_heap_push(dl, q);
	if (++dl->held > dl->st.held_max)
		dl->st.held_max = dl->held;
	return 0;
}

/*
 * When the packet reached this hop. With receive timestamps switched on
 * (see dl_stamp_on), the kernel stamps every packet as it enters the
 * namespace from a veth (realtime clock, in microseconds) and reports the
 * stamp with it: that removes from the delay the time the packet spent
 * before we read it, which on a VM whose idle vCPUs halt is 5-400 us. A
 * stamp that is not plausible (another clock, or older than a second) is
 * ignored in favour of the time we read it. Rounding goes the late way:
 * a packet must never leave before its time.
 */
static uint64_t dl_arrival(struct delayline *dl, const struct nlattr *attr,
			   const struct dl_time *now)
{
	struct nfqnl_msg_packet_timestamp ts;
	uint64_t stamp, ago;

	if (!attr || mnl_attr_get_payload_len(attr) < sizeof(ts))
		return now->mono;
	/* attributes are 4-byte aligned, the struct's fields 8 */
	memcpy(&ts, mnl_attr_get_payload(attr), sizeof(ts));
	/* the stamp is cut to the microsecond: take the end of it */
	stamp = be64toh(ts.sec) * 1000000000u + be64toh(ts.usec) * 1000u +
		999u;
	if (stamp > now->real)
		return now->mono;
	ago = now->real - stamp;
	if (ago > 1000000000u)
		return now->mono;
	dl->st.stamped++;
	dl->st.stamp_age_ns_sum += ago;
	return now->mono - ago;
}

static int dl_packet(struct delayline *dl, struct dl_ns *ns,
		     const struct nlmsghdr *nlh, const struct dl_time *now)
{
	struct nlattr *attr[NFQA_MAX + 1] = { NULL };
	const struct nfqnl_msg_packet_hdr *ph;
	const struct nfgenmsg *nfg;
	uint16_t num;
	struct dl_q *q;
	uint64_t arrival;
	uint32_t id;

	if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR]) {
		dl->st.nl_errors++;
		dl->st.last_error = -EBADMSG;
		return 0;
	}
	nfg = mnl_nlmsg_get_payload(nlh);
	num = ntohs(nfg->res_id);
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	id = ntohl(ph->packet_id);
	dl->st.packets++;
	if (attr[NFQA_SKB_INFO] &&
	    ntohl(mnl_attr_get_u32(attr[NFQA_SKB_INFO])) & NFQA_SKB_GSO)
		dl->st.gso_packets++;
	q = dl_ns_lookup(ns, num);
	if (!q) /* not ours: cannot happen, but never strand a packet */
		return dl_ns_verdict(dl, ns, NFQNL_MSG_VERDICT, num, id);
	arrival = dl_arrival(dl, attr[NFQA_TIMESTAMP], now);
	/* in the watcher's window (before any round): at once, in order */
	if (dl->live &&
	    arrival < atomic_load_explicit(&dl->live->pass_until,
					   memory_order_relaxed)) {
		dl->st.passed++;
		atomic_fetch_add_explicit(&dl->live->passed, 1,
					  memory_order_relaxed);
		return dl_hold(dl, q, id, arrival, 0);
	}
	return dl_hold(dl, q, id, arrival, q->cfg->delay_ns);
}

static void dl_nlerr(struct delayline *dl, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	uint32_t seq = nlh->nlmsg_seq;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return;
	if (seq >= 1 && seq <= (uint32_t)dl->nq &&
	    dl->q[seq - 1].awaiting_ack) {
		struct dl_q *q = &dl->q[seq - 1];

		q->awaiting_ack = false;
		q->err = e->error;
		q->bound = e->error == 0;
		return;
	}
	if (e->error) {
		dl->st.nl_errors++;
		dl->st.last_error = e->error;
	}
}

static int dl_parse(struct delayline *dl, struct dl_ns *ns, const void *buf,
		    int len, const struct dl_time *now)
{
	const struct nlmsghdr *nlh = buf;

	for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
		int err;

		if (nlh->nlmsg_type == NLMSG_ERROR) {
			dl_nlerr(dl, nlh);
			continue;
		}
		if (nlh->nlmsg_type != DL_MSG_PACKET)
			continue;
		err = dl_packet(dl, ns, nlh, now);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Read what the namespace's socket holds, at most rounds batches (so that
 * a flood cannot starve the release of expired packets). Every datagram of
 * one batch gets the same arrival time.
 */
static int dl_ns_recv(struct delayline *dl, struct dl_ns *ns, int rounds)
{
	int fd = mnl_socket_get_fd(ns->nl);

	for (int r = 0; r < rounds; r++) {
		struct dl_time now;
		int n;

		n = recvmmsg(fd, dl->msgs, DL_RECV_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			/*
			 * The socket overran: the kernel dropped the packets
			 * it could not report (they were never queued).
			 */
			if (errno == ENOBUFS) {
				dl->st.enobufs++;
				continue;
			}
			return -errno;
		}
		/* realtime first: an arrival can only come out late */
		now.real = dl_clock(CLOCK_REALTIME);
		now.mono = dl_now();
		for (int i = 0; i < n; i++) {
			int err;

			if (dl->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				dl->st.nl_errors++;
				dl->st.last_error = -EMSGSIZE;
				continue;
			}
			err = dl_parse(dl, ns, dl->iov[i].iov_base,
				       (int)dl->msgs[i].msg_len, &now);
			if (err)
				return err;
		}
		if (n < DL_RECV_BATCH)
			return 0;
	}
	return 0;
}

/* --- releasing --- */

/* Tell the watcher (if any) what one batch of verdicts did. */
static void dl_publish(struct dl_live *live, uint64_t n, uint64_t late_sum,
		       uint64_t late_max, const uint32_t bins[DL_LATE_BINS])
{
	if (!live || !n)
		return;
	atomic_fetch_add_explicit(&live->accepted, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&live->late_ns_sum, late_sum,
				  memory_order_relaxed);
	atomic_max_u64(&live->late_ns_max, late_max);
	for (int k = 0; k < DL_LATE_BINS; k++)
		if (bins[k])
			atomic_fetch_add_explicit(&live->late_bins[k], bins[k],
						  memory_order_relaxed);
}

/* Accept every packet whose deadline has come: never one before it. */
static int dl_release(struct delayline *dl, uint64_t now)
{
	uint64_t n0 = dl->st.accepted, sum0 = dl->st.late_ns_sum, max = 0;
	uint32_t bins[DL_LATE_BINS] = { 0 };
	int err = 0;

	while (dl->nheap > 0 && dl_q_head(dl->heap[0]) <= now) {
		struct dl_q *q = dl->heap[0];
		uint32_t last = 0;

		while (q->len > 0) {
			const struct dl_slot *s = &q->ring[q->head];
			uint64_t late;
			int k;

			if (s->deadline > now)
				break;
			late = now - s->deadline;
			dl->st.late_ns_sum += late;
			if (late > max)
				max = late;
			k = dl_late_bin(late);
			if (k >= 0)
				bins[k]++;
			if (late > dl->st.late_ns_max)
				dl->st.late_ns_max = late;
			last = s->id;
			if (++q->head == q->maxlen)
				q->head = 0;
			q->len--;
			dl->held--;
			dl->st.accepted++;
		}
		if (q->len > 0)
			dl_heap_down(dl, 0);
		else
			dl_heap_pop(dl);
		err = dl_ns_verdict(dl, q->ns, NFQNL_MSG_VERDICT_BATCH,
				    q->cfg->num, last);
		if (err)
			break;
	}
	if (!err)
		err = dl_send_all(dl);
	dl_publish(dl->live, dl->st.accepted - n0, dl->st.late_ns_sum - sum0,
		   max, bins);
	return err;
}

/* Set the timer to fire at `at`, unless it already fires before. */
static int dl_arm(struct delayline *dl, uint64_t at)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (dl->armed && dl->armed <= at)
		return 0;
	its.it_value.tv_sec = (time_t)(at / 1000000000u);
	its.it_value.tv_nsec = (long)(at % 1000000000u);
	if (timerfd_settime(dl->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	dl->armed = at;
	return 0;
}

/* May we spin now? At most DL_SPIN_BUDGET of every DL_SPIN_WINDOW. */
static bool dl_spin_ok(struct delayline *dl, uint64_t now)
{
	if (now - dl->spin_window >= DL_SPIN_WINDOW) {
		dl->spin_window = now;
		dl->spin_used = 0;
	}
	return dl->spin_used < DL_SPIN_BUDGET;
}

/* --- set-up and tear-down --- */

struct dl_sock_arg {
	int nsfd;
	int fd;
	int err;
};

static void *dl_sock_thread(void *arg)
{
	struct dl_sock_arg *a = arg;

	/* setns() moves only this thread; it ends right after */
	if (setns(a->nsfd, CLONE_NEWNET) < 0) {
		a->err = -errno;
		return NULL;
	}
	a->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
		       NETLINK_NETFILTER);
	if (a->fd < 0)
		a->err = -errno;
	return NULL;
}

/* A netfilter netlink socket that lives in namespace name. */
static int dl_socket_in(const char *name, int *fd)
{
	struct dl_sock_arg a = { .fd = -1 };
	pthread_t th;
	int err;

	a.nsfd = netns_open(name);
	if (a.nsfd < 0)
		return a.nsfd;
	err = -pthread_create(&th, NULL, dl_sock_thread, &a);
	if (err)
		goto close_nsfd;
	pthread_join(th, NULL);
	err = a.err;
	*fd = a.fd;
close_nsfd:
	close(a.nsfd);
	return err;
}

static int dl_ns_open(struct delayline *dl, struct dl_ns *ns, int idx)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = -1, one = 1, rcvbuf;
	int err;

	err = dl_socket_in(ns->name, &fd);
	if (err)
		return err;
	ns->nl = mnl_socket_fdopen(fd);
	if (!ns->nl) {
		err = -errno;
		close(fd);
		return err;
	}
	if (mnl_socket_bind(ns->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	/*
	 * Room for every message the kernel may owe us at once (one per
	 * packet it holds); SO_RCVBUF alone is capped by rmem_max.
	 */
	rcvbuf = (int)(ns->rcvbuf < DL_RCVBUF_MIN ? DL_RCVBUF_MIN :
		       ns->rcvbuf > DL_RCVBUF_MAX ? DL_RCVBUF_MAX : ns->rcvbuf);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* errors need not echo our request */
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	ev.data.u64 = DL_TAG_NS + (uint64_t)idx;
	if (epoll_ctl(dl->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	return 0;
}

/*
 * The timer fired. If it woke us from sleep (learn is true), learn how
 * late: dl->early follows the median of that latency (a step toward each
 * sample), not its mean, which the long tail (host preemption, ms) would
 * pull.
 */
static void dl_woken(struct delayline *dl, bool learn)
{
	uint64_t late = dl_now() - dl->armed;
	uint64_t step = 2000 + dl->early / 32;

	dl->st.wakeups++;
	if (!dl->armed || !learn) {
		dl->armed = 0;
		return;
	}
	if (late > dl->early)
		dl->early += step;
	else
		dl->early = dl->early > step ? dl->early - step : 0;
	if (dl->early > DL_EARLY_MAX)
		dl->early = DL_EARLY_MAX;
	dl->armed = 0;
}

static int dl_median_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* A first guess of the wakeup latency: the median of a few short sleeps. */
static int dl_calibrate(struct delayline *dl)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	struct pollfd pfd = { .fd = dl->tfd, .events = POLLIN };
	uint64_t late[DL_CALIBRATE];

	for (int i = 0; i < DL_CALIBRATE; i++) {
		uint64_t at = dl_now() + 200000, ticks;

		its.it_value.tv_sec = (time_t)(at / 1000000000u);
		its.it_value.tv_nsec = (long)(at % 1000000000u);
		if (timerfd_settime(dl->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
			return -errno;
		while (poll(&pfd, 1, 100) < 0 && errno == EINTR)
			;
		if (read(dl->tfd, &ticks, sizeof(ticks)) < 0 &&
		    errno != EAGAIN)
			return -errno;
		late[i] = dl_now() - at;
	}
	qsort(late, DL_CALIBRATE, sizeof(late[0]), dl_median_cmp);
	dl->early = late[DL_CALIBRATE / 2];
	if (dl->early > DL_EARLY_MAX)
		dl->early = DL_EARLY_MAX;
	return 0;
}

/*
 * Have the kernel stamp received packets, so that packet messages carry
 * when the packet arrived (NFQA_TIMESTAMP). The switch is one global
 * static key (netstamp_needed), on while any socket asks for receive
 * timestamps: this socket asks for as long as the delay line runs.
 */
static void dl_stamp_on(struct delayline *dl)
{
	int one = 1;

	dl->stampfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (dl->stampfd < 0)
		return;
	setsockopt(dl->stampfd, SOL_SOCKET, SO_TIMESTAMPNS, &one,
		   sizeof(one));
}

static int dl_q_cmp(const void *a, const void *b)
{
	const struct dl_q *x = *(struct dl_q *const *)a;
	const struct dl_q *y = *(struct dl_q *const *)b;

	return (int)x->cfg->num - (int)y->cfg->num;
}

static void dl_release_all(struct delayline *dl)
{
	for (int i = 0; i < dl->nns; i++) {
		if (dl->ns[i].nl)
			mnl_socket_close(dl->ns[i].nl);
		free(dl->ns[i].qs);
		if (dl->ns[i].batch)
			mnl_nlmsg_batch_stop(dl->ns[i].batch);
		free(dl->ns[i].sbuf);
	}
	free(dl->ns);
	for (int i = 0; i < dl->nq; i++)
		free(dl->q[i].ring);
	FREE_ALL(dl->q, dl->heap, dl->rbuf, dl->iov, dl->msgs);
	if (dl->sfd >= 0)
		close(dl->sfd);
	if (dl->masked)
		pthread_sigmask(SIG_SETMASK, &dl->oldmask, NULL);
	if (dl->tfd >= 0)
		close(dl->tfd);
	if (dl->stampfd >= 0)
		close(dl->stampfd);
	if (dl->epfd >= 0)
		close(dl->epfd);
}

/*
 * Resident and locked, as real-time memory wants to be: a page the line
 * touched first in a round (a queue's ring filling up, a larger batch)
 * cost a trap, 10-16 us on a paravirtualised host, while packets waited.
 * Only its own buffers (the whole address space would lock a sanitizer's
 * shadow too), DL_LOCK_MAX of them at most (long fast links have rings of
 * megabytes); refused (a memlock limit), they fault as before.
 */
#define DL_LOCK_MAX (64u << 20)

static void *dl_resident(struct delayline *dl, void *p, size_t len)
{
	if (p && len <= DL_LOCK_MAX - dl->locked && !mlock(p, len))
		dl->locked += len;
	return p;
}

static int dl_group(struct delayline *dl, const struct dl_queue *cfg, int n)
{
	dl->q = calloc((size_t)n, sizeof(*dl->q));
	dl->ns = calloc((size_t)n, sizeof(*dl->ns));
	dl->heap = dl_resident(dl, calloc((size_t)n, sizeof(*dl->heap)),
			       (size_t)n * sizeof(*dl->heap));
	if (!dl->q || !dl->ns || !dl->heap)
		return -ENOMEM;
	dl->nq = n;
	for (int i = 0; i < n; i++) {
		struct dl_q *q = &dl->q[i];
		struct dl_ns *ns = NULL;

		if (!netns_name_ok(cfg[i].netns) ||
		    cfg[i].delay_ns > DL_DELAY_MAX)
			return -EINVAL;
		q->cfg = &cfg[i];
		q->heap_idx = -1;
		q->maxlen = cfg[i].maxlen ? cfg[i].maxlen : DL_MAXLEN_MIN;
		q->ring = dl_resident(dl, calloc(q->maxlen, sizeof(*q->ring)),
				      q->maxlen * sizeof(*q->ring));
		if (!q->ring)
			return -ENOMEM;
		for (int j = 0; j < dl->nns && !ns; j++)
			if (!strcmp(dl->ns[j].name, cfg[i].netns))
				ns = &dl->ns[j];
		if (!ns) {
			ns = &dl->ns[dl->nns++];
			ns->name = cfg[i].netns;
		}
		q->ns = ns;
		ns->nq++;
		ns->rcvbuf += (uint64_t)q->maxlen * DL_RCVBUF_PER;
	}
	for (int j = 0; j < dl->nns; j++) {
		struct dl_ns *ns = &dl->ns[j];
		int k = 0;

		ns->qs = calloc((size_t)ns->nq, sizeof(*ns->qs));
		ns->sbuf = dl_resident(dl, malloc(2 * DL_SEND_LIMIT),
				       2 * DL_SEND_LIMIT);
		if (!ns->qs || !ns->sbuf)
			return -ENOMEM;
		ns->batch = mnl_nlmsg_batch_start(ns->sbuf, DL_SEND_LIMIT);
		if (!ns->batch)
			return -ENOMEM;
		for (int i = 0; i < n; i++)
			if (dl->q[i].ns == ns)
				ns->qs[k++] = &dl->q[i];
		qsort(ns->qs, (size_t)ns->nq, sizeof(*ns->qs), dl_q_cmp);
		for (k = 1; k < ns->nq; k++)
			if (ns->qs[k]->cfg->num == ns->qs[k - 1]->cfg->num)
				return -EINVAL;
	}
	return 0;
}

static int dl_init(struct delayline *dl, const struct dl_queue *cfg, int n,
		   bool on_signals)
{
	struct epoll_event ev = { .events = EPOLLIN };
	size_t rlen;
	int err;

	memset(dl, 0, sizeof(*dl));
	dl->epfd = dl->tfd = dl->sfd = dl->stampfd = -1;
	if (!cfg || n <= 0)
		return -EINVAL;
	err = dl_group(dl, cfg, n);
	if (err)
		return err;

	rlen = (size_t)DL_RECV_BATCH * DL_RECV_BUFSZ;
	dl->rbuf = dl_resident(dl, malloc(rlen), rlen);
	dl->iov = calloc(DL_RECV_BATCH, sizeof(*dl->iov));
	dl->msgs = calloc(DL_RECV_BATCH, sizeof(*dl->msgs));
	if (!dl->rbuf || !dl->iov || !dl->msgs)
		return -ENOMEM;
	for (int i = 0; i < DL_RECV_BATCH; i++) {
		dl->iov[i].iov_base = dl->rbuf + (size_t)i * DL_RECV_BUFSZ;
		dl->iov[i].iov_len = DL_RECV_BUFSZ;
		dl->msgs[i].msg_hdr.msg_iov = &dl->iov[i];
		dl->msgs[i].msg_hdr.msg_iovlen = 1;
	}

	dl->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (dl->epfd < 0)
		return -errno;
	dl->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (dl->tfd < 0)
		return -errno;
	err = dl_calibrate(dl);
	if (err)
		return err;
	ev.data.u64 = DL_TAG_TIMER;
	if (epoll_ctl(dl->epfd, EPOLL_CTL_ADD, dl->tfd, &ev) < 0)
		return -errno;
	dl_stamp_on(dl);

	if (on_signals) {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		err = -pthread_sigmask(SIG_BLOCK, &set, &dl->oldmask);
		if (err)
			return err;
		dl->masked = true;
		dl->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
		if (dl->sfd < 0)
			return -errno;
		ev.data.u64 = DL_TAG_SIGNAL;
		if (epoll_ctl(dl->epfd, EPOLL_CTL_ADD, dl->sfd, &ev) < 0)
			return -errno;
	}
	return 0;
}

static bool dl_binding(const struct delayline *dl)
{
	for (int i = 0; i < dl->nq; i++)
		if (dl->q[i].awaiting_ack)
			return true;
	return false;
}

/* Open every namespace's socket and bind its queues; wait for the kernel. */
static int dl_bind(struct delayline *dl)
{
	uint64_t until = dl_now() + (uint64_t)DL_BIND_MS * 1000000u;
	int err;

	for (int i = 0; i < dl->nns; i++) {
		err = dl_ns_open(dl, &dl->ns[i], i);
		if (err)
			return err;
	}
	for (int i = 0; i < dl->nq; i++) {
		err = dl_q_config(dl, &dl->q[i], true);
		if (err)
			return err;
	}
	err = dl_send_all(dl);
	if (err)
		return err;

	while (dl_binding(dl)) {
		struct epoll_event ev[16];
		uint64_t now = dl_now();
		int n;

		if (now >= until)
			return -ETIMEDOUT;
		n = epoll_wait(dl->epfd, ev, 16,
			       (int)((until - now) / 1000000u) + 1);
		if (n < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;

			if (tag < DL_TAG_NS)
				continue;
			err = dl_ns_recv(dl, &dl->ns[tag - DL_TAG_NS],
					 DL_RECV_ROUNDS);
			if (err)
				return err;
		}
	}
	for (int i = 0; i < dl->nq; i++)
		if (!dl->q[i].bound)
			return dl->q[i].err ? dl->q[i].err : -EIO;
	return 0;
}

/*
 * Stop without losing a packet: open every bound queue up (length 0,
 * fail-open), read what is still on its way to us, and accept everything
 * held in one batch verdict per queue. Closing the socket afterwards
 * unbinds queues that are empty (the kernel drops what a closing socket's
 * queues still hold).
 */
static int dl_shutdown(struct delayline *dl)
{
	int err = 0, e;

	for (int i = 0; i < dl->nq; i++)
		if (dl->q[i].bound && (e = dl_q_config(dl, &dl->q[i], false)))
			err = err ? err : e;
	e = dl_send_all(dl);
	err = err ? err : e;
	for (int i = 0; i < dl->nns; i++) {
		if (!dl->ns[i].nl)
			continue;
		e = dl_ns_recv(dl, &dl->ns[i], INT_MAX);
		err = err ? err : e;
	}
	for (int i = 0; i < dl->nq; i++) {
		struct dl_q *q = &dl->q[i];
		uint32_t tail;

		if (q->len == 0)
			continue;
		tail = q->head + q->len - 1;
		if (tail >= q->maxlen)
			tail -= q->maxlen;
		e = dl_ns_verdict(dl, q->ns, NFQNL_MSG_VERDICT_BATCH,
				  q->cfg->num, q->ring[tail].id);
		err = err ? err : e;
		dl->st.flushed += q->len;
		dl->held -= q->len;
		q->len = 0;
	}
	dl->nheap = 0;
	e = dl_send_all(dl);
	return err ? err : e;
}

/*
 * The loop. Waking a sleeping thread takes 0.05-0.3 ms here (more on a
 * nested VM whose idle vCPUs halt, with a long tail), and the first packet
 * through a cold CPU is slow too. So the timer is set ahead of the earliest
 * deadline by the learnt wakeup latency plus DL_SPIN_LEAD, and the last
 * stretch is spent polling (epoll_wait with no timeout, which also reads
 * arriving packets at once): packets then leave on time. Spinning may take
 * at most DL_SPIN_BUDGET of each DL_SPIN_WINDOW; beyond that (under load,
 * when deadlines follow each other closely) the timer is set ahead by the
 * latency alone and, if it wakes us too soon, once more to the deadline
 * itself. Either way no packet leaves before its deadline.
 */
static int dl_loop(struct delayline *dl, volatile sig_atomic_t *stop)
{
	struct epoll_event ev[16];

	while (!dl->quit && !(stop && *stop)) {
		int timeout = stop ? DL_POLL_MS : -1;
		uint64_t now = dl_now();
		bool spin = false;
		int n, err;

		err = dl_release(dl, now);
		if (err)
			return err;
		if (dl->nheap > 0) {
			uint64_t next = dl_q_head(dl->heap[0]), at;

			if (dl_spin_ok(dl, now)) {
				spin = next <= now + dl->early + DL_SPIN_LEAD;
				at = next - dl->early - DL_SPIN_LEAD;
			} else {
				at = next - dl->early;
				if (at <= now)
					at = next;
			}
			if (spin)
				timeout = 0;
			else if ((err = dl_arm(dl, at)))
				return err;
		}
		n = epoll_wait(dl->epfd, ev, 16, timeout);
		if (spin)
			dl->spin_used += dl_now() - now;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;

			if (tag == DL_TAG_TIMER) {
				uint64_t ticks;

				if (read(dl->tfd, &ticks, sizeof(ticks)) > 0)
					dl_woken(dl, !spin);
			} else if (tag == DL_TAG_SIGNAL) {
				struct signalfd_siginfo si;

				if (read(dl->sfd, &si, sizeof(si)) > 0)
					dl->quit = true;
			} else {
				err = dl_ns_recv(dl, &dl->ns[tag - DL_TAG_NS],
						 DL_RECV_ROUNDS);
				if (err)
					return err;
			}
		}
	}
	return 0;
}

/*
 * Tell the parent we are ready. A parent that went away must not kill us
 * with SIGPIPE: block it around the write and take it back if raised.
 */
static void dl_ready(int fd)
{
	struct timespec zero = { 0, 0 };
	sigset_t pipe, old;
	ssize_t r;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	do
		r = write(fd, "R", 1);
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EPIPE && !sigismember(&old, SIGPIPE))
		sigtimedwait(&pipe, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int delayline_run(const struct dl_queue *q, int n, int ready_fd,
		  volatile sig_atomic_t *stop, struct dl_stats *stats)
{
	return delayline_run_shared(q, n, ready_fd, stop, NULL, stats);
}

int delayline_run_shared(const struct dl_queue *q, int n, int ready_fd,
			 volatile sig_atomic_t *stop, struct dl_live *live,
			 struct dl_stats *stats)
{
	struct delayline dl;
	int err, e;

	err = dl_init(&dl, q, n, !stop);
	dl.live = live;
	if (err)
		goto release;
	err = dl_bind(&dl);
	if (err)
		goto shutdown;
	if (live)
		atomic_fetch_add_explicit(&live->starts, 1,
					  memory_order_relaxed);
	if (ready_fd >= 0) {
		dl_ready(ready_fd);
		close(ready_fd);
		ready_fd = -1;
	}
	err = dl_loop(&dl, stop);
shutdown:
	e = dl_shutdown(&dl);
	err = err ? err : e;
release:
	dl.st.wake_ns = dl.early;
	if (stats)
		*stats = dl.st;
	dl_release_all(&dl);
	if (ready_fd >= 0)
		close(ready_fd);	/* never ready: the waiter sees EOF */
	return err;
}

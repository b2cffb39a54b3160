// SPDX-License-Identifier: MIT
/* The traffic generator; see traffic.h. */
#include "traffic.h"
#include "prio.h"
#include "spawn.h"
#include "twin/clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forkgate.h"
#include "netns.h"
#include "proc.h"

struct tg_count {
	uint64_t sent, received;	/* payload bytes, atomic */
	uint64_t late_ns;	/* the most a datagram left after its time */
	uint64_t late_sum_ns, dgrams;	/* over every datagram sent */
	uint64_t late_peak_ns;	/* the most since tg_lateness took it */
	uint64_t received_in;	/* payload bytes the kernel took in by
				 * the end of the window and its linger */
	uint64_t in_until_ns;	/* that end, CLOCK_REALTIME (the stamps'):
				 * the generator's own */
};

struct tg {
	pid_t pid;
	int pidfd;		/* signals and waits reach this process only,
				 * even once something else has reaped it */
	int n;
	int go;			/* pipe to the generator */
	struct tg_count *count;	/* shared with it */
	size_t map_len;
};

struct ready_msg {
	int err;		/* errno, 0: ready */
	int flow;		/* the flow that failed */
};

static volatile sig_atomic_t tg_stopping;

static void on_term(int sig)
{
	(void)sig;
	tg_stopping = 1;
}

static struct sockaddr_in sin_of(uint32_t addr, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(addr) };

	return sa;
}

/* A UDP socket made in namespace ns (the socket stays in it). */
static int socket_in(const char *ns)
{
	int saved, fd, err = netns_enter(ns, &saved);

	if (err)
		return err;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	err = fd < 0 ? -errno : 0;
	netns_leave(saved);
	return fd < 0 ? err : fd;
}

/*
 * The sending socket holds TG_SNDBUF_S of the flow's rate: its datagrams
 * count against it while they wait in the first link's queue, and with
 * the default buffer (about 140 datagrams, 17 ms at 100 Mbit/s) a flow
 * faster than its link kept that queue short, so a few tens of ms in
 * which the host did not run the generator left the link idle (measured
 * once 7 % under the link's rate). Now the link's own queue limit decides
 * what is dropped, as for any source faster than its link.
 */
#define TG_SNDBUF_S 0.1
#define TG_SNDBUF_MAX (64 << 20)
#define TG_RCVBUF_MIN (256 << 10)	/* about the kernel's default */

static void sockbuf(int fd, double rate_bps, int least, int force, int plain)
{
	double want = rate_bps / 8 * TG_SNDBUF_S;
	int b = want > TG_SNDBUF_MAX ? TG_SNDBUF_MAX : (int)want;

	if (b < least)
		b = least;

	if (b > 0 && setsockopt(fd, SOL_SOCKET, force, &b, sizeof(b)))
		setsockopt(fd, SOL_SOCKET, plain, &b, sizeof(b));
}

/* Flow i's two sockets: tx[i] bound and connected, rx[i] bound. */
static int open_flow(const struct tg_flow *f, int *tx, int *rx)
{
	struct sockaddr_in src = sin_of(f->src, 0);
	struct sockaddr_in dst = sin_of(f->dst, TG_PORT);

	*tx = socket_in(f->src_ns);
	if (*tx < 0)
		return *tx;
	sockbuf(*tx, f->rate_bps, 0, SO_SNDBUFFORCE, SO_SNDBUF);
	*rx = socket_in(f->dst_ns);
	if (*rx < 0)
		return *rx;
	/* as much on the receiving side: a stall does not drop there */
	sockbuf(*rx, f->rate_bps, TG_RCVBUF_MIN, SO_RCVBUFFORCE, SO_RCVBUF);
	/* each datagram stamped as it arrives: what came in time is
	 * counted by that, not by when this process got to read it */
	if (setsockopt(*rx, SOL_SOCKET, SO_TIMESTAMPNS, &(int){ 1 },
		       sizeof(int)))
		return -errno;
	if (bind(*tx, (struct sockaddr *)&src, sizeof(src)) ||
	    connect(*tx, (struct sockaddr *)&dst, sizeof(dst)) ||
	    bind(*rx, (struct sockaddr *)&dst, sizeof(dst)))
		return -errno;
	return 0;
}

/* Take in what arrived on fd; count it, and what came in time. */
static void drain(int fd, struct tg_count *c)
{
	static char buf[65536];
	union {
		char b[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	for (;;) {
		struct cmsghdr *cm;
		uint64_t at = 0;

		mh.msg_control = ctl.b;
		mh.msg_controllen = sizeof(ctl.b);
		r = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (r <= 0)
			break;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
				at = (uint64_t)ts.tv_sec * 1000000000u +
				     (uint64_t)ts.tv_nsec;
			}
		__atomic_add_fetch(&c->received, (uint64_t)r,
				   __ATOMIC_RELAXED);
		if (at && at <= c->in_until_ns)
			__atomic_add_fetch(&c->received_in, (uint64_t)r,
					   __ATOMIC_RELAXED);
	}
}

/* Wait until `until` (CLOCK_MONOTONIC ns) or a datagram; take in what came. */
static void receive_until(struct pollfd *pfd, int n, const int *rx,
			  struct tg_count *count, uint64_t until)
{
	uint64_t t = mono_ns(), wait = until > t ? until - t : 0;
	struct timespec ts = { (time_t)(wait / 1000000000u),
			       (long)(wait % 1000000000u) };

	if (ppoll(pfd, (nfds_t)n, &ts, NULL) > 0)
		for (int i = 0; i < n; i++)
			if (pfd[i].revents & POLLIN)
				drain(rx[i], &count[i]);
}

/*
 * Real-time priority (emu/prio.h), below the delay line's, for a
 * generator the host can keep pace with: what a busy host costs it is
 * then its wake-up latency, not a time slice of someone else's. Stalled,
 * it sends what is due in a burst the link's 50 ms queue drops, and its
 * receiving socket overflows meanwhile (beside a second suite, once:
 * 2.52 of 4.86 MB received). One that sends more than TG_RT_PPS
 * datagrams a second stays ordinary: it would take most of a core ahead
 * of the workers; so does one that falls PRIO_GIVE_UP_NS behind all the
 * same (it catches up without sleeping).
 */
#define TG_RT_PPS 50000.0

static bool tg_realtime;	/* the generator's process: it is now */

static void realtime(const struct tg_flow *f, int n)
{
	double pps = 0;

	for (int i = 0; i < n; i++)
		pps += f[i].rate_bps / (TG_FRAME * 8.0);
	if (pps <= TG_RT_PPS)
		tg_realtime = prio_realtime(PRIO_TRAFFIC);
}

/* A datagram sent late ns after its time: both worsts, the sums. */
static void count_late(struct tg_count *c, uint64_t late)
{
	uint64_t peak = __atomic_load_n(&c->late_peak_ns, __ATOMIC_RELAXED);

	/* the run's worst: this thread is its only writer */
	if (late > __atomic_load_n(&c->late_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&c->late_ns, late, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->late_sum_ns, late, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->dgrams, 1, __ATOMIC_RELAXED);
	/* the reader takes the peak (sets it to 0) between rounds */
	while (late > peak &&
	       !__atomic_compare_exchange_n(&c->late_peak_ns, &peak, late,
					    false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* Send every flow's datagrams as their times come, until all are over. */
static int generate(const struct tg_flow *f, int n, const int *tx,
		    const int *rx, struct tg_count *count, uint64_t t0)
{
	struct pollfd *pfd = calloc((size_t)n + 1, sizeof(*pfd));
	uint64_t *next = calloc((size_t)n + 1, sizeof(*next));
	static char payload[TG_PAYLOAD];
	int err = pfd && next ? 0 : -ENOMEM;
	double last = 0;	/* when the last datagram is in, from t0 */

	struct timespec rt;

	/* the windows' ends on the clock the arrival stamps use */
	clock_gettime(CLOCK_REALTIME, &rt);
	uint64_t off = (uint64_t)rt.tv_sec * 1000000000u +
		       (uint64_t)rt.tv_nsec - mono_ns();

	for (int i = 0; i < n && !err; i++) {
		pfd[i] = (struct pollfd){ .fd = rx[i], .events = POLLIN };
		next[i] = t0 + (uint64_t)(fmax(f[i].start_s, 0) * 1e9);
		count[i].in_until_ns =
			t0 + off +
			(uint64_t)((f[i].stop_s + f[i].linger_s) * 1e9);
	}
	while (!err && !tg_stopping) {
		uint64_t t = mono_ns(), wake = UINT64_MAX;
		bool left = false;

		for (int i = 0; i < n; i++) {
			uint64_t stop = t0 + (uint64_t)(f[i].stop_s * 1e9);
			double gap = TG_FRAME * 8.0 / f[i].rate_bps * 1e9;
			int burst = 0;

			/* it cannot keep its pace: catching up at real-time
			 * priority would take a core */
			if (next[i] <= t && next[i] < stop)
				prio_ordinary_if_behind(&tg_realtime,
							t - next[i]);
			/* behind (a late wake-up): catch up a little at once */
			while (next[i] <= t && next[i] < stop && burst++ < 64) {
				if (send(tx[i], payload, sizeof(payload),
					 MSG_DONTWAIT) == (ssize_t)sizeof(payload))
					__atomic_add_fetch(&count[i].sent,
							   (uint64_t)TG_PAYLOAD,
							   __ATOMIC_RELAXED);
				count_late(&count[i], t - next[i]);
				next[i] += (uint64_t)gap > 0 ? (uint64_t)gap : 1;
			}
			if (next[i] < stop) {
				left = true;
				wake = next[i] < wake ? next[i] : wake;
			}
		}
		if (!left)
			break;
		receive_until(pfd, n, rx, count, wake);
	}
	/* what is still on its way: until the last path's delay is over,
	 * then while it keeps coming */
	for (int i = 0; i < n; i++)
		last = fmax(last, f[i].stop_s + f[i].linger_s);
	while (!err && !tg_stopping && mono_ns() < t0 + (uint64_t)(last * 1e9))
		receive_until(pfd, n, rx, count, t0 + (uint64_t)(last * 1e9));
	for (int k = 0; k < 10 && !tg_stopping; k++) {
		if (poll(pfd, (nfds_t)n, 20) <= 0)
			break;
		for (int i = 0; i < n; i++)
			drain(rx[i], &count[i]);
	}
	free(pfd);
	free(next);
	return err;
}

static void __attribute__((noreturn))
child(const struct tg_flow *f, int n, const char *name, pid_t parent,
      struct tg_count *count, int ready[2], int go[2])
{
	struct sigaction sa = { .sa_handler = on_term };
	struct ready_msg m = { 0, -1 };
	int *tx = calloc((size_t)n + 1, sizeof(*tx));
	int *rx = calloc((size_t)n + 1, sizeof(*rx));
	uint64_t t0;
	char c;

	sigset_t stop;

	prctl(PR_SET_NAME, name);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* the forking thread may have blocked them (a server's threads) */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_UNBLOCK, &stop, NULL);
	if (getppid() != parent)
		_exit(0);
	close(ready[0]);
	close(go[1]);
	/* nothing of the parent's but the two pipes */
	for (int fd = 0; fd < 3; fd++) {
		int nul = open("/dev/null", O_RDWR);

		if (nul >= 0 && nul != fd) {
			dup2(nul, fd);
			close(nul);
		}
	}
	if (dup2(ready[1], 3) < 0 || dup2(go[0], 4) < 0)
		_exit(1);
	close_range(5, ~0u, 0);
	/* recorded: go on; end of file: the parent could not record us */
	if (read(4, &c, 1) != 1)
		_exit(0);
	for (int i = 0; i < n; i++)
		tx[i] = rx[i] = -1;
	for (int i = 0; tx && rx && i < n && !m.err; i++) {
		int e = open_flow(&f[i], &tx[i], &rx[i]);

		if (e) {
			m.err = -e;
			m.flow = i;
		}
	}
	if (!tx || !rx)
		m.err = ENOMEM;
	if (write(3, &m, sizeof(m)) != (ssize_t)sizeof(m) || m.err)
		_exit(1);
	close(3);
	if (read(4, &t0, sizeof(t0)) != (ssize_t)sizeof(t0))
		_exit(0);
	realtime(f, n);
	_exit(generate(f, n, tx, rx, count, t0) ? 1 : 0);
}

static int await_ready(int fd, struct ready_msg *m)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&pfd, 1, TG_READY_MS);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		return -ETIMEDOUT;
	return read(fd, m, sizeof(*m)) == (ssize_t)sizeof(*m) ? 0 : -EIO;
}

int tg_start(const struct tg_flow *f, int n, const char *name,
	     int (*record)(pid_t pid, unsigned long long start, void *ctx),
	     void *ctx, struct tg **out, char *err, size_t len)
{
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, e = 0;
	struct ready_msg m = { 0, -1 };
	struct tg *g;
	pid_t parent = getpid();

	*out = NULL;
	if (n < 1 || n > TG_FLOWS_MAX) {
		snprintf(err, len, "%d traffic flows: 1 to %d", n,
			 TG_FLOWS_MAX);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++)
		if (!(f[i].rate_bps > 0) || !(f[i].stop_s >= f[i].start_s) ||
		    !(f[i].linger_s >= 0) || f[i].linger_s > 3600) {
			snprintf(err, len, "traffic flow %d: a rate > 0 and a "
				 "window that ends after it starts", i);
			return -EINVAL;
		}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->n = n;
	g->go = -1;
	g->pidfd = -1;
	g->map_len = (size_t)n * sizeof(*g->count);
	g->count = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g->count == MAP_FAILED || pipe2(ready, O_CLOEXEC) ||
	    pipe2(go, O_CLOEXEC)) {
		e = -errno;
		goto fail;
	}
	g->pid = forkgate_fork();	/* it runs on, as a worker */
	if (g->pid == 0)
		child(f, n, name, parent, g->count, ready, go);
	if (g->pid < 0) {
		e = -errno;
		goto fail;
	}
	/* our child, not yet waited for: the pid is still this process */
	g->pidfd = (int)syscall(SYS_pidfd_open, g->pid, 0);
	if (g->pidfd < 0) {
		e = -errno;
		goto fail;
	}
	close(ready[1]);
	close(go[0]);
	ready[1] = go[0] = -1;
	e = record(g->pid, proc_start(g->pid), ctx);
	if (!e && write(go[1], "r", 1) != 1)
		e = -errno;
	if (!e)
		e = await_ready(ready[0], &m);
	if (!e && m.err) {
		char a[INET_ADDRSTRLEN] = "?", b[INET_ADDRSTRLEN] = "?";

		e = -m.err;
		if (m.flow >= 0 && m.flow < n) {
			uint32_t x = htonl(f[m.flow].src), y = htonl(f[m.flow].dst);

			inet_ntop(AF_INET, &x, a, sizeof(a));
			inet_ntop(AF_INET, &y, b, sizeof(b));
		}
		snprintf(err, len, "the traffic generator cannot open flow %d "
			 "(%s in netns '%s' to %s in netns '%s'): %s", m.flow, a,
			 m.flow >= 0 && m.flow < n ? f[m.flow].src_ns : "?", b,
			 m.flow >= 0 && m.flow < n ? f[m.flow].dst_ns : "?",
			 strerror(m.err));
		goto fail_quiet;
	}
	if (e)
		goto fail;
	close(ready[0]);
	g->go = go[1];
	*out = g;
	return 0;
fail:
	snprintf(err, len, "cannot start the traffic generator: %s",
		 strerror(-e));
fail_quiet:
	pipes_close(ready, go);
	if (g->pid > 0) {
		kill(g->pid, SIGTERM);
		waitpid(g->pid, NULL, 0);
	}
	if (g->pidfd >= 0)
		close(g->pidfd);
	if (g->count != MAP_FAILED && g->count)
		munmap(g->count, g->map_len);
	free(g);
	return e;
}

int tg_go(struct tg *g, uint64_t t0_ns)
{
	ssize_t w = write(g->go, &t0_ns, sizeof(t0_ns));

	return w == (ssize_t)sizeof(t0_ns) ? 0 : w < 0 ? -errno : -EIO;
}

void tg_bytes(const struct tg *g, int i, uint64_t *sent, uint64_t *received)
{
	*sent = __atomic_load_n(&g->count[i].sent, __ATOMIC_RELAXED);
	*received = __atomic_load_n(&g->count[i].received, __ATOMIC_RELAXED);
}

uint64_t tg_late_ns(const struct tg *g, int i)
{
	return __atomic_load_n(&g->count[i].late_ns, __ATOMIC_RELAXED);
}

void tg_lateness(struct tg *g, uint64_t *sum_ns, uint64_t *dgrams,
		 uint64_t *peak_ns)
{
	*sum_ns = *dgrams = *peak_ns = 0;
	for (int i = 0; g && i < g->n; i++) {
		struct tg_count *c = &g->count[i];
		uint64_t peak = __atomic_exchange_n(&c->late_peak_ns, 0,
						    __ATOMIC_RELAXED);

		*sum_ns += __atomic_load_n(&c->late_sum_ns, __ATOMIC_RELAXED);
		*dgrams += __atomic_load_n(&c->dgrams, __ATOMIC_RELAXED);
		*peak_ns = peak > *peak_ns ? peak : *peak_ns;
	}
}

uint64_t tg_received_in_time(const struct tg *g, int i)
{
	return __atomic_load_n(&g->count[i].received_in, __ATOMIC_RELAXED);
}

pid_t tg_pid(const struct tg *g)
{
	return g->pid;
}

int tg_wait(struct tg *g)
{
	siginfo_t si = { 0 };

	while (waitid((idtype_t)P_PIDFD, (id_t)g->pidfd, &si, WEXITED) < 0)
		if (errno != EINTR)
			return -errno;
	return si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
}

bool tg_wait_done(const struct tg *g)
{
	siginfo_t si = {0};

	return waitid((idtype_t)P_PIDFD, (id_t)g->pidfd, &si,
		      WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0;
}

void tg_stop(struct tg *g)
{
	siginfo_t si;

	if (!g)
		return;
	if (syscall(SYS_pidfd_send_signal, g->pidfd, SIGTERM, NULL, 0) == 0)
		while (waitid((idtype_t)P_PIDFD, (id_t)g->pidfd, &si,
			      WEXITED) < 0 && errno == EINTR)
			;
	close(g->pidfd);
	if (g->go >= 0)
		close(g->go);
	munmap(g->count, g->map_len);
	free(g);
}

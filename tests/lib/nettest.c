// SPDX-License-Identifier: MIT
/*
 * Helpers for the emulation tests; see nettest.h.
 *
 * Namespaces are entered by short-lived threads (setns() moves only the
 * calling thread), never by the test's main thread: a socket keeps the
 * namespace it was created in, so the thread opens it and hands the fd
 * back, and everything else runs where the test runs.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/awake.h"
#include "emu/lab.h"
#include "emu/monitor.h"
#include "emu/wksock.h"
#include "tests/lib/nettest.h"

static const char *const nt_bindirs[] = {
	"/usr/sbin", "/usr/bin", "/sbin", "/bin",
};

uint64_t nt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double nt_now(void)
{
	return (double)nt_now_ns() / 1e9;
}

static int nt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double nt_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), nt_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *nt_which(const char *name, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(nt_bindirs) / sizeof(nt_bindirs[0]);
	     i++) {
		snprintf(buf, len, "%s/%s", nt_bindirs[i], name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

static int nt_resolve(const char *name, char *path, size_t size)
{
	if (strchr(name, '/')) {
		snprintf(path, size, "%s", name);
		return access(path, X_OK) ? -errno : 0;
	}
	return nt_which(name, path, size) ? 0 : -ENOENT;
}

/* A pipe (pipe2's flags) and a fork: the pid, 0 in the child; or -errno,
 * the pipe closed again. */
static pid_t nt_pipe_fork(int p[2], int flags)
{
	pid_t pid;
	int err;

	if (pipe2(p, flags) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	return pid;
}

pid_t nt_fork_ready(int *fd)
{
	int p[2];
	pid_t pid = nt_pipe_fork(p, 0);

	if (pid < 0)
		return pid;
	close(p[pid ? 1 : 0]);
	*fd = p[pid ? 0 : 1];
	return pid;
}

/*
 * An exec failure (or setup's) comes back through a close-on-exec pipe as
 * the errno, so a missing program is -ENOENT here, not exit status 127
 * later.
 */
pid_t nt_fork_exec(const char *path, char *const argv[],
		   int (*setup)(const void *arg), const void *arg)
{
	static char *const envp[] = {
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL
	};
	int pfd[2], err = 0;
	ssize_t r;
	pid_t pid = nt_pipe_fork(pfd, O_CLOEXEC);

	if (pid < 0)
		return pid;
	if (pid == 0) {
		err = setup(arg);
		if (!err) {
			execve(path, argv, envp);
			err = errno;
		}
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(127);
	}
	close(pfd[1]);
	do
		r = read(pfd[0], &err, sizeof(err));
	while (r < 0 && errno == EINTR);
	close(pfd[0]);
	if (r == (ssize_t)sizeof(err)) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return -err;
	}
	return pid;
}

/* In the child: stdin from /dev/null, *out_fd (if >= 0) as stdout and
 * stderr; 0 or an errno. */
static int nt_child_fds(const void *out_fd)
{
	int out = *(const int *)out_fd, fd = open("/dev/null", O_RDONLY);

	if (fd < 0 || dup2(fd, 0) < 0)
		return errno;
	if (out >= 0 && (dup2(out, 1) < 0 || dup2(out, 2) < 0))
		return errno;
	return 0;
}

/* fork + execve; out_fd >= 0 becomes the child's stdout and stderr. */
static int nt_spawn(char *const argv[], int out_fd)
{
	char path[256];
	int status, err;
	pid_t pid;

	err = nt_resolve(argv[0], path, sizeof(path));
	if (err)
		return err;
	pid = nt_fork_exec(path, argv, nt_child_fds, &out_fd);
	if (pid < 0)
		return (int)pid;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int run_argv(char *const argv[])
{
	return nt_spawn(argv, -1);
}

int run_argv_output(char *const argv[], char *out, size_t size)
{
	char tmpl[] = "/tmp/nettest-outXXXXXX";
	ssize_t n;
	int fd, ret;

	fd = mkstemp(tmpl);
	if (fd < 0)
		return -errno;
	unlink(tmpl);
	ret = nt_spawn(argv, fd);
	if (size > 0) {
		n = pread(fd, out, size - 1, 0);
		out[n > 0 ? n : 0] = '\0';
	}
	close(fd);
	return ret;
}

/* --- doing things inside a namespace --- */

struct nt_in {
	const char *netns;
	int (*fn)(void *arg);
	void *arg;
	int ret;
};

static void *nt_in_thread(void *p)
{
	struct nt_in *in = p;
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", in->netns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		in->ret = -errno;
		return NULL;
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		in->ret = -errno;
		close(fd);
		return NULL;
	}
	close(fd);
	in->ret = in->fn(in->arg);
	return NULL;
}

/* Run fn(arg) in a thread that has entered netns; its return value. */
static int nt_in_netns(const char *netns, int (*fn)(void *), void *arg)
{
	struct nt_in in = { netns, fn, arg, 0 };
	pthread_t th;
	int err;

	err = pthread_create(&th, NULL, nt_in_thread, &in);
	if (err)
		return -err;
	pthread_join(th, NULL);
	return in.ret;
}

struct nt_sock_arg {
	int domain, type, protocol;
};

static int nt_socket_fn(void *p)
{
	struct nt_sock_arg *a = p;
	int fd = socket(a->domain, a->type | SOCK_CLOEXEC, a->protocol);

	return fd < 0 ? -errno : fd;
}

int nt_socket(const char *netns, int domain, int type, int protocol)
{
	struct nt_sock_arg a = { domain, type, protocol };

	return nt_in_netns(netns, nt_socket_fn, &a);
}

struct nt_sysctl_arg {
	const char *path, *value;
};

static int nt_sysctl_fn(void *p)
{
	struct nt_sysctl_arg *a = p;
	size_t len = strlen(a->value);
	int fd, err = 0;

	/* /proc/sys/net answers for the opening thread's namespace */
	fd = open(a->path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, a->value, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

int nt_sysctl(const char *netns, const char *path, const char *value)
{
	struct nt_sysctl_arg a = { path, value };

	return nt_in_netns(netns, nt_sysctl_fn, &a);
}

struct nt_tcpext_arg {
	const char *name;
	long long value;
};

/* TcpExt's two lines: the names, then the values in the same order. */
static int nt_tcpext_fn(void *p)
{
	struct nt_tcpext_arg *a = p;
	/* the calling thread's namespace (/proc/net is the process's) */
	FILE *f = fopen("/proc/thread-self/net/netstat", "re");
	char names[8192], values[8192];
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(names, sizeof(names), f) &&
	       fgets(values, sizeof(values), f)) {
		char *sn, *sv, *n = strtok_r(names, " \n", &sn),
			       *v = strtok_r(values, " \n", &sv);

		if (!n || !v || strcmp(n, "TcpExt:"))
			continue;
		while ((n = strtok_r(NULL, " \n", &sn)) &&
		       (v = strtok_r(NULL, " \n", &sv)))
			if (!strcmp(n, a->name)) {
				a->value = atoll(v);
				err = 0;
				break;
			}
		break;
	}
	fclose(f);
	return err;
}

long long nt_tcpext(const char *netns, const char *name)
{
	struct nt_tcpext_arg a = { name, 0 };
	int err = nt_in_netns(netns, nt_tcpext_fn, &a);

	return err ? err : a.value;
}

struct nt_nfq_arg {
	unsigned int num;
};

static int nt_nfq_fn(void *p)
{
	struct nt_nfq_arg *a = p;
	unsigned int num, portid, total;
	char line[256];
	int ret = -ENOENT;
	FILE *f;

	f = fopen("/proc/thread-self/net/netfilter/nfnetlink_queue", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %u %u", &num, &portid, &total) == 3 &&
		    num == a->num)
			ret = (int)total;
	fclose(f);
	return ret;
}

int nt_nfqueue_total(const char *netns, unsigned int num)
{
	struct nt_nfq_arg a = { num };

	return nt_in_netns(netns, nt_nfq_fn, &a);
}

/* --- the line h1 — r — h2 --- */

bool nt_netns_exists(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return access(path, F_OK) == 0;
}

#define NT_IP(...) nt_ip_v((char *[]){ "ip", __VA_ARGS__, NULL })

static int nt_ip_v(char *argv[])
{
	int ret = run_argv(argv);

	return ret > 0 ? -EIO : ret;
}

int nt_line_up(struct nt_line *l, const char *prefix)
{
	/* the veths' four ends: namespace (ns[]), device, address */
	static const struct {
		int ns;
		char *dev, *addr;
	} end[] = {
		{ 0, NT_H1_IF, NT_H1_ADDR "/31" },
		{ 1, NT_R_H1, NT_R1_ADDR "/31" },
		{ 1, NT_R_H2, NT_R2_ADDR "/31" },
		{ 2, NT_H2_IF, NT_H2_ADDR "/31" },
	};
	const int nend = (int)(sizeof(end) / sizeof(end[0]));
	char *ns[3];
	int err = 0;

	memset(l, 0, sizeof(*l));
	snprintf(l->prefix, sizeof(l->prefix), "%s", prefix);
	snprintf(l->h1, sizeof(l->h1), "%sh1", prefix);
	snprintf(l->r, sizeof(l->r), "%sr", prefix);
	snprintf(l->h2, sizeof(l->h2), "%sh2", prefix);
	ns[0] = l->h1;
	ns[1] = l->r;
	ns[2] = l->h2;

	for (int i = 0; i < 3 && !err; i++)
		err = NT_IP("netns", "add", ns[i]);
	/* each veth is born with its ends in their namespaces */
	if (!err)
		err = NT_IP("-n", l->r, "link", "add", NT_R_H1, "type",
			    "veth", "peer", "name", NT_H1_IF, "netns", l->h1);
	if (!err)
		err = NT_IP("-n", l->r, "link", "add", NT_R_H2, "type", "veth",
			    "peer", "name", NT_H2_IF, "netns", l->h2);
	for (int i = 0; i < nend && !err; i++)
		err = NT_IP("-n", ns[end[i].ns], "addr", "add", end[i].addr,
			    "dev", end[i].dev);
	for (int i = 0; i < 3 && !err; i++) {
		err = NT_IP("-n", ns[i], "link", "set", "lo", "up");
		/* no IPv6: no neighbour discovery chatter on the line */
		nt_sysctl(ns[i], "/proc/sys/net/ipv6/conf/all/disable_ipv6",
			  "1");
	}
	for (int i = 0; i < nend && !err; i++)
		err = NT_IP("-n", ns[end[i].ns], "link", "set", end[i].dev,
			    "up");
	if (!err)
		err = NT_IP("-n", l->h1, "route", "add", "default", "via",
			    NT_R1_ADDR);
	if (!err)
		err = NT_IP("-n", l->h2, "route", "add", "default", "via",
			    NT_R2_ADDR);
	if (!err)
		err = nt_sysctl(l->r, "/proc/sys/net/ipv4/ip_forward", "1");
	/* on failure, nothing is left */
	if (err)
		nt_line_down(l);
	return err;
}

int nt_line_own(struct nt_line *l, const char *stem)
{
	char prefix[32];

	nt_sweep(stem);
	snprintf(prefix, sizeof(prefix), "%s%d-", stem, (int)getpid());
	return nt_line_up(l, prefix);
}

void nt_line_down(struct nt_line *l)
{
	char *ns[3] = { l->h1, l->r, l->h2 };

	for (int i = 0; i < 3; i++)
		if (ns[i][0] && nt_netns_exists(ns[i]))
			NT_IP("netns", "del", ns[i]);
}

int nt_stale_pid(const char *name, const char *stem, const char **end)
{
	size_t len = strlen(stem);
	char *e;
	long pid;

	if (strncmp(name, stem, len))
		return 0;
	errno = 0;
	pid = strtol(name + len, &e, 10);
	if (e == name + len || errno || pid <= 1 || pid > INT_MAX)
		return 0;
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;
	if (end)
		*end = e;
	return (int)pid;
}

int nt_sweep(const char *stem)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir("/run/netns");
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		const char *end;

		if (!nt_stale_pid(de->d_name, stem, &end) || *end != '-')
			continue;
		if (NT_IP("netns", "del", de->d_name) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* --- ping --- */

static uint16_t nt_csum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t sum = 0;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		sum += (uint32_t)(p[0] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static uint64_t nt_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * One datagram from fd (made non-blocking: poll() said it is there) into
 * buf; *rx is when the kernel received it (SO_TIMESTAMPNS, realtime),
 * else when we read it (realtime too), so a slow wakeup of ours is not
 * counted. What recvmsg() returns.
 */
static ssize_t nt_recv_stamped(int fd, void *buf, size_t len, uint64_t *rx)
{
	struct iovec iov = { buf, len };
	uint64_t at = 0;
	ssize_t n = wks_recv(fd, &iov, 1, &at);

	*rx = at ? at : nt_real_ns();
	return n;
}

/*
 * Wait for the echo reply with this id and seq: 0, -ETIMEDOUT, -errno.
 * *rx: when it came (see nt_recv_stamped).
 */
static int nt_ping_wait(int fd, uint16_t id, uint16_t seq, uint64_t until,
			uint64_t *rx)
{
	uint8_t buf[1500];

	for (;;) {
		uint64_t now = nt_now_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		const struct icmphdr *ic;
		const struct iphdr *ip;
		ssize_t n;
		int r;

		if (now >= until)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)((until - now) / 1000000u) + 1);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		n = nt_recv_stamped(fd, buf, sizeof(buf), rx);
		if (n < (ssize_t)sizeof(*ip))
			continue;
		ip = (const struct iphdr *)buf;
		if (n < (ssize_t)(ip->ihl * 4u + sizeof(*ic)))
			continue;
		ic = (const struct icmphdr *)(buf + ip->ihl * 4u);
		if (ic->type == ICMP_ECHOREPLY && ntohs(ic->un.echo.id) == id &&
		    ntohs(ic->un.echo.sequence) == seq)
			return 0;
	}
}

int nt_ping(const char *netns, const char *dst, int count, int interval_ms,
	    double *rtt, int *got)
{
	return nt_ping_both(netns, dst, count, interval_ms, rtt, NULL, got);
}

static int ping_impl(const char *netns, const char *src, const char *dst,
		     int count, int interval_ms, double *rtt, double *rtt_user,
		     int *got)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct sockaddr_in from = { .sin_family = AF_INET };
	uint16_t id = (uint16_t)(getpid() ^ (nt_now_ns() >> 10));
	uint64_t start;
	int fd, err = 0, one = 1;

	*got = 0;
	if (inet_pton(AF_INET, dst, &to.sin_addr) != 1)
		return -EINVAL;
	if (src && inet_pton(AF_INET, src, &from.sin_addr) != 1)
		return -EINVAL;
	fd = nt_socket(netns, AF_INET, SOCK_RAW | SOCK_NONBLOCK,
		       IPPROTO_ICMP);
	if (fd < 0)
		return fd;
	/* a source address of our choosing (replies are routed to it) */
	if (src && bind(fd, (struct sockaddr *)&from, sizeof(from)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	/* the kernel's receive time, as ping(8) measures */
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	start = nt_now_ns();
	for (int i = 0; i < count; i++) {
		uint8_t pkt[sizeof(struct icmphdr) + 56] = { 0 };
		struct icmphdr *ic = (struct icmphdr *)pkt;
		uint64_t t0, t0_real, rx, next;
		struct timespec ts;
		int64_t offset;
		int r;

		ic->type = ICMP_ECHO;
		ic->un.echo.id = htons(id);
		ic->un.echo.sequence = htons((uint16_t)i);
		ic->checksum = nt_csum(pkt, sizeof(pkt));
		t0 = nt_now_ns();
		t0_real = nt_real_ns();
		if (sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&to,
			   sizeof(to)) < 0) {
			err = -errno;
			break;
		}
		r = nt_ping_wait(fd, id, (uint16_t)i, t0 + 1000000000u, &rx);
		if (r == 0) {
			/* the kernel's stamp, on the monotonic clock */
			offset = (int64_t)(t0_real - t0);
			if (rtt_user)
				rtt_user[*got] =
					(double)(nt_now_ns() - t0) / 1e6;
			rtt[(*got)++] = (double)((int64_t)rx - offset -
						 (int64_t)t0) / 1e6;
		} else if (r != -ETIMEDOUT) {
			err = r;
			break;
		}
		next = start + (uint64_t)(i + 1) * (uint64_t)interval_ms *
			       1000000u;
		ts.tv_sec = (time_t)(next / 1000000000u);
		ts.tv_nsec = (long)(next % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
	}
	close(fd);
	return err;
}

/* --- TCP --- */

/*
 * A socket of type in netns bound to port on all its addresses (reused
 * at once: a port a test before us had): fd or -errno.
 */
static int nt_bound(const char *netns, int type, uint16_t port)
{
	struct sockaddr_in any = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	int fd = nt_socket(netns, AF_INET, type, 0), one = 1, err;

	if (fd < 0)
		return fd;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&any, sizeof(any)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* Close *fd if it is open, and mark it closed. */
static void nt_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Start fn(arg) in *th and note it in *started: 0 or -errno. */
static int nt_start(pthread_t *th, bool *started, void *(*fn)(void *),
		    void *arg)
{
	int err = -pthread_create(th, NULL, fn, arg);

	*started = !err;
	return err;
}

static void nt_bufsize(int fd, int opt_force, int opt, int size)
{
	if (setsockopt(fd, SOL_SOCKET, opt_force, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, opt, &size, sizeof(size));
}

static void *nt_tcp_rx(void *p)
{
	struct nt_tcp *t = p;
	struct pollfd pfd = { .fd = t->lfd, .events = POLLIN };
	struct timeval tv = { 10, 0 };
	size_t bufsz = 1 << 20;
	double first = 0, last = 0, warm_t = 0;
	struct awake_figures f;
	uint64_t warm_bytes = 0, warm_excess = 0;
	bool warm = false;
	char *buf;
	int fd;

	buf = malloc(bufsz);
	if (!buf) {
		t->err = -ENOMEM;
		return NULL;
	}
	if (poll(&pfd, 1, 10000) != 1) {
		t->err = -ETIMEDOUT;
		goto free_buf;
	}
	fd = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		t->err = -errno;
		goto free_buf;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		ssize_t n = recv(fd, buf, bufsz, 0);
		double now;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			t->err = -errno;
			break;
		}
		if (n == 0)
			break;
		now = nt_now();
		if (!t->received)
			first = now;
		t->received += (uint64_t)n;
		last = now;
		if (!warm && now - first >= t->warmup) {
			warm = true;
			warm_t = now;
			warm_bytes = t->received;
			awake_read(t->awake, &f);
			warm_excess = f.excess_ns;
		}
	}
	awake_read(t->awake, &f);
	if (warm && last > warm_t)
		t->stolen = (double)(f.excess_ns - warm_excess) / 1e9 /
			    (last - warm_t);
	t->elapsed = last - first;
	if (t->elapsed > 0)
		t->goodput_bps = (double)t->received * 8 / t->elapsed;
	if (warm && last > warm_t)
		t->steady_bps = (double)(t->received - warm_bytes) * 8 /
				(last - warm_t);
	close(fd);
free_buf:
	free(buf);
	return NULL;
}

static void *nt_tcp_tx(void *p)
{
	struct nt_tcp *t = p;
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(t->port) };
	struct timeval tv = { 10, 0 };
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	size_t bufsz = 256 << 10;
	double end;
	char *buf;
	int err = 0;

	buf = calloc(1, bufsz);
	if (!buf) {
		t->err = -ENOMEM;
		return NULL;
	}
	inet_pton(AF_INET, t->dst_addr, &to.sin_addr);
	setsockopt(t->sfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(t->sfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(t->sfd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		err = -errno;
		goto free_buf;
	}
	end = nt_now() + t->seconds;
	while (nt_now() < end) {
		ssize_t n = send(t->sfd, buf, bufsz, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto free_buf;
		}
		t->sent += (uint64_t)n;
	}
	shutdown(t->sfd, SHUT_WR);
	/* the receiver closes once it has read everything */
	while (recv(t->sfd, buf, bufsz, 0) > 0)
		;
	if (getsockopt(t->sfd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0)
		t->retrans = ti.tcpi_total_retrans;
free_buf:
	if (err && !t->err)
		t->err = err;
	free(buf);
	return NULL;
}

int nt_tcp_start(struct nt_tcp *t)
{
	int err;

	t->lfd = t->sfd = -1;
	t->tx_started = t->rx_started = false;
	t->sent = t->received = 0;
	t->stolen = 0;
	t->err = 0;
	t->awake = NULL;
	if (t->keep_awake) {
		t->awake = awake_start(LAB_BURST_US * 1000ull);
		if (!t->awake)
			return -errno;
	}
	t->lfd = nt_bound(t->dst_ns, SOCK_STREAM, t->port);
	if (t->lfd < 0) {
		err = t->lfd;
		goto stop_awake;
	}
	/* before listen(): the window scale is settled at the handshake */
	if (t->bufsize)
		nt_bufsize(t->lfd, SO_RCVBUFFORCE, SO_RCVBUF, t->bufsize);
	if (listen(t->lfd, 1) < 0) {
		err = -errno;
		goto close_lfd;
	}
	t->sfd = nt_socket(t->src_ns, AF_INET, SOCK_STREAM, 0);
	if (t->sfd < 0) {
		err = t->sfd;
		goto close_lfd;
	}
	if (t->bufsize)
		nt_bufsize(t->sfd, SO_SNDBUFFORCE, SO_SNDBUF, t->bufsize);
	if (t->src_addr) {
		struct sockaddr_in from = { .sin_family = AF_INET };

		if (inet_pton(AF_INET, t->src_addr, &from.sin_addr) != 1 ||
		    bind(t->sfd, (struct sockaddr *)&from, sizeof(from)) < 0) {
			err = errno ? -errno : -EINVAL;
			goto close_sfd;
		}
	}
	if (t->cc && setsockopt(t->sfd, IPPROTO_TCP, TCP_CONGESTION, t->cc,
				(socklen_t)strlen(t->cc)) < 0) {
		err = -errno;
		goto close_sfd;
	}
	err = nt_start(&t->rx, &t->rx_started, nt_tcp_rx, t);
	if (err)
		goto close_sfd;
	err = nt_start(&t->tx, &t->tx_started, nt_tcp_tx, t);
	if (err)
		goto join_rx;
	return 0;

join_rx:
	/* the receiver gives up when nobody connects */
	pthread_join(t->rx, NULL);
	t->rx_started = false;
close_sfd:
	nt_close(&t->sfd);
close_lfd:
	nt_close(&t->lfd);
stop_awake:
	awake_stop(t->awake);
	t->awake = NULL;
	return err;
}

int nt_tcp_join(struct nt_tcp *t)
{
	if (t->tx_started)
		pthread_join(t->tx, NULL);
	if (t->rx_started)
		pthread_join(t->rx, NULL);
	t->tx_started = t->rx_started = false;
	nt_close(&t->sfd);
	nt_close(&t->lfd);
	awake_stop(t->awake);
	t->awake = NULL;
	return t->err;
}

int nt_tcp_steady(struct nt_tcp *t, int n, double scale, double want,
		  double tol, int tries, bool *within)
{
	int err = 0;

	*within = false;
	for (int i = 0; i < n; i++)
		t[i].keep_awake = !i;	/* t[0]'s threads keep them all */
	for (int k = 0; k < tries && !err; k++) {
		int started = 0;

		for (; started < n && !err; started++) {
			err = nt_tcp_start(&t[started]);
			if (err)
				break;
		}
		*within = !err;
		for (int i = 0; i < started; i++) {
			int e = nt_tcp_join(&t[i]);

			err = err ? err : e;
			t[i].steady_bps *= scale;
			*within = *within &&
				  fabs(t[i].steady_bps - want) <= tol * want;
			fprintf(stderr, "tcp %d: steady %.1f Mbit/s, want %.1f, "
				"%u retransmits, the host's stalls %.2f %% of "
				"it\n", i, t[i].steady_bps / 1e6, want / 1e6,
				t[i].retrans, t[0].stolen * 100);
		}
		if (err || *within || t[0].stolen <= MON_TIME_TOL)
			break;
		for (int i = 0; i < n; i++)	/* the next try's ports */
			t[i].port = (uint16_t)(t[i].port + n);
	}
	return err;
}

/* --- UDP --- */

struct nt_udp_hdr {
	uint32_t seq;
	uint64_t sent_ns;
} __attribute__((packed));

/*
 * A datagram's delay runs from the sender's clock just before sendto() to
 * the kernel's receive stamp at the destination (SO_TIMESTAMPNS), both
 * realtime: how late this thread gets to read it is not in it.
 */
static void *nt_udp_rx(void *p)
{
	struct nt_udp *u = p;
	uint8_t buf[65536];
	int64_t last_seq = -1;

	while (u->received < u->count) {
		struct pollfd pfd = { .fd = u->rfd, .events = POLLIN };
		struct nt_udp_hdr h;
		uint64_t rx;
		ssize_t n;

		if (poll(&pfd, 1, u->wait_ms) <= 0)
			break;
		n = nt_recv_stamped(u->rfd, buf, sizeof(buf), &rx);
		if (n < (ssize_t)sizeof(h))
			continue;
		memcpy(&h, buf, sizeof(h));
		if ((int64_t)h.seq < last_seq)
			u->reordered = true;
		last_seq = h.seq;
		u->delay[u->received++] =
			(double)((int64_t)rx - (int64_t)h.sent_ns) / 1e6;
	}
	return NULL;
}

int nt_udp_start(struct nt_udp *u)
{
	int err, one = 1;

	u->rfd = u->tfd = -1;
	u->rx_started = false;
	u->sent = u->received = 0;
	u->reordered = false;
	u->delay = NULL;
	if (u->count <= 0 || u->size < (int)sizeof(struct nt_udp_hdr) ||
	    u->size > 65000)
		return -EINVAL;
	u->delay = calloc((size_t)u->count, sizeof(*u->delay));
	if (!u->delay)
		return -ENOMEM;
	u->rfd = nt_bound(u->dst_ns, SOCK_DGRAM | SOCK_NONBLOCK, u->port);
	if (u->rfd < 0) {
		err = u->rfd;
		goto free_delay;
	}
	nt_bufsize(u->rfd, SO_RCVBUFFORCE, SO_RCVBUF, 64 << 20);
	setsockopt(u->rfd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	u->tfd = nt_socket(u->src_ns, AF_INET, SOCK_DGRAM, 0);
	if (u->tfd < 0) {
		err = u->tfd;
		goto close_rfd;
	}
	nt_bufsize(u->tfd, SO_SNDBUFFORCE, SO_SNDBUF, 64 << 20);
	err = nt_start(&u->rx, &u->rx_started, nt_udp_rx, u);
	if (err)
		goto close_tfd;
	return 0;

close_tfd:
	nt_close(&u->tfd);
close_rfd:
	nt_close(&u->rfd);
free_delay:
	free(u->delay);
	u->delay = NULL;
	return err;
}

int nt_udp_send(struct nt_udp *u)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(u->port) };
	uint8_t *buf;
	uint64_t t0;
	int err = 0;

	if (inet_pton(AF_INET, u->dst_addr, &to.sin_addr) != 1)
		return -EINVAL;
	buf = calloc(1, (size_t)u->size);
	if (!buf)
		return -ENOMEM;
	t0 = nt_now_ns();
	while (u->sent < u->count) {
		struct nt_udp_hdr h = { (uint32_t)u->sent, nt_real_ns() };

		memcpy(buf, &h, sizeof(h));
		if (sendto(u->tfd, buf, (size_t)u->size, 0,
			   (struct sockaddr *)&to, sizeof(to)) < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		u->sent++;
	}
	u->send_ms = (double)(nt_now_ns() - t0) / 1e6;
	free(buf);
	return err;
}

int nt_udp_join(struct nt_udp *u)
{
	if (u->rx_started)
		pthread_join(u->rx, NULL);
	u->rx_started = false;
	if (u->received > 0) {
		u->delay_med_ms = nt_median(u->delay, u->received);
		u->delay_min_ms = u->delay[0];
		u->delay_max_ms = u->delay[u->received - 1];
	}
	nt_close(&u->tfd);
	nt_close(&u->rfd);
	free(u->delay);
	u->delay = NULL;
	return 0;
}

int nt_ping_both(const char *netns, const char *dst, int count,
		 int interval_ms, double *rtt, double *rtt_user, int *got)
{
	return ping_impl(netns, NULL, dst, count, interval_ms, rtt, rtt_user,
			 got);
}

int nt_ping_from(const char *netns, const char *src, const char *dst,
		 int count, int interval_ms, double *rtt, int *got)
{
	return ping_impl(netns, src, dst, count, interval_ms, rtt, NULL, got);
}

void nt_rm_results(const char *db)
{
	static const char *const beside[] = { "-wal", "-shm", ".log" };
	char path[600];

	unlink(db);
	for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", db, beside[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s.scenarios", db);
	nt_rm_flat(path);
}

void nt_rm_flat(const char *dir)
{
	char f[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(f, sizeof(f), "%s/%s", dir, de->d_name);
			unlink(f);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

void nt_prefix_down(const char *prefix)
{
	char path[PATH_MAX];

	if (!prefix[0])
		return;
	lab_down(prefix, NULL, NULL);
	snprintf(path, sizeof(path), LAB_STATE_DIR "/%s.lock", prefix);
	unlink(path);
}

bool nt_root_prefix(char *prefix, size_t len, const char *stem)
{
	if (geteuid() != 0)
		return false;
	snprintf(prefix, len, "%s%d", stem, (int)getpid());
	return true;
}

bool nt_run_files(const char *stem, const char *what, char *prefix,
		  size_t plen, char *db, char *yaml, char *out)
{
	int pid = (int)getpid();

	if (!nt_root_prefix(prefix, plen, stem))
		return false;
	snprintf(db, NT_RUN_PATH, "/tmp/tl-%s-%d.db", what, pid);
	snprintf(yaml, NT_RUN_PATH, "/tmp/tl-%s-%d.yaml", what, pid);
	snprintf(out, NT_RUN_PATH, "/tmp/tl-%s-%d.out", what, pid);
	return true;
}

void nt_run_files_remove(const char *prefix, const char *db,
			 const char *yaml, const char *out)
{
	if (!prefix[0])
		return;
	nt_prefix_down(prefix);
	nt_rm_results(db);
	unlink(yaml);
	unlink(out);
}

pid_t nt_spawn_to(char *const argv[], const char *out)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int err;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT |
					 O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return err ? -err : pid;
}

int nt_fds(pid_t pid, struct nt_fd *fds, int max)
{
	char dir[64], path[64 + sizeof(((struct dirent *)0)->d_name)];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while (n < max && (de = readdir(d))) {
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		len = readlink(path, fds[n].to, sizeof(fds[n].to) - 1);
		if (len < 0)
			continue;	/* closed meanwhile */
		fds[n].to[len] = '\0';
		fds[n].fd = atoi(de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

char *nt_read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

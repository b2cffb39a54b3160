/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the emulation tests: run a program from an argv vector, open
 * sockets inside named namespaces, build a three-namespace line
 * h1 — r — h2, and measure it with ICMP echo, TCP and UDP of our own.
 *
 * Nothing here prints except the programs run_argv() starts (their
 * stderr is the test's), and every function returns 0 or -errno unless
 * its comment says otherwise.
 */
#ifndef TESTS_EMU_NETTEST_H
#define TESTS_EMU_NETTEST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * run_argv - run argv[0] (a path, or a name looked up in /usr/sbin,
 * /usr/bin, /sbin, /bin) with argv in a child; no shell. stdin is
 * /dev/null, stdout and stderr are the caller's. Returns 0 when it exits
 * 0, its exit status (> 0; 128 + signal if killed) when it fails, or
 * -errno when it could not be started.
 */
int run_argv(char *const argv[]);

/* run_argv, stdout and stderr captured into out (NUL-terminated,
 * truncated to size). */
int run_argv_output(char *const argv[], char *out, size_t size);

/* Absolute path of a program in /usr/sbin, /usr/bin, /sbin, /bin, written
 * to buf: buf, or NULL when none of them holds it. */
const char *nt_which(const char *name, char *buf, size_t len);

/*
 * nt_fork_exec - fork; in the child, setup(arg), then execve path with argv
 * and the environment PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C. setup
 * returns 0 or an errno; that errno, or execve's, is returned here as
 * -errno (the child reaped), else the child's pid, not waited for.
 */
pid_t nt_fork_exec(const char *path, char *const argv[],
		   int (*setup)(const void *arg), const void *arg);

/*
 * nt_fork_ready - fork a child with a pipe back to the test, for it to say
 * when it is ready: 0 in the child, *fd the pipe's write end; the child's
 * pid in the test, *fd the read end; or -errno, nothing forked. Each side
 * has only its own end open.
 */
pid_t nt_fork_ready(int *fd);

/* A socket created inside named namespace netns: fd >= 0 or -errno. */
int nt_socket(const char *netns, int domain, int type, int protocol);

/* Write value to a /proc/sys path as seen from inside netns. */
int nt_sysctl(const char *netns, const char *path, const char *value);

/*
 * Counter `name` of /proc/net/netstat's TcpExt (e.g. TCPAbortOnTimeout)
 * as seen from inside netns: its value, or -errno (-ENOENT: no such).
 */
long long nt_tcpext(const char *netns, const char *name);

/* Monotonic clock in ns and in seconds. */
uint64_t nt_now_ns(void);
double nt_now(void);

/* Median of v[0..n) (sorts v); 0 when n == 0. */
double nt_median(double *v, int n);

/* The line h1 — r — h2: namespaces "<prefix>h1", "<prefix>r", "<prefix>h2". */
#define NT_R_H1		"r-h1"		/* r's interface toward h1 */
#define NT_R_H2		"r-h2"		/* r's interface toward h2 */
#define NT_H1_IF	"h1-r"
#define NT_H2_IF	"h2-r"
#define NT_H1_ADDR	"198.18.0.0"	/* 198.18.0.0/31 h1 — r */
#define NT_R1_ADDR	"198.18.0.1"
#define NT_R2_ADDR	"198.18.0.2"	/* 198.18.0.2/31 r — h2 */
#define NT_H2_ADDR	"198.18.0.3"

struct nt_line {
	char prefix[32];
	char h1[64], r[64], h2[64];
};

/*
 * nt_line_up - make the line with the given prefix: veth pairs created
 * with their ends directly in their namespaces, addresses, forwarding on in
 * r, default routes on the hosts. On failure everything made is removed.
 */
int nt_line_up(struct nt_line *l, const char *prefix);

/* nt_line_down - remove every namespace of the line that exists. */
void nt_line_down(struct nt_line *l);

/*
 * nt_line_own - a test suite's line: the lines its killed runs left swept
 * (nt_sweep(stem)), then its own made under "<stem><pid>-". As
 * nt_line_up.
 */
int nt_line_own(struct nt_line *l, const char *stem);

/*
 * nt_sweep - remove namespaces "<stem><pid>-*" whose pid is no longer
 * running (left by a test that was killed on timeout). Returns how many.
 */
int nt_sweep(const char *stem);

/*
 * nt_stale_pid - the pid of name "<stem><pid>..." when that process is
 * gone (a test killed on timeout left name behind), with *end (if not
 * NULL) at what follows the pid; 0 when name is not of that form or its
 * process is still running.
 */
int nt_stale_pid(const char *name, const char *stem, const char **end);

/*
 * nt_root_prefix - a test's lab prefix "<stem><pid>" (the test process's
 * own) in prefix (len bytes): true, or false, prefix untouched, when the
 * test does not run as root (its caller skips it).
 */
bool nt_root_prefix(char *prefix, size_t len, const char *stem);

/*
 * nt_rm_results - remove a results database and what twinlab keeps beside
 * it: DB-wal, DB-shm, DB.log and the points' scenarios in DB.scenarios/.
 */
void nt_rm_results(const char *db);

/* nt_rm_flat - remove dir and the files in it (no folders below). */
void nt_rm_flat(const char *dir);

/*
 * nt_prefix_down - whatever of prefix's emulation is up, down, and its
 * lock file gone (a test's teardown; nothing when prefix is empty).
 */
void nt_prefix_down(const char *prefix);

/*
 * What a suite that drives `twinlab run` makes, per test process: the lab
 * prefix "<stem><pid>" (plen bytes, nt_root_prefix) and
 * "/tmp/tl-<what>-<pid>.db" (the results), ".yaml" (the scenario or
 * experiment) and ".out" (the command's output), each path NT_RUN_PATH
 * bytes. False, nothing named, when the test does not run as root.
 * nt_run_files_remove takes the lab down and removes the files (nothing
 * when prefix is empty: the test was skipped before it named them).
 */
#define NT_RUN_PATH 128
bool nt_run_files(const char *stem, const char *what, char *prefix,
		  size_t plen, char *db, char *yaml, char *out);
void nt_run_files_remove(const char *prefix, const char *db,
			 const char *yaml, const char *out);

/*
 * The ring of the emulation tests: four ROADMs A-B-C-D in a ring of
 * 500 km fibres, at each a router and a server of one core and `mib` MiB
 * (NT_RING4_NETWORK, after a scenario's name and scale); its two tasks,
 * t1 (sA -> sB) and t2 (sC -> sD), of `params` parameters that train for
 * `work` core-seconds (NT_RING4_TASKS).
 */
#define NT_RING4_SERVER(x, mib)						\
	"  - {name: s" x ", router: r" x ", access_gbps: 100, cpu: 1,"	\
	" memory_mib: " mib "}\n"
#define NT_RING4_NETWORK(mib)						\
	"wavelength_gbps: 100\nwavelengths: 2\n"				\
	"demand_gbps: 10\nroadms: [A, B, C, D]\n"			\
	"fibres: [{a: A, b: B, km: 500}, {a: B, b: C, km: 500},"	\
	" {a: C, b: D, km: 500}, {a: D, b: A, km: 500}]\n"		\
	"routers: [{name: rA, roadm: A}, {name: rB, roadm: B},"		\
	" {name: rC, roadm: C}, {name: rD, roadm: D}]\n"		\
	"servers:\n"							\
	NT_RING4_SERVER("A", mib) NT_RING4_SERVER("B", mib)		\
	NT_RING4_SERVER("C", mib) NT_RING4_SERVER("D", mib)
#define NT_RING4_TASKS(params, work)					\
	"tasks:\n"							\
	"  - {name: t1, global: sA, locals: [sB], parameters: " params ",\n" \
	"     bytes_per_parameter: 4, work_core_s: " work "}\n"		\
	"  - {name: t2, global: sC, locals: [sD], parameters: " params ",\n" \
	"     bytes_per_parameter: 4, work_core_s: " work "}\n"

/*
 * nt_spawn_to - start argv[0] with argv, its stdout and stderr into the
 * file out (truncated). The pid, or -errno.
 */
pid_t nt_spawn_to(char *const argv[], const char *out);

/* One open descriptor of a process and what it names (its /proc link). */
struct nt_fd {
	int fd;
	char to[128];
};

/*
 * nt_fds - the descriptors process pid has open (those closed while they
 * are read are passed over) into fds, max at most: how many, or -errno
 * when its /proc/PID/fd cannot be read.
 */
int nt_fds(pid_t pid, struct nt_fd *fds, int max);

/* nt_read_file - up to len - 1 bytes of path into buf, terminated; buf. */
char *nt_read_file(const char *path, char *buf, size_t len);

/* Whether namespace name exists (/run/netns/NAME). */
bool nt_netns_exists(const char *name);

/*
 * nt_ping - count ICMP echo requests from netns to dst, one every
 * interval_ms, each waiting up to 1 s for its reply; round-trip times in
 * ms into rtt[] (the answered ones, in order), their number into *got.
 * The send time is CLOCK_MONOTONIC just before sendto(); like ping(8), a
 * reply's time is when the kernel received it (SO_TIMESTAMPNS, brought to
 * the monotonic clock), so the wakeup of the waiting thread is not in it.
 */
int nt_ping(const char *netns, const char *dst, int count, int interval_ms,
	    double *rtt, int *got);

/* nt_ping, and rtt_user[] (may be NULL): the times as the waiting thread
 * saw them, its wakeup included. */
int nt_ping_both(const char *netns, const char *dst, int count,
		 int interval_ms, double *rtt, double *rtt_user, int *got);

/* nt_ping from source address src (bound), for routes per address pair. */
int nt_ping_from(const char *netns, const char *src, const char *dst,
		 int count, int interval_ms, double *rtt, int *got);

struct awake;

/* One TCP bulk transfer from src_ns to dst_addr (in dst_ns). */
struct nt_tcp {
	/* in */
	const char *src_ns, *dst_ns, *dst_addr;
	const char *src_addr;	/* bind the sender to it; NULL: any */
	uint16_t port;
	double seconds;		/* how long the sender sends */
	double warmup;		/* excluded from steady_bps */
	int bufsize;		/* SO_SNDBUF/SO_RCVBUF (forced); 0: autotune */
	const char *cc;		/* congestion control; NULL: the default */
	bool keep_awake;	/* the CPUs kept awake as a run keeps them
				 * (emu/awake.h), the host's stalls counted */
	/* out */
	uint64_t sent, received;
	double elapsed;		/* first to last byte at the receiver, s */
	double goodput_bps;	/* received over elapsed */
	double steady_bps;	/* after warmup */
	uint32_t retrans;	/* sender's tcpi_total_retrans */
	double stolen;		/* keep_awake: what the host's stalls lasted
				 * beyond a shaper's burst (LAB_BURST_US),
				 * summed over the CPUs, a share of the
				 * steady window: the monitor's stall_excess */
	int err;
	/* private */
	struct awake *awake;
	int lfd, sfd;
	pthread_t tx, rx;
	bool tx_started, rx_started;
};

/* Start the receiver and the sender; nt_tcp_join waits for both. */
int nt_tcp_start(struct nt_tcp *t);
int nt_tcp_join(struct nt_tcp *t);

/*
 * nt_tcp_steady - the n transfers t[0..n) at once, the CPUs kept awake
 * (by t[0]), each one's steady_bps times scale (a dilation: in scenario
 * units) judged against want within tol. A run judges a round degraded,
 * not wrong, when the host took its CPUs away for over MON_TIME_TOL of it
 * beyond a shaper's burst (the monitor's stall_excess: t[0].stolen), and
 * runs it again; so does this, each on its port + n, at most tries times
 * in all. A goodput off by over tol with the host's stalls within that
 * limit ends it at once. Returns 0 or -errno; *within says whether every
 * transfer of the last try was within tol.
 */
int nt_tcp_steady(struct nt_tcp *t, int n, double scale, double want,
		  double tol, int tries, bool *within);

/*
 * A burst of UDP datagrams from src_ns to dst_addr:port (received in
 * dst_ns), sent as fast as the sender can. Each carries its send time; its
 * delay runs to the kernel's receive stamp at the destination (one machine,
 * one clock), so the receiving thread's own lateness is not in it. The
 * receiver stops when all count arrived or after wait_ms without one.
 */
struct nt_udp {
	/* in */
	const char *src_ns, *dst_ns, *dst_addr;
	uint16_t port;
	int count, size;	/* datagrams, bytes each (>= 12) */
	int wait_ms;
	/* out */
	int sent, received;
	bool reordered;
	double send_ms;		/* time to send them all */
	double delay_min_ms, delay_med_ms, delay_max_ms;
	/* private */
	int rfd, tfd;
	double *delay;
	pthread_t rx;
	bool rx_started;
};

/* Open both sockets and start the receiver; then send; then join. */
int nt_udp_start(struct nt_udp *u);
int nt_udp_send(struct nt_udp *u);
int nt_udp_join(struct nt_udp *u);

/* The queue_total (packets held now) of queue num in netns, or -errno. */
int nt_nfqueue_total(const char *netns, unsigned int num);

#endif

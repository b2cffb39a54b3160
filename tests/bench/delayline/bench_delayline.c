// SPDX-License-Identifier: MIT
/*
 * bench_delayline - what the NFQUEUE delay line costs: TCP goodput from h1
 * to h2 through r, with the delay line on both of r's egresses (FORWARD -o)
 * and no shaping, for a few one-way delays, GSO queueing on and off; and
 * the same line with no delay line for reference. Needs root; builds its
 * own namespaces "tldlb<pid>-*" and removes them.
 *
 *   bench_delayline [-t seconds] [-d ms,ms,...] [-b bufsize_mb] [-r runs]
 *                   [-c cc] [-f rtprio]
 *
 * -f runs the delay line's thread SCHED_FIFO at that priority, as a
 * deployment that wants it punctual under load would.
 *
 * For each case it prints the median goodput over the runs, the sender's
 * retransmissions, the kernel queues' drops, the delay line's counters and
 * the CPU time its thread used. Then the RTT error: 200 pings back to back
 * over the same line with each delay on both egresses, against twice the
 * delay, and the same without the delay line (the line's own RTT).
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu/delayline.h"
#include "emu/nfqrule.h"
#include "tests/lib/nettest.h"

#define MS 1000000ull
#define MAX_RUNS 16

struct runner {
	struct dl_queue q[2];
	volatile sig_atomic_t stop;
	struct dl_stats st;
	int rc;
	int ready[2];
	pthread_t th;
	clockid_t cpu;
	double cpu_s;
	int rtprio;
};

static void *runner_thread(void *p)
{
	struct runner *r = p;

	if (r->rtprio > 0) {
		struct sched_param sp = { .sched_priority = r->rtprio };

		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
	r->rc = delayline_run(r->q, 2, r->ready[1], &r->stop, &r->st);
	return NULL;
}

static double cpu_seconds(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int runner_start(struct runner *r, const struct nt_line *l,
			uint64_t delay_ns, bool gso, int rtprio)
{
	struct pollfd pfd;
	char c;

	memset(r, 0, sizeof(*r));
	r->rtprio = rtprio;
	for (int i = 0; i < 2; i++) {
		snprintf(r->q[i].netns, sizeof(r->q[i].netns), "%s", l->r);
		r->q[i].num = (uint16_t)(i + 1);
		r->q[i].delay_ns = delay_ns;
		r->q[i].maxlen = dl_queue_maxlen(20000000000ull, delay_ns);
		r->q[i].flags = gso ? 0 : DL_QUEUE_NO_GSO;
	}
	if (pipe2(r->ready, O_CLOEXEC) < 0)
		return -errno;
	if (pthread_create(&r->th, NULL, runner_thread, r))
		return -EAGAIN;
	pfd.fd = r->ready[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 5000) != 1 || read(r->ready[0], &c, 1) != 1) {
		r->stop = 1;
		pthread_join(r->th, NULL);
		close(r->ready[0]);
		return r->rc ? r->rc : -ETIMEDOUT;
	}
	if (pthread_getcpuclockid(r->th, &r->cpu))
		r->cpu = CLOCK_THREAD_CPUTIME_ID;
	r->cpu_s = cpu_seconds(r->cpu);
	return 0;
}

static int runner_stop(struct runner *r)
{
	r->cpu_s = cpu_seconds(r->cpu) - r->cpu_s;
	r->stop = 1;
	pthread_join(r->th, NULL);
	close(r->ready[0]);
	return r->rc;
}

/* Sum of queue_dropped + queue_user_dropped of queue num in netns. */
static long queue_drops(const char *netns, unsigned int num)
{
	char *argv[] = { "ip", "netns", "exec", (char *)netns, "cat",
			 "/proc/net/netfilter/nfnetlink_queue", NULL };
	unsigned int n, portid, total, mode, range, dropped, udropped;
	char out[4096], *line;

	if (run_argv_output(argv, out, sizeof(out)))
		return -1;
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		if (sscanf(line, "%u %u %u %u %u %u %u", &n, &portid, &total,
			   &mode, &range, &dropped, &udropped) == 7 &&
		    n == num)
			return (long)dropped + (long)udropped;
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct opts {
	double seconds;
	int runs;
	int bufsize;
	const char *cc;
	int rtprio;
	int ndelays;
	double delays[8];
};

/* One case: delay_ms < 0 means no delay line at all. */
static int bench_case(const struct nt_line *l, const struct opts *o,
		      double delay_ms, bool gso)
{
	double gp[MAX_RUNS], cpu = 0, late = 0, stamp_age = 0;
	uint64_t pkts = 0, gsop = 0, held = 0, sends = 0, msgs = 0;
	uint64_t enobufs = 0;
	long drops = 0;
	unsigned int retrans = 0;
	int err;

	for (int run = 0; run < o->runs; run++) {
		struct nt_tcp t = {
			.src_ns = l->h1, .dst_ns = l->h2,
			.dst_addr = NT_H2_ADDR, .port = (uint16_t)(5201 + run),
			.seconds = o->seconds, .warmup = 1.0,
			.bufsize = o->bufsize, .cc = o->cc,
		};
		struct runner r;

		if (delay_ms >= 0) {
			err = runner_start(&r, l, (uint64_t)(delay_ms * MS),
					   gso, o->rtprio);
			if (err)
				return err;
		}
		err = nt_tcp_start(&t);
		if (!err)
			err = nt_tcp_join(&t);
		if (delay_ms >= 0) {
			long d1 = queue_drops(l->r, 1);
			long d2 = queue_drops(l->r, 2);
			int e = runner_stop(&r);

			err = err ? err : e;
			drops += (d1 > 0 ? d1 : 0) + (d2 > 0 ? d2 : 0);
			cpu += r.cpu_s;
			pkts += r.st.packets;
			gsop += r.st.gso_packets;
			if (r.st.held_max > held)
				held = r.st.held_max;
			sends += r.st.sends;
			enobufs += r.st.enobufs;
			msgs += r.st.verdict_msgs;
			late += r.st.accepted ?
				(double)r.st.late_ns_sum / r.st.accepted : 0;
			stamp_age += r.st.stamped ?
				(double)r.st.stamp_age_ns_sum /
					(double)r.st.stamped : 0;
		}
		if (err)
			return err;
		gp[run] = t.steady_bps;
		retrans += t.retrans;
	}
	qsort(gp, (size_t)o->runs, sizeof(gp[0]), cmp_double);
	if (delay_ms < 0) {
		printf("%-9s %-4s %9.0f %9.0f %9.0f %8u\n", "none", "-",
		       gp[o->runs / 2] / 1e6, gp[0] / 1e6,
		       gp[o->runs - 1] / 1e6, retrans / (unsigned)o->runs);
		return 0;
	}
	printf("%-9.1f %-4s %9.0f %9.0f %9.0f %8u %6ld %9.0f %6.1f %5lu "
	       "%5.1f %5.0f %5.0f\n", delay_ms, gso ? "on" : "off",
	       gp[o->runs / 2] / 1e6, gp[0] / 1e6, gp[o->runs - 1] / 1e6,
	       retrans / (unsigned)o->runs, drops / o->runs,
	       (double)pkts / o->runs / o->seconds,
	       pkts ? 100.0 * (double)gsop / (double)pkts : 0,
	       (unsigned long)held, sends ? (double)msgs / (double)sends : 0,
	       late / o->runs / 1e3, stamp_age / o->runs / 1e3);
	printf("%-9s %-4s delay line thread: %.0f %% of one core, %lu "
	       "ENOBUFS\n", "", "", 100.0 * cpu / (o->runs * o->seconds),
	       (unsigned long)enobufs);
	return 0;
}

/* RTT of 200 back-to-back pings; delay_ms < 0: no delay line. */
static int rtt_case(const struct nt_line *l, const struct opts *o,
		    double delay_ms)
{
	static double rtt[200];
	struct runner r;
	int got, err, n;
	double want = delay_ms < 0 ? 0 : 2 * delay_ms, med, p90;

	if (delay_ms >= 0) {
		err = runner_start(&r, l, (uint64_t)(delay_ms * MS), true,
				   o->rtprio);
		if (err)
			return err;
	}
	err = nt_ping(l->h1, NT_H2_ADDR, 200, 1, rtt, &got);
	if (delay_ms >= 0) {
		int e = runner_stop(&r);

		if (!err)
			err = e;
	}
	if (err)
		return err;
	n = got;
	qsort(rtt, (size_t)n, sizeof(*rtt), cmp_double);
	med = n ? rtt[n / 2] : 0;
	p90 = n ? rtt[(n * 9) / 10] : 0;
	if (delay_ms < 0)
		printf("%-9s %4d %9.3f %9.3f %9.3f\n", "none", n,
		       n ? rtt[0] : 0, med, p90);
	else
		printf("%-9.1f %4d %9.3f %9.3f %9.3f %+9.3f %+8.2f%%  %s\n",
		       delay_ms, n, n ? rtt[0] : 0, med, p90, med - want,
		       100 * (med - want) / want,
		       /* the target: the median within 1 % + 20 us */
		       fabs(med - want) <= 0.01 * want + 0.020 ? "met" :
								"MISSED");
	return 0;
}

/*
 * The delay line's rules on both of r's egresses (queue 1 toward h2,
 * 2 toward h1), added (0 or the first -errno) or removed (both tried,
 * whatever fails).
 */
static int set_rules(const struct nt_line *l, bool add)
{
	for (int rule = 0; rule < 2; rule++) {
		int err = nfqrule_set(l->r, add, "FORWARD", false,
				      rule ? NT_R_H1 : NT_R_H2,
				      (uint16_t)(rule + 1));

		if (err && add)
			return err;
	}
	return 0;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-t seconds] [-d ms,ms,...] "
		"[-b bufsize_mb] [-r runs] [-c cc] [-f rtprio]\n", prog);
}

int main(int argc, char **argv)
{
	struct opts o = {
		.seconds = 5, .runs = 3, .bufsize = 64 << 20, .cc = NULL,
		.ndelays = 4, .delays = { 1, 5, 20, 50 },
	};
	struct nt_line l;
	char prefix[32];
	int c, err;

	while ((c = getopt(argc, argv, "t:d:b:r:c:f:h")) != -1) {
		switch (c) {
		case 't':
			o.seconds = atof(optarg);
			break;
		case 'd': {
			char *tok = strtok(optarg, ",");

			for (o.ndelays = 0; tok && o.ndelays < 8;
			     tok = strtok(NULL, ","))
				o.delays[o.ndelays++] = atof(tok);
			break;
		}
		case 'b':
			o.bufsize = atoi(optarg) << 20;
			break;
		case 'r':
			o.runs = atoi(optarg);
			break;
		case 'c':
			o.cc = optarg;
			break;
		case 'f':
			o.rtprio = atoi(optarg);
			break;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (o.runs < 1 || o.runs > MAX_RUNS || o.seconds <= 1) {
		usage(argv[0]);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "%s: needs root\n", argv[0]);
		return 1;
	}
	nt_sweep("tldlb");
	snprintf(prefix, sizeof(prefix), "tldlb%d-", (int)getpid());
	err = nt_line_up(&l, prefix);
	if (err) {
		fprintf(stderr, "%s: cannot build the line '%s': %s\n",
			argv[0], prefix, strerror(-err));
		return 1;
	}
	printf("TCP h1 -> r -> h2, %d x %.0f s (median, min, max of the "
	       "goodput after 1 s), buffers %d MB, cc %s, delay line %s\n",
	       o.runs, o.seconds, o.bufsize >> 20, o.cc ? o.cc : "default",
	       o.rtprio > 0 ? "SCHED_FIFO" : "SCHED_OTHER");
	printf("%-9s %-4s %9s %9s %9s %8s %6s %9s %6s %5s %5s %5s %5s\n",
	       "delay_ms", "gso", "Mbit/s", "min", "max", "retrans", "drops",
	       "pkts/s", "gso%", "held", "v/snd", "late", "age");
	err = bench_case(&l, &o, -1, true);
	for (int i = 0; !err && i < o.ndelays; i++) {
		err = set_rules(&l, true);
		if (!err)
			err = bench_case(&l, &o, o.delays[i], true);
		if (!err)
			err = bench_case(&l, &o, o.delays[i], false);
		set_rules(&l, false);
	}
	if (!err) {
		printf("late: mean us past the deadline; age: mean us from "
		       "arrival to read; v/snd: verdicts per sendmsg\n\n");
		printf("RTT h1 -> r -> h2 -> r -> h1, delay on both of r's "
		       "egresses, 200 pings back to back (ms)\n");
		printf("%-9s %4s %9s %9s %9s %9s %9s  %s\n", "delay_ms", "got",
		       "min", "median", "p90", "err_med", "err_%",
		       "within 1 % + 20 us");
		err = rtt_case(&l, &o, -1);
	}
	for (int i = 0; !err && i < o.ndelays; i++) {
		err = set_rules(&l, true);
		if (!err)
			err = rtt_case(&l, &o, o.delays[i]);
		set_rules(&l, false);
	}
	nt_line_down(&l);
	if (err) {
		fprintf(stderr, "%s: %s\n", argv[0], strerror(-err));
		return 1;
	}
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * The counters of a link's root qdisc, read as a run reads them, on a
 * real line of namespaces h1 — r — h2 under the prefix "tlnl<pid>-"
 * (removed in .fini; lines of killed runs swept in .init): what r sends
 * toward h2 is counted frame by frame, and a device whose root is not a
 * qdisc of its own answers at once.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emu/nl.h"
#include "tests/lib/nettest.h"

#define TO_H2 1			/* our index for r's end toward h2 */
#define TO_H1 2			/* ... toward h1 */
#define PAYLOAD 1000		/* bytes of each datagram */
#define FRAME (PAYLOAD + 8 + 20 + 14)	/* + UDP, IPv4, Ethernet */
#define PORT 9

static struct nt_line line;

static void line_init(void)
{
	int err;

	if (geteuid() != 0)
		cr_skip_test("emulation tests need root");
	err = nt_line_own(&line, "tlnl");
	cr_assert_eq(err, 0, "cannot build the line: %s", strerror(-err));
}

static void line_fini(void)
{
	nt_line_down(&line);
}

TestSuite(nl, .init = line_init, .fini = line_fini, .timeout = 60);

/* n datagrams from h1 to h2, each read by h2 before this returns. */
static void send_through(int tx, int rx, int n)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	char buf[PAYLOAD];

	memset(buf, 'x', sizeof(buf));
	cr_assert_eq(inet_pton(AF_INET, NT_H2_ADDR, &to.sin_addr), 1);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(sendto(tx, buf, sizeof(buf), 0,
				    (struct sockaddr *)&to, sizeof(to)),
			     (ssize_t)sizeof(buf), "send: %s",
			     strerror(errno));
		/* read before the next: nothing waits in a queue unseen */
		cr_assert_eq(recv(rx, buf, sizeof(buf), 0),
			     (ssize_t)sizeof(buf), "receive: %s",
			     strerror(errno));
	}
}

Test(nl, a_root_qdisc_counts_each_frame_it_sent)
{
	struct sockaddr_in at = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	struct timeval tv = { .tv_sec = 10 };
	struct nl *nl = nl_open(line.r);
	struct nl_qstats a, b;
	int tx, rx, e;

	cr_assert(nl, "cannot open netlink in %s", line.r);
	cr_assert_eq(nl_map(nl, TO_H2, NT_R_H2), 0, "%s", nl_error(nl));
	cr_assert_eq(nl_tbf(nl, TO_H2, NT_R_H2, 100000000, 16384, 1 << 20),
		     0);
	cr_assert_eq(nl_commit(nl), 0, "%s", nl_error(nl));
	tx = nt_socket(line.h1, AF_INET, SOCK_DGRAM, 0);
	rx = nt_socket(line.h2, AF_INET, SOCK_DGRAM, 0);
	cr_assert(tx >= 0 && rx >= 0, "cannot make the sockets");
	cr_assert_eq(setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)),
		     0);
	cr_assert_eq(bind(rx, (struct sockaddr *)&at, sizeof(at)), 0,
		     "bind: %s", strerror(errno));
	/* r learns h2's address first: its ARP is not one of the frames */
	send_through(tx, rx, 1);
	e = nl_qdisc_stats(nl, TO_H2, &a);
	cr_assert_eq(e, 0, "first reading: %s", strerror(-e));
	send_through(tx, rx, 25);
	e = nl_qdisc_stats(nl, TO_H2, &b);
	cr_assert_eq(e, 0, "second reading: %s", strerror(-e));
	cr_expect_eq(b.packets - a.packets, 25);
	cr_expect_eq(b.bytes - a.bytes, 25 * FRAME, "%llu bytes, not %d",
		     (unsigned long long)(b.bytes - a.bytes), 25 * FRAME);
	cr_expect_eq(b.drops, a.drops);
	/* again, right away: the answer is the reading's, not an old one */
	e = nl_qdisc_stats(nl, TO_H2, &a);
	cr_assert_eq(e, 0);
	cr_expect_eq(a.bytes, b.bytes);
	close(tx);
	close(rx);
	nl_close(nl);
}

Test(nl, a_device_without_a_qdisc_of_its_own_answers_at_once)
{
	struct nl *nl = nl_open(line.r);
	struct nl_qstats q = { 1, 1, 1 };
	uint64_t t0;
	int e;

	cr_assert(nl, "cannot open netlink in %s", line.r);
	cr_assert_eq(nl_map(nl, TO_H1, NT_R_H1), 0, "%s", nl_error(nl));
	t0 = nt_now_ns();
	e = nl_qdisc_stats(nl, TO_H1, &q);
	/*
	 * A veth's own root (noqueue) counts nothing: some kernels answer
	 * the ask with an error, others with its zeros; none is waited for.
	 */
	cr_expect(e != -ETIMEDOUT && nt_now_ns() - t0 < 1000000000ull,
		  "the answer took %.3f s", (nt_now_ns() - t0) / 1e9);
	if (e)
		cr_expect_eq(q.bytes, 1, "the reading was written on an "
			     "error (%s)", strerror(-e));
	else
		cr_expect(q.bytes == 0 && q.packets == 0,
			  "noqueue counted %llu bytes",
			  (unsigned long long)q.bytes);
	nl_close(nl);
}

// SPDX-License-Identifier: MIT
/*
 * The worker's sockets tell how late their reader is: over the line
 * h1 — r — h2 (forwarded by r, as a worker's data is), a stamped socket
 * in h2 reports when the data waiting arrived — a time that stays as the
 * reader looks at it again — and, once it is read, when the next data
 * did, peeked or read. Root only; prefix "ws<pid>".
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "emu/wksock.h"
#include "emu/worker.h"
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

Test(wksock, the_oldest_waiting_byte_is_stamped_with_its_arrival)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(WK_PORT) };
	int lfd = nt_socket(line.h2, AF_INET, SOCK_STREAM, 0);
	int tx = nt_socket(line.h1, AF_INET, SOCK_STREAM, 0), rx;
	uint64_t t0, seen, later, first, again, at;
	char buf[2];

	cr_assert_geq(lfd, 0);
	cr_assert_geq(tx, 0);
	cr_assert_eq(inet_pton(AF_INET, NT_H2_ADDR, &sa.sin_addr), 1);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(lfd, 1), 0);
	cr_assert_eq(connect(tx, (struct sockaddr *)&sa, sizeof(sa)), 0);
	rx = wks_accept(lfd, 5);
	cr_assert_geq(rx, 0, "%s", strerror(-rx));
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

// SPDX-License-Identifier: MIT
/*
 * A worker started by a command (emu/remote.h): its link's frames, read
 * whole from a stream that delivers them in pieces; what is not a frame of
 * the link refused; the clocks matched within the bound said; the relay
 * handing on each report as its link's; `twinlab worker` refusing what is
 * not a harness. The run over such workers is in tests/emu/test_run.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/remote.h"
#include "tests/lib/tlrun.h"
#include "twin/clock.h"

static void frame(int fd, uint32_t magic, uint16_t type, uint16_t version,
		  uint32_t len, const void *payload)
{
	struct rm_hdr h = { .magic = magic, .type = type, .version = version,
			    .len = len };

	cr_assert_eq(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	if (payload)
		cr_assert_eq(write(fd, payload, len), (ssize_t)len);
}

/* A frame that comes a byte at a time is whole only at its last byte;
 * the next one after it is read as well. */
Test(link, a_frame_in_pieces_is_read_whole)
{
	struct rm_reader r = { 0 };
	struct wk_report rep = { .kind = WK_ROUND, .round = 7, .t_end = 42 };
	struct wk_go go = { .round = 3, .t0 = 99 };
	unsigned char bytes[sizeof(struct rm_hdr) + sizeof(rep)];
	struct rm_hdr h = { .magic = RM_MAGIC, .type = RM_REPORT,
			    .version = RM_VERSION, .len = sizeof(rep) };
	int p[2];

	cr_assert_eq(pipe2(p, O_NONBLOCK), 0);
	memcpy(bytes, &h, sizeof(h));
	memcpy(bytes + sizeof(h), &rep, sizeof(rep));
	cr_assert_eq(rm_reader_feed(&r, p[0]), 0, "nothing yet");
	for (size_t i = 0; i < sizeof(bytes); i++) {
		cr_assert_eq(write(p[1], bytes + i, 1), 1);
		cr_assert_eq(rm_reader_feed(&r, p[0]),
			     i + 1 == sizeof(bytes) ? 1 : 0, "byte %zu", i);
	}
	cr_assert_eq(r.type, RM_REPORT);
	cr_assert_eq(memcmp(r.buf, &rep, sizeof(rep)), 0);
	cr_assert_eq(rm_send(p[1], RM_GO, &go, sizeof(go)), 0);
	while (!rm_reader_feed(&r, p[0]))
		;
	cr_assert_eq(r.type, RM_GO);
	cr_assert_eq(memcmp(r.buf, &go, sizeof(go)), 0);
	close(p[1]);
	cr_assert_eq(rm_reader_feed(&r, p[0]), -EPIPE);
	close(p[0]);
}

/* A header that is not the link's: its magic, version, type or length. */
Test(link, what_is_not_a_frame_of_the_link_is_refused)
{
	const struct {
		uint32_t magic;
		uint16_t type, version;
		uint32_t len;
	} bad[] = {
		{ 0x12345678u, RM_GO, RM_VERSION, sizeof(struct wk_go) },
		{ RM_MAGIC, RM_GO, RM_VERSION + 1, sizeof(struct wk_go) },
		{ RM_MAGIC, 0, RM_VERSION, 0 },
		{ RM_MAGIC, RM_REPORT + 1, RM_VERSION, 8 },
		{ RM_MAGIC, RM_GO, RM_VERSION, sizeof(struct wk_go) + 1 },
		{ RM_MAGIC, RM_CONF, RM_VERSION, 1u << 30 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rm_reader r = { 0 };
		int p[2];

		cr_assert_eq(pipe(p), 0);
		/* the header alone: it is judged before any payload */
		frame(p[1], bad[i].magic, bad[i].type, bad[i].version,
		      bad[i].len, NULL);
		cr_assert_eq(rm_reader_feed(&r, p[0]), -EBADMSG, "case %zu",
			     i);
		close(p[0]);
		close(p[1]);
	}
}

/* A worker's end whose clock runs `ahead` ns before the harness's. */
struct fake {
	int in, out;
	int64_t ahead, told;
};

static void *fake_worker(void *arg)
{
	struct fake *f = arg;
	struct rm_reader r = { 0 };

	for (;;) {
		int e = rm_reader_feed(&r, f->in);

		if (e < 0)
			return NULL;
		if (!e)
			continue;
		if (r.type == RM_OFFSET) {
			memcpy(&f->told, r.buf, sizeof(f->told));
			return NULL;
		}
		if (r.type == RM_CLOCK) {
			struct rm_clock ck;

			memcpy(&ck, r.buf, sizeof(ck));
			ck.answered = mono_ns() + (uint64_t)f->ahead;
			if (rm_send(f->out, RM_CLOCK, &ck, sizeof(ck)))
				return NULL;
		}
	}
}

/*
 * rm_match_clocks against a worker's end played by `worker` on a thread
 * of its own (none: a worker that never answers), then joined; its
 * result.
 */
static int clocks_with(void *(*worker)(void *), struct fake *f, int ms,
		       const volatile sig_atomic_t *stop, uint64_t *err_ns)
{
	int to[2], from[2], e;
	pthread_t th;

	cr_assert_eq(pipe(to), 0);
	cr_assert_eq(pipe(from), 0);
	f->in = to[0];
	f->out = from[1];
	if (worker)
		cr_assert_eq(pthread_create(&th, NULL, worker, f), 0);
	e = rm_match_clocks(to[1], from[0], ms, stop, err_ns);
	if (worker)
		pthread_join(th, NULL);
	for (int k = 0; k < 2; k++) {
		close(to[k]);
		close(from[k]);
	}
	return e;
}

/*
 * The offset the worker is told is its clock's lead within half the
 * shortest round trip, which the harness says (the answer was read
 * between the question and its return: the bound holds whatever the
 * scheduler did meanwhile).
 */
Test(link, clocks_are_matched_within_half_a_round_trip)
{
	const int64_t aheads[] = { 5000000000, -3000000000, 0 };

	for (size_t i = 0; i < sizeof(aheads) / sizeof(aheads[0]); i++) {
		struct fake f = { .ahead = aheads[i], .told = INT64_MIN };
		uint64_t err_ns = UINT64_MAX;
		int64_t off;

		cr_assert_eq(clocks_with(fake_worker, &f, 10000, NULL,
					 &err_ns), 0);
		off = f.told - f.ahead;
		cr_assert_lt(err_ns, 1000000000u);
		cr_assert(off <= (int64_t)err_ns && -off <= (int64_t)err_ns,
			  "told %lld, ahead %lld, bound %llu ns",
			  (long long)f.told, (long long)f.ahead,
			  (unsigned long long)err_ns);
	}
}

/* A worker's end that never answers: the harness gives up in time. */
Test(link, a_worker_that_does_not_answer_is_given_up)
{
	int to[2], from[2];
	uint64_t err_ns;

	cr_assert_eq(pipe(to), 0);
	cr_assert_eq(pipe(from), 0);
	cr_assert_eq(rm_match_clocks(to[1], from[0], 50, NULL, &err_ns),
		     -ETIMEDOUT);
	close(from[1]);
	cr_assert_eq(rm_match_clocks(to[1], from[0], 50, NULL, &err_ns), -EPIPE);
	close(to[0]);
	close(to[1]);
	close(from[0]);
}

static struct wk_conf good_conf(void)
{
	return (struct wk_conf){
		.task = 0, .model = 1, .task_name = "t1", .rounds = 3,
		.first_round = 1, .timeout_s = 60, .dilation = 10,
		.train_s = 0.04, .agg_s = 0, .nbc = 0, .nuc = 0, .seed = 1,
		.nlocals = 3, .share = 1, .samples = 600, .classes = 10,
		.dim = 64, .bpp = 4, .chunk = 4096, .train_samples = 100,
	};
}

/* Each field a configuration from the link may get wrong is caught. */
Test(link, a_configuration_out_of_bounds_is_refused)
{
	struct wk_conf c = good_conf();
	char why[160];

	cr_assert_eq(rm_conf_check(&c, why, sizeof(why)), 0, "%s", why);
#define SPOILT(stmt) do { \
		c = good_conf(); \
		stmt; \
		cr_assert_eq(rm_conf_check(&c, why, sizeof(why)), -EINVAL, \
			     "%s accepted", #stmt); \
		cr_assert(strstr(why, "the configuration received: "), "%s", \
			  why); \
	} while (0)
	SPOILT(c.task = -1);
	SPOILT(memset(c.task_name, 'x', sizeof(c.task_name)));
	SPOILT(memset(c.netns, 'x', sizeof(c.netns)));
	SPOILT(c.rounds = 0);
	SPOILT(c.first_round = 4);
	SPOILT(c.timeout_s = 0);
	SPOILT(c.dilation = 0.5);
	SPOILT(c.train_s = -1);
	SPOILT(c.nbc = WK_MAX_CHILDREN + 1);
	SPOILT(c.nuc = -1);
	SPOILT(c.samples = 0);
	SPOILT(c.share = c.nlocals);
	SPOILT(c.samples = 1 << 26; c.dim = 1 << 20);
	SPOILT(c.bpp = 3);
	SPOILT(c.chunk = 2);
	SPOILT(c.chunk = 4097);
	SPOILT(c.train_samples = (int64_t)1 << 50);
	SPOILT(c.classes = 1 << 16; c.dim = 1 << 20; c.samples = 1);
	SPOILT(memset(&c.piped, 2, 1));
#undef SPOILT
}

/* The relay hands on a report as its link's task and model, and a frame
 * out of place as that worker's failure. */
Test(link, the_relay_says_each_report_as_its_links, .timeout = 20)
{
	struct wk_report rep = { .kind = WK_ROUND, .task = 9, .model = 9,
				 .round = 2 }, got;
	struct rm_clock ck = { 1, 2 };
	const struct rm_link *l2_link;
	int out[2], l1[2], l2[2];
	struct rm_relay *rl;

	cr_assert_eq(pipe(out), 0);
	cr_assert_eq(pipe(l1), 0);
	cr_assert_eq(pipe(l2), 0);
	rl = rm_relay_new(out[1]);
	cr_assert_not_null(rl);
	cr_assert_eq(rm_relay_add(rl, l1[0], 3, 1, NULL), 0);
	cr_assert_eq(rm_relay_add(rl, l2[0], 4, 2, &l2_link), 0);
	/* in two pieces */
	{
		struct rm_hdr h = { .magic = RM_MAGIC, .type = RM_REPORT,
				    .version = RM_VERSION,
				    .len = sizeof(rep) };

		cr_assert_eq(write(l1[1], &h, sizeof(h)), (ssize_t)sizeof(h));
		cr_assert_eq(write(l1[1], &rep, 100), 100);
		cr_assert_eq(write(l1[1], (char *)&rep + 100,
				   sizeof(rep) - 100),
			     (ssize_t)(sizeof(rep) - 100));
	}
	cr_assert_eq(read(out[0], &got, sizeof(got)), (ssize_t)sizeof(got));
	cr_assert_eq(got.kind, WK_ROUND);
	cr_assert_eq(got.task, 3);
	cr_assert_eq(got.model, 1);
	cr_assert_eq(got.round, 2);
	cr_assert_eq(rm_send(l2[1], RM_CLOCK, &ck, sizeof(ck)), 0);
	cr_assert_eq(read(out[0], &got, sizeof(got)), (ssize_t)sizeof(got));
	cr_assert_eq(got.kind, WK_FAIL);
	cr_assert_eq(got.task, 4);
	cr_assert_eq(got.model, 2);
	cr_assert(strstr(got.msg, "out of place"), "%s", got.msg);
	/* its link is closed after the failure is written: it ends */
	while (!rm_link_ended(l2_link))
		sched_yield();
	rm_relay_free(rl);
	close(l1[1]);
	close(l2[1]);
	close(out[0]);
	close(out[1]);
}

/* What is not a harness gets a reason and status 2, before any work. */
Test(link, the_worker_refuses_what_is_not_a_harness)
{
	char tmpl[] = "/tmp/tl-worker-XXXXXX", *err;
	struct wk_conf c = good_conf();
	int fd;

	tl_tmpfile(tmpl, "");
	cr_assert_eq(tl_status_on("worker", tmpl, &err), 2);
	cr_assert(strstr(err, "no configuration on stdin: it ended first"),
		  "%s", err);
	free(err);
	tl_write(tmpl, "GET / HTTP/1.0\r\n\r\n");
	cr_assert_eq(tl_status_on("worker", tmpl, &err), 2);
	cr_assert(strstr(err, "not a harness's"), "%s", err);
	free(err);
	/* a configuration out of bounds, framed as the link frames it */
	c.nbc = WK_MAX_CHILDREN + 1;
	fd = open(tmpl, O_WRONLY | O_TRUNC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(rm_send(fd, RM_CONF, &c, sizeof(c)), 0);
	close(fd);
	cr_assert_eq(tl_status_on("worker", tmpl, &err), 2);
	cr_assert(strstr(err, "more children than a worker takes"), "%s",
		  err);
	free(err);
	/* a good one, then the link ends before the clocks match */
	c = good_conf();
	fd = open(tmpl, O_WRONLY | O_TRUNC);
	cr_assert_eq(rm_send(fd, RM_CONF, &c, sizeof(c)), 0);
	close(fd);
	cr_assert_eq(tl_status_on("worker", tmpl, &err), 2);
	cr_assert(strstr(err, "the clocks were not matched"), "%s", err);
	free(err);
	unlink(tmpl);
}

/* A relay whose fleet does not read (it is stopping) is still stopped:
 * it waits for room, not in a write that would never return. */
Test(link, a_relay_stops_while_nobody_reads, .timeout = 20)
{
	struct wk_report rep = { .kind = WK_ROUND };
	char junk[4096] = { 0 };
	int out[2], l[2];
	struct rm_relay *rl;

	cr_assert_eq(pipe2(out, O_NONBLOCK), 0);
	while (write(out[1], junk, sizeof(junk)) > 0)
		;
	cr_assert_eq(errno, EAGAIN);
	cr_assert_eq(fcntl(out[1], F_SETFL, 0), 0);	/* as the fleet's */
	cr_assert_eq(pipe(l), 0);
	rl = rm_relay_new(out[1]);
	cr_assert_not_null(rl);
	cr_assert_eq(rm_relay_add(rl, l[0], 0, 0, NULL), 0);
	cr_assert_eq(rm_send(l[1], RM_REPORT, &rep, sizeof(rep)), 0);
	/* until the relay has read it all: it waits for room then */
	for (int left = 1; left;)
		cr_assert_eq(ioctl(l[0], FIONREAD, &left), 0);
	rm_relay_free(rl);
	close(l[1]);
	close(out[0]);
	close(out[1]);
}

/*
 * The offset is the worker's clock minus the harness's: a report's
 * instants go back by it, a round's start forward, and 0 (not set)
 * stays 0; there and back is the identity.
 */
Test(link, instants_cross_the_clocks_one_way_each)
{
	const int64_t off = 5000000000;
	struct wk_report rep = { .t_start = 7000000000u, .t_go = 6000000000u,
				 .t_end = 9000000000u, .t_child = { 8000000000u },
				 .late_ns = 123, .overrun_ns = 456 };
	struct wk_go go = { .round = 1, .t0 = 1000000000u };

	rm_report_to_harness(&rep, off);
	cr_assert_eq(rep.t_start, 2000000000u);
	cr_assert_eq(rep.t_go, 1000000000u);
	cr_assert_eq(rep.t_end, 4000000000u);
	cr_assert_eq(rep.t_child[0], 3000000000u);
	cr_assert_eq(rep.t_child[1], 0, "an instant not set moved");
	cr_assert_eq(rep.t_send, 0, "an instant not set moved");
	cr_assert_eq(rep.late_ns, 123, "a duration moved");
	cr_assert_eq(rep.overrun_ns, 456, "a duration moved");
	rm_go_to_worker(&go, off);
	cr_assert_eq(go.t0, 6000000000u);
	/* the root's go and its report of it agree on the harness's clock */
	rep = (struct wk_report){ .t_go = go.t0 };
	rm_report_to_harness(&rep, off);
	cr_assert_eq(rep.t_go, 1000000000u);
}

/* An answer to another question is not taken as this one's. */
static void *wrong_answer(void *arg)
{
	struct fake *f = arg;
	struct rm_reader r = { 0 };

	while (rm_reader_feed(&r, f->in) == 0)
		;
	{
		struct rm_clock ck = { .asked = 1, .answered = 2 };

		if (rm_send(f->out, RM_CLOCK, &ck, sizeof(ck)))
			return NULL;
	}
	return NULL;
}

Test(link, an_answer_to_another_question_is_refused)
{
	struct fake f = { 0 };
	uint64_t err_ns;

	cr_assert_eq(clocks_with(wrong_answer, &f, 10000, NULL, &err_ns),
		     -EPROTO);
}

/* A stop while waiting for the worker's answer gives up at once. */
Test(link, a_stop_ends_the_wait_for_a_clock)
{
	static volatile sig_atomic_t stop = 1;
	struct fake f = { 0 };
	uint64_t err_ns;

	cr_assert_eq(clocks_with(NULL, &f, 600000, &stop, &err_ns),
		     -ECANCELED);
}

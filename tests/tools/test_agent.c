// SPDX-License-Identifier: MIT
/*
 * A node's agent: each question answered in its own namespace, or with
 * the reason it cannot be; the run's end starting agents by a command,
 * naming a command that is not one, and ending them by their links.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/agent.h"
#include "emu/delayline.h"
#include "emu/lab.h"
#include "emu/lab_impl.h"
#include "tests/lib/tlrun.h"

static struct rm_answer answer(uint32_t what, const char *ifname,
			       const char *prefix, struct agent_node *dl)
{
	struct rm_ask q = { .what = what, .seq = 41 };
	struct rm_answer a;

	if (ifname)
		snprintf(q.ifname, sizeof(q.ifname), "%s", ifname);
	agent_answer(&q, prefix, dl, &a);
	cr_assert_eq(a.what, what);
	cr_assert_eq(a.seq, 41u, "the answer names its question");
	return a;
}

Test(agent, each_question_is_answered_or_refused_with_why)
{
	struct agent_node dl = { 0 };
	struct rm_ask q = { .what = RM_ASK_LINK };
	struct rm_answer a;

	a = answer(RM_ASK_HELLO, NULL, NULL, &dl);
	cr_assert(a.err == 0 && a.v[0] == RM_VERSION);
	a = answer(RM_ASK_TCP, NULL, NULL, &dl);
	cr_assert_eq(a.err, 0, "TCP: %s", strerror(-a.err));
	a = answer(RM_ASK_LINK, "tlnosuch0", NULL, &dl);
	cr_assert_eq(a.err, -ENODEV);
	cr_assert(!a.v[0] && !a.v[1] && !a.v[2]);
	memset(q.ifname, 'x', sizeof(q.ifname));	/* no terminator */
	agent_answer(&q, NULL, &dl, &a);
	cr_assert_eq(a.err, -EINVAL);
	a = answer(RM_ASK_DELAY, NULL, NULL, &dl);
	cr_assert_eq(a.err, -ENOENT, "no prefix, no delay line");
	a = answer(RM_ASK_DELAY, NULL, "tlnolab", &dl);
	cr_assert_eq(a.err, -ENOENT);
	a = answer(99, NULL, NULL, &dl);
	cr_assert_eq(a.err, -EINVAL);
	cr_assert_null(dl.dl);
	agent_node_release(&dl);
}

/* A delay line's counters as its node's agent reads them: the worst
 * lateness is since the last question. */
Test(agent, the_delay_line_is_read_and_its_worst_reset)
{
	char prefix[16], dir[64], path[96];
	struct dl_live *live;
	struct agent_node dl = { 0 };
	struct rm_answer a;

	if (geteuid() != 0)
		cr_skip_test("needs root (%s)", LAB_STATE_DIR);
	snprintf(prefix, sizeof(prefix), "tlag%d", (int)getpid() % 100000);
	snprintf(dir, sizeof(dir), "%s/%s", LAB_STATE_DIR, prefix);
	mkdir(LAB_STATE_DIR, 0755);
	cr_assert(!mkdir(dir, 0700) || errno == EEXIST);
	live = lab_live_create(prefix);
	cr_assert_not_null(live, "%s", strerror(errno));
	atomic_store(&live->accepted, 5);
	atomic_store(&live->late_ns_sum, 100);
	atomic_store(&live->late_ns_max, 7);
	a = answer(RM_ASK_DELAY, NULL, prefix, &dl);
	cr_assert_eq(a.err, 0, "%s", strerror(-a.err));
	cr_assert(a.v[0] == 5 && a.v[1] == 100 && a.v[2] == 7);
	a = answer(RM_ASK_DELAY, NULL, prefix, &dl);
	cr_assert(a.v[0] == 5 && a.v[2] == 0, "the worst since the last");
	agent_node_release(&dl);
	lab_delay_live_close(live);
	lab_live_path(prefix, path, sizeof(path));
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(rmdir(dir), 0);
}

/* The link's end ends it well; a frame that is not a question, badly. */
Test(agent, the_agent_ends_with_its_link_and_refuses_what_is_not_a_question)
{
	char tmpl[] = "/tmp/tl-agent-XXXXXX", *err;
	struct rm_ask q = { .what = RM_ASK_HELLO };
	int64_t off = 0;
	int fd;

	tl_tmpfile(tmpl, "");
	cr_assert_eq(tl_status_on("agent", tmpl, &err), 0, "%s", err);
	free(err);
	fd = open(tmpl, O_WRONLY | O_TRUNC);
	cr_assert_eq(rm_send(fd, RM_ASK, &q, sizeof(q)), 0);
	cr_assert_eq(rm_send(fd, RM_OFFSET, &off, sizeof(off)), 0);
	close(fd);
	cr_assert_eq(tl_status_on("agent", tmpl, &err), 2);
	cr_assert(strstr(err, "a frame that is not a question"), "%s", err);
	free(err);
	tl_write(tmpl, "GET / HTTP/1.0\r\n\r\n");
	cr_assert_eq(tl_status_on("agent", tmpl, &err), 2);
	free(err);
	unlink(tmpl);
}

/* Agents started by a command answer through it and end with their
 * links; a command that ends, or echoes, is named with its node. */
Test(agent, agents_started_by_a_command_answer_and_end, .timeout = 60)
{
	char *bin = getenv("TWINLAB"), err[512];
	char *const good[] = { bin, "agent", "--prefix", "{prefix}", NULL };
	char *const gone[] = { "/bin/true", "{node}", NULL };
	char *const echo[] = { "/bin/cat", NULL };
	const char *nodes[] = { "s1", "r1" }, *pfx[] = { "tlno1", "tlno2" };
	const char *bad[] = { "tlno1", "Bad!" };
	struct agents *ag;
	uint64_t v[RM_ANSWER_VALUES];

	cr_assert_not_null(bin, "TWINLAB is not set");
	cr_assert_eq(agents_start(good, nodes, pfx, 2, NULL, &ag, err,
				  sizeof(err)), 0, "%s", err);
	cr_assert_eq(agents_find(ag, "r1"), 1);
	cr_assert_eq(agents_find(ag, "r2"), -1);
	cr_assert_eq(agents_ask(ag, 0, RM_ASK_TCP, NULL, v), 0);
	cr_assert_eq(agents_ask(ag, 1, RM_ASK_LINK, "tlnosuch0", v), -ENODEV);
	cr_assert_eq(agents_ask(ag, 1, RM_ASK_DELAY, NULL, v), -ENOENT);
	cr_assert_eq(agents_ask(ag, 1, RM_ASK_PART, NULL, v), -ENOENT);
	agents_stop(ag);
	/* {prefix} is r1's own: a prefix its agent refuses ends it */
	cr_assert_lt(agents_start(good, nodes, bad, 2, NULL, &ag, err,
				  sizeof(err)), 0);
	cr_assert(strstr(err, "the agent on 'r1' (started by '") &&
		  strstr(err, "did not answer: it ended"), "%s", err);
	cr_assert_lt(agents_start(gone, nodes, pfx, 2, NULL, &ag, err,
				  sizeof(err)), 0);
	cr_assert(strstr(err, "the agent on 's1' (started by '/bin/true') "
			 "did not answer: it ended"), "%s", err);
	cr_assert_eq(agents_start(echo, nodes, pfx, 1, NULL, &ag, err,
				  sizeof(err)), -EPROTO);
	cr_assert(strstr(err, "what came back is not an agent's answer"),
		  "%s", err);
	/* every child reaped: none is left to wait for */
	cr_assert_eq(waitpid(-1, NULL, WNOHANG), -1);
	cr_assert_eq(errno, ECHILD);
}

// SPDX-License-Identifier: MIT
/*
 * The state file as input (emu/labstate.h): what `down` and `clean` may
 * act on is only what the prefix could have written. No root needed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/labstate.h"

static struct lab_state parse(const char *text, int want)
{
	struct lab_state st;

	cr_assert_eq(lab_state_parse(text, strlen(text), "tl", &st), want);
	return st;
}

Test(labstate, a_state_as_written)
{
	struct lab_state st = parse(
		"twinlab-state 1\nscenario scenarios/my ring.yaml\n"
		"scheduler mst\ndilation 256\nnetns tl-A\nnetns tl-s1\n"
		"pid 4242 98765 tl-delay /usr/local/bin/twinlab\n"
		"pid 4343 98770 tl-traf /usr/local/bin/twinlab\n"
		"pid 4444 98771 tl-other /usr/local/bin/twinlab\n", 0);

	cr_expect_str_eq(st.scenario, "scenarios/my ring.yaml");
	cr_expect_str_eq(st.scheduler, "mst");
	cr_expect_float_eq(st.dilation, 256, 1e-12);
	cr_assert_eq(st.nnetns, 2);
	cr_expect_str_eq(st.netns[0], "tl-A");
	cr_expect_str_eq(st.netns[1], "tl-s1");
	cr_assert_eq(st.npids, 2, "the delay line and a traffic generator");
	cr_expect_eq(st.pids[0].pid, 4242);
	cr_expect_eq(st.pids[0].start, 98765);
	cr_expect_str_eq(st.pids[0].name, "tl-delay");
	cr_expect_str_eq(st.pids[0].exe, "/usr/local/bin/twinlab");
	cr_expect_eq(st.pids[1].pid, 4343);
	cr_expect_str_eq(st.pids[1].name, "tl-traf");
	cr_expect_eq(st.rejected, 1, "a process of no name of the prefix's");
	lab_state_release(&st);
}

/* A node's part (up --node) and a split's hosts (up --hosts). */
Test(labstate, a_part_and_a_split_as_written)
{
	struct lab_state st = parse(
		"twinlab-state 1\nscenario x.yaml\nscheduler mst\n"
		"dilation 1\npart r1\nnetns tl--h1\nnetns tl--h12\n"
		"netns tl--u\nnetns tl--h0\nnetns tl--hx\nnetns tl--h1234\n"
		"netns tl--x\npart ../r1\n", 0);

	cr_expect_str_eq(st.part, "r1");
	cr_assert_eq(st.nnetns, 3);
	cr_expect_str_eq(st.netns[0], "tl--h1");
	cr_expect_str_eq(st.netns[1], "tl--h12");
	cr_expect_str_eq(st.netns[2], "tl--u");
	cr_expect_eq(st.rejected, 5, "h0, hx, h1234, x and a path");
	lab_state_release(&st);
}

Test(labstate, not_a_state_file)
{
	parse("", -EINVAL);
	parse("netns tl-A\n", -EINVAL);
	parse("twinlab-state 2\nnetns tl-A\n", -EINVAL);
}

/* Each line below was once enough to make `down` act outside its prefix. */
Test(labstate, entries_outside_the_prefix_are_not_kept)
{
	char big[6000];
	struct lab_state st;

	st = parse("twinlab-state 1\n"
		   "netns other-A\n"		/* another prefix's */
		   "netns tle-A\n"		/* a prefix that starts alike */
		   "netns tl-../../etc\n"	/* a path */
		   "netns tl-\n"		/* no node */
		   "netns tl-a.b\n"		/* not a node name */
		   "pid 1 5 tl-delay /sbin/init\n"	/* init */
		   "pid 77 5 sshd /usr/sbin/sshd\n"	/* not our name */
		   "pid 78 5 tl-delay relative/exe\n"	/* not absolute */
		   "pid 79 0 tl-delay /bin/x\n"		/* no start time */
		   "dilation 0.5\ndilation nan\n"
		   "scheduler ../x\n"
		   "mount /\n", 0);
	cr_expect_eq(st.nnetns, 0);
	cr_expect_eq(st.npids, 0);
	cr_expect_eq(st.dilation, 0);
	cr_expect_str_eq(st.scheduler, "");
	cr_expect_eq(st.rejected, 13);
	lab_state_release(&st);
	/* an over-long line is skipped whole, never read as two entries */
	memset(big, 'a', sizeof(big));
	snprintf(big, sizeof(big), "twinlab-state 1\nscenario ");
	big[strlen(big)] = 'a';
	memcpy(big + 5000, "netns tl-A\n", 12);
	st = parse(big, 0);
	cr_expect_eq(st.nnetns, 0, "a line was read in parts");
	cr_expect_eq(st.rejected, 1);
	lab_state_release(&st);
}

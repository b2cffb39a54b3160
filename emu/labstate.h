/* SPDX-License-Identifier: MIT */
/*
 * The state file of a prefix (LAB_STATE_DIR/<prefix>/state), read as
 * input: a run leaves it, an editor or a crash may have changed it, and
 * `down` and `clean` act on it. Parsing keeps only entries this prefix
 * could have written:
 *
 *   twinlab-state 1                   first line, else nothing is kept
 *   scenario PATH                     the scenario file it was built from
 *   scheduler NAME
 *   dilation N                        1 <= N <= LAB_DILATION_MAX
 *   part NODE                         only that node's part is built here
 *                                     (lab_opts.node)
 *   digest HEX                        lab_digest of what was built: 16
 *                                     hex digits, not 0
 *   netns <prefix>-<node>             node: a scenario node name, or a
 *                                     split's "-h<k>" or "-u" (lab_split.c)
 *   pid PID START NAME EXE            a process of the emulation: NAME
 *                                     is lab_delay_name(prefix) (the delay
 *                                     line's supervisor) or
 *                                     lab_traffic_name(prefix) (a run's
 *                                     traffic generator), EXE an absolute
 *                                     path
 *
 * A line is taken whole or not at all (an over-long one is never read in
 * parts); anything else is counted as rejected. Whether a recorded
 * process still is the one recorded is for the caller to check.
 */
#ifndef EMU_LABSTATE_H
#define EMU_LABSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LAB_STATE_DIR "/run/twinlab"
#define LAB_PREFIX_MAX 12

/* The most dilation an emulation accepts (rates / N stay >= 1 kbit/s). */
#define LAB_DILATION_MAX 10000.0

/* Valid prefix: 1-LAB_PREFIX_MAX of [a-z0-9], starting with a letter. */
bool lab_prefix_ok(const char *prefix);

#define LAB_STATE_FILE_MAX (1 << 20)	/* bytes read of a state file */
#define LAB_STATE_LINE_MAX 4200	/* longest line kept (PATH_MAX + key) */

struct lab_state_pid {
	pid_t pid;
	unsigned long long start;	/* clock ticks since boot */
	char name[16];			/* one of the names above */
	char exe[LAB_STATE_LINE_MAX];
};

struct lab_state {
	char scenario[1024];		/* "" if absent */
	char scheduler[64];		/* "" if absent */
	double dilation;		/* 0 if absent */
	char part[64];			/* "" if absent */
	uint64_t digest;		/* lab_digest; 0 if absent */
	char (*netns)[64];
	int nnetns;
	struct lab_state_pid *pids;
	int npids;
	int rejected;			/* lines not kept */
};

/*
 * lab_state_parse - the entries of text[0..len) that prefix could have
 * written. 0 (st filled; lab_state_release it), -EINVAL (not a state
 * file: no header; st empty) or -ENOMEM.
 */
int lab_state_parse(const char *text, size_t len, const char *prefix,
		    struct lab_state *st);

/*
 * lab_state_read - lab_state_parse of prefix's state file, read only if
 * it is a regular file, and at most LAB_STATE_FILE_MAX bytes of it.
 * -ENOENT when there is none.
 */
int lab_state_read(const char *prefix, struct lab_state *st);

void lab_state_release(struct lab_state *st);

/* The name the delay line's supervisor gives itself: "<prefix:9>-delay". */
void lab_delay_name(const char *prefix, char *buf, size_t len);

/* The name a run's traffic generator gives itself: "<prefix:9>-traf". */
void lab_traffic_name(const char *prefix, char *buf, size_t len);

#endif

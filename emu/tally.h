/* SPDX-License-Identifier: MIT */
/*
 * What a teardown removed: each object counted, and named to the caller's
 * report callback when there is one (cgroup_sweep, lab_down).
 */
#ifndef EMU_TALLY_H
#define EMU_TALLY_H

struct tally {
	void (*report)(const char *what, void *arg);
	void *arg;
	int count;
};

/* tally_say - one more object removed, described by fmt. */
void tally_say(struct tally *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif

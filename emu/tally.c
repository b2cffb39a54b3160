// SPDX-License-Identifier: MIT
/* What a teardown removed, counted and reported; see tally.h. */
#include "tally.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

void tally_say(struct tally *t, const char *fmt, ...)
{
	/* room for a cgroup's full name under a mount point */
	char buf[2 * PATH_MAX];
	va_list ap;

	t->count++;
	if (!t->report)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	t->report(buf, t->arg);
}

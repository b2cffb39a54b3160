// SPDX-License-Identifier: MIT
/* The report's sections after the runs' own, in report.md's order. */
#include "tools/report/report.h"

const struct report_section report_sections[] = {
	{"blocking", load_blocking, write_blocking, release_blocking},
	{"gap", load_gap, write_gap, release_gap},
	{"subsets", NULL, write_subsets, NULL},
	{"timelines", NULL, write_timelines, NULL},
};

const int report_nsections =
	(int)(sizeof(report_sections) / sizeof(report_sections[0]));

_Static_assert(sizeof(report_sections) / sizeof(report_sections[0]) <=
		       sizeof(((struct report *)0)->section_md) /
			       sizeof(char *),
	       "a section without room for its markdown");

// SPDX-License-Identifier: MIT
/* Namespace names (emu/netns.h): only names of /run/netns itself. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "emu/netns.h"

Test(netns, names_that_lead_elsewhere_are_refused)
{
	static const char *const bad[] = { "", ".", "..", "../etc", "a/b",
					   "/run/netns/x" };
	char longname[NETNS_NAME_MAX + 1];

	memset(longname, 'a', NETNS_NAME_MAX);
	longname[NETNS_NAME_MAX] = '\0';
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_not(netns_name_ok(bad[i]), "'%s'", bad[i]);
		cr_expect_eq(netns_open(bad[i]), -EINVAL, "'%s'", bad[i]);
		cr_expect_eq(netns_del(bad[i]), -EINVAL, "'%s'", bad[i]);
		cr_expect_eq(netns_add(bad[i], 0), -EINVAL, "'%s'",
			     bad[i]);
		cr_expect_not(netns_exists(bad[i]), "'%s'", bad[i]);
	}
	cr_expect_not(netns_name_ok(longname));
	longname[NETNS_NAME_MAX - 1] = '\0';
	cr_expect(netns_name_ok(longname));
	cr_expect(netns_name_ok("tl-s01"));
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the state file (emu/labstate.h), which `down` and
 * `clean` act on: whatever the bytes, what is kept must be something the
 * prefix could have written — namespaces "<prefix>-<node>" with no '/' and
 * no "..", the supervisor's name, an absolute executable, a dilation in
 * range — and nothing may crash, leak or overrun. The first byte picks
 * one of a few prefixes. Seed corpus: tests/fuzz/state/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emu/lab.h"
#include "emu/labstate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const prefixes[] = { "tl", "tle", "kc123",
						"abcdefghijkl" };
	const char *prefix;
	struct lab_state st;
	char want[16];
	size_t pl;

	if (size < 1)
		return 0;
	prefix = prefixes[data[0] % 4];
	pl = strlen(prefix);
	if (lab_state_parse((const char *)data + 1, size - 1, prefix, &st))
		return 0;
	lab_delay_name(prefix, want, sizeof(want));
	for (int i = 0; i < st.nnetns; i++) {
		const char *ns = st.netns[i];

		if (strncmp(ns, prefix, pl) || ns[pl] != '-' ||
		    strchr(ns, '/') || strstr(ns, "..") || !ns[pl + 1])
			abort();
	}
	for (int i = 0; i < st.npids; i++)
		if (st.pids[i].pid <= 1 || !st.pids[i].start ||
		    st.pids[i].exe[0] != '/' || strchr(st.pids[i].exe, '\n'))
			abort();
	if (st.dilation != 0 &&
	    !(st.dilation >= 1 && st.dilation <= LAB_DILATION_MAX))
		abort();
	if (strchr(st.scenario, '\n') || strchr(st.scheduler, '/'))
		abort();
	lab_state_release(&st);
	return 0;
}

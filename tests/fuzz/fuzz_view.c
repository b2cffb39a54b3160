// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the live view's routing (tools/view/route.h): an
 * input is a method, a path and a token, NUL-separated. Whatever they
 * are, nothing but the exact token passes (403 otherwise), a change is a
 * POST to /cut or /repair, an asset is one of the list by its exact name,
 * and every answer is one of the statuses said. Seeds: tests/fuzz/view/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/view/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char tok[] = "0123456789abcdef0123456789abcdef";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[512], *part[3] = {NULL, NULL, NULL};
	struct view_route r;
	size_t k = 0, at = 0;

	if (size >= sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	/* method \0 path \0 token: a missing part is NULL */
	while (k < 3 && at <= size) {
		part[k++] = buf + at;
		at += strlen(buf + at) + 1;
	}
	r = view_route(part[0], part[1], part[2], tok);
	if (r.status != 200 && r.status != 400 && r.status != 403 &&
	    r.status != 404 && r.status != 405)
		abort();
	if ((r.status == 200) != (r.what != VIEW_REFUSED))
		abort();
	if (r.status != 200)
		return 0;
	if (!part[2] || strcmp(part[2], tok))
		abort(); /* passed without the token */
	if ((r.what == VIEW_CUT || r.what == VIEW_REPAIR ||
	     r.what == VIEW_TRAFFIC)
		    ? strcmp(part[0], "POST") ||
			      strcmp(part[1], r.what == VIEW_CUT ? "/cut"
					      : r.what == VIEW_REPAIR
						      ? "/repair"
						      : "/traffic")
		    : strcmp(part[0], "GET") && strcmp(part[0], "HEAD"))
		abort();
	if (r.what == VIEW_ASSET && (!r.asset || strcmp(r.asset->url, part[1])))
		abort();
	if (r.what == VIEW_TOPOLOGY && strcmp(part[1], "/topology"))
		abort();
	if (r.what == VIEW_STREAM && strcmp(part[1], "/events"))
		abort();
	return 0;
}

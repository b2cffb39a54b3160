// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for a worker's link (emu/remote.h), whose bytes come
 * from a command on another host: whatever they are, and however a relay
 * cuts them, the reader hands on only frames of the link (the one length
 * of their type), says a stream that is not one as such, and a
 * configuration it accepts keeps a worker's bounds. The first byte sets
 * how the rest is cut into reads; a header refused resets the reader,
 * so reading on is safe. Seed corpus: tests/fuzz/link/.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/remote.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rm_reader r = { 0 };
	size_t piece, at = 1;
	int p[2], e = 0;

	if (size < 1 || size > 60000 || pipe2(p, O_NONBLOCK))
		return 0;
	piece = (size_t)data[0] % 64 + 1;
	while (e != -EPIPE) {
		/* a refused header leaves the reader reset: reading on
		 * takes the next bytes as a header, never a length read by */
		if (e == -EBADMSG && r.have)
			abort();
		if (e < 0 && e != -EBADMSG)
			abort();
		if (at < size) {
			size_t n = size - at < piece ? size - at : piece;

			if (write(p[1], data + at, n) != (ssize_t)n)
				abort();
			at += n;
		} else if (p[1] >= 0) {
			close(p[1]);
			p[1] = -1;
		}
		e = rm_reader_feed(&r, p[0]);
		if (e == 1) {
			char why[160];
			struct wk_conf c;

			if (r.hdr.len != rm_payload_len(r.type) || !r.hdr.len)
				abort();
			if (r.type != RM_CONF)
				continue;
			memcpy(&c, r.buf, sizeof(c));
			if (rm_conf_check(&c, why, sizeof(why)))
				continue;
			/* what a worker indexes and allocates by */
			{
				unsigned char piped;

				memcpy(&piped, &c.piped, 1);
				if (c.nbc > WK_MAX_CHILDREN ||
				    c.nuc > WK_MAX_CHILDREN || c.nbc < 0 ||
				    c.nuc < 0 || piped > 1 ||
				    c.share >= c.nlocals ||
				    !memchr(c.task_name, 0,
					    sizeof(c.task_name)) ||
				    (double)(c.samples + WK_TEST_SAMPLES) *
						    c.dim > 1e9 ||
				    (double)c.classes * (c.dim + 1) > 1e9 ||
				    c.chunk % c.bpp)
					abort();
			}
		}
	}
	if (p[1] >= 0)
		close(p[1]);
	close(p[0]);
	return 0;
}

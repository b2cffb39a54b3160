// SPDX-License-Identifier: MIT
/* The global model kept between a task's roots (emu/worker.h, wk_kept). */
#include "worker.h"

#include <errno.h>
#include <sys/uio.h>

int wk_keep(int fd, const struct fl_model *m, unsigned r)
{
	size_t n = m->nparams, slot = wk_kept_slot(n);
	struct wk_kept k = { .magic = WK_KEPT_MAGIC, .round = r, .nparams = n,
			     .digest = fl_digest(m->w, n * sizeof(float)) };
	struct iovec iov[2] = { { &k, sizeof(k) },
				{ m->w, n * sizeof(float) } };
	ssize_t got;

	if (fd < 0)
		return 0;
	got = pwritev(fd, iov, 2, (off_t)((r % 2) * slot));
	return got == (ssize_t)slot ? 0 : got < 0 ? -errno : -EIO;
}

int wk_take(int fd, struct fl_model *m, unsigned r)
{
	size_t n = m->nparams, slot = wk_kept_slot(n);
	struct wk_kept k;
	struct iovec iov[2] = { { &k, sizeof(k) },
				{ m->w, n * sizeof(float) } };
	ssize_t got;

	if (fd < 0)
		return -EBADF;
	got = preadv(fd, iov, 2, (off_t)((r % 2) * slot));
	if (got < 0)
		return -errno;
	if (got != (ssize_t)slot || k.magic != WK_KEPT_MAGIC ||
	    k.round != r || k.nparams != n ||
	    k.digest != fl_digest(m->w, n * sizeof(float)))
		return -EBADMSG;
	return 0;
}

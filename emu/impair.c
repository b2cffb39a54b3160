// SPDX-License-Identifier: MIT
/* The impairment kinds, in the order they are started; see impair.h. */
#include "impair.h"

#include <errno.h>
#include <stdlib.h>

static const struct impair_ops *const kinds[] = {
	&impair_loss_ops,
	&impair_delay_ops,
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

struct impair {
	bool on[NKINDS];
	void *priv[NKINDS];
};

struct impair *impair_new(unsigned mask)
{
	struct impair *im = calloc(1, sizeof(*im));

	if (!im)
		return NULL;
	for (size_t i = 0; i < NKINDS; i++) {
		im->on[i] = (mask & kinds[i]->bit) != 0;
		if (!im->on[i])
			continue;
		im->priv[i] = calloc(1, kinds[i]->priv_size);
		if (!im->priv[i]) {
			impair_free(im);
			return NULL;
		}
	}
	return im;
}

int impair_add(struct impair *im, const struct impair_hop *h, char *err,
	       size_t len)
{
	for (size_t i = 0; i < NKINDS; i++) {
		int e = im->on[i] ? kinds[i]->add(im->priv[i], h, err, len) : 0;

		if (e)
			return e;
	}
	return 0;
}

int impair_start(struct impair *im, const struct impair_env *env, char *err,
		 size_t len)
{
	for (size_t i = 0; i < NKINDS; i++) {
		int e = im->on[i] && kinds[i]->start ?
			kinds[i]->start(im->priv[i], env, err, len) : 0;

		if (e)
			return e;
	}
	return 0;
}

void impair_free(struct impair *im)
{
	if (!im)
		return;
	for (size_t i = 0; i < NKINDS; i++) {
		if (im->priv[i] && kinds[i]->release)
			kinds[i]->release(im->priv[i]);
		free(im->priv[i]);
	}
	free(im);
}

/* SPDX-License-Identifier: MIT */
/*
 * Numbers as a user writes them on the command line or in an experiment
 * file, parsed strictly: the whole string, no sign where none belongs, no
 * leading space, no hex, nothing after, within the range the caller names.
 * These only parse; the caller says what is wrong, with the range.
 */
#ifndef TOOLS_ARGS_H
#define TOOLS_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* parse_uint - digits only, value in [min, max]. 0 or -EINVAL. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * parse_real - a finite decimal number ("0.5", "2e-3"; no "nan", "inf",
 * hex or leading space) in [min, max]. 0 or -EINVAL.
 */
int parse_real(const char *s, double min, double max, double *out);

/*
 * parse_dilation - "auto" (*n 0), "auto:N" or "N", N in [1, max].
 * 0 or -EINVAL.
 */
int parse_dilation(const char *s, double max, double *n, bool *auto_n);

#endif

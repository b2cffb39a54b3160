/* SPDX-License-Identifier: MIT */
/*
 * A running maximum kept in an atomic counter that several threads (or
 * processes sharing its memory) raise and a reader may reset to 0.
 */
#ifndef EMU_ATOMIC_MAX_H
#define EMU_ATOMIC_MAX_H

#include <stdatomic.h>
#include <stdint.h>

/* atomic_max_u64 - raise *p to v if v is larger (relaxed: a statistic). */
static inline void atomic_max_u64(_Atomic uint64_t *p, uint64_t v)
{
	uint64_t old = atomic_load_explicit(p, memory_order_relaxed);

	while (v > old &&
	       !atomic_compare_exchange_weak_explicit(p, &old, v,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

#endif

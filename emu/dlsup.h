/* SPDX-License-Identifier: MIT */
/*
 * The delay line's supervisor: a process of its own (a new session, named
 * by lab_delay_name) that runs delayline_run() in a child at real-time
 * priority and starts it again if it dies — it holds no state the kernel
 * does not: held packets are lost with it, new ones queue in the kernel
 * until it is back — at most DLSUP_RESTARTS times. SIGTERM stops both.
 */
#ifndef EMU_DLSUP_H
#define EMU_DLSUP_H

#include <stddef.h>
#include <sys/types.h>

#include "delayline.h"

#define DLSUP_RESTARTS 20
#define DLSUP_READY_MS 10000

/*
 * dlsup_start - fork the supervisor for queues q[0..n), named name,
 * publishing to live (a shared mapping, or NULL; see struct dl_live). It
 * inherits no descriptor of the caller, and it starts nothing until
 * record(pid, start, ctx) has returned 0: the caller writes it down where
 * `down` and `clean` find it (if the caller dies first, the supervisor
 * sees end of file and leaves). Then it waits until every queue is bound
 * (DLSUP_READY_MS at most). Returns the supervisor's pid, or -errno with
 * the reason in err; when recording failed nothing was started.
 */
pid_t dlsup_start(const struct dl_queue *q, int n, const char *name,
		  struct dl_live *live,
		  int (*record)(pid_t pid, unsigned long long start,
				void *ctx),
		  void *ctx, char *err, size_t len)
	__attribute__((warn_unused_result));

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The delay line's supervisor: a process of its own (a new session, named
 * by lab_delay_name) that runs delayline_run() in children at real-time
 * priority, one line per CPU (at most DLSUP_LINES_MAX) over the queues of
 * its share of the namespaces, and starts a line again if it dies — it
 * holds no state the kernel does not: held packets are lost with it, new
 * ones queue in the kernel until it is back — at most DLSUP_RESTARTS
 * times in all. A verdict forwards what it accepts on through the kernel
 * in the line's own thread, so the lines share the network's work over
 * the cores. SIGTERM stops them all.
 */
#ifndef EMU_DLSUP_H
#define EMU_DLSUP_H

#include <stddef.h>
#include <sys/types.h>

#include "delayline.h"

#define DLSUP_RESTARTS 20
#define DLSUP_LINES_MAX 8
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

/* SPDX-License-Identifier: MIT */
/*
 * Teardown "until the kernel finished".
 *
 * Deleting a named namespace only drops a reference. Once the last one is
 * gone (not necessarily when the delete returns: the sockets of a process
 * that has exited, for one, are freed after an RCU grace period) the
 * kernel queues the namespace for cleanup_net(), a single work item on the
 * "netns" workqueue, which never runs twice at once and takes whatever is
 * queued as one batch: unhash (and RTM_DELNSID to every namespace that had
 * an id for it), synchronize_rcu(), the pernet exit methods (the devices
 * are unregistered in default_device_exit_batch()), rcu_barrier(), free.
 *
 * The watcher lives in its own namespace W. Every namespace about to be
 * torn down gets an nsid in W (RTM_NEWNSID with its fd: nothing is added
 * to the namespace itself). A thread listening in W (RTNLGRP_NSID and
 * RTNLGRP_LINK) timestamps each event as it arrives:
 *
 *   start  the last watched namespace's RTM_DELNSID: every one of them
 *          has been taken by a cleanup_net() run (a lower bound on done).
 *   done   at `start` the thread deletes a sentinel, an empty namespace
 *          made in advance with its own nsid in W. Its cleanup_net() run
 *          can only begin after the run holding the last watched
 *          namespace has returned, and its RTM_DELNSID is sent at the
 *          beginning of that run: an upper bound on "the kernel finished",
 *          late by at most the sentinel's deletion (an unmount) and the
 *          start of its run; watch_empty_ns() measures that alone.
 *   gone   optional (veth = true): the namespace also gets a veth pair
 *          whose other end is in W; its RTM_DELLINK says the namespace's
 *          devices are unregistered. Costs one more veth per namespace in
 *          the teardown being measured; a cross-check of start/done.
 */
#ifndef BENCH_EMU_WATCH_H
#define BENCH_EMU_WATCH_H

#include <stdbool.h>

struct watch;

/* The times of one teardown (CLOCK_MONOTONIC), see above; 0 = not seen. */
struct watch_times {
	double start, gone, done;
};

/*
 * watch_new - make the watcher namespace "<prefix>-w" and its listener.
 * NULL with errno on failure.
 */
struct watch *watch_new(const char *prefix);

/* Remove the watcher's namespaces (W and any sentinel left). NULL is fine. */
void watch_free(struct watch *w);

/*
 * watch_add - watch the namespace open at nsfd: an nsid now, and with veth
 * a watcher veth, created by watch_arm() (the fd is dup'ed until then).
 */
int watch_add(struct watch *w, int nsfd, bool veth)
	__attribute__((warn_unused_result));

/*
 * watch_arm - create the queued veths and the sentinel, and start the
 * listener thread, which gives up timeout_s from now. Start the teardown
 * after this returns. 0 or -errno.
 */
int watch_arm(struct watch *w, double timeout_s)
	__attribute__((warn_unused_result));

/*
 * watch_wait - wait until every watched namespace has started its cleanup
 * (and lost its watcher veth), and the sentinel after them. 0, -ETIMEDOUT,
 * -EINTR (stop signal) or -errno; *t as far as seen.
 */
int watch_wait(struct watch *w, struct watch_times *t);

/* Resyncs in the last wait (events lost: times approximate). */
int watch_resyncs(const struct watch *w);

/*
 * watch_empty_ns - median over `reps` of the time from deleting an empty
 * namespace to its RTM_DELNSID with nothing else being torn down: the
 * sentinel's own share of `done`. Seconds, or a negative -errno.
 */
double watch_empty_ns(struct watch *w, int reps);

#endif

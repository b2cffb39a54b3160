/* SPDX-License-Identifier: MIT */
/*
 * The fleet: every worker of every scheduled task, started, driven round
 * by round and stopped. All tasks start a round together (as the twin's
 * prediction assumes); a round ends when every task has finished it or
 * failed. A task fails when one of its workers reports a failure, dies or
 * times out: its workers are ended (by PID) and the other tasks go on.
 */
#ifndef EMU_FLEET_H
#define EMU_FLEET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>

#include "emu/worker.h"
#include "twin/addr.h"
#include "twin/plan.h"
#include "twin/select.h"

enum { FLEET_LEFT = 1, FLEET_LOST = 2 };	/* fleet_opts.leave */

struct fleet_opts {
	const char *prefix;
	unsigned rounds;
	double timeout_s;	/* a round's deadline */
	double dilation;	/* emulated seconds per scenario second (>= 1) */
	bool cgroups;		/* put each worker in its own cgroup */
	/*
	 * NULL: fork each worker into its server's namespace. Else a
	 * command that starts one on another host, in its server's
	 * container (emu/remote.h), its words' `{node}` the server's name:
	 * `docker exec -i clab-LAB-{node} /twinlab/twinlab worker`, and
	 * `{prefix}` the prefix (with parts, the server's part's:
	 * lab_part_prefix). Such workers get no cgroup here (their
	 * container is theirs) and count their own CPU.
	 */
	char *const *via;
	bool parts;		/* the emulation is a deployment of parts */
	int samples_per_local;	/* data set size per local model */
	/* set (by a signal handler) to give up waiting for workers */
	const volatile sig_atomic_t *stop;
	/* NULL, or set by another thread to end the round being waited for
	 * (the run is planned again: a cut from its live view) */
	const atomic_bool *halt;
	/*
	 * Per task (NULL: none): set by another thread when the task leaves
	 * in the middle of a round (FLEET_LEFT: its routes are about to go):
	 * its workers are ended at once, as fleet_task_end, not timed out;
	 * or when it is lost (FLEET_LOST: nothing reaches its servers any
	 * more): it fails at once, with lost_why[t] (written before) as the
	 * reason.
	 */
	atomic_int *leave;
	char (*lost_why)[256];
	/*
	 * Per task (NULL: none): its global model is carried on by a later
	 * task (fleet_task_resume), so its root keeps it after every round
	 * (in memory the fleet holds; no other root spends that).
	 */
	const bool *carried;
	/*
	 * A process the emulation cannot work without (the delay line's
	 * supervisor), as a pidfd (watch set): when it ends, every live
	 * task fails at once with watch_what as the reason instead of
	 * timing out.
	 */
	bool watch;
	int watch_fd;
	const char *watch_what;
};

/* One task's round, as measured. */
struct fleet_task_round {
	bool done, failed;
	char why[256];
	struct wk_report *rep;	/* per model, valid when done */
	uint64_t msg_bytes;	/* one transfer: header + model payload */
	double cpu_s;		/* CPU its workers used this round (cgroups;
				 * the workers' own count without them) */
	/* scenario seconds (measured emulated time / dilation) */
	double bcast_s, compute_s, upload_s, round_s;
	double skew_s;		/* the root started this late after t0 */
	double late_max_s;	/* how late the workers' event loops handled
				 * compute deadlines or read what they
				 * awaited, summed along the worst path of
				 * a tree, scenario seconds */
	double late_last_s;	/* the same along the way that ended the
				 * round last, its upload and broadcast
				 * paths together (fleet_late_last): it
				 * can exceed late_max_s, which takes each
				 * path alone; the monitor judges this */
	int overruns;		/* compute phases whose arithmetic overran */
	double overrun_max_s;	/* the worst, scenario seconds */
	double overrun_stretch;	/* the most an overrun phase took of the
				 * host time it was given (> 1), or 0 */
	bool check_ok;		/* global = weighted mean of the locals */
	double check_err, check_tol;
};

struct fleet;

/*
 * fleet_start - start every worker of p (its emulation must be up under
 * o->prefix) and wait until all listen. 0 or -errno with a message.
 */
int fleet_start(const struct plan *p, const struct addressing *a,
		const struct fleet_opts *o, struct fleet **out, char *err,
		size_t len) __attribute__((warn_unused_result));

/*
 * Every task starts the round at one absolute time t0, a margin after the
 * go messages are written: each root sleeps until t0 (its lateness is the
 * start skew, reported).
 */
#define FLEET_GO_MARGIN_NS 20000000u

/*
 * fleet_round - run round r of every live task, starting at `at`
 * (CLOCK_MONOTONIC ns), so a caller can predict the round it will be; 0,
 * or one less than half FLEET_GO_MARGIN_NS away, takes the margin from
 * now. res[t] per task (in plan order). Returns the number of tasks that
 * completed the round.
 */
int fleet_round(struct fleet *f, unsigned r, uint64_t at,
		struct fleet_task_round *res);

/*
 * fleet_task_start - start the workers of task t, blocked in the fleet's
 * plan, as q places it (a plan of the same tasks with the same addresses:
 * an epoch of twin/lpset.h, its network brought in), to run from the
 * fleet's round r to its last. Its rounds are numbered from its first (its
 * workers') and reported under the fleet's. 0, or -errno with a message
 * (the task is then failed). It starts (see fleet_admit).
 */
int fleet_task_start(struct fleet *f, const struct plan *q, int t,
		     unsigned r, char *err, size_t len)
	__attribute__((warn_unused_result));

/*
 * fleet_task_resume - start the workers of task t, which carries task prev
 * on over new trees (an incarnation of twin/lpset.h: the same task, its
 * own addresses), as q places it, at the fleet's round r; prev's workers
 * are ended first if they run. The task's rounds go on from the one after
 * prev's last completed (the round in flight when it moved is run again),
 * its root from the global model prev's root kept after that round, and
 * are reported under the task's own numbers. 0, or -errno with a message
 * (t is then failed). It starts (see fleet_admit).
 */
int fleet_task_resume(struct fleet *f, const struct plan *q, int t, int prev,
		      unsigned r, char *err, size_t len)
	__attribute__((warn_unused_result));

/*
 * A task started (fleet_task_start, fleet_task_resume) is starting: its
 * workers set up and connect (a handshake crosses the dilated network)
 * while the others' rounds go on without it, until fleet_admit finds it
 * ready and puts it in the rounds.
 *
 * fleet_ready - wait until the workers of every starting task listen (or
 * fail): all at once, side by side. How many did not start (they are
 * failed; the first one's reason in err, which may be NULL).
 */
int fleet_ready(struct fleet *f, char *err, size_t len);

/*
 * fleet_admit - without waiting, put every starting task that is ready in
 * the rounds from the fleet's round r on (its next round is r); one that
 * is not ready after the fleet's timeout fails. joined[t] (per task) says
 * which joined now; returns how many.
 */
int fleet_admit(struct fleet *f, unsigned r, bool *joined);

/* Whether task t is starting: started, not yet in the rounds. */
bool fleet_starting(const struct fleet *f, int t);

/* fleet_task_end - end task t's workers (by PID): it left, no failure. */
void fleet_task_end(struct fleet *f, int t);

/*
 * fleet_train_from - from the next round on, each running local's
 * compute phase is the one q gives it (work / its share of its server's
 * cores: tasks that came or went change how many share them), and each
 * aggregator's time to fold its children in likewise. q lists the
 * fleet's tasks, with the same addresses (an epoch of twin/lpset.h).
 */
void fleet_train_from(struct fleet *f, const struct plan *q);

/*
 * fleet_clock_error_ns - for workers started through o.via, the most any
 * one's clock may be off this host's after they were matched (half the
 * shortest round trip of its link); 0 for forked workers.
 */
uint64_t fleet_clock_error_ns(const struct fleet *f);

/* Whether task t's workers run: started, not ended, not failed. */
bool fleet_running(const struct fleet *f, int t);

/* Whether task t has failed (and why). */
bool fleet_failed(const struct fleet *f, int t, const char **why);

/* Training samples per local model unless fleet_opts says otherwise. */
#define FLEET_SAMPLES_PER_LOCAL 200

/*
 * fleet_worker_bytes - the memory worker m of task t holds at its peak:
 * the model, its aggregate, wire buffers, one buffer per upload it
 * receives, its data and the bytes its sockets may hold; estimated from
 * the sizes the worker allocates. samples_per_local <= 0: the default.
 * Infinity for a model that has no wire format or no size.
 */
double fleet_worker_bytes(const struct plan *p, int t, int m,
			  int samples_per_local);

/*
 * fleet_check_memory - before anything is built: every worker fits the
 * memory its server declares (memory_mib, its cgroup's limit), and, if
 * here (they run on this machine), all of them fit the memory it has
 * available. 0, or -E2BIG with
 * a message naming the task (file:line:col), the server and both sizes.
 */
int fleet_check_memory(const struct plan *p, int samples_per_local,
		       bool here, char *err, size_t len)
	__attribute__((warn_unused_result));

/*
 * fleet_learning - how the workers of task t of sc learn (seed, pool, test
 * set, model shape, training budget per round), for twin/select.h to
 * compute what they will. samples_per_local <= 0: the default. 0 or
 * -EINVAL (no wire format for its model), -EOVERFLOW.
 */
int fleet_learning(const struct scenario *sc, int t, int samples_per_local,
		   struct sel_learning *l) __attribute__((warn_unused_result));

/* CPU share each worker of task t, model m gets (cores). */
double fleet_cpu_share(const struct plan *p, int t, int m);

/* fleet_stop - end every worker still running (by PID), reap, free. */
void fleet_stop(struct fleet *f);

/*
 * fleet_cgroup_name - worker m of task t's cgroup: the task's name and the
 * model ("t1-0"); a task that carries an earlier one on (the same name:
 * twin/lpset.h) adds its index after a '+', which no task name holds, so
 * no two workers' names meet ("t1+3-0" is not task "t1.3"'s "t1.3-0").
 */
void fleet_cgroup_name(const char *task, int t, bool carried, int m,
		       char *buf, size_t len);

#endif

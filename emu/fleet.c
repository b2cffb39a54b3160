// SPDX-License-Identifier: MIT
/*
 * Starting and driving the workers. Each worker is a forked child that
 * enters its server's namespace (and its own cgroup) and runs worker_run();
 * no program is executed and no shell is involved. All report on one pipe
 * (records under PIPE_BUF, so writes do not interleave); each task's root
 * has its own pipe that starts a round.
 */
#include "fleet.h"
#include "fleet_impl.h"
#include "twin/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/cgroup.h"
#include "emu/forkgate.h"
#include "emu/lab.h"
#include "emu/netns.h"
#include "emu/proc.h"
#include "emu/remote.h"
#include "emu/spawn.h"
#include "emu/traingate.h"
#include "twin/net.h"
#include "twin/predict.h"

/* Places in the training gate for workers started later than the fleet
 * (tasks that arrive or move in a timeline: their epochs' trees) */
#define FLEET_GATE_SPARE 256

/* How long a command started through o.via has to end by itself once its
 * link is closed, before it is killed. */
#define FLEET_LINK_GRACE_NS 5000000000u

double fleet_cpu_share(const struct plan *p, int t, int m)
{
	return predict_cpu_share(p, p->tasks[t].server[m]);
}

static int tree_depth(const struct tree *tr, int nmodels)
{
	int depth = 0;

	for (int m = 1; m < nmodels; m++) {
		int d = 0;

		for (int v = m; v > 0 && d <= nmodels; v = tr->parent[v])
			d++;
		if (d > depth)
			depth = d;
	}
	return depth;
}

/*
 * A worker started by a command may outlive its command's process (a
 * container runtime does not end what it started in the container when
 * its exec client is killed): its link closing ends it.
 */
static void close_links(struct ftask *ft)
{
	for (int m = 0; m < ft->nmodels; m++) {
		if (ft->w[m].remote && ft->w[m].ctl >= 0) {
			close(ft->w[m].ctl);
			ft->w[m].ctl = -1;
		}
		if (ft->w[m].from >= 0) {
			close(ft->w[m].from);
			ft->w[m].from = -1;
		}
	}
}

/*
 * Close task ft's go and its workers' links, then give the commands of
 * workers started through o.via until deadline (CLOCK_MONOTONIC ns) to
 * end by themselves: their workers see the link end and exit, and with
 * them a command that waits for them (docker exec, or a wrapper that a
 * SIGKILL would not pass on). Whatever is left is killed by the caller.
 */
static void end_links(struct ftask *ft, uint64_t deadline)
{
	if (ft->go_fd >= 0) {
		close(ft->go_fd);
		ft->go_fd = -1;
	}
	close_links(ft);
	for (int m = 0; m < ft->nmodels; m++) {
		struct fworker *w = &ft->w[m];

		if (w->remote && w->pid > 0 && !w->exited &&
		    spawn_wait_until(w->pid, deadline, &w->status))
			w->exited = true;
	}
}

static void kill_task(struct fleet *f, int t, const char *why)
{
	struct ftask *ft = &f->t[t];

	if (!ft->failed) {
		ft->failed = true;
		snprintf(ft->why, sizeof(ft->why), "%s", why);
	}
	ft->live = false;
	ft->starting = false;
	end_links(ft, mono_ns() + FLEET_LINK_GRACE_NS);
	for (int m = 0; m < ft->nmodels; m++)
		if (ft->w[m].pid > 0 && !ft->w[m].exited)
			kill(ft->w[m].pid, SIGKILL);
}

/*
 * Reap exited workers; a worker gone early fails its task. When several
 * went at once, a worker killed by a signal is the cause (its peers only
 * saw their connections reset), then one that exited with an error.
 */
/* Whether the kernel's OOM killer ended w (for its cgroup's limit). */
static bool oom_killed(struct fworker *w)
{
	uint64_t n = 0;

	return WIFSIGNALED(w->status) && WTERMSIG(w->status) == SIGKILL &&
	       w->cg && !cg_oom_kills(w->cg, &n) && n > 0;
}

/*
 * Reap the workers that ended and fail their tasks, naming the first one
 * killed by a signal, else the first that exited non-zero. With
 * signals_only, an exit is reaped but names nothing: a worker that fails
 * reports why before it exits, and its report is the better reason.
 */
static void reap(struct fleet *f, bool final, bool signals_only)
{
	for (int t = 0; t < f->p->ntasks; t++) {
		struct ftask *ft = &f->t[t];
		int sig = -1, bad = -1;
		char why[256];

		for (int m = 0; m < ft->nmodels; m++) {
			struct fworker *w = &ft->w[m];

			/* a command's worker may have failed and said why: its
			 * report comes through the relay, after the command
			 * has gone; its exit counts once its link has ended */
			if (w->pid <= 0 || w->exited ||
			    (!final && w->link && !rm_link_ended(w->link)) ||
			    waitpid(w->pid, &w->status, final ? 0 : WNOHANG) !=
				    w->pid)
				continue;
			w->exited = true;
			traingate_forget(f->gate, w->gate_slot);
			if (WIFSIGNALED(w->status) && sig < 0)
				sig = m;
			else if (WIFEXITED(w->status) &&
				 WEXITSTATUS(w->status) && bad < 0)
				bad = m;
		}
		if (signals_only)
			bad = -1;
		if (final || !ft->live || (sig < 0 && bad < 0))
			continue;
		if (sig >= 0 && oom_killed(&ft->w[sig]))
			snprintf(why, sizeof(why), "worker on %s (model %d) was "
				 "killed by the kernel's OOM killer: it needed "
				 "more than the server's memory_mib %g",
				 fleet_server_of(f, t, sig)->name,
				 sig, fleet_server_of(f, t, sig)->memory_mib);
		else if (sig >= 0)
			snprintf(why, sizeof(why), "worker on %s (model %d) was "
				 "killed by signal %d (%s)",
				 fleet_server_of(f, t, sig)->name,
				 sig, WTERMSIG(ft->w[sig].status),
				 strsignal(WTERMSIG(ft->w[sig].status)));
		else
			snprintf(why, sizeof(why), "worker on %s (model %d) "
				 "exited with status %d",
				 fleet_server_of(f, t, bad)->name,
				 bad, WEXITSTATUS(ft->w[bad].status));
		kill_task(f, t, why);
	}
}

void fleet_cgroup_name(const char *task, int t, bool carried, int m,
		       char *buf, size_t len)
{
	if (carried)
		snprintf(buf, len, "%s+%d-%d", task, t, m);
	else
		snprintf(buf, len, "%s-%d", task, m);
}

static void worker_cg(const struct fleet *f, int t, int m, char *buf,
		    size_t len)
{
	fleet_cgroup_name(f->p->tasks[t].task->name, t,
			  scenario_task_first(f->p->sc, t) != t, m, buf, len);
}

/*
 * Start task t's worker m through o.via: its link is its ctl (and, once
 * the clocks are matched, the root's go); link_open follows.
 */
static int spawn_via(struct fleet *f, int t, int m, struct wk_conf *c,
		     char *err, size_t len)
{
	struct ftask *ft = &f->t[t];
	int to, from;
	pid_t pid;

	if (c->model_fd >= 0) {
		snprintf(err, len, "task '%s' carries a global model on over "
			 "new trees, which its root keeps on the harness's "
			 "host: workers started by a command cannot",
			 ft->plan->tasks[t].task->name);
		return -EOPNOTSUPP;
	}
	{
		const struct plan *p = ft->plan;
		char pfx[LAB_PREFIX_MAX + 16];

		if (f->o.parts)
			lab_part_prefix(f->o.prefix, p->tasks[t].server[m], pfx,
					sizeof(pfx));
		else
			snprintf(pfx, sizeof(pfx), "%s", f->o.prefix);
		pid = rm_start(f->o.via, fleet_server_of(f, t, m)->name, pfx,
			       c, &to, &from, err, len);
	}
	if (pid < 0)
		return (int)pid;
	ft->w[m].pid = pid;
	ft->w[m].remote = true;
	ft->w[m].ctl = to;
	ft->w[m].from = from;
	return 0;
}

/*
 * Worker m of task t, started through o.via: match its clock, then its
 * reports go through the relay and (the root) its go over its link.
 */
static int link_open(struct fleet *f, int t, int m, char *err, size_t len)
{
	struct fworker *w = &f->t[t].w[m];
	uint64_t clock_err = 0;
	int e;

	if (!f->relay) {
		f->relay = rm_relay_new(f->report_wr);
		if (!f->relay)
			return -errno;
	}
	e = rm_match_clocks(w->ctl, w->from, (int)(f->o.timeout_s * 1000),
			    f->o.stop, &clock_err);
	if (e) {
		snprintf(err, len, "the worker on '%s' (started by '%s') did "
			 "not answer: %s", fleet_server_of(f, t, m)->name,
			 f->o.via[0], e == -EPIPE ? "it ended" :
			 e == -ETIMEDOUT ? "no answer in time" :
			 e == -ECANCELED ? "the run was stopped first" :
			 e == -EBADMSG || e == -EPROTO ?
			 "what it sent is not a worker's" : strerror(-e));
		return e;
	}
	if (clock_err > f->clock_err_ns)
		f->clock_err_ns = clock_err;
	e = rm_relay_add(f->relay, w->from, t, m, &w->link);
	w->from = -1;	/* the relay's, closed by it even on failure */
	if (!e && m == 0) {
		f->t[t].go_fd = fcntl(w->ctl, F_DUPFD_CLOEXEC, 0);
		if (f->t[t].go_fd < 0)
			e = -errno;
	}
	return e;
}

/*
 * Start task t's worker m as c (filled, its listening sockets made unless
 * started through o.via), reporting on rfd and, the root, taking each
 * round's go from go_rd. The conf's listening sockets are the child's:
 * closed here either way.
 */
static int spawn(struct fleet *f, int t, int m, struct wk_conf *c, int rfd,
		 int go_rd, char *err, size_t len)
{
	struct ftask *ft = &f->t[t];
	pid_t pid;

	/* a place of its own in the gate, never used again */
	c->gate = f->o.via ? NULL : f->gate;
	c->gate_slot = c->gate && f->gate_next < f->gate_slots ?
			       f->gate_next++ : -1;
	ft->w[m].gate_slot = c->gate_slot;
	c->report_fd = rfd;
	c->go_fd = m == 0 ? go_rd : -1;
	c->ctl_fd = -1;
	ft->w[m].ctl = -1;
	ft->w[m].train_s = c->train_s;
	ft->w[m].agg_s = c->agg_s;
	if (f->o.via)
		return spawn_via(f, t, m, c, err, len);
	{
		int ctl[2];

		if (pipe2(ctl, O_CLOEXEC | O_NONBLOCK)) {
			int e = -errno;

			fleet_unlisten(c);
			return e;
		}
		c->ctl_fd = ctl[0];
		ft->w[m].ctl = ctl[1];
	}
	pid = forkgate_fork();
	if (pid < 0) {
		int e = -errno;

		snprintf(err, len, "cannot fork a worker: %s", strerror(errno));
		if (c->ctl_fd >= 0)
			close(c->ctl_fd);
		fleet_unlisten(c);
		return e;
	}
	if (pid == 0) {
		int saved;

		const char *host = fleet_server_of(f, t, m)->name;

		signal(SIGPIPE, SIG_IGN);
		if (ft->w[m].cg && cg_attach_self(ft->w[m].cg))
			_exit(3);
		if (netns_enter(c->netns, &saved))
			_exit(4);
		close(saved);
		/*
		 * Its own hostname (the server's) and mount table cost a
		 * clone of two small structures. A PID namespace would need
		 * another process per worker (the first child of a new one is
		 * its init), so workers share the host's PIDs, which is also
		 * how the harness ends them.
		 */
		if (unshare(CLONE_NEWUTS | CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    sethostname(host, strlen(host)))
			_exit(5);
		/*
		 * Only its own descriptors: the harness holds every earlier
		 * worker's control pipe (the 480th of the demo's largest
		 * point had 610 open), and each was closed again at exit.
		 */
		{
			int keep[5 + WK_MAX_CHILDREN] = {
				c->report_fd, c->go_fd, c->ctl_fd, c->model_fd,
				c->lfd_bcast
			};

			for (int i = 0; i < c->nuc; i++)
				keep[5 + i] = c->lfd_up[i];
			proc_close_but(keep, 5 + c->nuc);
		}
		_exit(worker_run(c));
	}
	ft->w[m].pid = pid;
	if (c->ctl_fd >= 0)
		close(c->ctl_fd);
	fleet_unlisten(c);
	return 0;
}

/*
 * Has any child exited? One waitid that reaps nothing, so that a report
 * costs one system call here, not a waitpid per worker.
 */
static bool child_exited(void)
{
	siginfo_t si = { 0 };

	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid != 0;
}

static void take_report(struct fleet *f, uint32_t kind, unsigned r);

/* Whether a report is waiting on the pipe. */
static bool report_ready(const struct fleet *f)
{
	struct pollfd p = { .fd = f->report_fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/*
 * Whether collect waits for task ft's reports of kind: a live task's; one
 * still starting sends READY only, and rounds do not wait for it.
 */
static bool waited(const struct ftask *ft, uint32_t kind)
{
	return ft->live && ft->ngot < ft->nmodels &&
	       (kind == WK_READY || !ft->starting);
}

/* Read reports until every live task has `want` of kind for round r. */
static void collect(struct fleet *f, uint32_t kind, unsigned r,
		    uint64_t deadline)
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = f->report_fd, .events = POLLIN },
			{ .fd = f->o.watch ? f->o.watch_fd : -1,
			  .events = POLLIN },
		};
		uint64_t now = mono_ns();
		bool waiting = false;
		int ms;

		/* a task that left: ended before its routes go, no failure;
		 * one that is lost fails with its reason */
		for (int t = 0; f->o.leave && t < f->p->ntasks; t++) {
			int why = f->t[t].live ? atomic_load(&f->o.leave[t]) : 0;

			if (why == FLEET_LOST)
				kill_task(f, t, f->o.lost_why ?
						f->o.lost_why[t] : "it is lost");
			else if (why)
				fleet_task_end(f, t);
		}
		/*
		 * A worker writes its report before it exits: read what is
		 * waiting first, so a failure is named by its own message,
		 * not by the exit status that follows it.
		 */
		while (report_ready(f))
			take_report(f, kind, r);
		if (child_exited())
			reap(f, false, false);
		if (f->watch_gone)
			for (int t = 0; t < f->p->ntasks; t++)
				if (f->t[t].live)
					kill_task(f, t, f->o.watch_what ?
							     f->o.watch_what :
							     "a process the "
							     "emulation needs "
							     "ended");
		for (int t = 0; t < f->p->ntasks; t++)
			waiting = waiting || waited(&f->t[t], kind);
		if (!waiting || (f->o.stop && *f->o.stop) ||
		    (f->o.halt && atomic_load(f->o.halt)))
			return;
		if (now >= deadline) {
			for (int t = 0; t < f->p->ntasks; t++) {
				struct ftask *ft = &f->t[t];
				char why[256];
				int m = 0;

				if (!waited(ft, kind))
					continue;
				while (m < ft->nmodels && ft->got[m])
					m++;
				snprintf(why, sizeof(why), "worker on %s (model "
					 "%d) timed out after %.0f s",
					 fleet_server_of(f, t, m)->name, m,
					 f->o.timeout_s);
				kill_task(f, t, why);
			}
			return;
		}
		ms = (int)((deadline - now) / 1000000u) + 1;
		if (poll(p, 2, ms > 100 ? 100 : ms) <= 0)
			continue;
		if (p[1].revents) {
			f->watch_gone = true;	/* the pidfd: it ended */
			continue;
		}
		if (p[0].revents & POLLIN)
			take_report(f, kind, r);
	}
}

/* One report from the pipe: a failure, or what collect() waits for. */
static void take_report(struct fleet *f, uint32_t kind, unsigned r)
{
	struct wk_report rep;
	struct ftask *ft;
	char why[300];

	if (read(f->report_fd, &rep, sizeof(rep)) != sizeof(rep))
		return;
	if (rep.task < 0 || rep.task >= f->p->ntasks)
		return;
	ft = &f->t[rep.task];
	if (rep.model < 0 || rep.model >= ft->nmodels || !ft->live)
		return;
	if (rep.kind == WK_FAIL) {
		/*
		 * A worker that sees its peer's connection reset reports
		 * first; the peer's death by a signal is the cause. Give the
		 * kernel a moment to let us reap it, and name that worker.
		 * Workers that exited (the reporter among them) name nothing:
		 * this report is the reason.
		 */
		for (int i = 0; i < 20 && ft->live; i++) {
			reap(f, false, true);
			if (ft->live)
				usleep(10000);
		}
		if (!ft->live)
			return;
		rep.msg[sizeof(rep.msg) - 1] = '\0';
		snprintf(why, sizeof(why), "worker on %s (model %d): %s",
			 fleet_server_of(f, rep.task, rep.model)->name,
			 rep.model, rep.msg);
		kill_task(f, rep.task, why);
		return;
	}
	/* one starting says it is ready, whatever the others do */
	if (ft->starting)
		kind = WK_READY;
	/* the task's own round: it may have started after the fleet's 1 */
	if (rep.kind != kind ||
	    (kind == WK_ROUND && rep.round != (int32_t)(r - ft->first + 1)) ||
	    ft->got[rep.model])
		return;
	ft->rep[rep.model] = rep;
	ft->got[rep.model] = true;
	ft->ngot++;
}

static void task_reset(struct ftask *ft);

static void reset_round(struct fleet *f)
{
	for (int t = 0; t < f->p->ntasks; t++)
		if (!f->t[t].starting)	/* it counts its READY */
			task_reset(&f->t[t]);
}

/*
 * Task t as q places it, its round 1 the fleet's round `first`, its
 * workers' first round `from` (1 unless they carry it on).
 */
static int task_init(struct fleet *f, const struct plan *q, int t,
		     unsigned first, unsigned from, char *err, size_t len)
{
	const struct task_plan *tp = &q->tasks[t];
	struct ftask *ft = &f->t[t];
	struct wire_msg wm;
	int e;

	ft->plan = q;
	ft->first = first;
	ft->from = from;
	ft->nmodels = tp->nmodels;
	ft->w = calloc((size_t)tp->nmodels, sizeof(*ft->w));
	ft->rep = calloc((size_t)tp->nmodels, sizeof(*ft->rep));
	ft->got = calloc((size_t)tp->nmodels, sizeof(*ft->got));
	if (!ft->w || !ft->rep || !ft->got)
		return -ENOMEM;
	for (int m = 0; m < tp->nmodels; m++)
		ft->w[m].ctl = ft->w[m].from = ft->w[m].gate_slot = -1;
	e = wire_message(q->sc, tp->task, &wm);
	if (e) {
		snprintf(err, len, "task '%s': %s", tp->task->name,
			 e == -EINVAL ? "no wire format for its "
			 "bytes_per_parameter (use 1, 2, 4 or 8)" :
			 "model too large");
		return e;
	}
	ft->dim = wm.dim;
	ft->nparams = wm.nparams;
	ft->wire = wm.payload;
	ft->depth = tree_depth(&tp->up, tp->nmodels);
	ft->live = true;
	return 0;
}

/*
 * Task t's workers' cgroups (forked workers), made before any worker is
 * forked. libcgroup allocates as it works, and after a fork every store
 * to a page of this process is a copy-on-write fault (on a
 * paravirtualised host, with a TLB flush costing tens of us): made
 * between the forks, they were half of this process's faults while the
 * workers started.
 */
static int task_cgroups(struct fleet *f, int t, char *err, size_t len)
{
	struct ftask *ft = &f->t[t];

	for (int m = 0; f->o.cgroups && !f->o.via && m < ft->nmodels; m++) {
		char name[64];
		uint64_t mem = (uint64_t)(fleet_server_of(f, t, m)->memory_mib *
					  1048576.0);

		worker_cg(f, t, m, name, sizeof(name));
		/*
		 * No CPU quota: a quota cannot express the compute model
		 * (short bursts never exhaust one), the compute phase's
		 * deadline does. The cgroup limits memory and accounts CPU.
		 */
		ft->w[m].cg = cg_new(f->o.prefix, name, 0, mem, err, len);
		if (!ft->w[m].cg)
			return errno ? -errno : -EIO;
	}
	return 0;
}

/*
 * Fork task t's workers (task_init and task_cgroups done). A listening
 * socket that cannot be made on its address fails the task alone, as its
 * worker failing to listen did (*alone set): the others go on.
 */
static int task_spawn(struct fleet *f, int t, char *err, size_t len,
		      bool *alone)
{
	struct ftask *ft = &f->t[t];
	struct wk_conf *cs;
	int go[2], e = 0;

	/* where the root keeps the global model, for whoever carries the
	 * task on (kept in memory, gone with the fleet) */
	if (ft->model_fd < 0 && f->o.carried && f->o.carried[t]) {
		ft->model_fd = memfd_create("twinlab-model", MFD_CLOEXEC);
		if (ft->model_fd < 0 ||
		    ftruncate(ft->model_fd,
			      (off_t)(2 * wk_kept_slot(ft->nparams))))
			return -errno;
	}
	cs = calloc((size_t)ft->nmodels, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	for (int m = 0; m < ft->nmodels; m++)
		fleet_fill_conf(f, t, m, &cs[m]);
	if (f->o.via) {	/* the root's go goes over its link */
		for (int m = 0; m < ft->nmodels && !e; m++)
			e = spawn(f, t, m, &cs[m], f->report_wr, -1, err, len);
		for (int m = 0; m < ft->nmodels && !e; m++)
			e = link_open(f, t, m, err, len);
		free(cs);
		return e;
	}
	/* every listening socket before the first fork (fleet_conf.c) */
	for (int m = 0; m < ft->nmodels && !e; m++)
		e = fleet_listen(&cs[m], fleet_server_of(f, t, m)->name, err,
				 len);
	/* the harness out of descriptors or memory is the fleet's failure */
	*alone = e && e != -EMFILE && e != -ENFILE && e != -ENOMEM &&
		 e != -ENOBUFS;
	if (!e && pipe2(go, O_CLOEXEC))
		e = -errno;
	if (!e) {
		ft->go_fd = go[1];
		for (int m = 0; m < ft->nmodels && !e; m++)
			e = spawn(f, t, m, &cs[m], f->report_wr, go[0], err,
				  len);
		close(go[0]);
	}
	for (int m = 0; m < ft->nmodels; m++)
		fleet_unlisten(&cs[m]);
	free(cs);
	return e;
}

static void task_reset(struct ftask *ft)
{
	ft->ngot = 0;
	for (int m = 0; m < ft->nmodels; m++)
		ft->got[m] = false;
}

int fleet_start(const struct plan *p, const struct addressing *a,
		const struct fleet_opts *o, struct fleet **out, char *err,
		size_t len)
{
	struct fleet *f = calloc(1, sizeof(*f));
	int pfd[2] = { -1, -1 }, e = 0;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->p = p;
	f->a = a;
	f->o = *o;
	if (f->o.samples_per_local <= 0)
		f->o.samples_per_local = FLEET_SAMPLES_PER_LOCAL;
	if (!(f->o.dilation >= 1))
		f->o.dilation = 1;
	f->report_fd = f->report_wr = -1;
	f->t = calloc((size_t)p->ntasks + 1, sizeof(*f->t));
	if (!f->t || pipe2(pfd, O_CLOEXEC)) {
		free(f->t);
		free(f);
		return -ENOMEM;
	}
	f->report_fd = pfd[0];
	f->report_wr = pfd[1];
	for (int t = 0; t < p->ntasks; t++) {
		f->t[t].go_fd = f->t[t].model_fd = -1;
		f->gate_slots += p->tasks[t].nmodels;
	}
	/* forked workers train through the gate (without: as they may) */
	f->gate_slots += FLEET_GATE_SPARE;
	f->gate = o->via ? NULL : traingate_new(f->gate_slots, 0);
	for (int t = 0; t < p->ntasks && !e; t++)
		if (!p->tasks[t].blocked)
			e = task_init(f, p, t, 1, 1, err, len);
	for (int t = 0; t < p->ntasks && !e; t++)
		if (f->t[t].live)
			e = task_cgroups(f, t, err, len);
	for (int t = 0; t < p->ntasks && !e; t++) {
		bool alone = false;

		if (f->t[t].live)
			e = task_spawn(f, t, err, len, &alone);
		if (e && alone) {
			kill_task(f, t, err);
			e = 0;
			err[0] = '\0';
		}
	}
	if (e) {
		if (!err[0])
			snprintf(err, len, "cannot start the workers: %s",
				 strerror(-e));
		fleet_stop(f);
		return e;
	}
	reset_round(f);
	collect(f, WK_READY, 0, mono_ns() + (uint64_t)(o->timeout_s * 1e9));
	*out = f;
	return 0;
}

/*
 * Start task t's workers as q places it: its round 1 is the fleet's round
 * `first`, they start at its round `from`. fleet_ready waits for them.
 */
static int task_start(struct fleet *f, const struct plan *q, int t,
		      unsigned first, unsigned from, char *err, size_t len)
{
	struct ftask *ft = &f->t[t];
	int e = task_init(f, q, t, first, from, err, len);

	if (!e)
		e = task_cgroups(f, t, err, len);
	if (!e)
		e = task_spawn(f, t, err, len, &(bool){ false });
	if (e) {
		if (!err[0])
			snprintf(err, len, "cannot start the workers of task "
				 "'%s': %s", q->tasks[t].task->name,
				 strerror(-e));
		kill_task(f, t, err);
		return e;
	}
	/* the others have their last round's reports: it counts READY */
	task_reset(ft);
	ft->starting = true;
	ft->start_by = mono_ns() + (uint64_t)(f->o.timeout_s * 1e9);
	return 0;
}

int fleet_ready(struct fleet *f, char *err, size_t len)
{
	int failed = 0;
	bool any = false;

	if (err && len)
		err[0] = '\0';
	/* every task's mark set anew: one left from an earlier call would
	 * count a task that ended meanwhile as one that did not start */
	for (int t = 0; t < f->p->ntasks; t++) {
		f->t[t].awaited = f->t[t].starting;
		any = any || f->t[t].awaited;
	}
	/* all at once: their workers connect to each other meanwhile */
	if (any)
		collect(f, WK_READY, 0,
			mono_ns() + (uint64_t)(f->o.timeout_s * 1e9));
	for (int t = 0; t < f->p->ntasks; t++) {
		struct ftask *ft = &f->t[t];

		/* one that left while it started (ended) did not fail */
		if (!ft->awaited || ft->live || ft->ended)
			continue;
		if (!failed++ && err && len)
			snprintf(err, len, "task '%s' did not start: %s",
				 ft->plan->tasks[t].task->name, ft->why);
	}
	return failed;
}

int fleet_admit(struct fleet *f, unsigned r, bool *joined)
{
	uint64_t now;
	int n = 0;

	/* what the starting workers said meanwhile (no round is on) */
	while (report_ready(f))
		take_report(f, WK_READY, 0);
	if (child_exited())
		reap(f, false, false);
	now = mono_ns();
	for (int t = 0; t < f->p->ntasks; t++) {
		struct ftask *ft = &f->t[t];

		joined[t] = false;
		if (!ft->starting)
			continue;
		if (ft->ngot == ft->nmodels) {
			/* its round `from` is the fleet's r */
			ft->starting = false;
			ft->first = r - (ft->from - 1);
			task_reset(ft);
			joined[t] = true;
			n++;
		} else if (now > ft->start_by) {
			char why[256];

			snprintf(why, sizeof(why), "its workers were not ready "
				 "after %.0f s", f->o.timeout_s);
			kill_task(f, t, why);
		}
	}
	return n;
}

bool fleet_starting(const struct fleet *f, int t)
{
	return f->t[t].starting;
}

/* Whether task t of q can start at the fleet's round r; err if not. */
static bool can_start(const struct fleet *f, const struct plan *q, int t,
		      unsigned r, char *err, size_t len)
{
	err[0] = '\0';
	if (t < 0 || t >= f->p->ntasks || q->ntasks != f->p->ntasks ||
	    q->tasks[t].blocked || f->t[t].plan || r < 1 ||
	    r > f->o.rounds) {
		snprintf(err, len, "task %d cannot start at round %u", t, r);
		return false;
	}
	return true;
}

int fleet_task_start(struct fleet *f, const struct plan *q, int t,
		     unsigned r, char *err, size_t len)
{
	if (!can_start(f, q, t, r, err, len))
		return -EINVAL;
	return task_start(f, q, t, r, 1, err, len);
}

int fleet_task_resume(struct fleet *f, const struct plan *q, int t, int prev,
		      unsigned r, char *err, size_t len)
{
	struct ftask *ft = &f->t[t], *pt;
	unsigned k;

	if (!can_start(f, q, t, r, err, len))
		return -EINVAL;
	if (prev < 0 || prev >= f->p->ntasks || prev == t ||
	    !f->t[prev].plan || f->t[prev].failed) {
		snprintf(err, len, "task '%s' has nothing to carry on from",
			 q->tasks[t].task->name);
		kill_task(f, t, err);
		return -EINVAL;
	}
	pt = &f->t[prev];
	fleet_task_end(f, prev);	/* if it has not ended yet */
	/* its rounds go on from the one after its last completed: the
	 * round in flight when it moved is run again, over the new trees */
	k = pt->last ? pt->last : pt->from - 1;
	ft->model_fd = pt->model_fd;
	pt->model_fd = -1;
	return task_start(f, q, t, r - k, k + 1, err, len);
}

void fleet_task_end(struct fleet *f, int t)
{
	struct ftask *ft = &f->t[t];

	if (t < 0 || t >= f->p->ntasks || !ft->live)
		return;
	ft->live = false;
	ft->starting = false;
	ft->ended = true;
	end_links(ft, mono_ns() + FLEET_LINK_GRACE_NS);
	for (int m = 0; m < ft->nmodels; m++)
		if (ft->w[m].pid > 0 && !ft->w[m].exited) {
			kill(ft->w[m].pid, SIGKILL);
			if (waitpid(ft->w[m].pid, &ft->w[m].status, 0) ==
			    ft->w[m].pid) {
				ft->w[m].exited = true;
				traingate_forget(f->gate, ft->w[m].gate_slot);
			}
		}
}

uint64_t fleet_clock_error_ns(const struct fleet *f)
{
	return f->clock_err_ns;
}

bool fleet_running(const struct fleet *f, int t)
{
	return f->t[t].live;
}

void fleet_train_from(struct fleet *f, const struct plan *q)
{
	for (int t = 0; t < f->p->ntasks && q->ntasks == f->p->ntasks; t++) {
		struct ftask *ft = &f->t[t];

		if (!ft->live || q->tasks[t].blocked)
			continue;
		for (int m = 0; m < ft->nmodels; m++) {
			if (m)
				ft->w[m].train_s =
					q->tasks[t].task->work_core_s /
					fleet_cpu_share(q, t, m);
			/* its children are its tree's, which the task keeps
			 * while it runs on these workers */
			ft->w[m].agg_s = predict_agg_s(
				q, &q->tasks[t], m,
				predict_up_kids(&ft->plan->tasks[t], m));
		}
	}
}

/* Say something to worker w: on its pipe as it is, or framed on its link. */
static int tell(const struct fworker *w, int fd, uint16_t type,
		const void *msg, uint32_t len)
{
	struct timespec now = { 0, 0 };
	sigset_t pipe_sig, old;
	ssize_t k;
	int e;

	if (w->remote)
		return rm_send(fd, type, msg, len);
	/*
	 * A forked worker that died has closed its end: the write fails
	 * with EPIPE and no SIGPIPE, which a run takes as the user's stop
	 * (the signal is blocked, and the one the write raised taken).
	 */
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
	k = write(fd, msg, len);
	e = k == (ssize_t)len ? 0 : k < 0 ? -errno : -EIO;
	if (e == -EPIPE)
		while (sigtimedwait(&pipe_sig, NULL, &now) < 0 &&
		       errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return e;
}

/*
 * Worker m of task t could not be told something (err). A forked one whose
 * pipe is closed (-EPIPE) is dying (it alone held the read end): wait until it can be
 * reaped and let reap name it (killed by a signal, ...); else why.
 */
static void untold(struct fleet *f, int t, int m, int err, const char *why)
{
	struct fworker *w = &f->t[t].w[m];
	siginfo_t si;

	if (err == -EPIPE && !w->remote && w->pid > 0 && !w->exited)
		while (waitid(P_PID, (id_t)w->pid, &si, WEXITED | WNOWAIT) <
			       0 &&
		       errno == EINTR)
			;
	reap(f, false, false);
	if (f->t[t].live)
		kill_task(f, t, why);
}

int fleet_round(struct fleet *f, unsigned r, uint64_t at,
		struct fleet_task_round *res)
{
	uint64_t now = mono_ns();
	/* too soon for the roots to be woken in time: the usual margin */
	struct wk_go go = { .round = r,
			    .t0 = at >= now + FLEET_GO_MARGIN_NS / 2 ? at :
				  now + FLEET_GO_MARGIN_NS };
	double n = f->o.dilation;
	int done = 0;

	reset_round(f);
	for (int t = 0; t < f->p->ntasks; t++) {
		struct ftask *ft = &f->t[t];

		if (ft->starting)	/* not in the rounds yet */
			continue;
		/* the task's own round number */
		go.round = r - ft->first + 1;
		/* each local's compute phase and folding time first: it
		 * reads them when the model arrives, which is after the go
		 * (the global model, once it has the go) */
		for (int m = 0; ft->live && m < ft->nmodels; m++) {
			struct wk_ctl ctl = { .round = go.round,
					      .train_s = ft->w[m].train_s,
					      .agg_s = ft->w[m].agg_s };

			int e = ft->w[m].ctl < 0 ? 0 :
				tell(&ft->w[m], ft->w[m].ctl, RM_CTL, &ctl,
				     sizeof(ctl));

			if (e)
				untold(f, t, m, e, "cannot tell a worker its "
				       "compute phase");
		}
		if (ft->live) {
			int e = tell(&ft->w[0], ft->go_fd, RM_GO, &go,
				     sizeof(go));

			if (e)
				untold(f, t, 0, e, "cannot start the round");
		}
	}
	collect(f, WK_ROUND, r,
		mono_ns() + (uint64_t)(f->o.timeout_s * 1e9));
	for (int t = 0; t < f->p->ntasks; t++) {
		struct ftask *ft = &f->t[t];
		struct fleet_task_round *x = &res[t];
		uint64_t t0, last_recv = 0, last_train = 0;

		memset(x, 0, sizeof(*x));
		x->failed = ft->failed;
		snprintf(x->why, sizeof(x->why), "%s", ft->why);
		if (!ft->live || ft->starting || ft->ngot < ft->nmodels)
			continue;
		x->done = true;
		ft->last = r - ft->first + 1;
		x->rep = ft->rep;
		x->msg_bytes = ft->wire + WK_HDR_BYTES;
		for (int m = 0; m < ft->nmodels; m++) {
			struct fworker *w = &ft->w[m];
			uint64_t ns;

			if (w->cg && cg_cpu_ns(w->cg, &ns) == 0) {
				x->cpu_s += (double)(ns - w->cpu_ns) / 1e9;
				w->cpu_ns = ns;
			} else {
				x->cpu_s += ft->rep[m].cpu_s - w->cpu_s;
			}
			w->cpu_s = ft->rep[m].cpu_s;
		}
		/* the round starts at t0, for every task: skew counts */
		t0 = ft->rep[0].t_go;
		x->skew_s = (double)(ft->rep[0].t_start - t0) / 1e9 / n;
		x->late_max_s = (double)fleet_late_worst(ft, &ft->plan->tasks[t]) /
				1e9 / n;
		x->late_last_s = (double)fleet_late_last(ft, &ft->plan->tasks[t]) /
				 1e9 / n;
		for (int m = 1; m < ft->nmodels; m++) {
			const struct wk_report *q = &ft->rep[m];

			if (q->t_start > last_recv)
				last_recv = q->t_start;
			if (q->t_ready > last_train)
				last_train = q->t_ready;
			if (q->overrun_ns) {
				x->overruns++;
				x->overrun_max_s = fmax(x->overrun_max_s,
							(double)q->overrun_ns /
								1e9 / n);
				x->overrun_stretch = fmax(x->overrun_stretch,
							  fleet_overrun_stretch(q));
			}
		}
		x->bcast_s = (double)(last_recv - t0) / 1e9 / n;
		x->compute_s = (double)(last_train - last_recv) / 1e9 / n;
		x->upload_s = (double)(ft->rep[0].t_end - last_train) / 1e9 / n;
		x->round_s = (double)(ft->rep[0].t_end - t0) / 1e9 / n;
		fleet_check_round(ft, x);
		done++;
	}
	return done;
}

bool fleet_failed(const struct fleet *f, int t, const char **why)
{
	if (why)
		*why = f->t[t].why;
	return f->t[t].failed;
}

void fleet_stop(struct fleet *f)
{
	if (!f)
		return;
	uint64_t grace = mono_ns() + FLEET_LINK_GRACE_NS;

	for (int t = 0; t < f->p->ntasks; t++) {
		struct ftask *ft = &f->t[t];

		end_links(ft, grace);
		if (ft->model_fd >= 0)
			close(ft->model_fd);
		for (int m = 0; m < ft->nmodels; m++)
			if (ft->w[m].pid > 0 && !ft->w[m].exited)
				kill(ft->w[m].pid, SIGKILL);
	}
	reap(f, true, false);
	rm_relay_free(f->relay);
	for (int t = 0; t < f->p->ntasks; t++) {
		struct ftask *ft = &f->t[t];

		for (int m = 0; m < ft->nmodels; m++) {
			if (ft->w[m].ctl >= 0)
				close(ft->w[m].ctl);
			if (ft->w[m].from >= 0)
				close(ft->w[m].from);
			if (ft->w[m].cg) {
				char name[64];

				worker_cg(f, t, m, name, sizeof(name));
				cg_free(ft->w[m].cg);
				cg_remove(f->o.prefix, name);
			}
		}
		free(ft->w);
		free(ft->rep);
		free(ft->got);
	}
	if (f->report_fd >= 0)
		close(f->report_fd);
	if (f->report_wr >= 0)
		close(f->report_wr);
	free(f->t);
	traingate_free(f->gate);
	free(f);
}

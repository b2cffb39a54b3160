// SPDX-License-Identifier: MIT
/* Removing the emulation, and the processes its state file records. */
#include "lab_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "delayline.h"
#include "impair.h"
#include "traffic.h"
#include "labstate.h"
#include "netns.h"
#include "nl.h"
#include "proc.h"
#include "tally.h"
#include "twin/fl.h"
#include "twin/lpset.h"

struct down_ctx {
	struct tally said;
	int first_err;
};

static void cg_said(const char *what, void *arg)
{
	struct down_ctx *c = arg;

	tally_say(&c->said, "%s", what);
}

/* What deleting namespace `name` came to (err from netns_del). */
static void del_said(struct down_ctx *c, const char *name, int err)
{
	if (err && err != -ENOENT) {
		if (!c->first_err)
			c->first_err = err;
	} else if (!err) {
		tally_say(&c->said, "netns %s", name);
	}
}

static void del_ns(const char *name, void *arg)
{
	del_said(arg, name, netns_del(name));
}

/*
 * The recorded namespaces, deleted by LAB_DEL_THREADS threads side by
 * side: each unmount of a namespace's file waits for an RCU grace period
 * after the kernel's mount lock is released, and unmounts made side by
 * side wait together (2,000 one after another spent 1.6 s in unmount).
 */
#define LAB_DEL_THREADS 8

struct ns_deleter {
	char (*name)[64];
	int n, first, *err;
};

static void *del_some(void *arg)
{
	struct ns_deleter *d = arg;

	for (int i = d->first; i < d->n; i += LAB_DEL_THREADS)
		d->err[i] = netns_del(d->name[i]);
	return NULL;
}

static void del_all(char (*name)[64], int n, struct down_ctx *c)
{
	struct ns_deleter d[LAB_DEL_THREADS];
	int *err = calloc((size_t)n + 1, sizeof(*err));

	if (!err) {
		for (int i = 0; i < n; i++)
			del_ns(name[i], c);
		return;
	}
	for (int t = 0; t < LAB_DEL_THREADS; t++)
		d[t] = (struct ns_deleter){name, n, t, err};
	lab_side_by_side(del_some, d, sizeof(d[0]),
			 n < LAB_DEL_THREADS ? n : LAB_DEL_THREADS);
	for (int i = 0; i < n; i++)
		del_said(c, name[i], err[i]);
	free(err);
}

/* Wait (up to 2 s) for a process we signalled to be gone. */
static void wait_gone(pid_t pid, unsigned long long start)
{
	for (int i = 0; i < 200 && proc_start(pid) == start; i++)
		usleep(10 * 1000);
}

/*
 * Whether p is still the process the state recorded (the delay line's
 * supervisor, a traffic generator): the same start time, the name it gave
 * itself (one of the prefix's, as parsing checked) and its executable.
 */
static bool still_ours(const struct lab_state_pid *p)
{
	char comm[32], exe[PATH_MAX];

	return proc_start(p->pid) == p->start &&
	       proc_comm(p->pid, comm, sizeof(comm)) &&
	       !strcmp(comm, p->name) && proc_exe(p->pid, exe, sizeof(exe)) &&
	       !strcmp(exe, p->exe);
}

static bool is_delay(const char *prefix, const struct lab_state_pid *p)
{
	char want[16];

	lab_delay_name(prefix, want, sizeof(want));
	return !strcmp(p->name, want);
}

int lab_record_pid(const char *prefix, pid_t pid, unsigned long long start,
		   const char *name)
{
	char path[256], exe[PATH_MAX], line[PATH_MAX + 128];
	int fd, len, err = 0;

	if (!proc_exe(pid, exe, sizeof(exe)))
		return -ESRCH;
	len = snprintf(line, sizeof(line), "pid %d %llu %s %s\n", (int)pid,
		       start, name, exe);
	if (len < 0 || (size_t)len >= sizeof(line))
		return -ENAMETOOLONG;
	lab_state_path(prefix, path, sizeof(path));
	fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)len) != len)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

static int down(const char *prefix, bool sweep,
		void (*report)(const char *what, void *arg), void *arg);

int lab_down(const char *prefix, void (*report)(const char *what, void *arg),
	     void *arg)
{
	return down(prefix, true, report, arg);
}

int lab_down_recorded(const char *prefix,
		      void (*report)(const char *what, void *arg), void *arg)
{
	return down(prefix, false, report, arg);
}

static int down(const char *prefix, bool sweep,
		void (*report)(const char *what, void *arg), void *arg)
{
	struct down_ctx c = { { report, arg, 0 }, 0 };
	char path[256], dir[256];
	struct lab_state st;
	struct stat sb;
	bool had_state, valid;
	int n;

	if (!lab_prefix_ok(prefix))
		return -EINVAL;
	lab_state_path(prefix, path, sizeof(path));
	had_state = lstat(path, &sb) == 0;
	/*
	 * The state file is input like any other (labstate.h): only entries
	 * this prefix could have written are acted on, and a process only if
	 * it still is the one recorded. Processes first: they hold sockets
	 * in the namespaces.
	 */
	valid = lab_state_read(prefix, &st) == 0;
	for (int i = 0; valid && i < st.npids; i++) {
		const struct lab_state_pid *p = &st.pids[i];

		if (still_ours(p) && kill(p->pid, SIGTERM) == 0) {
			wait_gone(p->pid, p->start);
			/* ours (we built it): no zombie left */
			waitpid(p->pid, NULL, WNOHANG);
			tally_say(&c.said, "%s process %d",
				  is_delay(prefix, p) ? "delay line"
						      : "traffic generator",
				  (int)p->pid);
		}
	}
	if (valid)
		del_all(st.netns, st.nnetns, &c);
	lab_state_release(&st);
	/*
	 * What a crash may have left unrecorded (made, then killed before
	 * the state said so): only when asked (clean), as a namespace that
	 * merely carries the prefix's name is not proved ours.
	 */
	n = sweep ? netns_each(prefix, del_ns, &c) : 0;
	if (n < 0 && !c.first_err)
		c.first_err = n;
	/* the workers' cgroups (and any process still in one) */
	n = cg_remove_prefix(prefix, cg_said, &c);
	if (n < 0 && !c.first_err)
		c.first_err = n;
	/* the state file goes even if it was not valid: it is the prefix's */
	if (had_state) {
		unlink(path);
		tally_say(&c.said, "state %s", path);
	}
	lab_live_path(prefix, path, sizeof(path));
	unlink(path);
	snprintf(dir, sizeof(dir), LAB_STATE_DIR "/%s", prefix);
	rmdir(dir);
	return c.first_err ? c.first_err : c.said.count;
}

int lab_delay_pid(const char *prefix, pid_t *pid)
{
	struct lab_state st;
	int err = lab_state_read(prefix, &st);

	if (err)
		return err == -EINVAL ? -ENOENT : err;
	err = -ENOENT;
	for (int i = 0; err && i < st.npids; i++)
		if (is_delay(prefix, &st.pids[i]) && still_ours(&st.pids[i])) {
			*pid = st.pids[i].pid;
			err = 0;
		}
	lab_state_release(&st);
	return err;
}

pid_t lab_delay_line(pid_t sup)
{
	return proc_child(sup);
}

int lab_state_get(const char *prefix, const char *key, char *buf, size_t len)
{
	struct lab_state st;
	int err = lab_state_read(prefix, &st);

	if (err)
		return err;
	err = 0;
	if (!strcmp(key, "scenario") && st.scenario[0])
		snprintf(buf, len, "%s", st.scenario);
	else if (!strcmp(key, "scheduler") && st.scheduler[0])
		snprintf(buf, len, "%s", st.scheduler);
	else if (!strcmp(key, "dilation") && st.dilation >= 1)
		snprintf(buf, len, "%.17g", st.dilation);
	else if (!strcmp(key, "part") && st.part[0])
		snprintf(buf, len, "%s", st.part);
	else
		err = -ENOENT;
	lab_state_release(&st);
	return err;
}

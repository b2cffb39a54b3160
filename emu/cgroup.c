// SPDX-License-Identifier: MIT
/*
 * Workers' cgroups through libcgroup (2.0.x API: cgroup_init,
 * cgroup_get_subsys_mount_point, cgroup_create_cgroup,
 * cgroup_modify_cgroup, cgroup_change_cgroup_path, cgroup_read_value_*,
 * cgroup_read_stats_*, cgroup_get_controller_*, cgroup_walk_tree_*).
 * Its ECG* codes are turned into -errno here and nowhere else.
 *
 * How libcgroup is used, and where it is not (each place says why):
 *  - every controller is created and every value set with its own
 *    libcgroup request, so a failure names the controller and the file
 *    (one cgroup_create_cgroup() over all controllers only says that one
 *    of them failed);
 *  - cgroup_create_cgroup() succeeds on a cgroup that exists already
 *    (its mkdir -p takes EEXIST as success), so cg_new() checks first;
 *  - removal is rmdir() of our own: cgroup_delete_cgroup_ext() either
 *    moves live processes out to the parent or, asked not to, reports a
 *    busy cgroup as removed (remove_name() has the details);
 *  - cg_attach_self() writes cgroup.procs itself: libcgroup takes a
 *    pthread rwlock and uses stdio, neither allowed in a child forked from
 *    a threaded parent;
 *  - the processes left in a cgroup are read from cgroup.procs: libcgroup
 *    lists them from "tasks", which only v1 has.
 */
#include "cgroup.h"
#include "tally.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libcgroup.h>
#include <limits.h>
#include <linux/magic.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define CG_FULL_MAX (sizeof(CG_ROOT) + 2 * CG_NAME_MAX + 3)
#define NCTRL_MAX 3
#define CG_PATH_MAX (PATH_MAX + CG_FULL_MAX + 32)

/* The controllers a worker's cgroup is made in, per version. */
static const char *const v1_ctrl[] = { "cpu", "cpuacct", "memory", NULL };
static const char *const v2_ctrl[] = { "cpu", "memory", NULL };

/* What cgroup_init() found, once per process. */
static struct {
	pthread_once_t once;
	int err;			/* -errno if libcgroup cannot start */
	bool v1, v2;
	bool use_v2;			/* the version workers are made in */
	const char *const *ctrl;	/* NULL: no usable version */
	int nctrl;
	char mnt[NCTRL_MAX][PATH_MAX];	/* mount point per ctrl[] */
} cgs = { .once = PTHREAD_ONCE_INIT };

struct cg {
	char name[CG_FULL_MAX];
	bool v2;
	int nprocs;
	char procs[NCTRL_MAX][CG_PATH_MAX];	/* cgroup.procs per hierarchy */
};

/* The one translation of libcgroup's codes. */
static int cg_errno(int ret)
{
	int e;

	switch (ret) {
	case 0:
		return 0;
	case ECGOTHER:
		e = cgroup_get_last_errno();
		return e > 0 ? -e : -EIO;
	case ECGROUPNOTEXIST:
	case ECGROUPVALUENOTEXIST:
		return -ENOENT;
	case ECGROUPNOTOWNER:
		return -EPERM;
	case ECGROUPNOTALLOWED:
		return -EACCES;
	case ECGROUPNOTMOUNTED:
	case ECGROUPSUBSYSNOTMOUNTED:
		return -ENODEV;
	case ECGNONEMPTY:
		return -EBUSY;
	case ECGINVAL:
		return -EINVAL;
	case ECGEOF:
		return -ENODATA;
	case ECGROUPUNSUPP:
		return -EOPNOTSUPP;
	case ECGCANTSETVALUE:
		e = cgroup_get_last_errno();
		return e > 0 ? -e : -EINVAL;
	default:
		return -EIO;
	}
}

static void quiet_log(void *data, int level, const char *fmt, va_list ap)
{
	(void)data;
	(void)level;
	(void)fmt;
	(void)ap;
}

static int mount_of(const char *ctrl, char *buf, size_t len, long *fstype)
{
	struct statfs sf;
	char *mp = NULL;
	int ret;

	ret = cgroup_get_subsys_mount_point(ctrl, &mp);
	if (ret)
		return cg_errno(ret);
	snprintf(buf, len, "%s", mp);
	free(mp);
	if (statfs(buf, &sf))
		return -errno;
	*fstype = (long)sf.f_type;
	return 0;
}

/* Every controller in list mounted on a file system of type fstype? */
static bool all_on(const char *const *list, long fstype)
{
	char mp[PATH_MAX];
	long t;

	for (int i = 0; list[i]; i++)
		if (mount_of(list[i], mp, sizeof(mp), &t) || t != fstype)
			return false;
	return true;
}

/*
 * libcgroup reads /proc/cgroups, /proc/mounts and each cgroup2 mount's
 * cgroup.controllers. In the hybrid layout (v1 hierarchies, cgroup2 at
 * /sys/fs/cgroup/unified holding only what v1 did not take, hugetlb on
 * these machines) cpu and memory are v1 controllers, so v2 is not usable
 * for workers there. The file-system type of the mount says which
 * version a controller is on.
 */
static void setup_once(void)
{
	int ret = cgroup_init();

	if (!getenv("CGROUP_LOGLEVEL"))
		cgroup_set_logger(quiet_log, CGROUP_LOG_ERROR, NULL);
	if (ret == ECGROUPNOTMOUNTED)
		return;
	if (ret) {
		cgs.err = cg_errno(ret);
		return;
	}
	cgs.v1 = all_on(v1_ctrl, CGROUP_SUPER_MAGIC);
	cgs.v2 = all_on(v2_ctrl, CGROUP2_SUPER_MAGIC);
	if (cgs.v1 || cgs.v2) {
		const char *const *ctrl = cgs.v1 ? v1_ctrl : v2_ctrl;
		int n;
		long t;

		for (n = 0; ctrl[n]; n++)
			if (mount_of(ctrl[n], cgs.mnt[n], PATH_MAX, &t))
				return;		/* unmounted meanwhile */
		cgs.use_v2 = !cgs.v1;
		cgs.ctrl = ctrl;
		cgs.nctrl = n;
	}
}

static int setup(void)
{
	pthread_once(&cgs.once, setup_once);
	return cgs.err;
}

int cg_probe(bool *v1, bool *v2)
{
	int err = setup();

	*v1 = cgs.v1;
	*v2 = cgs.v2;
	return err;
}

static bool part_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > CG_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-' || s[i] == '.' ||
		      s[i] == '+'))	/* a carried task's (fleet.h) */
			return false;
	return true;
}

static int ready(void)
{
	int err = setup();

	if (err)
		return err;
	return cgs.ctrl ? 0 : -ENODEV;
}

static void full_name(const char *prefix, const char *name, char *buf,
		      size_t len)
{
	if (name)
		snprintf(buf, len, CG_ROOT "/%s/%s", prefix, name);
	else
		snprintf(buf, len, CG_ROOT "/%s", prefix);
}

/* A libcgroup request for cgroup `name` in the first n of ctrl[]. */
static struct cgroup *request(const char *name, const char *const *ctrl,
			      int n)
{
	struct cgroup *g = cgroup_new_cgroup(name);

	for (int i = 0; g && i < n; i++)
		if (!cgroup_add_controller(g, ctrl[i]))
			cgroup_free(&g);
	return g;
}

/* Set one file of one controller, e.g. ("cpu", "cpu.max", "20000 100000"). */
static int set_value(const char *name, const char *ctrl, const char *file,
		     const char *value)
{
	struct cgroup *g = request(name, &ctrl, 1);
	int ret;

	if (!g)
		return -ENOMEM;
	ret = cgroup_add_value_string(cgroup_get_controller(g, ctrl), file,
				      value);
	if (!ret)
		ret = cgroup_modify_cgroup(g);
	cgroup_free(&g);
	return cg_errno(ret);
}

/*
 * Remove cgroup `name` from the n hierarchies mounted at mnt[], waiting up
 * to ~0.5 s for processes that are still leaving (kill_fn, if set, is
 * called before each retry).
 *
 * rmdir() directly, not cgroup_delete_cgroup_ext(): without
 * CGFLAG_DELETE_EMPTY_ONLY it moves the processes still inside to the
 * parent and removes the group (a live worker would escape its limits);
 * with it, rmdir's EBUSY becomes ECGNONEMPTY, which the function then
 * never returns (libcgroup 2.0.2 src/api.c, cgroup_delete_cgroup_ext():
 * an ECGNONEMPTY is recorded only once another error was; still so after
 * commit 203eb13b) -- a busy cgroup is reported removed.
 */
static int remove_name(const char *name, char (*mnt)[PATH_MAX], int n,
		       void (*kill_fn)(const char *name, void *arg), void *arg)
{
	struct timespec ts = { 0, 1000000 };
	long waited = 0;

	for (int i = 0; i < n; i++) {
		char path[CG_PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", mnt[i], name);
		while (rmdir(path)) {
			if (errno == ENOENT)
				break;	/* co-mounted: gone with another */
			if (errno != EBUSY || waited >= 500000000L)
				return -errno;
			if (kill_fn)
				kill_fn(name, arg);
			nanosleep(&ts, NULL);
			waited += ts.tv_nsec;
			if (ts.tv_nsec < 32000000L)
				ts.tv_nsec *= 2;
		}
	}
	return 0;
}

static int fail(char *err, size_t len, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t len, int e, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return e;
}

struct setting {
	const char *ctrl, *file;
	char value[48];
	bool optional;		/* skipped where the kernel lacks the file */
};

/* The files that make the limits, in the order they must be written. */
static int settings(bool v2, double cpu, uint64_t mem, struct setting *s)
{
	long long period = CG_PERIOD_US, quota;
	int n = 0;

	/*
	 * The kernel wants a quota of at least 1 ms: a small share gets a
	 * longer period instead (0.05 of a core: 1 ms every 20 ms).
	 */
	if (cpu > 0 && cpu * (double)period < CG_QUOTA_MIN_US)
		period = llround(ceil(CG_QUOTA_MIN_US / cpu));
	if (period > CG_PERIOD_MAX_US)
		period = CG_PERIOD_MAX_US;
	/* below 1 ms a second the kernel refuses it, and says so */
	quota = llround(cpu * (double)period);
	if (cpu > 0 && !v2) {
		s[n++] = (struct setting){ "cpu", "cpu.cfs_period_us" };
		snprintf(s[n - 1].value, sizeof(s->value), "%lld", period);
		s[n++] = (struct setting){ "cpu", "cpu.cfs_quota_us" };
		snprintf(s[n - 1].value, sizeof(s->value), "%lld", quota);
	} else if (cpu > 0) {
		s[n++] = (struct setting){ "cpu", "cpu.max" };
		snprintf(s[n - 1].value, sizeof(s->value), "%lld %lld", quota,
			 period);
	}
	if (mem && !v2) {
		/* memsw >= limit at every moment: the limit goes first */
		s[n++] = (struct setting){ "memory", "memory.limit_in_bytes" };
		snprintf(s[n - 1].value, sizeof(s->value), "%" PRIu64, mem);
		s[n++] = (struct setting){ "memory",
					   "memory.memsw.limit_in_bytes",
					   .optional = true };
		snprintf(s[n - 1].value, sizeof(s->value), "%" PRIu64, mem);
	} else if (mem) {
		s[n++] = (struct setting){ "memory", "memory.max" };
		snprintf(s[n - 1].value, sizeof(s->value), "%" PRIu64, mem);
		s[n++] = (struct setting){ "memory", "memory.swap.max", "0",
					   true };
	}
	return n;
}

static const char *mount_of_ctrl(const char *ctrl)
{
	for (int i = 0; i < cgs.nctrl; i++)
		if (!strcmp(cgs.ctrl[i], ctrl))
			return cgs.mnt[i];
	return NULL;
}

/* Controller i shares its mount with another controller? */
static bool comounted(int i)
{
	for (int j = 0; j < cgs.nctrl; j++)
		if (j != i && !strcmp(cgs.mnt[i], cgs.mnt[j]))
			return true;
	return false;
}

struct cg *cg_new(const char *prefix, const char *name, double cpu,
		  uint64_t mem_bytes, char *err, size_t len)
{
	struct setting set[4];
	struct cg *cg = NULL;
	char path[CG_PATH_MAX];
	bool made = false, skip[NCTRL_MAX] = { false };
	int e, nset;

	e = ready();
	if (e == -ENODEV) {
		fail(err, len, e, "no usable cgroup hierarchy: need cpu, "
		     "cpuacct and memory (v1) or cpu and memory in the "
		     "unified hierarchy (v2)");
		goto fail;
	} else if (e) {
		fail(err, len, e, "cannot read the cgroup mounts: %s",
		     strerror(-e));
		goto fail;
	}
	if (!part_ok(prefix) || !part_ok(name)) {
		e = fail(err, len, -EINVAL, "bad cgroup name '%s/%s'", prefix,
			 name);
		goto fail;
	}
	if (!isfinite(cpu) || cpu < 0 || cpu > 1e6) {
		e = fail(err, len, -EINVAL, "bad CPU limit %g for cgroup "
			 "'%s/%s'", cpu, prefix, name);
		goto fail;
	}
	cg = calloc(1, sizeof(*cg));
	if (!cg) {
		e = fail(err, len, -ENOMEM, "out of memory");
		goto fail;
	}
	full_name(prefix, name, cg->name, sizeof(cg->name));
	cg->v2 = cgs.use_v2;
	/*
	 * Without a CPU limit, no cgroup in the cpu controller where it has
	 * its own hierarchy (v1, cpu not co-mounted): a cgroup there is a
	 * scheduling entity of its own weight, which would let a worker's
	 * SCHED_IDLE trainer compete with other workers' event loops as an
	 * equal. cpuacct still accounts the worker's CPU.
	 */
	for (int i = 0; i < cgs.nctrl; i++)
		skip[i] = cpu == 0 && !cg->v2 && !strcmp(cgs.ctrl[i], "cpu") &&
			  !comounted(i);

	for (int i = 0; i < cgs.nctrl; i++) {
		struct stat st;

		if (skip[i])
			continue;

		snprintf(path, sizeof(path), "%s/%s", cgs.mnt[i], cg->name);
		if (!stat(path, &st)) {
			e = fail(err, len, -EEXIST, "cgroup '%s' exists "
				 "(controller %s)", cg->name, cgs.ctrl[i]);
			goto fail;
		}
	}
	for (int i = 0; i < cgs.nctrl; i++) {
		struct cgroup *g;

		if (skip[i])
			continue;
		g = request(cg->name, &cgs.ctrl[i], 1);

		e = g ? cg_errno(cgroup_create_cgroup(g, 1)) : -ENOMEM;
		cgroup_free(&g);
		made = true;
		if (e) {
			fail(err, len, e, "cannot create cgroup '%s' "
			     "(controller %s): %s", cg->name, cgs.ctrl[i],
			     strerror(-e));
			goto fail;
		}
	}
	nset = settings(cg->v2, cpu, mem_bytes, set);
	for (int i = 0; i < nset; i++) {
		const struct setting *s = &set[i];

		snprintf(path, sizeof(path), "%s/%s/%s", mount_of_ctrl(s->ctrl),
			 cg->name, s->file);
		if (s->optional && access(path, F_OK))
			continue;
		e = set_value(cg->name, s->ctrl, s->file, s->value);
		if (e) {
			fail(err, len, e, "cannot set %s to %s in cgroup '%s' "
			     "(controller %s): %s", s->file, s->value, cg->name,
			     s->ctrl, strerror(-e));
			goto fail;
		}
	}
	/* one cgroup.procs per hierarchy (co-mounted controllers share one) */
	for (int i = 0; i < cgs.nctrl; i++) {
		bool seen = skip[i];

		for (int j = 0; j < i; j++)
			seen |= !strcmp(cgs.mnt[i], cgs.mnt[j]);
		if (seen)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", cgs.mnt[i],
			 cg->name);
		memcpy(cg->procs[cg->nprocs++], path, sizeof(path));
	}
	return cg;

fail:
	if (made)
		remove_name(cg->name, cgs.mnt, cgs.nctrl, NULL, NULL);
	free(cg);
	errno = -e;
	return NULL;
}

int cg_attach_self(const struct cg *cg)
{
	for (int i = 0; i < cg->nprocs; i++) {
		int fd = open(cg->procs[i], O_WRONLY | O_CLOEXEC), e = 0;

		if (fd < 0)
			return -errno;
		/* "0" is the writer itself, in v1 and v2 alike */
		if (write(fd, "0", 1) != 1)
			e = -errno;
		close(fd);
		if (e)
			return e;
	}
	return 0;
}

/*
 * cgroup_change_cgroup_path() is libcgroup's "move a process": the
 * thread-group leader, then every thread in /proc/<pid>/task. (Its
 * cgroup_attach_task_pid() moves a single thread on v1, through "tasks".)
 */
int cg_attach(struct cg *cg, pid_t pid)
{
	if (pid == 0)
		return cg_attach_self(cg);
	return cg_errno(cgroup_change_cgroup_path(cg->name, pid, cgs.ctrl));
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || (*end && *end != '\n' && *end != ' '))
		return -EINVAL;
	*out = v;
	return 0;
}

/* The first line of one file of a controller, as a number. */
static int read_u64(const char *ctrl, const char *name, const char *file,
		    uint64_t *out)
{
	char buf[64];
	void *h = NULL;
	int ret;

	ret = cgroup_read_value_begin(ctrl, name, (char *)file, &h, buf,
				      (int)sizeof(buf));
	if (h)
		cgroup_read_value_end(&h);
	if (ret)
		return cg_errno(ret);
	return parse_u64(buf, out);
}

/*
 * The values of names[0..n) among the lines of the cgroup's cpu.stat ("name
 * N"), read once. 0, -ENODATA (one is not there) or -errno.
 */
static int cpu_stats(struct cg *cg, const char *const *names, uint64_t *out,
		     int n)
{
	struct cgroup_stat st;
	void *h = NULL;
	int ret, left = n, err = 0;

	ret = cgroup_read_stats_begin("cpu", cg->name, &h, &st);
	while (ret == 0 && left && !err) {
		for (int i = 0; i < n; i++)
			if (!strcmp(st.name, names[i])) {
				err = parse_u64(st.value, &out[i]);
				left--;
			}
		if (left && !err)
			ret = cgroup_read_stats_next(&h, &st);
	}
	if (h)
		cgroup_read_stats_end(&h);
	if (err || !left)
		return err;
	return ret && ret != ECGEOF ? cg_errno(ret) : -ENODATA;
}

int cg_cpu_ns(struct cg *cg, uint64_t *ns)
{
	static const char *const usage[] = { "usage_usec" };
	uint64_t us;
	int ret;

	if (!cg->v2)
		return read_u64("cpuacct", cg->name, "cpuacct.usage", ns);
	ret = cpu_stats(cg, usage, &us, 1);
	if (!ret)
		*ns = us * 1000;
	return ret;
}

int cg_cpu_throttled(struct cg *cg, uint64_t *periods, uint64_t *throttled)
{
	/* v1 and v2 alike */
	static const char *const names[] = { "nr_periods", "nr_throttled" };
	uint64_t v[2];
	int ret = cpu_stats(cg, names, v, 2);

	if (!ret) {
		*periods = v[0];
		*throttled = v[1];
	}
	return ret;
}

int cg_mem_peak(struct cg *cg, uint64_t *bytes)
{
	int ret;

	if (!cg->v2)
		return read_u64("memory", cg->name,
				"memory.max_usage_in_bytes", bytes);
	ret = read_u64("memory", cg->name, "memory.peak", bytes);
	if (ret == -ENOENT && !access(cg->procs[0], F_OK))
		return -EOPNOTSUPP;
	return ret;
}

int cg_oom_kills(struct cg *cg, uint64_t *n)
{
	/* v2 memory.events, v1 memory.oom_control: a line "oom_kill N" */
	const char *file = cg->v2 ? "memory.events" : "memory.oom_control";
	char buf[128];
	void *h = NULL;
	int ret, err = -ENODATA;

	ret = cgroup_read_value_begin("memory", cg->name, (char *)file, &h,
				      buf, (int)sizeof(buf));
	while (ret == 0) {
		if (!strncmp(buf, "oom_kill ", 9)) {
			err = parse_u64(buf + 9, n);
			break;
		}
		ret = cgroup_read_value_next(&h, buf, (int)sizeof(buf));
	}
	if (h)
		cgroup_read_value_end(&h);
	if (ret && ret != ECGEOF)
		return cg_errno(ret);
	return err;
}

const char *cg_name(const struct cg *cg)
{
	return cg->name;
}

bool cg_is_v2(const struct cg *cg)
{
	return cg->v2;
}

void cg_free(struct cg *cg)
{
	free(cg);
}

int cg_remove(const char *prefix, const char *name)
{
	char full[CG_FULL_MAX];
	int e = ready();

	if (e)
		return e == -ENODEV ? 0 : e;
	if (!part_ok(prefix) || !part_ok(name))
		return -EINVAL;
	full_name(prefix, name, full, sizeof(full));
	return remove_name(full, cgs.mnt, cgs.nctrl, NULL, NULL);
}

/* ---- removal of a whole prefix, in every hierarchy ---------------- */

struct hier {
	char ctrl[64];		/* one controller of the hierarchy */
	char mnt[PATH_MAX];
};

struct sweep {
	struct hier *h;
	int nh;
	char (*names)[CG_FULL_MAX + PATH_MAX];
	int *depth;
	int nnames, capnames;
	pid_t *killed;
	int nkilled, capkilled;
	struct tally said;
};

/* Every mounted hierarchy once, with one of its controllers. */
static int list_hierarchies(struct sweep *s)
{
	struct cgroup_mount_point mp;
	void *h = NULL;
	int ret;

	for (ret = cgroup_get_controller_begin(&h, &mp); ret == 0;
	     ret = cgroup_get_controller_next(&h, &mp)) {
		bool seen = false;
		struct hier *nh;

		for (int i = 0; i < s->nh; i++)
			seen |= !strcmp(s->h[i].mnt, mp.path);
		if (seen || strlen(mp.name) >= sizeof(s->h->ctrl))
			continue;
		nh = realloc(s->h, (size_t)(s->nh + 1) * sizeof(*nh));
		if (!nh) {
			cgroup_get_controller_end(&h);
			return -ENOMEM;
		}
		s->h = nh;
		snprintf(s->h[s->nh].ctrl, sizeof(s->h->ctrl), "%s", mp.name);
		snprintf(s->h[s->nh].mnt, PATH_MAX, "%s", mp.path);
		s->nh++;
	}
	if (h)
		cgroup_get_controller_end(&h);
	/* not initialized: cgroup_init() found no cgroup mounted at all */
	if (ret == ECGEOF || ret == ECGROUPNOTINITIALIZED)
		return 0;
	return cg_errno(ret);
}

static int add_name(struct sweep *s, const char *name, int depth)
{
	for (int i = 0; i < s->nnames; i++)
		if (!strcmp(s->names[i], name))
			return 0;
	if (strlen(name) >= sizeof(s->names[0]))
		return -ENAMETOOLONG;
	if (s->nnames == s->capnames) {
		int cap = s->capnames ? 2 * s->capnames : 16;
		void *n = realloc(s->names, (size_t)cap * sizeof(s->names[0]));
		void *d = n ? realloc(s->depth, (size_t)cap * sizeof(int)) :
			  NULL;

		if (n)
			s->names = n;
		if (!d)
			return -ENOMEM;
		s->depth = d;
		s->capnames = cap;
	}
	snprintf(s->names[s->nnames], sizeof(s->names[0]), "%s", name);
	s->depth[s->nnames++] = depth;
	return 0;
}

/* The cgroups under base (a cgroup name) in hierarchy h, base included. */
static int collect(struct sweep *s, const struct hier *h, const char *base)
{
	struct cgroup_file_info info;
	char path[PATH_MAX + CG_FULL_MAX];
	struct stat st;
	size_t root;
	void *w = NULL;
	int level, ret, e = 0;

	snprintf(path, sizeof(path), "%s/%s", h->mnt, base);
	if (stat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	ret = cgroup_walk_tree_begin(h->ctrl, base, 0, &w, &info, &level);
	if (ret)
		return cg_errno(ret);
	root = strlen(info.full_path);
	while (root > 1 && info.full_path[root - 1] == '/')
		root--;
	cgroup_walk_tree_set_flags(&w, CGROUP_WALK_TYPE_POST_DIR);
	while (!e && (ret = cgroup_walk_tree_next(0, &w, &info, level)) == 0) {
		char name[CG_FULL_MAX + PATH_MAX];

		if (info.type != CGROUP_FILE_TYPE_DIR)
			continue;
		snprintf(name, sizeof(name), "%s%s", base,
			 info.full_path + root);
		while (name[strlen(name) - 1] == '/')
			name[strlen(name) - 1] = '\0';
		e = add_name(s, name, info.depth);
	}
	cgroup_walk_tree_end(&w);
	if (e)
		return e;
	return ret == ECGEOF ? 0 : cg_errno(ret);
}

static bool killed_before(struct sweep *s, pid_t pid)
{
	for (int i = 0; i < s->nkilled; i++)
		if (s->killed[i] == pid)
			return true;
	return false;
}

static void note_kill(struct sweep *s, pid_t pid, const char *name)
{
	if (killed_before(s, pid))
		return;
	if (s->nkilled == s->capkilled) {
		int cap = s->capkilled ? 2 * s->capkilled : 16;
		pid_t *k = realloc(s->killed, (size_t)cap * sizeof(*k));

		if (!k)
			return;
		s->killed = k;
		s->capkilled = cap;
	}
	s->killed[s->nkilled++] = pid;
	tally_say(&s->said, "process %d in cgroup %s", (int)pid, name);
}

/*
 * SIGKILL whatever runs in cgroup `name`, in any hierarchy. The pids come
 * from cgroup.procs, read here: libcgroup's cgroup_get_task_begin() reads
 * "tasks", which the unified hierarchy does not have (2.0.2 and since).
 */
static void kill_in(const char *name, void *arg)
{
	struct sweep *s = arg;
	pid_t self = getpid();

	for (int i = 0; i < s->nh; i++) {
		char path[CG_PATH_MAX + PATH_MAX];
		FILE *f;
		int pid;

		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", s->h[i].mnt,
			 name);
		f = fopen(path, "re");
		while (f && fscanf(f, "%d", &pid) == 1)
			if (pid > 1 && pid != self && !kill(pid, SIGKILL))
				note_kill(s, pid, name);
		if (f)
			fclose(f);
	}
}

int cg_remove_prefix(const char *prefix,
		     void (*report)(const char *what, void *arg), void *arg)
{
	struct sweep s = { .said = { report, arg, 0 } };
	char base[CG_FULL_MAX];
	int e, first = 0, maxd = 0;

	e = setup();
	if (e)
		return e;
	if (!part_ok(prefix))
		return -EINVAL;
	full_name(prefix, NULL, base, sizeof(base));
	e = list_hierarchies(&s);
	if (e)
		goto out;
	for (int i = 0; i < s.nh; i++) {
		e = collect(&s, &s.h[i], base);
		if (e && !first)
			first = e;	/* remove what was found all the same */
	}
	/* deepest first: a v1 cgroup with children cannot be removed */
	for (int i = 0; i < s.nnames; i++)
		if (s.depth[i] > maxd)
			maxd = s.depth[i];
	for (int d = maxd; d >= 0; d--) {
		for (int i = 0; i < s.nnames; i++) {
			char (*mnt)[PATH_MAX];
			int n = 0;

			if (s.depth[i] != d)
				continue;
			mnt = calloc((size_t)s.nh, sizeof(*mnt));
			if (!mnt) {
				e = -ENOMEM;
				goto out;
			}
			for (int j = 0; j < s.nh; j++) {
				char path[CG_PATH_MAX + PATH_MAX];

				snprintf(path, sizeof(path), "%s/%s",
					 s.h[j].mnt, s.names[i]);
				if (!access(path, F_OK))
					memcpy(mnt[n++], s.h[j].mnt, PATH_MAX);
			}
			if (n) {
				kill_in(s.names[i], &s);
				e = remove_name(s.names[i], mnt, n, kill_in, &s);
				if (!e)
					tally_say(&s.said, "cgroup %s",
						  s.names[i]);
				else if (!first)
					first = e;
			}
			free(mnt);
		}
	}
	e = first;
out:
	free(s.h);
	free(s.names);
	free(s.depth);
	free(s.killed);
	return e ? e : s.said.count;
}

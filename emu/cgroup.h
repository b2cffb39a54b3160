/* SPDX-License-Identifier: MIT */
/*
 * A worker's cgroup: "twinlab/<prefix>/<name>" with a CPU quota and a
 * memory limit. On cgroup v1 it is one directory in each of the
 * hierarchies of the controllers cpu, cpuacct and memory (separate or
 * co-mounted); on cgroup v2 one directory in the unified hierarchy, with
 * cpu and memory enabled down to it. Which one is used is found at first
 * use from the mounts (v1 if cpu, cpuacct and memory are v1 controllers,
 * else v2 if the unified hierarchy offers cpu and memory), never assumed.
 *
 * Made, joined, read and removed through libcgroup; the few places that
 * write cgroupfs directly say why. Nothing here prints: libcgroup's own
 * log is silenced unless CGROUP_LOGLEVEL is set in the environment.
 *
 * The caller records "cgroup <prefix> <name>" in the lab's state file as
 * soon as cg_new() returns; cg_remove_prefix() removes whatever is left
 * under a prefix after a crash, recorded or not.
 */
#ifndef EMU_CGROUP_H
#define EMU_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define CG_ROOT "twinlab"	/* parent of every prefix, in every hierarchy */
#define CG_NAME_MAX 48		/* longest prefix or name */
#define CG_QUOTA_MIN_US 1000.0	/* the kernel's least CFS quota */
#define CG_PERIOD_MAX_US 1000000LL	/* and its longest period */
#define CG_PERIOD_US 10000	/* CFS period: 10 ms, so a share is smooth at
				 * the scale of a round, not 100 ms bursts */

struct cg;

/*
 * cg_probe - which cgroup versions this machine offers for workers:
 * *v1 if cpu, cpuacct and memory are mounted as v1 hierarchies, *v2 if the
 * unified hierarchy has the cpu and memory controllers. 0 (both false when
 * nothing usable is mounted) or -errno when the mounts cannot be read.
 */
int cg_probe(bool *v1, bool *v2) __attribute__((warn_unused_result));

/*
 * cg_new - create cgroup "twinlab/<prefix>/<name>" (and its parents as
 * needed) limited to `cpu` cores of CPU time (0.2 = 20 % of one core,
 * as a CFS quota over a CG_PERIOD_US period; 0 = no limit) and `mem_bytes`
 * of memory (0 = no limit; swap is limited to the same, where the kernel
 * accounts it, so a worker over its limit is reclaimed or OOM-killed, not
 * swapped out). prefix and name: 1-CG_NAME_MAX of [A-Za-z0-9_.-], neither
 * "." nor "..".
 *
 * Returns the handle, or NULL with errno set and a message in err naming
 * the cgroup and the controller ("cannot set cpu.cfs_quota_us to 100 in
 * cgroup 'twinlab/tl/w1' (controller cpu): Invalid argument"). EEXIST:
 * the cgroup exists already; ENODEV: no usable cgroup hierarchy. On
 * failure the leaf cgroup is removed again (its parents stay, for
 * cg_remove_prefix()).
 */
struct cg *cg_new(const char *prefix, const char *name, double cpu,
		  uint64_t mem_bytes, char *err, size_t len)
	__attribute__((warn_unused_result));

/*
 * cg_attach - move process `pid` with all its threads into the cgroup,
 * in every hierarchy. Threads it creates while being moved may be missed:
 * attach before the process starts work. pid 0 is the caller, as
 * cg_attach_self(). 0 or -errno (-ESRCH: no such process).
 */
int cg_attach(struct cg *cg, pid_t pid) __attribute__((warn_unused_result));

/*
 * cg_attach_self - move the calling process into the cgroup. Only
 * open/write/close on paths computed by cg_new(): async-signal-safe, so a
 * child forked from a threaded parent may call it before exec. 0 or
 * -errno.
 */
int cg_attach_self(const struct cg *cg) __attribute__((warn_unused_result));

/*
 * cg_cpu_ns - CPU time used by the cgroup's processes since it was made,
 * in ns (v1 cpuacct.usage, v2 cpu.stat usage_usec x 1000). 0 or -errno.
 */
int cg_cpu_ns(struct cg *cg, uint64_t *ns) __attribute__((warn_unused_result));

/*
 * cg_cpu_throttled - of the CPU-limit periods in which the cgroup's
 * processes ran, how many ended with the group held back for having used
 * its quota (cpu.stat "nr_periods" and "nr_throttled", in v1 and v2).
 * 0, -ENODATA (no CPU limit, so no such count) or -errno.
 */
int cg_cpu_throttled(struct cg *cg, uint64_t *periods, uint64_t *throttled)
	__attribute__((warn_unused_result));

/*
 * cg_mem_peak - the most memory the cgroup has held, in bytes (v1
 * memory.max_usage_in_bytes, v2 memory.peak). 0, -EOPNOTSUPP (v2 before
 * Linux 5.19 keeps no peak) or -errno.
 */
int cg_mem_peak(struct cg *cg, uint64_t *bytes)
	__attribute__((warn_unused_result));

/*
 * cg_oom_kills - how many of the cgroup's processes the kernel's OOM
 * killer has ended for its memory limit ("oom_kill" in v2 memory.events,
 * v1 memory.oom_control). 0, -ENODATA (the kernel keeps no count) or
 * -errno.
 */
int cg_oom_kills(struct cg *cg, uint64_t *n)
	__attribute__((warn_unused_result));

/* "twinlab/<prefix>/<name>", as libcgroup and the state file name it. */
const char *cg_name(const struct cg *cg);

/* Whether the cgroup lives in the unified (v2) hierarchy. */
bool cg_is_v2(const struct cg *cg);

/* Forget the handle; the cgroup stays. Accepts NULL. */
void cg_free(struct cg *cg);

/*
 * cg_remove - remove cgroup "twinlab/<prefix>/<name>" from every
 * hierarchy. Its processes must be gone: exited processes leave a moment
 * after they are reaped, so -EBUSY is returned only if it is still in use
 * after about half a second. 0 (also when it did not exist) or -errno.
 */
int cg_remove(const char *prefix, const char *name);

/*
 * cg_remove_prefix - for `down` and for `clean` after a crash: in every
 * mounted hierarchy, SIGKILL any process left in a cgroup under
 * "twinlab/<prefix>", then remove those cgroups, deepest first, and
 * "twinlab/<prefix>" itself ("twinlab" stays: other runs share it).
 * report(what, arg), if not NULL, is called for each process killed and
 * each cgroup removed. Returns how many were, or the first -errno (the
 * rest is still attempted).
 */
int cg_remove_prefix(const char *prefix,
		     void (*report)(const char *what, void *arg), void *arg);

#endif

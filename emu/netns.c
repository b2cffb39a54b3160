// SPDX-License-Identifier: MIT
#include "netns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

bool netns_name_ok(const char *name)
{
	size_t len = strnlen(name, NETNS_NAME_MAX);

	if (len == 0 || len == NETNS_NAME_MAX)
		return false;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	return !strchr(name, '/');
}

/* /run/netns/NAME, or -EINVAL for a name that would lead elsewhere. */
static int path_of(const char *name, char *buf, size_t len)
{
	if (!netns_name_ok(name))
		return -EINVAL;
	snprintf(buf, len, NETNS_RUN_DIR "/%s", name);
	return 0;
}

/*
 * /run/netns must be a shared mount point so that bind mounts made on it
 * propagate to other mount namespaces (what iproute2 does, too). Once a
 * process, or `again` (the directory went away: netns_add_open); under a
 * lock, as threads make namespaces side by side (two binding it at once
 * would stack two mounts).
 */
static bool run_dir_ready;
static pthread_mutex_t run_dir_lock = PTHREAD_MUTEX_INITIALIZER;

static int prepare_run_dir(bool again)
{
	bool bound = false;
	int err = 0;

	pthread_mutex_lock(&run_dir_lock);
	if (again)
		run_dir_ready = false;
	if (!run_dir_ready && mkdir(NETNS_RUN_DIR, 0755) && errno != EEXIST)
		err = -errno;
	while (!err && !run_dir_ready &&
	       mount("", NETNS_RUN_DIR, "none", MS_SHARED | MS_REC, NULL)) {
		if (errno != EINVAL || bound)
			err = -errno;
		else if (mount(NETNS_RUN_DIR, NETNS_RUN_DIR, "none",
			       MS_BIND | MS_REC, NULL))
			err = -errno;
		bound = true;
	}
	if (!err)
		run_dir_ready = true;
	pthread_mutex_unlock(&run_dir_lock);
	return err;
}

/* Write val to path under directory dir. */
static int write_at(int dir, const char *path, const char *val)
{
	int fd = openat(dir, path, O_WRONLY | O_CLOEXEC), err = 0;
	size_t len = strlen(val);

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;	/* no IPv6: fine */
	if (write(fd, val, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

/* IPv6 off on every interface but lo (as on one made in a fresh one). */
static int ipv6_off_made(int net)
{
	int fd = openat(net, "ipv6/conf", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	char path[300];
	int err = 0;
	DIR *d;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;	/* no IPv6: fine */
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (!err && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "all") ||
		    !strcmp(e->d_name, "default") || !strcmp(e->d_name, "lo"))
			continue;
		snprintf(path, sizeof(path), "ipv6/conf/%s/disable_ipv6",
			 e->d_name);
		err = write_at(net, path, "1");
	}
	closedir(d);
	return err;
}

/*
 * Settings of a fresh namespace, made from inside it. IPv6 goes off
 * through the default that interfaces take when they are made (all of
 * them are made after this); lo keeps ::1, which reaches no link. The
 * namespace's /proc/sys/net is opened once and each setting from there:
 * every namespace's sysctl entries share the kernel's lookup chains, so
 * each path component looked up costs a walk as long as there are
 * namespaces.
 */
static int init_inside(unsigned flags, bool made)
{
	bool v4 = flags & (NETNS_TCP | NETNS_REORDER | NETNS_FORWARD);
	int net = open("/proc/sys/net", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int ipv4 = -1, err;

	if (net < 0)
		return -errno;
	if (v4) {
		ipv4 = openat(net, "ipv4", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (ipv4 < 0) {
			err = -errno;
			close(net);
			return err;
		}
	}
	err = write_at(net, "ipv6/conf/default/disable_ipv6", "1");
	/* a namespace given with its interfaces made: theirs off too */
	if (!err && made)
		err = ipv6_off_made(net);
	/*
	 * TCP keeps no clock of its own that the twin lacks: no tail-loss
	 * probe (its 2 RTT timer fires in the middle of a message held by
	 * the delay line), no return to slow start between rounds, and Reno,
	 * whatever the host's default: its window grows per round trip, so a
	 * dilated run keeps it as the scenario would. BBR keeps its bandwidth
	 * and minimum RTT over 10 s of the host's time (a tenth of a second of
	 * scenario time at N 100) and paces by them: after a task moved to a
	 * longer path it kept the old path's RTT and paced each broadcast
	 * 4.9 ms (scenario) slower for the rest of the run. (Cubic, whose
	 * growth is also the host's time, is not allowed outside the first
	 * namespace here.)
	 */
	static const char *const tcp[][2] = {
		{ "tcp_early_retrans", "0" },
		{ "tcp_slow_start_after_idle", "0" },
		{ "tcp_congestion_control", "reno" },
	};

	for (size_t i = 0; (flags & NETNS_TCP) && !err &&
			   i < sizeof(tcp) / sizeof(tcp[0]); i++)
		err = write_at(ipv4, tcp[i][0], tcp[i][1]);
	/*
	 * The host reorders now and then: a segment overtaken by later ones
	 * of its flow, which TCP resent though the receiver had it (a DSACK
	 * came back), in most runs of NSFNET's 15-local point at N 16.
	 * Without loss in the scenario, RACK waits a quarter of the RTT
	 * before it calls such a segment lost, as it does by default once
	 * it has seen reordering (5: RACK without its rule of three SACKed
	 * segments), and over the RTT now: the handshake's, which crossed
	 * the delay line at once, is microseconds and would be kept 5 min.
	 */
	static const char *const reorder[][2] = {
		{ "tcp_recovery", "5" },
		{ "tcp_min_rtt_wlen", "0" },
	};

	for (size_t i = 0; (flags & NETNS_REORDER) && !err &&
			   i < sizeof(reorder) / sizeof(reorder[0]); i++)
		err = write_at(ipv4, reorder[i][0], reorder[i][1]);
	if (!err && (flags & NETNS_FORWARD))
		err = write_at(ipv4, "ip_forward", "1");
	if (v4)
		close(ipv4);
	close(net);
	return err;
}

int netns_enter(const char *name, int *saved)
{
	int fd, err;

	*saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*saved < 0)
		return -errno;
	fd = netns_open(name);
	if (fd < 0) {
		close(*saved);
		return fd;
	}
	err = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	if (err)
		close(*saved);
	return err;
}

void netns_leave(int saved)
{
	/* returning to the namespace we came from cannot fail for root */
	if (setns(saved, CLONE_NEWNET))
		abort();
	close(saved);
}

int netns_add(const char *name, unsigned flags)
{
	return netns_add_open(name, flags, NULL, NULL, NULL);
}

/*
 * Inside the namespace `enter` (-1: a fresh one, unshared; the thread's
 * own when that is what adopt names) with `path` its name to bind (NULL:
 * named already): its settings, its handle and inside(ctx).
 */
static int set_up_inside(int enter, const char *path, unsigned flags,
			 int *nsfd, int (*inside)(void *ctx), void *ctx)
{
	int saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int err = 0;

	if (saved < 0)
		return -errno;
	if (enter == -1 && unshare(CLONE_NEWNET))
		err = -errno;
	else if (enter >= 0 && setns(enter, CLONE_NEWNET))
		err = -errno;
	if (err) {
		close(saved);
		return err;
	}
	err = init_inside(flags, enter != -1);
	if (!err && path && mount("/proc/thread-self/ns/net", path, "none",
				  MS_BIND, NULL))
		err = -errno;
	/*
	 * While inside, the namespace's handle and its rtnetlink socket cost
	 * no extra switch: half of a build's time is namespaces.
	 */
	if (!err && nsfd) {
		*nsfd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (*nsfd < 0)
			err = -errno;
	}
	if (!err && inside)
		err = inside(ctx);
	netns_leave(saved);
	if (err && nsfd && *nsfd >= 0) {
		close(*nsfd);
		*nsfd = -1;
	}
	if (err && path)
		umount2(path, MNT_DETACH);
	return err;
}

/* Name a namespace `name`: a fresh one, or (adopt) the thread's own. */
static int name_open(const char *name, bool adopt, unsigned flags, int *nsfd,
		     int (*inside)(void *ctx), void *ctx)
{
	char path[256];
	int fd, self = -1, err;

	if (nsfd)
		*nsfd = -1;

	err = path_of(name, path, sizeof(path));
	if (!err)
		err = prepare_run_dir(false);
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0 && errno == ENOENT) {
		err = prepare_run_dir(true);
		if (err)
			return err;
		fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	}
	if (fd < 0)
		return -errno;
	close(fd);
	if (adopt) {
		self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0) {
			err = -errno;
			unlink(path);
			return err;
		}
	}
	err = set_up_inside(self, path, flags, nsfd, inside, ctx);
	if (self >= 0)
		close(self);
	/* lo comes up from outside, through the namespace's own socket */
	if (err)
		unlink(path);
	return err;
}

int netns_add_open(const char *name, unsigned flags, int *nsfd,
		   int (*inside)(void *ctx), void *ctx)
{
	return name_open(name, false, flags, nsfd, inside, ctx);
}

int netns_take_open(const char *name, unsigned flags, bool may_adopt,
		    bool *adopted, int *nsfd, int (*inside)(void *ctx),
		    void *ctx)
{
	int fd, err;

	*adopted = false;
	if (nsfd)
		*nsfd = -1;
	fd = netns_open(name);
	if (fd == -ENOENT && may_adopt) {
		err = name_open(name, true, flags, nsfd, inside, ctx);
		*adopted = !err;
		return err;
	}
	if (fd < 0)
		return fd;
	err = set_up_inside(fd, NULL, flags, nsfd, inside, ctx);
	close(fd);
	return err;
}

int netns_del(const char *name)
{
	char path[256];

	if (path_of(name, path, sizeof(path)))
		return -EINVAL;
	if (umount2(path, MNT_DETACH) && errno != EINVAL && errno != ENOENT)
		return -errno;
	if (unlink(path))
		return -errno;
	return 0;
}

bool netns_exists(const char *name)
{
	char path[256];

	if (path_of(name, path, sizeof(path)))
		return false;
	return access(path, F_OK) == 0;
}

int netns_open(const char *name)
{
	char path[256];
	int fd;

	if (path_of(name, path, sizeof(path)))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int netns_each(const char *prefix, void (*fn)(const char *name, void *arg),
	       void *arg)
{
	DIR *d = opendir(NETNS_RUN_DIR);
	size_t plen = strlen(prefix);
	struct dirent *de;
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, plen) || de->d_name[plen] != '-')
			continue;
		fn(de->d_name, arg);
		n++;
	}
	closedir(d);
	return n;
}

// SPDX-License-Identifier: MIT
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "tests/lib/nettest.h"

static void child_fd(int fd, int target, int flags)
{
	if (fd < 0)
		fd = open("/dev/null", flags);
	if (fd < 0 || (fd != target && dup2(fd, target) < 0))
		_exit(126);
}

/* In the child: its namespace and standard streams; 0 or an errno. */
static int child_setup(const void *arg)
{
	const struct proc_io *io = arg;

	signal(SIGPIPE, SIG_DFL);
	if (io->netns_fd >= 0 && setns(io->netns_fd, CLONE_NEWNET) < 0)
		return errno;
	child_fd(io->in_fd, 0, O_RDONLY);
	child_fd(io->out_fd, 1, O_WRONLY);
	return 0;
}

pid_t proc_spawn(char *const argv[], const struct proc_io *io)
{
	return nt_fork_exec(argv[0], argv, child_setup, io);
}

int proc_wait(pid_t pid)
{
	int status;

	bench_child = pid;
	if (bench_stop)
		kill(pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			bench_child = 0;
			return -errno;
		}
	}
	bench_child = 0;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int proc_run(char *const argv[])
{
	struct proc_io io = { -1, -1, -1 };
	pid_t pid = proc_spawn(argv, &io);

	return pid < 0 ? (int)pid : proc_wait(pid);
}

int proc_subreaper(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1) ? -errno : 0;
}

void proc_reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Parent pid and state of pid from /proc/PID/stat; -1 if gone. */
static pid_t parent_of(pid_t pid, char *state)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* comm may hold spaces and parentheses */
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	*state = p[2];
	return (pid_t)strtol(p + 4, NULL, 10);
}

int proc_end_children(pid_t keep)
{
	pid_t self = getpid();
	struct dirent *de;
	int alive = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		char state;

		if (pid <= 0 || pid == keep || parent_of(pid, &state) != self)
			continue;
		if (state != 'Z' && state != 'X') {
			alive++;
			kill(pid, SIGKILL);
		}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	closedir(d);
	return alive;
}

// SPDX-License-Identifier: MIT
/*
 * External programs: fork + execve, a close-on-exec pipe for the child's
 * failure before execve(), one for its standard error, and a pidfd so the
 * wait is a poll() with the time limit as its timeout.
 */
#include "spawn.h"
#include "twin/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *const spawn_env[] = {
	"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The bytes a program reads as its standard input: a memfd holding them,
 * sealed against change, at offset 0. The fd, or -errno.
 */
static int input_fd(const char *in, size_t len)
{
	int fd = memfd_create("spawn-in", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	size_t off = 0;

	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t w = write(fd, in + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;

			close(fd);
			return -e;
		}
		off += (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
				   F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* The child: only async-signal-safe calls; failures go up the pipe. */
static void __attribute__((noreturn))
child(const struct spawn *sp, int in_fd, int err_wr, int fail_wr)
{
	int fd, e;

	if (sp->nsfd >= 0 && setns(sp->nsfd, CLONE_NEWNET) < 0)
		goto fail;
	if (sp->dir && chdir(sp->dir) < 0)
		goto fail;
	fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		goto fail;
	if (dup2(in_fd >= 0 ? in_fd : fd, 0) < 0 ||
	    dup2(sp->out_fd >= 0 ? sp->out_fd : fd, 1) < 0 ||
	    dup2(err_wr, 2) < 0)
		goto fail;
	/* nothing else of the parent's reaches the program */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	execve(sp->path, sp->argv, sp->envp ? sp->envp : spawn_env);
fail:
	e = errno;
	if (write(fail_wr, &e, sizeof(e)) < 0)
		_exit(126);
	_exit(127);
}

static void keep_err(struct spawn_result *res, const char *buf, size_t n)
{
	size_t room = SPAWN_ERR_MAX - res->err_len;
	size_t k = n < room ? n : room;

	memcpy(res->err + res->err_len, buf, k);
	res->err_len += k;
	res->err[res->err_len] = '\0';
	res->err_lost += n - k;
}

int spawn_run(const struct spawn *sp, struct spawn_result *res)
{
	int epipe[2] = { -1, -1 }, fpipe[2] = { -1, -1 }, pidfd = -1;
	int in_fd = -1;
	long long deadline = 0;
	int e, err = 0;
	bool err_open = true, exited = false, drained = false;
	ssize_t r;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	res->timeout_ms = sp->timeout_ms;
	if (!sp->path || sp->path[0] != '/' || !sp->argv || !sp->argv[0])
		return -EINVAL;
	if (sp->in) {
		in_fd = input_fd(sp->in, sp->in_len);
		if (in_fd < 0)
			return in_fd;
	}
	if (pipe2(epipe, O_CLOEXEC) < 0 || pipe2(fpipe, O_CLOEXEC) < 0) {
		err = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out;
	}
	if (pid == 0)
		child(sp, in_fd, epipe[1], fpipe[1]);
	close(epipe[1]);
	close(fpipe[1]);
	epipe[1] = fpipe[1] = -1;

	/* did it reach execve()? (end of file: yes) */
	do
		r = read(fpipe[0], &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	if (r == (ssize_t)sizeof(e)) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		err = -e;
		goto out;
	}

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (sp->timeout_ms)
		deadline = now_ms() + sp->timeout_ms;
	while (err_open ? !(exited && drained) : !exited && pidfd >= 0) {
		struct pollfd pfd[2] = {
			{ .fd = err_open ? epipe[0] : -1, .events = POLLIN },
			{ .fd = exited ? -1 : pidfd, .events = POLLIN },
		};
		int timeout = -1, n;

		if (exited) {
			/* what it wrote is in the pipe; what a child of
			 * its own might write later is not waited for */
			timeout = 0;
		} else if (deadline) {
			long long left = deadline - now_ms();

			timeout = left <= 0 ? 0 : left > 1000000 ? 1000000 :
								    (int)left;
		}
		n = poll(pfd, 2, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0) {
			if (exited) {
				drained = true;
				continue;
			}
			/* our child, not yet reaped: its PID is still ours */
			kill(pid, SIGKILL);
			res->timed_out = true;
			deadline = 0;
			continue;
		}
		if (pfd[0].revents) {
			char buf[1024];

			r = read(epipe[0], buf, sizeof(buf));
			if (r > 0)
				keep_err(res, buf, (size_t)r);
			else if (r == 0 || errno != EINTR)
				err_open = false;
		}
		if (pfd[1].revents)
			exited = true;
	}
	while (waitpid(pid, &res->status, 0) < 0) {
		if (errno != EINTR) {
			err = -errno;
			break;
		}
	}
out:
	pipes_close(epipe, fpipe);
	if (pidfd >= 0)
		close(pidfd);
	if (in_fd >= 0)
		close(in_fd);
	return err;
}

bool spawn_ok(const struct spawn_result *res)
{
	return !res->timed_out && WIFEXITED(res->status) &&
	       WEXITSTATUS(res->status) == 0;
}

int spawn_exit_status(const struct spawn_result *res)
{
	return WIFEXITED(res->status) ? WEXITSTATUS(res->status) : -1;
}

void spawn_describe(const struct spawn_result *res, char *buf, size_t len)
{
	const char *line = res->err, *end = res->err + res->err_len;
	int n;

	if (res->timed_out)
		n = snprintf(buf, len, "killed after the time limit of %u s",
			     (res->timeout_ms + 999) / 1000);
	else if (WIFSIGNALED(res->status))
		n = snprintf(buf, len, "killed by signal %d (%s)",
			     WTERMSIG(res->status),
			     strsignal(WTERMSIG(res->status)));
	else
		n = snprintf(buf, len, "exit status %d",
			     WEXITSTATUS(res->status));
	if (n < 0 || (size_t)n >= len)
		return;
	/* the last non-empty line of standard error */
	while (end > line && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	for (const char *p = end; p > res->err; p--)
		if (p[-1] == '\n') {
			line = p;
			break;
		}
	if (end > line)
		snprintf(buf + n, len - (size_t)n, ": %.*s", (int)(end - line),
			 line);
}

void pipes_close(int a[2], int b[2])
{
	for (int i = 0; i < 2; i++) {
		if (a[i] >= 0)
			close(a[i]);
		if (b[i] >= 0)
			close(b[i]);
		a[i] = b[i] = -1;
	}
}

bool spawn_wait_until(pid_t pid, uint64_t deadline_ns, int *status)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);

	for (;;) {
		uint64_t now = mono_ns(), left;
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		int ms;

		if (waitpid(pid, status, WNOHANG) == pid) {
			if (pfd >= 0)
				close(pfd);
			return true;
		}
		if (now >= deadline_ns)
			break;
		left = (deadline_ns - now) / 1000000u + 1;
		ms = left > 1000 ? 1000 : (int)left;
		/* no pidfd (an old kernel, no descriptor left): look again
		 * every 10 ms */
		if (pfd < 0) {
			struct timespec ts = { 0, 10000000L };

			nanosleep(&ts, NULL);
		} else if (poll(&p, 1, ms) < 0 && errno != EINTR) {
			break;
		}
	}
	if (pfd >= 0)
		close(pfd);
	return false;
}

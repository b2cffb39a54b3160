// SPDX-License-Identifier: MIT
/* The delay line's supervisor; see dlsup.h. */
#include "dlsup.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

static volatile sig_atomic_t dl_stop;

static void on_term(int sig)
{
	(void)sig;
	dl_stop = 1;
}

static void close_pair(int fd[2])
{
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

static void __attribute__((noreturn))
supervise(const struct dl_queue *q, int n, int ready_fd,
	  struct dl_live *live)
{
	struct sigaction sa = { .sa_handler = on_term };
	int restarts = 0;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!dl_stop && restarts < DLSUP_RESTARTS) {
		pid_t w = fork();
		int status;

		if (w < 0)
			_exit(1);
		if (w == 0) {
			struct sched_param sp = { .sched_priority = 10 };
			struct dl_stats st;

			prctl(PR_SET_PDEATHSIG, SIGTERM);
			/*
			 * Real-time priority: the delay line's error is its
			 * wake-up latency, which ordinary scheduling on a
			 * busy machine stretches. Its polling is capped, so
			 * it cannot starve the machine; if refused, go on.
			 */
			sched_setscheduler(0, SCHED_FIFO, &sp);
			_exit(delayline_run_shared(q, n, ready_fd, &dl_stop,
						   live, &st) ? 1 : 0);
		}
		if (ready_fd >= 0) {
			close(ready_fd);
			ready_fd = -1;
		}
		while (waitpid(w, &status, 0) < 0) {
			if (errno != EINTR)
				_exit(1);
			if (dl_stop)
				kill(w, SIGTERM);
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			break;
		restarts++;
		usleep(100 * 1000);
	}
	_exit(0);
}

/* The supervisor, until it may start: it waits for `go`. */
static void __attribute__((noreturn))
child(const struct dl_queue *q, int n, const char *name,
      struct dl_live *live, int ready[2], int go[2])
{
	char c;

	setsid();
	prctl(PR_SET_NAME, name);
	close(ready[0]);
	close(go[1]);
	if (read(go[0], &c, 1) != 1)
		_exit(0);
	for (int fd = 0; fd < 3; fd++) {
		int nul = open("/dev/null", O_RDWR);

		if (nul >= 0 && nul != fd) {
			dup2(nul, fd);
			close(nul);
		}
	}
	/*
	 * Nothing of the parent's but the ready pipe: not its namespaces'
	 * fds (they would keep them alive), its state file, its database,
	 * its lock, nor a pipe its reader waits on.
	 */
	if (dup2(ready[1], 3) < 0)
		_exit(1);
	close_range(4, ~0u, 0);
	supervise(q, n, 3, live);
}

/* Wait for the delay line to bind every queue: it writes one byte. */
static int await_ready(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t r = -1;
	char c;
	int n;

	do
		n = poll(&pfd, 1, DLSUP_READY_MS);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		r = read(fd, &c, 1);
	return r == 1 ? 0 : -EIO;
}

pid_t dlsup_start(const struct dl_queue *q, int n, const char *name,
		  struct dl_live *live,
		  int (*record)(pid_t pid, unsigned long long start,
				void *ctx),
		  void *ctx, char *err, size_t len)
{
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, e;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC)) {
		e = -errno;
		close_pair(ready);
		close_pair(go);
		snprintf(err, len, "cannot start the delay line: %s",
			 strerror(-e));
		return e;
	}
	pid = fork();
	if (pid == 0)
		child(q, n, name, live, ready, go);
	e = pid < 0 ? -errno : 0;
	close(ready[1]);
	close(go[0]);
	if (pid < 0) {
		close(ready[0]);
		close(go[1]);
		snprintf(err, len, "cannot start the delay line: %s",
			 strerror(-e));
		return e;
	}
	e = record(pid, proc_start(pid), ctx);
	if (e || write(go[1], "g", 1) != 1) {
		e = e ? e : -errno;
		close(go[1]);	/* it leaves on end of file */
		waitpid(pid, NULL, 0);
		close(ready[0]);
		snprintf(err, len, "cannot start the delay line: %s",
			 strerror(-e));
		return e;
	}
	close(go[1]);
	e = await_ready(ready[0]);
	close(ready[0]);
	if (e) {
		/* our child, not yet reaped: its PID is still ours */
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		snprintf(err, len, "the delay line did not start (could not "
			 "bind its NFQUEUE queues)");
		return e;
	}
	return pid;
}

// SPDX-License-Identifier: MIT
/* The delay line's supervisor; see dlsup.h. */
#include "dlsup.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prio.h"
#include "proc.h"

static volatile sig_atomic_t dl_stop;
/* the supervisor's lines (0: none); a line's own copy is all 0 */
static volatile pid_t lines_pid[DLSUP_LINES_MAX];

static void on_term(int sig)
{
	(void)sig;
	dl_stop = 1;
	for (int i = 0; i < DLSUP_LINES_MAX; i++)
		if (lines_pid[i] > 0)
			kill(lines_pid[i], SIGTERM);
}

static void close_pair(int fd[2])
{
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/*
 * The lines: the queues split by namespace into at most one group per
 * CPU (DLSUP_LINES_MAX), each namespace whole in one group (its queues
 * share one socket), the next namespace to the group with the fewest
 * queues. A verdict forwards the packets it accepts on through the
 * kernel in the accepting thread (routing, shapers, the next veth, TCP
 * at the far end), so one line would do all of the network's work after
 * every delay on one core. q is regrouped in place: line i has count[i]
 * queues from start[i]. Returns the number of lines.
 */
static int split_lines(struct dl_queue *q, int n, int *start, int *count)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int k = cpus < 1 ? 1 : cpus > DLSUP_LINES_MAX ? DLSUP_LINES_MAX :
		(int)cpus;
	struct dl_queue *sorted = malloc((size_t)n * sizeof(*q));
	int *line = malloc((size_t)n * sizeof(*line));
	int nns = 0, at = 0;

	if (!sorted || !line) {
		free(sorted);
		free(line);
		start[0] = 0;
		count[0] = n;
		return 1;
	}
	for (int i = 0; i < k; i++)
		count[i] = 0;
	for (int i = 0; i < n; i++) {
		int j = 0;

		while (j < i && strcmp(q[j].netns, q[i].netns))
			j++;
		if (j < i) {		/* its namespace has its line */
			line[i] = line[j];
			count[line[i]]++;
			continue;
		}
		line[i] = 0;
		for (int l = 1; l < k; l++)
			if (count[l] < count[line[i]])
				line[i] = l;
		count[line[i]]++;
		nns++;
	}
	if (nns < k)
		k = nns;
	for (int l = 0; l < k; l++) {
		start[l] = at;
		for (int i = 0; i < n; i++)
			if (line[i] == l)
				sorted[at++] = q[i];
	}
	memcpy(q, sorted, (size_t)n * sizeof(*q));
	free(sorted);
	free(line);
	return k;
}

/* A line's process: the delay line over its queues, at real-time. */
static pid_t start_line(const struct dl_queue *q, int n, int ready_fd,
			struct dl_live *live)
{
	pid_t w = fork();

	if (w == 0) {
		struct dl_stats st;
		sigset_t none;

		for (int i = 0; i < DLSUP_LINES_MAX; i++)
			lines_pid[i] = 0;
		sigemptyset(&none);	/* the supervisor forks it blocked */
		sigprocmask(SIG_SETMASK, &none, NULL);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		/* nothing of the supervisor's but its own ready pipe */
		if (ready_fd >= 0) {
			if (dup2(ready_fd, 3) < 0)
				_exit(1);
			ready_fd = 3;
		}
		close_range(ready_fd >= 0 ? 4 : 3, ~0u, 0);
		/*
		 * Real-time priority: the delay line's error is its
		 * wake-up latency, which ordinary scheduling on a busy
		 * machine stretches. Its polling is capped, so it cannot
		 * starve the machine; if refused, go on.
		 */
		(void)prio_realtime(PRIO_DELAY_LINE);
		_exit(delayline_run_shared(q, n, ready_fd, &dl_stop, live,
					   &st) ? 1 : 0);
	}
	return w;
}

static void __attribute__((noreturn))
supervise(const struct dl_queue *q0, int n, int ready_fd,
	  struct dl_live *live)
{
	struct sigaction sa = { .sa_handler = on_term };
	int start[DLSUP_LINES_MAX], count[DLSUP_LINES_MAX], k;
	struct dl_queue *q = malloc((size_t)n * sizeof(*q));
	int restarts = 0, running = 0;
	sigset_t term, old;
	char kb;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (!q)
		_exit(1);
	memcpy(q, q0, (size_t)n * sizeof(*q));
	k = split_lines(q, n, start, count);
	/*
	 * The waiter learns how many lines there are, then gets a byte
	 * from each once it has bound its queues; each line closes the
	 * pipe then, this process once they are started: at end of file
	 * nobody holds it (see await_ready).
	 */
	kb = (char)k;
	if (write(ready_fd, &kb, 1) != 1)
		_exit(1);
	for (int i = 0; i < k && !dl_stop; i++) {
		pid_t w;

		/* the handler sees every line it must end */
		sigprocmask(SIG_BLOCK, &term, &old);
		w = start_line(q + start[i], count[i], ready_fd, live);
		lines_pid[i] = w > 0 ? w : 0;
		sigprocmask(SIG_SETMASK, &old, NULL);
		running += w > 0;
	}
	close(ready_fd);
	if (running < k)
		on_term(SIGTERM);
	/* each line until it stops; one that dies is started again */
	while (running > 0) {
		int status, i = 0;
		pid_t w = waitpid(-1, &status, 0);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			break;
		while (i < k && lines_pid[i] != w)
			i++;
		if (i == k)
			continue;
		running--;
		sigprocmask(SIG_BLOCK, &term, &old);
		lines_pid[i] = 0;
		if (!dl_stop && !(WIFEXITED(status) && !WEXITSTATUS(status)) &&
		    restarts < DLSUP_RESTARTS) {
			restarts++;
			usleep(100 * 1000);
			w = start_line(q + start[i], count[i], -1, live);
			lines_pid[i] = w > 0 ? w : 0;
			running += w > 0;
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
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

/*
 * Wait for the delay line to bind every queue: the supervisor writes how
 * many lines it starts, each line a byte once bound; read to end of file
 * (every line has closed the pipe then), DLSUP_READY_MS at most.
 */
static int await_ready(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec t0;
	int want = -1, got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct timespec now;
		long ms;
		char c[16];
		ssize_t r;
		int n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = DLSUP_READY_MS - (now.tv_sec - t0.tv_sec) * 1000 -
		     (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms <= 0)
			return -EIO;
		n = poll(&pfd, 1, (int)ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			return -EIO;
		r = read(fd, c, sizeof(c));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -EIO;
		if (r == 0)
			return want > 0 && got == want ? 0 : -EIO;
		for (ssize_t i = 0; i < r; i++) {
			if (want < 0)
				want = c[i];
			else
				got++;
		}
	}
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

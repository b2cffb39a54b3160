// SPDX-License-Identifier: MIT
/*
 * External programs (emu/spawn.h): exit statuses, standard error kept and
 * bounded, the time limit, a program that cannot start, and nothing of the
 * parent's descriptors reaching the program, standard input given as bytes,
 * a forked child left only the descriptors it is given.
 * No root needed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/proc.h"
#include "emu/spawn.h"

static struct spawn_result run(const char *path, char *const argv[],
			       int out_fd, unsigned timeout_ms, int want)
{
	struct spawn sp = { .path = path, .argv = argv, .nsfd = -1,
			    .out_fd = out_fd, .timeout_ms = timeout_ms };
	struct spawn_result res;

	cr_assert_eq(spawn_run(&sp, &res), want, "%s", path);
	return res;
}

/* Everything a pipe holds once its writer is gone. */
static size_t slurp(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return n;
}

/* Run sp with its standard output into out (len bytes): the bytes read. */
static size_t run_out(struct spawn *sp, struct spawn_result *res, char *out,
		      size_t len)
{
	int pfd[2];
	size_t n;

	cr_assert_eq(pipe(pfd), 0);
	sp->out_fd = pfd[1];
	cr_assert_eq(spawn_run(sp, res), 0);
	close(pfd[1]);
	n = slurp(pfd[0], out, len);
	close(pfd[0]);
	return n;
}

Test(spawn, exit_statuses)
{
	struct spawn_result res;
	char desc[256];

	res = run("/bin/true", (char *[]){ "true", NULL }, -1, 0, 0);
	cr_expect(spawn_ok(&res));
	cr_expect_eq(spawn_exit_status(&res), 0);
	res = run("/bin/false", (char *[]){ "false", NULL }, -1, 0, 0);
	cr_expect_not(spawn_ok(&res));
	cr_expect_eq(spawn_exit_status(&res), 1);
	spawn_describe(&res, desc, sizeof(desc));
	cr_expect_str_eq(desc, "exit status 1");
}

Test(spawn, standard_error_is_kept_and_named)
{
	struct spawn_result res;
	char desc[512];

	res = run("/bin/ls", (char *[]){ "ls", "/nonexistent/twinlab", NULL },
		  -1, 0, 0);
	cr_expect_not(spawn_ok(&res));
	cr_expect_eq(spawn_exit_status(&res), 2);
	cr_expect(strstr(res.err, "/nonexistent/twinlab"), "%s", res.err);
	spawn_describe(&res, desc, sizeof(desc));
	cr_expect(!strncmp(desc, "exit status 2: ls: ", 19), "%s", desc);
	cr_expect(!strchr(desc, '\n'), "%s", desc);
}

Test(spawn, standard_error_is_bounded)
{
	char *argv[64] = { "ls" };
	char names[62][100];
	struct spawn_result res;

	/* 62 missing files: each a line of ~90 bytes on standard error */
	for (int i = 0; i < 62; i++) {
		snprintf(names[i], sizeof(names[i]),
			 "/nonexistent/twinlab-%02d-%060d", i, 0);
		argv[i + 1] = names[i];
	}
	res = run("/bin/ls", argv, -1, 0, 0);
	cr_expect_eq(res.err_len, SPAWN_ERR_MAX);
	cr_expect_gt(res.err_lost, 0);
	cr_expect_eq(strlen(res.err), SPAWN_ERR_MAX);
}

Test(spawn, the_time_limit_kills)
{
	struct spawn_result res;
	char desc[256];

	res = run("/bin/sleep", (char *[]){ "sleep", "60", NULL }, -1, 100, 0);
	cr_expect(res.timed_out);
	cr_expect_not(spawn_ok(&res));
	cr_expect(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGKILL);
	spawn_describe(&res, desc, sizeof(desc));
	cr_expect_str_eq(desc, "killed after the time limit of 1 s");
}

Test(spawn, a_program_that_cannot_start)
{
	struct spawn sp = { .path = "/bin/true", .argv = (char *[]){ "true",
								     NULL },
			    .dir = "/nonexistent/twinlab", .nsfd = -1,
			    .out_fd = -1 };
	struct spawn_result res;

	run("/nonexistent/twinlab", (char *[]){ "x", NULL }, -1, 0, -ENOENT);
	run("bin/true", (char *[]){ "true", NULL }, -1, 0, -EINVAL);
	cr_expect_eq(spawn_run(&sp, &res), -ENOENT);
}

Test(spawn, output_directory_and_descriptors)
{
	int stray = open("/dev/null", O_RDONLY);
	char out[256];
	struct spawn sp = { .path = "/bin/ls", .dir = "/proc/self/fd",
			    .argv = (char *[]){ "ls", ".", NULL },
			    .nsfd = -1 };
	struct spawn_result res;

	/* neither the stray descriptor nor the pipe's other end leak in */
	cr_assert_geq(stray, 0);
	run_out(&sp, &res, out, sizeof(out));
	close(stray);
	cr_expect(spawn_ok(&res));
	/* 0, 1, 2, and ls's own descriptor of the directory */
	cr_expect_str_eq(out, "0\n1\n2\n3\n");
}

Test(spawn, standard_input_given_as_bytes)
{
	static const char in[] = "*mangle\n-A FORWARD -o x -j ACCEPT\nCOMMIT\n";
	char out[256];
	struct spawn sp = { .path = "/bin/cat",
			    .argv = (char *[]){ "cat", NULL }, .nsfd = -1,
			    .in = in, .in_len = sizeof(in) - 1 };
	struct spawn_result res;

	run_out(&sp, &res, out, sizeof(out));
	cr_expect(spawn_ok(&res));
	cr_expect_str_eq(out, in);
	/* no bytes given: it reads /dev/null's end at once */
	sp.in = NULL;
	cr_expect_eq(run_out(&sp, &res, out, sizeof(out)), 0);
	cr_expect(spawn_ok(&res));
}

/*
 * proc_close_but leaves a forked child what it is given and its standard
 * streams, whatever the order of what it keeps (twice, or none: -1), and
 * closes the rest, below, between and above them.
 */
Test(spawn, a_child_keeps_only_the_descriptors_it_is_given)
{
	int p[2], status;
	unsigned mask = 0, std = 0;
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	cr_assert_lt(p[1], 20, "the test's own descriptors are below 20");
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			std |= 1u << fd;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int keep[] = { 23, -1, p[1], 21, 21 };
		unsigned got = 0;

		for (int fd = 20; fd < 28; fd++)
			if (dup2(p[0], fd) != fd)
				_exit(2);
		proc_close_but(keep, 5);
		for (int fd = 0; fd < 28; fd++)
			if (fcntl(fd, F_GETFD) >= 0 && fd != p[1])
				got |= 1u << fd;
		_exit(write(p[1], &got, sizeof(got)) == sizeof(got) ? 0 : 3);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_assert_eq(read(p[0], &mask, sizeof(mask)), (ssize_t)sizeof(mask));
	cr_assert_eq(mask, std | 1u << 21 | 1u << 23, "open: %#x", mask);
	close(p[0]);
	close(p[1]);
}

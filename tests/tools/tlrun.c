// SPDX-License-Identifier: MIT
/*
 * Running the twinlab binary ($TWINLAB, set by make) the way a user does,
 * for the tests of its commands.
 */
#include "tlrun.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

char *tl_slurp(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	cr_assert_not_null(buf);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			buf = realloc(buf, cap *= 2);
			cr_assert_not_null(buf);
		}
	}
	buf[len] = '\0';
	return buf;
}

/* Run argv with stdout and stderr into temporary files. */
struct tl_run tl_run(const char *const *args)
{
	const char *bin = getenv("TWINLAB");
	char *argv[16];
	char o[] = "/tmp/tl-run-outXXXXXX", e[] = "/tmp/tl-run-errXXXXXX";
	int fo, fe, n = 0;
	posix_spawn_file_actions_t fa;
	struct tl_run r = { 0 };
	pid_t pid;

	/* before the files exist: a failed assertion leaves nothing */
	cr_assert_not_null(bin, "TWINLAB is not set: run through 'make check'");
	fo = mkstemp(o);
	fe = mkstemp(e);
	if (fo >= 0)
		unlink(o);	/* the descriptors are all we need */
	if (fe >= 0)
		unlink(e);
	cr_assert(fo >= 0 && fe >= 0);
	argv[n++] = (char *)bin;
	for (int i = 0; args[i]; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fo, 1);
	posix_spawn_file_actions_adddup2(&fa, fe, 2);
	cr_assert_eq(posix_spawn(&pid, bin, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	cr_assert_eq(waitpid(pid, &r.status, 0), pid);
	lseek(fo, 0, SEEK_SET);
	lseek(fe, 0, SEEK_SET);
	r.out = tl_slurp(fo);
	r.err = tl_slurp(fe);
	close(fo);
	close(fe);
	return r;
}

int tl_code(const struct tl_run *r)
{
	cr_assert(WIFEXITED(r->status));
	return WEXITSTATUS(r->status);
}

void tl_run_free(struct tl_run *r)
{
	free(r->out);
	free(r->err);
}

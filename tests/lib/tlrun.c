// SPDX-License-Identifier: MIT
/*
 * Running the twinlab binary ($TWINLAB, set by make) the way a user does,
 * for the tests of its commands.
 */
#include "tests/lib/tlrun.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

char *tl_read(const char *path)
{
	int fd = open(path, O_RDONLY);
	char *s;

	cr_assert(fd >= 0, "cannot open '%s'", path);
	s = tl_slurp(fd);
	close(fd);
	return s;
}

/* Run argv with stdout and stderr into temporary files. */
struct tl_run tl_run(const char *const *args)
{
	const char *bin = getenv("TWINLAB");

	/* before the files exist: a failed assertion leaves nothing */
	cr_assert_not_null(bin, "TWINLAB is not set: run through 'make check'");
	return tl_run_bin(bin, args);
}

struct tl_run tl_run_bin(const char *bin, const char *const *args)
{
	char *argv[16];
	char o[] = "/tmp/tl-run-outXXXXXX", e[] = "/tmp/tl-run-errXXXXXX";
	int fo, fe, n = 0;
	posix_spawn_file_actions_t fa;
	struct tl_run r = { 0 };
	pid_t pid;

	fo = mkstemp(o);
	fe = mkstemp(e);
	if (fo >= 0)
		unlink(o);	/* the descriptors are all we need */
	if (fe >= 0)
		unlink(e);
	cr_assert(fo >= 0 && fe >= 0);
	argv[n++] = (char *)bin;
	for (int i = 0; args[i]; i++) {
		cr_assert_lt(n, 15, "too many arguments");
		argv[n++] = (char *)args[i];
	}
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

void tl_refused(const char *const *args, int code, const char *want)
{
	struct tl_run r = tl_run(args);

	cr_assert_eq(tl_code(&r), code, "%s: exit %d, not %d: %s", args[0],
		     tl_code(&r), code, r.err);
	cr_assert(strstr(r.err, want), "%s: stderr lacks '%s': %s", args[0],
		  want, r.err);
	tl_run_free(&r);
}

void tl_says(const char *const *args, int code, const char *want)
{
	struct tl_run r = tl_run(args);

	cr_assert_eq(tl_code(&r), code, "%s: exit %d, not %d: %s%s", args[0],
		     tl_code(&r), code, r.out, r.err);
	cr_assert(strstr(r.out, want) || strstr(r.err, want),
		  "%s: no '%s' in stdout: %s\nstderr: %s", args[0], want,
		  r.out, r.err);
	tl_run_free(&r);
}

void tl_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "cannot write '%s'", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0, "cannot write '%s'", path);
}

void tl_tmpfile(char *tmpl, const char *text)
{
	int fd = mkstemp(tmpl);
	size_t n = strlen(text);

	cr_assert(fd >= 0, "cannot make '%s'", tmpl);
	cr_assert_eq(write(fd, text, n), (ssize_t)n, "cannot write '%s'",
		     tmpl);
	close(fd);
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void tl_rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int tl_status_on(const char *cmd, const char *path, char **err)
{
	char *bin = getenv("TWINLAB");
	int ep[2], status, in;
	pid_t pid;

	cr_assert_not_null(bin, "TWINLAB is not set");
	cr_assert_eq(pipe(ep), 0);
	in = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(in, 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (dup2(in, 0) < 0 || dup2(null, 1) < 0 ||
		    dup2(ep[1], 2) < 0)
			_exit(126);
		execl(bin, bin, cmd, (char *)NULL);
		_exit(127);
	}
	close(in);
	close(ep[1]);
	*err = tl_slurp(ep[0]);
	close(ep[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

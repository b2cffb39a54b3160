/* SPDX-License-Identifier: MIT */
/* Running the twinlab binary in the command tests; see tlrun.c. */
#ifndef TESTS_TWIN_TLRUN_H
#define TESTS_TWIN_TLRUN_H

struct tl_run {
	int status;
	char *out, *err;
};

/* Everything readable from fd, NUL-terminated (asserts on failure). */
char *tl_slurp(int fd);
/* The file at path, NUL-terminated (asserts on failure). */
char *tl_read(const char *path);
/* Run $TWINLAB with args (NULL-terminated); its stdout and stderr. */
struct tl_run tl_run(const char *const *args);
/* Run the program at path bin with args the same way. */
struct tl_run tl_run_bin(const char *bin, const char *const *args);
/* Its exit status (asserts that it exited). */
int tl_code(const struct tl_run *r);
void tl_run_free(struct tl_run *r);
/* Run args; assert that it exits with code and that its stderr has want. */
void tl_refused(const char *const *args, int code, const char *want);
/* The same, want on its stdout or its stderr (run says it on either). */
void tl_says(const char *const *args, int code, const char *want);
/* Remove path and everything under it (symbolic links not followed). */
void tl_rm_tree(const char *path);
/* Write text to path, created or truncated (asserts on failure). */
void tl_write(const char *path, const char *text);
/*
 * Run `$TWINLAB cmd` with stdin from path and stdout discarded: its exit
 * status (asserts that it exited) and its stderr in *err (free it).
 */
int tl_status_on(const char *cmd, const char *path, char **err);
/* A new file named from tmpl as mkstemp(3) names it, holding text. */
void tl_tmpfile(char *tmpl, const char *text);

#endif

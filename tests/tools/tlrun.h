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
/* Run $TWINLAB with args (NULL-terminated); its stdout and stderr. */
struct tl_run tl_run(const char *const *args);
/* Its exit status (asserts that it exited). */
int tl_code(const struct tl_run *r);
void tl_run_free(struct tl_run *r);

#endif

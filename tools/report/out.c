// SPDX-License-Identifier: MIT
/*
 * The report's output helpers, which every part writes with: names made
 * safe for files, gnuplot and markdown, numbers as each format wants
 * them, the files of the report's directory, and the programs that
 * render them (emu/spawn.h). They call nothing of the report's parts.
 */
#include "tools/twinlab.h"
#include "tools/report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void fname_part(char *dst, size_t len, const char *s)
{
	size_t k = 0;

	for (; *s && k + 1 < len && k < 40; s++)
		dst[k++] = (*s >= 'a' && *s <= 'z') ||
					   (*s >= 'A' && *s <= 'Z') ||
					   (*s >= '0' && *s <= '9') ||
					   *s == '_' || *s == '.' || *s == '-'
				   ? *s
				   : '_';
	if (!k && len > 1)
		dst[k++] = 'x';
	dst[k] = '\0';
}

void gp_text(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s != '\'' && *s != '"' && *s != '\\' &&
		    (unsigned char)*s >= ' ')
			fputc(*s, f);
}

void md_text(FILE *f, const char *s)
{
	if (!s || !*s) {
		fputs("-", f);
		return;
	}
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n' || *s == '\r' || *s == '\t')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

/* v with prec digits, 'f' after the point or 'g' significant */
static void num(FILE *f, char conv, int prec, double v)
{
	if (conv == 'g')
		fprintf(f, "%.*g", prec, v);
	else if (conv == '+') /* a difference: signed */
		fprintf(f, "%+.*f", prec, v);
	else
		fprintf(f, "%.*f", prec, v);
}

void md_num(FILE *f, char conv, int prec, double v)
{
	if (isfinite(v))
		num(f, conv, prec, v);
	else
		fputs("n/a", f);
}

void csv_num(FILE *f, char conv, int prec, double v)
{
	if (isfinite(v))
		num(f, conv, prec, v);
}

const char *dat_safe(const char *s, char *buf, size_t n)
{
	size_t i = 0;

	for (; s && s[i] && i + 1 < n; i++)
		buf[i] =
			(unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
	buf[i] = '\0';
	return buf;
}

void dat_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.9g", v);
	else
		fputs(" ?", f);
}

FILE *out_open(struct report *r, const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", r->dir, name);
	f = open_output(path, false);
	if (!f) {
		p_err("cannot create '%s': %s", path, output_strerror(errno));
		r->nfail++;
	}
	return f;
}

int out_clear(struct report *r, const char *name)
{
	FILE *f = out_open(r, name);

	if (!f)
		return -EINVAL;
	fclose(f);
	return 0;
}

int out_close(struct report *r, FILE *f, const char *name)
{
	bool bad = ferror(f);

	if (fclose(f) || bad) {
		p_err("cannot write '%s/%s': %s", r->dir, name,
		      strerror(errno ? errno : EIO));
		r->nfail++;
		return -EIO;
	}
	return 0;
}

void made(struct report *r, const char *name)
{
	for (int i = 0; i < r->nmade; i++)
		if (!strcmp(r->made[i], name))
			return;
	if (r->nmade < (int)(sizeof(r->made) / sizeof(r->made[0])))
		r->made[r->nmade++] = strdup(name);
}

bool was_made(const struct report *r, const char *name)
{
	for (int i = 0; i < r->nmade; i++)
		if (!strcmp(r->made[i], name))
			return true;
	return false;
}

int report_exec(struct report *r, const char *bin, char *const argv[],
		const char *log, struct spawn_result *res)
{
	struct spawn sp = {.path = bin,
			   .argv = argv,
			   .dir = r->dir,
			   .nsfd = -1,
			   .timeout_ms = REPORT_EXEC_S * 1000};
	int fd = open(log,
		      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
			      O_NONBLOCK,
		      0644);
	int err;

	if (fd < 0)
		return -errno;
	/* the program's own environment: gnuplot and dot read fonts and
	 * locale from it */
	sp.envp = environ;
	sp.out_fd = fd;
	err = spawn_run(&sp, res);
	if (!err && res->err_len) {
		/* its messages go to the log, after what it printed */
		if (write(fd, res->err, res->err_len) < 0)
			err = 0;
		if (res->err_lost)
			dprintf(fd, "[%zu more bytes of messages not kept]\n",
				res->err_lost);
	}
	close(fd);
	return err;
}

void report_exec_fail(struct report *r, const char *bin, int err,
		      const struct spawn_result *res, const char *what,
		      const char *log)
{
	struct stat sb;
	char how[512];

	r->nfail++;
	if (err) {
		p_err("cannot run '%s': %s", bin, strerror(-err));
		return;
	}
	spawn_describe(res, how, sizeof(how));
	if (!stat(log, &sb) && sb.st_size > 0)
		p_err("%s failed on '%s' (%s): see '%s'", bin, what, how, log);
	else
		p_err("%s failed on '%s' (%s)", bin, what, how);
}

// SPDX-License-Identifier: MIT
#include "tools/cli.h"
#include "tools/args.h"
#include "tools/twinlab.h"
#include "twin/predict.h"
#include "twin/sched.h"
#include "twin/timeline.h"
#include "emu/lab.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void say(const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", prog, what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

void p_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("warning: ", fmt, ap);
	va_end(ap);
}

/*
 * One line of help that declares an option ("  -p, --prefix P  ..."):
 * its short form, name and whether it takes an argument. False for any
 * other line.
 */
static bool declares(const char *l, struct cli_opt *o)
{
	size_t n;

	if (strncmp(l, "  -", 3))
		return false;
	l += 2;
	*o = (struct cli_opt){ 0 };
	if (l[1] != '-') {
		if (!isalpha((unsigned char)l[1]) || strncmp(l + 2, ", --", 4))
			return false;
		o->key = l[1];
		l += 4;
	}
	l += 2;
	n = strspn(l, "abcdefghijklmnopqrstuvwxyz0123456789-");
	if (!n || n >= sizeof(o->name))
		return false;
	memcpy(o->name, l, n);
	o->arg = l[n] == ' ' && isupper((unsigned char)l[n + 1]);
	return true;
}

/* The options declared by c->help; aborts on a help that declares them
 * badly, which is a mistake in the program, found by its tests. */
static void read_help(struct cli *c)
{
	const char *l = c->help;

	c->n = 0;
	while (l && *l) {
		struct cli_opt o;

		if (declares(l, &o)) {
			if (c->n == CLI_OPTS_MAX || !strcmp(o.name, "help")) {
				fprintf(stderr, "%s: help declares too many "
					"options, or --help\n", prog);
				abort();
			}
			c->o[c->n++] = o;
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
}

static int find(const struct cli *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->o[i].name, name))
			return i;
	fprintf(stderr, "%s: asked for --%s, which the help does not "
		"declare\n", prog, name);
	abort();
}

void cli_usage(const struct cli *c, FILE *f)
{
	fputs(c->help, f);
}

int cli_parse(struct cli *c, int argc, char **argv, int min, int max,
	      const char *fmt, ...)
{
	struct option lo[CLI_OPTS_MAX + 2] = { 0 };
	char keys[3 * CLI_OPTS_MAX + 4];
	size_t k = 0;
	va_list ap;
	int n, ch;

	va_start(ap, fmt);
	n = vsnprintf(c->help, sizeof(c->help), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(c->help)) {
		fprintf(stderr, "%s: a help longer than %d bytes\n", prog,
			CLI_HELP_MAX);
		abort();
	}
	read_help(c);
	if (c->in_order)
		keys[k++] = '+';
	keys[k++] = 'h';
	for (int i = 0; i < c->n; i++) {
		lo[i] = (struct option){ c->o[i].name,
			c->o[i].arg ? required_argument : no_argument, NULL,
			c->o[i].key ? c->o[i].key : 256 + i };
		if (c->o[i].key) {
			keys[k++] = c->o[i].key;
			if (c->o[i].arg)
				keys[k++] = ':';
		}
	}
	keys[k] = '\0';
	lo[c->n] = (struct option){ "help", no_argument, NULL, 'h' };
	c->nseen = 0;
	optind = 0;	/* glibc: start afresh, whoever parsed before */
	while ((ch = getopt_long(argc, argv, keys, lo, NULL)) != -1) {
		int i;

		if (ch == 'h') {
			cli_usage(c, stdout);
			return 0;
		}
		for (i = 0; i < c->n; i++)
			if (ch == (c->o[i].key ? c->o[i].key : 256 + i))
				break;
		if (i == c->n) {	/* getopt said what */
			cli_usage(c, stderr);
			return EXIT_USAGE;
		}
		if (c->nseen == CLI_SEEN_MAX) {
			p_err("more than %d options", CLI_SEEN_MAX);
			return EXIT_USAGE;
		}
		c->seen[c->nseen++] = (struct cli_seen){ i, optarg };
	}
	c->argc = argc - optind;
	c->argv = argv + optind;
	if (c->argc < min || c->argc > max) {
		cli_usage(c, stderr);
		return EXIT_USAGE;
	}
	return CLI_GO;
}

bool cli_flag(const struct cli *c, const char *name)
{
	int i = find(c, name);

	for (int s = 0; s < c->nseen; s++)
		if (c->seen[s].opt == i)
			return true;
	return false;
}

const char *cli_next(const struct cli *c, const char *name, int *at)
{
	int i = find(c, name);

	for (; *at < c->nseen; (*at)++)
		if (c->seen[*at].opt == i)
			return c->seen[(*at)++].val;
	return NULL;
}

const char *cli_str(const struct cli *c, const char *name, const char *dflt)
{
	const char *v = dflt, *s;
	int at = 0;

	while ((s = cli_next(c, name, &at)))
		v = s;
	return v;
}

int cli_uint(const struct cli *c, const char *name, uint64_t min,
	     uint64_t max, uint64_t *v)
{
	const char *s = cli_str(c, name, NULL);

	if (s && parse_uint(s, min, max, v)) {
		p_err("bad --%s '%s': a whole number in [%ju, %ju]", name, s,
		      (uintmax_t)min, (uintmax_t)max);
		return EXIT_USAGE;
	}
	return 0;
}

int cli_real(const struct cli *c, const char *name, double min, double max,
	     double *v)
{
	const char *s = cli_str(c, name, NULL);

	if (s && parse_real(s, min, max, v)) {
		p_err("bad --%s '%s': a number in [%.15g, %.15g]", name, s, min,
		      max);
		return EXIT_USAGE;
	}
	return 0;
}

int cli_prefix(const struct cli *c, const char **prefix)
{
	*prefix = cli_str(c, "prefix", *prefix ? *prefix : DEFAULT_PREFIX);
	return prefix_arg(*prefix) ? 0 : EXIT_USAGE;
}

int cli_sched(const struct cli *c, const struct sched_ops **ops)
{
	const char *s = cli_str(c, "scheduler", NULL);

	if (s && !(*ops = sched_arg(s)))
		return EXIT_USAGE;
	return 0;
}

int cli_predictor(const struct cli *c, predict_fn *fn)
{
	const char *s = cli_str(c, "predictor", NULL);

	if (s && !(*fn = predictor_arg(s)))
		return EXIT_USAGE;
	return 0;
}

int cli_dilation(const struct cli *c, double *n, bool *auto_n)
{
	const char *s = cli_str(c, "dilation", NULL);

	if (s && dilation_arg(s, n, auto_n))
		return EXIT_USAGE;
	return 0;
}

int cli_resched(const struct cli *c, int *policy)
{
	const char *s = cli_str(c, "reschedule", NULL);

	if (!s)
		return 0;
	*policy = resched_find(s);
	if (*policy < 0) {
		p_err("unknown re-scheduling policy '%s': none, full or auto",
		      s);
		return EXIT_USAGE;
	}
	return 0;
}

/* text at column col of buf, in words, lines of at most 79 columns */
static size_t wrap(char *buf, size_t len, const char *text, int col)
{
	size_t at = 0;
	int x = col;

	while (*text && at < len) {
		size_t w = strcspn(text, " ");

		if (x > col && x + 1 + (int)w > 79) {
			at += (size_t)snprintf(buf + at, len - at, "\n%*s",
					       col, "");
			x = col;
		} else if (x > col) {
			at += (size_t)snprintf(buf + at, len - at, " ");
			x++;
		}
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, "%.*s",
					       (int)w, text);
		x += (int)w;
		text += w + strspn(text + w, " ");
	}
	return at;
}

int cli_sched_list(char *buf, size_t len)
{
	size_t at = 0;

	for (int i = 0; sched_list[i] && at < len; i++) {
		at += (size_t)snprintf(buf + at, len - at, "      %-6s ",
				       sched_list[i]->name);
		if (at < len)
			at += wrap(buf + at, len - at, sched_list[i]->help, 13);
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, "\n");
	}
	return at < len ? 0 : -ENOSPC;
}

const struct sched_ops *sched_arg(const char *name)
{
	const struct sched_ops *ops = sched_find(name);

	if (!ops) {
		fprintf(stderr, "%s: unknown scheduler '%s' (one of:", prog,
			name);
		for (int i = 0; sched_list[i]; i++)
			fprintf(stderr, " %s", sched_list[i]->name);
		fprintf(stderr, ")\n");
	}
	return ops;
}

predict_fn predictor_arg(const char *name)
{
	if (!strcmp(name, "fluid"))
		return predict_round;
	if (!strcmp(name, "packet"))
		return predict_round_packets;
	p_err("unknown predictor '%s': fluid or packet", name);
	return NULL;
}

bool prefix_arg(const char *prefix)
{
	if (lab_prefix_ok(prefix))
		return true;
	p_err("bad prefix '%s': use 1-%d characters of [a-z0-9] starting with "
	      "a letter",
	      prefix, LAB_PREFIX_MAX);
	return false;
}

int dilation_arg(const char *arg, double *n, bool *auto_n)
{
	if (parse_dilation(arg, LAB_DILATION_MAX, n, auto_n)) {
		p_err("bad --dilation '%s': 'auto', 'auto:N' or N, with N a "
		      "number in [1, %g]", arg, LAB_DILATION_MAX);
		return -EINVAL;
	}
	return 0;
}

volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

void on_stop_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int cli_link(const char *cmd, const char *opt)
{
	if (!isatty(0) && !isatty(1))
		return 0;
	p_err("%s: stdin and stdout are a terminal: it is started by 'run "
	      "--%s', over a link", cmd, opt);
	return EXIT_USAGE;
}

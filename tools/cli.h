/* SPDX-License-Identifier: MIT */
/*
 * A command's options are read from its help: the text 'twinlab CMD
 * --help' prints is the one place an option is declared, so help and
 * parsing cannot drift. A line of the help that starts with two spaces and
 * a dash declares one option:
 *
 *   "  -p, --prefix P  the emulation's prefix ..."
 *   "  --json          say it as JSON"
 *
 * an optional short form, the long name, and an argument where a word in
 * capitals follows the name after one space (P, FILE, N|auto[:N]). Every
 * command takes -h, --help. The values are then asked for by name, each
 * check saying what is wrong in the one shape every command shares:
 * "bad --NAME 'VALUE': <what it must be>".
 */
#ifndef TOOLS_CLI_H
#define TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#define CLI_OPTS_MAX 24
#define CLI_SEEN_MAX 64		/* options given on one command line */
#define CLI_HELP_MAX 8192

struct cli {
	bool in_order;		/* set before parsing: options end at the
				 * first operand (exec's command line) */
	int n;
	struct cli_opt {
		char name[24];
		char key;	/* short form, or 0 */
		bool arg;
	} o[CLI_OPTS_MAX];
	int nseen;
	struct cli_seen {
		int opt;
		const char *val;
	} seen[CLI_SEEN_MAX];
	int argc;		/* the operands, in order */
	char **argv;
	char help[CLI_HELP_MAX];
};

/* The prefix an emulation has unless told otherwise. */
#define DEFAULT_PREFIX "tl"

/* The help of the options that mean the same to every command. */
#define CLI_PREFIX_HELP \
	"  -p, --prefix P    the emulation's prefix (default '" DEFAULT_PREFIX \
	"'): its\n" \
	"                    namespaces are '<P>-<node>'\n"
#define CLI_PREDICTOR_HELP \
	"  --predictor M     the twin's model of a round: fluid (transfers " \
	"share links\n" \
	"                    max-min fairly; the default) or packet (every " \
	"TCP\n" \
	"                    segment, links serving the transfers in turn)\n"

/* What cli_parse returns when the command goes on. */
#define CLI_GO (-1)

/*
 * cli_parse - read argv (argv[0] the command's name) by the help that the
 * format fmt renders, wanting between min and max operands. CLI_GO;
 * or 0 after printing the help for --help; or EXIT_USAGE after saying
 * what is wrong and printing the help on stderr.
 */
int cli_parse(struct cli *c, int argc, char **argv, int min, int max,
	      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* cli_usage - the help on f (what --help prints). */
void cli_usage(const struct cli *c, FILE *f);

/* cli_flag - whether --name was given. */
bool cli_flag(const struct cli *c, const char *name);

/* cli_str - the last value of --name, or dflt. */
const char *cli_str(const struct cli *c, const char *name, const char *dflt);

/*
 * cli_next - each value of a repeatable --name in turn: *at starts at 0;
 * NULL after the last.
 */
const char *cli_next(const struct cli *c, const char *name, int *at);

/*
 * cli_uint, cli_real - --name's value as a whole number, or any finite
 * number, in [min, max] into *v (left alone when not given). 0, or
 * EXIT_USAGE after saying what is wrong.
 */
int cli_uint(const struct cli *c, const char *name, uint64_t min,
	     uint64_t max, uint64_t *v);
int cli_real(const struct cli *c, const char *name, double min, double max,
	     double *v);

/*
 * The options every emulation command shares, checked the same way; each
 * leaves *v alone when not given (cli_prefix: *prefix, or DEFAULT_PREFIX
 * if NULL). 0, or EXIT_USAGE after saying what is wrong.
 */
struct sched_ops;
struct plan;
typedef int (*predict_fn)(struct plan *p);
int cli_prefix(const struct cli *c, const char **prefix);
int cli_sched(const struct cli *c, const struct sched_ops **ops);
int cli_predictor(const struct cli *c, predict_fn *fn);
/* --dilation N|auto[:N]: n 0 and *auto_n for auto; EXIT_USAGE (said) */
int cli_dilation(const struct cli *c, double *n, bool *auto_n);

/* --reschedule none|full|auto into *policy (enum resched), if given */
int cli_resched(const struct cli *c, int *policy);

/* cli_sched_list - the schedulers, a line each, for a help; 0 or -ENOSPC */
int cli_sched_list(char *buf, size_t len);

/*
 * cli_link - for a command whose stdin and stdout are a run's link to it
 * (worker, agent, started by the run's --OPT-via): 0, or EXIT_USAGE after
 * saying that a terminal is not one.
 */
int cli_link(const char *cmd, const char *opt);

/* p_err - "twinlab: <message>" on stderr. */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* p_warn - "twinlab: warning: <message>" on stderr. */
void p_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * sched_arg, predictor_arg - the scheduler or predictor named, or NULL
 * after saying which there are.
 */
const struct sched_ops *sched_arg(const char *name);
predict_fn predictor_arg(const char *name);

/*
 * prefix_arg - whether prefix is one an emulation can have (lab_prefix_ok);
 * false after saying what one looks like.
 */
bool prefix_arg(const char *prefix);

/*
 * dilation_arg - a dilation as --dilation takes it: N (auto_n false), auto
 * (n 0) or auto:N (start at N). 0, or -EINVAL after saying what is wrong.
 */
int dilation_arg(const char *arg, double *n, bool *auto_n);

/*
 * on_stop_signals - every signal a user may send to stop a command
 * (SIGINT, SIGTERM, SIGHUP, and SIGPIPE: a closed stdout) sets
 * stop_signal to its number (0: none yet), for the command to end what
 * it does cleanly; no SA_RESTART, so waits see EINTR.
 */
extern volatile sig_atomic_t stop_signal;
void on_stop_signals(void);

#endif

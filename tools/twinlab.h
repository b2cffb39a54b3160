/* SPDX-License-Identifier: MIT */
/*
 * The twinlab command: one binary, one file per subcommand. Only this
 * layer prints; twin/ and emu/ return -errno and fill error records.
 */
#ifndef TOOLS_TWINLAB_H
#define TOOLS_TWINLAB_H

#include <signal.h>
#include <stdbool.h>

#include "tools/cli.h"
#include "twin/clock.h"
#include "twin/scenario.h"

/* Exit statuses: 0 success, 1 failure, 2 bad usage or bad scenario. */
enum { EXIT_USAGE = 2 };

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *help;
};

extern const char *prog;

/* ---- tools/load.c: scenarios and outputs, as the commands read them ---- */

/* print_scn_error - "file:line:col: msg" (or "file: msg") on f. */
void print_scn_error(FILE *f, const struct scn_error *e);

/* The most rounds a run (and plan's timeline) can be asked for. */
#define RUN_ROUNDS_MAX 100000u

/*
 * set_rounds - every task of sc, those that arrive by its events too,
 * runs r rounds: what a run does with --rounds (or with the most any task
 * asks for), so the twin's timeline counts the rounds the run plays.
 */
void set_rounds(struct scenario *sc, unsigned r);

/*
 * open_output - path opened for writing ("w"), if it is a regular file or
 * nothing yet: never through a symbolic link at it, never a FIFO, device
 * or directory (refused before anything is written, errno ELOOP for a
 * link, EINVAL for the rest). NULL and errno otherwise.
 */
FILE *open_output(const char *path, bool append);

/* output_strerror - why open_output refused, for "cannot create 'F': ...". */
const char *output_strerror(int err);

/* load_scenario - load or print "file:line:col: msg" and return NULL. */
struct scenario *load_scenario(const char *path);

/*
 * refuse_relay - whether sc pipelines its relays where the emulation
 * cannot: predicted by predict, the packet model (which does not model
 * pipelined relays; refused here where the file says pipelined and a task
 * could relay, else by the predictor once a plan does relay), or with a
 * task of int8 parameters (one scale for the whole model: an aggregator
 * cannot send its mean chunk by chunk). If so, says so on f at the
 * setting, or at the file where pipelined is the default.
 */
bool refuse_relay(const struct scenario *sc, const char *path, FILE *f,
		  predict_fn predict);

/*
 * refuse_events - whether sc (read from path) has events the emulation
 * plays only when it re-places tasks (replaces): arrivals, departures
 * and a cut never repaired (the tasks over it would wait for ever); if
 * so, says so on f at the first.
 */
bool refuse_events(const struct scenario *sc, const char *path, FILE *f,
		   bool replaces);

/*
 * load_events - add the events of file path (NULL: none) to sc, or print
 * "file:line:col: msg". 0 or EXIT_USAGE.
 */
int load_events(struct scenario *sc, const char *path);

/*
 * plan_scenario - load the scenario at path (and the events of file
 * events, unless NULL) and schedule it with ops. 0; or EXIT_USAGE (a bad
 * scenario, said at file:line:col) or 1 (scheduling failed, said), with
 * nothing left allocated.
 */
int plan_scenario(const char *path, const char *events,
		  const struct sched_ops *ops, struct scenario **sc,
		  struct plan **p);

/* note_loss - say once that sc's fibres lose packets, which the emulation
 * applies and the twin's predictors do not model (nothing when none do). */
void note_loss(const struct scenario *sc, FILE *f);

/* print_events - sc's events, one line each, in time order. */
void print_events(const struct scenario *sc, FILE *f);

/* ---- what commands share: tools/cmd/view.c, tools/cmd/fibre.c ---------- */

/* up --view: the live view of prefix with view's defaults, until a signal. */
int view_after_up(const char *prefix, bool json);
/*
 * run and experiment --view: the live view with view's defaults (any
 * free port if its own is taken), said on out; 0, or 1 (said).
 */
struct view;
int view_for_run(FILE *out, struct view **v);

/*
 * fibre_apply - cut (up false) or repair the fibre between ROADMs a and b
 * of the emulation up under prefix, holding its lock as who: what
 * 'twinlab cut' and 'repair' do, for them and the live view. 0 with the
 * fibre in *d and the change said in msg; else an exit status (1, or
 * EXIT_USAGE for names that are not a fibre) with the reason in msg.
 */
struct fibre_done {
	char a[64], b[64];
	double km;
	int lit; /* wavelengths changed */
};
int fibre_apply(const char *prefix, const char *a, const char *b, bool up,
		const char *who, bool owned, struct fibre_done *d, char *msg,
		size_t len);

/* ---- the subcommands, one a file (tools/cmd/, report in tools/report/) -- */

int cmd_plan(int argc, char **argv);
int cmd_up(int argc, char **argv);
int cmd_down(int argc, char **argv);
int cmd_clean(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_addr(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_cut(int argc, char **argv);
int cmd_repair(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_experiment(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_select(int argc, char **argv);

#endif

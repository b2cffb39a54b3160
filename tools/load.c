// SPDX-License-Identifier: MIT
/*
 * What the commands share about their inputs and outputs: scenarios and
 * event files loaded and checked (errors at file:line:col), what the
 * emulation refuses of them, and output files opened safely.
 */
#include "tools/twinlab.h"
#include "twin/predict.h"
#include "twin/sched.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void print_scn_error(FILE *f, const struct scn_error *e)
{
	if (e->line)
		fprintf(f, "%s:%d:%d: %s\n", e->file, e->line, e->col, e->msg);
	else
		fprintf(f, "%s: %s\n", e->file, e->msg);
}

FILE *open_output(const char *path, bool append)
{
	/* no waiting for a FIFO's reader, no following a link at path */
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
			    O_NOCTTY | O_CLOEXEC | (append ? O_APPEND : 0),
		      0644), saved;
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	if ((!append && ftruncate(fd, 0)) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		saved = errno;
		close(fd);
		errno = saved;
		return NULL;
	}
	f = fdopen(fd, append ? "a" : "w");
	if (!f) {
		saved = errno;
		close(fd);
		errno = saved;
	}
	return f;
}

const char *output_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == ELOOP)
		return "a symbolic link (name a regular file or a new path)";
	if (err == EINVAL || err == ENXIO)
		return "not a regular file (name a regular file or a new path)";
	return strerror(err);
}

struct scenario *load_scenario(const char *path)
{
	struct scn_error err;
	struct scenario *sc = scenario_load(path, &err);

	if (!sc)
		print_scn_error(stderr, &err);
	return sc;
}

void set_rounds(struct scenario *sc, unsigned r)
{
	for (int t = 0; t < sc->ntasks; t++)
		sc->tasks[t].rounds = r;
	for (int k = 0; k < sc->nevents; k++)
		if (sc->events[k].kind == SCN_EV_ARRIVE)
			sc->events[k].task.rounds = r;
}

/* "FILE:LINE:COL: 'name' pipelines its relays" or, defaulted, "FILE:
 * 'name' pipelines its relays (the default)" */
static void relay_at(const struct scenario *sc, const char *path, FILE *f)
{
	if (sc->relay_line)
		fprintf(f, "%s:%d:%d: '%s' pipelines its relays", path,
			sc->relay_line, sc->relay_col, sc->name);
	else
		fprintf(f, "%s: '%s' pipelines its relays (the default)", path,
			sc->name);
}

/* Whether a task of sc (or one arriving) has two locals: one could relay. */
static bool could_relay(const struct scenario *sc)
{
	for (int t = 0; t < sc->ntasks + sc->nevents; t++) {
		const struct scn_event *e = t < sc->ntasks ? NULL :
					    &sc->events[t - sc->ntasks];

		if (e && e->kind != SCN_EV_ARRIVE)
			continue;
		if ((e ? e->task.nlocals : sc->tasks[t].nlocals) > 1)
			return true;
	}
	return false;
}

bool refuse_relay(const struct scenario *sc, const char *path, FILE *f,
		  predict_fn predict)
{
	if (sc->relay == SCN_RELAY_STORE)
		return false;
	/*
	 * Said at the setting where the file asks for it; by default, only
	 * a plan whose models do relay is refused, once planned (spff's
	 * stars predict the same either way)
	 */
	if (predict == predict_round_packets && sc->relay_line &&
	    could_relay(sc)) {
		relay_at(sc, path, f);
		fprintf(f, ", which the packet model does not predict: use "
			"'--predictor fluid' (the default) or 'relay: store'\n");
		return true;
	}
	for (int t = 0; t < sc->ntasks + sc->nevents; t++) {
		const struct scn_task *st = t < sc->ntasks ? &sc->tasks[t] :
					    &sc->events[t - sc->ntasks].task;

		if (t >= sc->ntasks &&
		    sc->events[t - sc->ntasks].kind != SCN_EV_ARRIVE)
			continue;
		if (st->bytes_per_parameter != 1)
			continue;
		relay_at(sc, path, f);
		fprintf(f, ", but task '%s' (line %d) sends int8 parameters, "
			"whose one scale for the whole model an aggregator "
			"knows only at the end: use 2, 4 or 8 bytes per "
			"parameter, or 'relay: store'\n", st->name, st->line);
		return true;
	}
	return false;
}

bool refuse_events(const struct scenario *sc, const char *path, FILE *f,
		   bool replaces)
{
	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];
		const struct scn_fibre *fb = &sc->fibres[e->fibre];

		if ((e->kind == SCN_EV_ARRIVE || e->kind == SCN_EV_LEAVE) &&
		    !replaces) {
			fprintf(f, "%s:%d:%d: '%s' has a%s %s event: the "
				"emulation starts and ends tasks only when it "
				"follows the timeline (run --reschedule "
				"none|full|auto)\n", path, e->line, e->col,
				sc->name, e->kind == SCN_EV_ARRIVE ? "n" : "",
				scn_event_kind_name(e->kind));
			return true;
		}
		if (e->kind == SCN_EV_CUT && scn_repair_of(sc, k) < 0 &&
		    !replaces) {
			fprintf(f, "%s:%d:%d: the cut of %s-%s at %g s is never "
				"repaired: with nothing re-placed the tasks over "
				"it would wait for ever; add a repair, or "
				"re-place them (--reschedule)\n", path, e->line,
				e->col,
				sc->nodes[fb->a].name, sc->nodes[fb->b].name,
				e->at_s);
			return true;
		}
	}
	return false;
}

void note_loss(const struct scenario *sc, FILE *f)
{
	for (int i = 0; i < sc->nfibres; i++)
		if (sc->fibres[i].loss > 0) {
			fprintf(f, "note: fibres of '%s' lose packets (first at "
				"line %d); the emulation drops them, the twin's "
				"predictions assume no loss\n", sc->name,
				sc->fibres[i].line);
			return;
		}
}

int load_events(struct scenario *sc, const char *path)
{
	struct scn_error err;

	if (!path || !scenario_load_events(sc, path, &err))
		return 0;
	print_scn_error(stderr, &err);
	return EXIT_USAGE;
}

void print_events(const struct scenario *sc, FILE *f)
{
	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];
		const struct scn_fibre *fb = &sc->fibres[e->fibre];

		fprintf(f, "  %10.6f s  %-7s ", e->at_s,
			scn_event_kind_name(e->kind));
		switch (e->kind) {
		case SCN_EV_CUT:
		case SCN_EV_REPAIR:
			fprintf(f, "fibre %s-%s (%g km)\n",
				sc->nodes[fb->a].name, sc->nodes[fb->b].name,
				fb->km);
			break;
		case SCN_EV_ARRIVE:
			fprintf(f, "task %s: global %s, %d local models\n",
				e->task.name, sc->nodes[e->task.global].name,
				e->task.nlocals);
			break;
		case SCN_EV_LEAVE:
			fprintf(f, "task %s\n", e->task.name);
			break;
		case SCN_EV_TRAFFIC:
			fprintf(f, "%s -> %s, %g Gbit/s for %g s\n",
				sc->nodes[e->from].name, sc->nodes[e->to].name,
				e->gbps, e->for_s);
			break;
		}
	}
}

int plan_scenario(const char *path, const char *events,
		  const struct sched_ops *ops, struct scenario **sc,
		  struct plan **p)
{
	char why[256];

	*p = NULL;
	*sc = load_scenario(path);
	if (!*sc)
		return EXIT_USAGE;
	if (load_events(*sc, events)) {
		scenario_free(*sc);
		*sc = NULL;
		return EXIT_USAGE;
	}
	note_loss(*sc, stderr);
	if (sched_fits(ops, *sc, why, sizeof(why))) {
		p_err("%s: %s", path, why);
		scenario_free(*sc);
		*sc = NULL;
		return EXIT_USAGE;
	}
	*p = sched_plan(*sc, ops);
	if (*p)
		return 0;
	p_err("cannot schedule '%s': %s", (*sc)->name, strerror(errno));
	scenario_free(*sc);
	*sc = NULL;
	return 1;
}


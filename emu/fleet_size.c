// SPDX-License-Identifier: MIT
/*
 * What the fleet's workers need, from the plan alone, before anything is
 * started: how each learns (its data, model and training per round) and
 * how much memory it holds, checked against its server and this machine.
 */
#include "fleet.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "emu/worker.h"
#include "twin/fl.h"
#include "twin/wire.h"

int fleet_learning(const struct scenario *sc, int t, int samples_per_local,
		   struct sel_learning *l)
{
	const struct scn_task *st = &sc->tasks[t];
	struct fl_model shape = { 0 };
	struct wire_msg wm;
	int err = wire_message(sc, st, &wm);

	if (err)
		return err;
	/* (a task that carries an earlier one on over new trees learns as
	 * it: the same seed) */
	*l = (struct sel_learning){
		.seed = fl_seed_derive(sc->seed,
				       (uint64_t)scenario_task_first(sc, t)),
		.samples_per_local = samples_per_local > 0 ?
					     samples_per_local :
					     FLEET_SAMPLES_PER_LOCAL,
		.test_samples = WK_TEST_SAMPLES, .dim = wm.dim,
		.classes = FL_CLASSES, .bpp = st->bytes_per_parameter,
	};
	shape.classes = l->classes;
	shape.dim = l->dim;
	shape.nparams = wm.nparams;
	l->train_samples = fl_samples_for_work(&shape, st->work_core_s,
					       WK_REF_MADDS);
	return 0;
}

double fleet_worker_bytes(const struct plan *p, int t, int m,
			  int samples_per_local)
{
	const struct task_plan *tp = &p->tasks[t];
	struct wire_msg wm;
	double params, wire, row, bytes;
	int nuc = 0, nconn = 0;

	if (wire_message(p->sc, tp->task, &wm))
		return INFINITY;
	if (samples_per_local <= 0)
		samples_per_local = FLEET_SAMPLES_PER_LOCAL;
	for (int k = 1; k < tp->nmodels; k++) {
		nuc += tp->up.parent[k] == m;
		nconn += (tp->up.parent[k] == m) + (tp->bcast.parent[k] == m);
	}
	nconn += m > 0 ? 2 : 0;
	params = (double)wm.nparams;
	wire = (double)wm.payload;
	row = (double)wm.dim * sizeof(float) + sizeof(int);
	/* model (float), aggregate (double), payload and broadcast copies */
	bytes = params * (sizeof(float) + sizeof(double)) + 2 * wire;
	/* per upload received: its wire bytes and its decoded model */
	bytes += nuc * (wire + params * sizeof(float));
	/* what the sockets may hold: one message per connection */
	bytes += nconn * (double)wm.msg;
	if (m == 0)
		bytes += WK_TEST_SAMPLES * row;	/* held-out test set */
	else	/* the task's pool, and this local's copy of its share */
		bytes += 2.0 * samples_per_local *
			 scenario_task_split(tp->task) * row;
	return bytes;
}

int fleet_check_memory(const struct plan *p, int samples_per_local,
		       bool here, char *err, size_t len)
{
	const struct scenario *sc = p->sc;
	double all = 0, avail = -1;
	char line[128];
	FILE *mi;

	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];

		if (tp->blocked)
			continue;
		for (int m = 0; m < tp->nmodels; m++) {
			const struct scn_node *s = &sc->nodes[tp->server[m]];
			double b = fleet_worker_bytes(p, t, m,
						      samples_per_local);

			if (b > s->memory_mib * 1048576.0) {
				snprintf(err, len, "%s:%d:%d: task '%s': its "
					 "%s model on server '%s' needs about "
					 "%.0f MiB (emulated model: parameters "
					 "/ scale %g, and its data), more than "
					 "the server's memory_mib %g: lower "
					 "parameters or raise memory_mib or "
					 "scale", sc->file, tp->task->line,
					 tp->task->col, tp->task->name,
					 m ? "local" : "global", s->name,
					 b / 1048576.0, sc->scale,
					 s->memory_mib);
				return -E2BIG;
			}
			all += b;
		}
	}
	mi = here ? fopen("/proc/meminfo", "re") : NULL;
	while (mi && fgets(line, sizeof(line), mi))
		if (sscanf(line, "MemAvailable: %lf kB", &avail) == 1) {
			avail *= 1024;
			break;
		}
	if (mi)
		fclose(mi);
	if (avail >= 0 && all > avail) {
		snprintf(err, len, "%s: the workers need about %.0f MiB in "
			 "all (emulated models and their data), more than the "
			 "%.0f MiB this machine has available: lower "
			 "parameters, raise scale or run fewer tasks",
			 sc->file, all / 1048576.0, avail / 1048576.0);
		return -E2BIG;
	}
	return 0;
}

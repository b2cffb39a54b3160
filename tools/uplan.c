// SPDX-License-Identifier: MIT
/* The plan of the emulation that is up, for the commands that read it. */
#include "tools/uplan.h"
#include "tools/twinlab.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/lab.h"
#include "twin/addr.h"
#include "twin/sched.h"

int up_plan(const char *prefix, struct scenario **sc, struct plan **p,
	    struct addressing **a, double *dilation)
{
	char path[1024], sched[64], dv[64], err[512];
	const struct sched_ops *ops;
	double n;

	*sc = NULL;
	*p = NULL;
	*a = NULL;
	if (!lab_exists(prefix)) {
		p_err("prefix '%s' is not up ('%s up SCENARIO --prefix %s' "
		      "builds it)", prefix, prog, prefix);
		return 1;
	}
	if (lab_state_get(prefix, "scenario", path, sizeof(path)) ||
	    lab_state_get(prefix, "scheduler", sched, sizeof(sched)) ||
	    lab_state_get(prefix, "dilation", dv, sizeof(dv)) ||
	    sscanf(dv, "%lf", &n) != 1) {
		p_err("prefix '%s' records no scenario, scheduler or dilation: "
		      "take it down and build it again", prefix);
		return 1;
	}
	ops = sched_find(sched);
	if (!ops) {
		p_err("prefix '%s' was built by scheduler '%s', which this "
		      "twinlab does not have", prefix, sched);
		return 1;
	}
	if (plan_scenario(path, NULL, ops, sc, p))
		return 1;
	/* as up: the routes and addresses of its traffic too */
	if ((*sc)->nevents &&
	    (scenario_traffic_all(*sc) || plan_background(*p))) {
		p_err("out of memory");
		return 1;
	}
	*a = addressing_new(*p);
	if (!*a) {
		p_err("cannot address '%s': %s", (*sc)->name, strerror(errno));
		return 1;
	}
	if (lab_same(prefix, *p, *a, NULL, n, err, sizeof(err))) {
		p_err("%s", err);
		return 1;
	}
	if (dilation)
		*dilation = n;
	return 0;
}


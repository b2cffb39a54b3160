/* SPDX-License-Identifier: MIT */
#ifndef TOOLS_UPLAN_H
#define TOOLS_UPLAN_H

struct scenario;
struct plan;
struct addressing;

/*
 * up_plan - the plan and addresses of the emulation up under prefix,
 * made again as up made them from the scenario and scheduler the prefix
 * recorded, and proven the ones built (lab_same: the digest); its
 * dilation in *dilation (unless NULL). 0, or 1 after saying why not
 * (whatever was made is the caller's to free).
 */
int up_plan(const char *prefix, struct scenario **sc, struct plan **p,
	    struct addressing **a, double *dilation);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The twin's prediction of one round of every scheduled task, all tasks
 * starting together: a fluid (flow-level) model in physical units.
 *
 * - Broadcast: the global model sends one copy to each broadcast child at
 *   once; a model forwards to its own children as soon as it has the whole
 *   model (store and forward per model) and starts training then.
 * - Training takes work_core_s / min(1, cpu / workers on that server).
 * - Upload: a model sends when it has trained and has every upload child's
 *   aggregate; aggregation itself is taken as instantaneous. The round ends
 *   when the global model has every child's upload.
 * - Transfers in progress share every IP link (access links and lightpath
 *   directions) max-min fairly, recomputed at every event; a transfer ends
 *   its last bit's propagation (4.9 us/km over its path) after it finished
 *   sending. TCP dynamics and headers are not modelled.
 *
 * Phases: broadcast = when the last local model has the model; compute =
 * from then until the last local training ends; upload = the rest.
 */
#ifndef TWIN_PREDICT_H
#define TWIN_PREDICT_H

#include "plan.h"

/*
 * predict_round - fill each task's bcast_s/compute_s/upload_s/round_s, the
 * plan's mean_round_s and link_bytes. 0 or -errno.
 */
int predict_round(struct plan *p) __attribute__((warn_unused_result));

/* Seconds one local model of task tp trains per round under the plan. */
double predict_train_s(const struct plan *p, const struct task_plan *tp,
		       int model);

#endif

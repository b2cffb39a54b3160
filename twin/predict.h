/* SPDX-License-Identifier: MIT */
/*
 * The twin's prediction of one round of every scheduled task, all tasks
 * starting together: a fluid (flow-level) model in physical units.
 *
 * - Broadcast: the global model sends one copy to each broadcast child at
 *   once; a model forwards to its own children as soon as it has the whole
 *   model (relay: store) or, pipelined, each chunk as soon as it has that
 *   chunk, and starts training once it has the whole model.
 * - Training takes work_core_s / min(1, cpu / workers on that server).
 * - Aggregating takes agg_core_s per child at the same share of the cpu
 *   (predict_agg_s): relays that store send their aggregate that long
 *   after they have trained and have every child's; pipelined, an
 *   aggregator makes its sum no faster than its children's bits per that
 *   time and a chunk's worth of it behind them; the global model ends the
 *   round when it has folded in every child's upload.
 * - Upload: a model sends when it has trained and has every upload child's
 *   aggregate (store) or, pipelined, once it has trained each chunk of the
 *   sum as soon as every child's chunk has arrived. Pipelined, what a relay or aggregator holds of
 *   a transfer to it is what was sent less what is in the fibre and the
 *   chunk on its way; a transfer that catches up with what its sender
 *   holds goes no faster than that grows. The round ends
 *   when the global model has every child's upload.
 * - Transfers in progress share every IP link (access links and lightpath
 *   directions) max-min fairly, recomputed at every event; a transfer ends
 *   its last bit's propagation (4.9 us/km over its path) after it finished
 *   sending. A transfer is the bytes it puts on the wire (twin/wire.h:
 *   header, payload and every segment's TCP/IP/Ethernet headers); its
 *   ACKs are counted in link_bytes on the reverse links but take no
 *   capacity. TCP's own dynamics are not modelled: the emulation turns
 *   off what would differ (slow start, delayed ACKs, tail-loss probes).
 *
 * Phases: broadcast = when the last local model has the model; compute =
 * from then until the last local training ends; upload = the rest.
 */
#ifndef TWIN_PREDICT_H
#define TWIN_PREDICT_H

#include "plan.h"

/*
 * predict_round - fill each task's bcast_s/compute_s/upload_s/round_s, the
 * plan's mean_round_s and link_bytes (bytes on the wire per round, data
 * and ACKs, physical units: emulated bytes x scale; the tasks' only). The
 * scenario's background traffic (a timeline epoch's) is routed
 * (plan_background) and flows all round at its rate at most, sharing
 * links max-min with the transfers. 0 or -errno.
 */
int predict_round(struct plan *p) __attribute__((warn_unused_result));

/*
 * predict_round_packets - the same round and figures, packet by packet:
 * every transfer is its TCP segments (twin/wire.h), every link serves the
 * transfers with packets waiting in turn, a frame each (the emulation's
 * shapers), a packet crosses a link in size / rate and then its fibre. A
 * message goes whole at once and is received with its last packet.
 * Background traffic is the generator's full-size datagrams, evenly
 * paced, served in turn like the rest; traffic that flows when the round
 * starts does so at no known phase of its pacing, and the round is the
 * mean over PKT_PHASES phases. A fibre cut in the round (plan_cut_windows)
 * holds a lightpath's frames until its repair. Deterministic. link_bytes
 * as predict_round. 0 or -errno; -E2BIG when the background traffic would
 * put more than PKT_BG_FRAMES_MAX frames on its first links in a round;
 * -EOPNOTSUPP for a scenario whose relays are pipelined (it models relays
 * that store and forward only).
 */
int predict_round_packets(struct plan *p) __attribute__((warn_unused_result));

/*
 * predict_strerror - what a predictor's error (-errno or errno) means to
 * a user: beside strerror's, -EDEADLK (a round that cannot end: a
 * transfer waits for a fibre never repaired) and -E2BIG (the packet
 * predictor's bound on background frames in one round).
 */
const char *predict_strerror(int err);

/*
 * predict_work - the predictors' work done by this thread so far: a
 * fluid step counts the transfers and flows it looks at, a packet event
 * one. What bounds the work of following a timeline (timeline.h), where
 * every epoch predicts plans again.
 */
extern _Thread_local unsigned long long predict_work;

/*
 * The share of a core each model placed on server srv gets: its cpu
 * shared equally by every model of the plan's unblocked tasks on it, one
 * core at most.
 */
double predict_cpu_share(const struct plan *p, int srv);

/* Seconds one local model of task tp trains per round under the plan. */
double predict_train_s(const struct plan *p, const struct task_plan *tp,
		       int model);

/*
 * Seconds model `model` of task tp takes to fold `kids` children's
 * updates into its aggregate: kids x agg_core_s at the same share of its
 * server's cpu as training (0 when the task's agg_core_s is 0).
 */
double predict_agg_s(const struct plan *p, const struct task_plan *tp,
		     int model, int kids);

/* How many children model has in tp's upload tree. */
int predict_up_kids(const struct task_plan *tp, int model);

/* predict_agg_s with model's children in tp's upload tree. */
double predict_agg_tree_s(const struct plan *p, const struct task_plan *tp,
			  int model);

#endif

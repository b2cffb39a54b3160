/* SPDX-License-Identifier: MIT */
/*
 * A model worker: one process per model (global or local) per task, in its
 * server's network namespace and its own cgroup. It speaks TCP to its tree
 * neighbours over the installed routes, one connection per transfer of the
 * plan (the transfer's own source and destination addresses), kept for all
 * rounds, and reports to the harness over a side channel (a pipe) that does
 * not touch the emulated network.
 *
 * A round: the global model sends the model down the broadcast tree (every
 * worker forwards it to its children while it trains); each local model
 * trains; on the upload tree a worker waits for its children's aggregates,
 * adds its own update and sends one aggregate (the weighted mean and its
 * weight) to its parent; the global model finishes the average.
 *
 * Every message has a header (task, round, sender, length, XXH64 of the
 * payload) that the receiver checks before it uses a byte; header and
 * payload leave in one send.
 *
 * Compute time is virtual, learning is real: a local model trains for real
 * (at idle priority, on a thread of its own), but its compute phase ends
 * at its deadline, train_s x dilation after the model arrived, not when the
 * arithmetic happens to finish. Finishing later is an overrun, reported.
 * Everything else (sending, receiving, the deadline) is one event loop on
 * the worker's main thread; no thread is made per transfer.
 */
#ifndef EMU_WORKER_H
#define EMU_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "wksock.h"
#include "twin/fl.h"
#include "twin/wire.h"

#define WK_NPROJ 8		/* random projections for the check */
#define WK_HDR_BYTES WIRE_MSG_HDR	/* message header on the wire */
#define WK_TEST_SAMPLES 1000	/* held-out samples the global model scores */

/*
 * The reference core: a task's work_core_s becomes this many multiply-adds
 * of SGD per second of work (fl_samples_for_work), a fixed figure so that
 * what a worker learns is the same in every run and on every machine. How
 * long the compute phase lasts is the scenario's, not this host's:
 * work_core_s / share (the conf's train_s), times the dilation.
 */
#define WK_REF_MADDS 4e8

/* One transfer of the plan: from src (sender's server) to dst. */
struct wk_link {
	int peer;		/* the other model */
	uint32_t src, dst;	/* host order */
};

struct wk_conf {
	int task, model;
	char task_name[40];
	char netns[64];
	unsigned rounds;
	double timeout_s;	/* for any one wait */
	double dilation;	/* emulated seconds per scenario second */
	double train_s;		/* compute phase, scenario seconds (locals) */
	/* folding its upload children's updates in, scenario seconds (0:
	 * as fast as the host adds); paced on the deadline timer */
	double agg_s;
	/* tree: m > 0 receives bcast_in and sends up_out */
	struct wk_link bcast_in, up_out;
	int nbc, nuc;
	struct wk_link bcast_out[WK_MAX_CHILDREN];
	struct wk_link up_in[WK_MAX_CHILDREN];
	/* learning */
	uint64_t seed;		/* the task's data and model seed */
	int nlocals;		/* partition size */
	int share;		/* local models: the partition's share it holds */
	int samples;		/* data set size over all locals */
	int classes, dim;
	unsigned bpp;		/* bytes per parameter on the wire */
	/*
	 * Relays pipelined (scenarios/README.md "Relays"): a relay forwards
	 * the broadcast chunk by chunk as it comes, an aggregator sends its
	 * mean up chunk by chunk as every child's chunk is in; chunk is
	 * payload bytes, a multiple of bpp. Uploads then carry the digest
	 * after the payload (it is known only at the end).
	 */
	bool piped;
	size_t chunk;
	int64_t train_samples;	/* SGD samples per round (local models) */
	/*
	 * The task's rounds its workers run: first_round .. rounds (the
	 * first is 1, or later for workers that carry a task on over new
	 * trees). The root keeps the global model after each round in
	 * model_fd (wk_kept), and one that starts after round 1 takes it
	 * from there.
	 */
	unsigned first_round;
	int model_fd;		/* root: a memfd of 2 wk_kept slots; -1 */
	/* side channel and round trigger */
	int report_fd;		/* write end of the harness's pipe */
	int go_fd;		/* root only: a struct wk_go per round */
	int ctl_fd;		/* struct wk_ctl, non-blocking; -1 */
	/*
	 * Set by a worker's end of a link (emu/remote.h), never sent: each
	 * round's wk_ctl is awaited (timeout_s at most) when the model
	 * arrives, since it comes over the link, not surely first.
	 */
	bool ctl_each_round;
	/*
	 * The host's training gate (emu/traingate.h) and this worker's
	 * place in it, when forked by the harness: NULL and -1 otherwise.
	 */
	struct traingate *gate;
	int gate_slot;
	/*
	 * Its listening sockets, made by the harness before it forked any
	 * of the task's workers (fleet_listen), so that no peer's dial is
	 * refused for a worker not started yet: lfd_bcast on bcast_in.dst
	 * (m > 0), lfd_up[i] on up_in[i].dst; -1: it makes its own.
	 */
	int lfd_bcast;
	int lfd_up[WK_MAX_CHILDREN];
};

/*
 * wk_sock_buffer - a worker's socket buffers: a few whole messages (its
 * listening sockets get them before any handshake).
 */
static inline size_t wk_sock_buffer(const struct wk_conf *c)
{
	size_t wire = fl_wire_size(fl_nparams(c->classes, c->dim), c->bpp);
	size_t b = 4 * (wire + WK_HDR_BYTES) + 65536;

	return b > (size_t)64 << 20 ? (size_t)64 << 20 : b;
}

/*
 * The global model after round r, as the root keeps it: at
 * (r % 2) * wk_kept_slot(nparams) in its model file, this header and the
 * nparams floats, so that round r's stays whole while round r + 1's is
 * written. digest: XXH64 of the floats.
 */
struct wk_kept {
	uint32_t magic, round;
	uint64_t nparams, digest;
};

#define WK_KEPT_MAGIC 0x6b657074u

static inline size_t wk_kept_slot(size_t nparams)
{
	return sizeof(struct wk_kept) + nparams * sizeof(float);
}

/* wk_keep - the root: model m after round r into its slot of fd (no fd,
 * -1: nothing kept). 0 or -errno. */
int wk_keep(int fd, const struct fl_model *m, unsigned r);

/*
 * wk_take - the root that starts after round r: m as the root before it
 * kept it after r, checked (its round, size and digest). 0, -EBADF (no
 * fd), -EBADMSG (not round r's, or not whole) or -errno.
 */
int wk_take(int fd, struct fl_model *m, unsigned r);

/* The harness starts a round at one absolute time for every task. */
struct wk_go {
	uint32_t round, pad;
	uint64_t t0;		/* CLOCK_MONOTONIC ns */
};

enum wk_kind { WK_READY = 1, WK_ROUND, WK_FAIL };

/*
 * A local's compute phase for a round, when it differs from the conf's
 * (tasks came or went, so more or fewer workers share its server's
 * cores): written before the round's go, read when the model arrives.
 */
struct wk_ctl {
	uint32_t round, pad;
	double train_s;		/* locals' compute phase */
	double agg_s;		/* folding the upload children in */
};

/* What a worker tells the harness; fits in PIPE_BUF, written atomically. */
struct wk_report {
	uint32_t kind;
	int32_t task, model, round;
	/* CLOCK_MONOTONIC ns */
	uint64_t t_start;	/* root: round start; local: model received */
	uint64_t t_go;		/* root: when the harness asked it to start */
	uint64_t t_send;	/* started sending to broadcast children */
	uint64_t t_train0, t_train1;	/* the arithmetic, as it happened */
	uint64_t t_ready;	/* compute phase over: max(deadline, t_train1) */
	uint64_t overrun_ns;	/* t_train1 past the deadline, 0 if on time */
	uint64_t t_up0, t_up1;	/* upload sent (local) */
	uint64_t t_end;		/* root: every upload in (not aggregated) */
	uint64_t t_child[WK_MAX_CHILDREN];	/* upload from child i in */
	uint64_t bytes_in, bytes_out;	/* payload + headers this round */
	double weight;		/* local: its samples; root: total */
	double proj[WK_NPROJ];	/* of its own model as sent (see check) */
	double max_abs;		/* max |w| of that model */
	uint64_t digest;	/* XXH64 of the payload it sent (root: global) */
	double loss, accuracy;	/* root: held out, after aggregation */
	double cpu_s;		/* this process's CPU time so far */
	uint64_t late_ns;	/* how late its event loop handled the
				 * compute deadline's timer or read what it
				 * awaited, at worst (host time) */
	char msg[200];		/* WK_FAIL */
};

/*
 * worker_run - the worker's life, in the calling (forked) process, which
 * has already entered its namespace and cgroup. Returns an exit status:
 * 0 after the last round, 1 after reporting WK_FAIL.
 */
int worker_run(const struct wk_conf *c);

/*
 * wk_project - w[0..n) projected on the task's WK_NPROJ random vectors
 * (entries +-1, vector k's signs the bits of a stream seeded from seed and
 * k, 64 entries a draw; bit set: +) into proj, and max |w[i]| (0 for none)
 * into max_abs: the figures the harness checks federated averaging with.
 */
void wk_project(const float *w, size_t n, uint64_t seed,
		double proj[WK_NPROJ], double *max_abs);

#endif

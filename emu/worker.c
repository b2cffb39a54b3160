// SPDX-License-Identifier: MIT
/*
 * The model worker: one event loop (epoll) on the main thread drives every
 * connection of the worker without blocking, and one training thread,
 * made once and run at SCHED_IDLE, does the arithmetic of local training.
 * A round's compute phase ends at a deadline on a timerfd, so its length
 * is the scenario's (train_s x dilation) whatever this host's speed.
 */
#include "worker.h"
#include "prio.h"
#include "traingate.h"
#include "wksock.h"
#include "xfer.h"
#include "twin/clock.h"
#include "twin/wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* epoll tags: what an event is about */
enum { EV_BIN = 0, EV_UP_OUT, EV_TRAIN, EV_DEADLINE, EV_BOUT = 16,
       EV_UIN = 16 + WK_MAX_CHILDREN };

struct worker {
	const struct wk_conf *c;
	struct wk_report rep;
	int lb, ab;			/* broadcast in: listen, accepted */
	int cb[WK_MAX_CHILDREN];	/* broadcast out */
	int lu[WK_MAX_CHILDREN];	/* upload in: listen */
	int au[WK_MAX_CHILDREN];	/* upload in: accepted */
	int cu;				/* upload out */
	int ep, tfd;			/* epoll, deadline timer */
	int train_go, train_done;	/* eventfds to and from the trainer */
	uint64_t train_by;		/* its deadline, for the gate */
	pthread_t trainer;
	bool has_trainer;
	bool realtime;			/* the event loop is (emu/prio.h) */
	int64_t trained;		/* trainer's result: samples or -errno */
	unsigned train_round;
	struct fl_data mine, test;
	struct fl_model model;
	struct fl_agg agg;
	size_t wire;			/* payload bytes */
	unsigned char *bcast;		/* the model as received / sent down */
	uint64_t bcast_digest;		/* its digest, computed once */
	uint64_t up_digest;		/* a leaf's: payload's, by the trainer */
	double train_s;			/* compute phase now (round_train_s) */
	double agg_s;			/* folding in now (likewise) */
	unsigned char *payload;		/* this worker's own message up */
	unsigned char *inbuf[WK_MAX_CHILDREN];
	float *tmp[WK_MAX_CHILDREN];
	double own_weight;
	struct xfer bin, uout, bout[WK_MAX_CHILDREN], uin[WK_MAX_CHILDREN];
};

static const char *ip(uint32_t a, char *b)
{
	snprintf(b, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
		 a & 255);
	return b;
}

static void report(struct worker *w, uint32_t kind)
{
	struct rusage ru;

	w->rep.kind = kind;
	w->rep.task = w->c->task;
	w->rep.model = w->c->model;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		w->rep.cpu_s = (double)ru.ru_utime.tv_sec +
			       ru.ru_utime.tv_usec / 1e6 +
			       (double)ru.ru_stime.tv_sec +
			       ru.ru_stime.tv_usec / 1e6;
	/* one write of less than PIPE_BUF bytes: atomic among workers */
	if (write(w->c->report_fd, &w->rep, sizeof(w->rep)) !=
	    (ssize_t)sizeof(w->rep))
		_exit(2);
}

static int fail(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->rep.msg, sizeof(w->rep.msg), fmt, ap);
	va_end(ap);
	report(w, WK_FAIL);
	return 1;
}

/* ---- messages ----------------------------------------------------------- */

/* All of a message of this worker's for round r may go (see xfer_send). */
static void msg_send(struct worker *w, struct xfer *x, unsigned r,
		     const unsigned char *buf, uint64_t digest, double weight,
		     bool split)
{
	struct wk_hdr h = { .task = (uint32_t)w->c->task, .round = r,
			    .sender = (uint32_t)w->c->model, .digest = digest,
			    .weight = weight };

	xfer_send(x, h, buf, w->wire, split);
}

/* Move x on (xfer_step); how late this loop got to it, in the report. */
static int msg_step(struct worker *w, struct xfer *x, bool out)
{
	return xfer_step(x, out, &w->rep.late_ns);
}

/*
 * A received message from `sender` for round r checks out: its header
 * only, or (whole) its payload too. 0, or -EBADMSG with why[0..len).
 */
static int msg_check(const struct worker *w, const struct xfer *x,
		     unsigned r, int sender, bool whole, char *why, size_t len)
{
	struct wk_hdr want = { .task = (uint32_t)w->c->task, .round = r,
			       .sender = (uint32_t)sender,
			       .length = w->wire };

	return whole ? xfer_check(x, &want, why, len) :
		       xfer_check_head(x, &want, why, len);
}

/*
 * The weighted mean of the children's updates (decoded into w->tmp as
 * each arrived), and of our own first when own (the root has none): in
 * the same order each run, so the same sum; the mean in w->model.w and
 * encoded in w->payload.
 */
static int aggregate(struct worker *w, bool own)
{
	const struct wk_conf *c = w->c;
	int err = 0;

	fl_agg_reset(&w->agg);
	if (own)
		err = fl_agg_add(&w->agg, w->model.w, w->own_weight);
	for (int i = 0; i < c->nuc && !err; i++)
		err = fl_agg_add(&w->agg, w->tmp[i], w->uin[i].h.weight);
	if (!err)
		err = fl_agg_finish(&w->agg, w->model.w);
	if (!err)
		err = fl_encode(w->model.w, w->model.nparams, c->bpp,
				w->payload, w->wire);
	return err;
}

/* ---- the trainer -------------------------------------------------------- */

/* the seed of round r's training (its order over the samples) */
static uint64_t train_seed(const struct wk_conf *c, unsigned r)
{
	return fl_seed_derive(c->seed, 1000 + (uint64_t)r);
}

/*
 * Training at SCHED_IDLE: it gets the CPU only when nothing else wants it,
 * so the event loops and the delay line, which set the measured times, are
 * never behind a worker's arithmetic. How long the arithmetic takes does
 * not set the compute phase (the deadline does); finishing after the
 * deadline is an overrun and makes the run degraded.
 */
static void *trainer(void *arg)
{
	struct worker *w = arg;
	struct sched_param sp = { 0 };
	uint64_t v;

	pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	while (read(w->train_go, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
		if (v == UINT64_MAX)
			break;
		if (w->c->model == 0)	/* the global model: evaluate it */
			w->trained = fl_evaluate(&w->model, &w->test,
						 &w->rep.loss,
						 &w->rep.accuracy);
		else if (!(w->trained = traingate_enter(w->c->gate,
							w->c->gate_slot,
							w->train_by)))
			w->trained = fl_train(&w->model, &w->mine,
					      w->c->train_samples, FL_BATCH,
					      fl_lr_for(w->c->dim),
					      train_seed(w->c,
							 w->train_round));
		/*
		 * A leaf's message up is its own model alone: encoding it
		 * is compute, so it is done here, inside the compute phase,
		 * and the upload starts at the deadline.
		 */
		if (w->c->model != 0 && w->c->nuc == 0 && w->trained >= 0) {
			int err = aggregate(w, true);

			if (err)
				w->trained = err;
			else
				w->up_digest = fl_digest(w->payload, w->wire);
		}
		/*
		 * The check's figures of the model sent up (the root's: the
		 * new global one): host arithmetic, done here and never by
		 * the event loop, which would hold the delay line and every
		 * other loop off the CPU meanwhile.
		 */
		if (w->trained >= 0)
			wk_project(w->model.w, w->model.nparams, w->c->seed,
				   w->rep.proj, &w->rep.max_abs);
		if (w->c->model != 0)
			traingate_leave(w->c->gate, w->c->gate_slot);
		v = 1;
		if (write(w->train_done, &v, sizeof(v)) != (ssize_t)sizeof(v))
			break;
	}
	return NULL;
}

/* ---- setup -------------------------------------------------------------- */

/*
 * This local's share of the task's samples: the features of those its
 * rounds train on alone. A round trains on a few: the demo's largest point
 * made 720 MB of features, a sixth of its workers' CPU as they started,
 * where each of them trained on 5 samples.
 */
static int share_data(struct worker *w, const struct fl_partition *part)
{
	const struct wk_conf *c = w->c;
	int n = part->count[c->share], err = 0;
	unsigned char *want = calloc(n > 0 ? (size_t)n : 1, 1);

	if (!want)
		return -ENOMEM;
	/* the rounds worker_run trains, each from its own seed (until every
	 * row is wanted) */
	for (unsigned r = c->first_round ? c->first_round : 1;
	     !err && n > 0 && r <= c->rounds && memchr(want, 0, (size_t)n);
	     r++)
		err = fl_train_rows(n, c->train_samples, train_seed(c, r),
				    want);
	if (!err)
		err = fl_data_generate_some(&w->mine,
					    fl_seed_derive(c->seed, 2),
					    FL_SPLIT_TRAIN,
					    part->idx + part->start[c->share],
					    n, c->dim, c->classes, want);
	free(want);
	return err;
}

static int setup_data(struct worker *w)
{
	const struct wk_conf *c = w->c;
	struct fl_data pool = { 0 };
	struct fl_partition part = { 0 };
	int err;

	err = fl_model_init(&w->model, c->classes, c->dim,
			    fl_seed_derive(c->seed, 1));
	if (err)
		return err;
	w->wire = fl_wire_size(w->model.nparams, c->bpp);
	wks_buffers(wk_sock_buffer(c));
	w->payload = malloc(w->wire);
	w->bcast = malloc(w->wire);
	if (!w->payload || !w->bcast)
		return -ENOMEM;
	err = fl_agg_init(&w->agg, w->model.nparams);
	if (err)
		return err;
	for (int i = 0; i < c->nuc; i++) {
		w->inbuf[i] = malloc(w->wire);
		w->tmp[i] = malloc(w->model.nparams * sizeof(float));
		if (!w->inbuf[i] || !w->tmp[i])
			return -ENOMEM;
	}
	/*
	 * Every buffer a round writes, written once now: a page's first
	 * store traps (10-16 us on a paravirtualised host), and in round 1
	 * those traps fell on the real-time loop as the models arrived.
	 */
	memset(w->payload, 0, w->wire);
	memset(w->bcast, 0, w->wire);
	memset(w->agg.sum, 0, w->model.nparams * sizeof(double));
	for (int i = 0; i < c->nuc; i++) {
		memset(w->inbuf[i], 0, w->wire);
		memset(w->tmp[i], 0, w->model.nparams * sizeof(float));
	}
	if (c->model == 0)
		return fl_data_generate(&w->test, fl_seed_derive(c->seed, 2),
					FL_SPLIT_TEST, WK_TEST_SAMPLES, c->dim,
					c->classes);
	/* the partition needs the task's labels; this model, its share */
	err = fl_data_labels(&pool, fl_seed_derive(c->seed, 2),
			     FL_SPLIT_TRAIN, c->samples, c->dim, c->classes);
	if (!err)
		err = fl_partition_init(&part, &pool, c->nlocals, FL_ALPHA,
					fl_seed_derive(c->seed, 3));
	if (!err)
		err = c->share < 0 || c->share >= part.nclients ? -EINVAL :
		      share_data(w, &part);
	if (!err)
		w->own_weight = part.count[c->share];
	fl_partition_release(&part);
	fl_data_release(&pool);
	return err;
}

/*
 * Sockets are edge-triggered: data left in a socket for the next round, or
 * a peer's end of stream after its last round, must not wake the loop
 * again and again (a busy loop that takes the CPU from every other
 * worker). A round that starts with data waiting reads it without an edge
 * (round_once); an upload child sends only after this round reached it.
 */
static int watch(struct worker *w, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int setup_loop(struct worker *w)
{
	const struct wk_conf *c = w->c;
	int err = 0;

	w->ep = epoll_create1(EPOLL_CLOEXEC);
	w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (w->ep < 0 || w->tfd < 0)
		return -errno;
	err = watch(w, w->tfd, EPOLLIN, EV_DEADLINE);
	/* the SCHED_IDLE helper: trains a local model, evaluates a global */
	if (!err) {
		pthread_attr_t at;

		w->train_go = eventfd(0, EFD_CLOEXEC);
		w->train_done = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (w->train_go < 0 || w->train_done < 0)
			return -errno;
		if (c->model)
			err = watch(w, w->train_done, EPOLLIN, EV_TRAIN);
		if (err)
			return err;
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 1u << 20);
		err = -pthread_create(&w->trainer, &at, trainer, w);
		pthread_attr_destroy(&at);
		w->has_trainer = !err;
	}
	if (!err && c->model) {
		err = wks_nonblock(w->ab);
		if (!err)
			err = wks_stamped(w->ab);
		if (!err)
			err = wks_nonblock(w->cu);
		w->bin.fd = w->ab;
		w->uout.fd = w->cu;
		if (!err)
			err = watch(w, w->ab, EPOLLIN | EPOLLET, EV_BIN);
		if (!err)
			err = watch(w, w->cu, EPOLLOUT | EPOLLET, EV_UP_OUT);
	}
	for (int i = 0; i < c->nbc && !err; i++) {
		w->bout[i].fd = w->cb[i];
		err = wks_nonblock(w->cb[i]);
		if (!err)
			err = watch(w, w->cb[i], EPOLLOUT | EPOLLET,
				    EV_BOUT + (uint64_t)i);
	}
	for (int i = 0; i < c->nuc && !err; i++) {
		w->uin[i].fd = w->au[i];
		err = wks_nonblock(w->au[i]);
		if (!err)
			err = wks_stamped(w->au[i]);
		if (!err)
			err = watch(w, w->au[i], EPOLLIN | EPOLLET,
				    EV_UIN + (uint64_t)i);
	}
	return err;
}

static int setup_net(struct worker *w)
{
	const struct wk_conf *c = w->c;
	char a[16], b[16];
	int fd;

	if (c->model) {
		w->lb = c->lfd_bcast >= 0 ? c->lfd_bcast :
					    wks_listen(c->bcast_in.dst);
		if (w->lb < 0)
			return fail(w, "cannot listen on %s: %s",
				    ip(c->bcast_in.dst, a), strerror(-w->lb));
	}
	for (int i = 0; i < c->nuc; i++) {
		w->lu[i] = c->lfd_up[i] >= 0 ? c->lfd_up[i] :
					       wks_listen(c->up_in[i].dst);
		if (w->lu[i] < 0)
			return fail(w, "cannot listen on %s: %s",
				    ip(c->up_in[i].dst, a), strerror(-w->lu[i]));
	}
	/* to every broadcast child and the upload parent, at once */
	{
		struct wks_dial d[WK_MAX_CHILDREN + 1];
		const struct wk_link *to[WK_MAX_CHILDREN + 1];
		int n = 0, bad = 0, err;

		for (int i = 0; i < c->nbc; i++)
			to[n++] = &c->bcast_out[i];
		if (c->model)
			to[n++] = &c->up_out;
		for (int i = 0; i < n; i++)
			d[i] = (struct wks_dial){ .src = to[i]->src,
					      .dst = to[i]->dst };
		err = wks_connect_all(d, n, c->timeout_s, &bad);
		for (int i = 0; i < n; i++)
			if (i < c->nbc)
				w->cb[i] = d[i].fd;
			else
				w->cu = d[i].fd;
		if (err)
			return fail(w, "cannot connect %s -> %s (model %d): %s",
				    ip(to[bad]->src, a), ip(to[bad]->dst, b),
				    to[bad]->peer, strerror(-err));
	}
	if (c->model) {
		w->ab = wks_accept(w->lb, c->timeout_s);
		if (w->ab < 0)
			return fail(w, "no connection from model %d: %s",
				    c->bcast_in.peer, strerror(-w->ab));
		wks_timeouts(w->ab, c->timeout_s);
	}
	for (int i = 0; i < c->nuc; i++) {
		w->au[i] = wks_accept(w->lu[i], c->timeout_s);
		if (w->au[i] < 0)
			return fail(w, "no connection from model %d: %s",
				    c->up_in[i].peer, strerror(-w->au[i]));
		wks_timeouts(w->au[i], c->timeout_s);
	}
	fd = setup_loop(w);
	if (fd)
		return fail(w, "cannot set up the event loop: %s",
			    strerror(-fd));
	/*
	 * Ready once every connection is up: a handshake crosses the
	 * dilated network, so it must not run into the first round.
	 * (Connecting before the peer listens is retried, so there is no
	 * order to keep among the workers.)
	 */
	report(w, WK_READY);
	return 0;
}

/* ---- a round ------------------------------------------------------------ */

static int arm_deadline(struct worker *w, uint64_t at)
{
	struct itimerspec its = {
		.it_value = { (time_t)(at / 1000000000u),
			      (long)(at % 1000000000u) },
	};

	if (at == 0)
		its.it_value.tv_nsec = 1;	/* 0 would disarm it */
	return timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL) ?
		       -errno : 0;
}

/* The round's state on the main thread. */
struct rstate {
	unsigned r;
	bool have, training, trained, due, sent_up;
	bool forwarding;	/* pipelined relay: forwarding the broadcast */
	bool streaming;		/* pipelined aggregator: sending its mean */
	size_t summed;		/* of that mean: payload bytes made */
	int uploads;		/* upload children in */
	uint64_t deadline;
	/*
	 * Folding the children's updates in (conf agg_s, paced on the
	 * timer once the deadline has passed): due at agg_at while it
	 * goes on (0: not); storing, agg_done once made; pipelined, the
	 * payload bytes folded so far (folded), those being folded
	 * (fold_to), and when the last fold was due (fold_prev: the next
	 * chunk, already in, is folded from then, not from when the loop
	 * got to it).
	 */
	uint64_t agg_at, fold_prev;
	bool agg_done, fold_chain;
	size_t folded, fold_to;
	char why[160];
};

/*
 * This round's compute phase and folding time: the harness's last word
 * for them (struct wk_ctl, written before the round started), else the
 * conf's.
 */
static double round_train_s(struct worker *w, unsigned r)
{
	bool got = !w->c->ctl_each_round;
	struct wk_ctl m;

	for (;;) {
		struct pollfd p = { .fd = w->c->ctl_fd, .events = POLLIN };

		while (w->c->ctl_fd >= 0 &&
		       read(w->c->ctl_fd, &m, sizeof(m)) ==
			       (ssize_t)sizeof(m)) {
			if (m.round > r)
				continue;
			got = got || m.round == r;
			if (isfinite(m.train_s) && m.train_s >= 0)
				w->train_s = m.train_s;
			if (isfinite(m.agg_s) && m.agg_s >= 0)
				w->agg_s = m.agg_s;
		}
		/* over a link: this round's word, however late (a late one
		 * shows as a longer round, not as last round's phase) */
		if (got || w->c->ctl_fd < 0 ||
		    poll(&p, 1, (int)(w->c->timeout_s * 1000)) <= 0)
			return w->train_s;
	}
}

/* Move broadcast child i's message on; why it could not, in s. */
static int bout_step(struct worker *w, struct rstate *s, int i)
{
	int err = msg_step(w, &w->bout[i], true);

	if (err)
		snprintf(s->why, sizeof(s->why), "broadcast to model %d: %s",
			 w->c->bcast_out[i].peer, strerror(-err));
	return err;
}

/* How long folding bytes of the payload in takes here, in ns. */
static uint64_t fold_ns(const struct worker *w, size_t bytes)
{
	const struct wk_conf *c = w->c;

	return (uint64_t)llround(w->agg_s * c->dilation * 1e9 *
				 (double)bytes / (double)w->wire);
}

/* When the last child's upload was whole (0: none). */
static uint64_t last_upload(const struct worker *w)
{
	uint64_t t = 0;

	for (int i = 0; i < w->c->nuc; i++)
		t = w->rep.t_child[i] > t ? w->rep.t_child[i] : t;
	return t;
}

/*
 * Storing (or the global model): true while folding the children in
 * takes its time, the timer armed for its end the first time. It starts
 * when the last of what it waits for came: the last child's upload,
 * and, a local, its deadline and its training (not when this loop got
 * round to it, after checking and decoding).
 */
static bool folding(struct worker *w, struct rstate *s, int *err)
{
	const struct wk_conf *c = w->c;
	uint64_t t0;

	if (s->agg_done || !(w->agg_s > 0))
		return false;
	if (!s->agg_at) {
		t0 = last_upload(w);
		if (c->model) {
			t0 = s->deadline > t0 ? s->deadline : t0;
			t0 = w->rep.t_train1 > t0 ? w->rep.t_train1 : t0;
		}
		s->agg_at = t0 + fold_ns(w, w->wire);
		*err = arm_deadline(w, s->agg_at);
	}
	return true;
}

/*
 * The global model's broadcast after one segment to each child: the rest
 * child by child, letting the others (all woken at t0 at one priority)
 * in before each, so that no task starts a window's sends late.
 */
static int root_rest(struct worker *w, struct rstate *s)
{
	int err = 0;

	for (int i = 0; i < w->c->nbc && !err; i++) {
		if (w->realtime)
			sched_yield();
		w->bout[i].avail = SIZE_MAX;
		err = bout_step(w, s, i);
	}
	return err;
}

/*
 * Got the model at `at` (the root: its t0; a local: when the last of it
 * was read): forward it, check it, start training, arm the deadline. The
 * round's clock is `at`: checking and decoding 10 MB is the host's time
 * (several ms, more under sanitizers or beside a busy process), as
 * encoding is, and falls inside the compute phase, where a trainer that
 * cannot finish by its deadline is an overrun the monitor judges.
 */
static int on_model(struct worker *w, struct rstate *s, uint64_t at)
{
	const struct wk_conf *c = w->c;
	uint64_t one = 1;
	int err;

	s->have = true;
	w->rep.t_start = at;
	/* forwarded as received, before the host's time goes into checking
	 * and decoding (pipelined, it is on its way already); each child
	 * checks it against the digest in its header */
	if (!s->forwarding)
		w->rep.t_send = w->rep.t_start;
	for (int i = 0; i < c->nbc && !s->forwarding; i++) {
		msg_send(w, &w->bout[i], s->r, w->bcast, w->bcast_digest,
			  0, false);
		if (c->model == 0)
			w->bout[i].avail = WIRE_MSS;
		err = bout_step(w, s, i);
		if (err)
			return err;
	}
	if (c->model == 0)
		return root_rest(w, s);
	err = msg_check(w, &w->bin, s->r, c->bcast_in.peer, true, s->why,
			sizeof(s->why));
	if (err)
		return err;
	w->rep.bytes_in += w->wire + sizeof(struct wk_hdr);
	err = fl_decode(w->bcast, w->wire, c->bpp, w->model.w,
			w->model.nparams);
	if (err) {
		snprintf(s->why, sizeof(s->why), "cannot decode: %s",
			 strerror(-err));
		return err;
	}
	s->deadline = w->rep.t_start +
		      (uint64_t)llround(round_train_s(w, s->r) * c->dilation *
					1e9);
	err = arm_deadline(w, s->deadline);
	if (err)
		return err;
	w->train_round = s->r;
	w->train_by = s->deadline;
	w->rep.t_train0 = mono_ns();
	s->training = true;
	if (write(w->train_go, &one, sizeof(one)) != (ssize_t)sizeof(one))
		return -errno;
	return 0;
}

static int up_step(struct worker *w, struct rstate *s)
{
	int err = msg_step(w, &w->uout, true);

	if (!err && w->uout.done && !w->rep.t_up1) {
		w->rep.t_up1 = mono_ns();
		w->rep.bytes_out += w->wire + sizeof(struct wk_hdr);
	}
	if (err)
		snprintf(s->why, sizeof(s->why), "upload to model %d: %s",
			 w->c->up_out.peer, strerror(-err));
	return err;
}

/*
 * Pipelined, a relay: forward what has come of the broadcast, in whole
 * chunks, once its header checks out (the digest is checked when all of
 * it is in; each child checks it too).
 */
static int relay_chunks(struct worker *w, struct rstate *s)
{
	const struct wk_conf *c = w->c;
	size_t hdr = sizeof(struct wk_hdr), avail;
	int err;

	if (w->bin.off < hdr)
		return 0;
	if (!s->forwarding) {
		err = msg_check(w, &w->bin, s->r, c->bcast_in.peer, false,
				 s->why, sizeof(s->why));
		if (err)
			return err;
		s->forwarding = true;
		w->rep.t_send = mono_ns();
		for (int i = 0; i < c->nbc; i++) {
			msg_send(w, &w->bout[i], s->r, w->bcast,
				  w->bin.h.digest, 0, false);
			w->bout[i].avail = 0;
		}
	}
	avail = whole_segments(hdr + (w->bin.done ? w->wire :
				      (w->bin.off - hdr) / c->chunk *
					      c->chunk), hdr + w->wire);
	for (int i = 0; i < c->nbc; i++) {
		if (avail <= w->bout[i].avail)
			continue;
		w->bout[i].avail = avail;
		err = bout_step(w, s, i);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Pipelined, an aggregator, trained and due: its mean of its own model and
 * its children's, made chunk by chunk as every child's chunk is in and
 * sent up as it is made (fl_mean_range: the same bits as aggregate()); the
 * children's weights come first, the digest goes last.
 */
static int stream_up(struct worker *w, struct rstate *s)
{
	const struct wk_conf *c = w->c;
	const float *m[WK_MAX_CHILDREN + 1];
	double wt[WK_MAX_CHILDREN + 1];
	size_t ready = w->wire, end;
	int err = 0;

	for (int i = 0; i < c->nuc; i++) {
		size_t off = w->uin[i].off;

		if (off < WK_SPLIT_HEAD)
			return 0;	/* its weight is not in yet */
		if (off - WK_SPLIT_HEAD < ready)
			ready = off - WK_SPLIT_HEAD;
	}
	end = ready == w->wire ? ready : ready / c->chunk * c->chunk;
	if (w->agg_s > 0) {
		/* what is folded goes; the next chunk in is folded next */
		if (!s->agg_at && end > s->folded) {
			uint64_t t0 = s->fold_chain ? s->fold_prev : mono_ns();

			s->fold_to = end - s->folded > c->chunk ?
					     s->folded + c->chunk : end;
			s->agg_at = t0 + fold_ns(w, s->fold_to - s->folded);
			err = arm_deadline(w, s->agg_at);
			if (err)
				return err;
		}
		s->fold_chain = false;
		end = s->folded;
	}
	m[0] = w->model.w;
	wt[0] = w->own_weight;
	for (int i = 0; i < c->nuc; i++) {
		m[i + 1] = w->tmp[i];
		wt[i + 1] = w->uin[i].h.weight;
	}
	if (!s->streaming) {
		double total = 0;

		for (int i = 0; i <= c->nuc; i++)
			total += wt[i];
		s->streaming = true;
		w->rep.t_ready = s->deadline > w->rep.t_train1 ?
					 s->deadline : w->rep.t_train1;
		w->rep.t_up0 = mono_ns();
		msg_send(w, &w->uout, s->r, w->payload, 0, total, true);
		w->uout.avail = 0;
	}
	if (end > s->summed) {
		size_t lo = s->summed / c->bpp, hi = end / c->bpp;
		size_t len = end - s->summed;

		for (int i = 0; i < c->nuc && !err; i++)
			err = fl_decode(w->inbuf[i] + s->summed, len, c->bpp,
					w->tmp[i] + lo, hi - lo);
		if (!err)
			err = fl_mean_range(m, wt, c->nuc + 1, lo, hi,
					    w->model.w);
		if (!err)
			err = fl_encode(w->model.w + lo, hi - lo, c->bpp,
					w->payload + s->summed, len);
		if (err) {
			snprintf(s->why, sizeof(s->why), "cannot aggregate: "
				 "%s", strerror(-err));
			return err;
		}
		s->summed = end;
		w->uout.avail = whole_segments(WK_SPLIT_HEAD + end,
					       sizeof(struct wk_hdr) +
						       w->wire);
		if (end == w->wire) {
			w->rep.digest = fl_digest(w->payload, w->wire);
			w->uout.h.digest = w->rep.digest;
			w->uout.avail = SIZE_MAX;
			s->sent_up = true;
		}
	}
	return up_step(w, s);
}

/* Trained, due and every child's aggregate in: send one aggregate up. */
static int maybe_upload(struct worker *w, struct rstate *s)
{
	const struct wk_conf *c = w->c;
	int err = 0;

	if (s->sent_up || !s->trained || !s->due)
		return 0;
	if (c->piped && c->nuc)
		return stream_up(w, s);
	if (s->uploads < c->nuc || (c->nuc && folding(w, s, &err)))
		return err;
	s->sent_up = true;
	w->rep.t_ready = s->deadline > w->rep.t_train1 ? s->deadline
						       : w->rep.t_train1;
	if (c->nuc == 0) {	/* made by the trainer */
		w->rep.digest = w->up_digest;
	} else {
		err = aggregate(w, true);
		if (err) {
			snprintf(s->why, sizeof(s->why), "cannot aggregate: "
				 "%s", strerror(-err));
			return err;
		}
		w->rep.digest = fl_digest(w->payload, w->wire);
	}
	w->rep.t_up0 = mono_ns();
	msg_send(w, &w->uout, s->r, w->payload, w->rep.digest,
		  w->agg.weight, c->piped);
	return up_step(w, s);
}

/* Have the helper thread evaluate the global model; wait for it. */
static int evaluate(struct worker *w)
{
	struct pollfd p = { .fd = w->train_done, .events = POLLIN };
	uint64_t one = 1, v;

	if (write(w->train_go, &one, sizeof(one)) != (ssize_t)sizeof(one))
		return -errno;
	for (;;) {
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -errno;
		if (read(w->train_done, &v, sizeof(v)) == (ssize_t)sizeof(v))
			break;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
	}
	return w->trained < 0 ? (int)w->trained : 0;
}

/* The root: every child's aggregate in, so the new global model. */
static int finish_root(struct worker *w, struct rstate *s)
{
	const struct wk_conf *c = w->c;
	int err;

	/*
	 * The round is over when the last upload is in and, with the
	 * scenario's agg_core_s, its time to fold them in has passed (the
	 * timer's, as training is the deadline's): the arithmetic below is
	 * the host's, which the twin does not time.
	 */
	w->rep.t_end = mono_ns();
	/* without a time to fold them in, when the last upload was in:
	 * checking and decoding it were the host's */
	if (!(w->agg_s > 0) && c->nuc > 0)
		w->rep.t_end = last_upload(w);
	err = aggregate(w, false);
	w->rep.digest = fl_digest(w->payload, w->wire);
	/* the new global model, as the next round will send it */
	if (!err)
		err = fl_decode(w->payload, w->wire, c->bpp, w->model.w,
				w->model.nparams);
	/* kept before it is reported: whoever carries the task on from
	 * this round finds it */
	if (!err)
		err = wk_keep(c->model_fd, &w->model, s->r);
	if (!err) {
		w->rep.weight = w->agg.weight;
		/*
		 * The task's round is over, others' may not be: evaluating
		 * is host time, so the SCHED_IDLE thread does it while this
		 * one sleeps. (Switching this thread to SCHED_IDLE and back
		 * would leave it far behind in CFS's accounting: seconds of
		 * waiting for a CPU in the next round.)
		 */
		err = evaluate(w);
	}
	if (err)
		snprintf(s->why, sizeof(s->why), "%s", strerror(-err));
	return err;
}

static bool round_over(const struct worker *w, const struct rstate *s)
{
	const struct wk_conf *c = w->c;

	for (int i = 0; i < c->nbc; i++)
		if (!w->bout[i].done)
			return false;
	if (s->uploads < c->nuc)
		return false;
	if (c->model == 0)	/* and has folded them in */
		return !(w->agg_s > 0) || s->agg_done;
	return w->uout.done;
}

static int on_event(struct worker *w, struct rstate *s, uint64_t tag)
{
	const struct wk_conf *c = w->c;
	uint64_t v, at;
	int err = 0;

	if (tag == EV_BIN) {
		if (s->have)	/* next round's data: leave it in the socket */
			return 0;
		err = msg_step(w, &w->bin, false);
		if (err) {
			snprintf(s->why, sizeof(s->why), "broadcast from model "
				 "%d: %s", c->bcast_in.peer, strerror(-err));
			return err;
		}
		if (c->piped && c->nbc) {
			err = relay_chunks(w, s);
			if (err)
				return err;
		}
		if (!w->bin.done)
			return 0;
		at = mono_ns();
		/* its header now, its payload once it is passed on */
		err = msg_check(w, &w->bin, s->r, c->bcast_in.peer, false,
				s->why, sizeof(s->why));
		if (err)
			return err;
		w->bcast_digest = w->bin.h.digest;
		return on_model(w, s, at);
	}
	if (tag == EV_UP_OUT)
		return up_step(w, s);
	if (tag == EV_TRAIN) {
		if (read(w->train_done, &v, sizeof(v)) != (ssize_t)sizeof(v))
			return 0;
		w->rep.t_train1 = mono_ns();
		s->training = false;
		s->trained = true;
		if (w->trained < 0) {
			snprintf(s->why, sizeof(s->why), "training failed: %s",
				 strerror((int)-w->trained));
			return (int)w->trained;
		}
		if (w->rep.t_train1 > s->deadline)
			w->rep.overrun_ns = w->rep.t_train1 - s->deadline;
		w->rep.weight = w->own_weight;
		return maybe_upload(w, s);
	}
	if (tag == EV_DEADLINE) {
		uint64_t now;

		if (read(w->tfd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			return 0;
		/*
		 * A timer of known due time: how late this loop got to it is
		 * how late the host lets it act (schedstat's waiting time is
		 * no measure: this kernel counts sleeps in it now and then).
		 */
		now = mono_ns();
		if (s->agg_at) {	/* folding in: done */
			if (now > s->agg_at && now - s->agg_at > w->rep.late_ns)
				w->rep.late_ns = now - s->agg_at;
			s->fold_prev = s->agg_at;
			s->agg_at = 0;
			s->agg_done = true;
			s->fold_chain = s->fold_to > s->folded;
			s->folded = s->fold_to;
			return c->model ? maybe_upload(w, s) : 0;
		}
		if (now > s->deadline && now - s->deadline > w->rep.late_ns)
			w->rep.late_ns = now - s->deadline;
		s->due = true;
		return maybe_upload(w, s);
	}
	if (tag >= EV_UIN) {
		int i = (int)(tag - EV_UIN);
		struct xfer *x = &w->uin[i];

		if (!x->busy)	/* next round's data: leave it */
			return 0;
		err = msg_step(w, x, false);
		/* pipelined, an aggregator sums what has come */
		if (!err && !x->done && c->piped && c->model)
			return maybe_upload(w, s);
		if (!err && x->done) {
			w->rep.t_child[i] = mono_ns();
			err = msg_check(w, x, s->r, c->up_in[i].peer, true,
					s->why, sizeof(s->why));
			if (err)
				return err;
			/* decoded now, while the others are still coming
			 * (pipelined, an aggregator decodes as it sums) */
			if (!(c->piped && c->model))
				err = fl_decode(w->inbuf[i], w->wire, c->bpp,
						w->tmp[i], w->model.nparams);
			if (err) {
				snprintf(s->why, sizeof(s->why), "cannot decode "
					 "model %d's upload: %s",
					 c->up_in[i].peer, strerror(-err));
				return err;
			}
			w->rep.bytes_in += w->wire + sizeof(struct wk_hdr);
			s->uploads++;
			if (c->model)
				return maybe_upload(w, s);
			/* the global model: the last one in, folded in */
			if (s->uploads == c->nuc && folding(w, s, &err))
				return err;
			return 0;
		}
		if (err)
			snprintf(s->why, sizeof(s->why), "upload from model "
				 "%d: %s", c->up_in[i].peer, strerror(-err));
		return err;
	}
	return bout_step(w, s, (int)(tag - EV_BOUT));
}

static int round_once(struct worker *w, unsigned r)
{
	const struct wk_conf *c = w->c;
	struct rstate s = { .r = r };
	int err = 0;

	memset(&w->rep, 0, sizeof(w->rep));
	w->rep.round = (int32_t)r;
	w->bin.done = w->uout.done = false;
	w->bin.busy = false;
	for (int i = 0; i < c->nbc; i++)
		w->bout[i].done = w->bout[i].busy = false;
	for (int i = 0; i < c->nuc; i++)
		xfer_recv(&w->uin[i], w->inbuf[i], w->wire, c->piped,
			  c->piped && c->model);
	if (c->model == 0) {
		struct wk_go go;
		struct timespec ts;

		if (read(c->go_fd, &go, sizeof(go)) != (ssize_t)sizeof(go) ||
		    go.round != r)
			return fail(w, "the harness went away");
		/* its time to fold the uploads in, as the harness said */
		(void)round_train_s(w, r);
		/* encoded before t0: encoding is host time, not the round's */
		err = fl_encode(w->model.w, w->model.nparams, c->bpp,
				w->bcast, w->wire);
		if (err)
			return fail(w, "cannot encode: %s", strerror(-err));
		w->bcast_digest = fl_digest(w->bcast, w->wire);
		/* every task starts at the same absolute time */
		ts.tv_sec = (time_t)(go.t0 / 1000000000u);
		ts.tv_nsec = (long)(go.t0 % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
		w->rep.t_go = go.t0;
		err = on_model(w, &s, mono_ns());
	} else {
		xfer_recv(&w->bin, w->bcast, w->wire, false,
			  c->piped && c->nbc);
		/* the model may be waiting in the socket already */
		err = on_event(w, &s, EV_BIN);
	}
	while (!err && !round_over(w, &s)) {
		struct epoll_event ev[16];
		int n = epoll_wait(w->ep, ev, 16,
				   s.training ? -1 : (int)(c->timeout_s * 1000));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			snprintf(s.why, sizeof(s.why), "epoll: %s",
				 strerror(errno));
			break;
		}
		if (n == 0) {
			err = -ETIMEDOUT;
			snprintf(s.why, sizeof(s.why), "%s",
				 !s.have ? "no model from the broadcast tree" :
				 s.uploads < c->nuc ? "an upload child is silent" :
				 "a transfer does not progress");
			break;
		}
		for (int i = 0; i < n && !err; i++)
			err = on_event(w, &s, ev[i].data.u64);
		prio_ordinary_if_behind(&w->realtime, w->rep.late_ns);
	}
	if (!err && c->model == 0)
		err = finish_root(w, &s);
	if (err)
		return fail(w, "round %u: %s", r, s.why[0] ? s.why :
			    strerror(-err));
	for (int i = 0; i < c->nbc; i++)
		w->rep.bytes_out += w->wire + sizeof(struct wk_hdr);
	report(w, WK_ROUND);
	return 0;
}

int worker_run(const struct wk_conf *c)
{
	struct worker w = { .c = c, .lb = -1, .ab = -1, .cu = -1, .ep = -1,
			    .tfd = -1, .train_go = -1, .train_done = -1,
			    .train_s = c->train_s, .agg_s = c->agg_s };
	int err, rc = 0;

	if (c->nbc > WK_MAX_CHILDREN || c->nuc > WK_MAX_CHILDREN)
		return fail(&w, "more than %d children", WK_MAX_CHILDREN);
	for (int i = 0; i < WK_MAX_CHILDREN; i++)
		w.cb[i] = w.lu[i] = w.au[i] = -1;
	err = setup_data(&w);
	if (err)
		return fail(&w, "cannot set up the model and data: %s",
			    strerror(-err));
	/* a root that carries the task on over new trees: the model as
	 * the root before it left it */
	if (c->model == 0 && c->first_round > 1) {
		err = wk_take(c->model_fd, &w.model, c->first_round - 1);
		if (err)
			return fail(&w, "the global model kept after round %u "
				    "cannot be taken: %s", c->first_round - 1,
				    err == -EBADMSG ? "it is not that round's, "
				    "or not whole" : strerror(-err));
	}
	rc = setup_net(&w);
	if (!rc)	/* the rounds' event loop: real-time (emu/prio.h) */
		w.realtime = prio_realtime(PRIO_WORKER_LOOP);
	for (unsigned r = c->first_round ? c->first_round : 1;
	     !rc && r <= c->rounds; r++)
		rc = round_once(&w, r);
	if (!rc)
		wks_linger(c->model == 0 ? c->go_fd : w.ab);
	/* the process exits next: the kernel closes what is open */
	return rc;
}

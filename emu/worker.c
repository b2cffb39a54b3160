// SPDX-License-Identifier: MIT
/*
 * The model worker. Sending to several children and receiving from several
 * children happen on one thread per connection, so that transfers run
 * concurrently (as the plan's prediction assumes) while the worker trains.
 */
#include "worker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WK_MAGIC 0x314d4c54u	/* "TLM1" */
#define WK_TEST_SAMPLES 1000

struct wk_hdr {
	uint32_t magic, task, round, sender;
	uint64_t length, digest;
	double weight;
};

_Static_assert(sizeof(struct wk_hdr) == WK_HDR_BYTES, "header size");

struct worker {
	const struct wk_conf *c;
	struct wk_report rep;
	int lb, ab;			/* broadcast in: listen, accepted */
	int cb[WK_MAX_CHILDREN];	/* broadcast out */
	int lu[WK_MAX_CHILDREN];	/* upload in: listen */
	int au[WK_MAX_CHILDREN];	/* upload in: accepted */
	int cu;				/* upload out */
	struct fl_data mine, test;
	struct fl_model model;
	struct fl_agg agg;
	size_t wire;			/* payload bytes */
	unsigned char *payload;		/* what this worker sends */
	unsigned char *inbuf[WK_MAX_CHILDREN];
	float *tmp[WK_MAX_CHILDREN];
	double child_weight[WK_MAX_CHILDREN];
	double own_weight;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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

double wk_project(const float *w, size_t n, uint64_t seed, int k)
{
	struct fl_rng r;
	double s = 0;

	fl_rng_seed(&r, fl_seed_derive(seed, 0x70726f6au + (uint64_t)k));
	for (size_t j = 0; j < n; j += 64) {
		uint64_t bits = fl_rng_next(&r);

		for (size_t i = j; i < n && i < j + 64; i++)
			s += (bits >> (i - j) & 1) ? w[i] : -(double)w[i];
	}
	return s;
}

/* ---- sockets ------------------------------------------------------------ */

static void timeouts(int fd, double s)
{
	struct timeval tv = { (time_t)s, (suseconds_t)((s - (time_t)s) * 1e6) };
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int tcp_listen(uint32_t addr)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(WK_PORT),
				  .sin_addr.s_addr = htonl(addr) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 4)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Connect src -> dst, retrying while the peer is not listening yet. */
static int tcp_connect(uint32_t src, uint32_t dst, double timeout)
{
	struct sockaddr_in from = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(src) };
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(WK_PORT),
				  .sin_addr.s_addr = htonl(dst) };
	uint64_t end = now_ns() + (uint64_t)(timeout * 1e9);

	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

		if (fd < 0)
			return -errno;
		if (bind(fd, (struct sockaddr *)&from, sizeof(from))) {
			err = -errno;
			close(fd);
			return err;
		}
		timeouts(fd, timeout);
		if (connect(fd, (struct sockaddr *)&to, sizeof(to)) == 0)
			return fd;
		err = -errno;
		close(fd);
		if (err != -ECONNREFUSED || now_ns() > end)
			return err;
		usleep(5000);
	}
}

static int tcp_accept(int lfd, double timeout)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int fd;

	if (poll(&p, 1, (int)(timeout * 1000)) <= 0)
		return -ETIMEDOUT;
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -ECONNRESET;	/* the peer went away */
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- messages ----------------------------------------------------------- */

static int send_msg(struct worker *w, int fd, unsigned round, double weight)
{
	struct wk_hdr h = {
		.magic = WK_MAGIC, .task = (uint32_t)w->c->task,
		.round = round, .sender = (uint32_t)w->c->model,
		.length = w->wire, .digest = fl_digest(w->payload, w->wire),
		.weight = weight,
	};
	int err = write_all(fd, &h, sizeof(h));

	return err ? err : write_all(fd, w->payload, w->wire);
}

/* Receive one message from `sender` into buf; check everything. */
static int recv_msg(struct worker *w, int fd, unsigned round, int sender,
		    unsigned char *buf, double *weight, char *why, size_t len)
{
	struct wk_hdr h;
	int err = read_all(fd, &h, sizeof(h));

	if (err) {
		snprintf(why, len, "%s", strerror(-err));
		return err;
	}
	if (h.magic != WK_MAGIC || h.task != (uint32_t)w->c->task ||
	    h.round != round || h.sender != (uint32_t)sender ||
	    h.length != w->wire) {
		snprintf(why, len, "bad header (task %u round %u sender %u "
			 "length %llu)", h.task, h.round, h.sender,
			 (unsigned long long)h.length);
		return -EBADMSG;
	}
	err = read_all(fd, buf, w->wire);
	if (err) {
		snprintf(why, len, "%s", strerror(-err));
		return err;
	}
	if (fl_digest(buf, w->wire) != h.digest) {
		snprintf(why, len, "payload checksum mismatch");
		return -EBADMSG;
	}
	*weight = h.weight;
	return 0;
}

/* ---- per-connection threads --------------------------------------------- */

struct job {
	struct worker *w;
	int i;			/* child index */
	unsigned round;
	int err;
	char why[96];
};

static void *send_bcast(void *p)
{
	struct job *j = p;

	j->err = send_msg(j->w, j->w->cb[j->i], j->round, 0);
	if (j->err)
		snprintf(j->why, sizeof(j->why), "%s", strerror(-j->err));
	return NULL;
}

static void *recv_upload(void *p)
{
	struct job *j = p;
	struct worker *w = j->w;

	j->err = recv_msg(w, w->au[j->i], j->round, w->c->up_in[j->i].peer,
			  w->inbuf[j->i], &w->child_weight[j->i], j->why,
			  sizeof(j->why));
	w->rep.t_child[j->i] = now_ns();
	if (!j->err)
		j->err = fl_decode(w->inbuf[j->i], w->wire, w->c->bpp,
				   w->tmp[j->i], w->model.nparams);
	return NULL;
}

/* ---- setup -------------------------------------------------------------- */

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
	w->payload = malloc(w->wire);
	if (!w->payload)
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
	if (c->model == 0)
		return fl_data_generate(&w->test, fl_seed_derive(c->seed, 2),
					FL_SPLIT_TEST, WK_TEST_SAMPLES, c->dim,
					c->classes);
	err = fl_data_generate(&pool, fl_seed_derive(c->seed, 2),
			       FL_SPLIT_TRAIN, c->samples, c->dim, c->classes);
	if (!err)
		err = fl_partition_init(&part, &pool, c->nlocals, FL_ALPHA,
					fl_seed_derive(c->seed, 3));
	if (!err)
		err = fl_data_select(&w->mine, &pool,
				     part.idx + part.start[c->model - 1],
				     part.count[c->model - 1]);
	if (!err)
		w->own_weight = part.count[c->model - 1];
	fl_partition_release(&part);
	fl_data_release(&pool);
	return err;
}

static int setup_net(struct worker *w)
{
	const struct wk_conf *c = w->c;
	char a[16], b[16];
	int fd;

	if (c->model) {
		w->lb = tcp_listen(c->bcast_in.dst);
		if (w->lb < 0)
			return fail(w, "cannot listen on %s: %s",
				    ip(c->bcast_in.dst, a), strerror(-w->lb));
	}
	for (int i = 0; i < c->nuc; i++) {
		w->lu[i] = tcp_listen(c->up_in[i].dst);
		if (w->lu[i] < 0)
			return fail(w, "cannot listen on %s: %s",
				    ip(c->up_in[i].dst, a), strerror(-w->lu[i]));
	}
	report(w, WK_READY);
	for (int i = 0; i < c->nbc; i++) {
		fd = tcp_connect(c->bcast_out[i].src, c->bcast_out[i].dst,
				 c->timeout_s);
		if (fd < 0)
			return fail(w, "cannot connect %s -> %s (model %d): %s",
				    ip(c->bcast_out[i].src, a),
				    ip(c->bcast_out[i].dst, b),
				    c->bcast_out[i].peer, strerror(-fd));
		w->cb[i] = fd;
	}
	if (c->model) {
		fd = tcp_connect(c->up_out.src, c->up_out.dst, c->timeout_s);
		if (fd < 0)
			return fail(w, "cannot connect %s -> %s (model %d): %s",
				    ip(c->up_out.src, a), ip(c->up_out.dst, b),
				    c->up_out.peer, strerror(-fd));
		w->cu = fd;
		w->ab = tcp_accept(w->lb, c->timeout_s);
		if (w->ab < 0)
			return fail(w, "no connection from model %d: %s",
				    c->bcast_in.peer, strerror(-w->ab));
		timeouts(w->ab, c->timeout_s);
	}
	for (int i = 0; i < c->nuc; i++) {
		w->au[i] = tcp_accept(w->lu[i], c->timeout_s);
		if (w->au[i] < 0)
			return fail(w, "no connection from model %d: %s",
				    c->up_in[i].peer, strerror(-w->au[i]));
		timeouts(w->au[i], c->timeout_s);
	}
	return 0;
}

/* ---- a round ------------------------------------------------------------ */

static void own_check(struct worker *w, const float *v)
{
	double m = 0;

	for (int k = 0; k < WK_NPROJ; k++)
		w->rep.proj[k] = wk_project(v, w->model.nparams, w->c->seed, k);
	for (size_t j = 0; j < w->model.nparams; j++)
		if (fabsf(v[j]) > m)
			m = fabsf(v[j]);
	w->rep.max_abs = m;
}

static int round_once(struct worker *w, unsigned r)
{
	const struct wk_conf *c = w->c;
	struct job sj[WK_MAX_CHILDREN], rj[WK_MAX_CHILDREN];
	pthread_t st[WK_MAX_CHILDREN], rt[WK_MAX_CHILDREN];
	float *mean = w->model.w;
	int err = 0, ns = 0, nr = 0;
	char why[96];
	double wt;

	memset(&w->rep, 0, sizeof(w->rep));
	w->rep.round = (int32_t)r;
	if (c->model == 0) {
		char go;

		if (read(c->go_fd, &go, 1) != 1)
			return fail(w, "the harness went away");
		w->rep.t_start = now_ns();
		err = fl_encode(w->model.w, w->model.nparams, c->bpp,
				w->payload, w->wire);
		if (err)
			return fail(w, "cannot encode: %s", strerror(-err));
	} else {
		err = recv_msg(w, w->ab, r, c->bcast_in.peer, w->payload, &wt,
			       why, sizeof(why));
		if (err)
			return fail(w, "round %u: broadcast from model %d: %s",
				    r, c->bcast_in.peer, why);
		w->rep.t_start = now_ns();
		err = fl_decode(w->payload, w->wire, c->bpp, w->model.w,
				w->model.nparams);
		if (err)
			return fail(w, "cannot decode: %s", strerror(-err));
	}
	w->rep.bytes_in += c->model ? w->wire + sizeof(struct wk_hdr) : 0;
	/* forward while training; receive uploads as they come */
	w->rep.t_send = now_ns();
	for (int i = 0; i < c->nbc; i++, ns++) {
		sj[i] = (struct job){ .w = w, .i = i, .round = r };
		if (pthread_create(&st[i], NULL, send_bcast, &sj[i]))
			break;
	}
	for (int i = 0; i < c->nuc; i++, nr++) {
		rj[i] = (struct job){ .w = w, .i = i, .round = r };
		if (pthread_create(&rt[i], NULL, recv_upload, &rj[i]))
			break;
	}
	fl_agg_reset(&w->agg);
	if (c->model) {
		int64_t done;

		w->rep.t_train0 = now_ns();
		done = fl_train(&w->model, &w->mine, c->train_samples, FL_BATCH,
				FL_LR, fl_seed_derive(c->seed, 1000 + r));
		w->rep.t_train1 = now_ns();
		if (done < 0)
			err = (int)done;
		own_check(w, w->model.w);
		w->rep.weight = w->own_weight;
		if (!err)
			err = fl_agg_add(&w->agg, w->model.w, w->own_weight);
	}
	for (int i = 0; i < nr; i++) {
		pthread_join(rt[i], NULL);
		if (!err && rj[i].err) {
			err = rj[i].err;
			snprintf(why, sizeof(why), "upload from model %d: %s",
				 c->up_in[i].peer, rj[i].why);
		} else if (!err) {
			err = fl_agg_add(&w->agg, w->tmp[i],
					 w->child_weight[i]);
		}
		w->rep.bytes_in += w->wire + sizeof(struct wk_hdr);
	}
	for (int i = 0; i < ns; i++) {
		pthread_join(st[i], NULL);
		if (!err && sj[i].err) {
			err = sj[i].err;
			snprintf(why, sizeof(why), "broadcast to model %d: %s",
				 c->bcast_out[i].peer, sj[i].why);
		}
		w->rep.bytes_out += w->wire + sizeof(struct wk_hdr);
	}
	if (err)
		return fail(w, "round %u: %s", r,
			    err == -EBADMSG || err == -ETIMEDOUT ||
					    err == -ECONNRESET ? why :
								 strerror(-err));
	if (ns != c->nbc || nr != c->nuc)
		return fail(w, "round %u: cannot start threads", r);
	err = fl_agg_finish(&w->agg, mean);
	if (err)
		return fail(w, "round %u: nothing to aggregate", r);
	err = fl_encode(mean, w->model.nparams, c->bpp, w->payload, w->wire);
	if (err)
		return fail(w, "cannot encode: %s", strerror(-err));
	w->rep.digest = fl_digest(w->payload, w->wire);
	if (c->model) {
		w->rep.t_up0 = now_ns();
		err = send_msg(w, w->cu, r, w->agg.weight);
		w->rep.t_up1 = now_ns();
		if (err)
			return fail(w, "round %u: upload to model %d: %s", r,
				    c->up_out.peer, strerror(-err));
		w->rep.bytes_out += w->wire + sizeof(struct wk_hdr);
	} else {
		/* the new global model, as the next round will send it */
		err = fl_decode(w->payload, w->wire, c->bpp, w->model.w,
				w->model.nparams);
		w->rep.t_end = now_ns();
		own_check(w, w->model.w);
		w->rep.weight = w->agg.weight;
		if (!err)
			err = fl_evaluate(&w->model, &w->test, &w->rep.loss,
					  &w->rep.accuracy);
		if (err)
			return fail(w, "round %u: %s", r, strerror(-err));
	}
	report(w, WK_ROUND);
	return 0;
}

int worker_run(const struct wk_conf *c)
{
	struct worker w = { .c = c, .lb = -1, .ab = -1, .cu = -1 };
	int err, rc = 0;

	if (c->nbc > WK_MAX_CHILDREN || c->nuc > WK_MAX_CHILDREN)
		return fail(&w, "more than %d children", WK_MAX_CHILDREN);
	for (int i = 0; i < WK_MAX_CHILDREN; i++)
		w.cb[i] = w.lu[i] = w.au[i] = -1;
	err = setup_data(&w);
	if (err)
		return fail(&w, "cannot set up the model and data: %s",
			    strerror(-err));
	rc = setup_net(&w);
	for (unsigned r = 1; !rc && r <= c->rounds; r++)
		rc = round_once(&w, r);
	/* the process exits next: the kernel closes what is open */
	return rc;
}

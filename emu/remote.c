// SPDX-License-Identifier: MIT
/*
 * Workers over a command's stdin and stdout: the frames, the worker's end
 * (`twinlab worker`), the harness's end (start, clocks) and the relay that
 * hands the harness every report whole.
 */
#include "remote.h"
#include "spawn.h"
#include "twin/clock.h"
#include "twin/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define RM_ARGS_MAX 64		/* words of a start command */
#define RM_WORD_MAX 4096	/* bytes of one, its node put in */

uint32_t rm_payload_len(uint16_t type)
{
	switch (type) {
	case RM_CONF:
		return sizeof(struct wk_conf);
	case RM_CLOCK:
		return sizeof(struct rm_clock);
	case RM_OFFSET:
		return sizeof(int64_t);
	case RM_GO:
		return sizeof(struct wk_go);
	case RM_CTL:
		return sizeof(struct wk_ctl);
	case RM_REPORT:
		return sizeof(struct wk_report);
	case RM_ASK:
		return sizeof(struct rm_ask);
	case RM_ANSWER:
		return sizeof(struct rm_answer);
	}
	return 0;
}

uint64_t rm_name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		h = (h ^ *s) * 0x100000001b3ull;
	return h;
}

int rm_send(int fd, uint16_t type, const void *payload, uint32_t len)
{
	struct rm_hdr h = { .magic = RM_MAGIC, .type = type,
			    .version = RM_VERSION, .len = len };
	struct iovec iov[2] = { { &h, sizeof(h) },
				{ (void *)payload, len } };
	size_t want = sizeof(h) + len, done = 0;

	/*
	 * A link to a command the harness started is a socket: no SIGPIPE
	 * when the command has gone (a run takes SIGPIPE as the user's
	 * stop). The worker's end may be a pipe (its runtime's), where
	 * SIGPIPE is ignored.
	 */
	while (done < want) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		ssize_t k = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (k < 0 && errno == ENOTSOCK)
			k = writev(fd, iov, 2);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == ECONNRESET ? -EPIPE : -errno;
		done += (size_t)k;
		for (int i = 0; i < 2 && k > 0; i++) {
			size_t n = (size_t)k < iov[i].iov_len ?
					   (size_t)k : iov[i].iov_len;

			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= n;
			k -= (ssize_t)n;
		}
	}
	return 0;
}

int rm_reader_feed(struct rm_reader *r, int fd)
{
	size_t want;
	ssize_t k;

	if (r->have >= sizeof(r->hdr) &&
	    r->have == sizeof(r->hdr) + r->hdr.len)
		r->have = 0;	/* the last frame was taken */
	if (r->have < sizeof(r->hdr)) {
		want = sizeof(r->hdr) - r->have;
		k = read(fd, (char *)&r->hdr + r->have, want);
	} else {
		want = sizeof(r->hdr) + r->hdr.len - r->have;
		k = read(fd, r->buf + (r->have - sizeof(r->hdr)), want);
	}
	/* (a socket whose other end closed with our bytes unread says
	 * ECONNRESET: ended all the same) */
	if (k < 0)
		return errno == EAGAIN || errno == EINTR ? 0 :
		       errno == ECONNRESET ? -EPIPE : -errno;
	if (k == 0)
		return -EPIPE;
	r->have += (size_t)k;
	if (r->have == sizeof(r->hdr)) {
		if (r->hdr.magic != RM_MAGIC || r->hdr.version != RM_VERSION ||
		    !rm_payload_len(r->hdr.type) ||
		    r->hdr.len != rm_payload_len(r->hdr.type)) {
			r->have = 0;	/* never a length read by */
			return -EBADMSG;
		}
		r->type = r->hdr.type;
	}
	return r->have >= sizeof(r->hdr) &&
	       r->have == sizeof(r->hdr) + r->hdr.len;
}

int rm_read_frame(struct rm_reader *r, int fd, int ms,
		      const volatile sig_atomic_t *stop)
{
	uint64_t end = ms < 0 ? 0 : mono_ns() + (uint64_t)ms * 1000000u;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = -1, e;

		if (stop && *stop)
			return -ECANCELED;
		if (ms >= 0) {
			uint64_t now = mono_ns();

			if (now >= end)
				return -ETIMEDOUT;
			left = (int)((end - now) / 1000000u) + 1;
		}
		if (stop && (left < 0 || left > 100))
			left = 100;	/* a look at *stop now and then */
		e = poll(&p, 1, left);
		if (e < 0 && errno != EINTR)
			return -errno;
		if (e <= 0)
			continue;
		e = rm_reader_feed(r, fd);
		if (e)
			return e < 0 ? e : 0;
	}
}

static bool terminated(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

/* A bool as it came over the wire: its byte is 0 or 1 (another value
 * read as a bool is undefined). */
static bool bool_byte(const bool *b)
{
	unsigned char v;

	memcpy(&v, b, 1);
	return v <= 1;
}

int rm_conf_check(const struct wk_conf *c, char *why, size_t len)
{
	const char *bad = NULL;

	if (c->task < 0 || c->model < 0 || c->model > 1 << 20)
		bad = "task or model out of range";
	else if (!terminated(c->task_name, sizeof(c->task_name)) ||
		 !terminated(c->netns, sizeof(c->netns)))
		bad = "a name is not terminated";
	else if (c->rounds < 1 || c->rounds > 100000 ||
		 c->first_round > c->rounds)
		bad = "rounds out of range";
	else if (!(c->timeout_s > 0 && c->timeout_s <= 86400) ||
		 !(c->dilation >= 1 && c->dilation <= 1e6) ||
		 !(c->train_s >= 0 && c->train_s <= 1e6) ||
		 !(c->agg_s >= 0 && c->agg_s <= 1e6))
		bad = "a time out of range";
	else if (c->nbc < 0 || c->nbc > WK_MAX_CHILDREN || c->nuc < 0 ||
		 c->nuc > WK_MAX_CHILDREN)
		bad = "more children than a worker takes";
	else if (!bool_byte(&c->piped))
		bad = "a flag is neither 0 nor 1";
	else if (c->nlocals < 1 || c->nlocals > 1 << 20 || c->share < 0 ||
		 c->share >= c->nlocals ||
		 c->samples < 1 || c->samples > 1 << 26 || c->classes < 2 ||
		 c->classes > 1 << 16 || c->dim < 1 || c->dim > 1 << 26 ||
		 (c->bpp != 1 && c->bpp != 2 && c->bpp != 4 && c->bpp != 8) ||
		 c->chunk < c->bpp || c->chunk % c->bpp ||
		 c->train_samples < 0 || c->train_samples > (int64_t)1e12 ||
		 (double)(c->samples + WK_TEST_SAMPLES) * c->dim > 1e9 ||
		 (double)c->classes * (c->dim + 1) > 1e9)
		bad = "learning sizes out of range";
	if (bad)
		snprintf(why, len, "the configuration received: %s", bad);
	return bad ? -EINVAL : 0;
}

/* ---- the worker's end --------------------------------------------------- */

struct wside {
	int in, out;		/* the link */
	int go, ctl;		/* write ends, to the worker */
	int rep;		/* read end, from it */
	int64_t offset;		/* this host's clock - the harness's */
};

static void shift(uint64_t *t, int64_t by)
{
	if (*t)
		*t = (uint64_t)((int64_t)*t + by);
}

void rm_report_to_harness(struct wk_report *rep, int64_t offset)
{
	uint64_t *at[] = { &rep->t_start, &rep->t_go, &rep->t_send,
			   &rep->t_train0, &rep->t_train1, &rep->t_ready,
			   &rep->t_up0, &rep->t_up1, &rep->t_end };

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		shift(at[i], -offset);
	for (int i = 0; i < WK_MAX_CHILDREN; i++)
		shift(&rep->t_child[i], -offset);
}

void rm_go_to_worker(struct wk_go *go, int64_t offset)
{
	shift(&go->t0, offset);
}

/*
 * The worker's relay: the link's frames to the worker's pipes, the
 * worker's reports to the link. The link ending means the harness is
 * gone: the worker ends at once (nothing would read it). The reports'
 * pipe ending means the worker is done: return.
 */
static void *wside_relay(void *arg)
{
	struct wside *s = arg;
	struct rm_reader in = { 0 };
	struct wk_report rep;
	size_t have = 0;

	for (;;) {
		struct pollfd p[2] = { { .fd = s->in, .events = POLLIN },
				       { .fd = s->rep, .events = POLLIN } };
		int e;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p[1].revents) {
			ssize_t k = read(s->rep, (char *)&rep + have,
					 sizeof(rep) - have);

			if (k <= 0 && !(k < 0 && errno == EINTR))
				return NULL;
			have += k > 0 ? (size_t)k : 0;
			if (have == sizeof(rep)) {
				have = 0;
				rm_report_to_harness(&rep, s->offset);
				if (rm_send(s->out, RM_REPORT, &rep,
					    sizeof(rep)))
					_exit(0);
			}
		}
		if (!p[0].revents)
			continue;
		e = rm_reader_feed(&in, s->in);
		if (e < 0)
			_exit(e == -EPIPE ? 0 : 1);
		if (!e)
			continue;
		if (in.type == RM_GO) {
			struct wk_go go;

			memcpy(&go, in.buf, sizeof(go));
			rm_go_to_worker(&go, s->offset);
			if (write(s->go, &go, sizeof(go)) != sizeof(go))
				_exit(1);
		} else if (in.type == RM_CTL) {
			if (write(s->ctl, in.buf, sizeof(struct wk_ctl)) !=
			    (ssize_t)sizeof(struct wk_ctl))
				_exit(1);
		}
	}
}

/* The configuration, then the clock's questions until the offset. */
static int wside_open(struct wside *s, struct wk_conf *c)
{
	struct rm_reader r = { 0 };
	char why[160];
	int e = rm_read_frame(&r, s->in, -1, NULL);

	if (e || r.type != RM_CONF) {
		fprintf(stderr, "twinlab worker: no configuration on stdin: "
			"%s\n", e == -EPIPE ? "it ended first" :
			e == -EBADMSG ? "what came is not a harness's" :
			e ? strerror(-e) : "another message came first");
		return -EPROTO;
	}
	memcpy(c, r.buf, sizeof(*c));
	/* no pointer comes over a link: the gate is the harness host's */
	c->gate = NULL;
	c->gate_slot = -1;
	if (rm_conf_check(c, why, sizeof(why))) {
		fprintf(stderr, "twinlab worker: %s\n", why);
		return -EINVAL;
	}
	for (;;) {
		struct rm_clock ck;

		e = rm_read_frame(&r, s->in, -1, NULL);
		if (e)
			break;
		if (r.type == RM_OFFSET) {
			memcpy(&s->offset, r.buf, sizeof(s->offset));
			return 0;
		}
		if (r.type != RM_CLOCK) {
			e = -EPROTO;
			break;
		}
		memcpy(&ck, r.buf, sizeof(ck));
		ck.answered = mono_ns();
		e = rm_send(s->out, RM_CLOCK, &ck, sizeof(ck));
		if (e)
			break;
	}
	fprintf(stderr, "twinlab worker: the clocks were not matched: %s\n",
		strerror(-e));
	return e;
}

int rm_worker_main(int in, int out)
{
	struct wside s = { .in = in, .out = out };
	int go[2], ctl[2], rep[2], rc;
	struct wk_conf c;
	pthread_t th;

	signal(SIGPIPE, SIG_IGN);
	if (wside_open(&s, &c))
		return 2;
	if (pipe2(go, O_CLOEXEC) || pipe2(ctl, O_CLOEXEC | O_NONBLOCK) ||
	    pipe2(rep, O_CLOEXEC)) {
		perror("twinlab worker: pipe");
		return 2;
	}
	/* its host's namespace is the container's own: nothing to enter */
	c.netns[0] = '\0';
	c.model_fd = -1;
	c.lfd_bcast = -1;	/* it listens on its own */
	for (int i = 0; i < WK_MAX_CHILDREN; i++)
		c.lfd_up[i] = -1;
	/* a compute phase comes over the link, not always before the model
	 * arrives over the network: wait for each round's */
	c.ctl_each_round = true;
	c.go_fd = c.model == 0 ? go[0] : -1;
	c.ctl_fd = ctl[0];
	c.report_fd = rep[1];
	s.go = go[1];
	s.ctl = ctl[1];
	s.rep = rep[0];
	if (pthread_create(&th, NULL, wside_relay, &s)) {
		fprintf(stderr, "twinlab worker: cannot start its relay\n");
		return 2;
	}
	rc = worker_run(&c);
	/* every report out before the process ends */
	close(rep[1]);
	pthread_join(th, NULL);
	return rc;
}

/* ---- the harness's end --------------------------------------------------- */

/*
 * argv with every "{node}" in its words replaced by node and every
 * "{prefix}" by prefix; NULL with errno.
 */
static char **put_node(char *const *argv, const char *node,
		       const char *prefix)
{
	size_t n = 0;
	char **out;

	while (argv[n])
		n++;
	if (!n || n > RM_ARGS_MAX) {
		errno = E2BIG;
		return NULL;
	}
	out = calloc(n + 1, sizeof(*out));
	for (size_t i = 0; out && i < n; i++) {
		char buf[RM_WORD_MAX];
		const char *s = argv[i];
		size_t k = 0;

		while (k < sizeof(buf)) {
			const char *an = strstr(s, "{node}");
			const char *ap = strstr(s, "{prefix}");
			const char *at = an && (!ap || an < ap) ? an : ap;
			bool is_node = at == an;

			if (!at)
				break;
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%.*s%s",
					      (int)(at - s), s,
					      is_node ? node : prefix);
			s = at + strlen(is_node ? "{node}" : "{prefix}");
		}
		if (k < sizeof(buf))
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s",
					      s);
		if (k >= sizeof(buf) || !(out[i] = strdup(buf))) {
			for (size_t j = 0; j < i; j++)
				free(out[j]);
			free(out);
			errno = k >= sizeof(buf) ? E2BIG : ENOMEM;
			return NULL;
		}
	}
	return out;
}

static void free_argv(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

int rm_match_clocks(int to, int from, int ms,
		    const volatile sig_atomic_t *stop, uint64_t *err_ns)
{
	uint64_t best = UINT64_MAX;
	int64_t offset = 0;
	struct rm_reader r = { 0 };

	for (int i = 0; i < RM_CLOCK_ASKS; i++) {
		struct rm_clock ck = { .asked = mono_ns() }, back;
		uint64_t now;
		int e = rm_send(to, RM_CLOCK, &ck, sizeof(ck));

		if (!e)
			e = rm_read_frame(&r, from, ms, stop);
		if (e)
			return e;
		now = mono_ns();
		if (r.type != RM_CLOCK)
			return -EPROTO;
		memcpy(&back, r.buf, sizeof(back));
		if (back.asked != ck.asked)
			return -EPROTO;	/* not the answer to this question */
		if (now - ck.asked < best) {
			best = now - ck.asked;
			offset = (int64_t)(back.answered -
					   (ck.asked + best / 2));
		}
	}
	*err_ns = best / 2;
	return rm_send(to, RM_OFFSET, &offset, sizeof(offset));
}

/* fd as target in a child about to exec: a dup, or (the same number)
 * kept across the exec. 0 or -1. */
static int onto(int fd, int target)
{
	if (fd == target)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, target) < 0 ? -1 : 0;
}

pid_t rm_spawn(char *const *argv, const char *node, const char *prefix,
	       const char *what, int *to, int *from, char *err, size_t len)
{
	char **av = put_node(argv, node, prefix);
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, e, mlen;
	char msg[600];
	pid_t pid = -1;

	*to = *from = -1;
	if (!av) {
		e = -errno;
		snprintf(err, len, "cannot make the command that starts the "
			 "%s on '%s': %s", what, node, strerror(errno));
		return e;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out)) {
		e = -errno;
		snprintf(err, len, "cannot make a %s's link: %s", what,
			 strerror(errno));
		goto fail;
	}
	/*
	 * What the child says if it cannot run the command, made here: no
	 * stdio, strerror or malloc between fork and exec, where another
	 * thread may have held their locks. It adds the errno.
	 */
	mlen = snprintf(msg, sizeof(msg) - 16, "twinlab: cannot run '%s' to "
			"start the %s on '%s': errno ", av[0], what, node);
	if (mlen < 0 || mlen >= (int)sizeof(msg) - 16)
		mlen = (int)sizeof(msg) - 17;
	pid = fork();
	if (pid < 0) {
		e = -errno;
		snprintf(err, len, "cannot fork a %s: %s", what,
			 strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		int n = mlen, v;
		char d[12];
		int k = 0;

		/* its own process group: the user's ^C stops the run, which
		 * ends the commands, rather than killing them under it */
		signal(SIGPIPE, SIG_DFL);
		if (setpgid(0, 0) || onto(in[0], 0) || onto(out[1], 1))
			_exit(126);
		execvp(av[0], av);
		for (v = errno; k == 0 || v > 0; v /= 10)
			d[k++] = (char)('0' + v % 10);
		while (k > 0)
			msg[n++] = d[--k];
		msg[n++] = '\n';
		if (write(2, msg, (size_t)n) < 0)
			_exit(127);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	free_argv(av);
	*to = in[1];
	*from = out[0];
	return pid;
fail:
	pipes_close(in, out);
	free_argv(av);
	return e;
}

pid_t rm_start(char *const *argv, const char *node, const char *prefix,
	       const struct wk_conf *conf, int *to, int *from, char *err,
	       size_t len)
{
	pid_t pid = rm_spawn(argv, node, prefix, "worker", to, from, err, len);
	int e;

	if (pid < 0)
		return pid;
	/*
	 * The socket takes it whether the command reads yet or not. If the
	 * command has already ended, matching the clocks says so, as for
	 * one that ends later.
	 */
	e = rm_send(*to, RM_CONF, conf, sizeof(*conf));
	if (!e || e == -EPIPE)
		return pid;
	snprintf(err, len, "cannot send the worker on '%s' its "
		 "configuration: %s", node, strerror(-e));
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(*to);
	close(*from);
	*to = *from = -1;
	return e;
}

/* ---- the relay of reports ---------------------------------------------- */

struct rm_link {
	int fd, task, model;
	atomic_bool ended;	/* fd closed: its end, or a bad frame */
	struct rm_reader r;
};

bool rm_link_ended(const struct rm_link *l)
{
	return atomic_load(&l->ended);
}

/*
 * The links are the relay thread's alone once added; the lock guards only
 * the list (which grows) and stop. It is not held while a report is
 * written: the fleet's pipe may be full while the fleet starts workers
 * and adds links.
 */
struct rm_relay {
	pthread_t th;
	pthread_mutex_t lock;
	int wake;		/* eventfd: links added, or stop */
	int out;		/* where whole reports go */
	bool stop;
	struct rm_link **l;
	int n, cap;
};

static void relay_drain_wake(struct rm_relay *rl)
{
	uint64_t v;

	if (read(rl->wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
}

/* A frame a link sent: a report, as its own (task and model the
 * link's), or a failure that names what was wrong. */
static void relay_frame(struct rm_relay *rl, struct rm_link *l, int e)
{
	struct wk_report rep;

	if (e > 0 && l->r.type == RM_REPORT) {
		memcpy(&rep, l->r.buf, sizeof(rep));
	} else {
		memset(&rep, 0, sizeof(rep));
		rep.kind = WK_FAIL;
		snprintf(rep.msg, sizeof(rep.msg), "its link to the harness "
			 "carried %s", e == -EBADMSG ? "a message that is not "
			 "a worker's" : "a message out of place");
	}
	rep.task = l->task;
	rep.model = l->model;
	/*
	 * Room first, or stop: the fleet may not read while it stops, and
	 * a relay blocked on a full pipe could not be joined. Once the
	 * pipe has room, one write under PIPE_BUF goes whole.
	 */
	for (;;) {
		struct pollfd p[2] = { { .fd = rl->out, .events = POLLOUT },
				       { .fd = rl->wake, .events = POLLIN } };
		bool stop;

		/* before waiting: the wake that said stop may have been
		 * taken already (stop is set before it is written) */
		pthread_mutex_lock(&rl->lock);
		stop = rl->stop;
		pthread_mutex_unlock(&rl->lock);
		if (stop)
			return;
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (p[0].revents & (POLLERR | POLLHUP))
			return;		/* nobody reads any more */
		if (p[0].revents & POLLOUT)
			break;
		relay_drain_wake(rl);	/* links added: seen next turn */
	}
	while (write(rl->out, &rep, sizeof(rep)) < 0 && errno == EINTR)
		;
}

/* One link that polled ready: read, and pass on what is whole. */
static void relay_link(struct rm_relay *rl, struct rm_link *l)
{
	int e = rm_reader_feed(&l->r, l->fd);

	if (e == 0)
		return;
	if (e == -EPIPE || (e < 0 && e != -EBADMSG)) {
		/* it ended: the fleet sees the process end */
		close(l->fd);
		l->fd = -1;
		atomic_store(&l->ended, true);
		return;
	}
	relay_frame(rl, l, e);
	if (e < 0 || l->r.type != RM_REPORT) {
		close(l->fd);
		l->fd = -1;
		atomic_store(&l->ended, true);
	}
}

static void *relay_main(void *arg)
{
	struct rm_relay *rl = arg;
	struct rm_link **mine = NULL;
	struct pollfd *p = NULL;
	int cap = 0, pcap = 0;
	sigset_t pipe_sig;

	/* a write to a reader gone fails (EPIPE) without a signal */
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, NULL);

	for (;;) {
		int n;

		pthread_mutex_lock(&rl->lock);
		n = rl->n;
		if (!rl->stop) {
			void *a = grow_array(mine, &cap, n, sizeof(*mine), 16);
			void *b = a ? grow_array(p, &pcap, n + 1, sizeof(*p),
						 16) : NULL;

			mine = a ? a : mine;
			p = b ? b : p;
			if (!b)
				rl->stop = true;	/* out of memory */
		}
		if (rl->stop) {
			pthread_mutex_unlock(&rl->lock);
			break;
		}
		memcpy(mine, rl->l, (size_t)n * sizeof(*mine));
		pthread_mutex_unlock(&rl->lock);
		p[0] = (struct pollfd){ .fd = rl->wake, .events = POLLIN };
		for (int i = 0; i < n; i++)
			p[i + 1] = (struct pollfd){ .fd = mine[i]->fd,
						    .events = POLLIN };
		if (poll(p, (nfds_t)n + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents)
			relay_drain_wake(rl);
		for (int i = 0; i < n; i++)
			if (p[i + 1].revents && mine[i]->fd >= 0)
				relay_link(rl, mine[i]);
	}
	free(mine);
	free(p);
	return NULL;
}

struct rm_relay *rm_relay_new(int out)
{
	struct rm_relay *rl = calloc(1, sizeof(*rl));

	if (!rl)
		return NULL;
	rl->out = out;
	rl->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rl->wake < 0 || pthread_mutex_init(&rl->lock, NULL)) {
		if (rl->wake >= 0)
			close(rl->wake);
		free(rl);
		errno = ENOMEM;
		return NULL;
	}
	if (pthread_create(&rl->th, NULL, relay_main, rl)) {
		pthread_mutex_destroy(&rl->lock);
		close(rl->wake);
		free(rl);
		errno = EAGAIN;
		return NULL;
	}
	return rl;
}

static void relay_wake(struct rm_relay *rl)
{
	uint64_t one = 1;

	if (write(rl->wake, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return;
}

int rm_relay_add(struct rm_relay *rl, int fd, int task, int model,
		 const struct rm_link **link)
{
	struct rm_link *l = calloc(1, sizeof(*l));
	void *v;
	int e = 0;

	if (link)
		*link = NULL;
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->fd = fd;
	l->task = task;
	l->model = model;
	atomic_init(&l->ended, false);
	pthread_mutex_lock(&rl->lock);
	v = grow_array(rl->l, &rl->cap, rl->n, sizeof(*rl->l), 16);
	if (!v) {
		e = -ENOMEM;
	} else {
		rl->l = v;
		rl->l[rl->n++] = l;
	}
	pthread_mutex_unlock(&rl->lock);
	if (e) {
		close(fd);
		free(l);
	} else if (link) {
		*link = l;
	}
	relay_wake(rl);
	return e;
}

void rm_relay_free(struct rm_relay *rl)
{
	if (!rl)
		return;
	pthread_mutex_lock(&rl->lock);
	rl->stop = true;
	pthread_mutex_unlock(&rl->lock);
	relay_wake(rl);
	pthread_join(rl->th, NULL);
	for (int i = 0; i < rl->n; i++) {
		if (rl->l[i]->fd >= 0)
			close(rl->l[i]->fd);
		free(rl->l[i]);
	}
	pthread_mutex_destroy(&rl->lock);
	close(rl->wake);
	free(rl->l);
	free(rl);
}

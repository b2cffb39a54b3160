// SPDX-License-Identifier: MIT
/* A node's agent and the run's end of the agents; see agent.h. */
#include "agent.h"
#include "lab.h"
#include "labstate.h"
#include "monitor.h"
#include "nl.h"
#include "spawn.h"
#include "twin/clock.h"

#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "delayline.h"

void agent_node_release(struct agent_node *st)
{
	nl_close(st->nl);
	lab_delay_live_close(st->dl);
	st->nl = NULL;
	st->dl = NULL;
}

void agent_answer(const struct rm_ask *q, const char *prefix,
		  struct agent_node *st, struct rm_answer *a)
{
	struct nl_qstats qs = { 0 };
	struct dl_live **dl = &st->dl;
	unsigned index;
	int e = 0;

	memset(a, 0, sizeof(*a));
	a->what = q->what;
	a->seq = q->seq;
	switch (q->what) {
	case RM_ASK_HELLO:
		a->v[0] = RM_VERSION;
		break;
	case RM_ASK_LINK:
		if (!memchr(q->ifname, '\0', sizeof(q->ifname))) {
			e = -EINVAL;
			break;
		}
		/* one socket for every question: the links' load asks
		 * several times a round */
		if (!st->nl && !(st->nl = nl_open(NULL))) {
			e = -errno;
			break;
		}
		index = if_nametoindex(q->ifname);
		e = index ? nl_qdisc_stats(st->nl, (int)index, &qs) : -ENODEV;
		a->v[0] = qs.bytes;
		a->v[1] = qs.packets;
		a->v[2] = qs.drops;
		break;
	case RM_ASK_TCP:
		e = monitor_tcp(&a->v[0], &a->v[1]);
		break;
	case RM_ASK_PART: {
		struct lab_state ls;

		e = prefix ? lab_state_read(prefix, &ls) : -ENOENT;
		if (e)
			break;
		if (!(ls.dilation >= 1) || !ls.part[0] || !ls.digest)
			e = -ENOENT;	/* not a node's part */
		memcpy(&a->v[0], &ls.dilation, sizeof(ls.dilation));
		a->v[1] = ls.digest;
		a->v[2] = rm_name_hash(ls.part);
		lab_state_release(&ls);
		break;
	}
	case RM_ASK_DELAY:
		if (!prefix) {
			e = -ENOENT;
			break;
		}
		if (!*dl)
			e = lab_delay_live_open(prefix, dl);
		if (e)
			break;
		a->v[0] = atomic_load(&(*dl)->accepted);
		a->v[1] = atomic_load(&(*dl)->late_ns_sum);
		a->v[2] = atomic_exchange(&(*dl)->late_ns_max, 0);
		a->v[3] = atomic_load(&(*dl)->starts);
		break;
	default:
		e = -EINVAL;
	}
	if (e)
		memset(a->v, 0, sizeof(a->v));
	a->err = e;
}

int agent_main(int in, int out, const char *prefix)
{
	struct rm_reader r = { 0 };
	struct agent_node st = { 0 };
	int rc = 0;

	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		struct rm_ask q;
		struct rm_answer a;
		int e = rm_read_frame(&r, in, -1, NULL);

		if (e == -EPIPE)
			break;		/* the link ended: the run is done */
		if (!e && r.type != RM_ASK)
			e = -EPROTO;
		if (!e) {
			memcpy(&q, r.buf, sizeof(q));
			agent_answer(&q, prefix, &st, &a);
			e = rm_send(out, RM_ANSWER, &a, sizeof(a));
			if (e == -EPIPE)
				break;
		}
		if (e) {
			fprintf(stderr, "twinlab agent: %s\n",
				e == -EPROTO ? "a frame that is not a question "
					       "came over the link" :
					       strerror(-e));
			rc = 2;
			break;
		}
	}
	agent_node_release(&st);
	return rc;
}

/* ---- the run's end ---------------------------------------------------- */

struct agent {
	char node[64];
	pid_t pid;
	int to, from;
	uint32_t seq;
	bool broken;		/* the link failed: it answers no more */
	struct rm_reader r;
	pthread_mutex_t mu;
};

struct agents {
	int n;
	struct agent *a;
	const volatile sig_atomic_t *stop;	/* the user's, or NULL */
};

const char *agents_node(const struct agents *a, int i)
{
	return a->a[i].node;
}

int agents_count(const struct agents *a)
{
	return a ? a->n : 0;
}

int agents_find(const struct agents *a, const char *node)
{
	for (int i = 0; a && i < a->n; i++)
		if (!strcmp(a->a[i].node, node))
			return i;
	return -1;
}

/* Ask agent g, waiting ms at most (or until *stop); its mutex held. */
static int ask(struct agent *g, uint32_t what, const char *ifname,
	       uint64_t v[RM_ANSWER_VALUES], int ms,
	       const volatile sig_atomic_t *stop)
{
	struct rm_ask q = { .what = what, .seq = ++g->seq };
	struct rm_answer ans;
	int e;

	if (g->broken)
		return -EPIPE;
	if (ifname)
		snprintf(q.ifname, sizeof(q.ifname), "%s", ifname);
	e = rm_send(g->to, RM_ASK, &q, sizeof(q));
	if (!e)
		e = rm_read_frame(&g->r, g->from, ms, stop);
	if (!e && g->r.type != RM_ANSWER)
		e = -EPROTO;
	if (!e) {
		memcpy(&ans, g->r.buf, sizeof(ans));
		if (ans.what != what || ans.seq != q.seq)
			e = -EPROTO;	/* not the answer to this question */
		/* from another host: an errno, or nothing we can name */
		if (ans.err > 0 || ans.err < -4095)
			e = -EPROTO;
	}
	if (e) {
		g->broken = true;
		return e;
	}
	memcpy(v, ans.v, sizeof(ans.v));
	return ans.err;
}

int agents_ask(struct agents *a, int i, uint32_t what, const char *ifname,
	       uint64_t v[RM_ANSWER_VALUES])
{
	struct agent *g = &a->a[i];
	int e;

	pthread_mutex_lock(&g->mu);
	e = ask(g, what, ifname, v, AGENT_ASK_MS, a->stop);
	pthread_mutex_unlock(&g->mu);
	return e;
}

int agents_sample(void *ctx, struct mon_sample *s)
{
	struct agents_mon *m = ctx;
	uint64_t v[RM_ANSWER_VALUES];
	int e;

	for (int i = 0; i < m->nservers; i++) {
		e = agents_ask(m->a, m->servers[i], RM_ASK_TCP, NULL, v);
		if (e)
			return e;
		s->retrans += v[0];
		s->out_segs += v[1];
	}
	for (int i = 0; m->delay && i < m->a->n; i++) {
		e = agents_ask(m->a, i, RM_ASK_DELAY, NULL, v);
		if (e == -ENOENT)
			continue;	/* no delay line on that node */
		if (e)
			return e;
		s->dl_accepted += v[0];
		s->dl_late_ns_sum += v[1];
		s->dl_bins = false;	/* an agent gives no bins */
		if (v[2] > s->dl_late_ns_max)
			s->dl_late_ns_max = v[2];
		s->dl_starts += v[3];
	}
	return 0;
}

void agents_stop(struct agents *a)
{
	uint64_t deadline = mono_ns() + AGENT_GRACE_NS;

	if (!a)
		return;
	/* the links first: each agent ends at its link's end, and with it
	 * a command that waits for it (docker exec) */
	for (int i = 0; i < a->n; i++) {
		close(a->a[i].to);
		close(a->a[i].from);
	}
	for (int i = 0; i < a->n; i++) {
		struct agent *g = &a->a[i];
		int st;

		if (g->pid > 0 && !spawn_wait_until(g->pid, deadline, &st)) {
			kill(g->pid, SIGKILL);
			while (waitpid(g->pid, &st, 0) < 0 && errno == EINTR)
				;
		}
		pthread_mutex_destroy(&g->mu);
	}
	free(a->a);
	free(a);
}

int agents_start(char *const *argv, const char *const *nodes,
		 const char *const *prefixes, int n,
		 const volatile sig_atomic_t *stop, struct agents **out,
		 char *err, size_t len)
{
	struct agents *a = calloc(1, sizeof(*a));
	int e = 0;

	uint64_t hello = mono_ns() + (uint64_t)AGENT_HELLO_MS * 1000000u;

	*out = NULL;
	if (a)
		a->a = calloc((size_t)n + 1, sizeof(*a->a));
	if (!a || !a->a) {
		free(a);
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	/* every command first, so that they start side by side */
	for (int i = 0; i < n && !e; i++) {
		struct agent *g = &a->a[i];
		pid_t pid;

		snprintf(g->node, sizeof(g->node), "%s", nodes[i]);
		pthread_mutex_init(&g->mu, NULL);
		a->n = i + 1;
		pid = rm_spawn(argv, nodes[i], prefixes[i], "agent", &g->to,
			       &g->from, err, len);
		if (pid < 0)
			e = pid;
		g->pid = pid;
	}
	a->stop = stop;
	/* one deadline for all: they started side by side */
	for (int i = 0; i < a->n && !e; i++) {
		uint64_t v[RM_ANSWER_VALUES], now = mono_ns();

		e = ask(&a->a[i], RM_ASK_HELLO, NULL, v,
			now < hello ? (int)((hello - now) / 1000000u) : 0, stop);
		if (!e && v[0] != RM_VERSION)
			e = -EBADMSG;
		if (e)
			snprintf(err, len, "the agent on '%s' (started by "
				 "'%s') did not answer: %s", nodes[i], argv[0],
				 e == -EPIPE ? "it ended" :
				 e == -EBADMSG ? "its frames are not this "
						 "version's" :
				 e == -EPROTO ? "what came back is not an "
						"agent's answer" :
				 e == -ECANCELED ? "stopped" : strerror(-e));
	}
	if (e) {
		agents_stop(a);
		return e;
	}
	*out = a;
	return 0;
}

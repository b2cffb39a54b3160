/* SPDX-License-Identifier: MIT */
/*
 * A node's agent: what a run reads in a node's namespace when it cannot
 * enter it, the node being a container on another host — its shapers'
 * counters, its TCP counters, its delay line's lateness. `twinlab agent`
 * runs in the node's container, started by a command (`run --agents-via
 * 'docker exec -i clab-LAB-{node} twinlab agent'`) whose stdin and stdout
 * are its link, and answers each question (struct rm_ask) with one answer
 * (struct rm_answer), in the frames of emu/remote.h. It ends when the link
 * does.
 */
#ifndef EMU_AGENT_H
#define EMU_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "emu/remote.h"

#define AGENT_HELLO_MS 60000	/* for its command to start and answer */
#define AGENT_ASK_MS 10000	/* for any later answer */

/*
 * agent_main - the node's end: answer questions from `in` on `out` until
 * the link ends (0), reading the delay line of prefix (NULL: none here).
 * A frame that is not a question, or a broken link: a message on stderr
 * and 2.
 */
int agent_main(int in, int out, const char *prefix);

/*
 * What an agent keeps from one question to the next, each made at the
 * first question that needs it: the namespace's rtnetlink socket, the
 * delay line's counters mapped. Zero it first; agent_node_release.
 */
struct dl_live;
struct nl;
struct agent_node {
	struct nl *nl;
	struct dl_live *dl;
};
void agent_node_release(struct agent_node *st);

/* agent_answer - the answer to q, in this thread's namespace. */
void agent_answer(const struct rm_ask *q, const char *prefix,
		  struct agent_node *st, struct rm_answer *a);

/*
 * The run's end: one agent per node.
 *
 * agents_start - run argv for each of nodes[0..n) ({node} put in, and
 * {prefix} as prefixes[i]) and wait for each to say hello (AGENT_HELLO_MS each at most, or until
 * *stop). 0 and *out; -errno with a message naming the node and the
 * command, and nothing left running.
 */
struct agents;
int agents_start(char *const *argv, const char *const *nodes,
		 const char *const *prefixes, int n,
		 const volatile sig_atomic_t *stop, struct agents **out,
		 char *err, size_t len) __attribute__((warn_unused_result));

/* agents_node - agent i's node. */
const char *agents_node(const struct agents *a, int i);
int agents_count(const struct agents *a);

/* agents_find - the agent of node, or -1. */
int agents_find(const struct agents *a, const char *node);

/*
 * agents_ask - ask agent i (what, and the interface for RM_ASK_LINK);
 * safe from any thread; waits AGENT_ASK_MS at most, or until the stop
 * agents_start was given. The answer's err (0 with v[] set, or -errno), or
 * -errno of the link (after which the agent answers no more).
 */
int agents_ask(struct agents *a, int i, uint32_t what, const char *ifname,
	       uint64_t v[RM_ANSWER_VALUES]);

/*
 * agents_sample - a monitor's reader (monitor_read_via) over a's agents:
 * TCP summed over those of ctx's servers, and with delay the delay line
 * summed over every agent that has one.
 */
struct mon_sample;
struct agents_mon {
	struct agents *a;
	const int *servers;	/* agents of the servers */
	int nservers;
	bool delay;
};
int agents_sample(void *ctx, struct mon_sample *s);

/*
 * agents_stop - close every link, give the commands AGENT_GRACE_NS to
 * end with their agents, then SIGKILL what is left; reap all. NULL: no-op.
 */
#define AGENT_GRACE_NS 5000000000ull
void agents_stop(struct agents *a);

#endif

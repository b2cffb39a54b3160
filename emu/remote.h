/* SPDX-License-Identifier: MIT */
/*
 * A worker started through a command: `docker exec -i NODE twinlab worker`
 * or `containerlab exec`, on another host, in a container the harness
 * cannot fork into. The command's stdin and stdout are the worker's only
 * link to the harness (a container of the emulation has no other network
 * than the emulated one, and its traffic stays there), so everything the
 * fleet says to a forked worker through pipes goes over that link in
 * frames: the worker's configuration, each round's go, each compute phase,
 * and back, every report.
 *
 * Clocks: the hosts' monotonic clocks are not the same clock. When the
 * link opens, the harness asks the worker's time a few times and keeps
 * the answer of the shortest round trip (its error is at most half that
 * trip); the worker's end then moves every time it receives (a round's
 * start) and sends (a report's instants) by that offset, so the fleet
 * sees one clock, its own, as with forked workers.
 *
 * The worker's end ends when the link does: a container runtime does not
 * end the process it started when its exec client is killed, closing the
 * link does.
 */
#ifndef EMU_REMOTE_H
#define EMU_REMOTE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "emu/worker.h"

#define RM_MAGIC 0x746c726du	/* "tlrm" */
#define RM_CLOCK_ASKS 8		/* clock samples when a link opens */

enum rm_type { RM_CONF = 1, RM_CLOCK, RM_OFFSET, RM_GO, RM_CTL, RM_REPORT,
	       RM_ASK, RM_ANSWER };

struct rm_hdr {
	uint32_t magic;
	uint16_t type, version;
	uint32_t len;		/* payload bytes after the header */
	uint32_t pad;
};

#define RM_VERSION 1

/* The clock's question and answer: the harness's time, echoed, and the
 * worker's time when it answered. */
struct rm_clock {
	uint64_t asked, answered;
};

/*
 * A node's counters, asked of its agent (`twinlab agent`, emu/agent.h):
 * what, seq echoed; the answer's v[] by what (see enum rm_ask_what).
 */
enum rm_ask_what {
	RM_ASK_HELLO = 1,	/* v[0]: RM_VERSION; the agent is there */
	RM_ASK_LINK,		/* ifname's shaper: bytes, packets, drops */
	RM_ASK_TCP,		/* the namespace's TCP: RetransSegs, OutSegs */
	RM_ASK_DELAY,		/* the node's delay line (struct dl_live):
				 * accepted, late_ns_sum, late_ns_max since the
				 * last ask, starts; err -ENOENT where it has
				 * none */
	RM_ASK_PART,		/* the node's part (up --node): the bits of
				 * its dilation (a double), its plan's digest
				 * (lab_digest), rm_name_hash of its node;
				 * -ENOENT: none */
};

#define RM_ANSWER_VALUES 4

struct rm_ask {
	uint32_t what, seq;
	char ifname[16];
};

struct rm_answer {
	uint32_t what, seq;
	int32_t err;		/* 0 or -errno (-4095 at most), v[] then
				 * zeros */
	uint32_t pad;
	uint64_t v[RM_ANSWER_VALUES];
};

/* rm_name_hash - a node's name as RM_ASK_PART answers it (FNV-1a). */
uint64_t rm_name_hash(const char *name);

/*
 * rm_payload_len - the one payload length a frame of type `type` may have
 * (the link's frames are fixed-size per type); 0 for an unknown type.
 */
uint32_t rm_payload_len(uint16_t type);

/*
 * rm_send - write one frame (header and payload in one write, so frames
 * from one writer never interleave). 0 or -errno (-EPIPE: the other end
 * is gone).
 */
int rm_send(int fd, uint16_t type, const void *payload, uint32_t len)
	__attribute__((warn_unused_result));

/*
 * A frame being read from a stream that may deliver it in pieces (a
 * container runtime's relay does). rm_reader_feed reads what fd has
 * (one read; the fd may be non-blocking) and returns 1 when a whole frame
 * is in r->buf (type in r->type, payload at r->buf), 0 when more is
 * needed, -EPIPE at end of stream, -EBADMSG for a frame that is not one
 * of the link's (bad magic, version, type or length), or -errno.
 */
union rm_payload {
	struct wk_conf conf;
	struct rm_clock clock;
	int64_t offset;
	struct wk_go go;
	struct wk_ctl ctl;
	struct wk_report report;
	struct rm_ask ask;
	struct rm_answer answer;
};

struct rm_reader {
	struct rm_hdr hdr;
	size_t have;		/* bytes of header + payload so far */
	uint16_t type;
	unsigned char buf[sizeof(union rm_payload)];
};

int rm_reader_feed(struct rm_reader *r, int fd);

/*
 * rm_conf_check - a configuration that came over a link is one a worker
 * can run: counts within bounds, strings terminated, the learning sizes
 * positive; 0 or -EINVAL with the reason in why.
 */
int rm_conf_check(const struct wk_conf *c, char *why, size_t len);

/*
 * rm_worker_main - the worker's end: read the configuration from `in`,
 * answer the clock, run the worker (worker_run) with its go, compute
 * phases and reports carried over in/out. The link's end ends the
 * process at once (exit 0), in a round or after the last; else it
 * returns the worker's exit status when worker_run returns (a failure,
 * or a local whose broadcast parent has gone). Errors before the worker
 * runs go to stderr (the command's, which the harness passes through)
 * and give 2.
 */
int rm_worker_main(int in, int out);

/*
 * The harness's end of one worker's link.
 *
 * rm_start - run argv (every `{node}` in its words replaced by node, every
 * `{prefix}` by prefix: the node's, see lab_part_prefix) with its stdin and stdout on sockets and send it conf; the child's PID,
 * with *to (write end: frames to the worker) and *from (read end: its
 * frames; sockets, so that a write to a command gone fails without
 * SIGPIPE). The clocks are matched next (rm_match_clocks): starting every
 * worker first lets their commands start side by side. -errno with a
 * message on failure (the child ended and reaped).
 */
pid_t rm_start(char *const *argv, const char *node, const char *prefix,
	       const struct wk_conf *conf, int *to, int *from, char *err,
	       size_t len);

/*
 * rm_spawn - rm_start's command alone, for `what` ("worker", "agent") on
 * node: its PID and link (*to, *from), nothing sent yet; -errno with a
 * message on failure.
 */
pid_t rm_spawn(char *const *argv, const char *node, const char *prefix,
	       const char *what, int *to, int *from, char *err, size_t len);

/*
 * rm_read_frame - one whole frame from a blocking fd, waiting at most ms
 * (-1: no limit) or until *stop is set (stop may be NULL). 0, -ETIMEDOUT,
 * -ECANCELED, -EPIPE, -EBADMSG or -errno.
 */
int rm_read_frame(struct rm_reader *r, int fd, int ms,
		  const volatile sig_atomic_t *stop)
	__attribute__((warn_unused_result));

/*
 * The clocks' offset is the worker's clock minus the harness's.
 * rm_report_to_harness - a report's instants (worker's clock) on the
 * harness's; rm_go_to_worker - a round's start (harness's clock) on the
 * worker's. Instants of 0 (not set) stay 0.
 */
void rm_report_to_harness(struct wk_report *rep, int64_t offset);
void rm_go_to_worker(struct wk_go *go, int64_t offset);

/*
 * rm_match_clocks - over a link whose worker end has its configuration:
 * ask its time RM_CLOCK_ASKS times (waiting at most ms for each answer),
 * send it the offset (its clock - ours) of the shortest round trip, and
 * say half that trip in *err_ns, the most the offset can be off. Gives up
 * when *stop is set (stop may be NULL). 0 or -errno (-ETIMEDOUT,
 * -ECANCELED, -EPIPE, -EPROTO for an answer that is not this question's).
 * The offset is that of the link's opening: clocks that drift apart
 * later (tens of ppm under NTP) are not followed.
 */
int rm_match_clocks(int to, int from, int ms,
		    const volatile sig_atomic_t *stop, uint64_t *err_ns)
	__attribute__((warn_unused_result));

/*
 * The relay: one thread that reads every link's frames as they come (in
 * pieces or not) and writes each report whole, with one write, to out
 * (the fleet's report pipe, as a forked worker would), as the link's
 * task and model whatever the frame says; a frame that is not a report
 * is written as that worker's failure and its link closed. A link that
 * ends is closed (its process's end tells the fleet).
 *
 * rm_relay_new - NULL with errno. rm_relay_add - hand it a link's read
 * end (closed on failure too) and get its handle in *link (if link);
 * 0 or -ENOMEM. rm_relay_free - stop it and close every link.
 */
struct rm_relay;

struct rm_relay *rm_relay_new(int out);
struct rm_link;
int rm_relay_add(struct rm_relay *rl, int fd, int task, int model,
		 const struct rm_link **link)
	__attribute__((warn_unused_result));
/* Whether a link the relay has (*link of rm_relay_add) has ended: read
 * to its end (its command's output closed), or closed for a bad frame.
 * Its reports are then all in the fleet's pipe. */
bool rm_link_ended(const struct rm_link *link);
void rm_relay_free(struct rm_relay *rl);

#endif

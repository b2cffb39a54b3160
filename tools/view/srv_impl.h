/* SPDX-License-Identifier: MIT */
/*
 * The live view's server, inside (srv.c serves the page and its stream;
 * change.c makes what the page asks: cuts, repairs, traffic). Not for use
 * outside tools/view.
 */
#ifndef TOOLS_VIEW_SRV_IMPL_H
#define TOOLS_VIEW_SRV_IMPL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/view/route.h"
#include "tools/view/srv.h"

struct counter;
struct nscache;
struct tg;

#define VIEW_ASSET_MAX (4 << 20) /* bytes of one page file */
#define VIEW_CONNECTIONS 16
#define VIEW_MSG_MAX 65536 /* one event's JSON */

#define VIEW_COOKIE "twinlab_view"
#define VIEW_TASKS_MAX 16384 /* the last round's tasks, as JSON */
#define VIEW_LOG 16	     /* the page's own cuts and repairs kept */
#define VIEW_EVENTS_MAX 200  /* the scenario's events listed */

struct view {
	char token[VIEW_TOKEN_LEN + 1];
	char cookie[128]; /* Set-Cookie with the token */
	char *asset[8];	  /* view_assets' contents, or NULL */
	size_t asset_len[8];
	/*
	 * The server: libmicrohttpd run by a thread of ours (server), not
	 * by threads of its own, so that each turn of it is inside the fork
	 * gate (emu/forkgate.h); wake tells it to end. A request that waits
	 * (a stream between messages, traffic being started) is suspended
	 * and resumed, never waited for on that thread.
	 */
	struct MHD_Daemon *d;
	pthread_t server;
	bool serving, ending;	/* ending: under mu */
	int wake[2];
	double interval;
	pthread_t sampler;
	bool sampling;
	/* under mu: the network's JSON and its number, the latest load
	 * message and its number, a note (a run's last round), stop (ends
	 * every stream and the sampler), the streams suspended until the
	 * next message */
	pthread_mutex_t mu;
	struct stream *parked;
	char *topology;
	unsigned long topo_seq, seq;
	int streams; /* open: the counters are read only while some are */
	char msg[VIEW_MSG_MAX];
	char note[256];
	bool stop;
	/* the last round's tasks (a JSON array, "" before one), what the
	 * page changed (the last VIEW_LOG), and the run's scenario clock:
	 * t = (now - clock_t0) / clock_n, once a run started its rounds */
	char tasks[VIEW_TASKS_MAX];
	struct {
		double t;
		char what[192];
	} log[VIEW_LOG];
	int nlog;
	uint64_t clock_t0;
	double clock_n;
	/*
	 * traffic asked for from the page, started by the sampler: a
	 * generator's parent-death signal follows the thread that forks it,
	 * and the server's thread does not wait (the request is suspended)
	 */
	struct {
		bool pending, done;
		/* the request that asked (answered once done), and while
		 * not done, suspended */
		struct MHD_Connection *asker;
		char task[64];
		double gbps, for_s;
		int rc;
		char msg[512];
	} treq;
	/*
	 * under shown: what is shown (prefix "" while nothing is), its
	 * counters and the fibres down; held by the sampler as it reads,
	 * by a cut or repair from the page, and by view_srv_show
	 */
	pthread_mutex_t shown;
	char prefix[64];
	const struct plan *p;
	const struct addressing *a;
	const struct scenario *sc;
	struct tg *tg; /* traffic started from the page, or NULL */
	double dilation, last, t0;
	struct counter *ctr;
	struct nscache *nsc;
	int nctr, nnsc;
	uint64_t *prev;
	bool *down;
	bool *story_down;	/* story_down's, per fibre */
	unsigned changes;	/* cuts, repairs and traffic from the page
				 * (under shown) */
	bool *page_cut;		/* per fibre: cut from the page, not yet
				 * repaired from it (under shown) */
	bool owner;		/* view_srv_opts.owner */
	view_replan_fn replan;	/* view_srv_replan's (under shown) */
	void *replan_ctx;
};

/* One stream's place: the message it sends, how far it got. */
struct stream {
	struct view *v;
	struct MHD_Connection *c;
	struct stream *next;	/* in v->parked, while suspended */
	bool parked;
	unsigned long seq;
	char buf[VIEW_MSG_MAX + 32];
	size_t off, len;
};

/* Scenario seconds now (mono_s): from the run's first round where a run
 * set the clock, else since what is shown was shown, undilated; NAN when
 * nothing is shown (mu held). */
double view_scenario_now(const struct view *v, double now);

/* A run's scenario seconds at now (mono_s), or -1 before its rounds start
 * (takes mu). */
double view_run_clock(struct view *v, double now);

/* Answer c with body (type, status, the cookie if any). */
enum MHD_Result view_answer(struct MHD_Connection *c, int status,
			    const char *type, const void *body, size_t len,
			    enum MHD_ResponseMemoryMode mode, const char *cookie);

/* A change the page asks for (VIEW_CUT, VIEW_REPAIR, VIEW_TRAFFIC),
 * answered as JSON: ok and message; 200, 400 (usage) or 409. */
enum MHD_Result view_change(struct view *v, struct MHD_Connection *c,
			    int what);

/* The sampler: start traffic the page asked for, if any (shown held). */
void view_traffic_asked(struct view *v);

/* Resume every stream suspended until the next message (mu held). */
void view_unpark(struct view *v);

/* Wake the server's thread: a request was resumed. */
void view_kick(struct view *v);

/* Request c is over, answered or not (the server's notice). */
void view_request_over(struct view *v, struct MHD_Connection *c);

#endif

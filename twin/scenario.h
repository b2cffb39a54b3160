/* SPDX-License-Identifier: MIT */
/*
 * The scenario: a ROADM/IP network and the AI tasks it carries, in physical
 * units, as read from a YAML file. The format is described in
 * scenarios/README.md; every rule stated there is checked here, so a
 * scenario that loads is consistent and the schedulers need not re-check it.
 */
#ifndef TWIN_SCENARIO_H
#define TWIN_SCENARIO_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Longest node name: "<node>-<3 digits>" must fit IFNAMSIZ - 1 = 15. */
#define SCN_NODE_NAME_MAX 11
#define SCN_TASK_NAME_MAX 32
#define SCN_NAME_MAX 64
/* A fibre's packet loss: at most one packet in ten (beyond that TCP
 * collapses and a round measures nothing but timeouts). */
#define SCN_LOSS_MAX 0.1
/* Shares a task's data may be split into (split_over). */
#define SCN_SPLIT_MAX 100000

enum node_kind { NODE_ROADM, NODE_ROUTER, NODE_SERVER };

struct scn_node {
	char name[SCN_NODE_NAME_MAX + 1];
	enum node_kind kind;
	int line, col;		/* where it was declared */
	/* NODE_ROUTER: its ROADM; NODE_SERVER: its router; else -1 */
	int attach;
	/* NODE_ROADM: its router or -1, where pictures draw it (placed) */
	int router;
	bool placed;
	double x, y;
	/* NODE_SERVER only */
	double access_gbps;
	double access_km;
	double cpu;		/* cores (1.0 = one full core) */
	double memory_mib;
};

struct scn_fibre {
	int a, b;		/* ROADM node indices */
	double km;
	int wavelengths;
	double loss;		/* probability a packet crossing it is lost */
	int line, col;
	bool down;		/* cut at the moment a timeline describes
				 * (never in a file): nothing crosses it */
};

struct scn_task {
	char name[SCN_TASK_NAME_MAX + 1];
	int global;		/* server node index */
	int nlocals;
	int *locals;		/* server node indices */
	uint64_t parameters;
	unsigned bytes_per_parameter;
	double work_core_s;	/* one core's seconds of training per round */
	double agg_core_s;	/* one core's seconds to fold one child's
				 * update into an aggregate (0: instant) */
	unsigned rounds;
	double demand_gbps;	/* bandwidth reserved per transfer */
	long arrival;		/* scheduling order key */
	int line, col;
	/* the task's data: a pool split over split_over local models (0:
	 * nlocals), local i holding share[i] of it (NULL: share i) —
	 * scenario_task_split / scenario_task_share */
	int split_over;
	int *share;
};

/* How many shares a task's data are split into. */
static inline int scenario_task_split(const struct scn_task *t)
{
	return t->split_over > 0 ? t->split_over : t->nlocals;
}

/* Which share local model i (0-based, of t->locals) holds. */
static inline int scenario_task_share(const struct scn_task *t, int i)
{
	return t->share ? t->share[i] : i;
}

/*
 * What happens to the network while it runs (scenarios/README.md,
 * "Events"): at at_s seconds of scenario time from the start, a fibre is
 * cut or repaired, a task arrives or leaves, or background traffic flows
 * between two nodes for a while.
 */
enum scn_event_kind {
	SCN_EV_CUT, SCN_EV_REPAIR, SCN_EV_ARRIVE, SCN_EV_LEAVE, SCN_EV_TRAFFIC
};

#define SCN_EVENTS_MAX 10000
/*
 * Most cells of a timeline: every epoch (one at t = 0, one per event and
 * per end of traffic) is planned with the tasks and flows there are; a
 * run plays each epoch with every task and flow the timeline ever has.
 * epochs x (tasks + flows) past this is refused: time and memory grow
 * with it (about 1 kB a cell).
 */
#define SCN_TIMELINE_CELLS_MAX 200000
#define SCN_RECONFIG_MS 100	/* default reconfig_ms */
#define SCN_EVENT_AT_MAX 1e6	/* seconds of scenario time */

struct scn_event {
	double at_s;
	enum scn_event_kind kind;
	int fibre;		/* SCN_EV_CUT, SCN_EV_REPAIR */
	struct scn_task task;	/* SCN_EV_ARRIVE: the task (its locals owned) */
	int leave;		/* SCN_EV_LEAVE: the task leaving: i < ntasks is
				 * tasks[i], else the arrival events[i - ntasks] */
	int from, to;		/* SCN_EV_TRAFFIC: routers or servers */
	double gbps, for_s;	/* SCN_EV_TRAFFIC */
	int line, col;
};

/*
 * mst's default bound on a model's arrival, against a direct path's, and
 * weight per millisecond of propagation: with pipelined relays these keep
 * trees as fast as stars on long-haul networks (scenarios/README.md,
 * "Defaults, and why").
 */
#define SCN_STRETCH 1.1
#define SCN_BETA 2.0

/* MST weight coefficients; see scenarios/README.md "Scheduler weights". */
struct scn_weights {
	double alpha;		/* per wavelength-link a path would consume */
	double beta;		/* per millisecond of propagation */
	double reuse;		/* fraction of alpha paid on a lit lightpath */
	double adddrop;		/* per O-E-O conversion at a router */
	double stretch;		/* mst: no model's estimated arrival more
				 * than this times a direct path's (>= 1);
				 * 0: no bound (sched_mst.c) */
};

/*
 * Background traffic flowing at the moment a timeline describes (never in
 * a file): what a traffic event started and has not yet ended.
 */
struct scn_bg {
	int event;		/* the traffic event */
	int from, to;		/* routers or servers */
	double gbps;
};

/*
 * How a model that relays (broadcast) or aggregates (upload) forwards: the
 * whole model once it has all of it (store), or each chunk of chunk_bytes
 * as soon as it has that chunk (and, aggregating, that chunk of every
 * child's): scenarios/README.md "Relays".
 */
enum scn_relay { SCN_RELAY_STORE, SCN_RELAY_PIPELINED };

#define SCN_CHUNK_KB 256	/* default chunk_kb */

struct scenario {
	char file[256];
	char name[SCN_NAME_MAX + 1];
	uint64_t seed;
	double scale;
	char addressing[32];	/* IPv4 CIDR, checked */
	double wavelength_gbps;
	double demand_gbps;	/* default for tasks */
	double reconfig_s;	/* setting up or taking down a lightpath
				 * (ROADM switching, path set-up) */
	struct scn_weights weights;
	enum scn_relay relay;	/* default pipelined, or store where a task
				 * of the file sends int8 parameters */
	int relay_line, relay_col;	/* where the file said so, or 0 */
	double chunk_bytes;	/* physical bytes of one chunk (pipelined) */
	bool never_slower;	/* mst compares its trees with a star
				 * (twin/sched_mst.c) */

	int nnodes;
	struct scn_node *nodes;
	int nfibres;
	struct scn_fibre *fibres;
	int ntasks;
	struct scn_task *tasks;	/* sorted by (arrival, file order) */
	int nevents;
	struct scn_event *events; /* sorted by (at_s, file order) */
	int nbg;
	struct scn_bg *bg;	/* timeline epochs only (timeline.h) */
};

/*
 * The first task of sc with task t's name: t, unless t carries it on over
 * new trees (twin/lpset.h: the same task, listed again), and is it.
 */
static inline int scenario_task_first(const struct scenario *sc, int t)
{
	for (int u = 0; u < t; u++)
		if (!strcmp(sc->tasks[u].name, sc->tasks[t].name))
			return u;
	return t;
}

/* Where loading failed and why: "file:line:col: msg". line is 0 if unknown. */
struct scn_error {
	char file[256];
	int line, col;
	char msg[256];
};

/*
 * scn_name_ok - a name as a scenario may give one (and a file name part):
 * 1-max characters of [A-Za-z0-9_-] (and '.' if allow_dot), not starting
 * with '-' or '.', not ending with '-'.
 */
bool scn_name_ok(const char *s, size_t max, bool allow_dot);

/* Limits on what a scenario file may be (scenario_load, scenario_parse). */
#define SCN_FILE_MAX (4 << 20)
#define SCN_FILE_MAX_TEXT "4 MiB"
#define SCN_DEPTH_MAX 32
#define SCN_POS_MAX 1e6	/* |x|, |y| of a position */

/*
 * scenario_load - read and validate a scenario file.
 * Returns a new scenario, or NULL with *err filled in and errno set
 * (EINVAL for a bad scenario, or the errno of the failed I/O).
 */
struct scenario *scenario_load(const char *path, struct scn_error *err)
	__attribute__((warn_unused_result));

/* scenario_parse - the same from a buffer; name is used in messages. */
struct scenario *scenario_parse(const char *buf, size_t len, const char *name,
				struct scn_error *err)
	__attribute__((warn_unused_result));

void scenario_free(struct scenario *sc);

/*
 * scenario_write - sc as a scenario file that loads back into the same
 * scenario (every number exact; tasks in their scheduling order, an
 * arrival kept where one was given). 0 or -EIO.
 */
int scenario_write(const struct scenario *sc, FILE *f);

/*
 * scenario_load_events - add the events of file path (a mapping with the
 * one key 'events', as in a scenario) to sc, checked against it as if
 * they were part of it. A scenario that has events of its own is refused
 * (the two lists would have to be merged by hand). 0, or -errno with err
 * filled (file:line:col).
 */
int scenario_load_events(struct scenario *sc, const char *path,
			 struct scn_error *err)
	__attribute__((warn_unused_result));

/* scn_events_write - sc's events as the 'events:' key of a scenario. */
void scn_events_write(const struct scenario *sc, FILE *f);

/*
 * scenario_traffic_all - list every traffic event of sc as flowing (sc->bg),
 * for a run that plays them over the plan of t = 0 (each flows in its own
 * window: struct bg_flow). 0 or -ENOMEM; scenario_free frees the list.
 */
int scenario_traffic_all(struct scenario *sc)
	__attribute__((warn_unused_result));

/* When something happens: an event, or the end of its traffic (ends). */
struct scn_moment {
	double at_s;
	int event;
	bool ends;
};

/*
 * scn_moments - sc's moments in time order (at one time, traffic ends
 * first, then by event), malloc'd into *out. Their number, or -ENOMEM.
 */
int scn_moments(const struct scenario *sc, struct scn_moment **out)
	__attribute__((warn_unused_result));

/* scn_repair_of - the first repair after event k (a cut) of its fibre, or
 * -1 when it is never repaired. */
int scn_repair_of(const struct scenario *sc, int k);

/* scenario_has_loss - whether any fibre of sc loses packets. */
bool scenario_has_loss(const struct scenario *sc);

/* The kind as the file names it: "cut", "repair", ... */
const char *scn_event_kind_name(enum scn_event_kind k);

/* scenario_find - node index by name, or -1. */
int scenario_find(const struct scenario *sc, const char *name);

/*
 * scenario_add_fibre_event - a cut (or a repair) of fibre at at_s added
 * to sc's events, as if the file had it after its own of that time: the
 * story told again must hold (no cut of a fibre cut then, no repair of
 * one that is not, the twin's bound on epochs). dry: only checked. 0, or
 * -EINVAL, -E2BIG, -ENOMEM with err->msg saying why and sc as it was.
 */
int scenario_add_fibre_event(struct scenario *sc, int fibre, bool cut,
			     double at_s, bool dry, struct scn_error *err);

/* scenario_fibre - the fibre joining ROADMs a and b either way, or -1. */
int scenario_fibre(const struct scenario *sc, int a, int b);

/* Bytes of one copy of the task's model, in physical units. */
static inline uint64_t scn_task_bytes(const struct scn_task *t)
{
	return t->parameters * t->bytes_per_parameter;
}

const char *node_kind_name(enum node_kind k);

#endif

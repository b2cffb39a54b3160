// SPDX-License-Identifier: MIT
/*
 * The live view's server (srv.h): a page on loopback (libmicrohttpd, a
 * thread per connection, every request bounded in count, size and time)
 * that shows the emulation it is given — the network where the scenario
 * places its ROADMs, the lightpaths and each task's trees, and each
 * link's load from its shaper's counters several times a second,
 * streamed as server-sent events by a thread of its own; a click on a
 * fibre cuts or repairs it as 'twinlab cut' does (fibre_apply). Every
 * request carries the random token said at the start; the page's files
 * are read once, at the start, from a fixed list (tools/view/route.c).
 * What is shown can change (a sweep's next point): the page reloads the
 * network when the events say it changed.
 */
#include "tools/view/srv.h"
#include "emu/forkgate.h"
#include "tools/twinlab.h"
#include "tools/json.h"
#include "tools/planout.h"
#include "tools/session/counters.h"
#include "tools/view/route.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* turns of the server after it is told to end: the resumed requests end */
#define VIEW_LAST_TURNS 4

#include "emu/lab.h"
#include "emu/traffic.h"
#include "twin/addr.h"
#include "twin/clock.h"
#include "twin/net.h"
#include "twin/plan.h"

#include "tools/view/srv_impl.h"


/* The folder of the page's files: installed, or in the source tree. */
static int view_dir(char *dir, size_t len)
{
	static const char *const rel[] = {"../share/twinlab/view",
					  "../../tools/view"};
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;

	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char probe[PATH_MAX + 64];

		if (snprintf(dir, len, "%s/%s", exe, rel[i]) >= (int)len)
			continue;
		snprintf(probe, sizeof(probe), "%s/page/index.html", dir);
		if (!stat(probe, &st) && S_ISREG(st.st_mode))
			return 0;
	}
	return -ENOENT;
}

/* A page file whole, if regular and at most VIEW_ASSET_MAX. 0 or -errno. */
static int slurp(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	char *b = NULL;
	size_t got = 0;
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > VIEW_ASSET_MAX) {
		err = errno ? -errno : -EINVAL;
		goto out;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		got += (size_t)n;
	}
	*out = b;
	*len = got;
	b = NULL;
out:
	free(b);
	close(fd);
	return err;
}

static int load_assets(struct view *v, const char *dir)
{
	static const char *const where[] = {
		"page/index.html",
		"page/view.js",
		"page/view.css",
		"node_modules/cytoscape/dist/cytoscape.min.js",
	};

	for (int i = 0; view_assets[i].url; i++) {
		char path[PATH_MAX + 64];
		int e;

		snprintf(path, sizeof(path), "%s/%s", dir, where[i]);
		e = slurp(path, &v->asset[i], &v->asset_len[i]);
		if (e && i < 3) {
			p_err("cannot read the page's file %s: %s", path,
			      strerror(-e));
			return e;
		}
		if (e)
			fprintf(stderr,
				"%s: view: warning: %s: %s; the page "
				"draws nothing without it (the set-up installs "
				"it: npm install in tools/view)\n",
				prog, path, strerror(-e));
	}
	return 0;
}

/* One of the scenario's events as the page's timeline lists it. */
static struct json_object *event_json(const struct scenario *sc,
				      const struct scn_event *e)
{
	struct json_object *x = json_object_new_object();
	char what[160] = "";

	switch (e->kind) {
	case SCN_EV_CUT:
	case SCN_EV_REPAIR:
		snprintf(what, sizeof(what), "fibre %s-%s",
			 sc->nodes[sc->fibres[e->fibre].a].name,
			 sc->nodes[sc->fibres[e->fibre].b].name);
		break;
	case SCN_EV_ARRIVE:
		snprintf(what, sizeof(what), "task %s", e->task.name);
		break;
	case SCN_EV_LEAVE:
		snprintf(what, sizeof(what), "task %s",
			 e->leave < sc->ntasks ?
				 sc->tasks[e->leave].name :
				 sc->events[e->leave - sc->ntasks].task.name);
		break;
	case SCN_EV_TRAFFIC:
		snprintf(what, sizeof(what), "%s to %s, %g Gbit/s for %g s",
			 sc->nodes[e->from].name, sc->nodes[e->to].name,
			 e->gbps, e->for_s);
		break;
	}
	if (x && (json_add_num(x, "at_s", e->at_s) ||
		  json_add_str(x, "kind", scn_event_kind_name(e->kind)) ||
		  json_add_str(x, "what", what))) {
		json_object_put(x);
		x = NULL;
	}
	return x;
}

/* The network as the page draws it, and the plan (plan --json's). */
static char *topology_json(const struct plan *p, const struct addressing *a,
			   const char *prefix, double dilation)
{
	const struct scenario *sc = p->sc;
	struct json_object *o = plan_json_addressed(p, a), *g = NULL, *arr;
	int *lit = calloc((size_t)sc->nfibres + 1, sizeof(*lit));
	char *s = NULL;

	if (!o || !lit)
		goto fail;
	for (int l = 0; l < p->net->nlp; l++)
		for (int f = 0; f < p->net->lp[l].nfib; f++)
			lit[p->net->lp[l].fib[f]]++;
	J(!json_add_str(o, "prefix", prefix));
	J(!json_add_num(o, "dilation", dilation));
	J(!json_add(o, "graph", g = json_object_new_object()));
	J(!json_add(g, "nodes", arr = json_object_new_array()));
	for (int i = 0; i < sc->nnodes; i++) {
		const struct scn_node *n = &sc->nodes[i];
		struct json_object *x = json_object_new_object();

		J(!json_push(arr, x));
		J(!json_add_str(x, "name", n->name));
		J(!json_add_str(x, "kind",
				n->kind == NODE_ROADM	 ? "roadm"
				: n->kind == NODE_ROUTER ? "router"
							 : "server"));
		if (n->attach >= 0)
			J(!json_add_str(x, "attach",
					sc->nodes[n->attach].name));
		if (n->kind == NODE_ROADM && n->placed) {
			J(!json_add_num(x, "x", n->x));
			J(!json_add_num(x, "y", n->y));
		}
	}
	J(!json_add(g, "fibres", arr = json_object_new_array()));
	for (int f = 0; f < sc->nfibres; f++) {
		const struct scn_fibre *fb = &sc->fibres[f];
		struct json_object *x = json_object_new_object();

		J(!json_push(arr, x));
		J(!json_add_str(x, "a", sc->nodes[fb->a].name));
		J(!json_add_str(x, "b", sc->nodes[fb->b].name));
		J(!json_add_num(x, "km", fb->km));
		J(!json_add_num(x, "wavelengths", fb->wavelengths));
		J(!json_add_num(x, "lit", lit[f]));
	}
	J(!json_add(o, "events", arr = json_object_new_array()));
	for (int k = 0; k < sc->nevents && k < VIEW_EVENTS_MAX; k++)
		J(!json_push(arr, event_json(sc, &sc->events[k])));
	/* every directed link by the index the load events give */
	J(!json_add(g, "links", arr = json_object_new_array()));
	for (int l = 0; l < plan_nlinks(p); l++) {
		struct json_object *x;
		char name[96];

		if (!plan_link_exists(p, l))
			continue;
		x = json_object_new_object();
		link_name(p, l, name, sizeof(name));
		J(!json_push(arr, x));
		J(!json_add(x, "i", json_object_new_int(l)));
		J(!json_add_str(x, "name", name));
		J(!json_add_num(x, "gbps", plan_link_gbps(p, l)));
	}
	s = strdup(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
fail:
	json_object_put(o);
	free(lit);
	return s;
}

/*
 * Scenario seconds now (mono_s): from the run's first round where a run
 * set the clock, else since what is shown was shown, undilated; NAN when
 * nothing is shown (mu held).
 */
double view_scenario_now(const struct view *v, double now)
{
	if (v->clock_n > 0)
		return (now - (double)v->clock_t0 / 1e9) / v->clock_n;
	return v->dilation > 0 ? (now - v->t0) / v->dilation : NAN;
}

/* A run's scenario seconds at now (mono_s), or -1 before its rounds start. */
double view_run_clock(struct view *v, double now)
{
	double t;

	pthread_mutex_lock(&v->mu);
	t = v->clock_n > 0 ? fmax(0, view_scenario_now(v, now)) : -1;
	pthread_mutex_unlock(&v->mu);
	return t;
}

/*
 * The fibres a run's story has cut at its scenario time now, in
 * v->story_down (none before its rounds start, or for an emulation that
 * plays no story): the page draws them cut as the run plays them (shown
 * held).
 */
static void story_down(struct view *v, double now)
{
	const struct scenario *sc = v->sc;
	double t;

	if (!sc)
		return;
	memset(v->story_down, 0, (size_t)sc->nfibres * sizeof(bool));
	t = view_run_clock(v, now);
	for (int k = 0; k < sc->nevents && sc->events[k].at_s <= t; k++) {
		const struct scn_event *e = &sc->events[k];

		if (e->kind == SCN_EV_CUT || e->kind == SCN_EV_REPAIR)
			v->story_down[e->fibre] = e->kind == SCN_EV_CUT;
	}
}

/* The load since the last sample, as one event's JSON, published (shown
 * held). */
static void publish(struct view *v, double now)
{
	const struct plan *p = v->p;
	double dt = now - v->last;
	char *m = malloc(VIEW_MSG_MAX);
	size_t len = 0;

	if (!m)
		return;
	len += (size_t)snprintf(m, VIEW_MSG_MAX, "{\"t\":%.3f,\"links\":[",
				now - v->t0);
	for (int i = 0; p && i < v->nctr && len < VIEW_MSG_MAX / 2; i++) {
		const struct counter *c = &v->ctr[i];
		uint64_t at = counters_read(c).bytes;
		double gbps = dt > 0 && at >= v->prev[i]
				      ? (double)(at - v->prev[i]) * 8 / dt *
						p->sc->scale * v->dilation / 1e9
				      : 0;
		double cap = plan_link_gbps(p, c->link);

		v->prev[i] = at;
		len += (size_t)snprintf(m + len, VIEW_MSG_MAX - len,
					"%s{\"i\":%d,\"gbps\":%.6g,\"u\":%.4f}",
					i ? "," : "", c->link, gbps,
					cap > 0 ? fmin(gbps / cap, 9.9999) : 0);
	}
	v->last = now;
	len += (size_t)snprintf(m + len, VIEW_MSG_MAX - len, "],\"down\":[");
	story_down(v, now);
	for (int f = 0, k = 0;
	     p && f < p->sc->nfibres && len < VIEW_MSG_MAX - 1024; f++)
		if (v->down[f] || v->story_down[f])
			len += (size_t)snprintf(m + len, VIEW_MSG_MAX - len,
						"%s%d", k++ ? "," : "", f);
	pthread_mutex_lock(&v->mu);
	{
		struct json_object *note = json_object_new_string(v->note);

		double t = view_scenario_now(v, now);

		len += (size_t)snprintf(m + len, VIEW_MSG_MAX - len,
					"],\"topology\":%lu,\"note\":%s,",
					v->topo_seq,
					note ? json_object_to_json_string(note)
					     : "\"\"");
		json_object_put(note);
		if (isfinite(t))
			len += (size_t)snprintf(m + len, VIEW_MSG_MAX - len,
						"\"scn_t\":%.6f,", t);
		/* the tasks only where all of them fit */
		if (v->tasks[0] && len + strlen(v->tasks) < VIEW_MSG_MAX - 8192)
			len += (size_t)snprintf(m + len, VIEW_MSG_MAX - len,
						"\"tasks\":%s,", v->tasks);
		len += (size_t)snprintf(m + len, VIEW_MSG_MAX - len,
					"\"log\":[");
		for (int i = 0; i < v->nlog && len < VIEW_MSG_MAX - 512; i++) {
			struct json_object *w =
				json_object_new_string(v->log[i].what);

			len += (size_t)snprintf(
				m + len, VIEW_MSG_MAX - len,
				"%s{\"t\":%.6f,\"what\":%s}", i ? "," : "",
				v->log[i].t,
				w ? json_object_to_json_string(w) : "\"\"");
			json_object_put(w);
		}
		snprintf(m + len, VIEW_MSG_MAX - len, "]}");
	}
	memcpy(v->msg, m, VIEW_MSG_MAX);
	v->seq++;
	view_unpark(v);
	pthread_mutex_unlock(&v->mu);
	free(m);
}

void view_kick(struct view *v)
{
	/* full: it is kicked already */
	if (v->wake[1] >= 0 && write(v->wake[1], "k", 1) < 0 &&
	    errno != EAGAIN)
		abort();	/* not a pipe of ours any more */
}

void view_unpark(struct view *v)
{
	for (struct stream *s = v->parked; s; s = s->next) {
		s->parked = false;
		MHD_resume_connection(s->c);
	}
	if (v->parked)
		view_kick(v);
	v->parked = NULL;
}

/*
 * The stream: each new load message as an event; ends with the view.
 * Between messages it is suspended (nothing to send: 0), until publish.
 */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	struct view *v = s->v;
	size_t n;

	(void)pos;
	if (s->off == s->len) {
		pthread_mutex_lock(&v->mu);
		if (v->stop) {
			pthread_mutex_unlock(&v->mu);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (v->seq == s->seq) {
			s->parked = true;
			s->next = v->parked;
			v->parked = s;
			MHD_suspend_connection(s->c);
			pthread_mutex_unlock(&v->mu);
			return 0;
		}
		s->seq = v->seq;
		s->len = (size_t)snprintf(s->buf, sizeof(s->buf),
					  "event: load\ndata: %s\n\n", v->msg);
		s->off = 0;
		pthread_mutex_unlock(&v->mu);
	}
	n = s->len - s->off < max ? s->len - s->off : max;
	memcpy(buf, s->buf + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

/* A stream closed: one watcher fewer. */
static void stream_free(void *cls)
{
	struct stream *s = cls;

	pthread_mutex_lock(&s->v->mu);
	s->v->streams--;
	for (struct stream **p = &s->v->parked; s->parked && *p;
	     p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	pthread_mutex_unlock(&s->v->mu);
	free(s);
}

enum MHD_Result view_answer(struct MHD_Connection *c, int status,
			    const char *type, const void *body, size_t len,
			    enum MHD_ResponseMemoryMode mode, const char *cookie)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, (void *)body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (cookie)
		MHD_add_response_header(r, "Set-Cookie", cookie);
	ret = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	static int first;
	struct view *v = cls;
	struct view_route r;
	struct MHD_Response *resp;
	struct stream *s;
	enum MHD_Result ret;
	const char *given;
	char why[64];

	(void)version;
	(void)upload;
	if (!*state) { /* headers only, so far: wait for the rest */
		*state = &first;
		return MHD_YES;
	}
	if (*upload_len) { /* a body: nothing here takes one */
		*upload_len = 0;
		return MHD_YES;
	}
	/*
	 * A change takes the token from its header only: a page of another
	 * site can make the browser send the cookie, never the header. The
	 * rest as the page's address gives it, or in the cookie the page got
	 * with it (its files and the stream ask without the query).
	 */
	if (!strcmp(method, "POST"))
		given = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    "X-Twinlab-Token");
	else
		given = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						    "token");
	if (!given && strcmp(method, "POST"))
		given = MHD_lookup_connection_value(c, MHD_COOKIE_KIND,
						    VIEW_COOKIE);
	r = view_route(method, url, given, v->token);
	switch (r.what) {
	case VIEW_ASSET: {
		int i = (int)(r.asset - view_assets);

		if (!v->asset[i])
			break;
		return view_answer(c, 200, r.asset->type, v->asset[i],
			      v->asset_len[i], MHD_RESPMEM_PERSISTENT,
			      i == 0 ? v->cookie : NULL);
	}
	case VIEW_TOPOLOGY:
		/* a copy: the next point of a sweep swaps it meanwhile */
		pthread_mutex_lock(&v->mu);
		ret = view_answer(c, 200, "application/json", v->topology,
			     strlen(v->topology), MHD_RESPMEM_MUST_COPY, NULL);
		pthread_mutex_unlock(&v->mu);
		return ret;
	case VIEW_STREAM:
		s = calloc(1, sizeof(*s));
		if (!s)
			return MHD_NO;
		s->v = v;
		s->c = c;
		resp = MHD_create_response_from_callback(
			MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
		if (!resp) {
			free(s);
			return MHD_NO;
		}
		pthread_mutex_lock(&v->mu);
		v->streams++;
		pthread_mutex_unlock(&v->mu);
		MHD_add_response_header(resp, "Content-Type",
					"text/event-stream");
		MHD_add_response_header(resp, "Cache-Control", "no-store");
		ret = MHD_queue_response(c, 200, resp);
		MHD_destroy_response(resp);
		return ret;
	case VIEW_CUT:
	case VIEW_REPAIR:
	case VIEW_TRAFFIC:
		return view_change(v, c, r.what);
	case VIEW_REFUSED:
		break;
	}
	if (r.status == 200)
		r.status = 404;
	snprintf(why, sizeof(why), "%d\n", r.status);
	return view_answer(c, r.status, "text/plain", why, strlen(why),
		      MHD_RESPMEM_MUST_COPY, NULL);
}


/* Where the view is: on o->out, as text or JSON. */
static int say_where(const struct view_srv_opts *o, const char *token,
		     unsigned port)
{
	char host[INET_ADDRSTRLEN], url[128];
	struct json_object *j;
	int err = -ENOMEM;

	inet_ntop(AF_INET, &o->sa.sin_addr, host, sizeof(host));
	snprintf(url, sizeof(url), "http://%s:%u/?token=%s", host, port, token);
	if (!o->json) {
		fprintf(o->out,
			"view: %s\n(the token is the access: share "
			"it only with who may watch)\n",
			url);
		return fflush(o->out) ? -EIO : 0;
	}
	j = json_object_new_object();
	if (!j)
		return -ENOMEM;
	J(!json_add_str(j, "url", url));
	J(!json_add_str(j, "address", host));
	J(!json_add(j, "port", json_object_new_int((int)port)));
	J(!json_add_str(j, "token", token));
	err = fprintf(o->out, "%s\n",
		      json_object_to_json_string_ext(
			      j, JSON_C_TO_STRING_PRETTY |
					 JSON_C_TO_STRING_NOSLASHESCAPE)) < 0 ||
			      fflush(o->out)
		      ? -EIO
		      : 0;
fail:
	json_object_put(j);
	return err;
}

/* Every interval, what is shown sampled and published; until stop. */
static void *sample(void *arg)
{
	struct view *v = arg;

	for (;;) {
		struct timespec ts = {
			.tv_sec = (time_t)v->interval,
			.tv_nsec = (long)((v->interval - floor(v->interval)) *
					  1e9),
		};
		bool stop, watched, asked;

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		pthread_mutex_lock(&v->mu);
		stop = v->stop;
		watched = v->streams > 0;
		pthread_mutex_unlock(&v->mu);
		if (stop)
			return NULL;
		/*
		 * Traffic the page asked for: its generator is forked here,
		 * with what is shown held, so the gate is shut first, then
		 * shown taken (emu/forkgate.h: the gate is the outer lock).
		 */
		pthread_mutex_lock(&v->mu);
		asked = v->treq.pending && !v->treq.done;
		pthread_mutex_unlock(&v->mu);
		if (asked) {
			forkgate_shut();
			pthread_mutex_lock(&v->shown);
			view_traffic_asked(v);
			pthread_mutex_unlock(&v->shown);
			forkgate_open();
		}
		/* the rest beside a run's forks */
		forkgate_enter();
		/*
		 * Nobody watching, nothing read: a run shown costs its host
		 * nothing until a page opens (the first load after that is
		 * averaged over the time nobody watched)
		 */
		if (watched) {
			pthread_mutex_lock(&v->shown);
			publish(v, mono_s());
			pthread_mutex_unlock(&v->shown);
		}
		forkgate_leave();
	}
}

/* libmicrohttpd's notice that a request is over, whatever its end. */
static void on_completed(void *cls, struct MHD_Connection *c, void **state,
			 enum MHD_RequestTerminationCode toe)
{
	(void)state;
	(void)toe;
	view_request_over(cls, c);
}

/*
 * The server's thread: wait for the daemon's sockets (its epoll set), its
 * time-outs or a kick (a request resumed: view_kick), then a turn of it
 * inside the fork gate; once told to end (ending), the turns that let
 * the resumed requests end, then out.
 */
static void *serve(void *arg)
{
	struct view *v = arg;
	const union MHD_DaemonInfo *ep =
		MHD_get_daemon_info(v->d, MHD_DAEMON_INFO_EPOLL_FD);
	struct pollfd p[2] = {
		{ .fd = ep ? ep->epoll_fd : -1, .events = POLLIN },
		{ .fd = v->wake[0], .events = POLLIN },
	};
	int last = -1;

	while (last < VIEW_LAST_TURNS) {
		MHD_UNSIGNED_LONG_LONG to = 0;
		int ms = last >= 0 ? 0 :
			 MHD_get_timeout(v->d, &to) != MHD_YES ? -1 :
			 to > 1000 ? 1000 : (int)to;
		char k[64];

		if (poll(p, 2, ms) < 0 && errno != EINTR)
			break;
		while (p[1].revents && read(v->wake[0], k, sizeof(k)) > 0)
			;
		forkgate_enter();
		MHD_run(v->d);
		forkgate_leave();
		pthread_mutex_lock(&v->mu);
		if (v->ending)
			last++;
		pthread_mutex_unlock(&v->mu);
	}
	return NULL;
}

int view_srv_start(const struct view_srv_opts *o, struct view **out)
{
	struct view *v = calloc(1, sizeof(*v));
	const union MHD_DaemonInfo *info;
	struct sockaddr_in sa = o->sa;
	char dir[PATH_MAX];
	int e;

	*out = NULL;
	if (!v) {
		p_err("out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&v->mu, NULL);
	pthread_mutex_init(&v->shown, NULL);
	v->wake[0] = v->wake[1] = -1;
	v->interval = o->interval;
	v->owner = o->owner;
	v->topology = strdup("{\"waiting\":true}");
	if (!v->topology || view_token(v->token)) {
		p_err("cannot draw a random token");
		view_srv_stop(v);
		return -EIO;
	}
	snprintf(v->cookie, sizeof(v->cookie),
		 VIEW_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict",
		 v->token);
	if (view_dir(dir, sizeof(dir))) {
		p_err("cannot find the page's files (page/index.html beside "
		      "the binary's share/twinlab/view or the source tree's "
		      "tools/view)");
		view_srv_stop(v);
		return -ENOENT;
	}
	e = load_assets(v, dir);
	if (e) {
		view_srv_stop(v);
		return e;
	}
	for (int tries = 0; !v->d && tries < 2; tries++) {
		v->d = MHD_start_daemon(
			MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME,
			0, NULL, NULL, on_request, v,
			MHD_OPTION_NOTIFY_COMPLETED, on_completed, v,
			MHD_OPTION_SOCK_ADDR,
			(struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT,
			(unsigned)VIEW_CONNECTIONS,
			MHD_OPTION_PER_IP_CONNECTION_LIMIT,
			(unsigned)VIEW_CONNECTIONS / 2,
			MHD_OPTION_CONNECTION_TIMEOUT, 30u,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
			MHD_OPTION_END);
		e = errno;
		/* a port in use: any free one, where the caller allows */
		if (!v->d && o->any_port && sa.sin_port)
			sa.sin_port = 0;
		else
			break;
	}
	if (!v->d) {
		char host[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &o->sa.sin_addr, host, sizeof(host));
		p_err("cannot listen on %s port %u: %s", host,
		      ntohs(o->sa.sin_port),
		      e ? strerror(e)
			: "the address or port is in use or not this "
			  "machine's");
		view_srv_stop(v);
		return -EADDRINUSE;
	}
	if (pipe2(v->wake, O_CLOEXEC | O_NONBLOCK)) {
		e = -errno;
		p_err("cannot make the view's server: %s", strerror(-e));
		view_srv_stop(v);
		return e;
	}
	e = -forkgate_thread(&v->server, serve, v);
	v->serving = !e;
	/* sampling before anyone is told where: a request with the token
	 * (traffic, which the sampler starts) can come only after */
	if (!e)
		e = -forkgate_thread(&v->sampler, sample, v);
	pthread_mutex_lock(&v->mu);
	v->sampling = !e;
	pthread_mutex_unlock(&v->mu);
	info = MHD_get_daemon_info(v->d, MHD_DAEMON_INFO_BIND_PORT);
	if (!e)
		e = say_where(o, v->token,
			      info ? info->port : ntohs(sa.sin_port));
	if (e) {
		view_srv_stop(v);
		return e;
	}
	*out = v;
	return 0;
}

/* What is shown, let go (shown held). */
static void unshow(struct view *v)
{
	tg_stop(v->tg);
	v->tg = NULL;
	v->a = NULL;
	counters_close(v->ctr, v->nsc, v->nnsc);
	free(v->prev);
	free(v->down);
	free(v->page_cut);
	free(v->story_down);
	v->page_cut = NULL;
	v->story_down = NULL;
	v->ctr = NULL;
	v->nsc = NULL;
	v->prev = NULL;
	v->down = NULL;
	v->nctr = v->nnsc = 0;
	v->p = NULL;
	v->sc = NULL;
	v->prefix[0] = '\0';
	v->replan = NULL;
	v->replan_ctx = NULL;
}

int view_srv_show(struct view *v, const char *prefix, const struct plan *p,
		  const struct addressing *a, double dilation)
{
	char *topo = NULL;
	int e = 0;

	if (!v)
		return 0;
	pthread_mutex_lock(&v->shown);
	unshow(v);
	if (prefix) {
		const struct scenario *sc = p->sc;

		snprintf(v->prefix, sizeof(v->prefix), "%s", prefix);
		v->down = calloc((size_t)sc->nfibres + 1, sizeof(*v->down));
		v->page_cut = calloc((size_t)sc->nfibres + 1,
				     sizeof(*v->page_cut));
		v->story_down = calloc((size_t)sc->nfibres + 1,
				       sizeof(*v->story_down));
		for (int f = 0; v->down && f < sc->nfibres; f++) {
			int nup = 0, ndown = 0;
			char why[256];

			if (!lab_fibre_state(prefix, sc, f, &nup, &ndown, why,
					     sizeof(why)))
				v->down[f] = ndown && !nup;
		}
		topo = v->down && v->page_cut && v->story_down ?
			       topology_json(p, a, prefix, dilation) : NULL;
		e = topo ? counters_open_every(p, prefix, &v->ctr, &v->nctr,
					       &v->nsc, &v->nnsc)
			 : -ENOMEM;
		v->prev = e ? NULL
			    : calloc((size_t)v->nctr + 1, sizeof(*v->prev));
		if (!e && !v->prev)
			e = -ENOMEM;
		if (e) {
			free(topo);
			topo = NULL;
			unshow(v);
		} else {
			for (int i = 0; i < v->nctr; i++)
				v->prev[i] = counters_read(&v->ctr[i]).bytes;
			v->p = p;
			v->a = a;
			v->sc = sc;
			v->dilation = dilation;
			v->t0 = v->last = mono_s();
		}
	}
	pthread_mutex_lock(&v->mu);
	v->tasks[0] = '\0';
	v->nlog = 0;
	v->clock_n = 0;
	if (topo || !prefix) {
		free(v->topology);
		v->topology = topo ? topo : strdup("{\"waiting\":true}");
		if (!v->topology)
			v->topology = strdup("{}");
		v->topo_seq++;
	}
	pthread_mutex_unlock(&v->mu);
	pthread_mutex_unlock(&v->shown);
	return e;
}

void view_srv_plan(struct view *v, const struct plan *p)
{
	char *topo;

	if (!v)
		return;
	pthread_mutex_lock(&v->shown);
	/* a set's epochs: one scenario, the same lightpaths in each */
	if (v->prefix[0] && v->p && p && v->p != p && p->sc == v->p->sc &&
	    p->net->nlp == v->p->net->nlp) {
		topo = topology_json(p, v->a, v->prefix, v->dilation);
		if (topo) {
			v->p = p;
			pthread_mutex_lock(&v->mu);
			free(v->topology);
			v->topology = topo;
			v->topo_seq++;
			pthread_mutex_unlock(&v->mu);
		}
	}
	pthread_mutex_unlock(&v->shown);
}

void view_srv_replan(struct view *v, view_replan_fn fn, void *ctx)
{
	if (!v)
		return;
	pthread_mutex_lock(&v->shown);
	v->replan = v->p ? fn : NULL;
	v->replan_ctx = v->p ? ctx : NULL;
	pthread_mutex_unlock(&v->shown);
}

unsigned view_srv_changes(struct view *v, bool *in_force)
{
	unsigned n;

	*in_force = false;
	if (!v)
		return 0;
	pthread_mutex_lock(&v->shown);
	n = v->changes;
	for (int f = 0; v->p && v->page_cut && f < v->sc->nfibres; f++)
		*in_force = *in_force || v->page_cut[f];
	*in_force = *in_force || (v->tg && !tg_wait_done(v->tg));
	pthread_mutex_unlock(&v->shown);
	return n;
}

void view_srv_note(struct view *v, const char *line)
{
	if (!v)
		return;
	pthread_mutex_lock(&v->mu);
	snprintf(v->note, sizeof(v->note), "%s", line);
	pthread_mutex_unlock(&v->mu);
}

void view_srv_stop(struct view *v)
{
	if (!v)
		return;
	pthread_mutex_lock(&v->mu);
	v->stop = true;
	view_unpark(v);
	pthread_mutex_unlock(&v->mu);
	if (v->sampling)
		pthread_join(v->sampler, NULL);
	/*
	 * The sampler is gone: a traffic request still suspended ends. The
	 * server's last turns end what was resumed, so that nothing stays
	 * suspended for the daemon's stop.
	 */
	pthread_mutex_lock(&v->mu);
	if (v->treq.asker && !v->treq.done)
		MHD_resume_connection(v->treq.asker);
	v->ending = true;
	view_kick(v);
	pthread_mutex_unlock(&v->mu);
	if (v->serving)
		pthread_join(v->server, NULL);
	if (v->d)
		MHD_stop_daemon(v->d);
	for (int i = 0; i < 2; i++)
		if (v->wake[i] >= 0)
			close(v->wake[i]);
	pthread_mutex_lock(&v->shown);
	unshow(v);
	pthread_mutex_unlock(&v->shown);
	free(v->topology);
	for (size_t i = 0; i < sizeof(v->asset) / sizeof(v->asset[0]); i++)
		free(v->asset[i]);
	pthread_mutex_destroy(&v->mu);
	pthread_mutex_destroy(&v->shown);
	free(v);
}

void view_srv_clock(struct view *v, uint64_t t0_ns, double dilation)
{
	if (!v)
		return;
	pthread_mutex_lock(&v->mu);
	v->clock_t0 = t0_ns;
	v->clock_n = dilation;
	pthread_mutex_unlock(&v->mu);
}

void view_srv_tasks(struct view *v, const struct plan *p, unsigned round,
		    const struct fleet_task_round *rr, const bool *ran)
{
	struct json_object *arr;
	const char *s;

	if (!v)
		return;
	arr = json_object_new_array();
	for (int t = 0; arr && t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];
		const struct fleet_task_round *x = &rr[t];
		struct json_object *o;

		if (!ran[t] || tp->blocked)
			continue;
		o = json_object_new_object();
		if (json_push(arr, o) ||
		    json_add_str(o, "name", tp->task->name) ||
		    json_add(o, "round", json_object_new_int((int)round)) ||
		    json_add(o, "done", json_object_new_boolean(x->done)) ||
		    json_add(o, "failed", json_object_new_boolean(x->failed)) ||
		    json_add_num(o, "pred_ms", tp->round_s * 1e3) ||
		    (x->done &&
		     (json_add_num(o, "ms", x->round_s * 1e3) ||
		      json_add_num(o, "bcast_ms", x->bcast_s * 1e3) ||
		      json_add_num(o, "compute_ms", x->compute_s * 1e3) ||
		      json_add_num(o, "upload_ms", x->upload_s * 1e3)))) {
			json_object_put(arr);
			arr = NULL;
		}
	}
	s = arr ? json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN)
		: "";
	pthread_mutex_lock(&v->mu);
	if (strlen(s) < sizeof(v->tasks))
		snprintf(v->tasks, sizeof(v->tasks), "%s", s);
	else
		v->tasks[0] = '\0';
	pthread_mutex_unlock(&v->mu);
	json_object_put(arr);
}

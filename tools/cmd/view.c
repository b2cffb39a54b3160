// SPDX-License-Identifier: MIT
/*
 * twinlab view: the emulation that is up, live in a browser. A page on
 * loopback (libmicrohttpd, a thread per connection, every request bounded
 * in count, size and time) shows the network where the scenario places
 * its ROADMs, the lightpaths and each task's trees (the plan, proven the
 * one built by up_plan), and each link's load from its shaper's counters
 * several times a second, streamed as server-sent events; a click on a
 * fibre cuts or repairs it as 'twinlab cut' does (fibre_apply). Every
 * request carries the random token printed at the start; the page's
 * files are read once, at the start, from a fixed list
 * (tools/view/route.c).
 */
#include "tools/twinlab.h"
#include "tools/json.h"
#include "tools/planout.h"
#include "tools/session/counters.h"
#include "tools/uplan.h"
#include "tools/view/route.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "emu/lab.h"
#include "twin/addr.h"
#include "twin/net.h"
#include "twin/plan.h"

#define VIEW_PORT 7880
#define VIEW_ASSET_MAX (4 << 20) /* bytes of one page file */
#define VIEW_CONNECTIONS 16
#define VIEW_MSG_MAX 65536 /* one event's JSON */

#define VIEW_COOKIE "twinlab_view"

struct view {
	const char *token;
	char cookie[128]; /* Set-Cookie with the token */
	char *topology;	  /* JSON, made once */
	char *asset[8];	  /* view_assets' contents, or NULL */
	size_t asset_len[8];
	/* the latest load message, its number; stop ends every stream */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char msg[VIEW_MSG_MAX];
	unsigned long seq;
	bool stop;
	/* a cut or repair asked from the page, one at a time (chg); the
	 * fibres down, under mu, said in every load message */
	pthread_mutex_t chg;
	const char *prefix;
	const struct scenario *sc;
	bool *down;
};

/* One stream's place: the message it sends, how far it got. */
struct stream {
	struct view *v;
	unsigned long seq;
	char buf[VIEW_MSG_MAX + 32];
	size_t off, len;
};

static void view_usage(FILE *f)
{
	fprintf(f,
		"usage: %s view [--prefix P] [--listen ADDR] [--port N] "
		"[--interval S] [--json]\n\n"
		"Serves a live view of the emulation that is up under the "
		"prefix: its ROADMs,\nfibres (lit wavelengths of all), "
		"lightpaths and each task's trees, and each\nlink's load "
		"from its shaper, updated every S seconds (default 0.2). "
		"A click on a\nfibre cuts it, on a cut one repairs it (as "
		"'twinlab cut' and 'repair'). Prints\nthe address with its "
		"access token; every request needs the token. Until\n"
		"stopped (Ctrl-C). Needs root.\n\n"
		"  --prefix P    the emulation's prefix (default 'tl')\n"
		"  --listen ADDR the IPv4 address to listen on (default "
		"127.0.0.1: this machine\n                only)\n"
		"  --port N      the port (default %d; 0: any free one)\n"
		"  --interval S  seconds between load updates (0.05 to 10)\n"
		"  --json        the address, port and token as one JSON "
		"object\n",
		prog, VIEW_PORT);
}

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
	/* every directed link by the index the load events give */
	J(!json_add(g, "links", arr = json_object_new_array()));
	for (int l = 0; l < plan_nlinks(p); l++) {
		struct json_object *x;
		char name[96];

		/* access links are indexed by node: only servers have one */
		if (l < 2 * sc->nnodes && sc->nodes[l / 2].kind != NODE_SERVER)
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

/* The load since the last sample, as one event's JSON, published. */
static void publish(struct view *v, const struct plan *p,
		    const struct counter *c, int n, uint64_t *prev, double dt,
		    double dilation, double t)
{
	char *m = malloc(VIEW_MSG_MAX);
	size_t len = 0;

	if (!m)
		return;
	len += (size_t)snprintf(m, VIEW_MSG_MAX, "{\"t\":%.3f,\"links\":[", t);
	for (int i = 0; i < n && len < VIEW_MSG_MAX / 2; i++) {
		uint64_t now = counters_read(&c[i]).bytes;
		double gbps = dt > 0 ? (double)(now - prev[i]) * 8 / dt *
					       p->sc->scale * dilation / 1e9
				     : 0;
		double cap = plan_link_gbps(p, c[i].link);

		prev[i] = now;
		len += (size_t)snprintf(m + len, VIEW_MSG_MAX - len,
					"%s{\"i\":%d,\"gbps\":%.6g,\"u\":%.4f}",
					i ? "," : "", c[i].link, gbps,
					cap > 0 ? fmin(gbps / cap, 9.9999) : 0);
	}
	len += (size_t)snprintf(m + len, VIEW_MSG_MAX - len, "],\"down\":[");
	pthread_mutex_lock(&v->mu);
	for (int f = 0, k = 0; f < p->sc->nfibres && len < VIEW_MSG_MAX - 16;
	     f++)
		if (v->down[f])
			len += (size_t)snprintf(m + len, VIEW_MSG_MAX - len,
						"%s%d", k++ ? "," : "", f);
	snprintf(m + len, VIEW_MSG_MAX - len, "]}");
	memcpy(v->msg, m, VIEW_MSG_MAX);
	v->seq++;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
	free(m);
}

/* The stream: each new load message as an event; ends with the view. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	struct view *v = s->v;
	size_t n;

	(void)pos;
	if (s->off == s->len) {
		pthread_mutex_lock(&v->mu);
		while (!v->stop && v->seq == s->seq)
			pthread_cond_wait(&v->cv, &v->mu);
		if (v->stop) {
			pthread_mutex_unlock(&v->mu);
			return MHD_CONTENT_READER_END_OF_STREAM;
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

static enum MHD_Result answer(struct MHD_Connection *c, int status,
			      const char *type, const void *body, size_t len,
			      enum MHD_ResponseMemoryMode mode,
			      const char *cookie)
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

static enum MHD_Result change(struct view *v, struct MHD_Connection *c,
			      bool up);

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
		return answer(c, 200, r.asset->type, v->asset[i],
			      v->asset_len[i], MHD_RESPMEM_PERSISTENT,
			      i == 0 ? v->cookie : NULL);
	}
	case VIEW_TOPOLOGY:
		return answer(c, 200, "application/json", v->topology,
			      strlen(v->topology), MHD_RESPMEM_PERSISTENT,
			      NULL);
	case VIEW_STREAM:
		s = calloc(1, sizeof(*s));
		if (!s)
			return MHD_NO;
		s->v = v;
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096,
							 stream_read, s, free);
		if (!resp) {
			free(s);
			return MHD_NO;
		}
		MHD_add_response_header(resp, "Content-Type",
					"text/event-stream");
		MHD_add_response_header(resp, "Cache-Control", "no-store");
		ret = MHD_queue_response(c, 200, resp);
		MHD_destroy_response(resp);
		return ret;
	case VIEW_CUT:
	case VIEW_REPAIR:
		return change(v, c, r.what == VIEW_REPAIR);
	case VIEW_REFUSED:
		break;
	}
	if (r.status == 200)
		r.status = 404;
	snprintf(why, sizeof(why), "%d\n", r.status);
	return answer(c, r.status, "text/plain", why, strlen(why),
		      MHD_RESPMEM_MUST_COPY, NULL);
}

/* POST /cut or /repair?a=A&b=B: as 'twinlab cut A B' would, said as JSON. */
static enum MHD_Result change(struct view *v, struct MHD_Connection *c, bool up)
{
	const char *a =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "a");
	const char *b =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "b");
	struct json_object *o = json_object_new_object();
	struct fibre_done d;
	char msg[1024];
	enum MHD_Result ret;
	const char *s;
	int rc, status;

	if (!o)
		return MHD_NO;
	if (!a || !b) {
		rc = EXIT_USAGE;
		snprintf(msg, sizeof(msg), "name the fibre's ROADMs: ?a=A&b=B");
	} else {
		pthread_mutex_lock(&v->chg);
		rc = fibre_apply(v->prefix, a, b, up, "twinlab view", &d, msg,
				 sizeof(msg));
		if (!rc) {
			int f = scenario_fibre(v->sc, scenario_find(v->sc, d.a),
					       scenario_find(v->sc, d.b));

			pthread_mutex_lock(&v->mu);
			if (f >= 0)
				v->down[f] = !up;
			pthread_mutex_unlock(&v->mu);
		}
		pthread_mutex_unlock(&v->chg);
	}
	status = !rc ? 200 : rc == EXIT_USAGE ? 400 : 409;
	if (json_add(o, "ok", json_object_new_boolean(!rc)) ||
	    json_add_str(o, "message", msg)) {
		json_object_put(o);
		return MHD_NO;
	}
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	ret = answer(c, status, "application/json", s, strlen(s),
		     MHD_RESPMEM_MUST_COPY, NULL);
	json_object_put(o);
	return ret;
}

/* The options; 0 to go on, else the exit status. */
struct view_opts {
	const char *prefix;
	struct sockaddr_in sa;
	double interval;
	bool json;
};

static int view_args(int argc, char **argv, struct view_opts *o)
{
	static const struct option opts[] = {
		{ "prefix", required_argument, NULL, 'p' },
		{ "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'P' },
		{ "interval", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	long port = VIEW_PORT;
	int c;

	o->sa.sin_family = AF_INET;
	o->sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	while ((c = getopt_long(argc, argv, "p:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->prefix = optarg;
			break;
		case 'l':
			if (inet_pton(AF_INET, optarg, &o->sa.sin_addr) != 1) {
				p_err("--listen takes an IPv4 address, got "
				      "'%s'",
				      optarg);
				return EXIT_USAGE;
			}
			break;
		case 'P':
			errno = 0;
			port = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || port < 0 ||
			    port > 65535) {
				p_err("--port takes 0 to 65535, got '%s'",
				      optarg);
				return EXIT_USAGE;
			}
			break;
		case 'i':
			errno = 0;
			o->interval = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(o->interval >= 0.05 && o->interval <= 10)) {
				p_err("--interval takes 0.05 to 10 seconds, "
				      "got '%s'",
				      optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			view_usage(stdout);
			return EXIT_SUCCESS;
		default:
			view_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		view_usage(stderr);
		return EXIT_USAGE;
	}
	o->sa.sin_port = htons((uint16_t)port);
	return prefix_arg(o->prefix) ? -1 : EXIT_USAGE;
}

/* Where the view is: on stdout, as text or JSON. */
static int say_where(const struct view_opts *o, const char *token,
		     unsigned port)
{
	char host[INET_ADDRSTRLEN], url[128];
	struct json_object *j;
	int err = -ENOMEM;

	inet_ntop(AF_INET, &o->sa.sin_addr, host, sizeof(host));
	snprintf(url, sizeof(url), "http://%s:%u/?token=%s", host, port, token);
	if (!o->json) {
		printf("view of prefix '%s': %s\n(the token is the access: "
		       "share it only with who may watch; Ctrl-C stops)\n",
		       o->prefix, url);
		return fflush(stdout) ? -EIO : 0;
	}
	j = json_object_new_object();
	if (!j)
		return -ENOMEM;
	J(!json_add_str(j, "prefix", o->prefix));
	J(!json_add_str(j, "url", url));
	J(!json_add_str(j, "address", host));
	J(!json_add(j, "port", json_object_new_int((int)port)));
	J(!json_add_str(j, "token", token));
	err = json_print(j);
	if (!err && fflush(stdout))
		err = -EIO;
fail:
	json_object_put(j);
	return err;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Serve the view of o->prefix until a signal; 0 or 1 (said). */
static int serve(const struct view_opts *o_)
{
	const struct view_opts o = *o_;
	struct view v = {.mu = PTHREAD_MUTEX_INITIALIZER,
			 .cv = PTHREAD_COND_INITIALIZER,
			 .chg = PTHREAD_MUTEX_INITIALIZER};
	struct scenario *sc = NULL;
	struct plan *p = NULL;
	struct addressing *a = NULL;
	struct counter *ctr = NULL;
	struct nscache *nsc = NULL;
	struct MHD_Daemon *d = NULL;
	const union MHD_DaemonInfo *info;
	uint64_t *prev = NULL;
	int rc = 1, nctr = 0, nnsc = 0, e;
	double dilation = 1, t0, last, checked;
	char token[VIEW_TOKEN_LEN + 1], dir[PATH_MAX];
	sigset_t sigs;

	if (view_token(token)) {
		p_err("cannot draw a random token");
		return 1;
	}
	v.token = token;
	snprintf(v.cookie, sizeof(v.cookie),
		 VIEW_COOKIE "=%s; Path=/; "
			     "HttpOnly; SameSite=Strict",
		 token);
	e = view_dir(dir, sizeof(dir));
	if (e) {
		p_err("cannot find the page's files (page/index.html beside "
		      "the binary's share/twinlab/view or the source tree's "
		      "tools/view)");
		return 1;
	}
	if (load_assets(&v, dir))
		goto out;
	if (up_plan(o.prefix, &sc, &p, &a, &dilation))
		goto out;
	v.prefix = o.prefix;
	v.sc = sc;
	v.down = calloc((size_t)sc->nfibres + 1, sizeof(*v.down));
	for (int f = 0; v.down && f < sc->nfibres; f++) {
		int nup = 0, ndown = 0;
		char why[256];

		if (!lab_fibre_state(o.prefix, sc, f, &nup, &ndown, why,
				     sizeof(why)))
			v.down[f] = ndown && !nup;
	}
	v.topology = v.down ? topology_json(p, a, o.prefix, dilation) : NULL;
	if (!v.topology) {
		p_err("out of memory");
		goto out;
	}
	e = counters_open_every(p, o.prefix, &ctr, &nctr, &nsc, &nnsc);
	prev = calloc((size_t)nctr + 1, sizeof(*prev));
	if (e || !prev) {
		p_err("cannot open the link counters of prefix '%s': %s",
		      o.prefix, strerror(e ? -e : ENOMEM));
		goto out;
	}
	/* signals wait for the loop below, in no server thread */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
		0, NULL, NULL, on_request, &v, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&o.sa, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)VIEW_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned)VIEW_CONNECTIONS / 2, MHD_OPTION_CONNECTION_TIMEOUT,
		30u, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
		MHD_OPTION_END);
	if (!d) {
		char host[INET_ADDRSTRLEN];

		e = errno;
		inet_ntop(AF_INET, &o.sa.sin_addr, host, sizeof(host));
		p_err("cannot listen on %s port %u: %s", host,
		      ntohs(o.sa.sin_port),
		      e ? strerror(e)
			: "the address or port is in use or not this "
			  "machine's");
		goto out;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (say_where(&o, token, info ? info->port : ntohs(o.sa.sin_port)))
		goto out;
	for (int i = 0; i < nctr; i++)
		prev[i] = counters_read(&ctr[i]).bytes;
	t0 = last = checked = mono();
	for (;;) {
		struct timespec ts = {
			.tv_sec = (time_t)o.interval,
			.tv_nsec =
				(long)((o.interval - floor(o.interval)) * 1e9),
		};
		double now;

		if (sigtimedwait(&sigs, NULL, &ts) >= 0)
			break; /* stopped by a signal */
		if (errno != EAGAIN && errno != EINTR)
			break;
		now = mono();
		/* what it shows was taken down: nothing more to show */
		if (now - checked >= 1) {
			checked = now;
			if (!lab_exists(o.prefix)) {
				fprintf(stderr,
					"%s: view: prefix '%s' is no "
					"longer up; the view ends\n",
					prog, o.prefix);
				break;
			}
		}
		publish(&v, p, ctr, nctr, prev, now - last, dilation, now - t0);
		last = now;
	}
	rc = 0;
out:
	if (d) {
		pthread_mutex_lock(&v.mu);
		v.stop = true;
		pthread_cond_broadcast(&v.cv);
		pthread_mutex_unlock(&v.mu);
		MHD_stop_daemon(d);
	}
	counters_close(ctr, nsc, nnsc);
	free(prev);
	free(v.topology);
	free(v.down);
	for (size_t i = 0; i < sizeof(v.asset) / sizeof(v.asset[0]); i++)
		free(v.asset[i]);
	plan_free(p);
	addressing_free(a);
	scenario_free(sc);
	return rc;
}

int cmd_view(int argc, char **argv)
{
	struct view_opts o = {.prefix = "tl", .interval = 0.2};
	int e = view_args(argc, argv, &o);

	return e >= 0 ? e : serve(&o);
}

int view_after_up(const char *prefix, bool json)
{
	struct view_opts o = {.prefix = prefix, .interval = 0.2, .json = json};

	o.sa.sin_family = AF_INET;
	o.sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	o.sa.sin_port = htons(VIEW_PORT);
	return serve(&o);
}

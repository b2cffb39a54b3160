// SPDX-License-Identifier: MIT
/*
 * twinlab view on an emulation that is up (root): the address and token
 * it prints, the network it serves (every node and fibre of the
 * scenario), its refusals (no token, a wrong one, a name not on its
 * list, a method it does not take), a stream of load events that sees a
 * ping cross a server's access link, and a clean end on SIGTERM. Every
 * step waits for what the view says, never for time.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/lab.h"
#include "tests/lib/nettest.h"
#include "tests/lib/tlrun.h"
#include "twin/addr.h"
#include "twin/sched.h"

extern char **environ;

static char prefix[LAB_PREFIX_MAX + 1];
static pid_t view = -1;

/* "tq<pid>": the lab suite's sweep removes one a killed run left */
static void setup(void)
{
	if (!nt_root_prefix(prefix, sizeof(prefix), "tq"))
		cr_skip_test("needs root");
	lab_down(prefix, NULL, NULL);
}

static void teardown(void)
{
	if (view > 0) {
		kill(view, SIGKILL);
		waitpid(view, NULL, 0);
	}
	if (prefix[0])
		lab_down(prefix, NULL, NULL);
}

TestSuite(view, .init = setup, .fini = teardown, .timeout = 120);

/* argv started as `view` (killed by teardown), its stdout's read end. */
static int spawn_out(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	int fds[2];

	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	cr_assert_eq(posix_spawn(&view, argv[0], &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	return fds[0];
}

/* A request on a new connection; the whole answer in buf, its status. */
static int http(int port, const char *req, char *buf, size_t len)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = -1;
	size_t got = 0;
	ssize_t n;

	cr_assert_geq(fd, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "%s",
		     strerror(errno));
	cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
	sscanf(buf, "HTTP/1.%*d %d", &status);
	return status;
}

static int get(int port, const char *path, char *buf, size_t len)
{
	char req[512];

	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: x\r\n"
		 "Connection: close\r\n\r\n",
		 path);
	return http(port, req, buf, len);
}

/* The link index of the directed link named `name` in the topology. */
static int link_index(struct json_object *topo, const char *name)
{
	struct json_object *g, *links;

	cr_assert(json_object_object_get_ex(topo, "graph", &g));
	cr_assert(json_object_object_get_ex(g, "links", &links));
	for (size_t i = 0; i < json_object_array_length(links); i++) {
		struct json_object *l = json_object_array_get_idx(links, i);
		struct json_object *n, *x;

		json_object_object_get_ex(l, "name", &n);
		json_object_object_get_ex(l, "i", &x);
		if (!strcmp(json_object_get_string(n), name))
			return json_object_get_int(x);
	}
	cr_assert_fail("no link %s", name);
	return -1;
}

/*
 * Up the teaching ring at N = 4 and start the view on any free port;
 * its port and token, once it has said where it listens.
 */
static void view_up(int *port, char token[64])
{
	char *bin = getenv("TWINLAB"), out[8192];
	char *up[] = {bin,	  "up",	  "scenarios/teaching-ring.yaml",
		      "--prefix", prefix, "--dilation",
		      "4",	  NULL};
	char *argv[] = {bin, "view",	   "--prefix", prefix,	 "--port",
			"0", "--interval", "0.05",     "--json", NULL};
	struct json_object *where, *o;
	size_t got = 0;
	int fds[2];

	cr_assert_not_null(bin, "TWINLAB not set");
	cr_assert_eq(run_argv_output(up, out, sizeof(out)), 0, "%s", out);
	fds[0] = spawn_out(argv);
	/* what it prints once it listens: the JSON, whole at its end */
	for (ssize_t n;
	     got < sizeof(out) - 1 &&
	     (n = read(fds[0], out + got, sizeof(out) - 1 - got)) > 0;) {
		got += (size_t)n;
		out[got] = '\0';
		if (strstr(out, "\n}"))
			break;
	}
	close(fds[0]);
	where = json_tokener_parse(out);
	cr_assert_not_null(where, "not JSON: %s", out);
	cr_assert(json_object_object_get_ex(where, "port", &o));
	*port = json_object_get_int(o);
	cr_assert(json_object_object_get_ex(where, "token", &o));
	snprintf(token, 64, "%s", json_object_get_string(o));
	cr_assert_eq(strlen(token), 32, "%s", token);
	cr_assert(json_object_object_get_ex(where, "url", &o));
	cr_expect(!strncmp(json_object_get_string(o), "http://127.0.0.1:", 17),
		  "loopback by default: %s", json_object_get_string(o));
	json_object_put(where);
	/* it says where before it shows the emulation: wait for that */
	{
		char path[128];
		int tries = 0;

		snprintf(path, sizeof(path), "/topology?token=%s", token);
		do
			cr_assert_eq(get(*port, path, out, sizeof(out)), 200);
		while (strstr(out, "\"waiting\":true") && ++tries < 10000);
		cr_assert_lt(tries, 10000, "the view never showed %s", prefix);
	}
}

static void first_event(int port, const char *token, char *buf, size_t len);

/* SIGTERM: the view exits 0. */
static void view_stop(void)
{
	int status;

	cr_assert_eq(kill(view, SIGTERM), 0);
	cr_assert_eq(waitpid(view, &status, 0), view);
	view = -1;
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d",
		  status);
}

/* tmpl with each "%s" the token (not a format: nothing else is read). */
static void with_token(char *dst, size_t len, const char *tmpl,
		       const char *token)
{
	size_t n = 0;

	for (const char *c = tmpl; *c && n + 1 < len; c++) {
		if (c[0] == '%' && c[1] == 's') {
			n += (size_t)snprintf(dst + n, len - n, "%s", token);
			c++;
		} else {
			dst[n++] = *c;
		}
		n = n < len ? n : len - 1;
	}
	dst[n] = '\0';
}

#define REQ(line, headers) line " HTTP/1.1\r\nHost: x\r\n" headers \
	"Connection: close\r\n\r\n"

static const struct {
	const char *req;
	int status;
	const char *says;
} refused[] = {
	{ REQ("GET /topology", ""), 403, NULL },
	{ REQ("GET /topology?token=0123456789abcdef0123456789abcdef", ""),
	  403, NULL },
	{ REQ("GET /../../etc/passwd?token=%s", ""), 404, NULL },
	{ REQ("POST /?token=%s", "Content-Length: 0\r\n"), 405, NULL },
	{ REQ("POST /cut?a=A&b=B&token=%s", "Cookie: twinlab_view=%s\r\n"),
	  403, NULL },
	{ REQ("GET /cut?a=A&b=B&token=%s", ""), 405, NULL },
	{ REQ("POST /cut?a=A&b=Z", "X-Twinlab-Token: %s\r\n"), 400,
	  "'Z' is not a ROADM of 'teaching-ring'" },
	{ REQ("POST /repair?a=A&b=B", "X-Twinlab-Token: %s\r\n"), 409,
	  "is not cut: nothing to repair" },
	{ REQ("POST /traffic?task=t9&gbps=1&for_s=1",
	      "X-Twinlab-Token: %s\r\n"), 400, "name a task and the traffic" },
	{ REQ("POST /traffic?task=t1&gbps=1&for_s=151",
	      "X-Twinlab-Token: %s\r\n"), 400, "at most 600 s of this host" },
	{ REQ("POST /traffic?task=t1&gbps=-1&for_s=1",
	      "X-Twinlab-Token: %s\r\n"), 400, NULL },
	{ REQ("POST /traffic?task=t1&gbps=1&for_s=1x",
	      "X-Twinlab-Token: %s\r\n"), 400, NULL },
};

Test(view, serves_the_network_and_streams_its_load)
{
	char out[8192], path[256], *body;
	static char big[1 << 20];
	struct json_object *topo;
	struct scn_error err;
	struct scenario *sc;
	struct plan *p;
	struct addressing *a;
	const struct endpoint *ep;
	char ns[64], src[16], dst[16], token[64], stream[1 << 16];
	int port, status, events = 0, seen = 0, link, fd;
	size_t got = 0;
	double rtt[20];

	view_up(&port, token);

	/*
	 * Refusals, each with its status and what it says. A change needs
	 * the token in its header: not the query, not the cookie a page of
	 * another site could make the browser send. (%s: the token.)
	 */
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char req[512];

		with_token(req, sizeof(req), refused[i].req, token);
		cr_expect_eq(http(port, req, out, sizeof(out)),
			     refused[i].status, "%s: %s", refused[i].req, out);
		cr_expect(!refused[i].says || strstr(out, refused[i].says),
			  "%s: %s", refused[i].req, out);
	}
	snprintf(path, sizeof(path), "/?token=%s", token);
	cr_expect_eq(get(port, path, out, sizeof(out)), 200);
	cr_expect(strstr(out, "<title>twinlab view</title>"), "%s", out);

	/* the network: every node and fibre of the scenario */
	snprintf(path, sizeof(path), "/topology?token=%s", token);
	status = get(port, path, big, sizeof(big));
	cr_assert_eq(status, 200, "%.300s", big);
	body = strstr(big, "\r\n\r\n");
	cr_assert_not_null(body);
	topo = json_tokener_parse(body + 4);
	cr_assert_not_null(topo, "%.300s", body);
	sc = scenario_load("scenarios/teaching-ring.yaml", &err);
	cr_assert_not_null(sc, "%s", err.msg);
	{
		struct json_object *g, *nodes, *fibres;

		cr_assert(json_object_object_get_ex(topo, "graph", &g));
		json_object_object_get_ex(g, "nodes", &nodes);
		json_object_object_get_ex(g, "fibres", &fibres);
		cr_expect_eq(json_object_array_length(nodes),
			     (size_t)sc->nnodes);
		cr_expect_eq(json_object_array_length(fibres),
			     (size_t)sc->nfibres);
	}
	link = link_index(topo, "s1>r1");
	json_object_put(topo);

	/* the stream: ten events, and a ping out of s1 seen on its link */
	p = sched_plan(sc, &sched_mst);
	cr_assert_not_null(p);
	a = addressing_new(p);
	cr_assert_not_null(a);
	ep = &a->ep[0][2 * 1]; /* t1's broadcast to its first local */
	cr_assert_eq(p->tasks[0].server[0], scenario_find(sc, "s1"));
	addr_str(ep->src, src);
	addr_str(ep->dst, dst);
	lab_ns_name(prefix, "s1", ns, sizeof(ns));
	{
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)port),
					 .sin_addr.s_addr =
						 htonl(INADDR_LOOPBACK)};
		char req[256];

		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)),
			     0);
		snprintf(req, sizeof(req),
			 "GET /events?token=%s HTTP/1.1\r\n"
			 "Host: x\r\n\r\n",
			 token);
		cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	}
	cr_assert_eq(nt_ping_from(ns, src, dst, 20, 10, rtt, &status), 0);
	cr_expect_gt(status, 0, "pings answered");
	got = 0;
	while (events < 10 || !seen) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		char key[32], *at;
		ssize_t n;

		cr_assert_eq(poll(&pf, 1, 10000), 1, "no event in 10 s");
		n = read(fd, stream + got, sizeof(stream) - 1 - got);
		cr_assert_gt(n, 0, "the stream ended");
		got += (size_t)n;
		stream[got] = '\0';
		/* count whole events; keep a partial one */
		while ((at = strstr(stream, "\n\n"))) {
			char *ev = strstr(stream, "event: load\ndata: ");

			if (ev && ev < at) {
				snprintf(key, sizeof(key), "{\"i\":%d,", link);
				char *l = strstr(ev, key);

				events++;
				if (l && l < at &&
				    strncmp(l + strlen(key), "\"gbps\":0,", 9))
					seen = 1;
			}
			memmove(stream, at + 2, strlen(at + 2) + 1);
			got = strlen(stream);
		}
		cr_assert_lt(events, 10000, "the ping was never seen on s1>r1");
	}
	cr_log_info("%d events, the ping seen on s1>r1", events);

	/* SIGTERM: the view exits 0 and the stream ends */
	view_stop();
	{
		ssize_t n;

		while ((n = read(fd, stream, sizeof(stream))) > 0)
			;
		cr_expect_eq(n, 0, "the stream closed");
	}
	close(fd);
	addressing_free(a);
	plan_free(p);
	scenario_free(sc);
}

/*
 * Background traffic from the page: back along t1's first transfer, it
 * is seen on the first link of its way (the receiving server's access
 * link out), one flow at a time; it ends with the view, recorded so
 * that 'down' would end it too.
 */
Test(view, traffic_from_the_page_loads_its_way)
{
	char token[64], req[512], out[1 << 16], name[96];
	struct scn_error err;
	struct scenario *sc;
	struct plan *p;
	const struct ppath *pp;
	int port, seen = 0;

	sc = scenario_load("scenarios/teaching-ring.yaml", &err);
	cr_assert_not_null(sc, "%s", err.msg);
	p = sched_plan(sc, &sched_mst);
	cr_assert_not_null(p);
	pp = &p->tasks[0].bcast.path[1];
	{
		/* the receiver's access link, the other way */
		struct hop back = pp->hops[pp->nhops - 1];

		cr_assert_eq(back.kind, HOP_ACCESS);
		back.dir = !back.dir;
		snprintf(name, sizeof(name), "{\"i\":%d,\"gbps\":",
			 plan_link(p, &back));
	}
	view_up(&port, token);
	snprintf(req, sizeof(req),
		 "POST /traffic?task=t1&gbps=5&for_s=5 HTTP/1.1\r\nHost: x\r\n"
		 "X-Twinlab-Token: %s\r\nConnection: close\r\n\r\n", token);
	cr_assert_eq(http(port, req, out, sizeof(out)), 200, "%s", out);
	cr_expect(strstr(out, "\"message\":\"traffic: "), "%s", out);
	cr_expect(strstr(out, sc->nodes[pp->to].name), "%s", out);
	cr_expect_eq(http(port, req, out, sizeof(out)), 409, "%s", out);
	cr_expect(strstr(out, "still running (one flow at a time)"), "%s",
		  out);
	/* a sample after the start: bytes on the way out, whatever the pace */
	for (int k = 0; k < 100 && !seen; k++) {
		const char *at;

		first_event(port, token, out, sizeof(out));
		at = strstr(out, name);
		cr_assert_not_null(at, "no link %s in %s", name, out);
		seen = strtod(at + strlen(name), NULL) > 0;
	}
	cr_expect(seen, "the traffic was never seen on %s's link out",
		  sc->nodes[pp->to].name);
	cr_expect(strstr(out, "from the page\"}]"), "the timeline: %s", out);
	view_stop();
	plan_free(p);
	scenario_free(sc);
}

/*
 * A real browser: Debian's chromium, headless, driven by playwright-core
 * (tests/browser/view.mjs) opens the page, waits for ten load updates,
 * and finds every node, fibre and lightpath of the plan drawn, and the
 * first task's trees marked once it is picked, a click's cut and repair
 * in the page's timeline, and traffic sent from its form; its screenshot is
 * build/test-view.png. Skipped, saying so, where chromium, node or
 * playwright-core is missing (the set-up installs them for the tests).
 */
/* The browser tests skipped, saying why, where what they need is missing. */
static void browser_or_skip(void)
{
	static const char *const need[] = {
		"/usr/bin/chromium",
		"/usr/bin/node",
		"tests/browser/node_modules/playwright-core/package.json",
	};

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (access(need[i], R_OK))
			cr_skip_test("the browser test needs %s (bash "
				     "tools/bootstrap.sh check installs it)",
				     need[i]);
}

Test(view, a_browser_draws_the_plan_and_its_load)
{
	char out[8192], token[64], url[160];
	char *argv[] = {"node", "tests/browser/view.mjs", url,
			"build/test-view.png", NULL};
	struct json_object *o, *x;
	struct scn_error err;
	struct scenario *sc;
	struct plan *p;
	int port, rc;

	browser_or_skip();
	view_up(&port, token);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/?token=%s", port,
		 token);
	rc = run_argv_output(argv, out, sizeof(out));
	o = json_tokener_parse(out);
	cr_assert_not_null(o, "not JSON (exit %d): %s", rc, out);
	cr_expect_eq(rc, 0, "%s", out);
	sc = scenario_load("scenarios/teaching-ring.yaml", &err);
	cr_assert_not_null(sc, "%s", err.msg);
	p = sched_plan(sc, &sched_mst);
	cr_assert_not_null(p);
	cr_assert(json_object_object_get_ex(o, "nodes", &x), "%s", out);
	cr_expect_eq(json_object_get_int(x), sc->nnodes, "%s", out);
	cr_assert(json_object_object_get_ex(o, "fibres", &x), "%s", out);
	cr_expect_eq(json_object_get_int(x), sc->nfibres, "%s", out);
	cr_assert(json_object_object_get_ex(o, "lightpaths", &x), "%s", out);
	cr_expect_eq(json_object_get_int(x), p->net->nlp, "%s", out);
	cr_assert(json_object_object_get_ex(o, "updates", &x), "%s", out);
	cr_expect_geq(json_object_get_int(x), 10, "%s", out);
	cr_assert(json_object_object_get_ex(o, "tree_edges", &x), "%s", out);
	cr_expect_gt(json_object_get_int(x), 0, "%s", out);
	cr_expect(strstr(out, "\"cut\":{\"what\":\"cut\",\"fibre\":\"f0\","
			      "\"ok\":true,\"message\":\"cut: fibre A-B"),
		  "%s", out);
	cr_expect(strstr(out, "\"message\":\"repair: fibre A-B"), "%s", out);
	cr_expect(strstr(out, "\"traffic\":{\"what\":\"traffic\",\"task\":"
			      "\"t1\",\"ok\":true,\"message\":\"traffic: "),
		  "%s", out);
	/* the timeline lists both, in the order they were made */
	cr_expect(strstr(out, "\"timeline\":[\""), "%s", out);
	{
		const char *cut = strstr(out, "s: cut fibre A-B from the page");
		const char *rep = strstr(out, "s: repaired fibre A-B from the "
					 "page");

		cr_expect(cut && rep && cut < rep, "%s", out);
	}
	cr_log_info("%s", out);
	json_object_put(o);
	view_stop();
	plan_free(p);
	scenario_free(sc);
}

/* What it shows taken down ('twinlab down'): the view says so, exits 0. */
Test(view, ends_when_the_emulation_is_taken_down)
{
	char *bin = getenv("TWINLAB"), out[4096], token[64];
	char *down[] = { bin, "down", "--prefix", prefix, NULL };
	int port, status;

	view_up(&port, token);
	cr_assert_eq(run_argv_output(down, out, sizeof(out)), 0, "%s", out);
	cr_assert_eq(waitpid(view, &status, 0), view);
	view = -1;
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d",
		  status);
}

/* A stream of the view opened, its first whole event in buf: its socket. */
static int stream_open(int port, const char *token, char *buf, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t got = 0;
	char req[256];
	char *ev;

	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(req, sizeof(req),
		 "GET /events?token=%s HTTP/1.1\r\nHost: x\r\n\r\n", token);
	cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	buf[0] = '\0';
	while (!(ev = strstr(buf, "event: load\ndata: ")) ||
	       !strstr(ev, "\n\n")) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t n;

		cr_assert_eq(poll(&pf, 1, 10000), 1, "no event in 10 s");
		cr_assert_lt(got, len - 1, "no whole event in %zu bytes", got);
		n = read(fd, buf + got, len - 1 - got);
		cr_assert_gt(n, 0, "the stream ended");
		got += (size_t)n;
		buf[got] = '\0';
	}
	return fd;
}

/* The first whole event of the view's stream, in buf. */
static void first_event(int port, const char *token, char *buf, size_t len)
{
	close(stream_open(port, token, buf, len));
}

/* How many threads process pid has (its status's "Threads:"). */
static int threads_of(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	int n = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	while (n < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) != 1)
			n = -1;
	fclose(f);
	cr_assert_gt(n, 0, "no thread count in %s", path);
	return n;
}

/*
 * The view serves every request on one thread of its own, whose turns
 * are inside the fork gate (emu/forkgate.h): streams held open add no
 * thread, each gets its events, and each is ended when the view ends.
 */
Test(view, streams_held_open_add_no_thread)
{
	static char buf[1 << 16];
	int port, fd[6], before, after;
	char token[64];

	view_up(&port, token);
	first_event(port, token, buf, sizeof(buf));
	before = threads_of(view);
	for (int i = 0; i < 6; i++)
		fd[i] = stream_open(port, token, buf, sizeof(buf));
	after = threads_of(view);
	cr_assert_eq(after, before, "%d threads with six streams open, %d "
		     "with none", after, before);
	view_stop();
	for (int i = 0; i < 6; i++) {
		ssize_t n = 1;

		/* what was on its way, then the end (the bound: a fault) */
		while (n > 0) {
			struct pollfd pf = {.fd = fd[i], .events = POLLIN};

			cr_assert_eq(poll(&pf, 1, 10000), 1,
				     "stream %d not ended with the view", i);
			n = read(fd[i], buf, sizeof(buf));
		}
		cr_assert_geq(n, 0, "stream %d: %s", i, strerror(errno));
		close(fd[i]);
	}
}

/*
 * A run --view's output (rd) read to the end of its first round: the
 * view's port, its token in token[64].
 */
static int view_of_run(FILE *rd, char *token)
{
	char line[1024];
	bool round1 = false;
	int port = 0;

	while (!round1 && fgets(line, sizeof(line), rd)) {
		if (!port)
			sscanf(line, "view: http://127.0.0.1:%d/?token=%32s",
			       &port, token);
		round1 = !strncmp(line, "round 1/", 8);
	}
	cr_assert_gt(port, 0, "no view address said");
	cr_assert(round1, "the run ended before its first round");
	return port;
}

/*
 * The tree of the task named `name` that runs in the topology's plan
 * (not blocked), as JSON text into buf: its broadcast paths; and its
 * index in the plan's tasks. -1 when none runs.
 */
static int running_tree(const char *topo_text, const char *name, char *buf,
			size_t len)
{
	struct json_object *o = json_tokener_parse(topo_text), *tasks;
	int at = -1;

	cr_assert_not_null(o, "%.300s", topo_text);
	cr_assert(json_object_object_get_ex(o, "tasks", &tasks));
	for (size_t i = 0; at < 0 && i < json_object_array_length(tasks); i++) {
		struct json_object *t = json_object_array_get_idx(tasks, i);
		struct json_object *n, *b, *tree;

		json_object_object_get_ex(t, "name", &n);
		json_object_object_get_ex(t, "blocked", &b);
		if (strcmp(json_object_get_string(n), name) ||
		    json_object_get_boolean(b))
			continue;
		cr_assert(json_object_object_get_ex(t, "broadcast", &tree));
		snprintf(buf, len, "%s", json_object_to_json_string(tree));
		at = (int)i;
	}
	json_object_put(o);
	return at;
}

/*
 * A run --view ended by SIGTERM, its output (rd) read to the end: it
 * exits, its emulation torn down.
 */
static void end_run(FILE *rd)
{
	char line[1024];
	int status;

	cr_assert_eq(kill(view, SIGTERM), 0);
	while (fgets(line, sizeof(line), rd))
		;
	fclose(rd);
	cr_assert_eq(waitpid(view, &status, 0), view);
	view = -1;
	cr_expect(WIFEXITED(status), "status %d", status);
	cr_expect(!lab_exists(prefix), "the run's emulation was torn down");
}

/* t2's running tree in the view's /topology (path), into buf; its index. */
static int t2_tree(int port, const char *path, char *buf, size_t len)
{
	char out[1 << 16];

	cr_assert_eq(get(port, path, out, sizeof(out)), 200);
	return running_tree(strstr(out, "\r\n\r\n") + 4, "t2", buf, len);
}

/*
 * A run --view (argv) started and read to the end of its first round: its
 * output, the view's port and token, its /topology path, t2's tree then
 * into before and its index in *at0.
 */
static FILE *run_t2(char **argv, char *token, char *path, size_t plen,
		    int *port, char *before, size_t blen, int *at0)
{
	FILE *rd = fdopen(spawn_out(argv), "r");

	cr_assert_not_null(rd);
	*port = view_of_run(rd, token);
	snprintf(path, plen, "/topology?token=%s", token);
	*at0 = t2_tree(*port, path, before, blen);
	cr_assert_geq(*at0, 0, "t2 does not run in round 1");
	return rd;
}

/* A run's output (rd) read until t2 was moved by `cut` and a round ran. */
static void await_t2_moved(FILE *rd, const char *cut)
{
	char line[1024], want[160];
	bool moved = false, round = false;

	snprintf(want, sizeof(want), "task 't2' carries on over its new trees "
		 "(%s", cut);
	while (!round && fgets(line, sizeof(line), rd)) {
		moved = moved || strstr(line, want);
		round = moved && !strncmp(line, "round ", 6);
	}
	cr_assert(round, "t2 was never moved (%s)", cut);
}

/*
 * A run that follows its timeline live (--events, --reschedule): once a
 * cut has moved a task to new trees, the view's plan is the epoch's, so
 * the page draws the trees the task runs over, not those it left.
 */
Test(view, a_run_shows_the_trees_a_cut_moves_tasks_to)
{
	char *bin = getenv("TWINLAB"), line[1024], path[160];
	char ev[80], db[64], before[4096], after[4096];
	char *argv[] = { bin, "run", "scenarios/teaching-ring.yaml",
			 "--prefix", prefix, "--rounds", "6",
			 "--dilation", "8", "--db", db, "--events", ev,
			 "--reschedule", "full", "--view", NULL };
	char token[64] = "";
	int port, status, at0, at1;
	FILE *rd;

	cr_assert_not_null(bin, "TWINLAB not set");
	snprintf(db, sizeof(db), "/tmp/%s-view.db", prefix);
	snprintf(ev, sizeof(ev), "/tmp/%s-cut.yaml", prefix);
	/* a cut never repaired: the epoch it brings stays */
	tl_write(ev, "events:\n  - {at_s: 0.05, cut: {a: A, b: B}}\n");
	rd = run_t2(argv, token, path, sizeof(path), &port, before,
		    sizeof(before), &at0);
	/* its move, then the round that runs it over its new trees */
	await_t2_moved(rd, "the cut at 0.05 s)");
	at1 = t2_tree(port, path, after, sizeof(after));
	cr_assert_gt(at1, at0, "the view still shows t2 as it was: %s", after);
	cr_expect_str_neq(before, after, "t2's new trees are its old ones");
	while (fgets(line, sizeof(line), rd))
		;
	fclose(rd);
	cr_assert_eq(waitpid(view, &status, 0), view);
	view = -1;
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d",
		  status);
	unlink(ev);
	unlink(db);
}

/* POST path to the view on port with token; the status, the answer in out. */
static int post(int port, const char *token, const char *path, char *out,
		size_t len)
{
	char req[512];

	snprintf(req, sizeof(req), "POST %s HTTP/1.1\r\nHost: x\r\n"
		 "X-Twinlab-Token: %s\r\nConnection: close\r\n\r\n", path,
		 token);
	return http(port, req, out, len);
}

/*
 * A cut from the page in a run that follows its story (--reschedule): the
 * story takes it at the time it was made, and the run is planned again
 * and played from the start, so the cut moves the tasks as a scripted one
 * would and the view draws their new trees; a cut the story then refuses
 * (the fibre is cut by then) changes nothing.
 */
Test(view, a_cut_from_the_page_plans_the_run_again)
{
	char *bin = getenv("TWINLAB"), line[1024], path[160], out[1 << 16];
	char db[64], before[4096], after[4096], token[64] = "";
	char *argv[] = { bin, "run", "scenarios/teaching-ring.yaml",
			 "--prefix", prefix, "--rounds", "1000",
			 "--dilation", "8", "--db", db, "--reschedule", "full",
			 "--view", NULL };
	bool again = false;
	int port, at0, at1;
	double at_s = -1;
	FILE *rd;

	cr_assert_not_null(bin, "TWINLAB not set");
	snprintf(db, sizeof(db), "/tmp/%s-view.db", prefix);
	rd = run_t2(argv, token, path, sizeof(path), &port, before,
		    sizeof(before), &at0);
	cr_assert_eq(post(port, token, "/cut?a=A&b=B", out, sizeof(out)), 200,
		     "%s", out);
	while (!again && fgets(line, sizeof(line), rd))
		again = sscanf(line, "run: cut of fibre A-B at %lf s from the "
			       "live view: planning the run again", &at_s) == 1;
	cr_assert(again && at_s > 0, "the run was not planned again");
	cr_expect(strstr(line, "(1 of at most 8)"), "%s", line);
	/* played from the start: the cut, scripted now, moves t2 */
	await_t2_moved(rd, "the cut at ");
	at1 = t2_tree(port, path, after, sizeof(after));
	cr_assert_eq(get(port, path, out, sizeof(out)), 200);
	cr_expect(strstr(out, "\"kind\":\"cut\",\"what\":\"fibre A-B\""),
		  "the story shown has no cut: %.600s", out);
	cr_assert_gt(at1, at0, "the view still shows t2 as it was: %s", after);
	cr_expect_str_neq(before, after, "t2's new trees are its old ones");
	/* the stream draws the fibre cut, as the story has it now */
	first_event(port, token, out, sizeof(out));
	cr_expect(strstr(out, "\"down\":[0]"), "%.300s", strstr(out, "down"));
	/* the story has A-B cut from at_s on, and refuses another cut */
	cr_assert_eq(post(port, token, "/cut?a=A&b=B", out, sizeof(out)), 409,
		     "%s", out);
	cr_expect(strstr(out, "the fibre A-B is already cut then"), "%s", out);
	end_run(rd);
	unlink(db);
}

/* A run's output read to its end, each line kept where it names a re-plan. */
struct drain {
	FILE *rd;
	char said[1024];
};

static void *drain_run(void *arg)
{
	struct drain *d = arg;
	char line[1024];

	while (fgets(line, sizeof(line), d->rd))
		if (strstr(line, "planning the run again"))
			snprintf(d->said, sizeof(d->said), "%s", line);
	return NULL;
}

/*
 * The real browser again, on a run that follows its story: a click cuts
 * fibre A-B, and the page shows the run planned again with the cut in its
 * story, t2 carried on over other trees and the fibre drawn cut
 * (screenshot build/test-view-run.png).
 */
Test(view, a_browser_sees_a_cut_plan_the_run_again)
{
	char *bin = getenv("TWINLAB"), out[1 << 15], db[64], url[160];
	char token[64] = "";
	char *run[] = { bin, "run", "scenarios/teaching-ring.yaml",
			"--prefix", prefix, "--rounds", "1000",
			"--dilation", "8", "--db", db, "--reschedule", "full",
			"--view", NULL };
	char *node[] = { "node", "tests/browser/view.mjs", url,
			 "build/test-view-run.png", "run", NULL };
	struct drain d = { 0 };
	struct json_object *o, *x;
	pthread_t th;
	int port, rc, status;

	browser_or_skip();
	cr_assert_not_null(bin, "TWINLAB not set");
	snprintf(db, sizeof(db), "/tmp/%s-view.db", prefix);
	d.rd = fdopen(spawn_out(run), "r");
	cr_assert_not_null(d.rd);
	port = view_of_run(d.rd, token);
	cr_assert_eq(pthread_create(&th, NULL, drain_run, &d), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/?token=%s", port,
		 token);
	rc = run_argv_output(node, out, sizeof(out));
	cr_assert_eq(kill(view, SIGTERM), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	fclose(d.rd);
	cr_assert_eq(waitpid(view, &status, 0), view);
	view = -1;
	unlink(db);
	o = json_tokener_parse(out);
	cr_assert_not_null(o, "not JSON (exit %d): %s", rc, out);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(strstr(d.said, "run: cut of fibre A-B at "), "the run said: "
		  "%s", d.said);
	cr_assert(json_object_object_get_ex(o, "cut", &x), "%s", out);
	cr_expect(strstr(json_object_to_json_string(x), "cut: fibre A-B") &&
		  strstr(json_object_to_json_string(x), "s of the run's story, "
			 "which starts again with it"), "%s", out);
	cr_assert(json_object_object_get_ex(o, "after", &x), "%s", out);
	cr_expect(strstr(json_object_to_json_string(x), "\"edges\": [ \""),
		  "t2's trees are not drawn: %s", out);
	cr_log_info("%s", out);
	json_object_put(o);
}

/*
 * run --view: the run says the view's address first; once its first
 * round is over, the view shows the run's network; a signal ends the run
 * (aborted, torn down) and the view with it.
 */
Test(view, a_run_shows_itself)
{
	char *bin = getenv("TWINLAB"), line[1024], path[160], out[1 << 16];
	char *argv[] = { bin, "run", "scenarios/teaching-ring.yaml",
			 "--prefix", prefix, "--rounds", "1000",
			 "--dilation", "4", "--db", NULL, "--view", NULL };
	char db[64];
	FILE *rd;
	int fds[2], port;
	char token[64] = "";

	cr_assert_not_null(bin, "TWINLAB not set");
	snprintf(db, sizeof(db), "/tmp/%s-view.db", prefix);
	argv[10] = db;
	fds[0] = spawn_out(argv);
	rd = fdopen(fds[0], "r");
	cr_assert_not_null(rd);
	port = view_of_run(rd, token);
	snprintf(path, sizeof(path), "/topology?token=%s", token);
	cr_expect_eq(get(port, path, out, sizeof(out)), 200);
	cr_expect(strstr(out, "\"scenario\":\"teaching-ring\""), "%.300s",
		  out);
	/* the stream's first event has the round of each task, phases too */
	first_event(port, token, out, sizeof(out));
	for (int t = 1; t <= 2; t++) {
		char want[64];

		snprintf(want, sizeof(want), "{\"name\":\"t%d\",\"round\":", t);
		cr_expect(strstr(out, want), "no %s in %s", want, out);
	}
	cr_expect(strstr(out, "\"done\":true,\"failed\":false,\"pred_ms\":"),
		  "%s", out);
	cr_expect(strstr(out, "\"compute_ms\":"), "%s", out);
	/*
	 * Traffic from the page, which no prediction has: the round in
	 * flight when it starts (or the next, while it flows) is said to
	 * be touched by it, and not compared.
	 */
	{
		char req[512];
		bool touched = false;

		snprintf(req, sizeof(req), "POST /traffic?task=t1&gbps=5&"
			 "for_s=2 HTTP/1.1\r\nHost: x\r\nX-Twinlab-Token: "
			 "%s\r\nConnection: close\r\n\r\n", token);
		cr_assert_eq(http(port, req, out, sizeof(out)), 200, "%s",
			     out);
		while (!touched && fgets(line, sizeof(line), rd))
			touched = !strncmp(line, "round ", 6) &&
				  strstr(line, "(touched from the live view");
		cr_assert(touched, "no round said it was touched");
	}
	/* the page's change took no lock of its own: the run still owns
	 * the prefix, and another process is refused it */
	{
		char *cut[] = { bin, "cut", "A", "B", "--prefix", prefix,
				NULL };
		char outp[64], *said;
		int st;
		pid_t pid;

		snprintf(outp, sizeof(outp), "/tmp/%s-cut.out", prefix);
		pid = nt_spawn_to(cut, outp);
		cr_assert_gt(pid, 0);
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		said = tl_read(outp);
		unlink(outp);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1 &&
			  strstr(said, "is in use by twinlab run"), "%s", said);
		free(said);
	}
	end_run(rd);
	{
		struct sockaddr_in a = {
			.sin_family = AF_INET,
			.sin_port = htons((uint16_t)port),
			.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		cr_expect_neq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0,
			      "the view ended with the run");
		close(fd);
	}
	unlink(db);
	snprintf(path, sizeof(path), "%s-journal", db);
	unlink(path);
}

// SPDX-License-Identifier: MIT
/*
 * twinlab view: the emulation that is up, live in a browser (the server
 * is tools/view/srv.c), until a signal or until the emulation is taken
 * down; up --view does the same once it has built.
 */
#include "tools/twinlab.h"
#include "tools/uplan.h"
#include "tools/view/srv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/lab.h"
#include "twin/addr.h"
#include "twin/plan.h"

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
		"stopped (Ctrl-C), or the emulation is taken down. Needs "
		"root.\n\n"
		"  --prefix P    the emulation's prefix (default 'tl')\n"
		"  --listen ADDR the IPv4 address to listen on (default "
		"127.0.0.1: this machine\n                only)\n"
		"  --port N      the port (default %d; 0: any free one)\n"
		"  --interval S  seconds between load updates (0.05 to 10)\n"
		"  --json        the address, port and token as one JSON "
		"object\n",
		prog, VIEW_PORT);
}

/* The options; -1 to go on, else the exit status. */
static int view_args(int argc, char **argv, const char **prefix,
		     struct view_srv_opts *o)
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

	while ((c = getopt_long(argc, argv, "p:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			*prefix = optarg;
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
	return prefix_arg(*prefix) ? -1 : EXIT_USAGE;
}

/* The view of prefix until a signal or its end; 0 or 1 (said). */
static int serve(const char *prefix, const struct view_srv_opts *o)
{
	struct scenario *sc = NULL;
	struct plan *p = NULL;
	struct addressing *a = NULL;
	struct view *v = NULL;
	double dilation = 1;
	sigset_t sigs;
	int rc = 1, e;

	if (up_plan(prefix, &sc, &p, &a, &dilation))
		goto out;
	/* signals wait for the loop below, in no server thread */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (view_srv_start(o, &v))
		goto out;
	e = view_srv_show(v, prefix, p, a, dilation);
	if (e) {
		p_err("cannot show prefix '%s': %s", prefix, strerror(-e));
		goto out;
	}
	for (;;) {
		struct timespec ts = {.tv_sec = 1};

		if (sigtimedwait(&sigs, NULL, &ts) >= 0)
			break; /* stopped by a signal */
		if (errno != EAGAIN && errno != EINTR)
			break;
		/* what it shows was taken down: nothing more to show */
		if (!lab_exists(prefix)) {
			fprintf(stderr,
				"%s: view: prefix '%s' is no longer "
				"up; the view ends\n",
				prog, prefix);
			break;
		}
	}
	rc = 0;
out:
	view_srv_show(v, NULL, NULL, NULL, 0);
	view_srv_stop(v);
	plan_free(p);
	addressing_free(a);
	scenario_free(sc);
	return rc;
}

static void defaults(struct view_srv_opts *o)
{
	*o = (struct view_srv_opts){.interval = 0.2, .out = stdout};
	o->sa.sin_family = AF_INET;
	o->sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	o->sa.sin_port = htons(VIEW_PORT);
}

int cmd_view(int argc, char **argv)
{
	const char *prefix = "tl";
	struct view_srv_opts o;
	int e;

	defaults(&o);
	e = view_args(argc, argv, &prefix, &o);
	return e >= 0 ? e : serve(prefix, &o);
}

int view_after_up(const char *prefix, bool json)
{
	struct view_srv_opts o;

	defaults(&o);
	o.json = json;
	return serve(prefix, &o);
}

int view_for_run(FILE *out, struct view **v)
{
	struct view_srv_opts o;

	defaults(&o);
	o.out = out;
	o.any_port = true; /* a demo goes on where the port is taken */
	return view_srv_start(&o, v) ? 1 : 0;
}

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
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/lab.h"
#include "twin/addr.h"
#include "twin/plan.h"

#define VIEW_HELP \
	"usage: %s view [--prefix P] [--listen ADDR] [--port N] " \
	"[--interval S]\n       [--json]\n\n" \
	"Serves a live view of the emulation that is up under the prefix: its " \
	"ROADMs,\nfibres (lit wavelengths of all), lightpaths and each task's " \
	"trees, and each\nlink's load from its shaper, updated every S " \
	"seconds. A click on a fibre cuts\nit, on a cut one repairs it (as " \
	"'twinlab cut' and 'repair'). Prints the address\nwith its access " \
	"token; every request needs the token. Until stopped (Ctrl-C),\nor " \
	"the emulation is taken down. Needs root.\n\n" \
	CLI_PREFIX_HELP \
	"  --listen ADDR     the IPv4 address to listen on (default " \
	"127.0.0.1: this\n" \
	"                    machine only)\n" \
	"  --port N          the port (default %d; 0: any free one)\n" \
	"  --interval S      seconds between load updates (0.05 to 10, " \
	"default 0.2)\n" \
	"  -j, --json        the address, port and token as one JSON object\n"

/* The options; CLI_GO to go on, else the exit status. */
static int view_args(int argc, char **argv, const char **prefix,
		     struct view_srv_opts *o)
{
	struct cli cl = { 0 };
	uint64_t port = VIEW_PORT;
	const char *at;
	int rc;

	rc = cli_parse(&cl, argc, argv, 0, 0, VIEW_HELP, prog, VIEW_PORT);
	if (rc != CLI_GO)
		return rc;
	if (cli_prefix(&cl, prefix) || cli_uint(&cl, "port", 0, 65535, &port) ||
	    cli_real(&cl, "interval", 0.05, 10, &o->interval))
		return EXIT_USAGE;
	at = cli_str(&cl, "listen", NULL);
	if (at && inet_pton(AF_INET, at, &o->sa.sin_addr) != 1) {
		p_err("bad --listen '%s': an IPv4 address", at);
		return EXIT_USAGE;
	}
	o->json = cli_flag(&cl, "json");
	o->sa.sin_port = htons((uint16_t)port);
	return CLI_GO;
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
	const char *prefix = NULL;
	struct view_srv_opts o;
	int e;

	defaults(&o);
	e = view_args(argc, argv, &prefix, &o);
	return e != CLI_GO ? e : serve(prefix, &o);
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
	o.owner = true;	   /* the run or experiment holds the prefix */
	return view_srv_start(&o, v) ? 1 : 0;
}

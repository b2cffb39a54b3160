// SPDX-License-Identifier: MIT
/* twinlab exec NODE -- CMD...: run a command in a node's namespace. */
#include "tools/twinlab.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/lab.h"
#include "emu/netns.h"
#include "twin/scenario.h"

int cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prefix", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *prefix = "tl";
	char ns[80];
	int c, saved, err;

	/* '+': stop at the first non-option, the node name */
	while ((c = getopt_long(argc, argv, "+p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			prefix = optarg;
			break;
		case 'h':
			printf("usage: %s exec [--prefix P] NODE -- CMD "
			       "[ARGS...]\n\nRuns CMD with its arguments in "
			       "the network namespace of NODE (a router,\n"
			       "a server or a ROADM of the emulation that is "
			       "up), and exits with its status.\n\n"
			       "  --prefix P  the emulation's prefix (default "
			       "'tl')\n", prog);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind + 1 < argc && !strcmp(argv[optind + 1], "--"))
		optind++, argv[optind] = argv[optind - 1];
	if (argc - optind < 2) {
		p_err("usage: %s exec [--prefix P] NODE -- CMD [ARGS...]", prog);
		return EXIT_USAGE;
	}
	if (!prefix_arg(prefix)) {
		return EXIT_USAGE;
	}
	if (!scn_name_ok(argv[optind], SCN_NODE_NAME_MAX, false)) {
		p_err("bad node name '%s': a scenario's node names are 1-%d "
		      "characters of [A-Za-z0-9_-]", argv[optind],
		      SCN_NODE_NAME_MAX);
		return EXIT_USAGE;
	}
	lab_ns_name(prefix, argv[optind], ns, sizeof(ns));
	if (!netns_exists(ns)) {
		p_err("no node '%s' with prefix '%s' (netns '%s' does not "
		      "exist)", argv[optind], prefix, ns);
		return 1;
	}
	err = netns_enter(ns, &saved);
	if (err) {
		p_err("cannot enter netns '%s': %s", ns, strerror(-err));
		return 1;
	}
	close(saved);
	execvp(argv[optind + 1], argv + optind + 1);
	p_err("cannot run '%s' in netns '%s': %s", argv[optind + 1], ns,
	      strerror(errno));
	return 127;
}

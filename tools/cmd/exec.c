// SPDX-License-Identifier: MIT
/* twinlab exec NODE -- CMD...: run a command in a node's namespace. */
#include "tools/twinlab.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/lab.h"
#include "emu/netns.h"
#include "twin/scenario.h"

#define EXEC_HELP \
	"usage: %s exec [--prefix P] NODE -- CMD [ARGS...]\n\n" \
	"Runs CMD with its arguments in the network namespace of NODE (a " \
	"router,\na server or a ROADM of the emulation that is up), and exits " \
	"with its status.\n\n" \
	CLI_PREFIX_HELP

int cmd_exec(int argc, char **argv)
{
	/* options end at the node's name: the rest is the command's */
	struct cli cl = { .in_order = true };
	const char *prefix = NULL, *node;
	char ns[80], **cmd;
	int rc, saved, err;

	rc = cli_parse(&cl, argc, argv, 2, argc, EXEC_HELP, prog);
	if (rc != CLI_GO)
		return rc;
	if (cli_prefix(&cl, &prefix))
		return EXIT_USAGE;
	node = cl.argv[0];
	cmd = cl.argv + 1;
	if (!strcmp(cmd[0], "--"))
		cmd++;
	if (!cmd[0]) {
		cli_usage(&cl, stderr);
		return EXIT_USAGE;
	}
	if (!scn_name_ok(node, SCN_NODE_NAME_MAX, false)) {
		p_err("bad node name '%s': a scenario's node names are 1-%d "
		      "characters of [A-Za-z0-9_-]", node,
		      SCN_NODE_NAME_MAX);
		return EXIT_USAGE;
	}
	lab_ns_name(prefix, node, ns, sizeof(ns));
	if (!netns_exists(ns)) {
		p_err("no node '%s' with prefix '%s' (netns '%s' does not "
		      "exist)", node, prefix, ns);
		return 1;
	}
	err = netns_enter(ns, &saved);
	if (err) {
		p_err("cannot enter netns '%s': %s", ns, strerror(-err));
		return 1;
	}
	close(saved);
	execvp(cmd[0], cmd);
	p_err("cannot run '%s' in netns '%s': %s", cmd[0], ns,
	      strerror(errno));
	return 127;
}

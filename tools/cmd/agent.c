// SPDX-License-Identifier: MIT
/* twinlab agent: a node's counters, for a run on another host. */
#include "tools/twinlab.h"

#include "emu/agent.h"

#define AGENT_HELP \
	"usage: %s agent [--prefix P]\n\n" \
	"Answers a run's questions about the node it is started in: its " \
	"shapers'\ncounters, its TCP counters and its delay line's lateness. " \
	"'run\n--agents-via' starts it in each router's and server's " \
	"container (docker\nexec -i, containerlab exec) and speaks to it " \
	"over its stdin and stdout,\nwhich must be that link, not a " \
	"terminal. It ends when the link does. Not\nfor use by hand.\n\n" \
	"  -p, --prefix P    the prefix of the node's part ('up --node " \
	"--prefix P'),\n" \
	"                    whose delay line and dilation it reads (none " \
	"without it)\n"

int cmd_agent(int argc, char **argv)
{
	struct cli cl = { 0 };
	const char *prefix = NULL;
	int rc = cli_parse(&cl, argc, argv, 0, 0, AGENT_HELP, prog);

	if (rc != CLI_GO)
		return rc;
	if (cli_flag(&cl, "prefix") && cli_prefix(&cl, &prefix))
		return EXIT_USAGE;
	if (cli_link("agent", "agents-via"))
		return EXIT_USAGE;
	return agent_main(0, 1, prefix);
}

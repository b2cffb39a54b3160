// SPDX-License-Identifier: MIT
/* twinlab worker: one model worker for a harness on another host. */
#include "tools/twinlab.h"

#include "emu/remote.h"

#define WORKER_HELP \
	"usage: %s worker\n\n" \
	"Runs one model worker of a run whose harness is on another host: " \
	"'run\n--workers-via' starts it in its server's container (docker " \
	"exec -i, containerlab\nexec) and speaks to it over its stdin and " \
	"stdout, which must be that link,\nnot a terminal. It works in the " \
	"network namespace it is started in, and\nends when the link does. " \
	"Not for use by hand.\n"

int cmd_worker(int argc, char **argv)
{
	struct cli cl = { 0 };
	int rc = cli_parse(&cl, argc, argv, 0, 0, WORKER_HELP, prog);

	if (rc != CLI_GO)
		return rc;
	if (cli_link("worker", "workers-via"))
		return EXIT_USAGE;
	return rm_worker_main(0, 1);
}

// SPDX-License-Identifier: MIT
/* twinlab: main and the table of commands (each in tools/cmd/). */
#include "tools/twinlab.h"
#include "version.h"

#include <stdio.h>
#include <string.h>

const char *prog = "twinlab";

static int cmd_help(int argc, char **argv);

static int cmd_version(int argc, char **argv);

/*
 * The commands: each one's synopsis names its operands, and [OPTIONS]
 * where it has any; 'twinlab help COMMAND' (or COMMAND --help) lists
 * them, and tests/tools/test_cli.c checks that each option a command
 * takes is there.
 */
static const struct command commands[] = {
	{ "plan", cmd_plan, "SCENARIO [OPTIONS]",
	  "schedule every task and predict a round (no root needed)" },
	{ "up", cmd_up, "SCENARIO [OPTIONS]",
	  "build the scheduled network in namespaces (root)" },
	{ "run", cmd_run, "SCENARIO [OPTIONS]",
	  "run the federated-learning workers on the emulation (root)" },
	{ "experiment", cmd_experiment, "FILE [OPTIONS]",
	  "run a sweep of scenarios on the emulation (root), or in the twin" },
	{ "report", cmd_report, "DB [OPTIONS]",
	  "figures and a markdown report from a results database" },
	{ "down", cmd_down, "[OPTIONS]", "remove what 'up' built (root)" },
	{ "clean", cmd_clean, "[OPTIONS]",
	  "remove whatever a crashed run with that prefix left (root)" },
	{ "exec", cmd_exec, "[OPTIONS] NODE -- CMD [ARGS...]",
	  "run a command in a node's namespace" },
	{ "status", cmd_status, "[OPTIONS]",
	  "how the emulation that is up keeps its promises under its traffic: "
	  "the delay line's lateness, drops, the monitor's verdict (root)" },
	{ "view", cmd_view, "[OPTIONS]",
	  "the emulation that is up, live in a browser on this machine: "
	  "network, trees, each link's load (root)" },
	{ "addr", cmd_addr, "NAME [OPTIONS]",
	  "a server's or a task's addresses in the emulation that is up, "
	  "and the ping along each transfer" },
	{ "cut", cmd_cut, "ROADM ROADM [OPTIONS]",
	  "cut a fibre of the emulation that is up: its lit wavelengths go "
	  "down (root)" },
	{ "repair", cmd_repair, "ROADM ROADM [OPTIONS]",
	  "bring a cut fibre's wavelengths back up (root)" },
	{ "export", cmd_export, "SCENARIO --containerlab DIR [OPTIONS]",
	  "the emulation as containerlab topology files, split over hosts "
	  "(no root needed)" },
	{ "select", cmd_select, "SCENARIO --task NAME [OPTIONS]",
	  "choose k of a task's local models by their data and network cost "
	  "(no root needed)" },
	{ "worker", cmd_worker, "",
	  "one model worker, for a run's harness on another host (started "
	  "by 'run --workers-via')" },
	{ "agent", cmd_agent, "[OPTIONS]",
	  "a node's counters, for a run's harness on another host (started "
	  "by 'run --agents-via')" },
	{ "doctor", cmd_doctor, "[OPTIONS]",
	  "what this kernel offers and which paths twinlab uses" },
	{ "help", cmd_help, "[COMMAND]", "this help, or a command's" },
	{ "version", cmd_version, "", "twinlab's version" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: %s COMMAND [ARGS...]\n"
		   "       %s --version\n\n"
		   "A digital twin of a ROADM/IP network carrying federated "
		   "learning tasks.\n\ncommands:\n", prog, prog);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n             %s\n", commands[i].name,
			commands[i].args, commands[i].help);
	fprintf(f, "\n'%s help COMMAND' (or '%s COMMAND --help') lists a "
		   "command's options.\n", prog, prog);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static int cmd_help(int argc, char **argv)
{
	const struct command *c;
	char *args[] = { NULL, "--help", NULL };

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	if (argc > 2) {
		p_err("usage: %s help [COMMAND]", prog);
		return EXIT_USAGE;
	}
	c = find_command(argv[1]);
	if (!c) {
		p_err("no command '%s'; '%s help' lists them", argv[1], prog);
		return EXIT_USAGE;
	}
	if (c->fn == cmd_help || c->fn == cmd_version) {
		printf("usage: %s %s %s\n\n%s.\n", prog, c->name, c->args,
		       c->help);
		return 0;
	}
	args[0] = argv[1];
	return c->fn(2, args);
}

static int cmd_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		p_err("usage: %s version", prog);
		return EXIT_USAGE;
	}
	printf("%s %s\n", prog, TWINLAB_VERSION);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(0, NULL);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
	{
		const struct command *c = find_command(argv[1]);

		if (c)
			return c->fn(argc - 1, argv + 1);
	}
	p_err("unknown command '%s'; try '%s help'", argv[1], prog);
	return EXIT_USAGE;
}

// SPDX-License-Identifier: MIT
/* twinlab doctor: what this kernel offers and which paths twinlab uses. */
#include "twinlab.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/probe.h"

static const char *yn(bool b)
{
	return b ? "yes" : "no";
}

int cmd_doctor(int argc, char **argv)
{
	struct probe pr;
	bool ok = true;
	int err;

	if (argc > 1) {
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			printf("usage: %s doctor\n", prog);
			return 0;
		}
		p_err("unexpected argument '%s'", argv[1]);
		return EXIT_USAGE;
	}
	err = probe_run(&pr);
	if (err) {
		p_err("cannot probe the kernel: %s", strerror(-err));
		return 1;
	}
	printf("kernel            %s\n", pr.kernel);
	printf("root              %s\n", yn(pr.root));
	if (!pr.root) {
		printf("\nthe emulation needs root: run 'twinlab doctor' as root "
		       "for the kernel probes\n");
		return 1;
	}
	printf("network namespaces %s\n", yn(pr.netns));
	printf("veth              %s\n", yn(pr.veth));
	printf("qdisc tbf         %s\n", yn(pr.tbf));
	printf("qdisc htb         %s\n", yn(pr.htb));
	printf("htb+bfifo+u32     %s\n", yn(pr.fair));
	printf("qdisc netem       %s\n", yn(pr.netem));
	printf("qdisc ingress     %s\n", yn(pr.ingress));
	printf("qdisc clsact      %s\n", yn(pr.clsact));
	printf("filter u32        %s\n", yn(pr.u32));
	printf("action mirred     %s\n", yn(pr.mirred));
	printf("NFQUEUE           %s\n", yn(pr.nfqueue));
	printf("cgroup v1         %s\n", yn(pr.cgroup_v1));
	printf("cgroup v2         %s\n", yn(pr.cgroup_v2));
	printf("\ntwinlab will use:\n");
	printf("  shaping         %s\n", pr.fair ?
	       "htb, a class per transfer (bfifo leaves, u32 on the "
	       "destination)" : "NONE (no htb classes, bfifo or u32)");
	printf("  ROADM switching %s\n", pr.ingress && pr.u32 && pr.mirred ?
	       "tc ingress + u32 + mirred redirect" : "NONE");
	printf("  delay           %s\n", pr.nfqueue ? "delay line (NFQUEUE)" :
	       "NONE (no NFQUEUE)");
	if (pr.netem)
		printf("                  (netem is present, but this version "
		       "applies delay with the delay line on every kernel)\n");
	printf("  cgroups         %s\n", pr.cgroup_v2 ? "v2" :
	       pr.cgroup_v1 ? "v1" : "NONE");
	ok = pr.netns && pr.veth && pr.fair && pr.ingress && pr.u32 &&
	     pr.mirred && pr.nfqueue;
	printf("\n%s\n", ok ? "ready: every path the emulation needs works" :
	       "NOT READY: see the missing pieces above");
	return ok ? 0 : 1;
}

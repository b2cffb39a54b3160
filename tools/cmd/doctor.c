// SPDX-License-Identifier: MIT
/* twinlab doctor: what this kernel offers and which paths twinlab uses. */
#include "tools/twinlab.h"
#include "tools/json.h"

#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/probe.h"

/* What the probe found, as printed and as --json names it. */
static const struct {
	const char *label, *key;
	size_t off;
} found[] = {
	{ "network namespaces", "netns", offsetof(struct probe, netns) },
	{ "veth", "veth", offsetof(struct probe, veth) },
	{ "qdisc tbf", "tbf", offsetof(struct probe, tbf) },
	{ "qdisc htb", "htb", offsetof(struct probe, htb) },
	{ "tbf+htb+bfifo+u32", "fair_shaping", offsetof(struct probe, fair) },
	{ "qdisc netem", "netem", offsetof(struct probe, netem) },
	{ "qdisc ingress", "ingress", offsetof(struct probe, ingress) },
	{ "qdisc clsact", "clsact", offsetof(struct probe, clsact) },
	{ "filter u32", "u32", offsetof(struct probe, u32) },
	{ "action mirred", "mirred", offsetof(struct probe, mirred) },
	{ "NFQUEUE", "nfqueue", offsetof(struct probe, nfqueue) },
	{ "random loss", "loss", offsetof(struct probe, loss) },
	{ "cgroup v1", "cgroup_v1", offsetof(struct probe, cgroup_v1) },
	{ "cgroup v2", "cgroup_v2", offsetof(struct probe, cgroup_v2) },
};

static bool has(const struct probe *pr, size_t i)
{
	return *(const bool *)((const char *)pr + found[i].off);
}

/* The paths the emulation takes here; NULL where there is none. */
struct paths {
	const char *shaping, *switching, *delay, *loss, *cgroups;
	bool ready;
};

static struct paths paths_of(const struct probe *pr)
{
	return (struct paths){
		.shaping = pr->fair ? "tbf; where transfers share a link, "
				      "htb under it, a class per transfer "
				      "(bfifo leaves, u32 on the destination)" :
				      NULL,
		.switching = pr->ingress && pr->u32 && pr->mirred ?
				     "tc ingress + u32 + mirred redirect" :
				     NULL,
		.delay = pr->nfqueue ? "delay line (NFQUEUE)" : NULL,
		.loss = pr->loss ? "iptables statistic match (random drop)" :
				   NULL,
		.cgroups = pr->cgroup_v2 ? "v2" : pr->cgroup_v1 ? "v1" : NULL,
		.ready = pr->root && pr->netns && pr->veth && pr->fair &&
			 pr->ingress && pr->u32 && pr->mirred && pr->nfqueue,
	};
}

static int doctor_json(const struct probe *pr)
{
	struct json_object *o = json_object_new_object(), *f = NULL, *u = NULL;
	struct paths p = paths_of(pr);
	int e;

	if (!o)
		goto fail;
	J(!json_add(o, "kernel", json_object_new_string(pr->kernel)));
	J(!json_add(o, "root", json_object_new_boolean(pr->root)));
	if (pr->root) {
		f = json_object_new_object();
		J(!json_add(o, "found", f));
		for (size_t i = 0; i < sizeof(found) / sizeof(found[0]); i++)
			J(!json_add(f, found[i].key,
				    json_object_new_boolean(has(pr, i))));
		u = json_object_new_object();
		J(!json_add(o, "uses", u));
		J(!json_add_str(u, "shaping", p.shaping));
		J(!json_add_str(u, "roadm_switching", p.switching));
		J(!json_add_str(u, "delay", p.delay));
		J(!json_add_str(u, "loss", p.loss));
		J(!json_add_str(u, "cgroups", p.cgroups));
	} else {
		J(!json_add_null(o, "found"));
		J(!json_add_null(o, "uses"));
	}
	J(!json_add(o, "ready", json_object_new_boolean(p.ready)));
	e = json_print(o);
	json_object_put(o);
	return e || !p.ready ? 1 : 0;
fail:
	p_err("out of memory");
	json_object_put(o);
	return 1;
}

#define DOCTOR_HELP \
	"usage: %s doctor [--json]\n\n" \
	"Probes, in a throwaway network namespace, what this kernel offers " \
	"the\nemulation and says which paths twinlab takes here. Needs root " \
	"for the probes.\nExit status 0 when every path the emulation needs " \
	"works.\n\n" \
	"  --json            print it as one JSON object\n"

int cmd_doctor(int argc, char **argv)
{
	struct probe pr;
	struct paths p;
	struct cli cl = { 0 };
	bool json;
	int err;

	err = cli_parse(&cl, argc, argv, 0, 0, DOCTOR_HELP, prog);
	if (err != CLI_GO)
		return err;
	json = cli_flag(&cl, "json");
	err = probe_run(&pr);
	if (err) {
		p_err("cannot probe the kernel: %s", strerror(-err));
		return 1;
	}
	if (json)
		return doctor_json(&pr);
	printf("kernel            %s\n", pr.kernel);
	printf("root              %s\n", pr.root ? "yes" : "no");
	if (!pr.root) {
		printf("\nthe emulation needs root: run 'twinlab doctor' as root "
		       "for the kernel probes\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(found) / sizeof(found[0]); i++)
		printf("%-17s %s\n", found[i].label, has(&pr, i) ? "yes" : "no");
	p = paths_of(&pr);
	printf("\ntwinlab will use:\n");
	printf("  shaping         %s\n", p.shaping ? p.shaping :
	       "NONE (no tbf over htb classes, bfifo or u32)");
	printf("  ROADM switching %s\n", p.switching ? p.switching : "NONE");
	printf("  delay           %s\n", p.delay ? p.delay :
	       "NONE (no NFQUEUE)");
	if (pr.netem)
		printf("                  (netem is present, but this version "
		       "applies delay with the delay line on every kernel)\n");
	printf("  loss            %s\n", p.loss ? p.loss :
	       "NONE (scenarios whose fibres lose packets cannot be built)");
	printf("  cgroups         %s\n", p.cgroups ? p.cgroups : "NONE");
	printf("\n%s\n", p.ready ? "ready: every path the emulation needs works" :
	       "NOT READY: see the missing pieces above");
	return p.ready ? 0 : 1;
}

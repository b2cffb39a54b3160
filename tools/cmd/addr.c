// SPDX-License-Identifier: MIT
/*
 * twinlab addr NAME: the addresses of a server or a task in the emulation
 * that is up, and how to ping along a transfer. The plan is made again
 * from the scenario the prefix recorded, as up made it, and used only
 * once it is proven to be the one that was built (lab_same).
 */
#include "tools/twinlab.h"
#include "tools/json.h"
#include "tools/planout.h"
#include "tools/uplan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/lab.h"
#include "twin/addr.h"
#include "twin/plan.h"
#include "twin/sched.h"

#define ADDR_HELP \
	"usage: %s addr NAME [--prefix P] [--json]\n\n" \
	"The addresses of a server or a task of the emulation that is up: for " \
	"a server,\nits namespace, its address and its router's, and every " \
	"transfer it sends or\nreceives; for a task, each of its transfers. " \
	"Each transfer has its own pair of\naddresses; ping along one from " \
	"its sender with the line printed with it.\n\n" \
	CLI_PREFIX_HELP \
	"  -j, --json        the same as JSON: each transfer's task, phase, " \
	"from, to,\n" \
	"                    src, dst\n"

static void say_transfers(struct json_object *arr, const char *prefix)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *x = json_object_array_get_idx(arr, i), *v;
		const char *f[6] = { 0 };
		static const char *const key[6] = { "task", "phase", "from",
						    "to", "src", "dst" };

		for (int k = 0; k < 6; k++)
			f[k] = json_object_object_get_ex(x, key[k], &v) ?
				       json_object_get_string(v) : "?";
		printf("  %-12s %-9s %s -> %s: %s -> %s\n"
		       "      %s exec --prefix %s %s -- ping -I %s %s\n",
		       f[0], f[1], f[2], f[3], f[4], f[5], prog, prefix, f[2],
		       f[4], f[5]);
	}
}

/* What addr says of name (server node, or task t), as one object. */
static struct json_object *addr_json(const struct plan *p,
				     const struct addressing *a,
				     const char *prefix, int node, int t)
{
	struct json_object *o = json_object_new_object(), *tr;
	const struct scn_node *nodes = p->sc->nodes;
	char ns[128];

	if (!o)
		return NULL;
	J(!json_add(o, "prefix", json_object_new_string(prefix)));
	if (node >= 0) {
		lab_ns_name(prefix, nodes[node].name, ns, sizeof(ns));
		J(!json_add(o, "server",
			    json_object_new_string(nodes[node].name)));
		J(!json_add(o, "namespace", json_object_new_string(ns)));
		J(!json_add(o, "address", json_addr(a->access[node] + 1)));
		J(!json_add(o, "router", json_object_new_string(
						  nodes[nodes[node].attach].name)));
		J(!json_add(o, "router_address", json_addr(a->access[node])));
	} else {
		J(!json_add(o, "task",
			    json_object_new_string(p->tasks[t].task->name)));
	}
	tr = json_object_new_array();
	J(!json_add(o, "transfers", tr));
	J(!transfers_json(p, a, node >= 0 ? -1 : t, node, tr));
	return o;
fail:
	json_object_put(o);
	return NULL;
}

int cmd_addr(int argc, char **argv)
{
	const char *prefix = NULL, *name;
	struct scenario *sc = NULL;
	struct plan *p = NULL;
	struct addressing *a = NULL;
	struct json_object *o = NULL, *arr;
	struct cli cl = { 0 };
	int rc, node = -1, t = -1;

	rc = cli_parse(&cl, argc, argv, 1, 1, ADDR_HELP, prog);
	if (rc != CLI_GO)
		return rc;
	rc = 1;
	if (cli_prefix(&cl, &prefix))
		return EXIT_USAGE;
	name = cl.argv[0];
	if (up_plan(prefix, &sc, &p, &a, NULL))
		goto out;
	node = scenario_find(sc, name);
	if (node >= 0 && sc->nodes[node].kind != NODE_SERVER) {
		p_err("'%s' is a %s of '%s': addr names a server or a task",
		      name, sc->nodes[node].kind == NODE_ROADM ? "ROADM" :
		      "router", sc->name);
		rc = EXIT_USAGE;
		goto out;
	}
	for (int i = 0; node < 0 && i < p->ntasks; i++)
		if (!strcmp(p->tasks[i].task->name, name))
			t = i;
	if (node < 0 && t < 0) {
		p_err("no server or task '%s' in '%s'", name, sc->name);
		rc = EXIT_USAGE;
		goto out;
	}
	o = addr_json(p, a, prefix, node, t);
	if (!o) {
		p_err("out of memory");
		goto out;
	}
	if (cli_flag(&cl, "json")) {
		rc = json_print(o) ? 1 : 0;
		goto out;
	}
	if (node >= 0) {
		char ns[128], x[32], r[32];

		lab_ns_name(prefix, name, ns, sizeof(ns));
		printf("%s in prefix '%s' (namespace %s): address %s, router "
		       "%s at %s\n", name, prefix, ns,
		       addr_str(a->access[node] + 1, x),
		       sc->nodes[sc->nodes[node].attach].name,
		       addr_str(a->access[node], r));
	} else if (p->tasks[t].blocked) {
		printf("task %s is blocked and not built: %s\n", name,
		       p->tasks[t].why);
	}
	json_object_object_get_ex(o, "transfers", &arr);
	if (json_object_array_length(arr)) {
		printf("%s's transfers, each with its own addresses, and the "
		       "ping along it:\n", name);
		say_transfers(arr, prefix);
	}
	rc = fflush(stdout) ? 1 : 0;
out:
	json_object_put(o);
	addressing_free(a);
	plan_free(p);
	scenario_free(sc);
	return rc;
}

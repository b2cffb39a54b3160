// SPDX-License-Identifier: MIT
/* `plan --hosts N`: a plan split over hosts, in text and JSON (hosts.h). */
#include "tools/hosts.h"

#include "tools/json.h"

void hosts_print(const struct plan *p, const struct partition *pt,
		 const struct partition *naive, FILE *f)
{
	const struct scenario *sc = p->sc;

	fprintf(f, "\nhosts: %d (each ROADM site whole on one; METIS's split "
		   "of the workers and lit wavelengths)\n", pt->nhosts);
	for (int h = 0; h < pt->nhosts; h++) {
		int n = 0;

		fprintf(f, "  host %d: %ld workers, %d namespaces; ROADMs", h + 1,
			pt->workers[h], pt->namespaces[h]);
		for (int k = 0; k < sc->nnodes; k++)
			if (sc->nodes[k].kind == NODE_ROADM && pt->host[k] == h)
				fprintf(f, "%s %s", n++ ? "," : "",
					sc->nodes[k].name);
		fputc('\n', f);
	}
	fprintf(f, "  balance (most workers / mean): %.3f; fibres cut: %d; "
		   "tunnels (lit wavelengths x directions): %d\n", pt->balance,
		pt->ncut_fibres, pt->ntunnels);
	fprintf(f, "  naive split (sites in file order): balance %.3f, fibres "
		   "cut %d, tunnels %d\n", naive->balance, naive->ncut_fibres,
		naive->ntunnels);
}

static struct json_object *split_json(const struct plan *p,
				      const struct partition *pt)
{
	const struct scenario *sc = p->sc;
	struct json_object *o = json_object_new_object(), *hs, *tu;

	J(o);
	J(!json_add_num(o, "balance", pt->balance));
	J(!json_add(o, "fibres_cut", json_object_new_int(pt->ncut_fibres)));
	J(!json_add(o, "tunnels_count", json_object_new_int(pt->ntunnels)));
	J(!json_add(o, "hosts", hs = json_object_new_array()));
	for (int h = 0; h < pt->nhosts; h++) {
		struct json_object *x = json_object_new_object(), *nodes;

		J(!json_push(hs, x));
		J(!json_add(x, "workers", json_object_new_int64(pt->workers[h])));
		J(!json_add(x, "nodes", nodes = json_object_new_array()));
		for (int k = 0; k < sc->nnodes; k++)
			if (pt->host[k] == h)
				J(!json_push(nodes, json_object_new_string(
							    sc->nodes[k].name)));
	}
	J(!json_add(o, "tunnels", tu = json_object_new_array()));
	for (int i = 0; i < pt->ntunnels; i++) {
		const struct part_tunnel *t = &pt->tunnel[i];
		const struct scn_fibre *fb = &sc->fibres[t->fibre];
		struct json_object *x = json_object_new_object();

		J(!json_push(tu, x));
		J(!json_add_str(x, "from_roadm",
				sc->nodes[t->dir ? fb->b : fb->a].name));
		J(!json_add_str(x, "to_roadm",
				sc->nodes[t->dir ? fb->a : fb->b].name));
		J(!json_add(x, "wavelength", json_object_new_int(t->lambda)));
		J(!json_add(x, "from_host", json_object_new_int(t->from + 1)));
		J(!json_add(x, "to_host", json_object_new_int(t->to + 1)));
		J(!json_add(x, "vni", json_object_new_int64(t->vni)));
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

struct json_object *hosts_json(const struct plan *p,
			       const struct partition *pt,
			       const struct partition *naive)
{
	struct json_object *o = split_json(p, pt);

	J(o);
	J(!json_add(o, "naive", split_json(p, naive)));
	return o;
fail:
	json_object_put(o);
	return NULL;
}

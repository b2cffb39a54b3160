// SPDX-License-Identifier: MIT
#include "labveth.h"

#include <stdio.h>

#include "emu/lab.h"

int lab_veths(const struct plan *p,
	      int (*fn)(const struct lab_veth *v, void *arg), void *arg)
{
	const struct scenario *sc = p->sc;
	char x[16], y[16];
	int err = 0;

	for (int s = 0; s < sc->nnodes && !err; s++) {
		struct lab_veth v = { s, sc->nodes[s].attach, LAB_SERVER_IF, y,
				      s, -1, 0 };

		if (sc->nodes[s].kind != NODE_SERVER)
			continue;
		lab_access_if(s, y, sizeof(y));
		err = fn(&v, arg);
	}
	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];

		lab_lightpath_if(l, x, sizeof(x));
		snprintf(y, sizeof(y), "ad%d", l);
		for (int end = 0; end < 2 && !err; end++) {
			int n = end ? lp->b : lp->a;
			struct lab_veth v = { n, sc->nodes[n].attach, x, y, -1,
					      l, end };

			err = fn(&v, arg);
		}
		/* one per wavelength per fibre, from the fibre's end a */
		for (int i = 0; i < lp->nfib && !err; i++) {
			const struct scn_fibre *f = &sc->fibres[lp->fib[i]];
			struct lab_veth v = { f->a, f->b, x, x, -1, -1, 0 };

			snprintf(x, sizeof(x), "f%dw%d", lp->fib[i],
				 lp->lambda);
			err = fn(&v, arg);
		}
	}
	return err;
}

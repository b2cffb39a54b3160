// SPDX-License-Identifier: MIT
/*
 * A split over hosts (twin/partition.h) built on this machine, as the
 * exported containerlab files deploy it on several: each host a namespace
 * "<prefix>--h<k>" with an underlay interface "und" (192.0.2.<k>/24, MTU
 * 1550: the links' 1500 and VXLAN's 50), the hosts on one bridge in
 * "<prefix>--u"; a wavelength over a fibre cut between two hosts runs
 * from each ROADM's port, by a veth "vs<vni>" into its host, where tc
 * joins it to a VXLAN interface "vx<vni>" towards the other host: the
 * stitch containerlab makes for a vxlan-stitch link. ("--": no node's
 * name starts with '-', so no node's namespace is one of these.)
 */
#include "lab_impl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "netns.h"
#include "twin/partition.h"

#define SPLIT_MTU 1500
#define SPLIT_UNDERLAY_MTU (SPLIT_MTU + 50)
#define SPLIT_PORT 4789

/* Host k's underlay address (host order): 192.0.2.<k + 1>. */
static uint32_t underlay(int k)
{
	return (192u << 24 | 2u << 8) + 1u + (uint32_t)k;
}

void lab_split_ns_name(const char *prefix, int host, char *buf, size_t len)
{
	if (host < 0)
		snprintf(buf, len, "%s--u", prefix);
	else
		snprintf(buf, len, "%s--h%d", prefix, host + 1);
}

int lab_split_namespaces(struct lab *lab)
{
	const struct scenario *sc = lab->p->sc;

	for (int k = 0; k <= lab->pt->nhosts; k++) {
		int i = sc->nnodes + k, err;
		struct lab_node *n = &lab->n[i];

		/* the hosts, then the underlay's switch */
		lab_split_ns_name(lab->prefix, k < lab->pt->nhosts ? k : -1,
				  n->ns, sizeof(n->ns));
		err = netns_add_open(n->ns, 0, &n->fd, lab_open_nl, n);
		if (err)
			return lab_fail(lab, err, "cannot create netns '%s': %s",
					n->ns, strerror(-err));
		err = lab_ns_made(lab, n);
		if (err)
			return err;
	}
	return 0;
}

int lab_split_underlay(struct lab *lab)
{
	const struct scenario *sc = lab->p->sc;
	int u = sc->nnodes + lab->pt->nhosts, err;
	char side[16];

	lab->split_br = lab->n[u].next++;
	err = nl_bridge(lab->n[u].nl, "br0", lab->split_br);
	for (int k = 0; k < lab->pt->nhosts && !err; k++) {
		int hi, ui;

		snprintf(side, sizeof(side), "h%d", k + 1);
		err = lab_veth(lab, sc->nnodes + k, "und", u, side, &hi, &ui);
		lab->split_und[k] = hi;
		lab->split_side[k] = ui;
	}
	return err;
}

bool lab_split_cut(const struct lab *lab, int fibre)
{
	const struct scn_fibre *f = &lab->p->sc->fibres[fibre];

	return lab->pt && lab->pt->host[f->a] != lab->pt->host[f->b];
}

int lab_split_line(struct lab *lab, int fibre, int lambda)
{
	const struct scenario *sc = lab->p->sc;
	const struct scn_fibre *f = &sc->fibres[fibre];
	int slot = lab_line_slot(lab->words, fibre, lambda, 0), err;
	char name[16], vs[16];

	snprintf(name, sizeof(name), "f%dw%d", fibre, lambda);
	snprintf(vs, sizeof(vs), "vs%u", partition_vni(lab->pt, fibre, lambda,
						     0));
	err = lab_veth(lab, f->a, name, sc->nnodes + lab->pt->host[f->a], vs,
		       &lab->line[slot], &lab->split_vs[slot]);
	return err ? err : lab_veth(lab, f->b, name,
				    sc->nnodes + lab->pt->host[f->b], vs,
				    &lab->line[slot + 1],
				    &lab->split_vs[slot + 1]);
}

/* At one end of a cut wavelength: its tunnel, stitched to its veth. */
static int stitch(struct lab *lab, int fibre, int lambda, int end)
{
	const struct scenario *sc = lab->p->sc;
	const struct scn_fibre *f = &sc->fibres[fibre];
	int here = lab->pt->host[end ? f->b : f->a];
	int there = lab->pt->host[end ? f->a : f->b];
	struct lab_node *n = &lab->n[sc->nnodes + here];
	unsigned v = partition_vni(lab->pt, fibre, lambda, 0);
	struct nl_vxlan_opts o = {
		.vni = v,
		.remote = underlay(there),
		.local = underlay(here),
		.mtu = SPLIT_MTU,
		.port = SPLIT_PORT,
		.dev = lab->split_und[here],
	};
	/* the veth end lab_split_line made here */
	int vsi = lab->split_vs[lab_line_slot(lab->words, fibre, lambda, end)];
	int vxi = n->next++, err;
	char vs[16], vx[16];

	snprintf(vs, sizeof(vs), "vs%u", v);
	snprintf(vx, sizeof(vx), "vx%u", v);
	err = nl_vxlan(n->nl, vx, vxi, &o);
	if (!err)
		err = nl_ingress(n->nl, vsi, vs);
	if (!err)
		err = nl_ingress(n->nl, vxi, vx);
	return err ? err : lab_cross(n->nl, vsi, vs, vxi, vx, false);
}

int lab_split_configure(struct lab *lab)
{
	const struct scenario *sc = lab->p->sc;
	int u = sc->nnodes + lab->pt->nhosts, err = 0;
	char side[16];

	for (int k = 0; k < lab->pt->nhosts && !err; k++) {
		struct nl *h = lab->n[sc->nnodes + k].nl;

		snprintf(side, sizeof(side), "h%d", k + 1);
		err = nl_link_mtu(h, lab->split_und[k], "und",
				  SPLIT_UNDERLAY_MTU);
		if (!err)
			err = nl_addr(h, lab->split_und[k], "und", underlay(k),
				      24);
		if (!err)
			err = nl_link_mtu(lab->n[u].nl, lab->split_side[k], side,
					  SPLIT_UNDERLAY_MTU);
		if (!err)
			err = nl_link_master(lab->n[u].nl, lab->split_side[k],
					     side, lab->split_br);
	}
	/* each cut wavelength once, as make_links made it */
	for (int f = 0; f < sc->nfibres && !err; f++) {
		if (!lab_split_cut(lab, f))
			continue;
		for (int w = 0; w < lab->words && !err; w++) {
			if (!lab->line[lab_line_slot(lab->words, f, w, 0)])
				continue;
			err = stitch(lab, f, w, 0);
			if (!err)
				err = stitch(lab, f, w, 1);
		}
	}
	return err;
}

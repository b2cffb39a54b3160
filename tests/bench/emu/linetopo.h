/* SPDX-License-Identifier: MIT */
/*
 * The benchmark's topology: a line of k ROADM sites, n = 5k namespaces.
 *
 * Site i (0..k-1) is ROADM "roadm<i>", router "rtr<i>" on it and servers
 * "srv<i>-0".."srv<i>-2" on the router (100 Gbit/s access, 0 km). Fibres
 * roadm<i> - roadm<i+1>, 50 km, 4 wavelengths of 100 Gbit/s; scale 1000,
 * so every shaped link is 100 Mbit/s in the emulation. Two tasks:
 *
 *   tree     G on srv0-0, a local model on every other server except
 *            srv0-2 and srv<k-1>-2 (3k - 3 locals), 10 Gbit/s per transfer:
 *            the MST scheduler lights one lightpath per fibre and grooms
 *            the whole tree onto them (k - 1 one-fibre lightpaths).
 *   express  G on srv0-2, its one local on srv<k-1>-2, 100 Gbit/s per
 *            transfer: a whole wavelength, so it cannot share the tree's
 *            lightpaths and gets one express lightpath over all k - 1
 *            fibres, cross-connected through every transit ROADM.
 *
 * So lightpaths, cross-connects at end and transit ROADMs, endpoint
 * addresses and hop-by-hop routes all exist, in numbers that grow
 * linearly with n.
 */
#ifndef BENCH_EMU_LINETOPO_H
#define BENCH_EMU_LINETOPO_H

#define LINE_SERVERS 3				/* per site */
#define LINE_PER_SITE (2 + LINE_SERVERS)	/* namespaces per site */

/* Whether n namespaces make a line: a multiple of LINE_PER_SITE, >= 10. */
int linetopo_ok(int n);

/* linetopo_write - write the n-namespace scenario to path. 0 or -errno. */
int linetopo_write(const char *path, int n);

#endif

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A run split over hosts against the same run on one host (root).

    split.py TWINLAB [SCENARIO...]

For each scenario (default NSFNET and Nobel-Germany): `twinlab run
SCENARIO --rounds 1 --dilation auto` on one host finds the dilation; then
at that dilation, one host again (the noise between two runs of the same
network), and split over 2 and 4 hosts as `export --hosts N` splits it
(`run --hosts N`: each host a namespace, the cut fibres' wavelengths
VXLAN tunnels over an underlay). Each line: the per-task measured round
over the first one-host run's (median, p95 and worst of |ratio - 1|),
measured over predicted (median), the worst per-link bytes ratio, the
verdict, whether every task's global model is the one-host run's (digest)
and the host time. Targets (issue's): median within 1 +- 0.05,
p95 <= 10 %, faithful, bytes per link equal (within 2 %, as the demo's;
on a link that carries only ACKs, a few kB a round, one ACK more or less
is 1.5 %, as between two runs on one host).
Exit 2 on bad usage, 1 when a run fails.
"""
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

DEFAULT = ["scenarios/nsfnet.yaml", "scenarios/nobel-germany.yaml"]


def run(tl, scenario, db, dilation, hosts, via=False):
    argv = [tl, "run", scenario, "--rounds", "1", "--db", db, "--prefix",
            "tsplit", "--dilation", dilation, "--json"]
    if hosts > 1:
        argv += ["--hosts", str(hosts)]
    if via:
        argv += ["--workers-via",
                 "%s exec --prefix tsplit {node} -- %s worker" % (tl, tl)]
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s: %s" % (" ".join(argv), r.stderr[-2000:]))
    host = [l for l in r.stderr.splitlines() if l.startswith("host time:")]
    return json.loads(r.stdout), host[0] if host else ""


def links(db):
    c = sqlite3.connect(db)
    last = c.execute("SELECT max(id) FROM runs").fetchone()[0]
    out = dict(c.execute("SELECT link, bytes FROM links WHERE run = ?",
                         (last,)))
    c.close()
    return out


def digests(db):
    c = sqlite3.connect(db)
    last = c.execute("SELECT max(id) FROM runs").fetchone()[0]
    out = dict(c.execute("SELECT task, global_digest FROM rounds WHERE "
                         "run = ?", (last,)))
    c.close()
    return out


def rounds(j):
    return {t["name"]: t for t in j["tasks"] if not t["blocked"]}


def p95(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(0.95 * (len(v) - 1) + 0.5))]


def main(argv):
    if len(argv) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    tl = os.path.abspath(argv[1])
    scenarios = argv[2:] or DEFAULT
    if os.geteuid() != 0:
        print("split: needs root", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tl-bench-split") as tmp:
        for sc in scenarios:
            db0 = os.path.join(tmp, "base.db")
            base, host = run(tl, sc, db0, "auto", 1)
            n = "%g" % base["dilation"]
            bt, bl, bd = rounds(base), links(db0), digests(db0)
            print("%s: one host at dilation %s (auto), %s; %s"
                  % (os.path.basename(sc), n, base["verdict"], host))
            for label, hosts, via in (("1 host again", 1, False),
                                      ("2 hosts", 2, False),
                                      ("4 hosts", 4, False),
                                      ("2 hosts, via", 2, True)):
                db = os.path.join(tmp, "h%d%s.db" % (hosts, via * "v"))
                try:
                    j, host = run(tl, sc, db, n, hosts, via)
                except RuntimeError as e:
                    print("  %-13s failed: %s" % (label, e), file=sys.stderr)
                    return 1
                t = rounds(j)
                ratio = [t[k]["measured_s"]["round"] /
                         bt[k]["measured_s"]["round"] for k in bt]
                err = [abs(r - 1) for r in ratio]
                pred = [t[k]["measured_s"]["round"] /
                        t[k]["predicted_s"]["round"] for k in t]
                lk = links(db)
                worst, wl = max((abs(lk[k] / bl[k] - 1), k)
                                for k in bl if bl[k])
                wbytes = lk[wl] - bl[wl]
                same = digests(db) == bd
                met = (abs(statistics.median(ratio) - 1) <= 0.05 and
                       p95(err) <= 0.10 and j["verdict"] == "faithful" and
                       set(lk) == set(bl) and worst <= 0.02 and same)
                print("  %-13s per task vs one host: median %.4f, p95 "
                      "%.2f %%, worst %.2f %%; measured/predicted %.4f; "
                      "links %d, bytes worst %.2f %% (%+d B of %d, %s); "
                      "models %s; %s; %s; targets %s"
                      % (label, statistics.median(ratio), 100 * p95(err),
                         100 * max(err), statistics.median(pred), len(lk),
                         100 * worst, wbytes, bl[wl], wl,
                         "the same" if same else "DIFFER", j["verdict"],
                         host, "met" if met else "MISSED"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What exporting a large network as containerlab files costs.

    export.py TWINLAB [RUNS]

A generated network of 667 ROADMs (a ring with a chord from every third
ROADM to the one 50 ahead), a router and a server on each: 2,001
namespaces; 60 tasks of 5 locals each. Each case runs `twinlab export
SCENARIO --scheduler spff --hosts N` RUNS times (default 5) for N = 1, 4,
16 and gives the median wall time, beside `twinlab plan SCENARIO
--scheduler spff --json` in the same run (the baseline: what export
plans before it writes), their ratio, and the namespaces, links and
tunnel ends written. No root. Exit 2 on bad usage, 1 when an export
fails.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROADMS = 667
TASKS = 60
LOCALS = 5


def scenario():
    out = ["name: big-export", "scale: 100", "wavelength_gbps: 100",
           "wavelengths: 16", "demand_gbps: 10",
           "roadms: [%s]" % ", ".join("R%d" % i for i in range(ROADMS)),
           "fibres:"]
    for i in range(ROADMS):
        out.append("  - {a: R%d, b: R%d, km: %d}"
                   % (i, (i + 1) % ROADMS, 50 + (i * 37) % 400))
        if i % 3 == 0:
            out.append("  - {a: R%d, b: R%d, km: %d}"
                       % (i, (i + 50) % ROADMS, 300 + (i * 11) % 500))
    out.append("routers:")
    out += ["  - {name: r%d, roadm: R%d}" % (i, i) for i in range(ROADMS)]
    out.append("servers:")
    out += ["  - {name: s%d, router: r%d, access_gbps: 100, cpu: 1.0, "
            "memory_mib: 512}" % (i, i) for i in range(ROADMS)]
    out.append("tasks:")
    for t in range(TASKS):
        g = (t * 11) % ROADMS
        locs = ", ".join("s%d" % ((g + 3 + 7 * k) % ROADMS)
                         for k in range(LOCALS))
        out += ["  - name: t%d" % t, "    global: s%d" % g,
                "    locals: [%s]" % locs, "    parameters: 100000",
                "    bytes_per_parameter: 4", "    work_core_s: 0.01",
                "    rounds: 1"]
    return "\n".join(out) + "\n"


def timed(argv):
    t = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True)
    return time.monotonic() - t, r


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    tl = os.path.abspath(argv[1])
    runs = int(argv[2]) if len(argv) == 3 else 5
    with tempfile.TemporaryDirectory(prefix="tl-bench-export") as tmp:
        path = os.path.join(tmp, "big.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(scenario())
        plan = []
        for _ in range(runs):
            s, r = timed([tl, "plan", path, "--scheduler", "spff", "--json"])
            if r.returncode:
                print("plan failed: " + r.stderr, file=sys.stderr)
                return 1
            plan.append(s)
        base = statistics.median(plan)
        print("export of %d ROADMs (%d namespaces), %d tasks; median of %d"
              % (ROADMS, 3 * ROADMS, TASKS, runs))
        print("  plan --json (baseline)   %6.3f s" % base)
        for hosts in (1, 4, 16):
            times, said = [], None
            for i in range(runs):
                d = os.path.join(tmp, "out%d-%d" % (hosts, i))
                s, r = timed([tl, "export", path, "--scheduler", "spff",
                              "--hosts", str(hosts), "--containerlab", d,
                              "--json"])
                if r.returncode:
                    print("export --hosts %d failed: %s"
                          % (hosts, r.stderr), file=sys.stderr)
                    return 1
                times.append(s)
                said = json.loads(r.stdout)
                shutil.rmtree(d)
            ends = sum(len(h.get("tunnels", [])) for h in [said["split"]])
            print("  export --hosts %-3d      %6.3f s  (x%.2f of plan)  "
                  "%d links, %d tunnel directions"
                  % (hosts, statistics.median(times),
                     statistics.median(times) / base, said["links"], ends))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

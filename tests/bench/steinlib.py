#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Steiner tree instances in SteinLib's STP format, as twinlab scenarios.

    steinlib.py gen N M T SEED          a random instance like SteinLib's
                                        set B (N vertices, M edges, weights
                                        1-10, T terminals), STP on stdout
    steinlib.py scenario FILE.stp       the scenario of an instance
    steinlib.py bench TWINLAB SEEDS [FILE.stp ...]
                                        opt, mst, kmb and tm on the given
                                        instances, or on SEEDS draws of
                                        set B's 18 shapes: opt's time and
                                        each heuristic's gap to it

An instance becomes a network whose tree weight is the Steiner tree's: a
ROADM, a router and a server per vertex; an edge of weight w a chain of w
fibres of 1 km (w - 1 ROADMs between); one task of the terminals, the
first the global model; weights alpha 1, beta 0, reuse 0, adddrop 0, so
that a tree's weight is the fibres its broadcast lights. Exit 2 on bad
input.
"""
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

LIMIT = 1 << 20  # bytes of an STP file read, at most


def gen(n, m, t, seed):
    """A connected random graph (a random tree, then chords) as STP text."""
    rng = random.Random(seed)
    edges = {}
    for v in range(1, n):
        u = rng.randrange(v)
        edges[(u, v)] = rng.randint(1, 10)
    while len(edges) < m:
        u, v = sorted(rng.sample(range(n), 2))
        edges.setdefault((u, v), rng.randint(1, 10))
    terms = rng.sample(range(n), t)
    out = ["33D32945 STP File, STP Format Version 1.0", "",
           "SECTION Comment",
           f'Name "rand-{n}-{m}-{t}-{seed}"',
           'Creator "twinlab tests/bench/steinlib.py"', 'Problem "SPG"',
           "END", "", "SECTION Graph", f"Nodes {n}", f"Edges {len(edges)}"]
    out += [f"E {u + 1} {v + 1} {w}" for (u, v), w in sorted(edges.items())]
    out += ["END", "", "SECTION Terminals", f"Terminals {t}"]
    out += [f"T {x + 1}" for x in terms]
    out += ["END", "", "EOF", ""]
    return "\n".join(out)


def parse(text):
    """(nodes, [(u, v, w)], [terminals]) of STP text; ValueError if bad."""
    nodes, edges, terms, section = 0, [], [], None
    for no, line in enumerate(text.splitlines(), 1):
        w = line.split()
        if not w:
            continue
        key = w[0].upper()
        if key == "SECTION":
            section = w[1].upper() if len(w) > 1 else None
        elif key == "END":
            section = None
        elif section == "GRAPH" and key == "NODES":
            nodes = int(w[1])
        elif section == "GRAPH" and key == "E":
            u, v, c = int(w[1]), int(w[2]), int(w[3])
            if not (1 <= u <= nodes and 1 <= v <= nodes) or c < 1:
                raise ValueError(f"line {no}: bad edge '{line.strip()}'")
            edges.append((u, v, c))
        elif section == "TERMINALS" and key == "T":
            terms.append(int(w[1]))
    if nodes < 2 or not edges or len(terms) < 2:
        raise ValueError("no graph with two terminals")
    return nodes, edges, terms


def scenario(text, name):
    nodes, edges, terms = parse(text)
    chain = sum(c - 1 for _, _, c in edges)
    y = [f"name: {name}",
         f'description: "SteinLib instance {name}: {nodes} vertices, '
         f'{len(edges)} edges, {len(terms)} terminals"',
         'source: "SteinLib STP file, converted by tests/bench/steinlib.py"',
         "wavelength_gbps: 100", "wavelengths: 4", "demand_gbps: 10",
         "weights: {alpha: 1, beta: 0, reuse: 0, adddrop: 0, stretch: 0}",
         "never_slower: false",
         "roadms: [" + ", ".join(f"V{i}" for i in range(1, nodes + 1)) +
         "".join(f", C{i}" for i in range(chain)) + "]",
         "fibres:"]
    k = 0
    for u, v, c in edges:
        at = f"V{u}"
        for _ in range(c - 1):
            y.append(f"  - {{a: {at}, b: C{k}, km: 1}}")
            at = f"C{k}"
            k += 1
        y.append(f"  - {{a: {at}, b: V{v}, km: 1}}")
    y.append("routers:")
    y += [f"  - {{name: r{i}, roadm: V{i}}}" for i in range(1, nodes + 1)]
    y.append("servers:")
    y += [f"  - {{name: s{i}, router: r{i}, access_gbps: 100, cpu: 1, "
          f"memory_mib: 64}}" for i in range(1, nodes + 1)]
    y.append("tasks:")
    y.append(f"  - {{name: steiner, global: s{terms[0]}, locals: [" +
             ", ".join(f"s{t}" for t in terms[1:]) +
             "], parameters: 1000, bytes_per_parameter: 4, work_core_s: 0}")
    return "\n".join(y) + "\n"


# SteinLib's set B: vertices, edges and terminals of b01..b18
SET_B = [(n, m, t) for n, ms, ts in
         ((50, (63, 100), (9, 13, 25)), (75, (94, 150), (13, 19, 38)),
          (100, (125, 200), (17, 25, 50)))
         for m in ms for t in ts]
SCHEDULERS = ("opt", "mst", "kmb", "tm", "svi")


def plan(twinlab, path, sched):
    """(tree weight, seconds) of the scenario's task planned by sched."""
    t = time.monotonic()
    out = subprocess.run([twinlab, "plan", path, "--scheduler", sched,
                          "--json"], capture_output=True, text=True,
                         timeout=600, check=False)
    took = time.monotonic() - t
    if out.returncode:
        raise ValueError(f"{path}: twinlab plan --scheduler {sched}: "
                         f"{out.stderr.strip()}")
    task = json.loads(out.stdout)["tasks"][0]
    if task["blocked"]:
        raise ValueError(f"{path}: {sched} blocked the task")
    return task["tree_weight"], took


def bench(twinlab, seeds, files):
    with tempfile.TemporaryDirectory(prefix="twinlab-steiner-") as d:
        todo = []
        for f in files:
            with open(f, encoding="ascii") as fh:
                text = fh.read(LIMIT + 1)
            name = os.path.basename(f).rsplit(".", 1)[0]
            todo.append((name, text))
        for seed in range(1, seeds + 1) if not files else ():
            for i, (n, m, t) in enumerate(SET_B, 1):
                todo.append((f"b{i:02d}-like-s{seed}",
                             gen(n, m, t, seed * 100 + i)))
        rows = []
        for name, text in todo:
            path = os.path.join(d, name + ".yaml")
            with open(path, "w", encoding="ascii") as fh:
                fh.write(scenario(text, name))
            nodes, edges, terms = parse(text)
            w = {s: plan(twinlab, path, s) for s in SCHEDULERS}
            rows.append((name, nodes, len(edges), len(terms), w))
            gaps = " ".join(f"{s} {100 * (w[s][0] / w['opt'][0] - 1):5.2f} %"
                            for s in SCHEDULERS[1:])
            print(f"{name:16} {nodes:4} vertices {len(edges):4} edges "
                  f"{len(terms):3} terminals: opt {w['opt'][0]:6g} in "
                  f"{w['opt'][1]:6.2f} s; {gaps}", flush=True)
    print(f"\n{len(rows)} instances: opt's seconds median "
          f"{statistics.median(r[4]['opt'][1] for r in rows):.2f}, largest "
          f"{max(r[4]['opt'][1] for r in rows):.2f} (a whole 'twinlab plan', "
          f"start to end)")
    for s in SCHEDULERS[1:]:
        g = [r[4][s][0] / r[4]["opt"][0] - 1 for r in rows]
        print(f"  {s:4} gap to opt: mean {100 * statistics.mean(g):.2f} %, "
              f"largest {100 * max(g):.2f} %, optimal in "
              f"{sum(x <= 1e-9 for x in g)} of {len(g)}")


def main(argv):
    try:
        if len(argv) == 6 and argv[1] == "gen":
            n, m, t, seed = (int(x) for x in argv[2:])
            if not (2 <= t <= n and n - 1 <= m <= n * (n - 1) // 2):
                raise ValueError("need 2 <= T <= N and N-1 <= M <= N(N-1)/2")
            sys.stdout.write(gen(n, m, t, seed))
            return 0
        if len(argv) == 3 and argv[1] == "scenario":
            with open(argv[2], encoding="ascii") as f:
                text = f.read(LIMIT + 1)
            if len(text) > LIMIT:
                raise ValueError(f"larger than {LIMIT} bytes")
            name = argv[2].rsplit("/", 1)[-1].rsplit(".", 1)[0]
            sys.stdout.write(scenario(text, name))
            return 0
        if len(argv) >= 4 and argv[1] == "bench":
            bench(argv[2], int(argv[3]), argv[4:])
            return 0
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        print(f"steinlib.py: {e}", file=sys.stderr)
        return 2
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

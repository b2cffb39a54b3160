#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""networkx's Steiner trees on bench-sched's graph, for the side-by-side
figure: steiner_tree(G, terminals, weight="weight", method="mehlhorn") for
every task, timed over --reps repetitions (tree only: no wavelengths, no
routing). Input, written by bench-sched --export:

    nodes N
    e U V W        one line per edge (nodes 0..N-1, weight W)
    t G L1 L2 ...  one line per task: its servers, global first

Prints one line: "networkx VERSION reps R tasks T median_s M min_s A
max_s B". Exit 3 with the reason on stderr when networkx (or its
mehlhorn method) is not there, 2 on bad input.
"""
import sys
import time


def main():
    if len(sys.argv) != 4 or sys.argv[2] != "--reps":
        print("usage: steiner_nx.py FILE --reps R", file=sys.stderr)
        return 2
    try:
        import networkx as nx
        from networkx.algorithms.approximation import steiner_tree
    except ImportError as e:
        print(f"networkx is not installed ({e})", file=sys.stderr)
        return 3
    reps = int(sys.argv[3])
    g = nx.Graph()
    tasks = []
    with open(sys.argv[1]) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "nodes":
                g.add_nodes_from(range(int(w[1])))
            elif w[0] == "e":
                g.add_edge(int(w[1]), int(w[2]), weight=float(w[3]))
            elif w[0] == "t":
                tasks.append([int(x) for x in w[1:]])
            else:
                print(f"bad line: {line!r}", file=sys.stderr)
                return 2
    try:
        steiner_tree(g, tasks[0], weight="weight", method="mehlhorn")
    except TypeError:
        print(f"networkx {nx.__version__} has no steiner_tree "
              "method='mehlhorn' (3.0 or later has)", file=sys.stderr)
        return 3
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for terms in tasks:
            steiner_tree(g, terms, weight="weight", method="mehlhorn")
        times.append(time.perf_counter() - t0)
    times.sort()
    print(f"networkx {nx.__version__} reps {reps} tasks {len(tasks)} "
          f"median_s {times[len(times) // 2]:.6f} min_s {times[0]:.6f} "
          f"max_s {times[-1]:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

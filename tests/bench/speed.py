#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a sweep's wall time goes, against a baseline binary in the same run.

    speed.py TWINLAB [--baseline TWINLAB0] [--experiment FILE] [--reps R]
             [--busy] [--json]

Runs the sweep in FILE (default: the demo's, scenarios/experiments/
poster-quick.yaml) with `twinlab experiment --json` R times (default 3)
with TWINLAB, and as often with TWINLAB0 when given, alternating the two
so that the machine's moods fall on both. Per run: its wall time, the
attempts it made (each point's dilation ladder included), the dilation
each point was found faithful at, and the host time its attempts spent in
each phase (the "host time" lines of its log: build, workers, rounds,
teardown), the wall time outside every attempt (loading, planning and
predicting each point, before its first attempt), the share of the wall
time that is not the rounds, and why each attempt the ladder abandoned
was not faithful. Per binary the
medians over the runs; with a baseline, each median's ratio to the
baseline's. A run whose point is not faithful is said, with its verdict.
With --busy another process keeps one core busy throughout (ended by its
PID). Nothing here is a target; exit 2 on bad usage, 1 when a run fails.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

PREFIX = "tspeed"
PHASES = ("build", "workers", "rounds", "teardown")
HOST = re.compile(r"^host time: ([0-9.]+) s: build ([0-9.]+) s, workers "
                  r"([0-9.]+) s, rounds ([0-9.]+) s \([0-9]+ %\), teardown "
                  r"([0-9.]+) s$")
LADDER = re.compile(r"^run: dilation [0-9.]+ (is|was) not faithful")


def usage(msg):
    sys.stderr.write("speed.py: %s\n%s" % (msg, __doc__))
    sys.exit(2)


def read_log(log):
    """Each attempt's host time and phases, and why the ladder climbed."""
    out, why = [], []
    with open(log) as f:
        for line in f:
            line = line.rstrip("\n")
            m = HOST.match(line)
            if m:
                v = [float(x) for x in m.groups()]
                out.append(dict(zip(("total",) + PHASES, v)))
            elif LADDER.match(line):
                why.append(line[len("run: "):])
    return out, why


def one_run(twinlab, experiment, tag):
    """One sweep: its figures, or None (said) when it failed."""
    with tempfile.TemporaryDirectory(prefix="twinlab-speed-") as d:
        db = os.path.join(d, "r.db")
        t0 = time.monotonic()
        p = subprocess.run([twinlab, "experiment", experiment, "--db", db,
                            "--prefix", PREFIX, "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            sys.stderr.write("speed.py: %s failed (exit %d):\n%s\n" %
                             (tag, p.returncode, p.stderr[-2000:]))
            return None
        try:
            points = json.loads(p.stdout)
        except ValueError:
            sys.stderr.write("speed.py: %s: no JSON on stdout\n" % tag)
            return None
        attempts, ladder = read_log(db + ".log")
    if not attempts:
        sys.stderr.write("speed.py: %s: no host time in its log\n" % tag)
        return None
    if isinstance(points, dict):
        points = points.get("points", [])
    faithful = [pt for pt in points if pt.get("verdict") == "faithful"]
    for pt in points:
        if pt.get("verdict") != "faithful":
            sys.stderr.write("speed.py: %s: point %s/%s/%s: %s\n" % (
                tag, pt.get("locals"), pt.get("seed"), pt.get("scheduler"),
                pt.get("verdict")))
    sums = {k: sum(a[k] for a in attempts) for k in ("total",) + PHASES}
    return {
        "wall_s": wall,
        "attempts": len(attempts),
        "points": len(points),
        "faithful": len(faithful),
        "dilations": [pt.get("dilation") for pt in points],
        "phases_s": sums,
        "outside_s": max(0.0, wall - sums["total"]),
        "ladder": ladder,
        # of the sweep's wall time: planning counts as much as a build
        "not_rounds": 1 - sums["rounds"] / wall if wall > 0
        else float("nan"),
    }


def medians(runs):
    m = {
        "wall_s": statistics.median(r["wall_s"] for r in runs),
        "attempts": statistics.median(r["attempts"] for r in runs),
        "not_rounds": statistics.median(r["not_rounds"] for r in runs),
        "max_dilation": statistics.median(
            max(x for x in r["dilations"] if x) for r in runs),
    }
    for k in PHASES:
        m[k + "_s"] = statistics.median(r["phases_s"][k] for r in runs)
    m["outside_s"] = statistics.median(r["outside_s"] for r in runs)
    return m


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        usage("the twinlab binary to measure comes first")
    twinlab, base = argv[1], None
    experiment = "scenarios/experiments/poster-quick.yaml"
    reps, busy, as_json = 3, False, False
    i = 2
    while i < len(argv):
        a = argv[i]
        if a in ("--baseline", "--experiment", "--reps") and i + 1 < len(argv):
            v = argv[i + 1]
            i += 2
            if a == "--baseline":
                base = v
            elif a == "--experiment":
                experiment = v
            else:
                try:
                    reps = int(v)
                except ValueError:
                    usage("--reps takes a number")
                if not 1 <= reps <= 20:
                    usage("--reps takes 1 to 20")
            continue
        if a == "--busy":
            busy = True
        elif a == "--json":
            as_json = True
        else:
            usage("unknown option '%s'" % a)
        i += 1
    for b in [twinlab] + ([base] if base else []):
        if not os.access(b, os.X_OK):
            usage("'%s' is not an executable" % b)
    if not os.path.isfile(experiment):
        usage("no experiment file '%s'" % experiment)
    if os.geteuid() != 0:
        usage("runs on the emulation need root")
    hog = None
    if busy:
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    bins = [("measured", twinlab)] + ([("baseline", base)] if base else [])
    runs = {tag: [] for tag, _ in bins}
    failed = False
    try:
        for r in range(reps):
            for tag, b in (bins if r % 2 == 0 else bins[::-1]):
                sys.stderr.write("speed.py: run %d of %d, %s ...\n" %
                                 (r + 1, reps, tag))
                fig = one_run(b, experiment, "%s run %d" % (tag, r + 1))
                if fig is None:
                    failed = True
                    continue
                runs[tag].append(fig)
                sys.stderr.write(
                    "speed.py:   %.1f s, %d attempts, dilations %s, "
                    "%d of %d points faithful\n" % (
                        fig["wall_s"], fig["attempts"], fig["dilations"],
                        fig["faithful"], fig["points"]))
                for why in fig["ladder"]:
                    sys.stderr.write("speed.py:     %s\n" % why)
    finally:
        if hog:
            hog.kill()
            hog.wait()
    out = {"experiment": experiment, "reps": reps, "busy": busy}
    for tag, _ in bins:
        out[tag] = {"runs": runs[tag],
                    "median": medians(runs[tag]) if runs[tag] else None}
    if base and out["measured"]["median"] and out["baseline"]["median"]:
        m, b = out["measured"]["median"], out["baseline"]["median"]
        out["ratio"] = {k: (m[k] / b[k] if b[k] else float("nan"))
                        for k in m}
    if as_json:
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print("speed: %s, %d runs each%s" % (
            experiment, reps, ", one core kept busy" if busy else ""))
        cols = ["wall_s", "attempts", "max_dilation"] + \
            [k + "_s" for k in PHASES] + ["outside_s", "not_rounds"]
        print("%-9s " % "" + " ".join("%12s" % c for c in cols))
        for tag, _ in bins:
            m = out[tag]["median"]
            if m:
                print("%-9s " % tag + " ".join("%12.3f" % m[c] for c in cols))
        if "ratio" in out:
            print("%-9s " % "ratio" + " ".join(
                "%12.3f" % out["ratio"][c] for c in cols))
        print("(medians over the runs; phases are host seconds summed over "
              "every attempt of a run; outside: the wall time outside every "
              "attempt; not_rounds: the share of the wall time outside the "
              "rounds)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What following an events file costs the twin: time and peak memory.

    events.py TWINLAB [RUNS]

Each case is `twinlab plan SCENARIO --events FILE --reschedule POLICY`
RUNS times (default 3); the line gives the median wall time, the largest
peak resident memory of the runs and the exit status, beside the same
scenario planned without events in the same run (the baseline). The
events files are made here:

  cuts 10000       10,000 events, the ring's fibre A-B cut and repaired
                   5,000 times (the most events a file may hold)
  burst 10000      10,000 traffic flows starting at one time: refused at
                   once by the cap on epochs x (tasks + flows)
  stagger 300      300 flows on NSFNET, 50 at a time, under 30 tasks:
                   within the cap on cells, but auto re-schedules from
                   scratch at each of its 601 epochs; refused by the
                   bound on the predictors' work (timeline.h)

No root; GNU time (Debian's 'time', which the set-up installs) for the
peak memory. Exit 2 on bad usage.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def cuts(n):
    lines = ["events:"]
    for i in range(n // 2):
        lines.append("  - {at_s: %.6f, cut: {a: A, b: B}}" % (0.001 + i * 2e-4))
        lines.append("  - {at_s: %.6f, repair: {a: A, b: B}}"
                     % (0.0011 + i * 2e-4))
    return "\n".join(lines) + "\n"


def burst(n):
    lines = ["events:"]
    for i in range(n):
        lines.append("  - {at_s: 0.01, traffic: {from: s1, to: s4, "
                     "gbps: 0.001, for_s: %.6f}}" % (0.001 + i * 1e-5))
    return "\n".join(lines) + "\n"


def stagger(n):
    lines = ["events:"]
    for i in range(n):
        lines.append("  - {at_s: %.3f, traffic: {from: S%da, to: S%db, "
                     "gbps: 0.5, for_s: 0.05}}" % (0.001 * i, 1 + i % 7,
                                                   8 + i % 6))
    return "\n".join(lines) + "\n"


def measure(cmd, runs):
    """Median seconds, largest peak RSS (MiB), exit statuses, last words.

    The peak is GNU time's (%M): a child forked from Python would count
    Python's own pages until its exec."""
    times, peaks, codes, last = [], [], set(), []
    for _ in range(runs):
        with tempfile.NamedTemporaryFile() as out, \
                tempfile.TemporaryFile() as err:
            t0 = time.monotonic()
            r = subprocess.run(["/usr/bin/time", "-o", out.name, "-f", "%M"]
                               + cmd, stdout=subprocess.DEVNULL, stderr=err,
                               check=False)
            times.append(time.monotonic() - t0)
            codes.add(r.returncode)
            peaks.append(int(open(out.name, encoding="ascii").read()
                             .split()[-1]) / 1024)
            err.seek(0)
            last = err.read(65536).decode(errors="replace").splitlines()
    return statistics.median(times), max(peaks), sorted(codes), last


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        sys.exit(2)
    if not os.access("/usr/bin/time", os.X_OK):
        print("bench-events: skipped: /usr/bin/time (Debian's 'time') is "
              "not installed", file=sys.stderr)
        return
    twinlab = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) == 3 else 3
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    ring = os.path.join(top, "scenarios/teaching-ring.yaml")
    nsf = os.path.join(top, "scenarios/nsfnet.yaml")
    cases = [
        ("cuts 10000", ring, cuts(10000), ["none", "full", "auto"]),
        ("burst 10000", ring, burst(10000), ["none"]),
        ("stagger 300", nsf, stagger(300), ["none", "auto"]),
    ]
    print("bench-events: twinlab plan --events, medians of %d runs" % runs)
    print("%-12s %-8s %9s %9s %5s  %s" % ("case", "policy", "wall s",
                                          "peak MiB", "exit", "says"))
    with tempfile.TemporaryDirectory() as d:
        for name, sc, text, policies in cases:
            path = os.path.join(d, name.replace(" ", "-") + ".yaml")
            with open(path, "w", encoding="ascii") as f:
                f.write(text)
            base = measure([twinlab, "plan", sc], runs)
            print("%-12s %-8s %9.3f %9.1f %5s" % (name, "(no ev.)", base[0],
                                                  base[1], base[2][0]))
            for pol in policies:
                t, peak, codes, last = measure(
                    [twinlab, "plan", sc, "--events", path, "--reschedule",
                     pol], runs)
                says = last[-1][:60] + "..." if codes != [0] and last else ""
                print("%-12s %-8s %9.3f %9.1f %5s  %s" % (
                    name, pol, t, peak, ",".join(map(str, codes)), says))


if __name__ == "__main__":
    main()

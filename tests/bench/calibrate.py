#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the host distorts at each dilation, against what the monitor says.

    calibrate.py TWINLAB [--experiment FILE] [--locals L] [--ns 16,32,64,128]
                 [--ref 256] [--rounds R] [--json]

One point of a sweep (default: the demo's, scenarios/experiments/
poster-quick.yaml at its largest number of local models, its first seed,
both schedulers) run with `twinlab experiment --dilation N` at the
reference dilation twice (the noise between two runs of the same network)
and at each N once, R rounds each (default 3). For every N and scheduler,
each task-round's measured round over the same task-round at the first
reference run is its distortion by the host; the line gives its median,
p95 and worst |ratio - 1| and its mean (a shift all tasks share), next to
the monitor's verdict (rounds judged degraded, the first reason), what the
monitor reads per task (how late the workers acted along the worst path
of a tree and along the way that ended the round, over the task's round:
median and worst; rounds.late_max_s, late_last_s) and per round (the
delay line's mean and worst lateness, scenario ms), the twin's own p95
|error| and the host time of the run. A point is "within noise" where its
p95 distortion is no more than the reference pair's plus 0.5 %. Beside
the monitor's verdict, the rounds the rule before it would have judged
degraded (rule_before(): every task held to 1 % of the shortest round
along the worst path of its trees, the delay line's worst packet too).
Nothing here is a target; exit 2 on bad usage, 1 when a run fails.
"""
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    yaml = None

PREFIX = "tcalib"


def usage(msg):
    sys.stderr.write("calibrate.py: %s\n%s" % (msg, __doc__))
    sys.exit(2)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def point_file(src, locals_, rounds, folder):
    """The one point, as an experiment file of its own (base made absolute)."""
    with open(src) as f:
        exp = yaml.safe_load(f)
    if not isinstance(exp, dict) or "base" not in exp:
        usage("%s: not a sweep (no 'base')" % src)
    base = exp["base"]
    if not os.path.isabs(base):
        exp["base"] = os.path.abspath(os.path.join(os.path.dirname(src), base))
    exp["locals"] = [locals_ if locals_ else max(exp.get("locals", [3]))]
    exp["seeds"] = [exp.get("seeds", [1])[0]]
    exp["rounds"] = rounds
    exp["name"] = "%s-calibrate" % exp.get("name", "point")
    out = os.path.join(folder, "point.yaml")
    with open(out, "w") as f:
        yaml.safe_dump(exp, f)
    return out, exp["locals"][0], exp.get("schedulers", ["spff", "mst"])


def sweep(tl, point, n, db):
    argv = [tl, "experiment", point, "--db", db, "--prefix", PREFIX,
            "--dilation", str(n), "--json"]
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s: %s" % (" ".join(argv), r.stderr[-2000:]))
    host = {}
    sched = None
    with open(db + ".log") as f:
        log = f.read()
    for line in log.splitlines():
        if line.startswith("run: ") and ", scheduler " in line:
            sched = line.split(", scheduler ")[1].split(",")[0]
        if line.startswith("host time:") and sched:
            host[sched] = float(line.split()[2])
    return host


def rounds(db):
    """{scheduler: {(task, round): row}} and {scheduler: [fidelity rows]}."""
    c = sqlite3.connect(db)
    out, fid = {}, {}
    for run, sched in c.execute("SELECT id, scheduler FROM runs"):
        out[sched] = {
            (t, r): (m, p, lm, ll)
            for t, r, m, p, lm, ll in c.execute(
                "SELECT task, round, round_s, pred_round_s, late_max_s, "
                "late_last_s FROM rounds WHERE run = ?", (run,))}
        fid[sched] = c.execute(
            "SELECT verdict, dl_late_mean_s, dl_late_max_s, round, "
            "overruns, overrun_max_s, skew_max_s, drops, retrans FROM "
            "fidelity WHERE run = ? ORDER BY round", (run,)).fetchall()
    c.close()
    return out, fid


def rule_before(x, fid):
    """Rounds the rule before the per-task one would judge degraded: the
    workers' lateness along the worst path of any task's trees, and the
    delay line's worst packet, each within 1 % of the round's shortest
    task round; the rest (overruns, skew, drops, retransmissions) as the
    monitor judges them."""
    TOL = 0.01
    bad = 0
    for f in fid:
        r = f[3]
        mine = [v for k, v in x.items() if k[1] == r and v[0] > 0]
        if not mine:
            continue
        tol = TOL * min(v[0] for v in mine)
        judged = (max(v[2] for v in mine) > tol or f[2] > tol or
                  (f[4] and f[5] > tol) or f[6] > tol or f[7] or f[8])
        bad += bool(judged)
    return bad


def distortion(x, ref):
    return [x[k][0] / ref[k][0] - 1 for k in x if k in ref and ref[k][0] > 0]


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        usage("TWINLAB first")
    if yaml is None:
        usage("python3-yaml is needed")
    tl = args.pop(0)
    opt = {"--experiment": "scenarios/experiments/poster-quick.yaml",
           "--locals": "0", "--ns": "16,32,64,128", "--ref": "256",
           "--rounds": "3"}
    as_json = False
    while args:
        a = args.pop(0)
        if a == "--json":
            as_json = True
        elif a in opt and args:
            opt[a] = args.pop(0)
        else:
            usage("unknown or incomplete option '%s'" % a)
    try:
        ns = [float(v) for v in opt["--ns"].split(",")]
        ref = float(opt["--ref"])
        nr = int(opt["--rounds"])
        nl = int(opt["--locals"])
    except ValueError:
        usage("--ns, --ref, --rounds and --locals take numbers")
    lines = []
    with tempfile.TemporaryDirectory(prefix="twinlab-calibrate-") as tmp:
        point, nl, scheds = point_file(opt["--experiment"], nl, nr, tmp)
        said = lambda s: sys.stderr.write(s + "\n")
        said("calibrate: %s, %d local models, %d rounds, reference "
             "dilation %g twice, then %s" % (opt["--experiment"], nl, nr,
                                            ref, opt["--ns"]))
        data = {}
        for i, n in enumerate([ref, ref] + ns):
            db = os.path.join(tmp, "n%d.db" % i)
            host = sweep(tl, point, n, db)
            data[i] = (n, rounds(db), host)
            said("calibrate: dilation %g done (%s)" % (
                n, ", ".join("%s %.1f s" % kv for kv in host.items())))
        for s in scheds:
            ref0 = data[0][1][0][s]
            noise = [abs(d) for d in distortion(data[1][1][0][s], ref0)]
            noise95 = pct(noise, 0.95)
            for i in range(1, len(data)):
                n, (rr, fid), host = data[i]
                x = rr[s]
                d = distortion(x, ref0)
                ad = [abs(v) for v in d]
                lm = [v[2] / v[0] for v in x.values() if v[0] > 0]
                ll = [v[3] / v[0] for v in x.values() if v[0] > 0]
                err = [abs(v[0] / v[1] - 1) for v in x.values() if v[1]]
                bad = [f[0] for f in fid[s] if not f[0].startswith("faithful")]
                rec = {
                    "scheduler": s, "dilation": n,
                    "reference": i == 1, "task_rounds": len(d),
                    "rounds": len(fid[s]), "degraded": len(bad),
                    "first_reason": bad[0] if bad else "",
                    "degraded_by_rule_before": rule_before(x, fid[s]),
                    "distortion_median": statistics.median(ad),
                    "distortion_p95": pct(ad, 0.95),
                    "distortion_worst": max(ad),
                    "distortion_mean": statistics.mean(d),
                    "noise_p95": noise95,
                    "within_noise": pct(ad, 0.95) <= noise95 + 0.005,
                    "late_max_median": statistics.median(lm),
                    "late_max_worst": max(lm),
                    "late_last_median": statistics.median(ll),
                    "late_last_worst": max(ll),
                    "delay_line_late_mean_ms": max(
                        f[1] for f in fid[s]) * 1e3,
                    "delay_line_late_worst_ms": max(
                        f[2] for f in fid[s]) * 1e3,
                    "twin_error_p95": pct(err, 0.95),
                    "host_s": host.get(s, float("nan")),
                }
                lines.append(rec)
    if as_json:
        print(json.dumps(lines, indent=1))
        return
    for r in lines:
        print("%-4s N %-5g%s host %5.1f s | distortion |d| median %.2f %%, "
              "p95 %.2f %%, worst %.2f %%, mean %+.2f %% (noise p95 %.2f "
              "%%: %s) | late/round median %.2f %%, worst %.2f %% (last "
              "way %.2f, %.2f %%) | delay line late %.3f ms mean, %.3f "
              "worst | twin p95 %.2f %% | rule before: %d degraded | "
              "verdict: %d of %d rounds degraded%s" % (
                  r["scheduler"], r["dilation"],
                  " (ref)" if r["reference"] else "", r["host_s"],
                  100 * r["distortion_median"], 100 * r["distortion_p95"],
                  100 * r["distortion_worst"], 100 * r["distortion_mean"],
                  100 * r["noise_p95"],
                  "within" if r["within_noise"] else "beyond",
                  100 * r["late_max_median"], 100 * r["late_max_worst"],
                  100 * r["late_last_median"], 100 * r["late_last_worst"],
                  r["delay_line_late_mean_ms"],
                  r["delay_line_late_worst_ms"], 100 * r["twin_error_p95"],
                  r["degraded_by_rule_before"], r["degraded"], r["rounds"],
                  " (%s)" % r["first_reason"][:120] if r["degraded"] else
                  ""))


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        sys.stderr.write("calibrate.py: %s\n" % e)
        sys.exit(1)

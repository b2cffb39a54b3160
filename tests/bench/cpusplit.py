#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the host's CPU goes while a round runs, against the packets' own.

    cpusplit.py TWINLAB [--experiment FILE] [--locals L] [--scheduler S]...
                [--dilation N] [--reps R] [--busy] [--json]

Runs one point of the sweep in FILE (default: the demo's, scenarios/
experiments/poster-quick.yaml, its largest local-model count, each of its
schedulers or those named) at dilation N (default 128), R times each
(default 3), under `perf record -a -g` with the monotonic clock. The
round's window is read from the run's stored transfers (the first one's
start to the last one's end, the workers' CLOCK_MONOTONIC), and every CPU
sample in it is put in one place:

  packets   the kernel forwarding, shaping and delivering them (any
            sample under the network stack's functions, NET below, on any
            CPU, in any process or in an interrupt) and the delay line
            (its process: each packet's verdict is why it exists)
  workers   the workers' own work apart from that (event loops, copies,
            checks), of which `learning` is their model's arithmetic
            (a sample in twin/fl_*.c's functions: training, folding,
            coding, checking)
  harness   the twinlab process that runs the point (the monitor, the
            counters) apart from `awake`
  awake     the threads that keep the CPUs from halting (emu/awake.h):
            SCHED_IDLE, they run only where the CPU would idle
  perf      this measurement's own
  loop      with --busy, the loop that keeps a core busy
  other     anything else (the kernel's own threads, other processes)
  idle      the CPUs halted

CPU-seconds per scenario-second are a category's samples over the
sampling rate, divided by the round's span in scenario time (its wall
span / N). The packets' figure is the limit: on this host's CPUs, the
packets alone keep them busy at a dilation of that figure over the CPUs'
number (`packets fill the CPUs at N`). `busy/packets` is everything but
idle, awake and loop over the packets; its target is 4 or less. Every
run is said with its fidelity verdict; medians over the runs per point.
Nothing here fails the build: exit 2 on bad usage, 1 when a run fails.
"""
import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile

import yaml

PREFIX = "tcpus"
FREQ = 499
CATS = ("packets", "workers", "learning", "harness", "awake", "perf",
        "loop", "other", "idle")
LOOP = []   # --busy: the pid of the loop keeping a core busy
# The network stack, from a socket call or a device down to delivery.
NET = re.compile(
    r"^(net_rx_action|__netif_receive_skb\w*|process_backlog|"
    r"__dev_queue_xmit|dev_hard_start_xmit|veth_xmit|veth_poll|"
    r"ip_rcv\w*|ip_forward\w*|ip_output|ip_finish_output\w*|"
    r"ip_local_deliver\w*|ip_queue_xmit|__ip_queue_xmit|"
    r"tcp_sendmsg\w*|tcp_recvmsg\w*|tcp_v4_rcv|tcp_v4_do_rcv|"
    r"tcp_write_xmit|__tcp_transmit_skb|tcp_rcv_established|"
    r"tcp_push\w*|__tcp_push_pending_frames|tcp_delack_timer\w*|"
    r"tcp_write_timer\w*|tcp_tasklet_func|tcp_tsq_\w+|"
    r"nf_hook_slow|nf_queue|nf_reinject|__qdisc_run|sch_direct_xmit|"
    r"qdisc_watchdog|htb_\w+|tbf_\w+)$")
# The model's arithmetic (twin/fl_*.c), whoever runs it.
LEARN = re.compile(r"^(fl_|logits|softmax|horner|generate)")
# perf record's command becoming the harness (perf runs it in a child).
EXEC = re.compile(r"PERF_RECORD_COMM exec: twinlab:(\d+)/")
SAMPLE = re.compile(r"^\s*(\S.*?)\s+(\d+)/(\d+)\s+([0-9.]+):")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(\S+)")


def usage(msg):
    sys.stderr.write("cpusplit.py: %s\n%s" % (msg, __doc__))
    sys.exit(2)


def point_file(experiment, nlocals, sched, d):
    """The experiment reduced to one point, written in d: its path."""
    with open(experiment) as f:
        x = yaml.safe_load(f)
    if not isinstance(x, dict) or "base" not in x:
        usage("%s is not an experiment with a base" % experiment)
    x["base"] = os.path.abspath(os.path.join(os.path.dirname(experiment),
                                             x["base"]))
    if nlocals is None:
        nlocals = max(x.get("locals", [3]))
    x["locals"] = [nlocals]
    x["schedulers"] = [sched]
    x["seeds"] = x.get("seeds", [1])[:1]
    path = os.path.join(d, "point.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(x, f)
    return path, nlocals


def round_window(db):
    """The stored run's round 1: (start_ns, end_ns, dilation, verdict)."""
    c = sqlite3.connect(db)
    try:
        run = c.execute("SELECT max(run) FROM transfers").fetchone()[0]
        if run is None:
            return None
        a, b = c.execute("SELECT min(start_ns), max(end_ns) FROM transfers "
                         "WHERE run = ? AND round = 1", (run,)).fetchone()
        row = c.execute("SELECT dilation, verdict FROM fidelity WHERE "
                        "run = ? AND round = 1", (run,)).fetchone()
    finally:
        c.close()
    if a is None or b is None or row is None or not b > a:
        return None
    return a, b, row[0], row[1]


def classify(comm, pid, frames, harness):
    """One sample's place; frames leaf first, symbols only."""
    if comm == "twinlab-awake" or "keep" in frames:
        return "awake"
    if comm.endswith("-delay"):
        return "packets"
    if any(NET.match(s) for s in frames):
        return "packets"
    if pid == 0:
        return "idle"
    if comm == "perf":
        return "perf"
    if pid in LOOP:
        return "loop"
    if pid == harness:
        return "harness"
    if comm == "twinlab":
        return "learning" if any(LEARN.match(s) for s in frames) \
            else "workers"
    return "other"


def split(perf_data, t0, t1):
    """Samples per category in [t0, t1] (seconds, monotonic), or None
    when the run's process (perf's command, become twinlab: the
    harness) is not in the record. One pass: its exec comes first."""
    p = subprocess.run(["perf", "script", "-i", perf_data,
                        "--show-task-events", "-F",
                        "comm,pid,tid,time,ip,sym"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True, errors="replace")
    n = dict.fromkeys(CATS, 0)
    harness, cur = None, None

    def done():
        if cur and t0 <= cur[3] <= t1:
            n[classify(cur[0], cur[1], cur[2], harness)] += 1

    for line in p.stdout.splitlines():
        if "PERF_RECORD_" in line:     # a task's event, not a sample
            done()
            cur = None
            e = EXEC.search(line)
            if e and harness is None:
                harness = int(e.group(1))
            continue
        m = SAMPLE.match(line)
        if m:
            done()
            cur = (m.group(1), int(m.group(2)), [], float(m.group(4)))
            continue
        f = FRAME.match(line)
        if f and cur:
            cur[2].append(f.group(1).split("+")[0])
    done()
    return n if harness is not None else None


def one_run(twinlab, point, n, busy_note):
    """One point under perf: its figures, or None (said)."""
    with tempfile.TemporaryDirectory(prefix="twinlab-cpu-") as d:
        db, data = os.path.join(d, "r.db"), os.path.join(d, "perf.data")
        rec = subprocess.Popen(
            ["perf", "record", "-a", "-g", "-F", str(FREQ), "-k",
             "CLOCK_MONOTONIC", "-o", data, "--", twinlab, "experiment",
             point, "--db", db, "--prefix", PREFIX, "--dilation", str(n)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, err = rec.communicate()
        if rec.returncode != 0:
            sys.stderr.write("cpusplit.py: the run failed (exit %d):\n%s\n"
                             % (rec.returncode, err[-2000:]))
            return None
        w = round_window(db)
        if not w:
            sys.stderr.write("cpusplit.py: no round 1 in the run's "
                             "records\n")
            return None
        a, b, dil, verdict = w
        cnt = split(data, a / 1e9, b / 1e9)
        if cnt is None:
            sys.stderr.write("cpusplit.py: the run's process is not in "
                             "perf's record\n")
            return None
    span = (b - a) / 1e9
    scen = span / dil
    total = sum(cnt.values())
    cpus = os.cpu_count() or 1
    per = {k: v / FREQ / scen for k, v in cnt.items()}
    busy = sum(per[k] for k in CATS if k not in ("idle", "awake", "loop"))
    return {
        "dilation": dil, "verdict": verdict, "wall_s": span,
        "scenario_s": scen, "samples": total,
        "sampled_cpu_s": total / FREQ, "cpu_s_available": span * cpus,
        "per_scenario_s": per, "busy": busy,
        "busy_over_packets": busy / per["packets"] if per["packets"] > 0
        else float("inf"),
        "packets_fill_at_n": per["packets"] / cpus,
        "busy_loop": busy_note,
    }


def options(argv):
    """The command line, or exit 2 with the usage."""
    ap = argparse.ArgumentParser(
        prog="cpusplit.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("twinlab")
    ap.add_argument("--experiment",
                    default="scenarios/experiments/poster-quick.yaml")
    ap.add_argument("--locals", type=int)
    ap.add_argument("--scheduler", action="append", default=[])
    ap.add_argument("--dilation", type=float, default=128)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--busy", action="store_true")
    ap.add_argument("--json", action="store_true")
    o = ap.parse_args(argv[1:])
    if not 1 <= o.reps <= 20 or not 1 <= o.dilation <= 100000 or \
            (o.locals is not None and o.locals < 1):
        usage("--reps takes 1 to 20, --dilation 1 to 100000, --locals 1 "
              "or more")
    if not os.access(o.twinlab, os.X_OK):
        usage("'%s' is not an executable" % o.twinlab)
    if os.geteuid() != 0:
        usage("it needs root (the emulation, and perf of every CPU)")
    if not o.scheduler:
        with open(o.experiment) as f:
            o.scheduler = list((yaml.safe_load(f) or {}).get(
                "schedulers", ["spff"]))
    return o


def main(argv):
    o = options(argv)
    loop = None
    if o.busy:
        loop = subprocess.Popen(["sh", "-c", "while :; do :; done"])
        LOOP.append(loop.pid)
    res = {}
    try:
        with tempfile.TemporaryDirectory(prefix="twinlab-cpu-pt-") as d:
            for s in o.scheduler:
                sd = os.path.join(d, s)
                os.mkdir(sd)
                point, nl = point_file(o.experiment, o.locals, s, sd)
                key = "%d locals, %s" % (nl, s)
                runs = []
                for r in range(o.reps):
                    sys.stderr.write("cpusplit.py: %s, run %d of %d ...\n" %
                                     (key, r + 1, o.reps))
                    x = one_run(o.twinlab, point, o.dilation, o.busy)
                    if x is None:
                        return 1
                    cover = x["sampled_cpu_s"] / x["cpu_s_available"]
                    sys.stderr.write(
                        "cpusplit.py:   dilation %g, %s; packets %.1f, "
                        "busy %.1f CPU-s per scenario-s (%.2f x); the "
                        "samples cover %.0f %% of the CPUs' time%s\n" %
                        (x["dilation"], x["verdict"],
                         x["per_scenario_s"]["packets"], x["busy"],
                         x["busy_over_packets"], 100 * cover,
                         "" if cover > 0.9 else
                         " (perf lost samples: the figures are short)"))
                    runs.append(x)
                res[key] = runs
    finally:
        if loop:
            loop.kill()
            loop.wait()
    report(res, o.json)
    return 0


def report(res, as_json):
    med = {}
    for key, runs in res.items():
        m = {k: statistics.median(r["per_scenario_s"][k] for r in runs)
             for k in CATS}
        m["busy"] = statistics.median(r["busy"] for r in runs)
        m["busy_over_packets"] = statistics.median(
            r["busy_over_packets"] for r in runs)
        m["packets_fill_at_n"] = statistics.median(
            r["packets_fill_at_n"] for r in runs)
        m["verdicts"] = [r["verdict"] for r in runs]
        med[key] = m
    if as_json:
        json.dump({"runs": res, "medians": med}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    print("CPU-seconds per scenario-second in the round (medians; "
          "busy = all but idle, awake and loop)")
    print("%-16s" % "point" + "".join("%10s" % k for k in CATS) +
          "%10s%14s%12s" % ("busy", "busy/packets", "fill at N"))
    for key, m in med.items():
        print("%-16s" % key + "".join("%10.1f" % m[k] for k in CATS) +
              "%10.1f%14.2f%12.1f" % (m["busy"], m["busy_over_packets"],
                                      m["packets_fill_at_n"]))
        print("%-16s verdicts: %s" % ("", ", ".join(m["verdicts"])))


if __name__ == "__main__":
    sys.exit(main(sys.argv))

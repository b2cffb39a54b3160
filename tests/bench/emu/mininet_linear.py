#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Mininet side of the emulation benchmark (driven by bench-emu).

Builds LinearTopo(k, n) with Linux-bridge switches and no controller,
times Mininet's own build, start and stop, and reports on stdout, one JSON
object per line (times on CLOCK_MONOTONIC, the clock bench-emu uses):

  {"event": "up", "t0", "t_built", "t_started", "hosts": [pid...],
   "switches": [pid...], "links": int}
  -- then waits for one line on stdin (bench-emu attaches its teardown
     watchers meanwhile) --
  {"event": "down", "t_stop0", "t_stopped"}

Run it only inside a network namespace of its own (bench-emu does): the
bridges and the switch ends of the links are made in the namespace
Mininet starts in. It never calls Mininet's cleanup (`mn -c`,
mininet.clean), which kills processes by name; the caller removes the
namespace and ends any process left by PID.

Mininet.init() is skipped on purpose: its fixLimits() raises global,
not per-namespace, sysctls (kernel.pty.max, fs.file-max) of the host.
Only its per-process part (rlimits) is done here.
"""

import json
import resource
import sys
import time


def rlimit_at_least(which, want):
    soft, hard = resource.getrlimit(which)
    if soft != resource.RLIM_INFINITY and soft < want:
        if hard != resource.RLIM_INFINITY and hard < want:
            want = hard
        resource.setrlimit(which, (want, hard))


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: mininet_linear.py K N\n")
        return 2
    k, n = int(sys.argv[1]), int(sys.argv[2])

    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.nodelib import LinuxBridge
    from mininet.topo import LinearTopo

    setLogLevel("error")
    rlimit_at_least(resource.RLIMIT_NPROC, 8192)
    rlimit_at_least(resource.RLIMIT_NOFILE, 16384)
    Mininet.inited = True           # no fixLimits(): see above

    t0 = time.monotonic()
    net = Mininet(topo=LinearTopo(k=k, n=n), switch=LinuxBridge,
                  controller=None, build=False)
    net.build()
    t_built = time.monotonic()
    net.start()
    t_started = time.monotonic()
    say({"event": "up", "t0": t0, "t_built": t_built,
         "t_started": t_started,
         "hosts": [h.pid for h in net.hosts],
         "switches": [s.pid for s in net.switches],
         "links": len(net.links)})

    sys.stdin.readline()            # bench-emu: "stop", or EOF
    t_stop0 = time.monotonic()
    net.stop()
    t_stopped = time.monotonic()
    say({"event": "down", "t_stop0": t_stop0, "t_stopped": t_stopped})
    return 0


if __name__ == "__main__":
    sys.exit(main())

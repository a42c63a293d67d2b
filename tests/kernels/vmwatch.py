#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""vmwatch.py: runs a QEMU guest and kills it when it stops making progress.

USAGE
    vmwatch.py --console FILE --monitor SOCK [--stall S] [--boot-stall S] [--timeout S]
               [--progress RE] [--step RE] [--stuck-file FILE] [--step-log FILE]
               -- QEMU-COMMAND...

QEMU-COMMAND runs with its stdout and stderr (the guest's serial console)
appended to FILE; it must open its QMP monitor on the UNIX socket SOCK
(-qmp unix:SOCK,server=on,wait=off).  A console line matching RE
(--progress) is a progress line.  With none for S seconds (default 120):
the vCPUs' registers (monitor "info registers -a") go to FILE, the guest's
blocked tasks, the backtraces of its CPUs and then every task are dumped on
its console (magic SysRq w, l and t, sent as keys through the monitor: a
guest with a keyboard that allows them, kernel.sysrq=1), 5 s are left for
the dump, then the VM is stopped (monitor "quit", then SIGKILL).  The step the
guest was in (the last match of --step's first group) goes to --stuck-file,
why to FILE.why.
Until the first step starts (--step; without it, the first progress line)
the limit is --boot-stall (default 300 s): a loaded host boots a TCG guest,
and starts its script, slowly.  Each step's start is appended to --step-log as "EPOCH-SECONDS STEP" (host
time).  A guest still running after --timeout seconds (default 900) is dumped and
stopped the same way.

Exit status: QEMU's own, 124 when it was killed for want of progress or
time.
"""

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time

POLL_S = 2


def qmp_answer(f):
    """The next answer on a QMP stream (events skipped): its text."""
    while True:
        line = f.readline()
        if not line:
            return "(no answer)"
        m = json.loads(line)
        if "return" in m:
            r = m["return"]
            return r if isinstance(r, str) else json.dumps(r)
        if "error" in m:
            return "error: %s" % m["error"].get("desc", m["error"])


def monitor(sock, cmds, gap=2.0, out=None):
    """Sends each human monitor command in turn through QMP, its answer
    appended to OUT (a file name); a missing monitor is said, not fatal
    (the VM is killed all the same)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(10)
        s.connect(sock)
        f = s.makefile("rw")
        f.readline()	# the greeting
        f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
        f.flush()
        qmp_answer(f)
        for c in cmds:
            f.write(json.dumps({"execute": "human-monitor-command",
                                "arguments": {"command-line": c}}) + "\n")
            f.flush()
            got = qmp_answer(f)
            if out:
                with open(out, "a") as o:
                    o.write("VMWATCH: monitor: %s\n%s\n" % (c, got.strip()))
            time.sleep(gap)
    except (OSError, ValueError) as e:
        return "monitor %s: %s" % (sock, e)
    finally:
        s.close()
    return None


def note(console, msg):
    line = "VMWATCH: %s\n" % msg
    with open(console, "a") as f:
        f.write(line)
    sys.stderr.write(line)


def stop(p, a, step, why):
    note(a.console, "%s (step %s): dumping the guest's tasks, then stopping the VM" % (
        why, step or "before any step"))
    err = monitor(a.monitor, ["info registers -a", "sendkey alt-sysrq-w",
                              "sendkey alt-sysrq-l", "sendkey alt-sysrq-t"],
                  gap=1.0, out=a.console)
    if err:
        note(a.console, err)
    try:
        p.wait(timeout=5)	# the dump reaches the console (or the guest ends)
    except subprocess.TimeoutExpired:
        monitor(a.monitor, ["quit"], gap=0.5)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if a.stuck_file:
        with open(a.stuck_file + ".why", "w") as f:
            f.write(why + "\n")
        with open(a.stuck_file, "w") as f:
            f.write((step or "boot") + "\n")
    note(a.console, "VM stopped; stuck in step %s" % (step or "boot"))
    return 124


def watch(p, a):
    prog, stepre = re.compile(a.progress), re.compile(a.step) if a.step else None
    step, pos, partial, seen = None, 0, "", False
    t0 = last = time.monotonic()
    while p.poll() is None:
        time.sleep(POLL_S)
        with open(a.console, "rb") as f:
            f.seek(pos)
            data = f.read()
            pos += len(data)
        lines = (partial + data.decode("utf-8", "replace").replace("\r", "")).split("\n")
        partial = lines.pop()
        for line in lines:
            if prog.search(line):
                last = time.monotonic()
                seen = seen or not stepre
            m = stepre.search(line) if stepre else None
            if m:
                step, seen = m.group(1), True
                if a.step_log:
                    with open(a.step_log, "a") as f:
                        f.write("%.1f %s\n" % (time.time(), step))
        now = time.monotonic()
        if now - last >= (a.stall if seen else max(a.stall, a.boot_stall)):
            return stop(p, a, step, "no progress line for %d s" % (now - last))
        if now - t0 >= a.timeout:
            return stop(p, a, step, "still running after %d s" % (now - t0))
    return p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--console", required=True)
    ap.add_argument("--monitor", required=True)
    ap.add_argument("--stall", type=float, default=120)
    ap.add_argument("--boot-stall", type=float, default=300)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--progress", default=r".")
    ap.add_argument("--step")
    ap.add_argument("--stuck-file")
    ap.add_argument("--step-log")
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()
    if a.stuck_file and os.path.exists(a.stuck_file):
        os.unlink(a.stuck_file)
    with open(a.console, "ab") as out:
        p = subprocess.Popen(a.cmd, stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
    try:
        return watch(p, a)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


if __name__ == "__main__":
    sys.exit(main())

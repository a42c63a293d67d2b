#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Row 10 of the bench (tools/bench.py): the kernel programs' own run time
with Python and native stacks on and off, side by side on one CPU.
"""
import ctypes
import os
import select
import signal
import statistics
import subprocess
import time

from common import (IG, groups, killpg, median_of, out, popen, row, scratch,
                    traced)

# ---- 10. stacks ---------------------------------------------------------------

# Two Python threads hand a byte back and forth through pipes: every hand-off
# is a tracked switch-out with a Python stack to read.
PINGPONG = r"""
import os, sys, threading, time
n = int(sys.argv[1])
a, b = os.pipe(), os.pipe()
def pong():
    for _ in range(n):
        os.read(a[0], 1); os.write(b[1], b"x")
t = threading.Thread(target=pong); t.start()
t0 = time.monotonic()
for _ in range(n):
    os.write(a[1], b"x"); os.read(b[0], 1)
t.join()
print(time.monotonic() - t0)
"""

# A Python-heavy job: compute in Python, a short wait every few ms.  Two
# of them take turns on one CPU (argv[6]), a step each (argv[3] is the
# FIFO of this one's turns, argv[4] the other's), so that both meet the
# same load; each times its own steps (computing and sleeping), not the
# turns it waits for.  It prints that time and the median time its 0.5 ms
# sleep took, then waits until argv[5] exists.
PYJOB = r"""
import os, sys, time
n, ready, mine, theirs, done, cpu = int(sys.argv[1]), *sys.argv[2:7]
os.sched_setaffinity(0, {int(cpu)})
fin, fout = os.open(mine, os.O_RDWR), os.open(theirs, os.O_RDWR)
open(ready, "w").close()
spent = 0.0
naps = []
for i in range(n):
    os.read(fin, 1)
    t0 = time.monotonic()
    x = 0
    for k in range(20000):
        x = (x * 31 + k) % 1000003
    a = time.monotonic()
    time.sleep(0.0005)
    t1 = time.monotonic()
    naps.append(t1 - a)
    spent += t1 - t0
    os.write(fout, b"x")
naps.sort()
print(spent, naps[n // 2], flush=True)
while not os.path.exists(done):
    time.sleep(0.01)
"""


# Python-heavy steps as PYJOB's, alone, for argv[1] seconds; then a second
# asleep, so that what idlegap's programs ran is read before it exits.
PYSPIN = r"""
import sys, time
end, x = time.monotonic() + float(sys.argv[1]), 0
while time.monotonic() < end:
    for k in range(20000):
        x = (x * 31 + k) % 1000003
    time.sleep(0.0005)
time.sleep(1)
"""

BPF_PROG_TYPE_PERF_EVENT = 7


def bpf_run_time(cmd, env=None):
    """Runs `idlegap run` (cmd) with the kernel's BPF run-time statistics on
    (BPF_ENABLE_STATS, while its fd is open) and returns the ns idlegap's
    programs ran, by program type, as its fdinfo last showed them; None
    where the kernel keeps no such statistics."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(64)	# type 0: BPF_STATS_RUN_TIME
    fd = libc.syscall(321, 32, attr, len(attr))	# bpf(BPF_ENABLE_STATS)
    if fd < 0:
        return None
    ns = {}
    try:
        p = popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                  env=env)
        while p.poll() is None:
            ns = prog_times(p.pid) or ns
            time.sleep(0.2)
        groups.discard(p.pid)
    finally:
        os.close(fd)
    by = {}
    for t, v in ns.values():
        by[t] = by.get(t, 0) + v
    return by


def prog_times(pid):
    """{prog id: (type, run ns)} of the BPF programs @pid holds open."""
    got = {}
    try:
        for f in os.listdir("/proc/%d/fdinfo" % pid):
            with open("/proc/%d/fdinfo/%s" % (pid, f)) as fi:
                d = dict(ln.split(":", 1) for ln in fi if ":" in ln)
            if "prog_id" in d and "run_time_ns" in d:
                got[int(d["prog_id"])] = (int(d["prog_type"]),
                                          int(d["run_time_ns"]))
    except OSError:
        pass
    return got


def record_counts(path):
    """Records of a recording by kind, from `report --dump`."""
    n = {}
    for ln in out([IG, "report", "--dump", path]).splitlines():
        f = ln.split(" ", 2)
        if len(f) > 1:
            n[f[1]] = n.get(f[1], 0) + 1
    return n


def wait_files(paths, procs, timeout=120):
    end = time.monotonic() + timeout
    while not all(os.path.exists(f) for f in paths):
        bad = [p for p in procs if p.poll() is not None]
        if bad or time.monotonic() > end:
            for p in procs:
                killpg(p.pid, signal.SIGKILL)
            err = bad[0].stderr.read() if bad else "no start in %d s" % timeout
            raise RuntimeError("%s: %s" % (" ".join(bad[0].args) if bad else
                                           "side by side", err.strip()[-500:]))
        time.sleep(0.01)


def read_lines(procs, timeout=900):
    """The first line of each process's output, as numbers; a job that ends
    without one leaves the other waiting for its turn: both are stopped."""
    lines = {}
    end = time.monotonic() + timeout
    while len(lines) < len(procs):
        for i, p in enumerate(procs):
            if i not in lines and select.select([p.stdout], [], [], 0)[0]:
                lines[i] = tuple(float(v) for v in p.stdout.readline().split())
        if any(not lines.get(i, True) for i in range(len(procs))) or \
                time.monotonic() > end:
            for p in procs:
                killpg(p.pid, signal.SIGKILL)
            return [lines.get(i, ()) for i in range(len(procs))]
        time.sleep(0.05)
    return [lines[i] for i in range(len(procs))]


def side_by_side(cmds, envs, cpu):
    """Runs two jobs (PYJOB command lines) taking turns, once both are ready
    (idlegap attached); both exit once both have timed themselves (so
    idlegap's report comes after).  On a shared machine, runs made one after
    the other meet different loads; taking turns, both meet the same.
    Returns [(s spent in steps, median sleep s)] of each."""
    tmp = scratch()

    def f(name):
        return os.path.join(tmp, name)
    for i in (0, 1):
        os.mkfifo(f("turn%d" % i))
    procs = [popen(c + [f("ready%d" % i), f("turn%d" % i),
                        f("turn%d" % (1 - i)), f("done"), str(cpu)],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                   env=e)
             for i, (c, e) in enumerate(zip(cmds, envs))]
    try:
        wait_files([f("ready0"), f("ready1")], procs)
        with open(f("turn0"), "wb") as t:
            t.write(b"x")
        res = read_lines(procs)
        open(f("done"), "w").close()
        for p, r in zip(procs, res):
            err = p.communicate(timeout=300)[1]
            if p.returncode or len(r) != 2:
                raise RuntimeError("%s: exit %d: %s" % (" ".join(p.args),
                                   p.returncode, err.strip()[-500:]))
    finally:
        for p in procs:
            groups.discard(p.pid)
    return res


def stacks_cost(quick):
    py = "/usr/bin/python3"
    n = 5000 if quick else 30000
    tmp = scratch()
    loop = [py, "-c", PINGPONG, str(n)]
    nopy = dict(os.environ, IDLEGAP_NO_PYSTACKS="1")
    rec = [os.path.join(tmp, "on.igrec"), os.path.join(tmp, "off.igrec")]
    on, off, untr = median_of([
        lambda: float(out(traced(loop, "--no-nvml", "-o", rec[0]))),
        lambda: float(out(traced(loop, "--no-nvml", "-o", rec[1]), env=nopy)),
        lambda: float(out(loop))], 3 if quick else 5)
    per = (on - off) / (2 * n) * 1e9
    row("10", "stacks: added cost per tracked switch-out", "%.2f us" % (per / 1e3),
        "report", True, "Python stacks on %.3f s vs off %.3f s (untraced %.3f s),"
        " %d switch-outs" % (on, off, untr, 2 * n))
    s_on, s_off = os.path.getsize(rec[0]), os.path.getsize(rec[1])
    row("10", "stacks: recording size with/without", "%.2fx" % (s_on / s_off),
        "report", True, "%d vs %d bytes" % (s_on, s_off))
    steps = 300 if quick else 1000
    job = [py, "-c", PYJOB, str(steps)]
    arms = {"on": (traced(job, "--no-nvml"), None),
            "off": (traced(job, "--no-nvml"), nopy),
            "none": (job, None)}	# untraced beside untraced: the noise
    res = {k: [] for k in arms}
    for r in range(3 if quick else 5):
        for k, (cmd, env) in arms.items():
            # each side goes first, on either CPU, as often as the other
            pair = [(cmd, env), (job, None)][::-1 if r % 2 else 1]
            got = side_by_side([c for c, _ in pair], [e for _, e in pair],
                               (r // 2) % 2)
            res[k].append(got[::-1 if r % 2 else 1])
    ratio = {k: statistics.median(a[0] / b[0] for a, b in v)
             for k, v in res.items()}

    def med(k, i, j):
        return statistics.median(r[i][j] for r in res[k])
    row("10", "stacks: Python-heavy job traced/untraced", "%.3fx" % ratio["on"],
        "<= 1.03x", ratio["on"] <= 1.03,
        "taking turns, median of %d pairs: %.3f s vs %.3f s in %d steps;"
        " Python stacks off %.3fx; untraced beside untraced %.3fx; a 0.5 ms"
        " sleep took %.0f vs %.0f us" %
        (len(res["on"]), med("on", 0, 0), med("on", 1, 0), steps,
         ratio["off"], ratio["none"], med("on", 0, 1) * 1e6,
         med("on", 1, 1) * 1e6))
    sample_cost(py, 3 if quick else 8)


def sample_cost(py, secs):
    """What the CPU-sample program runs per sample of a Python-heavy job,
    with stacks and without: the kernel's own account, which the load
    beside the job does not blur as it does wall time."""
    rec = os.path.join(scratch(), "s.igrec")
    job = traced([py, "-c", PYSPIN, str(secs)], "--no-nvml", "-o", rec)
    off = dict(os.environ, IDLEGAP_NO_PYSTACKS="1", IDLEGAP_NO_USTACKS="1")
    per = {}
    for k, env in (("on", None), ("off", off)):
        ns = bpf_run_time(job, env)
        if ns is None:
            row("10", "stacks: BPF time per tracked CPU sample", "n/a",
                "report", True, "the kernel keeps no BPF run-time statistics")
            return
        n = record_counts(rec).get("sample", 0)
        per[k] = (ns.get(BPF_PROG_TYPE_PERF_EVENT, 0) / max(n, 1) / 1e3, n)
    row("10", "stacks: BPF time per tracked CPU sample", "%.2f us" % per["on"][0],
        "report", True, "stacks off %.2f us; all the program's runs (on every"
        " CPU) over the job's %d and %d samples" %
        (per["off"][0], per["on"][1], per["off"][1]))

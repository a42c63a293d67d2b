#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Rows 4, 4s, 5 and 6 of the bench (tools/bench.py): the aggregator's
throughput, replayed and live, the cost of native stacks, its memory
over a long trace, and how long attaching takes.
"""
import json
import os
import statistics
import subprocess
import time

from common import (GENREC, IG, SIMENV, STORM, TRAINSIM, best_time, groups,
                    median_of, out, popen, row, scratch, traced)

# ---- 4. aggregator throughput ---------------------------------------------------

def replay_throughput(quick):
    n = 2000000 if quick else 10000000
    tmp = scratch()
    rec = os.path.join(tmp, "big.igrec")
    nrec = int(out([GENREC, rec, str(n)]))
    # the CPU time of the fastest run: on a shared machine its wall time
    # also counts the waits for the CPU (both shown)
    dt, cpu = best_time(["taskset", "-c", "0", IG, "report", "-q", rec])
    rate = nrec / cpu
    row("4", "replay: records/s on one core (CPU time)", "%.2fM" % (rate / 1e6),
        ">= 4M", rate >= 4e6, "%d records, CPU %.2f s, wall %.2f s (%.2fM/s)"
        % (nrec, cpu, dt, nrec / dt / 1e6))
    os.unlink(rec)


def live_throughput(quick):
    secs = 5 if quick else 30
    tmp = scratch()
    rep = os.path.join(tmp, "r.json")
    cmd = traced([STORM, str(secs), "1"], "--no-nvml", "--sample-hz", "0",
                 "--json", rep)
    out(cmd)
    with open(rep) as f:
        rj = json.load(f)
    total, dropped = rj["events"]["total"], rj["events"]["dropped"]
    rate = total / rj["duration_s"]
    row("4", "live: %d s of a context-switch storm" % secs,
        "%.0fk/s, %d lost" % (rate / 1e3, dropped), ">= 200k/s, 0",
        rate >= 200e3 and dropped == 0, "%d records" % total)


def stack_cost(quick):
    """Storm records/s with native stacks and without (IDLEGAP_NO_USTACKS),
    interleaved, medians: the capture's added cost per tracked switch-out."""
    secs = 3 if quick else 10
    rep = os.path.join(scratch(), "s.json")

    def rate(no_ustacks):
        env = dict(os.environ)
        env.pop("IDLEGAP_NO_USTACKS", None)
        if no_ustacks:
            env["IDLEGAP_NO_USTACKS"] = "1"
        out(traced([STORM, str(secs), "1"], "--no-nvml", "--sample-hz", "0",
                   "--json", rep), env=env)
        with open(rep) as f:
            rj = json.load(f)
        return rj["events"]["total"] / rj["duration_s"]

    on, off = median_of([lambda: rate(False), lambda: rate(True)], 3)
    ratio = on / off
    row("4s", "stacks: added cost per tracked switch-out",
        "%.0f ns, %.2fx" % (1e9 / on - 1e9 / off, ratio), ">= 0.85x",
        ratio >= 0.85, "%.0fk/s with stacks, %.0fk/s without"
        % (on / 1e3, off / 1e3))


# ---- 5. memory -------------------------------------------------------------------

def rss_kb(pid):
    """VmRSS and VmHWM of a live process, in KiB (0, 0 once gone)."""
    rss = hwm = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    return rss, hwm


def memory(quick):
    secs = 30 if quick else 300
    cmd = traced([TRAINSIM, "-s", "storage", "-q", "-t", str(secs),
                  "-n", "100000000"], "--no-nvml")
    p = popen(cmd, env=SIMENV, stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL)
    samples = []
    t0 = time.monotonic()
    while p.poll() is None:
        time.sleep(5)
        try:
            rss, hwm = rss_kb(p.pid)
        except OSError:
            break
        if rss:		# 0 once the tracer is exiting
            samples.append((time.monotonic() - t0, rss, hwm))
    p.wait()
    groups.discard(p.pid)
    if not samples:
        row("5", "memory", "no samples", "<= 48 MiB", False)
        return
    peak = max(s[2] for s in samples) / 1024
    after1 = [s[1] for s in samples if s[0] >= min(60, secs / 2)]
    first = after1[0] / 1024 if after1 else peak
    last = samples[-1][1] / 1024
    flat = max(s[1] for s in samples if s[0] >= min(60, secs / 2)) / 1024 \
        - first <= 2.0 if after1 else False
    row("5", "memory: peak RSS over %d s of storage" % secs, "%.1f MiB" % peak,
        "<= 48 MiB", peak <= 48)
    top = max(s[1] for s in samples if s[0] >= min(60, secs / 2)) / 1024 \
        if after1 else peak
    # the last sample may catch the tracer unmapping its ring on exit
    row("5", "memory: growth after the first %.0f s" % min(60, secs / 2),
        "%+.1f MiB" % (top - first),
        "within 2 MiB", flat, "%.1f MiB at %.0f s, at most %.1f MiB after,"
        " %.1f MiB at the last sample" % (first, min(60, secs / 2), top, last))


# ---- 6. attach latency ------------------------------------------------------------

def attach_latency(quick):
    # a job that runs until it is stopped (-n: more steps than 300 s take)
    job = popen([TRAINSIM, "-s", "healthy", "-q", "-t", "300",
                 "-n", "100000000"],
                env=SIMENV, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
    vals = []
    try:
        time.sleep(1)
        for _ in range(3 if quick else 5):
            if job.poll() is not None:
                raise RuntimeError("the job to attach to ended: exit %d"
                                   % job.returncode)
            t0 = time.monotonic()
            p = popen([IG, "attach", "-p", str(job.pid), "-d", "1",
                       "-q", "--no-nvml"], stderr=subprocess.PIPE, text=True)
            line = p.stderr.readline()
            dt = time.monotonic() - t0
            p.wait()
            groups.discard(p.pid)
            if "tracing" not in line:
                raise RuntimeError("attach: " + line)
            vals.append(dt)
    finally:
        job.kill()
        job.wait()
        groups.discard(job.pid)
    v = statistics.median(vals)
    row("6", "attach latency: start to probes attached", "%.0f ms" % (v * 1e3),
        "<= 250 ms", v <= 0.25, "median of %d, running trainsim" % len(vals))

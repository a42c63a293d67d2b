#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make soak: idlegap left running, its memory over time (not in CI).

For SOAK_SECONDS (default 3600): the agent in continuous mode (one window
all along) while SOAK_LIFECYCLES (default 2000) short GPU processes come
and go beside it, five at a time at most, spread over the run; and beside
both, `idlegap run` on one long trainsim job (storage, stacks on).  The
RSS of both idlegap processes is sampled every 10 s (SOAK_EVERY); at the
end it prints, for each, the first, peak and last figures, the growth
after the first minute (its peak against the sample at 1 min) and the
trend (the median of the last quarter of the samples after the first
minute against that of the first quarter), and says PASS when the trend
stays within 2 MiB (docs/design.md §3.5, §5.13: history and tables are
bounded; one sample's swing is no trend).

USAGE
    tools/soak.py [--seconds N] [--lifecycles N] [--json FILE]

Exit 0 when both stay flat, 1 when one grows, 2 when one cannot run.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools"))
import bench  # noqa: E402  (its child handling: process groups, stop_all)

FLAT_KIB = 2048


def status(pid):
    """VmRSS, RssAnon, VmHWM in KiB; None once the process is gone."""
    got = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "RssAnon", "VmHWM"):
                    got[k] = int(v.split()[0])
    except OSError:
        return None
    return got if "VmRSS" in got else None


def free_port():
    sk = socket.socket()
    sk.bind(("127.0.0.1", 0))
    port = sk.getsockname()[1]
    sk.close()
    return port


def start_agent(log):
    p = bench.popen([bench.IG, "agent", "--listen",
                     "127.0.0.1:%d" % free_port(), "--window", "86400",
                     "--every", "86400"],
                    stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(600):
        log.seek(0)
        if b"agent: metrics on port" in log.read() or p.poll() is not None:
            break
        time.sleep(0.05)
    if p.poll() is not None:
        log.seek(0)
        raise RuntimeError("agent: exit %d: %s" % (
            p.returncode, log.read().decode(errors="replace")[-300:]))
    return p


def summary(name, samples):
    """samples: [(t s, VmRSS KiB, RssAnon KiB)]."""
    if not samples:
        return dict(name=name, ok=False, note="no samples")
    after = [s for s in samples if s[0] >= 60] or samples[-1:]
    base = after[0][1]
    growth = max(s[1] for s in after) - base
    # the trend: the median of the last quarter of the samples after the
    # first minute against that of the first quarter (one sample's swing,
    # a window of history or a file being named, is no trend)
    q = max(len(after) // 4, 1)
    trend = statistics.median(s[1] for s in after[-q:]) - \
        statistics.median(s[1] for s in after[:q])
    r = dict(name=name, first_mib=samples[0][1] / 1024,
             peak_mib=max(s[1] for s in samples) / 1024,
             last_mib=samples[-1][1] / 1024,
             at_60s_mib=base / 1024, growth_after_60s_mib=growth / 1024,
             trend_mib=trend / 1024,
             anon_first_mib=samples[0][2] / 1024,
             anon_last_mib=samples[-1][2] / 1024,
             samples=len(samples), ok=trend <= FLAT_KIB)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float,
                    default=float(os.environ.get("SOAK_SECONDS", "3600")))
    ap.add_argument("--lifecycles", type=int,
                    default=int(os.environ.get("SOAK_LIFECYCLES", "2000")))
    ap.add_argument("--every", type=float,
                    default=float(os.environ.get("SOAK_EVERY", "10")))
    ap.add_argument("--json")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("make soak: tracing needs root: sudo make soak", file=sys.stderr)
        return 2
    if a.seconds < 70 or a.lifecycles < 0 or a.every <= 0:
        print("soak: --seconds must be at least 70 (growth is measured after"
              " the first minute), --lifecycles >= 0, --every > 0",
              file=sys.stderr)
        return 2
    bench.guard_children()
    log = tempfile.TemporaryFile()
    tmp = bench.scratch()
    t0 = time.monotonic()
    end = t0 + a.seconds
    try:
        agent = start_agent(log)
        run = bench.popen(
            bench.traced([bench.TRAINSIM, "-s", "storage", "-q", "-t",
                          str(int(a.seconds) + 30), "-n", "100000000"],
                         "--no-nvml", "--json", os.path.join(tmp, "run.json")),
            env=bench.SIMENV, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
    except (OSError, RuntimeError) as e:
        bench.stop_all()
        print("soak: cannot start: %s" % e, file=sys.stderr)
        return 2
    samples = {"agent": [], "run": []}
    procs = {"agent": agent, "run": run}
    # the lifecycles spread over the run, the last starting a minute
    # before its end at the latest
    pace = max(a.seconds - 60, 1) / max(a.lifecycles, 1)
    started, running, next_sample = 0, [], t0
    print("soak: %.0f s, %d GPU process lifecycles beside the agent, RSS every"
          " %.0f s; load average %s" % (a.seconds, a.lifecycles, a.every,
          " ".join(open("/proc/loadavg").read().split()[:3])), flush=True)
    while time.monotonic() < end:
        now = time.monotonic()
        running = [r for r in running if r.poll() is None]
        while started < a.lifecycles and len(running) < 5 and \
                now >= t0 + started * pace:
            running.append(bench.popen(
                [bench.TRAINSIM, "-s", "healthy", "-q", "-t", "1.2", "-n",
                 "1000000"], env=bench.SIMENV, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
            started += 1
        if now >= next_sample:
            next_sample += a.every
            line = []
            for k, p in procs.items():
                st = status(p.pid) if p.poll() is None else None
                if st:
                    samples[k].append((now - t0, st["VmRSS"], st["RssAnon"]))
                    line.append("%s %.1f MiB (anon %.1f)" % (
                        k, st["VmRSS"] / 1024, st["RssAnon"] / 1024))
                else:
                    line.append("%s gone" % k)
            print("  %5.0f s  %s; %d lifecycles" % (now - t0, ", ".join(line),
                                                    started), flush=True)
        if any(p.poll() is not None for p in procs.values()):
            break
        time.sleep(0.05)
    gone = [k for k, p in procs.items() if p.poll() is not None]
    for r in running:
        r.wait()
    left = bench.stop_all()
    res = [summary(k, samples[k]) for k in ("agent", "run")]
    print("\n%-6s %9s %9s %9s %16s %9s %15s  %s" % (
        "what", "first", "peak", "last", "growth after 60s", "trend",
        "anon first/last", "result"))
    for r in res:
        if "first_mib" not in r:
            print("%-6s %s  MISS" % (r["name"], r["note"]))
            continue
        print("%-6s %7.1f M %7.1f M %7.1f M %+14.1f M %+7.1f M %7.1f/%.1f M  %s" % (
            r["name"], r["first_mib"], r["peak_mib"], r["last_mib"],
            r["growth_after_60s_mib"], r["trend_mib"], r["anon_first_mib"],
            r["anon_last_mib"],
            "PASS" if r["ok"] else "MISS"))
    print("soak: %.0f s, %d lifecycles; load average %s%s" % (
        time.monotonic() - t0, started,
        " ".join(open("/proc/loadavg").read().split()[:3]),
        "; ended early: %s" % ", ".join(gone) if gone else ""), flush=True)
    if left:
        print("soak: left running: %s" % left, file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(seconds=a.seconds, lifecycles=started, results=res,
                           samples=samples), f, indent=1)
    if gone:
        return 2
    return 0 if all(r["ok"] for r in res) else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The estimate's interval against the truth over a grid of jobs
(docs/design.md §4.10): per-op and mixed jobs on the simulated GPU, kernel
10 us to 5 ms, host work 20 us to 2 ms after (C trainsim) or before
(tools/trainsim.py's loop) each launch, 1 to 50 launches per sync.  Every
estimate given must hold the truth inside its interval; refusals are
counted.

USAGE
    estgrid.py [--runs N] [--seconds S] [--keep DIR] [--only SUBSTR]
               [--device-off] [--json FILE] [--idlegap PATH]
        runs each job N times (default 5) for S seconds (default 2) under
        `idlegap run` (tools/accuracy.py), keeping the recordings under
        DIR when given; prints one row per job and the totals.
    estgrid.py --rescore DIR [--json FILE]
        the recordings kept under DIR reported again by this build
        (`idlegap report`), scored the same way: a change to the
        estimate measured on the same runs.
    estgrid.py --scenarios eager,launch,gil_eager,loop [--runs N] ...
        those scenarios (their arguments after colons) in place of the
        grid: with the simulated NVML, the device counters' acceptance.
    estgrid.py --list
        the grid.

--idlegap runs a copy of the binary, so that a rebuild while the grid
runs does not break it.  --device-off turns the simulated NVML's counters off
(SIMNVML_NO_SAMPLES, SIMNVML_NO_GPM), so that only the launch model
estimates.  Exit 1 when an interval given
misses the truth.
"""

import argparse
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools"))
import accuracy  # noqa: E402


def grid():
    """(name, scenario, trainsim arguments): per-op jobs (host work after
    every launch), mixed ones (several launches per sync), and Python
    loops (work before each launch)."""
    jobs = []
    for d, h, k in ((10, 20, 1), (10, 100, 5), (10, 300, 20), (10, 2000, 50),
                    (50, 20, 50), (50, 100, 1), (50, 300, 5), (50, 2000, 20),
                    (150, 20, 20), (150, 100, 50), (150, 300, 1),
                    (150, 2000, 5), (500, 20, 5), (500, 100, 20),
                    (500, 300, 50), (500, 2000, 1), (2000, 20, 1),
                    (2000, 100, 5), (2000, 300, 20), (2000, 2000, 50),
                    (5000, 20, 20), (5000, 100, 1), (5000, 300, 5),
                    (5000, 2000, 20)):
        jobs.append(("c-d%d-h%d-k%d" % (d, h, k), "healthy",
                     ["-k", str(k), "-d", str(d), "--op-host-us", str(h)]))
    for d, h, k in ((150, 300, 20), (10, 100, 20), (50, 20, 5), (500, 300, 5),
                    (2000, 100, 10), (5000, 300, 1), (20, 2000, 5),
                    (150, 50, 50)):
        jobs.append(("py-d%d-h%d-k%d" % (d, h, k), "loop",
                     ["-k", str(k), "-d", str(d), "--op-us", str(h)]))
    return jobs


def report_again(rundir):
    """The kept recording reported by this build; the report's JSON."""
    out = os.path.join(rundir, "again.json")
    subprocess.run([accuracy.IDLEGAP, "report", "-q", "--gaps", "-1",
                    "--json", out, os.path.join(rundir, "run.igrec")],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   check=True)
    with open(out) as f:
        return json.load(f)


def rescore(rundir, name):
    with open(os.path.join(rundir, "truth.json")) as f:
        tj = json.load(f)
    dump = accuracy.dump_lines(os.path.join(rundir, "run.igrec"))
    r = accuracy.score(name, [], tj, report_again(rundir),
                       accuracy.sync_calls(dump), accuracy.drains(dump), dump)
    return r


def summary(rows, out=sys.stdout):
    byjob = {}
    for r in rows:
        byjob.setdefault(r["job"], []).append(r)
    fmt = "%-22s %4s %5s %5s %5s %6s %6s %5s %s\n"
    out.write(fmt % ("job", "runs", "given", "in", "miss", "truth",
                     "maxerr", "near", "methods / refusals"))
    tot = given = miss = 0
    for job, rs in byjob.items():
        g = [r for r in rs if r.get("est_total") is not None]
        m = [r for r in g if not r["est_in"]]
        tot += len(rs)
        given += len(g)
        miss += len(m)
        why = sorted(set((r.get("est_method") or "refused: " +
                          (r.get("est_refused") or "?")[:40]) for r in rs))
        out.write(fmt % (job, len(rs), len(g), len(g) - len(m), len(m),
                         "%.3f" % (sum(r["est_true_idle"] for r in rs) / len(rs)),
                         "%.3f" % max((abs(r["est_err"]) for r in g), default=0),
                         sum(abs(r["est_err"]) <= 0.10 and r["est_in"] for r in g),
                         "; ".join(why)))
    out.write("runs %d, estimates given %d, truth outside %d, refused %d "
              "(%.0f%%)\n" % (tot, given, miss, tot - given,
                             100.0 * (tot - given) / tot if tot else 0))
    return miss


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--keep", metavar="DIR")
    ap.add_argument("--only", metavar="SUBSTR")
    ap.add_argument("--rescore", metavar="DIR")
    ap.add_argument("--device-off", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--scenarios", metavar="LIST",
                    help="comma-separated trainsim scenarios (SCENARIO or "
                    "SCENARIO:ARG:ARG) in place of the grid")
    ap.add_argument("--idlegap", metavar="PATH",
                    help="this idlegap binary (default build/idlegap)")
    a = ap.parse_args()
    if a.idlegap:
        accuracy.IDLEGAP = os.path.abspath(a.idlegap)
    jobs = grid()
    if a.scenarios:
        jobs = [(x, x.split(":")[0], x.split(":")[1:])
                for x in a.scenarios.split(",")]
    jobs = [j for j in jobs if not a.only or a.only in j[0]]
    if a.list:
        for name, sc, extra in jobs:
            print(name, sc, " ".join(extra))
        return 0
    if a.device_off:
        os.environ["SIMNVML_NO_SAMPLES"] = "1"
        os.environ["SIMNVML_NO_GPM"] = "1"
    rows = []
    for name, sc, extra in jobs:
        for i in range(a.runs):
            if a.rescore:
                rundir = os.path.join(a.rescore, name, "run%d" % i)
                if not os.path.exists(os.path.join(rundir, "truth.json")):
                    continue
                r = rescore(rundir, name)
            else:
                keep = os.path.join(a.keep, name, "run%d" % i) if a.keep else None
                try:
                    r = accuracy.run(sc, extra, a.seconds, keep)
                except RuntimeError as e:
                    print("estgrid.py: %s: %s" % (name, e), file=sys.stderr)
                    continue
            r["job"] = name
            rows.append(r)
            sys.stderr.write("%s run %d: %s\n" % (
                name, i, "refused" if r.get("est_total") is None else
                "%.3f in [%.3f, %.3f] truth %.3f%s" % (
                    r["est_total"], r["est_low"], r["est_high"],
                    r["est_true_idle"], "" if r["est_in"] else " MISS")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if summary(rows) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Rows 1 and 3 of the bench, this build against another (tools/bench.py
--ab): interleaved rounds, each build first in half of them.
"""
import json
import os
import statistics
import sys
import time

from common import (APP, B, BARE, FAKELIB, IG, QUICK_STEPS, SIMENV, TRAINSIM,
                    finish, guarded, out, row, rows, scratch, traced)

# ---- rows 1 and 3, this build against another (--ab) ---------------------------

def quartiles(v):
    """(lower quartile, median, upper quartile, min, max) of @v."""
    v = sorted(v)
    if len(v) < 2:
        return (v[0],) * 5
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[1], q[2], v[0], v[-1]


def ab_rounds(fns, pair, rounds):
    """Each round runs @fns in order, then the two functions of @pair, in
    turn first (AB, BA, ...); returns one list of values per function
    (@fns, then @pair's two)."""
    vals = [[] for _ in range(len(fns) + 2)]
    for r in range(rounds):
        for i, f in enumerate(fns):
            vals[i].append(f())
        order = (0, 1) if r % 2 == 0 else (1, 0)
        for k in order:
            vals[len(fns) + k].append(pair[k]())
    return vals


def ab_rows(num, what, after, before, target, limit, unit_note, raw):
    """Prints the rows of one A/B comparison from per-round ratios (after's
    and before's, over the same floor) and after/before per round; @raw,
    the rounds' measurements, goes to --json beside them."""
    quot = [a / b if b > 0 else float("inf") for a, b in zip(after, before)]
    res = {}
    for name, v in (("before", before), ("after", after), ("after/before", quot)):
        q1, med, q3, lo, hi = quartiles(v)
        res[name] = dict(median=med, q1=q1, q3=q3, min=lo, max=hi, rounds=v)
    a, b, qt = res["after"], res["before"], res["after/before"]

    def spread(x):
        return "quartiles %.2f-%.2f, range %.2f-%.2f" % (x["q1"], x["q3"],
                                                        x["min"], x["max"])
    row(num, "%s: before" % what, "%.2fx" % b["median"], "report", True,
        spread(b))
    row(num, "%s: after" % what, "%.2fx" % a["median"], target,
        a["median"] <= limit, spread(a))
    rises = sum(x > 1 for x in quot)
    # the build that runs first in a round may meet another load than the
    # second: the quotient's median over the rounds each went first
    first = "; after/before %.3fx in rounds after went first, %.3fx before" \
        % (statistics.median(quot[0::2]), statistics.median(quot[1::2]))
    # does not rise: PASS with the median quotient at most 1, MISS with its
    # lower quartile above 1; between, the rise is within the rounds' noise
    row(num, "%s: after/before" % what, "%.3fx" % qt["median"], "<= 1.00x",
        qt["median"] <= 1.0, "%s; after above before in %d of %d rounds%s%s" %
        (spread(qt), rises, len(quot), first, unit_note),
        result="NOISE" if qt["median"] > 1.0 and qt["q1"] <= 1.0 else None)
    res["raw"] = raw
    rows[-1]["ab"] = res
    return res


def over(x, floor, base):
    """(x - base) / (floor - base): what x adds against what the floor adds."""
    return (x - base) / (floor - base) if floor > base else float("inf")


def ab_probe(quick, other, rounds):
    """Row 1 for the launch entry probe: per hit, over an empty uprobe."""
    n = 30000 if quick else 300000
    loop = [APP, "--loop", str(n), "launch"]
    bare = [BARE, FAKELIB, "cuLaunchKernel", "--"] + loop

    def mine(ig):
        return lambda: float(out(traced(loop, "--libcuda", FAKELIB,
                                        "--no-nvml", ig=ig)))
    u, b, a, o = ab_rounds([lambda: float(out(loop)), lambda: float(out(bare))],
                           [mine(IG), mine(other)], rounds)
    after = [over(x, z, y) for x, y, z in zip(a, u, b)]
    before = [over(x, z, y) for x, y, z in zip(o, u, b)]
    ab_rows("1ab", "launch probe per hit / empty uprobe", after, before,
            "<= 1.15x", 1.15,
            "; medians: after %.0f ns, before %.0f ns, empty uprobe %.0f ns,"
            " untraced %.0f ns, %d hits a run"
            % (statistics.median(a), statistics.median(o),
               statistics.median(b), statistics.median(u), n),
            dict(untraced_ns=u, bare_ns=b, after_ns=a, before_ns=o))


def ab_job(quick, other, rounds):
    """Row 3 for the launch job: its added wall time over an empty uprobe's
    on the same job."""
    tmp = scratch()
    truth = os.path.join(tmp, "t.json")
    cmd = [TRAINSIM, "-s", "launch", "-q", "--truth", truth]
    if quick:
        cmd += ["-n", str(QUICK_STEPS["launch"])]

    def job(c):
        def run():
            out(c, env=SIMENV)
            with open(truth) as f:
                return json.load(f)["wall_s"]
        return run
    bare = [BARE, os.path.join(B, "simgpu", "libcuda.so.1"),
            "cuLaunchKernel", "--"] + cmd
    u, b, a, o = ab_rounds([job(cmd), job(bare)],
                           [job(traced(cmd, "--no-nvml", ig=IG)),
                            job(traced(cmd, "--no-nvml", ig=other))], rounds)
    after = [over(x, z, y) for x, y, z in zip(a, u, b)]
    before = [over(x, z, y) for x, y, z in zip(o, u, b)]
    ab_rows("3ab", "launch job added wall / empty uprobe's", after, before,
            "<= 1.10x", 1.10,
            "; medians: after %.2f s, before %.2f s, empty uprobe %.2f s,"
            " untraced %.2f s" % (statistics.median(a), statistics.median(o),
                                  statistics.median(b), statistics.median(u)),
            dict(untraced_s=u, bare_s=b, after_s=a, before_s=o))


def ab_main(a, want):
    other = os.path.abspath(a.ab)
    if not (os.path.isfile(other) and os.access(other, os.X_OK)):
        print("bench: --ab %s: not an executable file" % a.ab, file=sys.stderr)
        return 2
    if a.ab_rounds < 2 or a.ab_rounds % 2:
        print("bench: --ab-rounds %d: an even number, at least 2 (each build"
              " first as often)" % a.ab_rounds, file=sys.stderr)
        return 2
    if not want <= {"1", "3"}:
        print("bench: --ab measures rows 1 and 3 only, not %s" %
              ",".join(sorted(want - {"1", "3"})), file=sys.stderr)
        return 2
    print("bench --ab: after %s, before %s, %d rounds; load average %s" %
          (IG, other, a.ab_rounds,
           " ".join(open("/proc/loadavg").read().split()[:3])), flush=True)
    print("%-3s %-44s %14s %12s  %s" % ("row", "what", "measured", "target",
                                        "result"))
    t0 = time.monotonic()
    if "1" in want:
        guarded("1ab", ab_probe, a.quick, other, a.ab_rounds)
    if "3" in want:
        guarded("3ab", ab_job, a.quick, other, a.ab_rounds)
    return finish("bench --ab", t0, a.json)

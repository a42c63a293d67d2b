#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Rows 1, 2, 3 and 11 of the bench (tools/bench.py): what tracing adds to
a probe hit over an empty uprobe, to a syscall, to a training job end to
end, and to a data-parallel job of four ranks.
"""
import json
import os
import statistics

from common import (APP, B, BARE, FAKELIB, NCCLAPP, NCCLLIB, QUICK_STEPS,
                    SIMENV, SYSLOOP, TRAINSIM, median_of, out, row, scratch,
                    traced)

# ---- 1. per-hit probe cost against the floor -------------------------------

def probe_cost(quick):
    n = 30000 if quick else 300000
    costs = {}
    for fn, sym, ret in (("launch", "cuLaunchKernel", False),
                         ("sync", "cuStreamSynchronize", True),
                         ("query", "cuStreamQuery", True)):
        loop = [APP, "--loop", str(n), fn]
        bare = [BARE] + (["-r"] if ret else []) + [FAKELIB, sym, "--"] + loop
        mine = traced(loop, "--libcuda", FAKELIB, "--no-nvml")
        untr, b, m = median_of([lambda: float(out(loop)),
                                lambda: float(out(bare)),
                                lambda: float(out(mine))], 3 if quick else 5)
        added_bare, added_mine = b - untr, m - untr
        ratio = added_mine / added_bare if added_bare > 0 else float("inf")
        costs[fn] = dict(untraced_ns=untr, bare_ns=b, idlegap_ns=m,
                         bare_added_ns=added_bare, idlegap_added_ns=added_mine)
        row("1", "probe cost per hit: %s (%s)" % (fn, "entry+return" if ret else "entry"),
            "%.2fx" % ratio, "<= 1.15x", ratio <= 1.15,
            "%.0f ns vs bare %.0f ns (untraced %.0f ns)" % (added_mine, added_bare, untr))
    # a collective: its entry probe numbers it in its communicator
    loop = [NCCLAPP, "--loop", str(n)]
    bare = [BARE, NCCLLIB, "ncclAllReduce", "--"] + loop
    mine = traced(loop, "--no-nvml")
    untr, b, m = median_of([lambda: float(out(loop)), lambda: float(out(bare)),
                            lambda: float(out(mine))], 3 if quick else 5)
    added_bare, added_mine = b - untr, m - untr
    ratio = added_mine / added_bare if added_bare > 0 else float("inf")
    costs["nccl"] = dict(untraced_ns=untr, bare_ns=b, idlegap_ns=m,
                         bare_added_ns=added_bare, idlegap_added_ns=added_mine)
    row("1", "probe cost per hit: ncclAllReduce (entry)", "%.2fx" % ratio, "<= 1.15x",
        ratio <= 1.15, "%.0f ns vs bare %.0f ns (untraced %.0f ns)" % (added_mine, added_bare, untr))
    return costs


# ---- 2. syscall path ---------------------------------------------------------

def syscall_cost(quick):
    n = 300000 if quick else 3000000
    for kind in ("read", "futex"):
        loop = [SYSLOOP, str(n), kind]
        u, t = median_of([lambda: float(out(loop)),
                          lambda: float(out(traced(loop, "--no-nvml")))],
                         3 if quick else 5)
        row("2", "syscall path: %s" % kind, "%.3fx" % (t / u), "<= 1.10x",
            t / u <= 1.10, "%.0f ns vs %.0f ns untraced" % (t, u))


# ---- 3. end to end on the workload --------------------------------------------

def trainsim_run(scenario, mode, tmp, quick):
    """One trainsim run: untraced, under an empty uprobe on cuLaunchKernel
    ("bare"), or under idlegap.  Returns (job wall s, steps/s, probe hits)."""
    truth = os.path.join(tmp, "t.json")
    rep = os.path.join(tmp, "r.json")
    cmd = [TRAINSIM, "-s", scenario, "-q", "--truth", truth]
    if quick:
        cmd += ["-n", str(QUICK_STEPS[scenario])]
    if mode == "idlegap":
        cmd = traced(cmd, "--no-nvml", "--json", rep)
    elif mode == "bare":
        cmd = [BARE, os.path.join(B, "simgpu", "libcuda.so.1"),
               "cuLaunchKernel", "--"] + cmd
    out(cmd, env=SIMENV)
    with open(truth) as f:
        tj = json.load(f)
    hits = 0
    if mode == "idlegap":
        with open(rep) as f:
            hits = json.load(f)["events"]["kernel"]["cuda_hits"]
    # the job's own run time: what tracing costs the job, not idlegap's
    # start-up (loading programs) and report
    return tj["wall_s"], tj["steps_per_s"], hits


def end_to_end(quick, costs):
    tmp = scratch()
    rounds = 3
    for scenario in ("healthy", "launch"):
        modes = ("untraced", "idlegap") if scenario == "healthy" else \
                ("untraced", "bare", "idlegap")
        res = {m: [] for m in modes}
        for _ in range(rounds):
            for m in modes:
                res[m].append(trainsim_run(scenario, m, tmp, quick))
        med = {m: (statistics.median(r[0] for r in res[m]),
                   statistics.median(r[1] for r in res[m])) for m in modes}
        wu, su = med["untraced"]
        wt, st = med["idlegap"]
        note = "%.2f s vs %.2f s, %.0f vs %.0f steps/s" % (wt, wu, st, su)
        if scenario == "healthy":
            row("3", "end to end: healthy wall time traced/untraced",
                "%.3fx" % (wt / wu), "<= 1.02x", wt / wu <= 1.02, note)
            continue
        hits = statistics.median(r[2] for r in res["idlegap"])
        floor = hits * costs["launch"]["bare_added_ns"] / 1e9
        added = wt - wu
        ratio = added / floor if floor > 0 else float("inf")
        row("3", "end to end: launch added wall / probe floor",
            "%.2fx" % ratio, "<= 1.15x", ratio <= 1.15,
            "%s; +%.2f s for %d hits x %.0f ns = %.2f s" %
            (note, added, hits, costs["launch"]["bare_added_ns"], floor))
        bare_added = med["bare"][0] - wu
        ratio = added / bare_added if bare_added > 0 else float("inf")
        row("3", "  same, floor = empty uprobe on this job",
            "%.2fx" % ratio, "<= 1.10x", ratio <= 1.10,
            "+%.2f s vs +%.2f s (medians of %d)" % (added, bare_added, rounds))


# ---- 11. a data-parallel job (the NCCL probe's own cost is in row 1) ---------

def ranks_cost(quick):
    """A 4-rank data-parallel job (trainsim ranks on the simulated NCCL),
    its wall time traced against untraced, interleaved."""
    tmp = scratch()
    steps = "60" if quick else "200"

    def once(traced_run):
        truth = os.path.join(tmp, "t.json")
        cmd = [TRAINSIM, "ranks", "--world", "4", "-s", "balanced", "-n", steps,
               "-q", "--truth", truth]
        if traced_run:
            cmd = traced(cmd, "--no-nvml", "--json", os.path.join(tmp, "r.json"))
        out(cmd, env=SIMENV)
        with open(truth) as f:
            # the job's own time: its slowest rank's, not idlegap's start
            return max(r["wall_s"] for r in json.load(f)["ranks"])

    u, t = median_of([lambda: once(False), lambda: once(True)], 3)
    row("11", "ranks job (4 ranks, balanced): wall traced/untraced", "%.3fx" % (t / u),
        "report", True, "%.2f s vs %.2f s, the slowest rank's, medians of 3" % (t, u))

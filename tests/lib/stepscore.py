# SPDX-License-Identifier: GPL-2.0
"""Scores a report's steps (docs/design.md §4.11) against trainsim's
step_list, over the steps the report's boundaries span.

The oracle: a step's boundary is its truth end (just after its sync
returned: a feeder preempted before its clock read reads it late, by at
most its run delay in the step, which the match allows); a slow step is one slowed on purpose (slow_steps) and slow in
truth (its wall over 1.5 x the truth's p50: on a loaded host the load
may outweigh a stall), whose cause
must be the injected one, or waiting for a CPU where the kernel's own
accounting (the schedstat run delay of the feeder in the step and of the
worker that made its batch, with its queue thread's hand-off) shows a
third of the step's excess there, or host_compute where their time on a
CPU does (the worker's, and the feeder's beyond its median step's), or
peer_wait where another rank reached the step's collective last by the
simulated NCCL's trace; a report's slow step is false only
where the truth's wall time was not slow (1.5 x the truth's p50), so a
step that a loaded host really slowed is not counted against it.
"""


def pct(v, q):
    v = sorted(v)
    if not v:
        return 0.0
    k = max(1, int(q * len(v) + 0.999999))
    return v[min(k, len(v)) - 1]


def steps_obj(report, device=None, pid=None):
    if pid is not None:
        for p in report["processes"]:
            if p["pid"] == pid:
                return p.get("steps")
        return None
    if device is None:
        return report["steps"]
    for d in report["gpu"]["devices"]:
        if d.get("device") == device:
            return d["steps"]
    return None


def score(truth, st, tol_ns=1000000, arrivals=None, late=None):
    """Figures of one device's steps object against one process's truth.
    With ARRIVALS (truth.nccl_arrivals() of the job's ranks) and LATE (a
    rank): of this rank's steps slowed on purpose and slow in truth, those
    whose collective LATE reached last (late_truth), and how many of them
    the report has slow with LATE its late rank (late_named)."""
    tl = truth["step_list"]
    rl = st["list"] if st and st.get("found") else []
    r = {"found": bool(st and st.get("found")), "source": st and st.get("source")}
    if not rl:
        r.update(count_truth=len(tl), count_found=0)
        return r
    ends = sorted(x["end_ns"] for x in rl)
    lo, hi = rl[0]["start_ns"], rl[-1]["end_ns"]
    # the truth steps whose end lies inside what the report covers
    inside = [t for t in tl if lo - tol_ns <= t["end_ns"] <= hi + tol_ns]
    near = {}
    ok = 0
    import bisect
    def off(t, e):
        """How far a report's boundary E is from truth step T's end.  The
        truth's end is the feeder's clock read after its sync returned; a
        feeder preempted in between reads it late, by no more than its
        wait for a CPU in the step (schedstat's run delay): a boundary that
        early is as near as one on the end."""
        d = e - t["end_ns"]
        return d if d >= 0 else min(-d, max(0, -d - t.get("run_delay_ns", 0)))

    for t in inside:
        i = bisect.bisect_left(ends, t["end_ns"])
        best = min((off(t, ends[j]), j) for j in (i - 1, i)
                   if 0 <= j < len(ends))
        near[t["index"]] = best
        ok += best[0] <= tol_ns
    r["count_truth"] = len(inside)
    r["count_found"] = len(rl) + st.get("list_omitted", 0)
    r["boundary_share"] = ok / len(inside) if inside else 0.0
    # the percentiles of the truth's whole steps inside the report's span,
    # as the report's are of all its whole steps: a step whose boundary
    # the report missed is counted against it by the boundary share, and
    # is no less a step of the truth (left out, a long one moved the
    # truth's p99 6% below the report's).  Steps are contiguous: a truth
    # step's wall runs from the previous step's end (the feeder may be
    # preempted between that end and its own record of the next start)
    prev = {t["index"]: p["end_ns"] for p, t in zip(tl, tl[1:])}
    whole = [t for t in inside[1:] if t["index"] in prev]
    tw = [(t["end_ns"] - prev[t["index"]]) / 1e9 for t in whole]
    r["truth_p50"], r["truth_p99"] = pct(tw, 0.5), pct(tw, 0.99)
    # each end read late by at most its step's run delay: a wall may be
    # shorter by its own step's, longer by the step before's
    rdel = {t["index"]: t.get("run_delay_ns", 0) for t in tl}
    pidx = {t["index"]: p["index"] for p, t in zip(tl, tl[1:])}
    lo = [w - rdel[t["index"]] / 1e9 for w, t in zip(tw, whole)]
    hi = [w + rdel[pidx[t["index"]]] / 1e9 for w, t in zip(tw, whole)]
    for q, k in ((0.5, "p50"), (0.99, "p99")):
        r["truth_%s_lo" % k], r["truth_%s_hi" % k] = pct(lo, q), pct(hi, q)
    r["found_p50"], r["found_p99"] = st["p50_s"], st["p99_s"]
    def wall(t):
        return (t["end_ns"] - prev.get(t["index"], t["start_ns"])) / 1e9
    tp50 = pct([wall(t) for t in inside], 0.5)
    by_end = {x["end_ns"]: x for x in rl}
    slow_idx = set(st["slow"])
    injected = set(truth.get("slow_steps", []))
    hit, missed = 0, []
    nin = 0
    cpu_p50 = pct([t.get("cpu_ns", 0) for t in inside], 0.5)
    late_truth, late_named, late_other = 0, 0, []
    for t in inside:
        if t["index"] not in injected or t is inside[0]:
            continue
        d, j = near[t["index"]]
        x = by_end.get(ends[j])
        if d > tol_ns or x is None or x["partial"]:
            continue
        # slowed, but not slow: the host's load outweighed the stall
        if wall(t) <= 1.5 * tp50:
            continue
        nin += 1
        excess = max(wall(t) - tp50, 1e-9)
        # the feeder's wait for a CPU in the step, and its batch's
        # worker's while it made it
        cpu = (t.get("run_delay_ns", 0) + t.get("loader_run_delay_ns", 0)) \
            / 1e9 >= excess / 3
        # its batch's worker's time on a CPU while it made it (a cold
        # shard's opens and reads take CPU too, 6 to 10 ms a slowed
        # batch, 0.1 to 0.3 ms another, and on a loaded host its batch's
        # decode may be what the feeder still waits for), and the
        # feeder's own beyond its median step's
        extra = max(0, t.get("cpu_ns", 0) - cpu_p50)
        compute = (t.get("loader_cpu_ns", 0) + extra) / 1e9 >= excess / 3
        good = {t["cause"]} | ({"cpu_starvation"} if cpu else set()) | \
            ({"host_compute"} if compute else set())
        last = []
        if arrivals is not None:
            # the rank that reached the step's collective last, by the
            # simulated NCCL: on a loaded host another rank may be held
            # back more than the one slowed on purpose, and the rank
            # slowed on purpose then waits for it in its slowed step
            me, lo = truth.get("rank"), prev.get(t["index"], t["start_ns"])
            last = [max(g, key=g.get) for g in arrivals.values()
                    if me in g and lo < g[me] <= t["end_ns"]]
            if last and last[-1] != me:
                good.add("peer_wait")
        if x["index"] in slow_idx and x["cause"] in good:
            hit += 1
        else:
            missed.append((t["index"], x["index"] in slow_idx, x["cause"],
                           round(t.get("run_delay_ns", 0) / 1e6, 1)))
        if arrivals is not None:
            if last and last[-1] == late:
                late_truth += 1
                late_named += x["index"] in slow_idx and x.get("late_rank") == late
            elif last:
                late_other.append((t["index"], last[-1]))
    r["slow_truth"] = nin
    r["slow_recall"] = hit / nin if nin else None
    r["slow_missed"] = missed
    if arrivals is not None:
        r["late_truth"], r["late_named"] = late_truth, late_named
        r["late_other"] = late_other
    # report slow steps whose truth step was not slow
    tend = sorted((t["end_ns"], t) for t in inside)
    keys = [e for e, _ in tend]
    false = []
    nslow = 0
    for x in rl:
        if x["index"] not in slow_idx:
            continue
        nslow += 1
        i = bisect.bisect_left(keys, x["end_ns"])
        cand = [tend[j] for j in (i - 1, i) if 0 <= j < len(tend)]
        if not cand:
            continue
        e, t = min(cand, key=lambda c: abs(c[0] - x["end_ns"]))
        if abs(e - x["end_ns"]) <= tol_ns and wall(t) <= 1.5 * tp50:
            false.append(x["index"])
    r["slow_found"] = nslow
    r["slow_false_share"] = len(false) / nslow if nslow else 0.0
    r["slow_false"] = false
    return r

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Steps against the truth, for tools/truth.py's `steps`: the workload's
step_list (a ranks truth: one rank's) and the report's steps, matched and
scored, and the report's what-if means against a run without the slowed
steps.

Steps: each true step's end is matched to the nearest end of a step in
the report's list; within the tolerance it is found.  Percentiles of
step time are the truth's (end - start) and the complete (not partial)
listed steps' wall_s.  Slow recall: of the steps slowed on purpose
(slow_steps), the share whose matched report step is in the report's
"slow" with the same cause (slow_recall_any_cause: in "slow" at all);
slow false share: of the report's slow steps, the share whose nearest
true step (within the tolerance) was not slowed, or that match none.
"""

import bisect

NS = 1e9


def percentile(xs, q):
    """The q-quantile (0..1) of xs, interpolated between the closest
    ranks (as numpy's default); None for no values."""
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) * q
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def truth_steps(doc, rank=None):
    """The part of a truth document that holds step_list: itself, or in
    a ranks document (trainsim ranks --truth) rank RANK's, by default the
    first rank's."""
    if doc.get("mode") != "ranks":
        return doc
    ranks = [r for r in doc.get("ranks") or [] if r]
    for r in ranks:
        if rank is None or r.get("rank") == rank:
            return r
    raise ValueError("no rank %s in the truth" % rank)


def report_steps(report, device=None):
    """The report's steps object: top-level, or gpu.devices[DEVICE]'s."""
    if device is None:
        return report.get("steps") or {}
    devs = (report.get("gpu") or {}).get("devices") or []
    if not 0 <= device < len(devs):
        raise ValueError("no gpu.devices[%d] in the report" % device)
    return devs[device].get("steps") or {}


def _nearest(ends, t):
    """(index into ENDS, a sorted list of (end_ns, payload), nearest
    to T; distance) or (None, None)."""
    if not ends:
        return None, None
    i = bisect.bisect_left(ends, (t,))
    best = None
    for j in (i - 1, i):
        if 0 <= j < len(ends):
            d = abs(ends[j][0] - t)
            if best is None or d < best[1]:
                best = (j, d)
    return best


def _pcts(xs):
    return {"p50_s": percentile(xs, 0.50), "p90_s": percentile(xs, 0.90),
            "p99_s": percentile(xs, 0.99)}


def score_steps(truth_doc, steps, tol_ns=1000000):
    """Scores a report's steps object against a truth's step_list."""
    tl = truth_doc.get("step_list") or []
    slow_t = set(truth_doc.get("slow_steps") or [])
    lst = steps.get("list") or []
    rends = sorted((int(e["end_ns"]), k) for k, e in enumerate(lst))
    tends = sorted((int(t["end_ns"]), k) for k, t in enumerate(tl))
    match = {}  # truth index -> report entry
    dist = []
    for t in tl:
        j, d = _nearest(rends, int(t["end_ns"]))
        if j is not None and d <= tol_ns:
            match[t["index"]] = lst[rends[j][1]]
            dist.append(d)
    complete = [e for e in lst if not e.get("partial")]
    walls = [float(e["wall_s"]) if e.get("wall_s") is not None
             else (int(e["end_ns"]) - int(e["start_ns"])) / NS
             for e in complete]
    slow_r = list(steps.get("slow") or [])
    slow_rs = set(slow_r)
    by_index = {e["index"]: e for e in lst}
    tcause = {t["index"]: t.get("cause") for t in tl}
    same = anyc = 0
    missed = []  # not found slow, or not with the true cause
    for i in sorted(slow_t):
        e = match.get(i)
        cause = tcause.get(i)
        if e is not None and e["index"] in slow_rs:
            anyc += 1
            same += e.get("cause") == cause
            if e.get("cause") != cause:
                missed.append(i)
        else:
            missed.append(i)
    false = []
    for i in slow_r:
        e = by_index.get(i)
        j, d = _nearest(tends, int(e["end_ns"])) if e else (None, None)
        if j is None or d > tol_ns or tl[tends[j][1]]["index"] not in slow_t:
            false.append(i)
    return {
        "step_structure": truth_doc.get("step_structure"),
        "source": steps.get("source"),
        "count_truth": len(tl),
        "count_found": steps.get("count", len(lst)),
        "count_found_complete": len(complete),
        "count_found_partial": len(lst) - len(complete),
        "list_omitted": steps.get("list_omitted", 0),
        "tolerance_ms": tol_ns / 1e6,
        "boundaries_matched": len(match),
        "boundary_share": len(match) / len(tl) if tl else None,
        "boundary_error_ms": {"p50": percentile(dist, 0.5) / 1e6 if dist else None,
                              "max": max(dist) / 1e6 if dist else None},
        "truth": _pcts([(int(t["end_ns"]) - int(t["start_ns"])) / NS
                        for t in tl]),
        "found": _pcts(walls),
        "reported": {k: steps.get(k) for k in ("p50_s", "p90_s", "p99_s")},
        "slow_truth": len(slow_t),
        "slow_found": len(slow_r),
        "slow_recall": same / len(slow_t) if slow_t else None,
        "slow_recall_any_cause": anyc / len(slow_t) if slow_t else None,
        "slow_false_share": len(false) / len(slow_r) if slow_r else None,
        "slow_missed": missed,
        "slow_false": false,
    }


def score_what_if(steps, without, truth_doc=None):
    """The report's what-if estimates (what_if: the mean step without a
    cause) against the mean step of the same job run without the stall
    (trainsim --no-slow): error_share = (estimate - measured) / measured."""
    wl = without.get("step_list") or []
    measured = (sum(int(t["end_ns"]) - int(t["start_ns"]) for t in wl) /
                len(wl) / NS) if wl else None
    tl = (truth_doc or {}).get("step_list") or []
    mean = (sum(int(t["end_ns"]) - int(t["start_ns"]) for t in tl) /
            len(tl) / NS) if tl else None
    slowed = {t.get("cause") for t in tl
              if t["index"] in set((truth_doc or {}).get("slow_steps") or [])}
    out = []
    for w in steps.get("what_if") or []:
        est = w.get("step_mean_without_s")
        out.append({
            "cause": w.get("cause"), "steps": w.get("steps"),
            "slowed_cause": w.get("cause") in slowed,
            "estimate_s": est, "measured_s": measured,
            "error_share": (est - measured) / measured
            if est is not None and measured else None,
            "report_mean_s": w.get("step_mean_s"), "truth_mean_s": mean})
    return {"measured_mean_s": measured, "truth_mean_s": mean,
            "what_if": out}

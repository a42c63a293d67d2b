#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""torchcheck.py steps: a report's steps (docs/design.md §4.11) against
a torch.profiler trace's ProfilerStep#N spans (see torchcheck.py's
USAGE for the figures)."""
import bisect
import json
import os
import re
import sys

from torchclock import Bad, clock_fix, load, mark_offset

STEP = re.compile(r"^ProfilerStep#(\d+)$")
LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib")


def profiler_steps(tr, off):
    """The profile's ProfilerStep#N spans in CLOCK_MONOTONIC ns, by N:
    [(N, start, end)].  torch.profiler writes one for each prof.step()
    where it was given a schedule, on the host, from one call to the next;
    its category is user_annotation or cpu_op by version.  A copy on the
    GPU's rows (gpu_user_annotation) spans the step's kernels, not the
    step: left out."""
    by = {}
    for e in tr["traceEvents"]:
        if not isinstance(e, dict) or e.get("ph") != "X" or \
                str(e.get("cat", "")).startswith("gpu_"):
            continue
        m = STEP.match(str(e.get("name", "")))
        if m and int(m.group(1)) not in by:
            t0 = int(float(e["ts"]) * 1000) + off
            by[int(m.group(1))] = (int(m.group(1)), t0,
                                   t0 + int(float(e.get("dur", 0)) * 1000))
    return [by[n] for n in sorted(by)]


def profiler_whole(ps):
    """The profiler's boundaries, its prof.step() calls (every span's end
    but the last one's, which the profiler's stop cut), and its whole
    steps, from one boundary to the next: [(N, start, end)]."""
    pb = [e for _, _, e in ps[:-1]]
    whole = [(ps[i][0], pb[i - 1], pb[i]) for i in range(1, len(pb))
             if ps[i][0] == ps[i - 1][0] + 1]
    return pb, whole


def stepscore():
    """tests/lib/stepscore.py: the percentile and the report's steps
    object as tests/steps.t scores the simulator's steps with them."""
    if LIB not in sys.path:
        sys.path.insert(0, LIB)
    import stepscore
    return stepscore


def report_steps(rep):
    """The report's steps object (docs/design.md §4.11): the job's, which
    is the device with the most whole steps, or where that found none, the
    device entry with the most."""
    st = stepscore().steps_obj(rep)
    if not (st and st.get("found")):
        devs = [d.get("steps") for d in rep.get("gpu", {}).get("devices", [])]
        devs = [d for d in devs if d and d.get("found")]
        if devs:
            st = max(devs, key=lambda d: d.get("complete") or 0)
    return st


def report_runs(lst):
    """The listed steps in runs of consecutive indices (a long run's list
    holds its first steps, slow ones after them and its last ones, §4.11),
    each run as its boundaries and its whole steps [(index, start, end,
    slow)].  The first step's start is the trace's and the last one's end
    the trace's end (both partial): neither is a boundary."""
    lst = sorted(lst, key=lambda x: x["index"])
    last = lst[-1]["index"] if lst else None
    runs, prev = [], None
    for x in lst:
        if prev is None or x["index"] != prev["index"] + 1:
            runs.append(([] if x["partial"] else [int(x["start_ns"])], []))
        b, w = runs[-1]
        if not (x["partial"] and x["index"] == last):
            b.append(int(x["end_ns"]))
        if not x["partial"]:
            w.append((x["index"], int(x["start_ns"]), int(x["end_ns"]),
                      bool(x.get("slow"))))
        prev = x
    return runs


def nearest(v, t):
    """The element of sorted V nearest T."""
    i = bisect.bisect_left(v, t)
    return min((v[j] for j in (i - 1, i) if 0 <= j < len(v)),
               key=lambda x: abs(x - t))


def steps(a):
    pct = stepscore().pct
    prof = load(a.profile, "a Chrome trace")
    if not isinstance(prof.get("traceEvents"), list):
        raise Bad("%s: no traceEvents (not a Chrome trace)" % a.profile)
    rep = load(a.report, "an idlegap report")
    fix = clock_fix(prof, a)
    try:
        ps = profiler_steps(prof, mark_offset(prof) + (fix or 0))
    except (KeyError, TypeError, ValueError) as e:
        raise Bad("%s: a ProfilerStep span unread (%r)" % (a.profile, e))
    pb, pw = profiler_whole(ps)
    if len(pw) < 2:
        raise Bad("%s: %d ProfilerStep#N spans, too few to score (torch.profiler "
                  "writes them where it has a schedule and prof.step() is called)"
                  % (a.profile, len(ps)))
    try:
        st = report_steps(rep)
        found = bool(st and st.get("found"))
        runs = report_runs(st["list"]) if found else []
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise Bad("%s: no steps object as docs/design.md §4.11 has it (%r)"
                  % (a.report, e))

    def ms(ns):
        return round(ns / 1e6, 4)

    def ratio(x, y):
        return round(x / y, 4) if x is not None and y else None

    def pcts(v):
        return {k: round(pct(v, q), 6) if v else None
                for k, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))}

    p50 = pct([e - s for _, s, e in pw], 0.5)
    # one step is the same step on both sides when both its ends agree
    # this closely, after the constant phase offset is taken out
    tol = max(1e6, 0.2 * p50)
    out = {"ok": False, "failed": [],
           "found": found, "why_none": None if found else (st or {}).get("why_none"),
           "source": (st or {}).get("source"), "device": (st or {}).get("device"),
           "list_omitted": (st or {}).get("list_omitted"),
           "clock": "launches" if fix is not None else "marker",
           "marker_off_by_us": fix / 1e3 if fix is not None else None,
           "profiler_spans": len(ps), "profiler_whole_steps": len(pw)}
    # the phase: each idlegap boundary near the profile against the
    # nearest prof.step() call, twice, the second time around the first
    # median, so that an offset near half a step does not wrap around
    ib = sorted(b for r in runs for b in r[0])
    near = [b for b in ib if pb[0] - p50 / 2 <= b <= pb[-1] + p50 / 2]
    off, d = 0, []
    for _ in range(2):
        d = [b - nearest(pb, b - off) for b in near]
        off = pct(d, 0.5) if d else 0
    out["phase"] = {
        "boundaries": len(d),
        "offset_ms": ms(off) if d else None,
        "spread_ms": ms(pct(d, 0.9) - pct(d, 0.1)) if d else None,
        "offset_share": round(off / p50, 4) if d else None,
        "spread_share": round((pct(d, 0.9) - pct(d, 0.1)) / p50, 4) if d else None}
    # the span both cover: each run of listed idlegap steps (three whole
    # ones at least: the slow steps listed alone after the first ones are
    # not a span) within the profile's boundaries; a step is in it where
    # its middle is, on either side
    lo_p, hi_p = pb[0] + off, pb[-1] + off
    regions = []
    for b, w in runs:
        if len(w) >= 3 and min(b[-1], hi_p) > max(b[0], lo_p):
            regions.append((max(b[0], lo_p), min(b[-1], hi_p)))

    def inside(s, e):
        return any(lo <= (s + e) / 2 <= hi for lo, hi in regions)

    iw = [w for _, ws in runs for w in ws]
    iin = [w for w in iw if inside(w[1], w[2])]
    pin = [(n, s + off, e + off) for n, s, e in pw if inside(s + off, e + off)]
    if not regions:		# none in common: the profiler's steps alone
        pin = [(n, s + off, e + off) for n, s, e in pw]
    out["span_s"] = round(sum(hi - lo for lo, hi in regions) / 1e9, 6)
    nc_i, nc_p = len(iin), len(pin)
    out["count"] = {"idlegap": nc_i if found else None, "profiler": nc_p,
                    "ratio": ratio(nc_i, nc_p) if found else None}
    iq = pcts([(e - s) / 1e9 for _, s, e, _ in iin])
    pq = pcts([(e - s) / 1e9 for _, s, e in pin])
    rq = {k: (st or {}).get(k + "_s") for k in ("p50", "p90", "p99")}
    out["step_s"] = {"idlegap": iq, "profiler": pq,
                     "ratio": {k: ratio(iq[k], pq[k]) for k in iq},
                     "report": rq,
                     "report_ratio": {k: ratio(rq[k], pq[k]) for k in rq}}
    # one to one: a profiler step and the idlegap step whose end lies
    # nearest its own, where both ends agree within the tolerance and
    # that idlegap step is not another's already
    iends = [w[2] for w in iw]
    used = set()
    for n, s, e in pin:
        i = bisect.bisect_left(iends, e)
        c = [j for j in (i - 1, i) if 0 <= j < len(iw)]
        if not c:
            continue
        j = min(c, key=lambda j: abs(iends[j] - e))
        if j not in used and abs(iw[j][2] - e) <= tol and abs(iw[j][1] - s) <= tol:
            used.add(j)
    out["match"] = {"tolerance_ms": ms(tol), "matched": len(used), "of": nc_p,
                    "share": round(len(used) / nc_p, 4) if found and nc_p else None}
    # slow steps: the profiler's over 1.5 x its p50 (idlegap's slow rule),
    # idlegap's as it says; the same where they overlap by half the
    # shorter of the two
    pslow = [x for x in pin if (x[2] - x[1]) / 1e9 > 1.5 * (pq["p50"] or 0)]
    islow = [w for w in iin if w[3]]

    def same(s0, e0, s1, e1):
        return min(e0, e1) - max(s0, s1) >= 0.5 * min(e0 - s0, e1 - s1)

    pboth = [x[0] for x in pslow if any(same(x[1], x[2], w[1], w[2]) for w in islow)]
    iboth = [w[0] for w in islow if any(same(w[1], w[2], x[1], x[2]) for x in pslow)]
    out["slow"] = {
        "profiler": len(pslow), "idlegap": len(islow) if found else None,
        "profiler_found": len(pboth), "idlegap_confirmed": len(iboth),
        "found_share": ratio(len(pboth), len(pslow)),
        "confirmed_share": ratio(len(iboth), len(islow)),
        "profiler_steps": [x[0] for x in pslow][:20],
        "idlegap_steps": [w[0] for w in islow][:20]}

    def within(r, tol):
        return r is not None and abs(r - 1) <= tol

    checks = [("found", found),
              ("overlap", bool(regions)),
              ("count", nc_p > 0 and abs(nc_i - nc_p) <= 0.05 * nc_p),
              ("p50", within(out["step_s"]["ratio"]["p50"], 0.05)),
              ("p99", within(out["step_s"]["ratio"]["p99"], 0.15)),
              ("match", (out["match"]["share"] or 0) >= 0.9)]
    out["failed"] = [k for k, v in checks if not v] if found else ["found"]
    out["ok"] = not out["failed"]
    text = json.dumps(out, indent=1) + "\n"
    if a.json:
        try:
            with open(a.json, "w") as f:
                f.write(text)
        except OSError as e:
            raise Bad("%s: %s" % (a.json, e.strerror))
    sys.stdout.write(text)

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""idlegap against torch.profiler on a real GPU.

USAGE
    torchcheck.py train --trace PROFILE.json [--seconds S] [--workers N]
                        [--item-ms MS] [--job KIND] [--batch N] [--threads N]
        A small training loop; --job says which (default dataloader):
          dataloader  DataLoader workers spend MS of CPU per sample, so the
                      GPU waits on the host
          eager_mlp   an eager MLP with a small batch (--batch, default 8):
                      many small kernels, the GPU mostly idle between them
          gil         the eager MLP while --threads (default 2) Python
                      threads run pure-Python loops: the feeder waits for
                      the GIL between ops
        torch.profiler records
        the GPU's kernel and copy timeline into PROFILE.json (Chrome trace
        format), with a marker that maps its clock onto CLOCK_MONOTONIC,
        and a ProfilerStep#N span per iteration (prof.step() after the
        loss is read back, every step recorded).
        Run it under idlegap:
            idlegap run --gaps -1 --json R.json -- torchcheck.py train ...
    torchcheck.py compare PROFILE.json R.json [--min-gap-ms 1]
                          [--recording R.igrec [--idlegap PATH]]
        Scores idlegap's known idle gaps (R.json gpu.gap_list) against the
        profiler's GPU timeline: precision (of the time idlegap called idle,
        the share with no kernel, copy or memset on the GPU) and recall (of
        the GPU's idle time in gaps of at least --min-gap-ms inside the
        profiled window, the share idlegap called idle), and the estimate
        (docs/design.md §4.10): idle proven plus estimated, as a share of
        idlegap's GPU span, against the profiler's idle share of its
        window ("estimate_ok": within 0.10; "truth_in_interval").
        With --recording, the profile's clock is set by the submissions
        both saw rather than by its marker alone ("clock": "launches").
        Prints JSON.
    torchcheck.py steps PROFILE.json R.json [--recording R.igrec
                        [--idlegap PATH]] [--json OUT]
        Scores idlegap's steps (R.json steps, docs/design.md §4.11: the
        job's object, or the device entry with the most whole steps)
        against the profile's ProfilerStep#N spans, its clock mapped as
        compare maps it, over the span both cover (the runs of steps the
        report lists, within the profiler's first and last prof.step()):
          count     whole steps of each, and their ratio
          step_s    wall time p50, p90, p99 of each over those steps, and
                    idlegap / profiler; the report's own figures (all its
                    whole steps) beside them
          phase     each idlegap boundary less the nearest prof.step():
                    median (offset_ms; idlegap cuts at a sync inside the
                    iteration, so it is nearly constant) and p90 - p10
                    (spread_ms), also as shares of the profiler's p50
          match     the share of profiler steps that one idlegap step
                    matches, both ends within max(1 ms, 20% of the p50)
                    once the offset is taken out
          slow      steps over 1.5 x the p50 on each side, and how many
                    overlap one of the other's
        "ok" where steps were found, the count within 5% of the
        profiler's, p50 within 5%, p99 within 15% and the match share
        0.9 at least ("failed" names the rest).  Prints JSON (and into
        OUT); exit 0 whatever the score, 2 with one line on stderr for
        input it cannot read.

EXAMPLES
    for j in eager_mlp gil dataloader; do
        idlegap run --gaps -1 --json $j.json -o $j.igrec -- \
            torchcheck.py train --job $j --trace $j.prof.json
        torchcheck.py compare $j.prof.json $j.json
        torchcheck.py steps --recording $j.igrec $j.prof.json $j.json
    done
"""

import argparse
import bisect
import json
import os
import re
import sys
import time

MARK = "idlegap_clock_mark"
STEP = re.compile(r"^ProfilerStep#(\d+)$")
LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib")


class Bad(Exception):
    """An input that cannot be read or used: one line on stderr."""


def train(a):
    import torch
    from torch.profiler import (ProfilerAction, ProfilerActivity, profile,
                                record_function)

    class Slow(torch.utils.data.Dataset):
        def __len__(self):
            return 1 << 20

        def __getitem__(self, i):
            end = time.perf_counter() + a.item_ms / 1000.0
            x = 0.0
            while time.perf_counter() < end:  # host-side preprocessing
                x += 1.0
            return torch.randn(512), torch.randint(0, 10, ()).long()

    class Eager:
        """Batches made on the host in the loop itself: no workers."""
        def __next__(self):
            return torch.randn(a.batch, 512), torch.randint(0, 10, (a.batch,)).long()

    def spin():  # pure Python: holds the GIL between its switches
        x = 0
        while not stop:
            x += 1

    stop = False
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    if a.job == "dataloader":
        it = iter(torch.utils.data.DataLoader(Slow(), batch_size=32,
                                              num_workers=a.workers))
    else:
        it = Eager()
    threads = []
    if a.job == "gil":
        import threading
        threads = [threading.Thread(target=spin, daemon=True)
                   for _ in range(a.threads)]
        for t in threads:
            t.start()
    for _ in range(3):  # warm-up outside the profiled window
        x, y = next(it)
        torch.nn.functional.cross_entropy(model(x.to(dev)), y.to(dev)).item()
    torch.cuda.synchronize()
    steps = 0
    # A schedule is what makes the profiler write a ProfilerStep#N span per
    # p.step() (without one it writes none); this one records every step,
    # as the default does.
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=lambda step: ProfilerAction.RECORD) as p:
        with record_function(MARK):
            mono = time.monotonic_ns()
        end = time.monotonic() + a.seconds
        while time.monotonic() < end:
            x, y = next(it)
            loss = torch.nn.functional.cross_entropy(model(x.to(dev)),
                                                     y.to(dev))
            opt.zero_grad()
            loss.backward()
            opt.step()
            # a sync per step, as most training loops have: idlegap's step
            # boundary (docs/design.md §4.11) is this sync's return, the
            # profiler's the p.step() just after it
            loss.item()
            p.step()
            steps += 1
        torch.cuda.synchronize()
    stop = True
    for t in threads:
        t.join()
    p.export_chrome_trace(a.trace)
    with open(a.trace) as f:
        tr = json.load(f)
    tr["idlegap_mark_monotonic_ns"] = mono
    with open(a.trace, "w") as f:
        json.dump(tr, f)
    print("torchcheck: %s: %d steps in %.1f s" % (a.job, steps, a.seconds))


def merge(ivs):
    out = []
    for s, e in sorted(ivs):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def overlap(a, b):
    """Total length of the intersection of two merged interval lists."""
    i = j = 0
    tot = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            tot += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tot


def mark_offset(tr):
    """The profile's clock onto CLOCK_MONOTONIC by its marker (ns)."""
    mark = [e for e in tr["traceEvents"] if e.get("name") == MARK and e.get("ph") == "X"]
    if not mark or "idlegap_mark_monotonic_ns" not in tr:
        raise Bad("no clock marker in the profile")
    return tr["idlegap_mark_monotonic_ns"] - int(float(mark[0]["ts"]) * 1000)


def launch_offset(tr, recording, idlegap):
    """A correction to the marker's offset (ns), from the submissions both
    saw: the profile's launch and copy calls on the CPU against the entry
    times of the submissions in the recording's launch records.  The
    marker is read by Python, so a thread waiting for the GIL (the gil
    job) can put it milliseconds off; the calls are the same events on
    both sides.  None when too few match."""
    import subprocess
    try:
        r = subprocess.run([idlegap, "report", "--dump", recording], capture_output=True,
                           text=True)
    except OSError as e:
        raise Bad("%s: %s" % (idlegap, e.strerror))
    if r.returncode:
        why = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        raise Bad("%s report --dump %s: %s" % (idlegap, recording, why))
    dump = r.stdout
    ours = []
    for line in dump.splitlines():
        f = line.split()
        if len(f) > 2 and f[1] == "launches":
            ours += [int(x.split(":")[0]) for x in f[2:] if x.count(":") == 3]
    ours.sort()
    off = mark_offset(tr)
    theirs = sorted(int(float(e["ts"]) * 1000) + off for e in tr["traceEvents"]
                    if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
                    and ("Launch" in e.get("name", "") or "Memcpy" in e.get("name", "")
                         or "Memset" in e.get("name", "")))
    if len(ours) < 20 or len(theirs) < 20:
        return None
    # the most common difference to a submission within 100 ms, in 20 us bins
    votes = {}
    for t in theirs[:: max(1, len(theirs) // 400)]:
        i = bisect.bisect_left(ours, t - 100000000)
        while i < len(ours) and ours[i] <= t + 100000000:
            b = (ours[i] - t) // 20000
            votes[b] = votes.get(b, 0) + 1
            i += 1
    coarse = max(votes, key=votes.get) * 20000 + 10000
    # then the median distance to the nearest submission around it
    d = []
    for t in theirs:
        i = bisect.bisect_left(ours, t + coarse - 50000)
        if i < len(ours) and abs(ours[i] - (t + coarse)) <= 50000:
            d.append(ours[i] - t)
    if len(d) < 20:
        return None
    d.sort()
    return d[len(d) // 2]


def gpu_busy(tr, extra_ns=0):
    """GPU activity from the profile, in CLOCK_MONOTONIC ns."""
    ev = tr["traceEvents"]
    off = mark_offset(tr) + extra_ns
    busy = [(int(float(e["ts"]) * 1000) + off,
             int((float(e["ts"]) + float(e.get("dur", 0))) * 1000) + off)
            for e in ev if e.get("ph") == "X" and
            e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    return merge(busy)


def inside_events(tr, gaps, off_ns, limit=12):
    """The profile's GPU events that lie more than 20 us inside a proven
    gap: name, category, stream, and where in the gap."""
    ev = tr["traceEvents"]
    off = mark_offset(tr) + off_ns
    out = []
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        s0 = int(float(e["ts"]) * 1000) + off
        e0 = int((float(e["ts"]) + float(e.get("dur", 0))) * 1000) + off
        for gs, ge in gaps:
            if s0 < ge - 20000 and e0 > gs + 20000:
                args = e.get("args", {})
                out.append({"name": e.get("name", "")[:60], "cat": e.get("cat"),
                            "stream": args.get("stream"), "device": args.get("device"),
                            "dur_us": float(e.get("dur", 0)),
                            "after_gap_start_us": (s0 - gs) / 1e3,
                            "before_gap_end_us": (ge - e0) / 1e3})
                break
        if len(out) >= limit:
            break
    return out


def load(path, what):
    try:
        with open(path) as f:
            j = json.load(f)
    except OSError as e:
        raise Bad("%s: %s" % (path, e.strerror))
    except ValueError as e:
        raise Bad("%s: not JSON (%s)" % (path, e))
    if not isinstance(j, dict):
        raise Bad("%s: not %s" % (path, what))
    return j


def clock_fix(prof, a):
    """The correction to the marker's offset (ns) by the launches, with
    --recording; None without, or where too few matched."""
    return launch_offset(prof, a.recording, a.idlegap) if a.recording else None


def compare(a):
    prof = load(a.profile, "a Chrome trace")
    fix = clock_fix(prof, a)
    busy = gpu_busy(prof, fix or 0)
    rep = load(a.report, "an idlegap report")
    lo, hi = busy[0][0], busy[-1][1]
    gaps = merge([(max(g["start_ns"], lo), min(g["end_ns"], hi))
                  for g in rep["gpu"]["gap_list"]
                  if g["end_ns"] > lo and g["start_ns"] < hi])
    marked = sum(e - s for s, e in gaps)
    wrong = overlap(gaps, busy)
    # The profile's GPU times reach CLOCK_MONOTONIC through one CPU-side
    # marker, so they may sit a few microseconds off as a whole: the busy
    # time inside proven gaps with the profile shifted by -20..20 us says
    # whether what is marked busy is that offset or a wrong gap.
    by_shift = {sh: overlap(gaps, [(x + sh * 1000, y + sh * 1000) for x, y in busy])
                for sh in range(-200, 201, 4)}
    best = min(by_shift, key=lambda k: (by_shift[k], abs(k)))
    # where the busy time inside proven gaps lies: within 20 us of a gap's
    # edge (an offset or the drained point's lag) or deeper inside
    edge = inner = 0
    hit_gaps = 0
    j = 0
    for s0, e0 in gaps:
        while j < len(busy) and busy[j][1] <= s0:
            j += 1
        k, hit = j, False
        while k < len(busy) and busy[k][0] < e0:
            x, y = max(s0, busy[k][0]), min(e0, busy[k][1])
            if y > x:
                hit = True
                near = max(0, min(y, s0 + 20000) - x) + max(0, y - max(x, e0 - 20000))
                near = min(near, y - x)
                edge += near
                inner += y - x - near
            k += 1
        hit_gaps += hit
    # true idle: holes between GPU activity, of at least min-gap
    holes = [(busy[i][1], busy[i + 1][0]) for i in range(len(busy) - 1)
             if busy[i + 1][0] - busy[i][1] >= a.min_gap_ms * 1e6]
    true_idle = sum(e - s for s, e in holes)
    found = overlap(merge(holes), gaps)
    span = hi - lo
    g = rep["gpu"]
    true_share = 1 - sum(e - s for s, e in busy) / span
    est = g.get("idle_estimated_s")
    gspan = g.get("span_s") or 0
    total = (g["idle_s"] + est) / gspan if est is not None and gspan else None
    low = (g["idle_s"] + g["idle_estimated_low_s"]) / gspan if total is not None else None
    high = (g["idle_s"] + g["idle_estimated_high_s"]) / gspan if total is not None else None
    # the bounds' lower end (design §4.10), apart from the estimate: it
    # may stand where the point is refused, and must not exceed the truth
    least = g.get("idle_at_least_s")
    least = (g["idle_s"] + least) / gspan if least is not None and gspan else None
    out = {
        "window_s": span / 1e9,
        "gpu_busy_s": sum(e - s for s, e in busy) / 1e9,
        "true_idle_s": true_idle / 1e9,
        "true_gaps": len(holes),
        "marked_idle_s": marked / 1e9,
        "marked_busy_s": wrong / 1e9,
        "precision": (marked - wrong) / marked if marked else None,
        "clock": "launches" if fix is not None else "marker",
        "marker_off_by_us": fix / 1e3 if fix is not None else None,
        "best_shift_us": best,
        "gaps_with_busy": hit_gaps,
        "busy_in_gaps_near_edge_s": edge / 1e9,
        "busy_in_gaps_inside_s": inner / 1e9,
        "precision_at_best_shift": (marked - by_shift[best]) / marked if marked else None,
        "inside_examples": inside_events(prof, gaps, (fix or 0) + best * 1000),
        "recall": found / true_idle if true_idle else None,
        "idlegap_gaps_in_window": len(gaps),
        "api_hits": rep.get("cuda", {}).get("api_hits"),
        "libcuda": rep.get("cuda", {}).get("libcuda"),
        "first_cause": (rep.get("causes") or [{}])[0].get("cause"),
        # the estimate: shares of the span, proven + estimated idle
        "true_idle_share": true_share,
        "proven_idle_share": g["idle_s"] / gspan if gspan else None,
        "estimated_total_idle_share": total,
        "estimated_interval": [low, high] if total is not None else None,
        "estimate_error": total - true_share if total is not None else None,
        "estimate_ok": abs(total - true_share) <= 0.10 if total is not None else None,
        "truth_in_interval": low <= true_share <= high if total is not None else None,
        "estimate_refused": g.get("estimate_refused"),
        "idle_at_least_share": least,
        "at_least_ok": least <= true_share if least is not None else None,
        "estimate_method": g.get("estimate_method"),
        "estimate_fit": g.get("estimate_fit"),
        "estimated_causes": g.get("estimated_causes"),
    }
    json.dump(out, sys.stdout, indent=1)
    print()


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--trace", required=True)
    t.add_argument("--seconds", type=float, default=8.0)
    t.add_argument("--workers", type=int, default=2)
    t.add_argument("--item-ms", type=float, default=0.5)
    t.add_argument("--job", choices=("dataloader", "eager_mlp", "gil"),
                   default="dataloader")
    t.add_argument("--batch", type=int, default=8)
    t.add_argument("--threads", type=int, default=2)
    c = sub.add_parser("compare")
    c.add_argument("profile")
    c.add_argument("report")
    c.add_argument("--min-gap-ms", type=float, default=1.0)
    c.add_argument("--recording", help="the run's recording (idlegap run -o): "
                   "aligns the clocks on the submissions both saw")
    c.add_argument("--idlegap", default="build/idlegap")
    s = sub.add_parser("steps")
    s.add_argument("profile")
    s.add_argument("report")
    s.add_argument("--recording", help="the run's recording (idlegap run -o): "
                   "aligns the clocks on the submissions both saw")
    s.add_argument("--idlegap", default="build/idlegap")
    s.add_argument("--json", metavar="OUT", help="the JSON into OUT too")
    a = ap.parse_args()
    try:
        {"train": train, "compare": compare, "steps": steps}[a.cmd](a)
    except Bad as e:
        print("torchcheck: %s" % e, file=sys.stderr)
        sys.exit(2 if a.cmd == "steps" else 1)


if __name__ == "__main__":
    main()

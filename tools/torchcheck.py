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
import json
import sys
import time

from torchclock import MARK, Bad, clock_fix, load, mark_offset
from torchsteps import steps


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

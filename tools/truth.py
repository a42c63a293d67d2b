#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Ground truth for GPU idle time, from simgpu trace files.

A trace line is "<kind> <stream> <start_ns> <end_ns>" (CLOCK_MONOTONIC).
The GPU is busy during the union of all ops of all files, idle otherwise.

USAGE
    truth.py union TRACE...
        Busy, idle and span of the traces, as JSON.
    truth.py score --truth TRACE... --report IDLEGAP.json [--min-gap-ms 1]
        Precision and recall of idlegap's known idle gaps (gpu.gap_list)
        against the traces, as JSON.  TRACE may be a quoted glob.
    truth.py nccl TRACE...
        Per process, communicator and rank of simnccl truth files
        (SIMNCCL_TRACE): tasks, time waited for peers (last - arrive)
        and transferring (end - start), and the waits as intervals.
    truth.py steps --truth TRUTH.json --report IDLEGAP.json
                   [--tolerance-ms 1] [--rank R] [--device N]
                   [--without NO_SLOW_TRUTH.json]
        idlegap's steps (the report's "steps", or gpu.devices[N]'s)
        against the workload's step_list (a ranks truth: rank R's, by
        default the first), as JSON; with --without, the report's what-if
        step means against the same job run with --no-slow.
    truth.py selftest
        Checks the arithmetic on synthetic traces and reports.

The steps' matching and scores are tools/truth_steps.py.

Precision: of the seconds idlegap marked known idle, the share the GPU
really was idle.  Recall: of the truly idle seconds that lie in true idle
gaps of at least --min-gap-ms (clipped to idlegap's observed span,
gpu.span_start_ns..gpu.span_end_ns, when the report has it), the share
idlegap marked known idle.
"""

import argparse
import bisect
import glob
import json
import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth_steps import (report_steps, score_steps, score_what_if,  # noqa: E402
                         truth_steps)

NS = 1e9


def read_traces(paths):
    """Intervals [start, end) from trace files; globs are expanded."""
    files, ivs = [], []
    for p in paths:
        matches = sorted(glob.glob(p)) or [p]
        for f in matches:
            files.append(f)
            with open(f) as fh:
                for line in fh:
                    parts = line.split()
                    if len(parts) != 4:
                        continue
                    try:
                        a, b = int(parts[2]), int(parts[3])
                    except ValueError:
                        continue
                    if b >= a:
                        ivs.append((a, b))
    return files, ivs


def late_ends(dump, ivs, min_ns=1000000):
    """What no host evidence could show: [end, ran] for each op end the
    simulated GPU's device thread ran again more than min_ns after (a
    loaded VM delays even its real-time timers, and a woken thread waits
    for a CPU: up to 24 ms seen on 2 CPUs beside two CPU-bound loops). The
    GPU's end reached the host no sooner, so the idle time inside is in
    the truth but beyond any proof. From the lines of `idlegap report
    --dump`: each clock_nanosleep (a device thread's sleep to an op's end)
    against the last op end it slept past, up to the record's time (the
    thread back on a CPU), as the simulator's own SIMGPU_LATE log
    (read_late) measures it."""
    ends = sorted(y for _, y in ivs)
    out = []
    for line in dump:
        v = line.split()
        if len(v) < 3 or v[1] != "offcpu" or "reason=sleep" not in v or "syscall=230" not in v:
            continue
        f = dict(x.split("=", 1) for x in v[2:] if "=" in x)
        off, wake = int(f.get("off", 0)), int(f.get("wake", 0))
        ran = max(wake, int(v[0])) if v[0].isdigit() else wake
        i = bisect.bisect_right(ends, wake)
        if wake and i and ends[i - 1] > off and ran - ends[i - 1] > min_ns:
            out.append((ends[i - 1], ran))
    return merge(out)


def hidden_idle(late, ivs, lo=None, hi=None):
    """Nanoseconds of the trace's idle time inside the late spans (of
    late_ends or read_late, merged or not), within [lo, hi] where given:
    what no host evidence could show."""
    late = merge(late)
    if lo is not None:
        late = clip(late, lo, hi)
    return total(late) - total(intersect(late, merge(ivs)))


def read_late(paths):
    """[end, woke] intervals from the simulated GPU's SIMGPU_LATE logs
    (docs/simgpu.md): op ends its device thread woke over 1 ms after, the
    same spans late_ends() finds in a recording; globs are expanded."""
    out = []
    for p in paths:
        for f in sorted(glob.glob(p)) or [p]:
            try:
                fh = open(f)
            except OSError:
                continue
            with fh:
                for line in fh:
                    v = line.split()
                    if len(v) == 4 and v[0] == "late":
                        out.append((int(v[2]), int(v[3])))
    return merge(out)


def merge(ivs):
    """Sorted, disjoint union of intervals."""
    out = []
    for a, b in sorted(ivs):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1][1] = b
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def total(ivs):
    return sum(b - a for a, b in ivs)


def intersect(x, y):
    """Intersection of two merged interval lists."""
    out, i, j = [], 0, 0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if a < b:
            out.append((a, b))
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def holes(busy, min_len=0):
    """Idle gaps between merged busy intervals, at least min_len long."""
    return [(busy[k][1], busy[k + 1][0]) for k in range(len(busy) - 1)
            if busy[k + 1][0] - busy[k][1] >= min_len]


def clip(ivs, lo, hi):
    return [(max(a, lo), min(b, hi)) for a, b in ivs
            if min(b, hi) > max(a, lo)]


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def thread_counters(pid, tid):
    """The kernel's own accounting of one thread, or None once it is
    gone: time on CPU and runnable but waiting for a CPU (schedstat),
    block IO delay (stat field 42, in clock ticks; counted while
    kernel.task_delayacct is on), voluntary and involuntary switches."""
    d = "/proc/%d/task/%d/" % (pid, tid)
    sched, stat = _read(d + "schedstat").split(), _read(d + "stat")
    if len(sched) < 2 or ")" not in stat:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # field 3 onwards
    c = {"pid": pid, "tid": tid, "comm": _read(d + "comm").strip(),
         "cpu_ns": int(sched[0]), "run_delay_ns": int(sched[1]),
         "blkio_ns": int(fields[39]) * (1000000000 // os.sysconf("SC_CLK_TCK")),
         "vol": 0, "invol": 0}
    for line in _read(d + "status").splitlines():
        k, _, v = line.partition(":")
        if k == "voluntary_ctxt_switches":
            c["vol"] = int(v)
        elif k == "nonvoluntary_ctxt_switches":
            c["invol"] = int(v)
    return c


def delayacct_on():
    """Whether the kernel counts block IO delay now: kernel.task_delayacct
    from 5.14 on (off by default); before it, a kernel counts unless it was
    booted with nodelayacct."""
    if os.path.exists("/proc/sys/kernel/task_delayacct"):
        return _read("/proc/sys/kernel/task_delayacct").strip() == "1"
    return "nodelayacct" not in _read("/proc/cmdline").split()


def accounting_sample(roles):
    """Every thread of the processes in ROLES ({pid: {tid or 0: role}},
    0 standing for a thread not named), now."""
    stat = _read("/proc/stat").split("\n", 1)[0].split()[1:9]
    busy = sum(int(stat[i]) for i in (0, 1, 2, 5, 6, 7)) if len(stat) == 8 else 0
    out = {"delayacct": delayacct_on(),
           "host_busy_ns": busy * (1000000000 // os.sysconf("SC_CLK_TCK")),
           "mono_ns": time.monotonic_ns(), "threads": []}
    for pid, named in roles.items():
        try:
            tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
        except OSError:
            continue
        for tid in tids:
            c = thread_counters(pid, tid)
            if c:
                c["role"] = named.get(tid, named.get(0, "other"))
                out["threads"].append(c)
    return out


def accounting_since(start, end):
    """What each thread of END did since START (all its life if it came
    later): the feeding threads' figures over a run (see workload/acct.c,
    which writes the same "accounting" object)."""
    before = {t["tid"]: t for t in start["threads"]}
    threads = []
    for t in end["threads"]:
        d, b = dict(t), before.get(t["tid"], {})
        for k in ("cpu_ns", "run_delay_ns", "blkio_ns", "vol", "invol"):
            d[k] = max(0, t[k] - b.get(k, 0))
        threads.append(d)
    return {"delayacct": start["delayacct"] and end["delayacct"],
            "cpus": os.cpu_count(), "wall_ns": end["mono_ns"] - start["mono_ns"],
            "host_busy_ns": max(0, end["host_busy_ns"] - start["host_busy_ns"]),
            "threads": threads}


def union_report(paths):
    files, ivs = read_traces(paths)
    busy = merge(ivs)
    out = {"files": files, "ops": len(ivs), "busy_s": total(busy) / NS}
    if busy:
        start, end = busy[0][0], busy[-1][1]
        span = end - start
        out.update(span_start_ns=start, span_end_ns=end, span_s=span / NS,
                   idle_s=(span - total(busy)) / NS,
                   idle_share=(span - total(busy)) / span if span else 0.0,
                   gaps=len(holes(busy)))
    else:
        out.update(span_start_ns=None, span_end_ns=None, span_s=0.0,
                   idle_s=0.0, idle_share=0.0, gaps=0)
    return out


def gap_intervals(lst):
    return merge((int(g["start_ns"]), int(g["end_ns"])) for g in lst or []
                 if int(g["end_ns"]) > int(g["start_ns"]))


def score(busy_ivs, report, min_gap_ns=1000000):
    """Scores a report (parsed idlegap JSON) against busy intervals."""
    busy = merge(busy_ivs)
    gpu = report.get("gpu", {}) or {}
    marked = gap_intervals(gpu.get("gap_list"))
    unresolved = gap_intervals(gpu.get("unresolved_list"))
    true_gaps = holes(busy, min_gap_ns)
    lo, hi = gpu.get("span_start_ns"), gpu.get("span_end_ns")
    if lo is not None and hi is not None:
        true_gaps = clip(true_gaps, int(lo), int(hi))
    marked_len = total(marked)
    marked_busy = total(intersect(marked, busy))
    eligible = total(true_gaps)
    found = total(intersect(marked, true_gaps))
    return {
        "precision": (marked_len - marked_busy) / marked_len
                     if marked_len else None,
        "recall": found / eligible if eligible else None,
        "marked_idle_s": marked_len / NS,
        "marked_busy_s": marked_busy / NS,
        "true_idle_s": eligible / NS,
        "true_gaps": len(true_gaps),
        "recalled_idle_s": found / NS,
        "unresolved_s": total(unresolved) / NS,
        "unresolved_true_idle_s":
            (total(unresolved) - total(intersect(unresolved, busy))) / NS,
        "min_gap_ms": min_gap_ns / 1e6,
        "observed_span": [lo, hi] if lo is not None else None,
    }


NCCL_FIELDS = 14


def nccl_tasks(paths, files=None):
    """The tasks of simnccl's trace files (globs allowed), one tuple each:
    (fields, rank, nranks, peer, pid, arrive, last, start, end), with the
    fields of the line split; lines of any other shape are skipped.  The
    files read are appended to FILES."""
    for p in paths:
        for f in sorted(glob.glob(p)) or [p]:
            if files is not None:
                files.append(f)
            with open(f) as fh:
                for line in fh:
                    v = line.split()
                    if len(v) != NCCL_FIELDS:
                        continue
                    try:
                        rank, nranks, peer, pid = int(v[2]), int(v[3]), int(v[5]), int(v[13])
                        arrive, last, start, end = map(int, v[7:11])
                    except ValueError:
                        continue
                    yield v, rank, nranks, peer, pid, arrive, last, start, end


def nccl_report(paths):
    """Waits for peers and transfers of simnccl's collectives, per
    (pid, communicator, rank), and how long peers waited for each rank
    (`waited_for_s`: the truth of which rank was late); lines of any other
    shape are skipped."""
    files, ranks, groups = [], {}, {}
    for v, rank, nranks, peer, pid, arrive, last, start, end in nccl_tasks(paths, files):
        r = ranks.setdefault((pid, v[1], rank), {
            "pid": pid, "comm": v[1], "rank": rank,
            "nranks": nranks, "tasks": 0, "aborted": 0,
            "wait_ns": 0, "transfer_ns": 0, "waits": []})
        r["tasks"] += 1
        r["aborted"] += v[12] != "ok"
        r["wait_ns"] += max(0, last - arrive)
        r["transfer_ns"] += max(0, end - start)
        if last > arrive:
            r["waits"].append([arrive, last])
        # one task of a collective: its communicator and sequence (a send
        # or receive: and its pair of ranks)
        g = (v[1], v[4]) if peer < 0 else (v[1], v[4], min(rank, peer), max(rank, peer))
        groups.setdefault(g, []).append((arrive, last, (pid, v[1], rank)))
    # the time peers waited for each rank: a task's wait is charged to
    # the tasks of its group that arrived last (split where they tie)
    waited_for = {}
    for rows in groups.values():
        last = max(a for a, _, _ in rows)
        lates = [k for a, _, k in rows if a == last]
        wait = sum(max(0, l - a) for a, l, _ in rows)
        for k in lates:
            waited_for[k] = waited_for.get(k, 0) + wait / len(lates)
    out = []
    for key in sorted(ranks):
        r = ranks[key]
        r["waited_for_s"] = waited_for.get(key, 0) / NS
        r["wait_s"] = r.pop("wait_ns") / NS
        r["transfer_s"] = r.pop("transfer_ns") / NS
        r["waits"] = [list(w) for w in merge(r["waits"])]
        out.append(r)
    return {"files": files, "ranks": out,
            "wait_s": sum(r["wait_s"] for r in out),
            "transfer_s": sum(r["transfer_s"] for r in out)}


def nccl_arrivals(paths):
    """Each all-rank collective of simnccl's trace files: {(communicator,
    sequence): {rank: arrive_ns}} (sends and receives left out)."""
    groups = {}
    for v, rank, _, peer, _, arrive, _, _, _ in nccl_tasks(paths):
        if peer < 0:
            groups.setdefault((v[1], v[4]), {})[rank] = arrive
    return groups


def selftest():
    failures = 0

    def check(name, got, want):
        nonlocal failures
        good = (got is None and want is None) or (
            got is not None and want is not None and abs(got - want) < 1e-9)
        print("%s - truth selftest: %s" % ("ok" if good else "not ok", name))
        if not good:
            print("#   got %r, want %r" % (got, want))
            failures += 1

    ms = 1000000
    # Busy 0-10, 12-20 (2 ms gap), 20.5-30 (0.5 ms gap), 40-50 (10 ms gap).
    busy = [(0, 10 * ms), (12 * ms, 20 * ms), (20500000, 30 * ms),
            (40 * ms, 45 * ms), (44 * ms, 50 * ms)]
    with tempfile.TemporaryDirectory() as d:
        for n, part in enumerate((busy[:2], busy[2:])):
            with open(os.path.join(d, "t.%d" % n), "w") as f:
                for a, b in part:
                    f.write("kernel legacy %d %d\n" % (a, b))
            with open(os.path.join(d, "t.%d" % n), "a") as f:
                f.write("kernel torn 123")  # a killed writer's last line
        files, ivs = read_traces([os.path.join(d, "t.*")])
        check("glob finds both files", len(files), 2)
        u = union_report([os.path.join(d, "t.*")])
    check("ops", u["ops"], 5)
    check("busy", u["busy_s"], 0.0375)
    check("idle", u["idle_s"], 0.0125)
    check("span", u["span_s"], 0.050)

    perfect = {"gpu": {"gap_list": [
        {"start_ns": 10 * ms, "end_ns": 12 * ms, "tid": 1},
        {"start_ns": 20 * ms, "end_ns": 20500000, "tid": 1},
        {"start_ns": 30 * ms, "end_ns": 40 * ms, "tid": 1}]}}
    s = score(busy, perfect)
    check("perfect precision", s["precision"], 1.0)
    check("perfect recall", s["recall"], 1.0)
    check("eligible idle skips the 0.5 ms gap", s["true_idle_s"], 0.012)

    # Half of the 10 ms gap, plus 1 ms that was busy.
    partial = {"gpu": {"gap_list": [
        {"start_ns": 35 * ms, "end_ns": 41 * ms, "tid": 1}],
        "unresolved_list": [{"start_ns": 9 * ms, "end_ns": 12 * ms}]}}
    s = score(busy, partial)
    check("partial precision", s["precision"], 5 / 6)
    check("partial recall", s["recall"], 5 / 12)
    check("unresolved", s["unresolved_s"], 0.003)
    check("unresolved truly idle", s["unresolved_true_idle_s"], 0.002)

    # The observed span cuts the 10 ms gap to 5 ms; overlapping gaps from
    # two contexts count once.
    clipped = {"gpu": {"span_start_ns": 0, "span_end_ns": 35 * ms,
                       "gap_list": [
                           {"start_ns": 30 * ms, "end_ns": 35 * ms},
                           {"start_ns": 31 * ms, "end_ns": 34 * ms}]}}
    s = score(busy, clipped)
    check("span clips eligible idle", s["true_idle_s"], 0.007)
    check("clipped recall", s["recall"], 5 / 7)
    check("overlaps count once", s["marked_idle_s"], 0.005)
    check("nothing marked", score(busy, {"gpu": {}})["precision"], None)

    # simnccl: two ranks of one all-reduce, rank 0 waits 3 ms for rank 1;
    # a driver line in the same file is not a collective.
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "n"), "w") as f:
            f.write("allreduce c0 0 2 1 -1 64 %d %d %d %d s ok 10\n"
                    % (0, 3 * ms, 3 * ms, 4 * ms))
            f.write("allreduce c0 1 2 1 -1 64 %d %d %d %d s ok 11\n"
                    % (3 * ms, 3 * ms, 3 * ms, 4 * ms))
            f.write("kernel legacy 0 4000000\n")
        n = nccl_report([os.path.join(d, "n")])
    check("nccl ranks", len(n["ranks"]), 2)
    check("nccl wait", n["ranks"][0]["wait_s"], 0.003)
    check("nccl late rank waits 0", n["ranks"][1]["wait_s"], 0.0)
    check("nccl: rank 1 was waited for", n["ranks"][1]["waited_for_s"], 0.003)
    check("nccl: nobody waited for rank 0", n["ranks"][0]["waited_for_s"], 0.0)
    check("nccl transfer", n["transfer_s"], 0.002)
    check("nccl wait interval", n["ranks"][0]["waits"][0][1], 3 * ms)
    # late spans 8-14 and 13-16 ms over busy 0-10, 12-20: idle 10-12 inside
    check("hidden idle", hidden_idle([(8 * ms, 14 * ms), (13 * ms, 16 * ms)], busy),
          2 * ms)
    check("hidden idle, clipped", hidden_idle([(8 * ms, 14 * ms)], busy, 0, 11 * ms), ms)

    # Steps: 10 true steps of 10 ms, step 4 30 ms (storage) and step 9
    # slowed (host_compute).  The report numbers from 1, ends 0.2 ms late
    # but step 7's 3 ms late (beyond 1 ms), its first step partial; it
    # calls 5 (true 4, storage), 10 (true 9, but storage) and 3 (true 2,
    # not slowed) slow.
    tl, t = [], 0
    for i in range(10):
        d = 30 * ms if i == 4 else 10 * ms
        tl.append({"index": i, "start_ns": t, "end_ns": t + d,
                   "cause": {4: "storage", 9: "host_compute"}.get(i),
                   "rank": 0})
        t += d
    tdoc = {"step_structure": True, "slow_steps": [4, 9], "step_list": tl}
    lst = []
    for s_ in tl:
        late = 3 * ms if s_["index"] == 7 else 200000
        lst.append({"index": s_["index"] + 1,
                    "start_ns": s_["start_ns"] + 200000,
                    "end_ns": s_["end_ns"] + late,
                    "wall_s": (s_["end_ns"] - s_["start_ns"]) / NS,
                    "cause": "storage" if s_["index"] in (4, 9) else None,
                    "partial": s_["index"] == 0})
    rep = {"steps": {"count": 10, "source": "sync", "slow": [5, 10, 3],
                     "p50_s": 0.01, "list": lst, "list_omitted": 0}}
    st = score_steps(truth_steps(tdoc), report_steps(rep), ms)
    check("steps: found", st["count_found"], 10)
    check("steps: partial", st["count_found_partial"], 1)
    check("steps: boundaries within 1 ms", st["boundary_share"], 0.9)
    check("steps: truth p50", st["truth"]["p50_s"], 0.010)
    check("steps: truth p99", st["truth"]["p99_s"], 0.010 + 0.02 * 0.91)
    check("steps: found p90 (complete only)", st["found"]["p90_s"], 0.010 + 0.02 * 0.2)
    check("steps: slow recall, same cause", st["slow_recall"], 0.5)
    check("steps: slow recall, any cause", st["slow_recall_any_cause"], 1.0)
    check("steps: slow false share", st["slow_false_share"], 1 / 3)
    check("steps: the false one", st["slow_false"][0], 3)
    rdoc = {"mode": "ranks", "ranks": [dict(tdoc, rank=0), dict(tdoc, rank=1, slow_steps=[])]}
    rep2 = {"gpu": {"devices": [{"steps": rep["steps"]}]}}
    st = score_steps(truth_steps(rdoc, 1), report_steps(rep2, 0), ms)
    check("steps: rank 1 has no slow steps", st["slow_recall"], None)
    check("steps: rank 1, all 3 false", st["slow_false_share"], 1.0)
    # what-if: without storage the steps would average 10.5 ms; the run
    # without the stall averaged 10 ms
    rep["steps"]["what_if"] = [{"cause": "storage", "steps": 2,
                                "step_mean_without_s": 0.0105,
                                "step_mean_s": 0.012}]
    nos = {"step_list": [{"index": i, "start_ns": i * 10 * ms,
                          "end_ns": (i + 1) * 10 * ms} for i in range(5)]}
    w = score_what_if(rep["steps"], nos, tdoc)
    check("what-if: measured", w["measured_mean_s"], 0.010)
    check("what-if: truth mean", w["truth_mean_s"], 0.012)
    check("what-if: error share", w["what_if"][0]["error_share"], 0.05)
    check("what-if: a slowed cause", w["what_if"][0]["slowed_cause"], True)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("union", help="busy/idle/span of trace files")
    u.add_argument("traces", nargs="+")
    s = sub.add_parser("score", help="precision/recall of an idlegap report")
    s.add_argument("--truth", nargs="+", required=True, metavar="TRACE")
    s.add_argument("--report", required=True, metavar="IDLEGAP_JSON")
    s.add_argument("--min-gap-ms", type=float, default=1.0)
    n = sub.add_parser("nccl", help="waits and transfers of collectives")
    n.add_argument("traces", nargs="+")
    t = sub.add_parser("steps", help="idlegap's steps against step_list")
    t.add_argument("--truth", required=True, metavar="TRUTH_JSON")
    t.add_argument("--report", required=True, metavar="IDLEGAP_JSON")
    t.add_argument("--tolerance-ms", type=float, default=1.0)
    t.add_argument("--rank", type=int, help="a ranks truth: this rank's steps")
    t.add_argument("--device", type=int,
                   help="the steps of the report's gpu.devices[N]")
    t.add_argument("--without", metavar="NO_SLOW_TRUTH_JSON",
                   help="the truth of the same job run with --no-slow: "
                   "checks the report's what_if")
    sub.add_parser("selftest", help="check the arithmetic")
    args = ap.parse_args()

    if args.cmd == "selftest":
        return selftest()
    if args.cmd == "union":
        out = union_report(args.traces)
    elif args.cmd == "nccl":
        out = nccl_report(args.traces)
    elif args.cmd == "steps":
        with open(args.truth) as f:
            tdoc = json.load(f)
        with open(args.report) as f:
            report = json.load(f)
        try:
            tsteps = truth_steps(tdoc, args.rank)
            rsteps = report_steps(report, args.device)
            out = score_steps(tsteps, rsteps, int(args.tolerance_ms * 1e6))
            if args.without:
                with open(args.without) as f:
                    out.update(score_what_if(
                        rsteps, truth_steps(json.load(f), args.rank),
                        tsteps))
        except ValueError as e:
            print("truth.py: %s" % e, file=sys.stderr)
            return 1
    else:
        _, ivs = read_traces(args.truth)
        with open(args.report) as f:
            report = json.load(f)
        out = score(ivs, report, int(args.min_gap_ms * 1e6))
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

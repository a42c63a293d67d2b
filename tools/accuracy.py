#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""idlegap against ground truth: runs trainsim scenarios under `idlegap run`
on the simulated driver and scores the report against the simulator's
trace.

USAGE
    accuracy.py [--seconds S] [--json] [--keep DIR] [--neighbour]
                [--neighbour-seconds S] SCENARIO[:ARGS]...
        SCENARIO is a trainsim scenario (`gil`, `gil_eager` and `loop`
        run tools/trainsim.py);
        ARGS are extra trainsim arguments separated by commas, e.g.
        `healthy:--no-sync`.  Prints one row per scenario, or JSON.
        --neighbour runs every scenario a second time beside an untraced
        neighbour job (`trainsim --neighbour`: cold disk reads, page
        faults, CPU bursts), as on a shared host; --neighbour-seconds
        shortens that pass (default: --seconds).

Per scenario: precision and recall of the known idle gaps (tools/truth.py),
recall outside synchronous copies ("rec-oc": inside them the host stages
the data itself and no evidence can prove the GPU idle; nor after an op's
end that the simulated GPU's device thread woke over 1 ms late for, a
loaded VM's delay: truth.late_ends, "hidden_s" in the JSON), the true dominant
cause, idlegap's first cause and its share of known idle time, and the
idle / unresolved split of the GPU's span, and the share of unresolved
time idlegap called host-bound ("hostb") and GPU-bound ("gpub") beside the
truth: whether the simulated GPU still had work when the host entered the
sync or query that ended each unresolved span.  The JSON rows also
score the estimate (docs/design.md §4.10): est_total (proven + estimated
idle, share of idlegap's span), est_low/est_high, est_true_idle, est_err,
est_in (the truth inside the interval), est_refused, est_method ("fit"
or "bound"), and the bounds' lower end, which may stand where the point
is refused: est_at_least (proven idle + idle_at_least_s, share of the
span) and est_at_least_ok (it does not exceed the truth).
"""

import argparse
import bisect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools"))
import truth  # noqa: E402

NS = 1e9

IDLEGAP = os.path.join(TOP, "build", "idlegap")
TRAINSIM = os.path.join(TOP, "build", "trainsim")
TRAINSIM_PY = os.path.join(TOP, "tools", "trainsim.py")
SIMGPU = os.path.join(TOP, "build", "simgpu")


# the scenarios of tools/trainsim.py, a Python loop through ctypes
PY_SCENARIOS = ("gil", "gil_eager", "loop")


def workload_cmd(scenario, extra, seconds, truth_path):
    # trainsim's dataset is made once and shared by the runs
    if scenario in PY_SCENARIOS:
        cmd = ["/usr/bin/python3", TRAINSIM_PY, "-s", scenario]
    else:
        cmd = [TRAINSIM, "-s", scenario]
    if seconds:
        cmd += ["-t", str(seconds)]
    return cmd + ["-q", "--truth", truth_path] + extra


class Neighbour:
    """An untraced job beside the traced one: started apart from
    `idlegap run`, which traces every descendant of what it runs."""

    def __enter__(self):
        self.p = subprocess.Popen([TRAINSIM, "--neighbour", "-q"],
                                  stdout=subprocess.DEVNULL,
                                  start_new_session=True)
        return self

    def __exit__(self, *exc):
        self.p.terminate()
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def prepare_neighbour():
    """Writes the neighbour's dataset before any run is timed."""
    subprocess.run([TRAINSIM, "--neighbour", "-q", "-t", "0.1"], check=True,
                   stdout=subprocess.DEVNULL)


def run(scenario, extra=(), seconds=None, keep=None, idlegap_args=(),
        neighbour=False):
    """Runs one scenario under idlegap, alone or beside an untraced
    neighbour; returns the scores as a dict."""
    if neighbour:
        with Neighbour():
            r = run(scenario, extra, seconds, keep, idlegap_args)
        r["neighbour"] = True
        r["scenario"] += " +nb"
        return r
    tmp = keep or tempfile.mkdtemp(prefix="idlegap-acc.")
    os.makedirs(tmp, exist_ok=True)
    truth_path = os.path.join(tmp, "truth.json")
    report_path = os.path.join(tmp, "idlegap.json")
    # the simulated driver first; on a machine with a GPU (no build/simgpu)
    # the loader falls through to the real one
    env = dict(os.environ, LD_LIBRARY_PATH=":".join(
                   p for p in (SIMGPU, os.environ.get("LD_LIBRARY_PATH")) if p),
               SIMGPU_TRACE=os.path.join(tmp, "trace.%p"), TMPDIR=tmp,
               # a simulated machine of its own: the simulated NVML counts
               # every process on it, and other jobs of this host are none
               # of this run's (docs/simgpu.md)
               SIMGPU_MACHINE="acc-%d-%s" % (os.getpid(),
                                             os.path.basename(tmp)))
    rec_path = os.path.join(tmp, "run.igrec")
    cmd = [IDLEGAP, "run", "-q", "--gaps", "-1", "--json", report_path,
           "-o", rec_path, *idlegap_args, "--"] + workload_cmd(scenario, list(extra), seconds,
                                               truth_path)
    try:
        rc, err, cpu = run_timed(cmd, env, 300)
        if rc:
            raise RuntimeError("%s: exit %d: %s" % (scenario, rc, err.strip()))
        with open(truth_path) as f:
            tj = json.load(f)
        with open(report_path) as f:
            rj = json.load(f)
        dump = dump_lines(rec_path)
        s = score(scenario, extra, tj, rj, sync_calls(dump), drains(dump), dump)
        rescore_host(s, tj, cpu)
        return s
    finally:
        try:
            os.unlink("/dev/shm/simgpu-machine-" + env["SIMGPU_MACHINE"])
        except OSError:
            pass
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def run_timed(cmd, env, timeout):
    """Runs CMD (killed after TIMEOUT s): its exit status, its stderr and
    the CPU seconds it and its descendants used (idlegap and the job)."""
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err,
                             text=True)
        t = threading.Timer(timeout, p.kill)
        t.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            t.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return p.returncode, err.read(), ru.ru_utime + ru.ru_stime


def rescore_host(s, tj, cpu):
    """The rest of the host's share, less idlegap's own CPU time: what
    `idlegap run` and the job used, less the job's feeding threads over
    its loop (so idlegap's share is, if anything, overstated, and the host
    called loaded less often)."""
    f = s.get("feeding")
    acct = tj.get("accounting") or {}
    if not f or f.get("others_cpus") is None or not acct.get("wall_ns"):
        return
    job = sum(t["cpu_ns"] for t in acct["threads"]) / NS_PER_S
    own = max(0.0, cpu - job)
    f["idlegap_cpu_s"] = own
    f["others_cpus"] = max(0.0, f["others_cpus"] - own * NS_PER_S / acct["wall_ns"])


def dump_lines(rec_path):
    return subprocess.run([IDLEGAP, "report", "--dump", rec_path],
                          stdout=subprocess.PIPE, text=True,
                          check=True).stdout.splitlines()


def drains(lines):
    """(entry, return) of every sync and successful query, by return: the
    host's own call times, which the simulator's trace is checked
    against."""
    out = []
    for line in lines:
        if " kind=sync_end " not in line and " kind=query_done " not in line:
            continue
        f = dict(x.split("=", 1) for x in line.split()[2:] if "=" in x)
        ret = int(line.split()[0])
        if f.get("ret", "0") != "0":
            continue
        begin = int(f.get("begin", "0")) or ret
        out.append((begin, ret))
    return sorted(out, key=lambda x: x[1])


def bound_truth(ivs, rj, calls):
    """Seconds of idlegap's unresolved spans that were truly host-bound
    (the simulated GPU had no work left when the host entered the sync or
    query that ended the span) or GPU-bound (it still had), by the
    simulator's trace; spans no call ended are left out."""
    busy = truth.merge(ivs)
    starts = [a for a, _ in busy]
    rets = [r for _, r in calls]
    host = gpu = 0

    def busy_at(t):
        i = bisect.bisect_right(starts, t) - 1
        return i >= 0 and busy[i][1] > t

    for sp in rj["gpu"].get("unresolved_list") or []:
        t0, t1 = sp["start_ns"], sp["end_ns"]
        # the span ends at a drained point no later than the call's return
        i = bisect.bisect_left(rets, t1)
        if i == len(calls):
            continue
        if busy_at(calls[i][0]):
            gpu += t1 - t0
        else:
            host += t1 - t0
    return host / NS, gpu / NS


def sync_calls(lines):
    """[entry, return] of every synchronous copy in a recording: inside
    them the host stages data itself and no evidence can prove the GPU
    idle."""
    calls = []
    for line in lines:
        if " kind=sync_end " not in line:
            continue
        f = dict(x.split("=", 1) for x in line.split()[2:] if "=" in x)
        if f.get("api", "").startswith(("cuMemcpyHtoD", "cuMemcpyDtoH")) or \
           f.get("api") in ("cuMemcpy", "cuMemcpy_ptds"):
            calls.append((int(f["begin"]), int(line.split()[0])))
    return truth.merge(calls)


def share(part, whole):
    return part / whole if whole else None


def score(scenario, extra, tj, rj, calls=(), drained=(), lines=()):
    _, ivs = truth.read_traces(tj["trace_files"])
    s = truth.score(ivs, rj)
    # recall over the idle time outside synchronous copies, and outside
    # the ends the simulated GPU's late device threads hid from the host
    hid = truth.late_ends(lines, ivs)
    busy = truth.merge(ivs + list(calls) + hid)
    s["recall_outside_calls"] = truth.score(busy, rj)["recall"]
    s["hidden_s"] = truth.total(hid) / 1e9
    gpu = rj["gpu"]
    causes = rj.get("causes") or []
    unres = rj.get("unresolved_causes") or []
    span = (gpu["busy_s"] + gpu["idle_s"] + gpu["unresolved_s"]) or 1.0
    s.update(
        scenario=scenario + ("" if not extra else " " + " ".join(extra)),
        neighbour=False,
        expected=tj.get("expected_cause"),
        true_idle_share=tj["gpu"]["idle_share"],
        wall_s=tj.get("wall_s"),
        first_cause=causes[0]["cause"] if causes else None,
        first_share=causes[0]["share"] if causes else None,
        shares_sum=sum(c["share"] for c in causes),
        causes={c["cause"]: c["share"] for c in causes},
        unresolved={c["cause"]: c["share"] for c in unres},
        unresolved_first=unres[0]["cause"] if unres else None,
        idle_share=gpu["idle_s"] / span,
        unresolved_share=gpu["unresolved_s"] / span,
        idle_of_wall=gpu["idle_s"] / rj["duration_s"] if rj["duration_s"] else 0,
        dropped=rj["events"]["dropped"],
    )
    u = gpu["unresolved_s"]
    th, tg = bound_truth(ivs, rj, list(drained))
    s.update(
        host_bound=share(gpu.get("unresolved_host_bound_s", 0), u),
        gpu_bound=share(gpu.get("unresolved_gpu_bound_s", 0), u),
        true_host_bound=share(th, th + tg),
        true_gpu_bound=share(tg, th + tg),
        bound_sum_err=abs(gpu.get("unresolved_host_bound_s", 0) +
                          gpu.get("unresolved_gpu_bound_s", 0) +
                          gpu.get("unresolved_open_s", 0) - u),
    )
    s.update(estimate(ivs, gpu))
    s["feeding"] = feeding_figures(tj)
    s["oracle"] = oracle(s["expected"], s["feeding"])
    return s


def estimate(ivs, gpu):
    """The estimate of docs/design.md §4.10 against the truth over
    idlegap's own span: proven + estimated idle as a share of the span,
    its interval, and the true idle share there."""
    a, b = gpu.get("span_start_ns"), gpu.get("span_end_ns")
    if not a or not b or b <= a:
        return {}
    busy = sum(max(0, min(y, b) - max(x, a)) for x, y in truth.merge(ivs))
    true = (b - a - busy) / (b - a)
    span = (b - a) / NS
    est = gpu.get("idle_estimated_s")
    out = dict(est_true_idle=true, est_refused=gpu.get("estimate_refused"),
               est_method=gpu.get("estimate_method"),
               est_checked=(gpu.get("estimate_fit") or {}).get("syncs_checked"),
               est_total=None, est_low=None, est_high=None, est_err=None,
               est_in=None, est_at_least=None, est_at_least_ok=None)
    # the bounds' lower end stands apart from the estimate (it may where
    # the point is refused): proven + it must not exceed the truth
    least = gpu.get("idle_at_least_s")
    if least is not None:
        out.update(est_at_least=(gpu["idle_s"] + least) / span,
                   est_at_least_ok=(gpu["idle_s"] + least) / span <= true + 1e-6)
    if est is not None:
        tot = (gpu["idle_s"] + est) / span
        lo = (gpu["idle_s"] + gpu["idle_estimated_low_s"]) / span
        hi = (gpu["idle_s"] + gpu["idle_estimated_high_s"]) / span
        out.update(est_total=tot, est_low=lo, est_high=hi, est_err=tot - true,
                   est_in=lo <= true <= hi)
    return out


# The oracle: the kernel's own accounting of the feeding threads over the
# feeder's loop (the workload's truth JSON, "accounting": workload/acct.c,
# tools/truth.py).  For a scenario's designed host cause, the time the
# threads it lives in spent in that wait, beside the time the feeding
# threads (feeder and loader workers) spent runnable but waiting for a CPU,
# which idlegap calls cpu_starvation:
#   storage, page_fault    block IO delay of the feeder and the workers;
#   cpu_starvation         run delay (the competitor: block IO delay);
#   cuda_api, host_compute the feeder's time on CPU;
#   lock, gil              the feeder's time blocked outside block IO,
#                          less the GPU's busy time (the feeder's syncs
#                          block while the GPU works: no idle time);
#   network                the workers' time blocked outside block IO.
# One figure at least ORACLE_RATIO times the other decides; closer, the
# oracle cannot decide.
ORACLE_RATIO = 2.0
# Below this share of all the host's CPU time busy over the loop, run delay
# is no proof of starvation (oracle()).
CPUS_BUSY = 0.75
NS_PER_S = 1e9


def feeding_figures(tj):
    """Seconds by role ("feeder", "workers"): on CPU, runnable, in block
    IO, blocked otherwise; None without the workload's accounting."""
    acct = tj.get("accounting")
    if not acct or not acct.get("threads"):
        return None
    wall = tj.get("wall_s") or 0
    out = {"delayacct": acct.get("delayacct", False), "io_trusted": True,
           "others_cpus": None, "busy_share": None,
           "gpu_busy": (tj.get("gpu") or {}).get("busy_s") or 0.0}
    # a thread's block IO delay cannot exceed the loop's wall time: one that
    # does began its wait while kernel.task_delayacct was off (it is
    # system-wide: another program may turn it off and on meanwhile), and
    # the kernel counted it from 0
    if any(t["blkio_ns"] / NS_PER_S > 1.1 * wall + 0.1 for t in acct["threads"]):
        out["io_trusted"] = False
    # what the rest of the host took: its busy CPU time less the job's own
    if acct.get("wall_ns") and acct.get("host_busy_ns") is not None:
        job = sum(t["cpu_ns"] for t in acct["threads"])
        out["others_cpus"] = max(0, acct["host_busy_ns"] - job) / acct["wall_ns"]
        if acct.get("cpus"):
            out["busy_share"] = acct["host_busy_ns"] / (acct["wall_ns"] * acct["cpus"])
    for role, key in (("feeder", "feeder"), ("worker", "workers")):
        ts = [t for t in acct["threads"] if t["role"] == role]
        f = {k: sum(t[k] for t in ts) / NS_PER_S
             for k in ("cpu_ns", "run_delay_ns", "blkio_ns")}
        f = {"cpu": f["cpu_ns"], "run": f["run_delay_ns"], "io": f["blkio_ns"],
             "n": len(ts)}
        f["blocked"] = max(0.0, wall * len(ts) - f["cpu"] - f["run"] - f["io"])
        out[key] = f
    return out


def oracle(cause, fig):
    """What the feeding threads really waited for, against CAUSE: a dict
    with "verdict" ("design": CAUSE outweighs the run delay; "cpu": the run
    delay outweighs it; "undecided"; None: no figures), the two figures and
    a line naming them."""
    if not fig or not cause:
        return {"verdict": None, "design_s": None, "run_s": None,
                "text": "oracle: no accounting"}
    fd, wk = fig["feeder"], fig["workers"]
    run = fd["run"] + wk["run"]
    io = fd["io"] + wk["io"]
    if cause in ("storage", "page_fault"):
        d, what = io, "block IO delay (feeder+workers)"
    elif cause == "cpu_starvation":
        d, what, run = run, "run delay (feeder+workers)", io
    elif cause in ("cuda_api", "host_compute"):
        d, what, run = fd["cpu"], "feeder on CPU", fd["run"]
    elif cause in ("lock", "gil"):
        # the feeder's syncs block too, while the GPU works: time in
        # which no wait of its made the GPU idle
        gpu_busy = fig.get("gpu_busy") or 0.0
        d, run = max(0.0, fd["blocked"] - gpu_busy), fd["run"]
        what = "feeder blocked (less the GPU's busy %.2f s)" % gpu_busy
    elif cause == "network":
        d, what = wk["blocked"], "workers blocked"
    else:
        return {"verdict": None, "design_s": None, "run_s": None,
                "text": "oracle: no figure for %s" % cause}
    other = "block IO delay" if cause == "cpu_starvation" else "run delay (feeder%s)" % (
        "" if cause in ("cuda_api", "host_compute", "lock", "gil") else "+workers")
    text = "oracle: %s %.2f s vs %s %.2f s" % (what, d, other, run)
    if cause in ("storage", "page_fault", "cpu_starvation") and not fig["delayacct"]:
        return {"verdict": "undecided", "design_s": d, "run_s": run,
                "text": text + " (block IO delay not counted: kernel.task_delayacct off, or booted with nodelayacct)"}
    if cause in ("storage", "page_fault", "cpu_starvation") and not fig["io_trusted"]:
        return {"verdict": "undecided", "design_s": d, "run_s": run,
                "text": text + " (block IO delay not to be trusted: a thread's exceeds the "
                "run, kernel.task_delayacct was turned on during its wait)"}
    if d >= ORACLE_RATIO * run:
        verdict = "design"
    elif cause != "cpu_starvation" and run >= ORACLE_RATIO * d:
        verdict = "cpu"
    else:
        verdict = "undecided"
    # run delay is time on a run queue, and a thread woken onto an idle
    # CPU waits there too, until that CPU wakes (ms on an emulated one):
    # not starvation (docs/design.md §5.10).  With the host's CPUs mostly
    # idle over the loop, the run delay does not say which it was.
    busy = fig.get("busy_share")
    if verdict == "cpu" and busy is not None and busy < CPUS_BUSY:
        verdict = "undecided"
        text += " (the host's CPUs busy %.0f%% of the loop: its run delay may be wakeup" \
            " latency onto an idle CPU)" % (100 * busy)
    elif busy is not None:
        text += " (CPUs busy %.0f%%)" % (100 * busy)
    return {"verdict": verdict, "design_s": d, "run_s": run,
            "text": "%s: %s" % (text, {"design": "%s" % cause, "cpu": "cpu_starvation",
                                       "undecided": "too close to decide"}[verdict])}


# The rest of the host took this many CPUs (its busy time less the job's,
# per second of the loop) or more: the host was shared, and recall is
# shown, not held (docs/design.md §9 gives the figures it separates).
LOADED_CPUS = 0.25


def host_loaded(fig):
    """(loaded, text): whether the rest of the host took LOADED_CPUS or more
    while the job ran, and a line naming the figure."""
    if not fig or fig.get("others_cpus") is None:
        return False, "host: no accounting"
    return fig["others_cpus"] >= LOADED_CPUS, "host: the rest of it took %.2f CPUs" % (
        fig["others_cpus"])


def waiting_first(r):
    """The first cause of the GPU's waiting time: known idle and
    unresolved together, each weighted by its share of the span."""
    tot = {}
    for c, sh in r["causes"].items():
        tot[c] = tot.get(c, 0) + sh * r["idle_share"]
    for c, sh in r["unresolved"].items():
        tot[c] = tot.get(c, 0) + sh * r["unresolved_share"]
    if not tot:
        return None, None
    best = max(tot, key=tot.get)
    return best, tot[best] / sum(tot.values())


def fmt(v, spec="%.3f"):
    return "-" if v is None else spec % v


ROW = "%-18s %5s %6s %6s %5s %5s %-14s %-14s %5s %-14s %5s %5s %5s %5s %5s\n"


def table(rows, out=sys.stdout):
    out.write(ROW % ("scenario", "prec", "recall", "rec-oc", "idle", "unres",
                     "true cause", "idle: first", "share", "idle+unres",
                     "share", "hostb", "true", "gpub", "true"))
    for r in rows:
        wf, ws = waiting_first(r)
        name = r["scenario"]
        if r.get("neighbour"):	# keep the mark when the name is cut
            name = name[:-len(" +nb")][:14] + " +nb"
        out.write(ROW % (
            name[:18], fmt(r["precision"], "%.3f"), fmt(r["recall"]),
            fmt(r["recall_outside_calls"]),
            fmt(r["idle_share"], "%.2f"), fmt(r["unresolved_share"], "%.2f"),
            r["expected"] or "none", r["first_cause"] or "-",
            fmt(r["first_share"], "%.2f"), wf or "-", fmt(ws, "%.2f"),
            fmt(r["host_bound"], "%.2f"), fmt(r["true_host_bound"], "%.2f"),
            fmt(r["gpu_bound"], "%.2f"), fmt(r["true_gpu_bound"], "%.2f")))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", metavar="DIR")
    ap.add_argument("--neighbour", action="store_true",
                    help="also run each scenario beside an untraced job")
    ap.add_argument("--neighbour-seconds", type=float, metavar="S")
    a = ap.parse_args()
    rows = []
    if a.neighbour:
        prepare_neighbour()
    for nb in (False, True) if a.neighbour else (False,):
        for spec in a.scenarios:
            name, _, args = spec.partition(":")
            extra = [x for x in args.split(",") if x]
            keep = os.path.join(a.keep, name + ("+nb" if nb else "")) \
                if a.keep else None
            secs = a.neighbour_seconds if nb and a.neighbour_seconds \
                else a.seconds
            rows.append(run(name, extra, secs, keep, neighbour=nb))
    if a.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
    else:
        table(rows)


if __name__ == "__main__":
    main()

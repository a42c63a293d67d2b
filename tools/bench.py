#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench: idlegap's cost and accuracy, measured side by side in one run.

Absolute times on shared machines are noise; every row compares runs made
back to back here (interleaved, median of several rounds) and prints the
ratio, its target and PASS/MISS.

USAGE
    tools/bench.py [--quick] [--rows 1,2,...] [--json FILE]
    tools/bench.py --ab OTHER_IDLEGAP [--ab-rounds N] [--quick] [--rows 1,3]
        --quick   shorter runs, under 6 minutes in all: fewer probe hits and
                  syscalls, a half or a quarter of the training steps, the
                  memory row traces 30 s (not 300 s), accuracy runs 4 s;
                  also BENCH_QUICK=1
        --ab      this build ("after") against OTHER_IDLEGAP, an idlegap
                  built from another commit ("before"), for the launch
                  probe alone: row 1 (per hit, over an empty uprobe on
                  cuLaunchKernel) and row 3 (the launch job's added time,
                  over an empty uprobe on the same job).  Each round runs
                  the untraced job, the empty uprobe, then both builds, in
                  turn first (AB, BA, ...); ratios are taken within a round
                  and the rows print, per build, the median over the rounds,
                  their quartiles and range, and after/before (also over
                  the rounds each went first: the order's own effect).
                  Only rows 1 and 3; the other rows are not run.
        --ab-rounds  rounds of --ab, an even number: each build goes first
                  in half of them (default 10)

Interrupted (SIGINT, SIGTERM, SIGHUP), it stops every process it started,
and their children, and exits 128 + the signal's number: a traced workload
left running would skew whatever runs next.
"""

import argparse
import atexit
import ctypes
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools"))
import accuracy  # noqa: E402

B = os.path.join(TOP, "build")
IG = os.path.join(B, "idlegap")
FAKE = os.path.join(B, "tests", "fakecuda")
FAKELIB = os.path.join(FAKE, "libcuda.so.1")
APP = os.path.join(FAKE, "fakecuda_app")
NCCLLIB = os.path.join(B, "tests", "fakenccl", "libnccl.so.2")
NCCLAPP = os.path.join(B, "tests", "fakenccl", "fakenccl_app")
BARE = os.path.join(B, "tools", "bareprobe")
GENREC = os.path.join(B, "tools", "genrec")
SYSLOOP = os.path.join(B, "tests", "progs", "sysloop")
STORM = os.path.join(B, "tests", "progs", "yieldstorm")
TRAINSIM = os.path.join(B, "trainsim")
SIMENV = dict(os.environ, LD_LIBRARY_PATH=os.path.join(B, "simgpu"))

rows = []


# ---- children: each in its own process group, all stopped on a signal ------

PR_SET_CHILD_SUBREAPER = 36
groups = set()		# process groups of the children started here


def popen(cmd, **kw):
    """Popen in a process group of its own, remembered for stop_all()."""
    p = subprocess.Popen(cmd, start_new_session=True, **kw)
    groups.add(p.pid)
    return p


def out(cmd, env=None, timeout=900):
    p = popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
              text=True, env=env)
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise RuntimeError("%s: still running after %d s" % (" ".join(cmd), timeout))
    finally:
        groups.discard(p.pid)
    p = subprocess.CompletedProcess(cmd, p.returncode, stdout, stderr)
    if p.returncode:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                                p.stderr.strip()[-500:]))
    return p.stdout


def killpg(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except OSError:
        pass


def descendants():
    """Live (not zombie) processes below this one, from /proc."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rindex(")") + 2:].split()
        if fields[0] != "Z":
            kids.setdefault(int(fields[1]), []).append(int(d))
    found, todo = [], [os.getpid()]
    while todo:
        for c in kids.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def reap():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def signal_tree(sig):
    for g in list(groups):
        killpg(g, sig)
    for pid in descendants():	# what left its group, or was never in one
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def stop_all(grace=3.0):
    """SIGTERM to every child and grandchild (idlegap detaches and ends its
    report), SIGKILL to what is left after `grace` s; reaps them all."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        end = time.monotonic() + wait
        while True:
            signal_tree(sig)
            reap()
            if not descendants() or time.monotonic() >= end:
                break
            time.sleep(0.05)
    return descendants()


_scratch = []


def scratch():
    """A fresh directory, removed when bench ends (or is interrupted)."""
    if not _scratch:
        _scratch.append(tempfile.mkdtemp(prefix="idlegap-bench."))
        atexit.register(shutil.rmtree, _scratch[0], True)
    return tempfile.mkdtemp(dir=_scratch[0])


def on_signal(sig, _frame):
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    left = stop_all()
    name = signal.Signals(sig).name
    print("\nbench: interrupted by %s; its processes are stopped%s" %
          (name, "" if not left else " but for %s" % left),
          file=sys.stderr, flush=True)
    if _scratch:
        shutil.rmtree(_scratch[0], True)
    os._exit(128 + sig)


def guard_children():
    """Orphaned grandchildren come back to this process (a subreaper), so
    that an interrupt finds them all."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)


def traced(cmd, *ig_args, ig=IG):
    return [ig, "run", "-q", *ig_args, "--"] + cmd


def row(num, name, value, target, ok, note="", result=None):
    r = dict(row=num, name=name, value=value, target=target,
             result=result or ("PASS" if ok else "MISS"), note=note)
    rows.append(r)
    print("%-3s %-44s %14s %12s  %s%s" % (num, name, value, target, r["result"],
                                          "  " + note if note else ""),
          flush=True)
    return r


def guarded(num, fn, *args):
    """Runs one row's measurement; one that fails is a MISS with its
    reason, its processes stopped, and the bench goes on."""
    t0 = time.monotonic()
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - any failure is the row's MISS
        left = stop_all()
        why = ("%s: %s" % (type(e).__name__, e)).replace("\n", " ")[-300:]
        row(num, fn.__name__.replace("_", " "), "MISS", "", False,
            why + (" (left running: %s)" % left if left else ""))
        return None
    finally:
        print("    (%s: %.0f s)" % (fn.__name__, time.monotonic() - t0),
              flush=True)


def median_of(fns, rounds):
    """Runs the functions interleaved `rounds` times; medians in order."""
    vals = [[] for _ in fns]
    for _ in range(rounds):
        for i, f in enumerate(fns):
            vals[i].append(f())
    return [statistics.median(v) for v in vals]


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

# --quick: fewer than the scenarios' default steps (300 for both)
QUICK_STEPS = {"healthy": 150, "launch": 75}


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


# ---- 4. aggregator throughput ---------------------------------------------------

def replay_throughput(quick):
    n = 2000000 if quick else 10000000
    tmp = scratch()
    rec = os.path.join(tmp, "big.igrec")
    nrec = int(out([GENREC, rec, str(n)]))
    # the CPU time of the fastest run: on a shared machine its wall time
    # also counts the waits for the CPU (both shown)
    dt, cpu = best_time(["taskset", "-c", "0", IG, "report", "-q", rec])
    rate = nrec / cpu
    row("4", "replay: records/s on one core (CPU time)", "%.2fM" % (rate / 1e6),
        ">= 4M", rate >= 4e6, "%d records, CPU %.2f s, wall %.2f s (%.2fM/s)"
        % (nrec, cpu, dt, nrec / dt / 1e6))
    os.unlink(rec)


def live_throughput(quick):
    secs = 5 if quick else 30
    tmp = scratch()
    rep = os.path.join(tmp, "r.json")
    cmd = traced([STORM, str(secs), "1"], "--no-nvml", "--sample-hz", "0",
                 "--json", rep)
    out(cmd)
    with open(rep) as f:
        rj = json.load(f)
    total, dropped = rj["events"]["total"], rj["events"]["dropped"]
    rate = total / rj["duration_s"]
    row("4", "live: %d s of a context-switch storm" % secs,
        "%.0fk/s, %d lost" % (rate / 1e3, dropped), ">= 200k/s, 0",
        rate >= 200e3 and dropped == 0, "%d records" % total)


def stack_cost(quick):
    """Storm records/s with native stacks and without (IDLEGAP_NO_USTACKS),
    interleaved, medians: the capture's added cost per tracked switch-out."""
    secs = 3 if quick else 10
    rep = os.path.join(scratch(), "s.json")

    def rate(no_ustacks):
        env = dict(os.environ)
        env.pop("IDLEGAP_NO_USTACKS", None)
        if no_ustacks:
            env["IDLEGAP_NO_USTACKS"] = "1"
        out(traced([STORM, str(secs), "1"], "--no-nvml", "--sample-hz", "0",
                   "--json", rep), env=env)
        with open(rep) as f:
            rj = json.load(f)
        return rj["events"]["total"] / rj["duration_s"]

    on, off = median_of([lambda: rate(False), lambda: rate(True)], 3)
    ratio = on / off
    row("4s", "stacks: added cost per tracked switch-out",
        "%.0f ns, %.2fx" % (1e9 / on - 1e9 / off, ratio), ">= 0.85x",
        ratio >= 0.85, "%.0fk/s with stacks, %.0fk/s without"
        % (on / 1e3, off / 1e3))


# ---- 5. memory -------------------------------------------------------------------

def rss_kb(pid):
    """VmRSS and VmHWM of a live process, in KiB (0, 0 once gone)."""
    rss = hwm = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    return rss, hwm


def memory(quick):
    secs = 30 if quick else 300
    cmd = traced([TRAINSIM, "-s", "storage", "-q", "-t", str(secs),
                  "-n", "100000000"], "--no-nvml")
    p = popen(cmd, env=SIMENV, stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL)
    samples = []
    t0 = time.monotonic()
    while p.poll() is None:
        time.sleep(5)
        try:
            rss, hwm = rss_kb(p.pid)
        except OSError:
            break
        if rss:		# 0 once the tracer is exiting
            samples.append((time.monotonic() - t0, rss, hwm))
    p.wait()
    groups.discard(p.pid)
    if not samples:
        row("5", "memory", "no samples", "<= 48 MiB", False)
        return
    peak = max(s[2] for s in samples) / 1024
    after1 = [s[1] for s in samples if s[0] >= min(60, secs / 2)]
    first = after1[0] / 1024 if after1 else peak
    last = samples[-1][1] / 1024
    flat = max(s[1] for s in samples if s[0] >= min(60, secs / 2)) / 1024 \
        - first <= 2.0 if after1 else False
    row("5", "memory: peak RSS over %d s of storage" % secs, "%.1f MiB" % peak,
        "<= 48 MiB", peak <= 48)
    top = max(s[1] for s in samples if s[0] >= min(60, secs / 2)) / 1024 \
        if after1 else peak
    # the last sample may catch the tracer unmapping its ring on exit
    row("5", "memory: growth after the first %.0f s" % min(60, secs / 2),
        "%+.1f MiB" % (top - first),
        "within 2 MiB", flat, "%.1f MiB at %.0f s, at most %.1f MiB after,"
        " %.1f MiB at the last sample" % (first, min(60, secs / 2), top, last))


# ---- 6. attach latency ------------------------------------------------------------

def attach_latency(quick):
    # a job that runs until it is stopped (-n: more steps than 300 s take)
    job = popen([TRAINSIM, "-s", "healthy", "-q", "-t", "300",
                 "-n", "100000000"],
                env=SIMENV, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
    vals = []
    try:
        time.sleep(1)
        for _ in range(3 if quick else 5):
            if job.poll() is not None:
                raise RuntimeError("the job to attach to ended: exit %d"
                                   % job.returncode)
            t0 = time.monotonic()
            p = popen([IG, "attach", "-p", str(job.pid), "-d", "1",
                       "-q", "--no-nvml"], stderr=subprocess.PIPE, text=True)
            line = p.stderr.readline()
            dt = time.monotonic() - t0
            p.wait()
            groups.discard(p.pid)
            if "tracing" not in line:
                raise RuntimeError("attach: " + line)
            vals.append(dt)
    finally:
        job.kill()
        job.wait()
        groups.discard(job.pid)
    v = statistics.median(vals)
    row("6", "attach latency: start to probes attached", "%.0f ms" % (v * 1e3),
        "<= 250 ms", v <= 0.25, "median of %d, running trainsim" % len(vals))


# ---- 7. accuracy ---------------------------------------------------------------------

def accuracy_tables(quick):
    scen = ["healthy", "storage", "pagefault", "cpu", "lock", "network",
            "launch", "sync_copy", "gil", "eager", "gpubound", "gil_eager"]
    res = []
    # alone, then beside an untraced neighbour job (a shared host)
    accuracy.prepare_neighbour()
    for nb in (False, True):
        secs = (4 if nb else 6) if quick else None
        for s, extra in [(s, []) for s in scen] + [("healthy", ["--no-sync"])]:
            try:
                res.append(accuracy.run(s, extra, secs, neighbour=nb))
            except (RuntimeError, OSError, ValueError) as e:
                # one scenario that fails is a MISS, not the end of the bench
                row("7", "accuracy %s%s" % (" ".join([s] + extra),
                                            " +neighbour" if nb else ""),
                    "failed", "runs", False, str(e)[-300:])
    print()
    print("7   GPU idle gaps against the simulator's trace (precision target"
          " >= 0.99, recall >= 0.90)")
    print("    and attribution: the scenario's cause against idlegap's first;"
          " +nb: beside an untraced neighbour")
    print("    unresolved time called host-bound (hostb) and GPU-bound (gpub)"
          " against the trace")
    print("    (targets: launch, eager, gil_eager hostb >= 0.8; gpubound"
          " gpub >= 0.8)")
    accuracy.table(res)
    for r in res:
        r["row"] = "7"
    rows.extend(dict(row="7", name="accuracy " + r["scenario"],
                     value=r, target="", result="", note="") for r in res)


# ---- 8. Perfetto trace writing -----------------------------------------------

def best_time(cmd, rounds=3):
    """The shortest wall time of @rounds runs, and the CPU time (user and
    system) of that run: on a busy machine the wall time also counts the
    waits for a CPU."""
    import resource
    best = None
    for _ in range(rounds):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        out(cmd)
        dt = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
        best = (dt, cpu) if best is None else min(best, (dt, cpu))
    return best


def trace_writing(quick):
    """report --perfetto on a synthetic recording (records/s, bytes per
    record) and on a trainsim storage run's recording (bytes per gap)."""
    tmp = scratch()
    rec, pf = os.path.join(tmp, "big.igrec"), os.path.join(tmp, "t.pftrace")
    nrec = int(out([GENREC, rec, str(2000000 if quick else 5000000)]))
    base, base_cpu = best_time(["taskset", "-c", "0", IG, "report", "-q", rec])
    dt, cpu = best_time(["taskset", "-c", "0", IG, "report", "-q", "--perfetto", pf, rec])
    size, rsize = os.path.getsize(pf), os.path.getsize(rec)
    rate = nrec / cpu
    row("8", "perfetto: records/s writing the trace (CPU time)",
        "%.2fM" % (rate / 1e6), ">= 1M",
        rate >= 1e6, "%d records in %.2f s wall (%.2fM/s), CPU %.2f s (report"
        " alone %.2f s, CPU %.2f s)" % (nrec, dt, nrec / dt / 1e6, cpu, base,
                                        base_cpu))
    # a slice costs about 70 bytes (docs/design.md §7.8); the synthetic
    # job makes about two per record: the trace should stay smaller than
    # the recording it comes from
    row("8", "perfetto: bytes per record (synthetic)", "%.1f" % (size / nrec),
        "<= %.0f" % (rsize / nrec), size <= rsize,
        "%d bytes; the recording %.1f per record" % (size, rsize / nrec))
    os.unlink(rec)
    srec, rep = os.path.join(tmp, "s.igrec"), os.path.join(tmp, "s.json")
    out(traced([TRAINSIM, "-s", "storage", "-q", "-t", "4" if quick else "10"],
               "--no-nvml", "-o", srec), env=SIMENV)
    out([IG, "report", "-q", "--json", rep, "--perfetto", pf, srec])
    with open(rep) as f:
        j = json.load(f)
    gaps, n = j["gpu"]["gaps"], j["events"]["total"]
    size = os.path.getsize(pf)
    row("8", "perfetto: bytes per gap (trainsim storage)", "%.0f" % (size / max(gaps, 1)),
        "<= 8192", gaps > 0 and size / gaps <= 8192,
        "%d bytes, %d gaps%s" % (size, gaps, ", %.1f bytes per record" % (size / n) if n else ""))

# ---- 9. the agent: cost between windows and during one ------------------------

def agent_start(window, every, *extra):
    """`idlegap agent` on a free loopback port; returns it once its first
    window has begun (its start-up line)."""
    import socket
    sk = socket.socket()
    sk.bind(("127.0.0.1", 0))
    port = sk.getsockname()[1]
    sk.close()
    log = tempfile.TemporaryFile()
    p = popen([IG, "agent", "--listen", "127.0.0.1:%d" % port, "--window",
               str(window), "--every", str(every)] + list(extra),
              stdout=subprocess.DEVNULL,
              stderr=log)
    for _ in range(300):
        log.seek(0)
        if b"agent: metrics on port" in log.read() or p.poll() is not None:
            break
        time.sleep(0.05)
    return p


def agent_stop(p):
    p.terminate()
    p.wait(timeout=10)


def agent_cost(quick):
    """The launch scenario with no agent, with the agent between windows
    (its 1 s window is over: no uprobe, host hooks only), and inside one
    long window (the job is found by the next 1 s look)."""
    tmp = scratch()
    rounds = 3
    steps = "150" if quick else "300"
    truth = os.path.join(tmp, "t.json")

    def job():
        out([TRAINSIM, "-s", "launch", "-q", "-n", steps, "--truth", truth],
            env=SIMENV)
        with open(truth) as f:
            return json.load(f)["wall_s"]

    def with_agent(window, every, wait):
        def run():
            p = agent_start(window, every)
            time.sleep(wait)
            try:
                return job()
            finally:
                agent_stop(p)
        return run

    def traced_job():
        out(traced([TRAINSIM, "-s", "launch", "-q", "-n", steps, "--truth", truth],
                   "--no-nvml"), env=SIMENV)
        with open(truth) as f:
            return json.load(f)["wall_s"]

    none, between, during, run = median_of(
        [job, with_agent(1, 3600, 2.5), with_agent(3600, 3600, 0.2), traced_job], rounds)
    row("9", "agent between windows: launch wall / no agent", "%.3fx" % (between / none),
        "<= 1.02x", between / none <= 1.02,
        "%.2f s vs %.2f s (medians of %d)" % (between, none, rounds))
    # inside a window the agent traces as `run` does (without CPU-clock
    # samples): compare what each adds to the job
    # a negative added time is noise larger than the cost: no ratio
    ratio = (during - none) / (run - none) if run > none and during > none else None
    row("9", "agent during a window: added wall / run's",
        "%.2fx" % ratio if ratio is not None else "noise", "<= 1.15x",
        ratio is not None and ratio <= 1.15,
        "%.2f s vs %.2f s under run, %.2f s untraced; probed from the next 1 s look on"
        % (during, run, none))

def agent_cputime(pid):
    """The process's user + system CPU seconds."""
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")


def agent_status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def agent_duty(quick):
    """The issue's 10 s / 60 s duty cycle, scaled to 1/6 of a shorter cycle
    (more attach/detach per second than 10/60: an upper bound), on a launch
    job that spans two cycles: what it adds to the job's time per step, as
    a share of what continuous tracing adds."""
    window, every = (1, 6) if quick else (2, 12)
    secs = 2 * every
    truth = os.path.join(scratch(), "t.json")

    def job():
        out([TRAINSIM, "-s", "launch", "-q", "-n", "100000000", "-t", str(secs),
             "--truth", truth], env=SIMENV)
        with open(truth) as f:
            return 1.0 / json.load(f)["steps_per_s"]

    def with_agent(w, e):
        def run():
            p = agent_start(w, e)
            try:
                return job()
            finally:
                agent_stop(p)
        return run

    none, duty, cont = median_of([job, with_agent(window, every),
                                  with_agent(3600, 3600)], 2)
    share = (duty - none) / (cont - none) if cont > none else float("inf")
    row("9", "agent duty cycle 1/6: added / continuous's", "%.2f" % share,
        "<= 0.20", share <= 0.20,
        "--window %d --every %d; per step %.1f us vs %.1f us continuous, %.1f us"
        " untraced" % (window, every, duty * 1e6, cont * 1e6, none * 1e6))


def agent_idle_cpu(quick):
    """The agent's own CPU between windows while a launch job runs."""
    secs = 5 if quick else 10
    p = agent_start(1, 3600)
    try:
        time.sleep(2.5)
        c0, t0 = agent_cputime(p.pid), time.monotonic()
        out([TRAINSIM, "-s", "launch", "-q", "-n", "100000000", "-t", str(secs)],
            env=SIMENV)
        c1, t1 = agent_cputime(p.pid), time.monotonic()
    finally:
        agent_stop(p)
    share = (c1 - c0) / (t1 - t0)
    row("9", "agent CPU between windows", "%.2f%%" % (100 * share),
        "<= 0.5% of a CPU", share <= 0.005,
        "%.2f CPU s over %.1f s of a launch job" % (c1 - c0, t1 - t0))


def agent_lifecycles(quick):
    """Agent RSS while short GPU processes come and go (the issue's 500 in
    10 minutes, here five at a time, each long enough to be found), in
    continuous mode: one window all along, so what the agent keeps per
    process shows.  The heap (RssAnon) is what grows with them; the rest is
    the ring buffer and mapped files, which come and go with the load."""
    n = 100 if quick else 500
    p = agent_start(3600, 3600)
    rss, anon = [], []
    try:
        running = []
        for i in range(n):
            running.append(popen([TRAINSIM, "-s", "healthy", "-q", "-t", "1.2",
                                  "-n", "1000000"], env=SIMENV,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            while len(running) >= 5:
                time.sleep(0.05)
                running = [r for r in running if r.poll() is None]
            if i % (n // 10) == 0:
                rss.append(agent_status(p.pid, "VmRSS"))
                anon.append(agent_status(p.pid, "RssAnon"))
        for r in running:
            r.wait()
        rss.append(agent_status(p.pid, "VmRSS"))
        anon.append(agent_status(p.pid, "RssAnon"))
        peak = agent_status(p.pid, "VmHWM")
        files = agent_status(p.pid, "RssFile")
    finally:
        agent_stop(p)
    row("9", "agent RSS, %d GPU processes come and go" % n, "%.1f MiB" % (peak / 1024),
        "<= 64 MiB, flat", peak <= 64 * 1024 and rss[-1] - rss[1] < 4096,
        "RSS %.1f MiB after %d, %.1f MiB at the end (anon %.1f -> %.1f, "
        "files and ring %.1f)" % (rss[1] / 1024, n // 10, rss[-1] / 1024,
                                  anon[1] / 1024, anon[-1] / 1024, files / 1024))


# Maps libcuda half a second in, then watches the first bytes of
# cuLaunchKernel in its own memory: a uprobe shows there as a breakpoint.
LATEJOB = r"""
import ctypes, os, time
time.sleep(0.5)
lib = ctypes.CDLL("libcuda.so.1")
t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
code = ctypes.cast(lib.cuLaunchKernel, ctypes.POINTER(ctypes.c_ubyte * 16))[0]
first = bytes(code)
probed = 0
while time.clock_gettime_ns(time.CLOCK_MONOTONIC) < t + 3e9 and not probed:
    if bytes(code) != first:
        probed = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    time.sleep(0.001)
print((probed - t) / 1e9 if probed else "inf", flush=True)
"""


def agent_latency(quick):
    """Continuous mode: from a process mapping libcuda to the agent's uprobe
    in it."""
    lat = []
    for _ in range(3):
        p = agent_start(3600, 3600)
        try:
            lat.append(float(out([sys.executable, "-c", LATEJOB], env=SIMENV)))
        finally:
            agent_stop(p)
    row("9", "agent discovery latency, continuous", "%.2f s" % max(lat),
        "<= 1 s", max(lat) <= 1.0,
        "max of %d; median %.2f s" % (len(lat), statistics.median(lat)))


# ---- 10. stacks ---------------------------------------------------------------

# Two Python threads hand a byte back and forth through pipes: every hand-off
# is a tracked switch-out with a Python stack to read.
PINGPONG = r"""
import os, sys, threading, time
n = int(sys.argv[1])
a, b = os.pipe(), os.pipe()
def pong():
    for _ in range(n):
        os.read(a[0], 1); os.write(b[1], b"x")
t = threading.Thread(target=pong); t.start()
t0 = time.monotonic()
for _ in range(n):
    os.write(a[1], b"x"); os.read(b[0], 1)
t.join()
print(time.monotonic() - t0)
"""

# A Python-heavy job: compute in Python, a short wait every few ms.  Two
# of them take turns on one CPU (argv[6]), a step each (argv[3] is the
# FIFO of this one's turns, argv[4] the other's), so that both meet the
# same load; each times its own steps (computing and sleeping), not the
# turns it waits for.  It prints that time and the median time its 0.5 ms
# sleep took, then waits until argv[5] exists.
PYJOB = r"""
import os, sys, time
n, ready, mine, theirs, done, cpu = int(sys.argv[1]), *sys.argv[2:7]
os.sched_setaffinity(0, {int(cpu)})
fin, fout = os.open(mine, os.O_RDWR), os.open(theirs, os.O_RDWR)
open(ready, "w").close()
spent = 0.0
naps = []
for i in range(n):
    os.read(fin, 1)
    t0 = time.monotonic()
    x = 0
    for k in range(20000):
        x = (x * 31 + k) % 1000003
    a = time.monotonic()
    time.sleep(0.0005)
    t1 = time.monotonic()
    naps.append(t1 - a)
    spent += t1 - t0
    os.write(fout, b"x")
naps.sort()
print(spent, naps[n // 2], flush=True)
while not os.path.exists(done):
    time.sleep(0.01)
"""


# Python-heavy steps as PYJOB's, alone, for argv[1] seconds; then a second
# asleep, so that what idlegap's programs ran is read before it exits.
PYSPIN = r"""
import sys, time
end, x = time.monotonic() + float(sys.argv[1]), 0
while time.monotonic() < end:
    for k in range(20000):
        x = (x * 31 + k) % 1000003
    time.sleep(0.0005)
time.sleep(1)
"""

BPF_PROG_TYPE_PERF_EVENT = 7


def bpf_run_time(cmd, env=None):
    """Runs `idlegap run` (cmd) with the kernel's BPF run-time statistics on
    (BPF_ENABLE_STATS, while its fd is open) and returns the ns idlegap's
    programs ran, by program type, as its fdinfo last showed them; None
    where the kernel keeps no such statistics."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(64)	# type 0: BPF_STATS_RUN_TIME
    fd = libc.syscall(321, 32, attr, len(attr))	# bpf(BPF_ENABLE_STATS)
    if fd < 0:
        return None
    ns = {}
    try:
        p = popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                  env=env)
        while p.poll() is None:
            ns = prog_times(p.pid) or ns
            time.sleep(0.2)
        groups.discard(p.pid)
    finally:
        os.close(fd)
    by = {}
    for t, v in ns.values():
        by[t] = by.get(t, 0) + v
    return by


def prog_times(pid):
    """{prog id: (type, run ns)} of the BPF programs @pid holds open."""
    got = {}
    try:
        for f in os.listdir("/proc/%d/fdinfo" % pid):
            with open("/proc/%d/fdinfo/%s" % (pid, f)) as fi:
                d = dict(ln.split(":", 1) for ln in fi if ":" in ln)
            if "prog_id" in d and "run_time_ns" in d:
                got[int(d["prog_id"])] = (int(d["prog_type"]),
                                          int(d["run_time_ns"]))
    except OSError:
        pass
    return got


def record_counts(path):
    """Records of a recording by kind, from `report --dump`."""
    n = {}
    for ln in out([IG, "report", "--dump", path]).splitlines():
        f = ln.split(" ", 2)
        if len(f) > 1:
            n[f[1]] = n.get(f[1], 0) + 1
    return n


def wait_files(paths, procs, timeout=120):
    end = time.monotonic() + timeout
    while not all(os.path.exists(f) for f in paths):
        bad = [p for p in procs if p.poll() is not None]
        if bad or time.monotonic() > end:
            for p in procs:
                killpg(p.pid, signal.SIGKILL)
            err = bad[0].stderr.read() if bad else "no start in %d s" % timeout
            raise RuntimeError("%s: %s" % (" ".join(bad[0].args) if bad else
                                           "side by side", err.strip()[-500:]))
        time.sleep(0.01)


def read_lines(procs, timeout=900):
    """The first line of each process's output, as numbers; a job that ends
    without one leaves the other waiting for its turn: both are stopped."""
    lines = {}
    end = time.monotonic() + timeout
    while len(lines) < len(procs):
        for i, p in enumerate(procs):
            if i not in lines and select.select([p.stdout], [], [], 0)[0]:
                lines[i] = tuple(float(v) for v in p.stdout.readline().split())
        if any(not lines.get(i, True) for i in range(len(procs))) or \
                time.monotonic() > end:
            for p in procs:
                killpg(p.pid, signal.SIGKILL)
            return [lines.get(i, ()) for i in range(len(procs))]
        time.sleep(0.05)
    return [lines[i] for i in range(len(procs))]


def side_by_side(cmds, envs, cpu):
    """Runs two jobs (PYJOB command lines) taking turns, once both are ready
    (idlegap attached); both exit once both have timed themselves (so
    idlegap's report comes after).  On a shared machine, runs made one after
    the other meet different loads; taking turns, both meet the same.
    Returns [(s spent in steps, median sleep s)] of each."""
    tmp = scratch()

    def f(name):
        return os.path.join(tmp, name)
    for i in (0, 1):
        os.mkfifo(f("turn%d" % i))
    procs = [popen(c + [f("ready%d" % i), f("turn%d" % i),
                        f("turn%d" % (1 - i)), f("done"), str(cpu)],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                   env=e)
             for i, (c, e) in enumerate(zip(cmds, envs))]
    try:
        wait_files([f("ready0"), f("ready1")], procs)
        with open(f("turn0"), "wb") as t:
            t.write(b"x")
        res = read_lines(procs)
        open(f("done"), "w").close()
        for p, r in zip(procs, res):
            err = p.communicate(timeout=300)[1]
            if p.returncode or len(r) != 2:
                raise RuntimeError("%s: exit %d: %s" % (" ".join(p.args),
                                   p.returncode, err.strip()[-500:]))
    finally:
        for p in procs:
            groups.discard(p.pid)
    return res


def stacks_cost(quick):
    py = "/usr/bin/python3"
    n = 5000 if quick else 30000
    tmp = scratch()
    loop = [py, "-c", PINGPONG, str(n)]
    nopy = dict(os.environ, IDLEGAP_NO_PYSTACKS="1")
    rec = [os.path.join(tmp, "on.igrec"), os.path.join(tmp, "off.igrec")]
    on, off, untr = median_of([
        lambda: float(out(traced(loop, "--no-nvml", "-o", rec[0]))),
        lambda: float(out(traced(loop, "--no-nvml", "-o", rec[1]), env=nopy)),
        lambda: float(out(loop))], 3 if quick else 5)
    per = (on - off) / (2 * n) * 1e9
    row("10", "stacks: added cost per tracked switch-out", "%.2f us" % (per / 1e3),
        "report", True, "Python stacks on %.3f s vs off %.3f s (untraced %.3f s),"
        " %d switch-outs" % (on, off, untr, 2 * n))
    s_on, s_off = os.path.getsize(rec[0]), os.path.getsize(rec[1])
    row("10", "stacks: recording size with/without", "%.2fx" % (s_on / s_off),
        "report", True, "%d vs %d bytes" % (s_on, s_off))
    steps = 300 if quick else 1000
    job = [py, "-c", PYJOB, str(steps)]
    arms = {"on": (traced(job, "--no-nvml"), None),
            "off": (traced(job, "--no-nvml"), nopy),
            "none": (job, None)}	# untraced beside untraced: the noise
    res = {k: [] for k in arms}
    for r in range(3 if quick else 5):
        for k, (cmd, env) in arms.items():
            # each side goes first, on either CPU, as often as the other
            pair = [(cmd, env), (job, None)][::-1 if r % 2 else 1]
            got = side_by_side([c for c, _ in pair], [e for _, e in pair],
                               (r // 2) % 2)
            res[k].append(got[::-1 if r % 2 else 1])
    ratio = {k: statistics.median(a[0] / b[0] for a, b in v)
             for k, v in res.items()}

    def med(k, i, j):
        return statistics.median(r[i][j] for r in res[k])
    row("10", "stacks: Python-heavy job traced/untraced", "%.3fx" % ratio["on"],
        "<= 1.03x", ratio["on"] <= 1.03,
        "taking turns, median of %d pairs: %.3f s vs %.3f s in %d steps;"
        " Python stacks off %.3fx; untraced beside untraced %.3fx; a 0.5 ms"
        " sleep took %.0f vs %.0f us" %
        (len(res["on"]), med("on", 0, 0), med("on", 1, 0), steps,
         ratio["off"], ratio["none"], med("on", 0, 1) * 1e6,
         med("on", 1, 1) * 1e6))
    sample_cost(py, 3 if quick else 8)


def sample_cost(py, secs):
    """What the CPU-sample program runs per sample of a Python-heavy job,
    with stacks and without: the kernel's own account, which the load
    beside the job does not blur as it does wall time."""
    rec = os.path.join(scratch(), "s.igrec")
    job = traced([py, "-c", PYSPIN, str(secs)], "--no-nvml", "-o", rec)
    off = dict(os.environ, IDLEGAP_NO_PYSTACKS="1", IDLEGAP_NO_USTACKS="1")
    per = {}
    for k, env in (("on", None), ("off", off)):
        ns = bpf_run_time(job, env)
        if ns is None:
            row("10", "stacks: BPF time per tracked CPU sample", "n/a",
                "report", True, "the kernel keeps no BPF run-time statistics")
            return
        n = record_counts(rec).get("sample", 0)
        per[k] = (ns.get(BPF_PROG_TYPE_PERF_EVENT, 0) / max(n, 1) / 1e3, n)
    row("10", "stacks: BPF time per tracked CPU sample", "%.2f us" % per["on"][0],
        "report", True, "stacks off %.2f us; all the program's runs (on every"
        " CPU) over the job's %d and %d samples" %
        (per["off"][0], per["on"][1], per["off"][1]))


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


def finish(name, t0, json_path):
    """The closing line of a bench run, and its rows as JSON."""
    print("\n%s: %d rows in %.0f s, %d MISS; load average %s" %
          (name, len(rows), time.monotonic() - t0,
           sum(r["result"] == "MISS" for r in rows),
           " ".join(open("/proc/loadavg").read().split()[:3])), flush=True)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    return 0


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


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    default=os.environ.get("BENCH_QUICK", "") not in ("", "0"))
    ap.add_argument("--rows")
    ap.add_argument("--json")
    ap.add_argument("--ab", metavar="OTHER_IDLEGAP")
    ap.add_argument("--ab-rounds", type=int, default=10)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("make bench: tracing needs root: sudo make bench", file=sys.stderr)
        return 1
    guard_children()
    if a.ab:
        return ab_main(a, set((a.rows or "1,3").split(",")))
    want = set((a.rows or "1,2,3,4,5,6,7,8,9,10,11").split(","))
    print("%-3s %-44s %14s %12s  %s" % ("row", "what", "measured", "target",
                                        "result"))
    t0 = time.monotonic()
    costs = guarded("1", probe_cost, a.quick) \
        if "1" in want or "3" in want else None
    if "2" in want:
        guarded("2", syscall_cost, a.quick)
    if "3" in want:
        if costs:
            guarded("3", end_to_end, a.quick, costs)
        else:
            row("3", "end to end", "MISS", "", False,
                "no probe floor: row 1 did not measure")
    if "4" in want:
        guarded("4", replay_throughput, a.quick)
        guarded("4", live_throughput, a.quick)
    if "4" in want or "4s" in want:
        guarded("4s", stack_cost, a.quick)
    if "5" in want:
        guarded("5", memory, a.quick)
    if "6" in want:
        guarded("6", attach_latency, a.quick)
    if "7" in want:
        guarded("7", accuracy_tables, a.quick)
    if "8" in want:
        guarded("8", trace_writing, a.quick)
    if "9" in want:
        for f in (agent_cost, agent_duty, agent_idle_cpu, agent_lifecycles,
                  agent_latency):
            guarded("9", f, a.quick)
    if "10" in want:
        guarded("10", stacks_cost, a.quick)
    if "11" in want:
        guarded("11", ranks_cost, a.quick)
    return finish("bench", t0, a.json)


if __name__ == "__main__":
    sys.exit(main())

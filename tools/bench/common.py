#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The bench's common parts (tools/bench.py): where the programs it runs
are, the children it starts (each in its own process group, all stopped
on a signal), a row of the table and a row group run so that a failure
is a MISS, not the end of the run, and the timings several row groups take.
"""
import atexit
import ctypes
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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


# --quick: fewer than the scenarios' default steps (300 for both)
# --quick: fewer than the scenarios' default steps (300 for both)
QUICK_STEPS = {"healthy": 150, "launch": 75}


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

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""trainsim.py: a Python training loop whose feeder fights for the GIL.

The feeder (main thread) drives the CUDA driver API through ctypes, like a
framework's Python front end: per step a little Python work to collate the
batch, one pinned host-to-device copy, K kernels of D microseconds, and a
stream synchronize (loss.item()).  Like a framework's op dispatch, the
feeder holds the GIL while it enqueues work, and releases it while it waits
for the GPU; after the wait it must take it back from the --threads threads
that run pure-Python code, while the GPU has nothing to do.

Scenarios:
  gil      GIL-holding threads starve the feeder (expected cause: gil)
  gil_eager  every driver call is its own ctypes call that releases and
           retakes the GIL, with a little Python work after each launch
           (--per-op), as in an eager framework; two
           pure-Python threads compete with the feeder for it: the GPU
           idles between small kernels while the feeder waits for the GIL
  healthy  no other threads; GPU-bound
  storage  the feeder reads each batch from disk (read_batch)
  pagefault  the feeder faults each batch in from a mapped file (touch_batch)
  lock     the feeder waits for a mutex a thread holds while it works in C
           without the GIL (hold_lock)
  objlock  the feeder appends to a list (append_batch) that a thread keeps
           sorting (sort_hog): on a free-threaded build the wait is for
           the list's own lock, which list.sort holds for the whole sort
           (expected cause: lock; with a GIL it is gil)
  loop     a per-op Python loop: 20 kernels of 150 us per step, each
           launched after 300 us of Python work (--op-us), one sync per
           step; the GPU idles about half the time
  loader   like a DataLoader: --workers forked processes read batches from
           disk (load_sample) and put them on a multiprocessing queue; the
           feeder waits in next_batch (expected cause: storage).  With
           --slow-every N the batches come from the page cache but every
           Nth batch's worker also reads a shard cold (--slow-ms), so that
           only those steps wait on storage; --no-slow: none does

Runs on the simulated driver (LD_LIBRARY_PATH=build/simgpu) and on a real
GPU.  Prints a summary; --truth writes the same ground-truth JSON as
build/trainsim.  Needs only /usr/bin/python3.

`trainsim.py ranks --world N -s gil|storage|compute|balanced` is a
data-parallel job of N ranks (tools/trainsim_ranks.py).  The driver and
the device are tools/trainsim_cuda.py, the work around them (the
contending threads, the batches, the loader) tools/trainsim_work.py;
neither imports this file.

EXAMPLES
    LD_LIBRARY_PATH=build/simgpu tools/trainsim.py --truth t.json
    tools/trainsim.py -s healthy -n 100 -k 4 -d 1000
"""

import argparse
import ctypes
import json
import os
import signal
import sys
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from trainsim_cuda import (CudaError, Driver, Gpu, c_ptr, c_u64,  # noqa: E402
                           mono_ns, trace_file)
from trainsim_work import (BatchLoader, Loader, collate, gil_hog,  # noqa: E402
                           op_work, step_slowed, thread_sched)

SCENARIOS = {
    # name: (expected cause, GIL threads, kernels, kernel_us, steps)
    "gil": ("gil", 1, 4, 500, 200),
    "gil_eager": ("gil", 2, 100, 20, 200),
    "healthy": (None, 0, 8, 2000, 300),
    "storage": ("storage", 0, 4, 500, 200),
    "pagefault": ("page_fault", 0, 4, 500, 200),
    "lock": ("lock", 0, 4, 500, 200),
    "objlock": ("lock", 0, 4, 500, 1 << 30),  # until --seconds
    "loader": ("storage", 0, 2, 500, 300),
    "loop": (None, 0, 20, 150, 1 << 30),
}
# loop: Python work before each launch (--op-us), microseconds
LOOP_OP_US = 300
# loader --slow-every/--no-slow: GPU-bound steps (kernels, kernel_us),
# every SLOW_EVERY'th slowed by SLOW_MS of cold reads
SLOW_STEP = (4, 2500)
SLOW_EVERY = 10
SLOW_MS = 100

def feeding_roles(args, tids, loader):
    """The threads whose waits feed the GPU, for the kernel's accounting
    (tools/truth.py): this main thread, the loader workers, the lock
    holder, the GIL holders."""
    me = {threading.get_native_id(): "feeder", 0: "other"}
    me.update((t, "gil_hog") for t in tids if t)
    holder = getattr(loader, "holder", None)
    if holder is not None and holder.native_id:
        me[holder.native_id] = "holder"
    roles = {os.getpid(): me}
    roles.update((p, {0: "worker"}) for p in getattr(args, "worker_pids", []))
    return roles


def run(args, gpu):
    drv = gpu.d
    host, dev = c_ptr(), c_u64()
    nbytes = args.batch_kb << 10
    drv("cuMemAllocHost_v2", ctypes.byref(host), nbytes)
    drv("cuMemAlloc_v2", ctypes.byref(dev), nbytes)
    stop = threading.Event()
    tids = [0] * args.threads
    hogs = [threading.Thread(target=gil_hog, args=(stop, tids, i),
                             daemon=True) for i in range(args.threads)]
    for t in hogs:
        t.start()
    if args.scenario == "loader":
        loader = BatchLoader(args.workers, args.steps, host,
                             (args.slow_every, args.slow_ms, args.no_slow)
                             if args.slow_every else None)
        args.worker_pids = loader.pids
    else:
        loader = Loader(args.scenario, stop)
    kernel_ns = int(args.kernel_us * 1000)
    op_ns = int(args.op_us * 1000)
    acct0 = truth.accounting_sample(feeding_roles(args, tids, loader))
    t0 = mono_ns()
    deadline = t0 + int(args.seconds * 1e9) if args.seconds > 0 else None
    steps = 0
    args.step_list = []
    try:
        while steps < args.steps and (deadline is None or
                                      mono_ns() < deadline):
            start = mono_ns()
            # the steps' run delays, for the CPU causes of slowed steps;
            # read only in a job with them (--slow-every): microseconds a
            # step would weigh in a storage step of a millisecond
            d0 = thread_sched() if args.slow_every else None
            collate(host, steps)
            loader.step(steps, nbytes)
            drv("cuMemcpyHtoDAsync_v2", dev, host, nbytes, None)
            for _ in range(args.kernels):
                if args.op_us:
                    op_work(op_ns)
                gpu.spin_ns(kernel_ns)
                if args.per_op and not args.op_us:
                    op_work()
            if not args.no_sync:
                drv("cuStreamSynchronize", None)
            end = mono_ns()
            d1 = thread_sched() if d0 else None
            args.step_list.append((start, end, (d1[1] - d0[1], d1[0] - d0[0]) if d0
                                   else (0, 0), getattr(loader, "delay", (0, 0))))
            steps += 1
    except KeyboardInterrupt:
        pass  # Ctrl-C ends the run; the summary and truth still follow
    drv("cuCtxSynchronize")
    t1 = mono_ns()
    args.accounting = truth.accounting_since(
        acct0, truth.accounting_sample(feeding_roles(args, tids, loader)))
    stop.set()
    for t in hogs:
        t.join()
    loader.close()
    drv("cuMemFreeHost", host)
    drv("cuMemFree_v2", dev)
    return steps, t0, t1, tids



def step_truth(args):
    """The truth's steps: each from before its batch wait to just after
    its last driver call, with the cause injected into it on purpose
    (with --slow-every only into every Nth, which are slow_steps; else
    the scenario's cause into every step alike)."""
    cause = SCENARIOS[args.scenario][0]
    lst, slow = [], []
    for i, (a, b, rd, lrd) in enumerate(getattr(args, "step_list", [])):
        c = cause
        if args.slow_every:
            c = None
            if step_slowed(i, args.slow_every, args.no_slow):
                c = cause
                slow.append(i)
        # the feeder's wait for a CPU and time on one in the step, and
        # its batch's worker's while it made it (schedstat), as
        # workload/feeder.c
        x = {"index": i, "start_ns": a, "end_ns": b, "cause": c, "rank": 0}
        if args.slow_every:
            x.update(run_delay_ns=rd[0], cpu_ns=rd[1], loader_run_delay_ns=lrd[0],
                     loader_cpu_ns=lrd[1])
        lst.append(x)
    return {"step_structure": True, "slow_every": args.slow_every or 0,
            "no_slow": args.no_slow, "slow_steps": slow, "step_list": lst}


def report(args, drv, gpu, steps, t0, t1, tids):
    if drv.sim:
        files, ivs = truth.read_traces([trace_file()])
    else:
        # the kernels' own %globaltimer stamps are the truth: written in the
        # simulator's trace format where SIMGPU_TRACE asks, so that one
        # scorer reads both
        files, ivs = [], gpu.kernel_intervals()
        if trace_file():
            with open(trace_file(), "w") as f:
                f.writelines("kernel gpu %d %d\n" % iv for iv in ivs)
            files = [trace_file()]
    busy = truth.merge(ivs)
    wall = (t1 - t0) / 1e9
    start, end = (busy[0][0], busy[-1][1]) if busy else (0, 0)
    span = end - start
    idle = span - truth.total(busy)
    cause = None if args.no_slow else SCENARIOS[args.scenario][0]
    out = {
        "scenario": args.scenario,
        "expected_cause": cause,
        "simulated": drv.sim,
        "device": gpu.name,
        "wall_s": wall,
        "steps": steps,
        "steps_per_s": steps / wall if wall > 0 else 0.0,
    }
    out.update(step_truth(args))
    out.update({
        "gpu": {"busy_s": truth.total(busy) / 1e9, "idle_s": idle / 1e9,
                "idle_share": idle / span if span else 0.0,
                "span_start_ns": start, "span_end_ns": end,
                "ops": len(ivs)},
        "trace_files": files,
        "pids": {"feeder": os.getpid(),
                 "feeder_tid": threading.get_native_id(),
                 "gil_threads": tids,
                 "workers_are_threads": False,
                 "workers": getattr(args, "worker_pids", [])},
        "accounting": getattr(args, "accounting", None),
        "config": {"threads": args.threads, "kernels": args.kernels,
                   "kernel_us": args.kernel_us, "workers": args.workers,
                   "batch_bytes": args.batch_kb << 10,
                   "sync": not args.no_sync,
                   "slow_ms": args.slow_ms if args.slow_every else 0,
                   "switch_interval_s": sys.getswitchinterval()},
    })
    if not args.quiet:
        print("trainsim.py: %s on %s: %d steps in %.2f s (%.1f steps/s)" %
              (args.scenario, gpu.name, steps, wall, out["steps_per_s"]))
        print("trainsim.py: GPU busy %.3f s, idle %.3f s = %.1f%% of %.3f s "
              "span, %d ops; expected cause: %s" %
              (out["gpu"]["busy_s"], idle / 1e9,
               100 * out["gpu"]["idle_share"], span / 1e9, len(ivs),
               cause or "none"))
    if args.truth:
        if args.truth == "-":
            json.dump(out, sys.stdout, indent=2)
            print()
        else:
            with open(args.truth, "w") as f:
                json.dump(out, f, indent=2)
                f.write("\n")
    elif drv.set_trace:
        for f in files:
            os.unlink(f)


def parse_args():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-s", "--scenario", choices=sorted(SCENARIOS),
                    default="gil")
    ap.add_argument("-n", "--steps", type=int)
    ap.add_argument("-t", "--seconds", type=float, default=15.0,
                    help="stop after S seconds (default 15)")
    ap.add_argument("-k", "--kernels", type=int, help="kernels per step")
    ap.add_argument("-d", "--kernel-us", type=float,
                    help="duration of each kernel, microseconds")
    ap.add_argument("--threads", type=int,
                    help="pure-Python threads contending for the GIL")
    ap.add_argument("--workers", type=int, default=2,
                    help="loader processes (loader scenario, default 2)")
    ap.add_argument("--batch-kb", type=int, default=256,
                    help="bytes copied to the device per step, KiB")
    ap.add_argument("--per-op", action="store_true",
                    help="every driver call releases and retakes the GIL "
                    "(default for gil_eager)")
    ap.add_argument("--op-us", type=float, default=0,
                    help="Python work before each launch, microseconds, "
                    "in place of --per-op's tens of them after it")
    ap.add_argument("--no-sync", action="store_true",
                    help="never synchronize each step")
    ap.add_argument("--slow-every", type=int, metavar="N",
                    help="loader: batches from the page cache, every Nth "
                    "worker also reads a shard cold (steps slowed by storage)")
    ap.add_argument("--slow-ms", type=float, default=SLOW_MS,
                    help="--slow-every: the cold shard's reads, ms "
                    "(default %d)" % SLOW_MS)
    ap.add_argument("--no-slow", action="store_true",
                    help="loader: the same job with no cold shard")
    ap.add_argument("--truth", metavar="FILE",
                    help="write ground truth JSON (- for stdout)")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()
    _, threads, kernels, kernel_us, steps = SCENARIOS[args.scenario]
    if args.slow_every is not None or args.no_slow:
        if args.scenario != "loader":
            ap.error("--slow-every and --no-slow are for -s loader")
        if args.slow_every is None:
            args.slow_every = SLOW_EVERY
        if args.slow_every < 1:
            ap.error("--slow-every must be at least 1")
        kernels, kernel_us = SLOW_STEP
    for name, default in (("threads", threads), ("kernels", kernels),
                          ("kernel_us", kernel_us), ("steps", steps)):
        if getattr(args, name) is None:
            setattr(args, name, default)
    args.per_op = args.per_op or args.scenario in ("gil_eager", "loop")
    if args.scenario == "loop" and not args.op_us:
        args.op_us = LOOP_OP_US
    if args.workers < 1:
        ap.error("--workers must be at least 1")
    return args


def on_term(signum, frame):
    raise KeyboardInterrupt


def main():
    if sys.argv[1:2] == ["ranks"]:
        import trainsim_ranks
        return trainsim_ranks.main(sys.argv[2:])
    args = parse_args()
    signal.signal(signal.SIGTERM, on_term)
    try:
        drv = Driver(args.per_op)
    except OSError as e:
        print("trainsim.py: cannot load libcuda.so.1: %s" % e, file=sys.stderr)
        return 1
    try:
        gpu = Gpu(drv)
        if not drv.sim:
            gpu.calibrate()
        steps, t0, t1, tids = run(args, gpu)
        report(args, drv, gpu, steps, t0, t1, tids)
        gpu.close()
    except (CudaError, OSError) as e:
        print("trainsim.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

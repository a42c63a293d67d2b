# SPDX-License-Identifier: GPL-2.0
"""trainsim.py ranks: a data-parallel job in Python, one process per rank.

    tools/trainsim.py ranks --world 4 -s gil [--straggler 2] [-n STEPS]

Each rank is trainsim.py's training loop (collate, a pinned copy, K
kernels) whose step reads its loss (loss.item(): a stream synchronize, as
loops that log it or check the gradients' norm each step do), then
all-reduces its gradients through libnccl.so.2 (ctypes) and ends with a
stream synchronize.  A rank whose GPU has more work waits longer in the
loss's sync and launches its all-reduce late.  --no-loss-sync launches
the all-reduce right behind the kernels: which GPU was still busy is then
not seen from the host.  One rank, --straggler
(default 2), is starved by its host:

  gil       two pure-Python threads hold the GIL against its feeder
  storage   its feeder reads each batch past the page cache
  compute   it runs 4 times the kernels of the others
  balanced  no straggler; 4 GiB all-reduces, communication-bound

The others' GPUs then wait for it inside the all-reduce.  Without RANK and
WORLD_SIZE in the environment this is the launcher: it starts --world
copies of itself with RANK, LOCAL_RANK and WORLD_SIZE set, as torchrun
does, and merges their --truth files into one.  Rank 0 hands the NCCL
unique id to the others through the file TRAINSIM_NCCL_ID (the launcher
sets one in a private directory; default
$TMPDIR/trainsim-ncclid-$MASTER_PORT).
"""

import argparse
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import trainsim_cuda as cu
import trainsim_work as work
import truth

RANKS = {
    # name: (straggler's own cause, straggler kind, gradient MiB)
    "gil": ("gil", "gil", 64),
    "storage": ("storage", "storage", 64),
    "compute": (None, "compute", 64),
    "balanced": (None, None, 4096),
}


# The GIL straggler's pure-Python threads: two, so that its feeder waits
# for the GIL at each return from the driver more than for a CPU on a
# loaded host.
GIL_HOGS = 2


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


class Nccl:
    def __init__(self):
        # PyDLL: the front end holds the GIL while it enqueues, like the
        # driver calls; CDLL for the blocking communicator set-up
        self.held = ctypes.PyDLL("libnccl.so.2")
        self.lib = ctypes.CDLL("libnccl.so.2")
        self.lib.ncclGetErrorString.restype = ctypes.c_char_p
        self.lib.ncclCommInitRank.argtypes = [
            ctypes.POINTER(cu.c_ptr), ctypes.c_int, UniqueId, ctypes.c_int]
        self.held.ncclAllReduce.argtypes = [
            cu.c_ptr, cu.c_ptr, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
            cu.c_ptr, cu.c_ptr]
        self.lib.ncclCommDestroy.argtypes = [cu.c_ptr]

    def check(self, r, what):
        if r:
            raise cu.CudaError("%s: %s" % (
                what, self.lib.ncclGetErrorString(r).decode()))


def id_path():
    return os.environ.get("TRAINSIM_NCCL_ID") or os.path.join(
        os.environ.get("TMPDIR") or "/tmp",
        "trainsim-ncclid-" + os.environ.get("MASTER_PORT", "29500"))


def exchange_id(nccl, rank):
    """Rank 0 writes the id and renames it into place; the others poll."""
    uid, path = UniqueId(), id_path()
    if rank == 0:
        nccl.check(nccl.lib.ncclGetUniqueId(ctypes.byref(uid)),
                   "ncclGetUniqueId")
        tmp = "%s.%d" % (path, os.getpid())
        with open(tmp, "wb") as f:
            f.write(bytes(uid))
        os.rename(tmp, path)
        return uid
    deadline = time.monotonic() + 120
    while True:
        try:
            with open(path, "rb") as f:
                data = f.read()
            if len(data) == 128:
                ctypes.memmove(ctypes.byref(uid), data, 128)
                return uid
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise OSError("no NCCL id in %s from rank 0" % path)
        time.sleep(0.01)


def nccl_summary(path):
    """Waits and transfers of this rank's collectives (SIMNCCL_TRACE)."""
    n, wait, xfer = 0, 0, 0
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 13:
                    n += 1
                    wait += int(p[8]) - int(p[7])
                    xfer += int(p[10]) - int(p[9])
    except OSError:
        return {"traced": 0, "wait_s": 0.0, "transfer_s": 0.0,
                "trace_file": None}
    return {"traced": n, "wait_s": wait / 1e9, "transfer_s": xfer / 1e9,
            "trace_file": path}


def rank_main(args, rank, world):
    cause, kind, grad_mb = RANKS[args.scenario]
    straggler = kind is not None and rank == args.straggler
    role = "balanced" if kind is None else (
        "straggler" if straggler else "peer")
    set_ntrace = not os.environ.get("SIMNCCL_TRACE")
    if set_ntrace:
        os.environ["SIMNCCL_TRACE"] = os.path.join(
            os.environ.get("TMPDIR") or "/tmp", "trainsim-py-nccl.%p")
    # one simulated GPU per rank, as torchrun jobs use cuda:LOCAL_RANK
    os.environ.setdefault("SIMGPU_DEVICES", str(world))
    drv = cu.Driver(False)
    gpu = cu.Gpu(drv, int(os.environ.get("LOCAL_RANK", rank)))
    nccl = Nccl()
    comm = cu.c_ptr()
    nccl.check(nccl.lib.ncclCommInitRank(ctypes.byref(comm), world,
                                         exchange_id(nccl, rank), rank),
               "ncclCommInitRank")
    if rank == 0:
        os.unlink(id_path())
    count = ((args.grad_mb or grad_mb) << 20) // 4
    host, dev, grad = cu.c_ptr(), cu.c_u64(), cu.c_u64()
    nbytes = args.batch_kb << 10
    drv("cuMemAllocHost_v2", ctypes.byref(host), nbytes)
    drv("cuMemAlloc_v2", ctypes.byref(dev), nbytes)
    drv("cuMemAlloc_v2", ctypes.byref(grad), count * 4)
    stop = threading.Event()
    tids = [0] * GIL_HOGS
    hogs = []
    if straggler and kind == "gil":
        hogs = [threading.Thread(target=work.gil_hog, args=(stop, tids, i),
                                 daemon=True) for i in range(GIL_HOGS)]
        for t in hogs:
            t.start()
    loader = work.Loader("storage" if straggler and kind == "storage"
                       else "healthy", stop)
    kernels = args.kernels * (4 if straggler and kind == "compute" else 1)
    kernel_ns = int(args.kernel_us * 1000)
    t0 = cu.mono_ns()
    steps = []  # (start, end) of each step, for the truth's step_list
    try:
        for step in range(args.steps):
            t = cu.mono_ns()
            work.collate(host, step)
            loader.step(step, nbytes)
            drv("cuMemcpyHtoDAsync_v2", dev, host, nbytes, None)
            for _ in range(kernels):
                gpu.spin_ns(kernel_ns)
            if not args.no_loss_sync:  # loss.item()
                drv("cuStreamSynchronize", None)
            # ncclFloat32 = 7, ncclSum = 0
            nccl.check(nccl.held.ncclAllReduce(grad.value, grad.value,
                                               count, 7, 0, comm, None),
                       "ncclAllReduce")
            drv("cuStreamSynchronize", None)
            steps.append((t, cu.mono_ns()))
        drv("cuCtxSynchronize")
    finally:
        t1 = cu.mono_ns()
        stop.set()
        for t in hogs:
            t.join()
        loader.close()
    nccl.check(nccl.lib.ncclCommDestroy(comm), "ncclCommDestroy")
    files, ivs = truth.read_traces([cu.trace_file()])
    busy = truth.merge(ivs)
    start, end = (busy[0][0], busy[-1][1]) if busy else (0, 0)
    idle = end - start - truth.total(busy)
    ntrace = os.environ["SIMNCCL_TRACE"].replace("%p", str(os.getpid()))
    out = {
        "scenario": args.scenario, "rank": rank, "world": world,
        "local_rank": int(os.environ.get("LOCAL_RANK", rank)),
        "role": role, "expected_cause": cause if straggler else None,
        "simulated": drv.sim, "device": gpu.name,
        "wall_s": (t1 - t0) / 1e9, "steps": args.steps,
        # the straggler is slow in every step alike: its cause in each,
        # the others waiting for it (peer_wait), no step slowed beyond
        # the rest
        "step_structure": True, "slow_every": 0, "no_slow": False,
        "slow_steps": [],
        "step_list": [dict({"index": i, "start_ns": a, "end_ns": b,
                            "cause": cause if straggler else
                            "peer_wait" if kind else None, "rank": rank},
                           **({"late_rank": args.straggler}
                              if kind and not straggler else {}))
                      for i, (a, b) in enumerate(steps)],
        "gpu": {"busy_s": truth.total(busy) / 1e9, "idle_s": idle / 1e9,
                "idle_share": idle / (end - start) if end > start else 0.0,
                "span_start_ns": start, "span_end_ns": end,
                "ops": len(ivs)},
        "trace_files": files,
        "pids": {"feeder": os.getpid(),
                 "feeder_tid": threading.get_native_id(),
                 "gil_threads": [t for t in tids if t]},
        "nccl": dict(nccl_summary(ntrace), collectives=args.steps),
    }
    if not args.quiet:
        print("trainsim.py: rank %d (%s): %d steps in %.2f s, GPU idle "
              "%.3f s, waited %.3f s in all-reduces" % (
                  rank, role, args.steps, out["wall_s"], idle / 1e9,
                  out["nccl"]["wait_s"]))
    if args.truth:
        with open("%s.rank%d" % (args.truth, rank), "w") as f:
            json.dump(out, f, indent=2)
    else:  # traces nobody asked for and no truth points to
        for f, mine in ((ntrace, set_ntrace), (cu.trace_file(),
                                                drv.set_trace)):
            if mine and os.path.exists(f):
                os.unlink(f)
    gpu.close()
    return 0


def launch(args, argv):
    d = tempfile.mkdtemp(prefix="trainsim-ranks.",
                         dir=os.environ.get("TMPDIR") or "/tmp")
    env = dict(os.environ, TRAINSIM_NCCL_ID=os.path.join(d, "ncclid"),
               WORLD_SIZE=str(args.world))
    me = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "trainsim.py")
    t0 = time.monotonic()
    procs = [subprocess.Popen(
        [sys.executable, me, "ranks"] + argv,
        env=dict(env, RANK=str(r), LOCAL_RANK=str(r)))
        for r in range(args.world)]

    def forward(sig, frame):
        for p in procs:
            p.send_signal(sig)
    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    bad = sum(1 for p in procs if p.wait() != 0)
    shutil.rmtree(d, ignore_errors=True)
    if not args.quiet:
        print("trainsim.py: ranks %s: %d ranks, %d steps each, %.2f s; "
              "%d failed" % (args.scenario, args.world, args.steps,
                             time.monotonic() - t0, bad))
    if args.truth:
        cause, kind, _ = RANKS[args.scenario]
        ranks = []
        for r in range(args.world):
            p = "%s.rank%d" % (args.truth, r)
            try:
                with open(p) as f:
                    ranks.append(json.load(f))
                os.unlink(p)
            except (OSError, ValueError):
                ranks.append(None)
                bad += 1
        with open(args.truth, "w") as f:
            json.dump({"mode": "ranks", "scenario": args.scenario,
                       "world": args.world,
                       "loss_sync": not args.no_loss_sync,
                       "straggler": args.straggler if kind else -1,
                       "straggler_cause": cause, "steps": args.steps,
                       "ranks": ranks}, f, indent=2)
            f.write("\n")
    return 1 if bad else 0


def main(argv):
    ap = argparse.ArgumentParser(
        prog="trainsim.py ranks", description=__doc__,
        formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-s", "--scenario", choices=sorted(RANKS), default="gil")
    ap.add_argument("--world", type=int, help="start N ranks")
    ap.add_argument("--straggler", type=int, default=2)
    ap.add_argument("-n", "--steps", type=int, default=200)
    ap.add_argument("-k", "--kernels", type=int, default=4)
    ap.add_argument("-d", "--kernel-us", type=float, default=2000)
    ap.add_argument("--grad-mb", type=int, help="gradients per step, MiB")
    ap.add_argument("--batch-kb", type=int, default=256)
    ap.add_argument("--no-loss-sync", action="store_true",
                    help="all-reduce without reading the loss first")
    ap.add_argument("--truth", metavar="FILE",
                    help="write ground truth JSON (per rank: FILE.rankR)")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    rank = os.environ.get("RANK")
    world = int(os.environ.get("WORLD_SIZE") or args.world or 0)
    if world < 1 or world > 64:
        ap.error("give --world N (1..64), or RANK and WORLD_SIZE")
    args.world = world
    if RANKS[args.scenario][1] and not 0 <= args.straggler < world:
        ap.error("--straggler %d is not a rank of %d" %
                 (args.straggler, world))
    try:
        if rank is None:
            return launch(args, argv)
        return rank_main(args, int(rank), world)
    except (cu.CudaError, OSError) as e:
        print("trainsim.py: rank %s: %s" % (rank, e), file=sys.stderr)
        return 1

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ctxnow.py: a process that loads libcuda by dlopen (ctypes, as PyTorch
does) and creates its context at once: cuInit, cuDeviceGet,
cuDevicePrimaryCtxRetain, a module, then --launches kernels and a
synchronize.  With --children N it starts N copies of itself (a launcher's
ranks: each loads libcuda only after it was started) and waits for them.
Prints one JSON line per process: its pid, the CLOCK_MONOTONIC of the
dlopen and of its first launch, and its ordinal.

    LD_LIBRARY_PATH=build/simgpu tests/py/ctxnow.py [--children N]
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

PTX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "workload", "spin.ptx")


def mono_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def check(r, what):
    if r:
        raise OSError("%s: CUDA error %d" % (what, r))


def job(args):
    t_open = mono_ns()
    cu = ctypes.CDLL("libcuda.so.1")
    t_loaded = mono_ns()
    dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), \
        ctypes.c_void_p()
    check(cu.cuInit(0), "cuInit")
    check(cu.cuDeviceGet(ctypes.byref(dev), args.ordinal), "cuDeviceGet")
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
          "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    with open(PTX, "rb") as f:
        ptx = ctypes.create_string_buffer(f.read())
    check(cu.cuModuleLoadData(ctypes.byref(mod), ptx), "cuModuleLoadData")
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"idlegap_spin"),
          "cuModuleGetFunction")
    ns, rec = ctypes.c_uint64(args.kernel_us * 1000), ctypes.c_uint64(0)
    params = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(ns), ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(rec), ctypes.c_void_p))
    launch = cu.cuLaunchKernel
    launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
        ctypes.c_void_p] * 3
    t_first = mono_ns()
    for _ in range(args.launches):
        check(launch(fn, 1, 1, 1, 1, 1, 1, 0, None, params, None),
              "cuLaunchKernel")
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    time.sleep(args.linger)
    print(json.dumps({"pid": os.getpid(), "ordinal": args.ordinal,
                      "dlopen_ns": t_open, "loaded_ns": t_loaded,
                      "first_launch_ns": t_first,
                      "launches": args.launches}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--children", type=int, default=0)
    ap.add_argument("--ordinal", type=int, default=0)
    ap.add_argument("--launches", type=int, default=20)
    ap.add_argument("--kernel-us", type=int, default=1000)
    ap.add_argument("--linger", type=float, default=0.3)
    args = ap.parse_args()
    if not args.children:
        job(args)
        return 0
    me = os.path.abspath(__file__)
    kids = [subprocess.Popen([sys.executable, me, "--ordinal", str(i),
                              "--launches", str(args.launches),
                              "--kernel-us", str(args.kernel_us),
                              "--linger", str(args.linger)])
            for i in range(args.children)]
    return 1 if sum(1 for k in kids if k.wait()) else 0


if __name__ == "__main__":
    sys.exit(main())

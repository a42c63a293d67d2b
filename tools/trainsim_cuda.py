#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""trainsim.py's GPU: the CUDA driver API through ctypes (Driver), one
device's context, module and stream (Gpu), and the clock and trace file
they share with the loop (tools/trainsim.py) and the ranks
(tools/trainsim_ranks.py).  Imports no other part of trainsim.
"""

import ctypes
import os
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PTX_PATH = os.path.join(HERE, "..", "workload", "spin.ptx")

CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1

c_ptr = ctypes.c_void_p
c_u64 = ctypes.c_uint64
CUresult = ctypes.c_int


def mono_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


class CudaError(Exception):
    pass


class Driver:
    """The few driver entry points the loop uses, by their versioned
    names, loaded from whatever libcuda.so.1 the loader finds."""

    SIGS = {
        "cuInit": [ctypes.c_uint],
        "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
        "cuDeviceGetName": [ctypes.c_char_p, ctypes.c_int, ctypes.c_int],
        "cuDevicePrimaryCtxRetain": [ctypes.POINTER(c_ptr), ctypes.c_int],
        "cuDevicePrimaryCtxRelease_v2": [ctypes.c_int],
        "cuCtxSetCurrent": [c_ptr],
        "cuCtxSynchronize": [],
        "cuModuleLoadData": [ctypes.POINTER(c_ptr), ctypes.c_char_p],
        "cuModuleGetFunction": [ctypes.POINTER(c_ptr), c_ptr,
                                ctypes.c_char_p],
        "cuMemAlloc_v2": [ctypes.POINTER(c_u64), ctypes.c_size_t],
        "cuMemFree_v2": [c_u64],
        "cuMemAllocHost_v2": [ctypes.POINTER(c_ptr), ctypes.c_size_t],
        "cuMemFreeHost": [c_ptr],
        "cuMemcpyHtoDAsync_v2": [c_u64, c_ptr, ctypes.c_size_t, c_ptr],
        "cuMemcpyDtoH_v2": [c_ptr, c_u64, ctypes.c_size_t],
        "cuLaunchKernel": [c_ptr] + [ctypes.c_uint] * 7 +
                          [c_ptr, ctypes.POINTER(c_ptr), c_ptr],
        "cuStreamSynchronize": [c_ptr],
        "cuGetErrorName": [CUresult, ctypes.POINTER(ctypes.c_char_p)],
    }

    # Entry points that wait for the GPU: called without the GIL.
    WAITS = ("cuStreamSynchronize", "cuCtxSynchronize", "cuMemcpyDtoH_v2")

    def __init__(self, per_op=False):
        self.set_trace = False
        # PyDLL keeps the GIL during the call (enqueueing work), CDLL
        # releases it (waiting for the GPU)
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.held = ctypes.PyDLL("libcuda.so.1")
        try:
            self.lib.simgpu_version
            self.sim = True
        except AttributeError:
            self.sim = False
        # The simulated driver reads SIMGPU_TRACE in cuInit.
        if self.sim and not os.environ.get("SIMGPU_TRACE"):
            tmp = os.environ.get("TMPDIR") or "/tmp"
            os.environ["SIMGPU_TRACE"] = tmp + "/trainsim-py-trace.%p"
            self.set_trace = True
        self.fns = {}
        for name, args in self.SIGS.items():
            fn = getattr(self.lib if per_op or name in self.WAITS
                         else self.held, name)
            fn.argtypes = args
            fn.restype = CUresult
            self.fns[name] = fn

    def __call__(self, name, *args):
        r = self.fns[name](*args)
        if r:
            s = ctypes.c_char_p()
            self.lib.cuGetErrorName(r, ctypes.byref(s))
            raise CudaError("%s: %s (%d)" % (
                name, (s.value or b"CUDA error").decode(), r))


class Gpu:
    def __init__(self, drv, ordinal=0):
        self.d = drv
        self.dev = ctypes.c_int()
        self.ctx = c_ptr()
        self.mod = c_ptr()
        self.spin = c_ptr()
        self.stamp = c_ptr()
        self.rec = c_u64(0)
        self.rec_cap = 1 << 20
        self.nrec = 0
        # (%globaltimer, offset to CLOCK_MONOTONIC) at the start and at
        # the end: the clocks drift apart by tens of ppm
        self.cal = []
        name = ctypes.create_string_buffer(64)
        drv("cuInit", 0)
        drv("cuDeviceGet", ctypes.byref(self.dev), ordinal)
        drv("cuDeviceGetName", name, 64, self.dev)
        self.name = name.value.decode()
        drv("cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx), self.dev)
        drv("cuCtxSetCurrent", self.ctx)
        with open(PTX_PATH, "rb") as f:
            self.ptx = ctypes.create_string_buffer(f.read())
        drv("cuModuleLoadData", ctypes.byref(self.mod), self.ptx)
        drv("cuModuleGetFunction", ctypes.byref(self.spin), self.mod,
            b"idlegap_spin")
        drv("cuModuleGetFunction", ctypes.byref(self.stamp), self.mod,
            b"idlegap_stamp")
        if not drv.sim:
            # and room after the records for calibrate()'s stamps
            drv("cuMemAlloc_v2", ctypes.byref(self.rec), self.rec_cap * 16 + 256)

    def launch(self, fn, *params):
        vals = [c_u64(p) for p in params]
        args = (c_ptr * len(vals))(*[ctypes.cast(ctypes.byref(v), c_ptr)
                                     for v in vals])
        self.d("cuLaunchKernel", fn, 1, 1, 1, 1, 1, 1, 0, None, args, None)

    def spin_ns(self, ns):
        rec = 0
        if self.rec.value:
            rec = self.rec.value + (self.nrec % self.rec_cap) * 16
            self.nrec += 1
        self.launch(self.spin, ns, rec)

    def calibrate(self):
        """Maps %globaltimer onto CLOCK_MONOTONIC (real GPUs only)."""
        rounds = []
        at = self.rec.value + self.rec_cap * 16
        for i in range(16):
            lo = mono_ns()
            self.launch(self.stamp, at + 8 * i)
            self.d("cuStreamSynchronize", None)
            rounds.append((lo, mono_ns()))
        gt = (c_u64 * 16)()
        self.d("cuMemcpyDtoH_v2", gt, c_u64(at), ctypes.sizeof(gt))
        lo, hi, g = min(((lo, hi, gt[i]) for i, (lo, hi) in
                         enumerate(rounds)), key=lambda t: t[1] - t[0])
        self.cal = self.cal[:1] + [(g, g - (lo + hi) // 2)]

    def to_mono(self, g):
        """CLOCK_MONOTONIC of a %globaltimer stamp: the offset drifts
        linearly between the two calibrations."""
        (g0, o0), (g1, o1) = self.cal[0], self.cal[-1]
        if g1 <= g0:
            return g - o0
        return int(g - o0 - (g - g0) / (g1 - g0) * (o1 - o0))

    def kernel_intervals(self):
        n = min(self.nrec, self.rec_cap)
        if not n:
            return []
        buf = (c_u64 * (2 * n))()
        self.d("cuCtxSynchronize")
        self.calibrate()  # the end point of the drift
        self.d("cuMemcpyDtoH_v2", buf, self.rec, ctypes.sizeof(buf))
        return [(self.to_mono(buf[2 * i]), self.to_mono(buf[2 * i + 1]))
                for i in range(n)]

    def close(self):
        self.d("cuCtxSynchronize")
        if self.rec.value:
            self.d("cuMemFree_v2", self.rec)
        self.d("cuDevicePrimaryCtxRelease_v2", self.dev)


def trace_file():
    t = os.environ.get("SIMGPU_TRACE", "")
    return t.replace("%p", str(os.getpid())).replace("%%", "%")


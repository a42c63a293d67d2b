#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""torchloader.py: a PyTorch DataLoader feeding a training loop.

A torch Dataset whose __getitem__ reads one sample file from disk, past the
page cache (O_DIRECT, or its pages dropped first), as a Dataset of images
does; a torch.utils.data.DataLoader with --workers worker processes, started
by the multiprocessing start method of the Python it runs on (3.14 on Linux:
forkserver, so the workers are children of the fork server); a training
loop that drives the GPU through the CUDA driver API by ctypes
(tools/trainsim_cuda.py's Driver and Gpu): per batch a host-to-device copy, a
kernel and a stream synchronize.  With few workers and cold files the GPU
waits for the next batch: the expected cause is storage, its blocked stack
in ColdFiles.__getitem__.

Needs torch (Debian's python3-torch) and a libcuda (the simulated one:
LD_LIBRARY_PATH=build/simgpu).

    LD_LIBRARY_PATH=build/simgpu tools/torchloader.py -t 5
"""
import argparse
import ctypes
import mmap
import multiprocessing
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.utils.data  # noqa: E402
import trainsim_cuda  # noqa: E402

SAMPLE_KB = 256


def read_cold(path):
    """One sample, read from the disk rather than the page cache."""
    try:
        fd, direct = os.open(path, os.O_RDONLY | os.O_DIRECT), True
    except OSError:  # a file system without direct IO
        fd, direct = os.open(path, os.O_RDONLY), False
    try:
        if not direct:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        buf = mmap.mmap(-1, SAMPLE_KB << 10)  # page-aligned, for O_DIRECT
        n = os.preadv(fd, [buf], 0)
        return buf[:n]
    finally:
        os.close(fd)


class ColdFiles(torch.utils.data.Dataset):
    """Samples as files, each read when asked for."""

    def __init__(self, root, n):
        self.paths = [os.path.join(root, "s%04d" % i) for i in range(n)]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        data = read_cold(self.paths[i])  # GETITEM_READ_LINE
        return torch.frombuffer(bytearray(data), dtype=torch.uint8).float().mean()


def make_samples(root, n):
    os.makedirs(root, exist_ok=True)
    block = os.urandom(SAMPLE_KB << 10)
    for i in range(n):
        p = os.path.join(root, "s%04d" % i)
        if not os.path.exists(p) or os.path.getsize(p) != len(block):
            with open(p, "wb") as f:
                f.write(block)
    os.sync()


def train(args):
    drv = trainsim_cuda.Driver()
    gpu = trainsim_cuda.Gpu(drv)
    host, dev = trainsim_cuda.c_ptr(), trainsim_cuda.c_u64()
    nbytes = 1 << 20
    drv("cuMemAllocHost_v2", ctypes.byref(host), nbytes)
    drv("cuMemAlloc_v2", ctypes.byref(dev), nbytes)
    ds = ColdFiles(args.data, args.samples)
    loader = torch.utils.data.DataLoader(ds, batch_size=args.batch, shuffle=True,
                                         num_workers=args.workers,
                                         persistent_workers=True)
    print("torchloader.py: python %s, torch %s, start method %s, %d workers" % (
        sys.version.split()[0], torch.__version__,
        multiprocessing.get_start_method(), args.workers), flush=True)
    # the workers import torch first (long on a busy machine): the time
    # asked for runs from the first batch on
    end = None
    steps = 0
    while end is None or time.monotonic() < end:
        for batch in loader:
            if end is None:
                end = time.monotonic() + args.seconds
            float(batch.sum())
            drv("cuMemcpyHtoDAsync_v2", dev, host, nbytes, None)
            gpu.spin_ns(args.kernel_us * 1000)
            drv("cuStreamSynchronize", None)
            steps += 1
            if time.monotonic() >= end:
                break
    drv("cuMemFreeHost", host)
    drv("cuMemFree_v2", dev)
    gpu.close()
    print("torchloader.py: %d steps" % steps, flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-t", "--seconds", type=float, default=5)
    p.add_argument("-w", "--workers", type=int, default=2)
    p.add_argument("-b", "--batch", type=int, default=4)
    p.add_argument("-n", "--samples", type=int, default=256)
    p.add_argument("-d", "--kernel-us", type=int, default=2000)
    p.add_argument("--data", default=os.path.join(
        os.environ.get("TMPDIR") or "/var/tmp", "torchloader-data"))
    args = p.parse_args()
    make_samples(args.data, args.samples)
    train(args)


if __name__ == "__main__":
    main()

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
data-parallel job of N ranks (tools/trainsim_ranks.py).

EXAMPLES
    LD_LIBRARY_PATH=build/simgpu tools/trainsim.py --truth t.json
    tools/trainsim.py -s healthy -n 100 -k 4 -d 1000
"""

import argparse
import ctypes
import json
import mmap
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PTX_PATH = os.path.join(HERE, "..", "workload", "spin.ptx")

CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1
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


def collate(host, step):
    """A little Python work per step, as a data pipeline's collate_fn."""
    x = step
    for k in range(300):
        x = (x * 31 + k) % 1000003
    ctypes.memset(host, x & 0xff, 64)


def op_work(op_ns=0):
    """An eager framework's Python work around each op (argument checks,
    dispatch, autograd bookkeeping): tens of microseconds, or op_ns of
    it (--op-us)."""
    x = 1
    if op_ns:
        end = mono_ns() + op_ns
        while mono_ns() < end:
            for k in range(20):
                x = (x * 31 + k) % 1000003
        return x
    for k in range(600):
        x = (x * 31 + k) % 1000003
    return x


def gil_hog(stop, tids, i):
    """Pure-Python work: holds the GIL except when the interpreter's switch
    interval makes it hand over."""
    tids[i] = threading.get_native_id()
    x = 0
    while not stop.is_set():
        for k in range(2000):
            x = (x * 31 + k) % 1000003


BATCH_FILE_MB = 64


def batch_file():
    """A file to load batches from, past the page cache each step."""
    path = os.path.join(os.environ.get("TMPDIR", "/var/tmp"),
                        "trainsim-%d.bin" % os.getpid())
    with open(path, "wb") as f:
        for _ in range(BATCH_FILE_MB):
            f.write(os.urandom(1 << 20))
        f.flush()
        os.fsync(f.fileno())
    return path


def read_batch(fd, step, nbytes):
    """The loader's read: storage scenario (the page cache dropped first)."""
    off = (step * nbytes) % ((BATCH_FILE_MB << 20) - nbytes)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    return len(os.pread(fd, nbytes, off))


def touch_batch(fd, step, nbytes):
    """A mapped dataset: pagefault scenario, every page faulted in."""
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    off = (step * nbytes) % ((BATCH_FILE_MB << 20) - nbytes) & ~0xfff
    m = mmap.mmap(fd, nbytes, prot=mmap.PROT_READ, offset=off)
    x = 0
    for i in range(0, nbytes, 4096):
        x += m[i]
    m.close()
    return x


LOCK_HOLD_MS = 6.0  # longer than a step's GPU work (4 x 500 us + copy)
LOCK_GAP_MS = 1.0  # the holder's pause between holds: the feeder's turn
LOCK_CHUNK = 1 << 20  # bytes one memset call covers


def hold_lock(libc, mutex, buf, stop):
    """Lock scenario: a thread that holds a mutex while it works in C with
    the GIL released (memset through ctypes, as a native extension would),
    so that the feeder's wait is on the mutex alone."""
    hold_ns = int(LOCK_HOLD_MS * 1e6)
    k = 0
    while not stop.is_set():
        libc.pthread_mutex_lock(mutex)
        end = mono_ns() + hold_ns
        while mono_ns() < end:
            libc.memset(buf, k & 0xff, LOCK_CHUNK)
            k += 1
        libc.pthread_mutex_unlock(mutex)
        time.sleep(LOCK_GAP_MS / 1000)


def take_lock(libc, mutex):
    """The feeder's wait for the mutex (lock scenario)."""
    libc.pthread_mutex_lock(mutex)
    libc.pthread_mutex_unlock(mutex)


OBJLOCK_HOLD_MS = 6.0  # one sort of the shared list: longer than a step's GPU work
OBJLOCK_GAP_MS = 1.0  # the sorter's pause between sorts: the feeder's turn


def objlock_key(k):
    """Sort k's key: a new order each round, so every sort does the whole
    work, with a little Python per item (a record's field, say)."""
    mult = 2654435761 + 2 * k
    return lambda v: (v * mult) % 1000003


def objlock_list():
    """The shared list, sized so that one sort of it takes about
    OBJLOCK_HOLD_MS of CPU here: timed on growing lists (in the thread's
    CPU time, which a busy host does not stretch), then scaled."""
    n = 1024
    while True:
        items = list(range(n))
        t = time.thread_time_ns()
        items.sort(key=objlock_key(0))
        dt = time.thread_time_ns() - t
        if dt >= OBJLOCK_HOLD_MS * 1e6 / 4 or n >= 1 << 22:
            break
        n *= 2
    return list(range(max(1024, int(n * OBJLOCK_HOLD_MS * 1e6 / max(dt, 1)))))


def sort_hog(shared, size, stop):
    """objlock scenario: sorts the list the feeder appends to, then trims
    it back to its size.  list.sort holds the list's lock for the whole
    sort: a free-threaded build's per-object lock (with a GIL, the key's
    Python work gives the GIL up now and then instead)."""
    k = 0
    while not stop.is_set():
        try:
            shared.sort(key=objlock_key(k))
        except ValueError:
            pass  # with a GIL: "list modified during sort" by an append
        del shared[size:]
        k += 1
        time.sleep(OBJLOCK_GAP_MS / 1000)


def append_batch(shared, step):
    """The feeder's append to the shared list (objlock scenario): it waits
    for the list's lock while a sort holds it."""
    shared.append(step)


# A worker's batch: large samples (a clip, a shard), each read in one go,
# as many as the disk gives in BATCH_LOAD_MS (at least one).  Few long
# reads keep the workers waiting on the disk rather than for a CPU: with
# many short reads on a small machine, the wakeups after each one cost
# more than the reads.  Sizing the batch by time, not bytes, keeps the
# workers behind the GPU on any disk: with W workers the feeder gets a
# batch every BATCH_LOAD_MS / W at best, longer than a step's GPU work.
SAMPLE_BYTES = 8 << 20
BATCH_LOAD_MS = 15
MAX_SAMPLES_PER_BATCH = 64


def open_samples(path):
    """The dataset as a loader worker reads it: past the page cache
    (O_DIRECT: every read goes to the disk, at little CPU cost), else with
    each sample's pages dropped before it is read; (fd, direct)."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECT), True
    except OSError:  # a file system without direct IO (tmpfs)
        return os.open(path, os.O_RDONLY), False


def load_sample(fd, direct, buf, off):
    """A DataLoader worker's read (loader scenario): one sample from disk."""
    if not direct:
        os.posix_fadvise(fd, off, len(buf), os.POSIX_FADV_DONTNEED)
    return os.preadv(fd, [buf], off)


def load_batch(fd, direct, buf, step):
    """A worker's fetch: the batch's samples from scattered places in the
    file, as a Dataset's __getitem__ per index; what goes on the queue is
    small, as a DataLoader passes tensors through shared memory."""
    blocks = ((BATCH_FILE_MB << 20) - len(buf)) >> 12
    end = mono_ns() + BATCH_LOAD_MS * 1000000
    n = 0
    for i in range(MAX_SAMPLES_PER_BATCH):
        off = ((step * MAX_SAMPLES_PER_BATCH + i) * 2654435761 % blocks) << 12
        n += load_sample(fd, direct, buf, off)
        if mono_ns() >= end:
            break
    return step, n


def cold_shard(fd, direct, buf, step, ms):
    """--slow-every: a shard read past the page cache for MS
    milliseconds (sized by time, as load_batch: longer than the batches
    prefetched ahead of it on any disk)."""
    blocks = ((BATCH_FILE_MB << 20) - len(buf)) >> 12
    end = mono_ns() + ms * 1000000
    i = 0
    while True:
        off = ((step * 7919 + i) * 2654435761 % blocks) << 12
        load_sample(fd, direct, buf, off)
        i += 1
        if mono_ns() >= end:
            return


def cached_batch(fd, buf, step):
    """--slow-every: a batch from the page cache, one sample."""
    blocks = ((BATCH_FILE_MB << 20) - len(buf)) >> 12
    off = (step * 2654435761 % blocks) << 12
    return step, os.preadv(fd, [buf], off)


def take_credit(credit, stop, parent):
    """--slow-every: a worker's turn to load one more batch (a
    DataLoader's prefetch_factor); False once stopped."""
    while not credit.acquire(timeout=0.1):
        if stop.is_set() or os.getppid() != parent:
            return False
    return True


def loader_worker(path, steps, out, stop, parent, slow=None, credit=None):
    """A worker process: loads its share of the steps and puts each batch
    on the queue, until the steps run out, the feeder says stop, or the
    feeder is gone.  SLOW (--slow-every): (every, ms, no_slow), batches
    from the page cache and a cold shard for every Nth, at most as many
    ahead of the feeder as CREDIT allows."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the feeder stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    fd, direct = open_samples(path)
    cached = os.open(path, os.O_RDONLY) if slow else -1
    buf = mmap.mmap(-1, SAMPLE_BYTES)  # page-aligned, as O_DIRECT needs
    for step in steps:
        if credit is not None and not take_credit(credit, stop, parent):
            out.cancel_join_thread()
            break
        if slow:
            if step_slowed(step, slow[0], slow[2]):
                cold_shard(fd, direct, buf, step, slow[1])
            data = cached_batch(cached, buf, step)
        else:
            data = load_batch(fd, direct, buf, step)
        while not stop.is_set() and os.getppid() == parent:
            try:
                out.put(data, timeout=0.1)
                break
            except queue.Full:
                pass
        else:
            # stopped: a batch nobody will take must not hold us
            out.cancel_join_thread()
            break
    os.close(fd)  # at the end of the steps, the batches go out first
    if cached >= 0:
        os.close(cached)


def step_slowed(step, every, no_slow):
    """Whether step (and batch) STEP is slowed on purpose: every
    EVERY'th, as build/trainsim's."""
    return bool(every) and not no_slow and (step + 1) % every == 0


def next_batch(q, workers):
    """The feeder's wait for the next batch, as a DataLoader's __next__."""
    while True:
        try:
            return q.get(timeout=5.0)
        except queue.Empty:
            if not any(w.is_alive() for w in workers):
                raise OSError("loader workers ended early")


class BatchLoader:
    """The loader scenario: --workers processes forked like a DataLoader's
    (fork is the default start method on Linux up to Python 3.13), each
    loading every Wth batch into a shared queue (two batches per worker
    prefetched at most).  With SLOW (--slow-every) the feeder takes the
    batches in order, as a DataLoader does, and each worker loads at most
    PREFETCH batches ahead of it."""

    PREFETCH = 2

    def __init__(self, nworkers, steps, host, slow=None):
        self.host = host  # where a batch lands (pinned memory)
        ctx = multiprocessing.get_context("fork")
        self.path = batch_file()
        self.queue = ctx.Queue(2 * nworkers)
        self.stop = ctx.Event()
        self.credits = [ctx.Semaphore(self.PREFETCH) if slow else None
                        for i in range(nworkers)]
        self.pending = {}
        self.workers = [ctx.Process(
            target=loader_worker, name="loader-%d" % i, daemon=True,
            args=(self.path, range(i, steps, nworkers), self.queue,
                  self.stop, os.getpid(), slow, self.credits[i]))
            for i in range(nworkers)]
        for w in self.workers:
            w.start()
        self.pids = [w.pid for w in self.workers]

    def step(self, step, nbytes):
        credit = self.credits[step % len(self.workers)]
        if credit is None:
            got, _ = next_batch(self.queue, self.workers)
        else:
            while step not in self.pending:
                got, n = next_batch(self.queue, self.workers)
                self.pending[got] = n
            del self.pending[step]
            got = step
            credit.release()
        ctypes.memset(self.host, got & 0xff, nbytes)

    def close(self):
        self.stop.set()
        for w in self.workers:
            w.join(2.0)
            if w.is_alive():
                w.terminate()
                w.join()
        self.queue.close()
        self.queue.join_thread()
        os.unlink(self.path)


class Loader:
    """Per step, what the storage, pagefault, lock and objlock scenarios
    wait on."""

    def __init__(self, scenario, stop):
        self.scenario, self.path, self.fd = scenario, None, -1
        if scenario in ("storage", "pagefault"):
            self.path = batch_file()
            self.fd = os.open(self.path, os.O_RDONLY)
        elif scenario == "lock":
            # CDLL: every call releases the GIL while in C
            self.libc = ctypes.CDLL(None, handle=ctypes.pythonapi._handle)
            self.libc.memset.argtypes = [c_ptr, ctypes.c_int, ctypes.c_size_t]
            self.libc.memset.restype = c_ptr
            self.mutex = ctypes.create_string_buffer(64)  # zeroed: unlocked
            self.buf = ctypes.create_string_buffer(LOCK_CHUNK)
            self.holder = threading.Thread(
                target=hold_lock,
                args=(self.libc, self.mutex, self.buf, stop), daemon=True)
            self.holder.start()
        elif scenario == "objlock":
            self.shared = objlock_list()
            self.holder = threading.Thread(
                target=sort_hog, name="sort_hog",
                args=(self.shared, len(self.shared), stop), daemon=True)
            self.holder.start()

    def step(self, step, nbytes):
        if self.scenario == "storage":
            read_batch(self.fd, step, nbytes)
        elif self.scenario == "pagefault":
            touch_batch(self.fd, step, nbytes)
        elif self.scenario == "lock":
            take_lock(self.libc, self.mutex)
        elif self.scenario == "objlock":
            append_batch(self.shared, step)

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            os.unlink(self.path)
        if self.scenario in ("lock", "objlock"):
            self.holder.join()


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
            args.step_list.append((start, mono_ns()))
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


def trace_file():
    t = os.environ.get("SIMGPU_TRACE", "")
    return t.replace("%p", str(os.getpid())).replace("%%", "%")


def step_truth(args):
    """The truth's steps: each from before its batch wait to just after
    its last driver call, with the cause injected into it on purpose
    (with --slow-every only into every Nth, which are slow_steps; else
    the scenario's cause into every step alike)."""
    cause = SCENARIOS[args.scenario][0]
    lst, slow = [], []
    for i, (a, b) in enumerate(getattr(args, "step_list", [])):
        c = cause
        if args.slow_every:
            c = None
            if step_slowed(i, args.slow_every, args.no_slow):
                c = cause
                slow.append(i)
        lst.append({"index": i, "start_ns": a, "end_ns": b, "cause": c,
                    "rank": 0})
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

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""trainsim.py's work around the GPU: the feeder's own Python work
(collate, op_work), the threads and processes it contends with (GIL
holders, a lock holder, a list sorter, loader workers) and the batches
it reads (from a file, a mapping, or a loader's queue), for each
scenario (tools/trainsim.py).  Imports only trainsim_cuda.py.
"""

import ctypes
import mmap
import multiprocessing
import os
import queue
import signal
import threading
import time

from trainsim_cuda import c_ptr, mono_ns

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


_SCHEDSTAT = {}  # the file's key: its schedstat, kept open


def _schedstat(key, path):
    """A thread's time on a CPU and waiting for one so far (schedstat,
    PATH, kept open under KEY and read again from its start), ns: (cpu,
    run delay); zeros where it is gone or the kernel does not say."""
    try:
        fd = _SCHEDSTAT.get(key)
        if fd is None:
            fd = _SCHEDSTAT[key] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        v = os.pread(fd, 128, 0).split()
        return int(v[0]), int(v[1])
    except (OSError, ValueError, IndexError):
        return 0, 0


def thread_sched():
    """This thread's time on a CPU and waiting for one so far
    (schedstat), ns: (cpu, run delay).  Read twice a step: the file stays
    open (a few microseconds; opening it each time cost tens, inside the
    idle gaps the job is judged by)."""
    return _schedstat(threading.get_native_id(), "/proc/thread-self/schedstat")


def task_sched(pid, tid):
    """Thread TID of process PID's (cpu, run delay) so far, as
    thread_sched."""
    return _schedstat((pid, tid), "/proc/%d/task/%d/schedstat" % (pid, tid))


def queue_thread(q):
    """The native id of the thread that writes a multiprocessing queue's
    puts to its pipe (its feeder thread, started by the first put); 0
    before it exists."""
    t = getattr(q, "_thread", None)
    return getattr(t, "native_id", 0) or 0


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
        # from before its wait for the turn: woken by the feeder's
        # credit, it may wait for a CPU before it runs again, and the
        # batch starts that late (schedstat counts the wait when it
        # runs, not when it is woken)
        d0 = thread_sched() if slow else None
        if credit is not None and not take_credit(credit, stop, parent):
            out.cancel_join_thread()
            break
        if slow:
            if step_slowed(step, slow[0], slow[2]):
                cold_shard(fd, direct, buf, step, slow[1])
            data = cached_batch(cached, buf, step)
        else:
            data = load_batch(fd, direct, buf, step)
        # its wait for a CPU and its time on one while it made the
        # batch: the truth's loader_run_delay_ns and loader_cpu_ns of the
        # step that takes it.  The put only hands the batch to the
        # queue's feeder thread, which pickles it and writes it to the
        # pipe: that thread's wait for a CPU and time on one from here
        # until the feeder takes the batch delay the batch too (30 ms
        # of a slowed step on a loaded host)
        d1 = thread_sched() if d0 else None
        ft = queue_thread(out) if d0 else 0
        data = data + ((d1[1] - d0[1], d1[0] - d0[0]) if d0 else (0, 0),
                       (os.getpid(), ft, task_sched(os.getpid(), ft) if ft else (0, 0)))
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
    """The feeder's wait for the next batch, as a DataLoader's __next__:
    (step, data, (run delay, cpu), (pid, queue thread, its (cpu, run
    delay) at the put, and now that the batch is taken from the pipe))."""
    while True:
        try:
            got, data, d, (pid, ft, s0) = q.get(timeout=5.0)
        except queue.Empty:
            if not any(w.is_alive() for w in workers):
                raise OSError("loader workers ended early")
            continue
        return got, data, d, (pid, ft, s0, task_sched(pid, ft) if ft else (0, 0))


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
        # the last batch's worker's run delay and CPU time making it
        self.delay = (0, 0)
        self.qthreads = set()  # (pid, tid) of the workers' queue threads
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
        # the batch's run delay and CPU time: its worker's making it,
        # and its queue thread's from the put until the feeder took it,
        # within this wait for it (a batch handed off before the wait
        # kept nobody waiting); read only with --slow-every, which the
        # workers say
        t0 = {k: task_sched(*k) for k in self.qthreads}
        if credit is None:
            got, _, d, h = next_batch(self.queue, self.workers)
        else:
            while step not in self.pending:
                got, _, d, h = next_batch(self.queue, self.workers)
                self.pending[got] = d, h
            (d, h), got = self.pending.pop(step), step
            credit.release()
        pid, ft, at_put, taken = h
        if ft:
            # from the put, or this wait's start if later, until the
            # batch left the pipe (the counters only grow)
            k = (pid, ft)
            since = [max(a, b) for a, b in zip(at_put, t0.get(k, at_put))]
            cpu, rd = [max(0, a - b) for a, b in zip(taken, since)]
            self.qthreads.add(k)
            d = (d[0] + rd, d[1] + cpu)
        self.delay = d
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

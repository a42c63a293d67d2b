#!/bin/sh
# A switch-in the kernel did not report (docs/design.md §5.15), made to
# happen: while a busy thread runs, its state in the tracer's threads map
# is set back to "switched out, record pending" (bpftool), as when the
# scheduler's tracepoint missed its switch-in.  Its next switch-out must
# send that wait, flagged IG_F_IN_UNSEEN, ending where the thread was
# really switched in (the switch-in the kernel did report just before,
# as the kernel's CPU-time accounting gives it back), and the report
# counts it.  A build that does not look for it sends no such record,
# and the thread's wait is lost.
# Then again with a driver call (the simulated GPU's cuCtxSynchronize)
# right after each hidden switch-in: the call proves the thread runs, so
# the wait is sent by the call's probe, before the call's own record, and
# not at the next switch-out (a gap the call ends would be attributed
# without it).  Needs root and bpftool.
. "$(dirname "$0")/lib.sh"
need_root
[ -n "${KEEP:-}" ] && trap 'echo "kept $TMP" >&2' EXIT
command -v bpftool > /dev/null 2>&1 || skip_all "no bpftool"
"$IG" check > "$TMP/check" 2>&1 || skip_all "idlegap check fails: $(tail -1 "$TMP/check")"

# The job: 20 ms on CPU, then a 2 ms sleep (a switch-out of its own), for
# 8 s.  Once it is told the tracer's threads map, it hides its own
# switch-in 8 times, 0.1 s apart: it reads its state and writes it back
# as switched out 5 ms before its last switch-in, record pending.  It does
# so itself, while it runs: read from another process, the state may be
# a switch-out old by the time it is written.
cat > "$TMP/job.py" <<'JOB'
import ctypes, json, os, struct, sys, time
d, mode = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
cu = None
if mode == "cuda":
    cu = ctypes.CDLL("libcuda.so.1")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
NR_BPF = {"x86_64": 321, "aarch64": 280}[os.uname().machine]
def bpf(cmd, attr):
    return libc.syscall(NR_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
class Elem(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_uint32), ("pad", ctypes.c_uint32), ("key", ctypes.c_uint64),
                ("value", ctypes.c_uint64), ("flags", ctypes.c_uint64)]
class ById(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32), ("next", ctypes.c_uint32), ("flags", ctypes.c_uint32)]
k = ctypes.c_uint32(os.getpid())
v = None	# struct ig_thread_state (bpf/record_abi.h), the map's value size
fd, fakes, calls, n, end = -1, [], [], 0, time.time() + 8
while time.time() < end:
    x = time.time() + 0.02
    while time.time() < x:
        pass
    n += 1
    if fd < 0 and os.path.exists(d + "/map"):
        mid, vsize = (int(x) for x in open(d + "/map").read().split())
        v = (ctypes.c_uint8 * vsize)()
        fd = bpf(14, ById(mid, 0, 0))	# MAP_GET_FD_BY_ID
    if fd >= 0 and len(fakes) < 8 and n % 5 == 0:
        e = Elem(fd, 0, ctypes.addressof(k), ctypes.addressof(v), 0)
        if bpf(1, e) == 0 and not v[32]:	# LOOKUP; on CPU, as it must be
            # t_on at 24, off at 32, reason at 34, t_off at 56, t_wake at 64,
            # t_run last
            fake = struct.unpack_from("<Q", v, 24)[0] - 5000000 - len(fakes)
            v[32] = 1
            struct.pack_into("<H", v, 34, 0)	# reason: other
            struct.pack_into("<Q", v, 56, fake)
            struct.pack_into("<Q", v, 64, 0)
            # t_run, the last field: not seen running since (it ran in the
            # 5 ms made a wait here, and that would bound its end)
            struct.pack_into("<Q", v, len(v) - 8, 0)
            u = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            if bpf(2, e) == 0:			# UPDATE
                fakes.append(fake)
                if cu:	# a call of its own, still on CPU: its probe sends the wait
                    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                    cu.cuCtxSynchronize()
                    calls.append((u, t0, time.clock_gettime_ns(time.CLOCK_MONOTONIC)))
    time.sleep(0.002)
json.dump({"fakes": fakes, "calls": calls}, open(d + "/fakes.json", "w"))
JOB
# one_way MODE: busy (its next switch-out sends the wait) or cuda (a
# driver call right after the hidden switch-in sends it)
one_way() {
mkdir -p "$TMP/$1"
PYTHONPATH="$IG_TOP/tests/lib" /usr/bin/python3 - "$IG" "$TMP/$1" "$1" > "$TMP/$1/inject.out" 2> "$TMP/$1/inject.err" <<'PY'
import json, os, subprocess, sys, time
from tracee import map_info, wait_child
ig, d, mode = sys.argv[1:4]
p = subprocess.Popen([ig, "run", "-q", "-o", d + "/rec.igrec", "--json", d + "/rep.json",
                      "--", "/usr/bin/python3", os.path.dirname(d) + "/job.py", d, mode],
                     stderr=subprocess.DEVNULL)
jp = wait_child(p, "python3", 30)
time.sleep(1)
m = map_info(p.pid, "threads")
mid = str(m["id"]) if m else None
if m:
    with open(d + "/map.tmp", "w") as f:
        f.write("%d %d" % (m["id"], m.get("bytes_value", 0)))
    os.rename(d + "/map.tmp", d + "/map")
rc = p.wait()
try:
    got = json.load(open(d + "/fakes.json"))
except (OSError, ValueError):
    got = {}
print(json.dumps({"rc": rc, "job": jp, "map": mid, "mode": mode,
                  "fakes": got.get("fakes", []), "calls": got.get("calls", [])}))
PY
cat "$TMP/$1/inject.err" >&2
"$IG" report --dump "$TMP/$1/rec.igrec" > "$TMP/$1/dump.txt" 2> "$TMP/$1/dump.err"
ok "the report reads the recording back" -- test $? = 0

pychecks "$TMP/$1" <<'PY'
import json, re, sys
from tap import check

d = sys.argv[1]
inj = json.loads(open(d + "/inject.out").read() or "{}")
check(inj.get("rc") == 0 and inj.get("map") and len(inj.get("fakes", [])) >= 6,
      "the run exits 0 and %d switch-ins were hidden from it (threads map %s)" % (
          len(inj.get("fakes", [])), inj.get("map")), "%s" % inj)
job, fakes = "tid=%s " % inj.get("job"), set(inj.get("fakes", []))
recs = []
for line in open(d + "/dump.txt"):
    f = line.split()
    if len(f) > 2 and f[1] == "offcpu" and f[2] == job.strip():
        kv = dict(x.split("=", 1) for x in f[3:] if "=" in x)
        recs.append((int(f[0]), int(kv["off"]), int(kv.get("in", 0)), int(kv["flags"], 16)))
# each hidden switch-in's wait, and the switch-in reported before it
found, err, prevs = [], [], []
for i, (ts, off, t_in, fl) in enumerate(recs):
    if off not in fakes:
        continue
    prev = [r for r in recs[:i] if not r[3] & 0x1000]
    found.append((ts, off, t_in, fl))
    if fl & 0x1000 and prev:
        err.append(abs(t_in - prev[-1][0]) / 1e3)
        prevs.append(prev[-1][0])
unseen = [r for r in found if r[3] & 0x1000]
check(len(unseen) == len(fakes) == len(found),
      "each hidden switch-in's wait is sent, flagged unseen (%d of %d)" % (
          len(unseen), len(fakes)), "%s" % found[:4])
# sent by a driver call, it may end when it was sent: the kernel's CPU
# time, not brought up to date since the switch-in, then says none ran
late = [(ts, off, t_in) for ts, off, t_in, fl in unseen
        if not (off < t_in < ts or (inj.get("mode") == "cuda" and off < t_in == ts))]
check(unseen and not late, "each ends after its switch-out and before it was sent%s" % (
          ", or then" if inj.get("mode") == "cuda" else ""), "%s" % late[:3])
if inj.get("mode") != "cuda":
    check(err and max(err) <= 500,
          "its end is the switch-in reported before it (within %.1f us; 500 us allowed)" % (
              max(err) if err else -1), "%s" % err)
else:
    # sent by the call's probe, inside the call, not at the switch-out
    # that followed it; or, where the thread was preempted between the
    # hiding and the call, at that switch-out, before the call
    calls = inj.get("calls", [])
    inside = [any(a <= r[0] <= b for u, a, b in calls) for r in unseen]
    before = [any(u <= r[0] <= b for u, a, b in calls) for r in unseen]
    check(unseen and len(calls) == len(fakes) and all(before) and any(inside),
          "each was sent before the driver call that followed it returned, by the call "
          "(%d of %d) or by a switch-out before it" % (sum(inside), len(unseen)),
          "%s %s" % (unseen[:3], calls[:3]))
    # the kernel's CPU time is brought up to date at its ticks, not at
    # the call: the end may be late by a tick (10 ms at HZ 100), never early
    check(err and max(err) <= 10500 and all(r[2] - prev_in >= -500000 for r, prev_in in
                                            zip(unseen, prevs)),
          "its end is the switch-in reported before it, or at most a tick later (%.1f us)" % (
              max(err) if err else -1), "%s" % err)
rep = json.load(open(d + "/rep.json"))
n = rep.get("offcpu", {}).get("switch_ins_unseen", 0)
check(n >= len(unseen), "the report counts them (%d, at least %d)" % (n, len(unseen)))
PY
}

one_way busy
LD_LIBRARY_PATH=$IG_TOP/build/simgpu one_way cuda
done_testing

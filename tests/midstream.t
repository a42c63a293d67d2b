#!/bin/sh
# Joining mid-stream (docs/design.md §3.6, §7.10), as root, on the
# simulated GPU and NCCL with 4 devices.
#  A. `run` misses no first call: processes that dlopen libcuda (ctypes)
#     and create their context at once (tests/py/ctxnow.py, 4 children of
#     a launcher): each one's cuDevicePrimaryCtxRetain and first launch are
#     in the recording, and its device is its ordinal.
#  B. A 4-rank data-parallel Python job that loads libcuda by dlopen
#     (tools/trainsim.py ranks, rank r on ordinal r, rank 2 starved by
#     storage), in `run`, in `attach` 4 s into the job, in the agent with
#     the job started between windows, and in the agent started after the
#     job: 4 device entries each with its rank; each fast rank's peer wait
#     within 10% of the simulated NCCL's truth; the straggler's device
#     idle within 10% of the truth; no NCCL wait counted busy; the agent's
#     /metrics has idlegap_gpu_seconds_total{state="peer_wait"} per gpu.
#  C. Without NVML (the simulated one's nvmlInit fails as after a driver
#     upgrade without a reboot: SIMNVML_INIT_FAIL=version): ranks 0, 1
#     and 3 set up and wait inside ncclCommInitRank before the agent
#     starts, rank 2 after it (its context and communicator's creation
#     seen, the others' not), 1500 steps (about 18 s: two of the agent's
#     4 s windows every 5 s, or more, lie inside the job's GPU span; with
#     750 the one window that did was 0.2 s from the span's end, and
#     none at times): the agent says why NVML failed in one line,
#     each fast rank's peer wait over the full windows within 10% of the
#     simulated NCCL's truth and its busy at most 10% over its kernels',
#     no series says gpu="0" (no process is on GPU 0 as far as the node
#     knows), every followed GPU process is on /metrics (gpu="unknown"
#     with its pid where nothing placed it) and counted in
#     idlegap_gpu_processes_unknown_device_total.
. "$(dirname "$0")/lib.sh"
need_root
need_ranks_build
command -v curl > /dev/null || skip_all "no curl"
CG=$(cgroup_root)
[ -d "$CG" ] || skip_all "no cgroup v2 hierarchy"
JOB=/idlegap-midstream-$$
mkdir "$CG$JOB" 2>/dev/null || skip_all "cannot make a cgroup under $CG"
PY=/usr/bin/python3
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu SIMGPU_DEVICES=4
# the simulated GPU's late wakes (docs/simgpu.md): the oracle of what no
# evidence could show, where a mode keeps no recording
export SIMGPU_LATE="$TMP/late.%p"

AGENT= JOBPID=
cleanup() {
	[ -n "$JOBPID" ] && kill "$JOBPID" 2>/dev/null
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	rmdir "$CG$JOB" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
mono() { $PY -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }

PARTS=${PARTS:-now run attach between after nonvml}
has() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }

# --- A: run, processes that set up at once after dlopen
if has now; then
"$IG" run -q -o "$TMP/now.igrec" -- $PY "$IG_TOP/tests/py/ctxnow.py" --children 4 \
	> "$TMP/now.out" 2> "$TMP/now.err"
is "$?" 0 "run: 4 processes that dlopen libcuda and set up at once"
"$IG" report -q --json "$TMP/now.json" "$TMP/now.igrec" > /dev/null 2> "$TMP/now.rerr"
rc=$?
is "$rc" 0 "run: the recording has a report"
[ "$rc" = 0 ] || sed 's/^/# /' "$TMP/now.rerr"
"$IG" report --dump "$TMP/now.igrec" > "$TMP/now.dump" 2>&1
pychecks "$TMP/now.out" "$TMP/now.dump" "$TMP/now.json" <<'PY'
import json, sys
from tap import check
lines = open(sys.argv[1]).read().splitlines()
jobs = []
for l in lines:
    try:
        jobs.append(json.loads(l))
    except ValueError:
        print("# not a process's line: %r" % l)
dump = [l.split() for l in open(sys.argv[2])]
try:
    procs = {p["pid"]: p for p in json.load(open(sys.argv[3]))["processes"]}
except (OSError, ValueError, KeyError) as e:
    print("# the report: %s" % e)
    procs = {}
check(len(jobs) == 4, "4 processes said their times (%d)" % len(jobs))
for j in sorted(jobs, key=lambda j: j["ordinal"]):
    pid = "pid=%d" % j["pid"]
    mine = [(int(v[0]), dict(x.split("=", 1) for x in v[2:] if "=" in x))
            for v in dump if len(v) > 3 and v[1] == "cuda" and v[3] == pid]
    ctx = [ts for ts, f in mine if f.get("kind") == "ctx" and
           f.get("api") == "cuDevicePrimaryCtxRetain"]
    first = [ts for ts, f in mine if f.get("kind") == "submit" and
             f.get("api") == "cuLaunchKernel" and ts <= j["first_launch_ns"] + 50000000]
    check(ctx and ctx[0] < j["first_launch_ns"],
          "ordinal %d: its context's creation, %.1f ms after the dlopen, is recorded" % (
              j["ordinal"], (j["first_launch_ns"] - j["dlopen_ns"]) / 1e6))
    check(first, "ordinal %d: its first launch is recorded" % j["ordinal"])
    p = procs.get(j["pid"], {})
    check(p.get("device") == j["ordinal"] and p.get("launches", 0) > 0,
          "ordinal %d: the process is on device %s with %s launches" % (
              j["ordinal"], p.get("device"), p.get("launches")))
PY
fi

# --- B: the 4-rank job in each mode.  MODE NAME REPORT... : the checks
check_job() {
	pychecks "$@" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["IG_TOP"], "tools"))
import truth as T
from tap import check
name, tfile, rfile = sys.argv[1:4]
metrics = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
rec = sys.argv[5] if len(sys.argv) > 5 else None
t = json.load(open(tfile))
# the oracle of what no evidence could show (truth.hidden_idle): each
# rank's op ends that reached their waiters over 1 ms late, from the
# simulator's log and the recording where the mode keeps one
dump = []
if rec:
    import subprocess
    dump = subprocess.run([os.path.join(os.environ["IG_TOP"], "build/idlegap"), "report",
                           "--dump", rec], capture_output=True,
                          text=True).stdout.splitlines()
def hidden(pid, trace_files, a, b):
    """the trace's idle inside [a, b] that the late ends hid: the
    simulator's own log (the ends reaching their waiters) with, where the
    mode keeps a recording, the device threads' sleeps it holds"""
    ivs = T.read_traces(trace_files)[1]
    late = T.read_late([os.environ["SIMGPU_LATE"].replace("%p", str(pid))])
    mine = [l for l in dump if " pid=%d " % pid in l]
    if mine:
        late = late + T.late_ends(mine, ivs)
    return T.hidden_idle(late, ivs, a, b) / 1e9
j = json.load(open(rfile))
NS = 1e9
lo = j["meta"]["start_ns"]
hi = lo + int(j["duration_s"] * NS)
ranks = {r["pids"]["feeder"]: r for r in t["ranks"]}
waits = {r["pid"]: r["waits"] for r in T.nccl_report(
    [r["nccl"]["trace_file"] for r in t["ranks"]])["ranks"]}
strag = t["straggler"]
devs = j["gpu"]["devices"]
check(sorted(d["device"] for d in devs) == [0, 1, 2, 3] and
      all(d.get("rank") == d["device"] for d in devs),
      "%s: 4 device entries, rank r on device r (%s)" % (
          name, [(d["device"], d.get("rank")) for d in devs]))
# each fast rank's peer wait, by its pid, over its device's span (where
# the report counts it), or the report's time
coll = {r["pid"]: r for r in j["collectives"]["ranks"]}
procs = {p["pid"]: p for p in j["processes"]}
def span(pid):
    dev = procs.get(pid, {}).get("device")
    d = [x for x in devs if x["device"] == dev and dev is not None]
    return (d[0]["span_start_ns"], d[0]["span_end_ns"]) if len(devs) == 4 and d else (lo, hi)
for pid, r in sorted(ranks.items(), key=lambda x: x[1]["rank"]):
    if r["rank"] == strag:
        continue
    want = T.total(T.clip(waits.get(pid, []), *span(pid))) / NS
    got = coll.get(pid, {}).get("peer_wait_s", 0.0)
    check(want > 0 and abs(got - want) <= 0.10 * want,
          "%s: rank %d's peer wait %.3f s, truth %.3f s" % (name, r["rank"], got, want))
# the straggler's own device, and each fast rank's busy: its span against
# the simulated GPU's trace (an NCCL kernel's wait is busy there)
for pid, r in sorted(ranks.items(), key=lambda x: x[1]["rank"]):
    dev = procs.get(pid, {}).get("device")
    d = [x for x in devs if x["device"] == dev and dev is not None]
    if not d:
        check(False, "%s: rank %d's device is in the report" % (name, r["rank"]))
        continue
    d = d[0]
    a, b = d["span_start_ns"], d["span_end_ns"]
    busy = T.clip(T.merge(T.read_traces(r["trace_files"])[1]), a, b)
    wait = T.total(T.intersect(busy, T.merge(T.clip(waits.get(pid, []), a, b)))) / NS
    idle = (b - a) / NS - T.total(busy) / NS
    kernels = T.total(busy) / NS - wait
    h = hidden(pid, r["trace_files"], a, b)
    if r["rank"] == strag:
        # proven idle, and idle or unproven, bracket the truth (less
        # what the VM's late timers hid from every host evidence)
        check(d["idle_s"] <= 1.10 * idle and
              d["idle_s"] + d["unresolved_s"] >= 0.90 * idle - h,
              "%s: the straggler's device: idle %.3f s, with the unresolved %.3f s, "
              "truth %.3f s within 10%% (%.3f s of ends hidden)" % (
                  name, d["idle_s"], d["idle_s"] + d["unresolved_s"], idle, h))
    if r["rank"] == strag:
        continue
    # the simulated GPU counts the wait inside the all-reduce busy: busy
    # and peer wait together within it, the wait apart
    check(d["busy_s"] + d["peer_wait_s"] <= 1.10 * T.total(busy) / NS + 0.02 + h,
          "%s: rank %d: no NCCL wait counted busy (busy %.3f + peer wait %.3f s; "
          "truth: kernels %.3f + wait %.3f s; %.3f s of ends hidden)" % (
              name, r["rank"], d["busy_s"], d["peer_wait_s"], kernels, wait, h))
if metrics:
    text = open(metrics).read().splitlines()
    gpus = sorted({l.split('gpu="')[1].split('"')[0] for l in text
                   if l.startswith("idlegap_gpu_seconds_total{") and 'state="peer_wait"' in l})
    check(gpus == ["0", "1", "2", "3"],
          '%s: /metrics has idlegap_gpu_seconds_total{state="peer_wait"} for gpu %s' % (
              name, gpus))
    # each GPU's series name it by the UUID the (simulated) NVML gives
    # it, however its processes were placed: one GPU, one set of series
    import ctypes, re
    nv = ctypes.CDLL("libnvidia-ml.so.1")
    nv.nvmlInit_v2()
    uu = {}
    for i in range(4):
        h, b = ctypes.c_void_p(), ctypes.create_string_buffer(96)
        nv.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h))
        nv.nvmlDeviceGetUUID(h, b, 96)
        uu[str(i)] = b.value.decode()
    bad = []
    for l in text:
        if not l.startswith("idlegap_gpu_seconds_total{"):
            continue
        lab = dict(re.findall(r'(\w+)="([^"]*)"', l.split("}")[0]))
        if "gpu" in lab and lab.get("UUID") != uu.get(lab["gpu"]):
            bad.append("gpu %s UUID %s" % (lab["gpu"], lab.get("UUID")))
    check(not bad, "%s: every GPU's series carry NVML's UUID for it (%s)" % (
        name, sorted(set(bad))[:4] or "all %d GPUs" % len(gpus)))
PY
}

# RUN ARGS: the job, in the test's cgroup, in the background (JOBPID)
job() {
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' job "$CG$JOB" \
		$PY "$IG_TOP/tools/trainsim.py" ranks --world 4 -s storage "$@" &
	JOBPID=$!
}
STEPS=${STEPS:-250}

# run
if has run; then
"$IG" run -q --json "$TMP/run.json" -o "$TMP/run.igrec" -- $PY "$IG_TOP/tools/trainsim.py" ranks --world 4 \
	-s storage --steps "$STEPS" --truth "$TMP/run.truth" > "$TMP/run.out" 2>&1
is "$?" 0 "run: the job ran"
check_job run "$TMP/run.truth" "$TMP/run.json" "" "$TMP/run.igrec"
fi

# attach, 4 s into the job
if has attach; then
job --steps $((STEPS * 2)) --truth "$TMP/attach.truth" > "$TMP/attach.out" 2>&1
sleep 4
"$IG" attach -q -p "$JOBPID" -d 4 --json "$TMP/attach.json" -o "$TMP/attach.igrec" \
	> "$TMP/attach.ig" 2>&1
is "$?" 0 "attach: 4 s of the job"
wait "$JOBPID"; JOBPID=
check_job attach "$TMP/attach.truth" "$TMP/attach.json" "" "$TMP/attach.igrec"
fi

# the agent's window that the job ran through whole, and its start
# between two windows
full_window() {
	$PY - "$@" <<'PY'
import glob, json, sys
t = json.load(open(sys.argv[2]))
t0 = int(open(sys.argv[3]).read()) if len(sys.argv) > 3 else 0
a = min(r["gpu"]["span_start_ns"] for r in t["ranks"])
b = max(r["gpu"]["span_end_ns"] for r in t["ranks"])
reps = [(f, json.load(open(f))) for f in sorted(glob.glob(sys.argv[1] + "/*.json"))]
spans = [(j["meta"]["start_ns"], j["meta"]["start_ns"] + int(j["duration_s"] * 1e9), f)
         for f, j in reps]
if t0 and not any(e <= t0 for s, e, f in spans):
    sys.exit("no window closed before the job started")
if t0 and any(s <= t0 < e for s, e, f in spans):
    sys.exit("the job started inside a window")
full = [f for s, e, f in spans if a <= s and e <= b]
if not full:
    sys.exit("no window inside the job's GPU span [%d, %d]: %s" % (
        a, b, [(s, e) for s, e, f in spans]))
print(full[0])
PY
}

# agent: the job started between windows (4 s every 6 s); the agent's
# own loader picks the host's libcuda and libnccl (LD_LIBRARY_PATH)
if has between; then
AG="--cgroup $JOB --listen 127.0.0.1:0 --window 4 --every 6"
if start_agent "$TMP/between.ag" $AG --reports "$TMP/between" -v; then
	i=0
	until ls "$TMP/between"/*.json > /dev/null 2>&1 || [ $i -ge 300 ]; do
		sleep 0.1; i=$((i + 1))
	done
	mono > "$TMP/between.t0"
	# long enough for a whole window inside it wherever it starts, also
	# when a loaded host makes the job and its Python start slow
	job --steps $((STEPS * 3)) --truth "$TMP/between.truth" > "$TMP/between.out" 2>&1
	wait "$JOBPID"; JOBPID=
	sleep 1
	PORT=$(grep -o 'metrics on port [0-9]*' "$TMP/between.ag" | grep -o '[0-9]*$')
	curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/between.metrics"
	stop_agent
	is "$?" 0 "agent (job started between windows): exits 0 on SIGTERM"
else
	fail "agent (job started between windows): serves /metrics"
	sed 's/^/# /' "$TMP/between.ag"
fi

if W=$(full_window "$TMP/between" "$TMP/between.truth" "$TMP/between.t0" 2> "$TMP/fw.err"); then
	pass "agent: the job started between two windows, and a window saw it whole"
	check_job "agent, job started between windows" "$TMP/between.truth" "$W" \
		"$TMP/between.metrics"
else
	fail "agent: the job started between two windows, and a window saw it whole ($(cat "$TMP/fw.err"))"
fi
fi

# agent started after the job had set up: its 4 ranks all-reducing (each
# rank's simulated NCCL writes its truth file as its collectives end)
if has after; then
# the ranks of the parts before left theirs: these four are this job's
rm -f "$TMPDIR"/trainsim-py-nccl.*
job --steps $((STEPS * 3)) --truth "$TMP/after.truth" > "$TMP/after.out" 2>&1
i=0
until [ "$(find "$TMPDIR" -name 'trainsim-py-nccl.*' -size +0 | wc -l)" -ge 4 ] ||
      [ $i -ge 300 ]; do
	sleep 0.1; i=$((i + 1))
done
if start_agent "$TMP/after.ag" --cgroup "$JOB" --listen 127.0.0.1:0 --window 4 --every 5 \
	--reports "$TMP/after"; then
	wait "$JOBPID"; JOBPID=
	PORT=$(grep -o 'metrics on port [0-9]*' "$TMP/after.ag" | grep -o '[0-9]*$')
	curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/after.metrics"
	stop_agent
	is "$?" 0 "agent (started after the job): exits 0 on SIGTERM"
	if W=$(full_window "$TMP/after" "$TMP/after.truth" 2> "$TMP/fw.err"); then
		check_job "agent, started after the job" "$TMP/after.truth" "$W" "$TMP/after.metrics"
	else
		fail "agent (started after the job): a window saw the job whole ($(cat "$TMP/fw.err"))"
	fi
else
	fail "agent (started after the job): serves /metrics"
	wait "$JOBPID"; JOBPID=
fi
fi

# --- C: without NVML, ranks set up before and after the agent
if has nonvml; then
RANKPIDS=
rank() {
	RANK=$1 LOCAL_RANK=$1 WORLD_SIZE=4 TRAINSIM_NCCL_ID=$TMP/nonvml.ncclid \
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' rank "$CG$JOB" \
		$PY "$IG_TOP/tools/trainsim.py" ranks -s storage --steps $((STEPS * 6)) \
		--truth "$TMP/nonvml/rank$1.truth" > "$TMP/nonvml/rank$1.out" 2>&1 &
	RANKPIDS="$RANKPIDS $!"
}
in_init() {	# ranks 0, 1 and 3 have libnccl and the id: inside ncclCommInitRank
	[ -e "$TMP/nonvml.ncclid" ] || return 1
	for p in $RANKPIDS; do grep -q libnccl "/proc/$p/maps" 2>/dev/null || return 1; done
}
mkdir -p "$TMP/nonvml"
for r in 0 1 3; do rank $r; done
wait_until 60 in_init || diag "nonvml: ranks 0, 1, 3 not seen in ncclCommInitRank"
sleep 0.5
export SIMNVML_INIT_FAIL=version
start_agent "$TMP/nonvml.ag" --cgroup "$JOB" --listen 127.0.0.1:0 --window 4 --every 5 \
	--reports "$TMP/nonvml/reports"
st=$?
unset SIMNVML_INIT_FAIL
rank 2
for p in $RANKPIDS; do wait "$p"; done
if [ $st = 0 ]; then
	sleep 1
	PORT=$(grep -o 'metrics on port [0-9]*' "$TMP/nonvml.ag" | grep -o '[0-9]*$')
	curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/nonvml.metrics"
	stop_agent
	is "$?" 0 "agent without NVML: exits 0 on SIGTERM"
	is "$(grep -c 'NVML failed to initialise: RM has detected an NVML/RM version mismatch (NVML_ERROR_LIB_RM_VERSION_MISMATCH, 18)' "$TMP/nonvml.ag")" 1 \
		"agent without NVML: says why in one line"
	pychecks "agent without NVML" "$TMP/nonvml" "$TMP/nonvml/reports" "$TMP/nonvml.metrics" <<'PY'
import glob, json, os, re, sys
sys.path.insert(0, os.path.join(os.environ["IG_TOP"], "tools"))
import truth as T
from tap import check
name, d, rdir, metrics = sys.argv[1:5]
NS = 1e9
ranks = {}
for r in range(4):
    t = json.load(open("%s/rank%d.truth.rank%d" % (d, r, r)))
    ranks[t["pids"]["feeder"]] = t
strag = [p for p, t in ranks.items() if t["role"] == "straggler"][0]
waits = {r["pid"]: r["waits"] for r in T.nccl_report(
    [t["nccl"]["trace_file"] for t in ranks.values()])["ranks"]}
a = min(t["gpu"]["span_start_ns"] for t in ranks.values())
b = max(t["gpu"]["span_end_ns"] for t in ranks.values())
reps = [json.load(open(f)) for f in sorted(glob.glob(rdir + "/*.json"))]
full = [j for j in reps if a <= j["meta"]["start_ns"] and
        j["meta"]["start_ns"] + int(j["duration_s"] * NS) <= b]
if not check(full, "%s: a window inside the job's GPU span" % name):
    sys.exit(0)
# each rank's device entry in each full window (its own where nothing
# placed it: "device" null, its pid) against the simulators' truth
got, want, busy_g, kern, hid = ({p: 0.0 for p in ranks} for _ in range(5))
for j in full:
    procs = {p["pid"]: p for p in j["processes"]}
    coll = {r["pid"]: r for r in j["collectives"]["ranks"]}
    for pid, t in ranks.items():
        dev = procs.get(pid, {}).get("device")
        x = [x for x in j["gpu"]["devices"] if (dev is not None and x["device"] == dev) or
             (x["device"] is None and x.get("pid") == pid)]
        if not x:
            continue
        lo, hi = x[0]["span_start_ns"], x[0]["span_end_ns"]
        ivs = T.read_traces(t["trace_files"])[1]
        busy = T.clip(T.merge(ivs), lo, hi)
        w = T.merge(T.clip(waits.get(pid, []), lo, hi))
        want[pid] += T.total(w) / NS
        got[pid] += coll.get(pid, {}).get("peer_wait_s", 0.0)
        busy_g[pid] += x[0]["busy_s"]
        kern[pid] += (T.total(busy) - T.total(T.intersect(busy, w))) / NS
        late = T.read_late([os.environ["SIMGPU_LATE"].replace("%p", str(pid))])
        hid[pid] += T.hidden_idle(late, ivs, lo, hi) / NS
for pid, t in sorted(ranks.items(), key=lambda x: x[1]["rank"]):
    if pid == strag:
        continue
    check(want[pid] > 0 and abs(got[pid] - want[pid]) <= 0.10 * want[pid],
          "%s: rank %d's peer wait %.3f s, truth %.3f s (%d full windows)" % (
              name, t["rank"], got[pid], want[pid], len(full)))
    check(busy_g[pid] <= 1.10 * kern[pid] + hid[pid] + 0.02,
          "%s: rank %d's busy %.3f s, at most 10%% over its kernels' %.3f s "
          "(%.3f s of ends hidden)" % (name, t["rank"], busy_g[pid], kern[pid], hid[pid]))
text = open(metrics).read().splitlines()
series = [dict(re.findall(r'(\w+)="([^"]*)"', l.split("}")[0]))
          for l in text if l.startswith("idlegap_gpu_seconds_total{")]
on0 = {p["pid"] for j in reps for p in j["processes"] if p["device"] == 0}
bad = sorted({(s.get("rank"), s.get("pid")) for s in series if s.get("gpu") == "0"})
check(on0 or not bad, '%s: no series says gpu="0": no process is on GPU 0 (%s)' % (name, bad))
unknown = {x["pid"] for j in reps for x in j["gpu"]["devices"] if x["device"] is None}
placed = {p["pid"] for j in reps for p in j["processes"] if p["device"] is not None}
shown = {s.get("pid") for s in series if s.get("gpu") == "unknown"}
missing = sorted(p for p in unknown - placed if str(p) not in shown)
check((unknown | placed) >= set(ranks) and not missing,
      '%s: every followed GPU process is on /metrics: %d on gpu="unknown" with its pid, '
      '%d placed (missing %s)' % (name, len(unknown - placed), len(placed), missing))
n = [l.split()[1] for l in text if l.startswith("idlegap_gpu_processes_unknown_device_total ")]
check(n and int(float(n[0])) == len(unknown),
      "%s: idlegap_gpu_processes_unknown_device_total %s, %d processes" % (
          name, n and n[0], len(unknown)))
PY
else
	fail "agent without NVML: serves /metrics"
	sed 's/^/# /' "$TMP/nonvml.ag"
fi
fi
done_testing

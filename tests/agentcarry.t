#!/bin/sh
# Windows that drop no gap (docs/design.md §7.10), on the simulated GPU: a
# job whose feeder waits about 1.5 s for a lock at every step, so that
# windows of 1 s end inside its gaps, some gaps spanning three windows.
# Continuous (--window 1 --every 1): a gap open at a window's end is split
# at the boundary, each window counting its part with the cause found at
# the gap's end, the gap counted once where it ends; a window waits for the
# end of its gap one more window at most, past that its part is idle_open,
# with no cause.  Duty cycle (--window 2 --every 4): a window ending inside
# a gap keeps its probes until the gap ends, and counts it whole.
. "$(dirname "$0")/lib.sh"
need_root
TS=$IG_TOP/build/trainsim
SIM=$IG_TOP/build/simgpu/libcuda.so.1
[ -x "$TS" ] && [ -f "$SIM" ] || skip_all "build first: make all"
command -v curl > /dev/null || skip_all "no curl"
CG=$(cgroup_root)
[ -d "$CG" ] || skip_all "no cgroup v2 hierarchy"
JOB_CG=/idlegap-carry-$$
mkdir "$CG$JOB_CG" 2>/dev/null || skip_all "cannot make a cgroup under $CG"

AGENT=
cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	rmdir "$CG$JOB_CG" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/lib"
cp "$SIM" "$TMP/lib/"

# MODE WINDOW EVERY HOLD_MS: the agent over the job, scoped to its cgroup
# (other GPU processes of the host are not its); the reports in $TMP/MODE,
# the last /metrics in $TMP/MODE.prom.  The lock is held HOLD_MS each turn:
# a gap longer than two windows spans three of them wherever it starts.
run_mode() {
	start_agent "$TMP/$1.out" --listen 127.0.0.1:0 --window "$2" --every "$3" \
		--cgroup "$JOB_CG" --libcuda "$TMP/lib/libcuda.so.1" --reports "$TMP/$1"
	ok "$1: the agent starts" -- grep -q 'agent: metrics on port' "$TMP/$1.out"
	port=$(sed -n 's/.*metrics on port \([0-9]*\).*/\1/p' "$TMP/$1.out")
	# found by the sweep of /proc, every second: the job starts after it
	sleep 1
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' job "$CG$JOB_CG" \
		env LD_LIBRARY_PATH="$TMP/lib" "$TS" -s lock --hold-ms "$4" -k 2 -d 1000 \
		-t 9 -q --truth "$TMP/$1.truth" &
	wait $!
	# the windows the job's last gap ran into, and one more
	sleep $(($3 + 2))
	curl -s "http://127.0.0.1:$port/metrics" > "$TMP/$1.prom"
	stop_agent
	is "$?" 0 "$1: the agent exits 0 on SIGTERM"
}

run_mode cont 1 1 2500
pychecks "$TMP/cont" "$TMP/cont.prom" <<'PY'
import glob, json, os, re, sys
sys.path.insert(0, os.path.join(os.environ["IG_TOP"], "tools"))
import truth as tr
from tap import check
reps = sorted((json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")),
              key=lambda r: r["meta"]["start_ns"])
idle = sum(r["gpu"]["idle_s"] for r in reps)
iopen = sum(r["gpu"]["idle_open_s"] for r in reps)
causes = {}
for r in reps:
    for c in r["causes"]:
        causes[c["cause"]] = causes.get(c["cause"], 0) + c["seconds"]
print("# %d windows: idle %.3f s, idle_open %.3f s, causes %s" %
      (len(reps), idle, iopen, {k: round(v, 3) for k, v in causes.items()}))
outs = {}
for i, r in enumerate(reps):
    w = r["window"]
    for g in w["carried_out"]:
        outs.setdefault(g["gap_start_ns"], []).append((i, g))
    # a window's part of a gap with no end yet is idle_open: no cause
    check(abs(sum(c["seconds"] for c in r["causes"]) - r["gpu"]["idle_s"]) < 1e-3,
          "window %d: its causes sum to its idle, idle_open apart" % i)
# whether one ended within the wait depends on the lock's turns on a
# loaded host: every gap open at a window's end goes into the next
carried = [(s, l) for s, l in outs.items() if l and l[-1][1]["ended_by"] != "processes_ended"]
check(len(carried) >= 1, "gaps open at a window's end (%d)" % len(carried))
for s, l in carried:
    i, g = l[-1]
    nxt = reps[i + 1]["window"]["carried_in"] if i + 1 < len(reps) else []
    check(any(c["gap_start_ns"] == s for c in nxt),
          "the gap opened at %d is carried into the window after %d" % (s, i))
three = [s for s, l in outs.items() if len(l) >= 2]
check(len(three) >= 1, "a gap spans three windows (carried out of two: %d)" % len(three))
# each ns of a gap in one window: the parts add to at most its length
for s, l in outs.items():
    end = max(g["ended_ns"] or 0 for _, g in l)
    parts = sum(g["counted_s"] for _, g in l)
    nxt = [c["counted_s"] for r in reps for c in r["window"]["carried_in"]
           if c["gap_start_ns"] == s and c["ended_by"] == "launch"]
    if end:
        check(parts + sum(nxt) <= (end - s) / 1e9 + 1e-3,
              "gap at %d: its parts (%.3f s) within its length (%.3f s)" %
              (s, parts + sum(nxt), (end - s) / 1e9))
# the simulator's idle from when the agent found the job: its span from
# then on, less the kernels its trace has there
T = json.load(open(sys.argv[1] + ".truth"))
truth = T["gpu"]
first = min(d["span_start_ns"] for r in reps for d in r["gpu"]["devices"])
a, b = max(first, truth["span_start_ns"]), truth["span_end_ns"]
b_ivs = tr.merge(tr.read_traces(T["trace_files"])[1])
busy = tr.total(tr.clip(b_ivs, a, b))
want = (b - a - busy) / 1e9
# The job's last gap ends with its processes: no GPU idle (§7.10), so
# what the windows counted of it open, before they knew, is not either;
# the simulator's span ends at its last kernel.
dropped = {c["gap_start_ns"] for r in reps for c in r["window"]["carried_out"] + r["window"]["carried_in"]
           if c["ended_by"] == "processes_ended"}
dopen = sum(c["counted_s"] for r in reps for c in r["window"]["carried_out"]
            if c["gap_start_ns"] in dropped and c.get("state") == "idle_open")
# on a miss, what each window counted and the simulator's gaps, from the
# agent's first sight of the job (ms since then)
def ms(t):
    return "%.0f" % ((t - first) / 1e6) if t else "-"
def gaps(l):
    return ["%s:%s:%.3f" % (ms(c["gap_start_ns"]), c["ended_by"], c["counted_s"]) for c in l]
why = "windows: " + "; ".join(
    "[%s,%s] idle %.3f open %.3f in %s out %s" % (
        ms(r["meta"]["start_ns"]), ms(r["window"]["end_ns"]), r["gpu"]["idle_s"],
        r["gpu"]["idle_open_s"], gaps(r["window"]["carried_in"]),
        gaps(r["window"]["carried_out"])) for r in reps) + \
    " | the simulator's gaps over 0.3 s: " + ", ".join(
        "%s+%.3f" % (ms(x[1]), (y[0] - x[1]) / 1e9)
        for x, y in zip(b_ivs, b_ivs[1:]) if y[0] - x[1] > 3e8)
check(abs(idle + iopen - dopen - want) <= 0.1 * truth["idle_s"],
      "idle in the windows (%.3f s, less %.3f s open in the gap the job's exit ended) "
      "within 10%% of the simulator's since the job was found (%.3f s)"
      % (idle + iopen - dopen, dopen, want), why)
check(causes.get("lock", 0) >= 0.6 * idle, "the lock's share of idle %.2f" %
      (causes.get("lock", 0) / max(idle, 1e-9)))
prom = open(sys.argv[2]).read()
m = sum(float(v) for v in re.findall(r'^idlegap_gpu_seconds_total\{[^}]*state="idle"[^}]*\} (\S+)', prom, re.M))
check(abs(m - idle) < 0.01, "/metrics idle (%.3f s) is the reports' (%.3f s)" % (m, idle))
PY

run_mode duty 2 4 1500
pychecks "$TMP/duty" <<'PY'
import glob, json, sys
from tap import check
reps = sorted((json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")),
              key=lambda r: r["meta"]["start_ns"])
ext = [r["window"]["extended_s"] for r in reps]
print("# %d windows, extended %s" % (len(reps), ext))
check(all(e <= 2.0 + 1e-6 for e in ext), "no window extended past one more window")
whole = [(r, g) for r in reps for g in r["window"]["carried_out"] if g["ended_by"] == "launch"]
# a window whose end fell in no gap has nothing to wait for (the job's
# turns against the windows' times): that run says so, as a SKIP
co = [g for r in reps for g in r["window"]["carried_out"] if g["ended_by"] != "processes_ended"]
if co:
    check(len(whole) >= 1, "a window waited for its gap's end (%d of %d carried out)" % (len(whole), len(co)))
else:
    check(True, "a window waited for its gap's end # SKIP no window of this run ended inside a gap")
for r, g in whole:
    length = (g["ended_ns"] - g["gap_start_ns"]) / 1e9
    check(abs(g["counted_s"] - length) < 1e-3 and r["window"]["extended_s"] > 0,
          "the gap counted whole (%.3f s of %.3f s), the window extended %.3f s" %
          (g["counted_s"], length, r["window"]["extended_s"]))
    # extended until the gap's end, not until the agent looked again
    due = (g["ended_ns"] - r["meta"]["start_ns"]) / 1e9 - 2
    check(abs(r["window"]["extended_s"] - due) <= 0.1,
          "the window extended %.3f s: to its gap's end, %.3f s past its 2 s" %
          (r["window"]["extended_s"], due))
    lock = sum(c["seconds"] for c in r["causes"] if c["cause"] == "lock")
    check(lock >= 0.6 * g["counted_s"], "its cause is the lock (%.3f s)" % lock)
for r in reps:
    if r["gpu"]["idle_open_s"] > 0:
        check(r["window"]["extended_s"] >= 1.99, "idle_open only past the bound")
PY
done_testing

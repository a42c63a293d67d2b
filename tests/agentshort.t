#!/bin/sh
# Short-lived GPU processes (docs/design.md §7.10): 120 runs of
# fakecuda_app of about 0.1 s each (three steps of ten launches and a
# sync), four at a time, inside one agent window.  The agent hears of
# each at its first libcuda mapping (the sys_enter hook); every one is
# either followed (in the window report's processes) or counted and named
# in gpu_processes.missed_list, never silently lost: followed + missed ==
# started, over the test's own pids.
. "$(dirname "$0")/lib.sh"
need_root
APP=$IG_TOP/build/tests/fakecuda/fakecuda_app
SIM=$IG_TOP/build/tests/fakecuda/libcuda.so.1
[ -x "$APP" ] && [ -f "$SIM" ] || skip_all "build first: make test-progs"
N=120

AGENT=
cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/lib"
cp "$SIM" "$TMP/lib/"
start_agent "$TMP/a.out" --listen 127.0.0.1:0 --window 300 --every 300 \
	--libcuda "$TMP/lib/libcuda.so.1" --reports "$TMP/r"
ok "the agent starts" -- grep -q 'agent: metrics on port' "$TMP/a.out"
sleep 1
export APP TMP
start=$(date +%s.%N)
seq $N | xargs -P 4 -I{} sh -c 'echo $$ >> "$TMP/pids"; exec env LD_LIBRARY_PATH="$TMP/lib" "$APP" 3 20 > /dev/null' 2> "$TMP/jobs.err"
diag "$N processes in $(echo "$(date +%s.%N) - $start" | bc) s"
is "$(wc -l < "$TMP/pids")" "$N" "$N short GPU processes started"
sleep 1
kill "$AGENT"; wait "$AGENT"; rc=$?; AGENT=
is "$rc" 0 "the agent exits 0 on SIGTERM, with the window's report"

pychecks "$TMP/r" "$TMP/pids" <<'PY'
import glob, json, sys
from tap import check
reps = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")]
started = {int(l) for l in open(sys.argv[2])}
followed = {p["pid"] for r in reps for p in r["processes"]} & started
missed = {p["pid"] for r in reps for p in r.get("gpu_processes", {}).get("missed_list", [])} & started
omitted = sum(r.get("gpu_processes", {}).get("missed_list_omitted", 0) for r in reps)
print("# followed %d, missed %d (listed), omitted %d, of %d started" % (len(followed), len(missed), omitted, len(started)))
check(omitted == 0, "every missed process is listed (none omitted)")
check(not followed & missed, "none both followed and missed")
check(len(followed) + len(missed) == len(started),
      "followed + missed == started (%d + %d vs %d)" % (len(followed), len(missed), len(started)),
      "neither: %s" % sorted(started - followed - missed)[:20])
check(all(r["gpu_processes"]["mapped"] == r["gpu_processes"]["followed"] + r["gpu_processes"]["missed"]
          for r in reps if "gpu_processes" in r), "each report's mapped == followed + missed")
PY
done_testing

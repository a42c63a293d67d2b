#!/bin/sh
# Continuous agent windows (--window 2 --every 2, docs/design.md §7.10):
# each window's engine takes the records from the instant the last one
# closed, the probes staying attached, so no time goes untraced between
# windows.  Asserted on the reports' own stamps: a window starts
# (meta.start_ns) where the one before it ended (start_ns + duration_s),
# and the job's launches are seen in every window it ran through.
. "$(dirname "$0")/lib.sh"
need_root
TS=$IG_TOP/build/trainsim
SIM=$IG_TOP/build/simgpu/libcuda.so.1
[ -x "$TS" ] && [ -f "$SIM" ] || skip_all "build first: make all"

AGENT=
cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/lib"
cp "$SIM" "$TMP/lib/"
start_agent "$TMP/a.out" --listen 127.0.0.1:0 --window 2 --every 2 \
	--libcuda "$TMP/lib/libcuda.so.1" --reports "$TMP/r"
ok "the agent starts" -- grep -q 'agent: metrics on port' "$TMP/a.out"
SIMGPU_TRACE=$TMP/t.trace LD_LIBRARY_PATH=$TMP/lib "$TS" -s healthy -t 11 -n 100000000 -q &
job=$!
wait $job
sleep 3
kill "$AGENT"; wait "$AGENT"; rc=$?; AGENT=
is "$rc" 0 "the agent exits 0 on SIGTERM"

pychecks "$TMP/r" "$job" <<'PY'
import glob, json, sys
from tap import check
reps = sorted((json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")),
              key=lambda r: r["meta"]["start_ns"])
job = int(sys.argv[2])
check(len(reps) >= 5, "at least 5 windows (%d)" % len(reps))
gaps = [b["meta"]["start_ns"] - (a["meta"]["start_ns"] + round(a["duration_s"] * 1e9))
        for a, b in zip(reps, reps[1:])]
check(all(abs(g) <= 2000 for g in gaps),
      "each window starts where the one before it ended (untraced between windows: %s ns)" % gaps)
untraced = sum(max(g, 0) for g in gaps)
span = reps[-1]["meta"]["start_ns"] - reps[0]["meta"]["start_ns"] if len(reps) > 1 else 1
print("# untraced between windows: %.3f%% of %.1f s" % (100.0 * untraced / span, span / 1e9))
def launches(r):
    return sum(p["launches"] for p in r["processes"] if p["pid"] == job)
seen = [launches(r) for r in reps]
# the windows the job ran all through: between its first and last window
first = next((i for i, n in enumerate(seen) if n), None)
last = max((i for i, n in enumerate(seen) if n), default=None)
middle = seen[first + 1:last] if first is not None else []
check(len(middle) >= 2 and all(n > 0 for n in middle),
      "the job's launches are in every window it ran through, probes kept (%s)" % seen)
PY
done_testing

#!/bin/sh
# Memory bounded by a constant, whatever the job's length (docs/design.md
# §3.5): `idlegap run` on a launch-heavy job (trainsim's healthy loop, 20
# kernels of 100 us and a sync per step, the simulated GPU) for 5 minutes,
# its resident set sampled every 10 s, must stay within 4 MiB after its
# first minute.  The estimate's evidence (launches, syncs, unresolved
# spans, the feeder stretches) is folded into sums as it ages, so nothing
# grows with the run; the report says what was folded.  A run that kept
# the evidence to the end grew 8.4 MiB between 60 s and 180 s; one that
# closed a single block a try, leaving the launches between two tries
# open each time, crept 2.8 to 5.1 MiB between 60 s and 300 s.
# IG_LONGRUN_S sets the job's length (default 300).
. "$(dirname "$0")/lib.sh"
need_root
TS=$IG_TOP/build/trainsim
SIM=$IG_TOP/build/simgpu
[ -x "$TS" ] && [ -f "$SIM/libcuda.so.1" ] || skip_all "build first: make all test-progs"
DUR=${IG_LONGRUN_S:-300}
[ "$DUR" -ge 120 ] || skip_all "IG_LONGRUN_S=$DUR: the check needs 2 minutes at least"

RUN=
cleanup() {
	[ -n "$RUN" ] && kill "$RUN" 2>/dev/null && wait "$RUN" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

"$IG" run -q --json "$TMP/run.json" -- env LD_LIBRARY_PATH="$SIM" "$TS" -s healthy \
	-k 20 -d 100 -n 1000000000 -t "$DUR" -q > "$TMP/out.txt" 2> "$TMP/err.txt" &
RUN=$!
t=0
while kill -0 "$RUN" 2>/dev/null && [ $t -lt $((DUR - 10)) ]; do
	sleep 10
	t=$((t + 10))
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$RUN/status" 2>/dev/null)
	[ -n "$rss" ] && echo "$t $rss" >> "$TMP/rss"
done
wait "$RUN"
rc=$?
RUN=
is "$rc" 0 "run exits 0 after ${DUR} s"
[ $rc = 0 ] || sed 's/^/#   /' "$TMP/err.txt" >&2
diag "RSS (s KiB): $(tr '\n' ' ' < "$TMP/rss")"
pychecks "$TMP" "$DUR" <<'PY'
import json, sys
from tap import check
d, dur = sys.argv[1], int(sys.argv[2])
rss = [tuple(map(int, l.split())) for l in open(d + "/rss")]
late = [kib for t, kib in rss if t >= 60]
check(len(late) >= (dur - 70) // 10 - 1, "RSS sampled every 10 s after the first minute",
      "%d samples" % len(late))
if late:
    spread = max(late) - min(late)
    check(spread <= 4096, "RSS within 4 MiB after the first minute",
          "%.1f MiB, from %.1f to %.1f MiB" % (spread / 1024, min(late) / 1024, max(late) / 1024))
r = json.load(open(d + "/run.json"))
f = r["events"]["evidence_folded"]
check(f["estimate_blocks"] >= 1, "the report says the estimate's evidence was folded",
      "%d blocks" % f["estimate_blocks"])
check(r["gpu"]["busy_s"] > 0 and r["gpu"]["idle_s"] > 0, "the report has busy and idle time")
PY
done_testing

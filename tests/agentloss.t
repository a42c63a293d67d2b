#!/bin/sh
# Records the agent loses are shown (docs/design.md §7.10): the agent is
# stopped (SIGSTOP) for 6 s while a busy job fills its 1 MiB ring buffer;
# the window that lost records says "complete": false with the count in
# events.dropped, /metrics counts it in idlegap_windows_partial_total and
# the records in idlegap_records_lost_total, and the agent warns in one
# line.  Windows that lost nothing stay complete.  A window ends where
# the stream reached its end: the agent, behind after its stop, reads on
# past the end for the records up to it and keeps those after it for the
# next window (docs/design.md §7.10).
. "$(dirname "$0")/lib.sh"
. "$IG_TOP/tests/lib/prom.sh"
need_root
TS=$IG_TOP/build/trainsim
SIM=$IG_TOP/build/simgpu/libcuda.so.1
[ -x "$TS" ] && [ -f "$SIM" ] || skip_all "build first: make all"
command -v curl > /dev/null || skip_all "no curl"

AGENT=
cleanup() {
	[ -n "$AGENT" ] && kill -CONT "$AGENT" 2>/dev/null
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/lib"
cp "$SIM" "$TMP/lib/"
PORT=$(prom_free_port)
start_agent "$TMP/a.out" --listen 127.0.0.1:$PORT --window 3 --every 3 --ringbuf-mb 1 \
	--libcuda "$TMP/lib/libcuda.so.1" --reports "$TMP/r"
ok "the agent starts" -- grep -q 'agent: metrics on port' "$TMP/a.out"
# a job with many short steps: far more records than 1 MiB holds in 6 s
SIMGPU_TRACE=$TMP/t.trace LD_LIBRARY_PATH=$TMP/lib "$TS" -s healthy -t 14 -n 100000000 -k 8 -d 20 -q &
job=$!
sleep 2
kill -STOP "$AGENT"
sleep 6
kill -CONT "$AGENT"
wait $job
sleep 4
# the windows reported before the scrape: the one its stop ends comes after
# it, and on a loaded host may lose records too (1 MiB of ring buffer)
ls "$TMP/r"/*.json > "$TMP/scraped" 2>/dev/null
curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/expo"
kill "$AGENT"; wait "$AGENT"; rc=$?; AGENT=
is "$rc" 0 "the agent exits 0 on SIGTERM"

pychecks "$TMP/r" "$TMP/expo" "$TMP/a.out" "$TMP/scraped" <<'PY'
import glob, json, re, sys
from tap import check
files = sorted(glob.glob(sys.argv[1] + "/*.json"))
reps = [json.load(open(f)) for f in files]
lossy = [r for r in reps if r["events"]["dropped"] > 0]
scraped = set(open(sys.argv[4]).read().split())
lossy_scraped = [r for f, r in zip(files, reps) if f in scraped and r["events"]["dropped"] > 0]
check(len(lossy) > 0, "a window lost records while the agent was stopped (%d of %d windows)" % (len(lossy), len(reps)),
      "dropped: %r" % [r["events"]["dropped"] for r in reps])
check(all(r["complete"] is False for r in lossy), "each window that lost records says complete: false",
      "complete: %r" % [r["complete"] for r in lossy])
check(all(r["complete"] is True for r in reps if r["events"]["dropped"] == 0),
      "windows that lost nothing stay complete")
expo = open(sys.argv[2]).read()
def val(name):
    m = re.search(r"^%s (\S+)$" % name, expo, re.M)
    return float(m.group(1)) if m else None
partial, lost = val("idlegap_windows_partial_total"), val("idlegap_records_lost_total")
check(partial is not None and len(lossy) >= partial >= len(lossy_scraped) > 0,
      "idlegap_windows_partial_total counts them (%s; %d reported before the scrape, %d in all)"
      % (partial, len(lossy_scraped), len(lossy)))
check(lost is not None and sum(r["events"]["dropped"] for r in lossy) >= lost >=
      sum(r["events"]["dropped"] for r in lossy_scraped) > 0,
      "idlegap_records_lost_total counts the records (%s)" % lost)
# a window ends where the stream reached its end, not when the agent,
# stopped and then behind, got there: each continuous window starts
# where the last one ended, 3 s after its start at most
starts = [r["meta"]["start_ns"] for r in reps]
steps = [(b - a) / 1e9 for a, b in zip(starts, starts[1:])]
check(steps and max(steps) <= 3.001 and min(steps) > 0,
      "each window ends at most 3 s after its start, however late it is read (%s)"
      % ", ".join("%.3f" % x for x in steps))
log = open(sys.argv[3]).read()
check(re.search(r"window \d+ lost \d+ records", log) is not None,
      "the agent says so in one line")
PY
done_testing

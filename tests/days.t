#!/bin/sh
# A run that lasts days (docs/design.md §6.4, §7.10): reports of each
# period as the job goes (--every), a report of the run so far on SIGUSR1
# while the run goes on, a recording in pieces of a bounded size
# (--output-max-mb, --output-files) that each read alone and in order as
# one, and a full disk that loses the piece being written and no more.
. "$(dirname "$0")/lib.sh"
need_root
TS=$IG_TOP/build/trainsim
SIM=$IG_TOP/build/simgpu
[ -x "$TS" ] && [ -f "$SIM/libcuda.so.1" ] || skip_all "build first: make all test-progs"

MNT=
JOB=
cleanup() {
	[ -n "$JOB" ] && kill "$JOB" 2>/dev/null && wait "$JOB" 2>/dev/null
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# --- bad usage: exit 2, one line saying what is wrong (and argp's hint) -----
usage() {
	_name=$1; _what=$2; shift 2
	"$@" > /dev/null 2> "$TMP/err"
	_rc=$?
	if [ $_rc = 2 ] && head -1 "$TMP/err" | grep -q -- "$_what" &&
	   [ "$(grep -vc '^Try ' "$TMP/err")" = 1 ]; then
		pass "$_name: exit 2, '$(head -1 "$TMP/err")'"
	else
		fail "$_name: exit $_rc (want 2), stderr:"; sed 's/^/#   /' "$TMP/err" >&2
	fi
}
usage "--every under 1 s" "invalid --every" "$IG" run --every 0.5 -- true
usage "--every on report" "--every applies to attach and run" "$IG" report --every 2 "$TMP/none"
usage "--output-max-mb without -o" "give -o RECORDING" "$IG" run --output-max-mb 5 -- true
usage "--output-files without --output-max-mb" "needs --output-max-mb" \
	"$IG" run -o "$TMP/r" --output-files 3 -- true
usage "--output-max-mb 0" "invalid --output-max-mb" "$IG" run -o "$TMP/r" --output-max-mb 0 -- true

# --- --every 2 on a 7 s job -------------------------------------------------
mkdir "$TMP/p"
"$IG" run --every 2 --json "$TMP/p/run.json" --perfetto "$TMP/p/run.pf" -- env LD_LIBRARY_PATH="$SIM" "$TS" -s storage -n 1000000 -t 7 -q \
	> "$TMP/p/out.txt" 2> "$TMP/p/err.txt"
is "$?" 0 "run --every 2 exits 0"
n=$(grep -c '^=== period [0-9]*: ' "$TMP/p/out.txt")
ok "a text report each period ($n)" -- [ "$n" -ge 3 ]
is "$(ls "$TMP"/p/run.pf.period-* | wc -l)" "$n" "a Perfetto trace each period"
SCHEMA=$IG_TOP/tests/perfetto
if command -v protoc > /dev/null; then
	bad=0
	for f in "$TMP"/p/run.pf.period-*; do
		protoc --proto_path="$SCHEMA" --decode=perfetto.protos.Trace \
			"$SCHEMA/perfetto-subset.proto" < "$f" > /dev/null 2>&1 || bad=$((bad + 1))
	done
	is "$bad" 0 "each period's trace decodes"
else
	skip "each period's trace decodes" "no protoc"
fi
pychecks "$TMP/p" <<'PY'
import glob, json, sys
from tap import check
d = sys.argv[1]
run = json.load(open(d + "/run.json"))
per = [json.load(open(f)) for f in sorted(glob.glob(d + "/run.json.period-*"))]
check(len(per) >= 3, "at least 3 period reports (%d)" % len(per))
check([p["period"]["index"] for p in per] == list(range(1, len(per) + 1)),
      "the periods numbered in order")
ends = [(p["period"]["start_s"], p["period"]["end_s"]) for p in per]
check(all(abs(a[1] - b[0]) < 1e-6 for a, b in zip(ends, ends[1:])),
      "each period starts where the one before it ended", str(ends))
def total(r):
    g = r["gpu"]
    return g["busy_s"] + g["idle_s"] + g["unresolved_s"]
whole, parts = total(run), sum(total(p) for p in per)
check(abs(parts - whole) <= 0.02 * whole + 0.01,
      "busy + idle + unresolved of the periods sum to the run's",
      "periods %.4f s, run %.4f s" % (parts, whole))
for k in ("busy_s", "idle_s"):
    s = sum(p["gpu"][k] for p in per)
    check(abs(s - run["gpu"][k]) <= 0.03 * run["gpu"][k] + 0.01,
          "the periods' %s sum to the run's" % k, "%.4f against %.4f" % (s, run["gpu"][k]))
PY

# --- SIGUSR1: a report of the run so far, and the run goes on ---------------
mkdir "$TMP/u"
"$IG" run --json "$TMP/u/run.json" -- env LD_LIBRARY_PATH="$SIM" "$TS" -s storage -n 1000000 -t 8 -q \
	> "$TMP/u/out.txt" 2> "$TMP/u/err.txt" &
JOB=$!
wait_until 60 grep -q 'tracing' "$TMP/u/err.txt"
sleep 2
kill -USR1 "$JOB"
wait_until 60 test -s "$TMP/u/run.json.usr1-000001"
wait "$JOB"; rc=$?; JOB=
is "$rc" 0 "the run exits 0 after SIGUSR1"
ok "a text report of the run so far" -- grep -q '^=== the run so far (SIGUSR1 1)' "$TMP/u/out.txt"
pychecks "$TMP/u" <<'PY'
import json, sys
from tap import check
d = sys.argv[1]
so_far = json.load(open(d + "/run.json.usr1-000001"))
run = json.load(open(d + "/run.json"))
check(so_far["stop_reason"] == "running", "the SIGUSR1 report says the run was going on",
      so_far["stop_reason"])
check(run["stop_reason"] == "target_exit", "the run went on to the job's end",
      run["stop_reason"])
check(0 < so_far["duration_s"] < run["duration_s"],
      "the run so far is shorter than the run",
      "%.3f against %.3f" % (so_far["duration_s"], run["duration_s"]))
check(so_far["gpu"]["busy_s"] > 0 and so_far["gpu"]["idle_s"] > 0,
      "the run so far has the GPU's busy and idle time")
PY

# --- a 75 s job in pieces of 5 MB, 3 kept -----------------------------------
mkdir "$TMP/o"
MB=5
"$IG" run -q --json "$TMP/o/run.json" -o "$TMP/o/rec" --output-max-mb $MB --output-files 3 \
	-- env LD_LIBRARY_PATH="$SIM" "$TS" -s storage -n 1000000 -t 75 -q 2> "$TMP/o/err.txt"
is "$?" 0 "run with -o in pieces exits 0"
n=$(ls "$TMP/o" | grep -c '^rec\.[0-9]*$')
ok "at most 3 pieces left ($n)" -- [ "$n" -ge 1 ] && [ "$n" -le 3 ]
big=0
for f in "$TMP"/o/rec.*; do
	sz=$(stat -c %s "$f")
	diag "$(basename "$f"): $sz bytes"
	[ "$sz" -le $((MB * 1048576)) ] || big=$((big + 1))
done
is "$big" 0 "every piece holds at most $MB MiB"
last=$(ls "$TMP"/o/rec.* | tail -1)
ok "the run made more pieces than it kept ($(basename "$last"))" -- \
	[ "${last##*.}" -gt 000003 ]
bad=0
for f in "$TMP"/o/rec.*; do
	"$IG" report -q --json "$f.json" "$f" 2> "$TMP/o/rep.err" || {
		bad=$((bad + 1)); sed 's/^/#   /' "$TMP/o/rep.err" >&2; }
done
is "$bad" 0 "each piece reads alone (exit 0)"
"$IG" report -q --json "$TMP/o/all.json" "$TMP"/o/rec.[0-9]*[0-9] 2> "$TMP/o/rep.err"
is "$?" 0 "the pieces kept read in order as one (exit 0)"
first=$(ls "$TMP"/o/rec.[0-9]*[0-9] | head -1)
says="missing" one_line "pieces that do not follow one another" 2 \
	"$IG" report -q "$first" "$last"
pychecks "$TMP/o" <<'PY'
import glob, json, sys
from tap import check
d = sys.argv[1]
pieces = [json.load(open(f)) for f in sorted(glob.glob(d + "/rec.*.json"))]
whole = json.load(open(d + "/all.json"))
each = sum(p["duration_s"] for p in pieces)
check(abs(whole["duration_s"] - each) <= 0.05 * each,
      "the pieces read as one last as long as they do one by one",
      "%.3f against %.3f" % (whole["duration_s"], each))
check(all(p["gpu"]["busy_s"] > 0 for p in pieces), "every piece alone has its GPU's work")
check(pieces[-1]["stop_reason"] == "target_exit" and
      all(p["stop_reason"] == "next_piece" for p in pieces[:-1]),
      "each piece ends as the run went on, the last as the run ended",
      str([p["stop_reason"] for p in pieces]))
PY

# --- a full disk: the piece being written is lost, the run goes on ----------
MNT=$TMP/fs
mkdir "$MNT"
if mount -t tmpfs -o size=5M tmpfs "$MNT" 2>/dev/null; then
	"$IG" run -q --json "$TMP/fs.json" -o "$MNT/rec" --output-max-mb 2 --output-files 3 \
		-- env LD_LIBRARY_PATH="$SIM" "$TS" -s storage -n 1000000 -t 20 -q 2> "$TMP/fs.err"
	rc=$?
	sed 's/^/# /' "$TMP/fs.err"
	lost=$(grep -c 'recording piece .* lost: No space left on device' "$TMP/fs.err")
	ok "a piece that found the disk full is said lost, one line each ($lost)" -- [ "$lost" -ge 1 ]
	is "$rc" 1 "the run exits 1: its recording lost pieces"
	ok "the run went on: its report is there" -- \
		[ "$(json "$TMP/fs.json" 'j["stop_reason"]')" = target_exit ]
	bad=0
	for f in "$MNT"/rec.*; do
		"$IG" report -q "$f" > /dev/null 2>&1 || bad=$((bad + 1))
	done
	is "$bad" 0 "each piece left on the full disk reads alone"
	umount "$MNT" && MNT=
else
	skip "a full disk" "cannot mount a tmpfs here"
fi
done_testing

#!/bin/sh
# A free-threaded CPython (3.14t: build/freethreaded, made by `make
# free-threaded`, CPython 3.14 built with --disable-gil) runs
# tools/trainsim.py on the simulated GPU, traced by run and attach:
# - check -p names the build: free-threaded, its GIL off;
# - the gil scenario's threads compute side by side: no gil cause, and the
#   report names their Python frames (each thread runs its own copy of the
#   bytecode);
# - objlock: the feeder appends to a list another thread keeps sorting (the
#   list's own lock): no gil, the lock's holder stack names sort_hog and
#   its waiter stack append_batch, each with a line inside it (which cause
#   leads is tests/pylock.t's);
# - storage: the blocked stack names read_batch.
# Needs root and the fixture (SKIP otherwise).
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$IG" ] || skip_all "build first: make all"
PY=$IG_TOP/build/freethreaded/py314t/bin/python3.14t
[ -f "$IG_TOP/build/freethreaded/ok" ] && [ -x "$PY" ] ||
	skip_all "no free-threaded CPython in build/freethreaded (make free-threaded)"
JOB=
cleanup() { [ -n "$JOB" ] && kill "$JOB" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
export LD_LIBRARY_PATH="$IG_TOP/build/simgpu"
# native stacks off: the fixture carries its full debug info, and naming
# its native frames holds the capture loop up for seconds, its libcuda
# probed that much later (tests/pylock.t); Python frames are what is tested
export IDLEGAP_NO_USTACKS=1
TS=$IG_TOP/tools/trainsim.py
py() { /usr/bin/python3 -c "import sys; sys.exit(0 if $1 else 1)"; }

# stacks JSON CAUSE ROLE FUNCTION: "yes" when a stack of (CAUSE, ROLE) has a
# frame FUNCTION (tools/trainsim.py:LINE, or its work's file,
# tools/trainsim_work.py) with LINE inside FUNCTION's body
stacks() {
	/usr/bin/python3 - "$TS" "$@" <<'PY'
import ast, json, os, re, sys
ts, path, cause, role, fn = sys.argv[1:]
span = {}
for f in (ts, os.path.join(os.path.dirname(ts), "trainsim_work.py")):
    span.update({n.name: (f, n.lineno, n.end_lineno)
                 for n in ast.walk(ast.parse(open(f).read()))
                 if isinstance(n, ast.FunctionDef)})
ts, lo, hi = span[fn]
pat = re.compile(r"^%s \(%s:(\d+)\)$" % (re.escape(fn), re.escape(ts)))
d = json.load(open(path))
ok = any(m and lo <= int(m.group(1)) <= hi
         for c in d["causes"] if c["cause"] == cause for x in c["details"]
         if x.get("kind") == "stack" and x["role"] == role
         for m in map(pat.match, x["frames"]))
print("yes" if ok else "no")
PY
}
causes() { json "$1" '" ".join("%s=%.2f" % (c["cause"], c["seconds"]) for c in j["causes"])'; }
# pyframes JSON: how many stacks name a frame of trainsim.py or its work
pyframes() { json "$1" 'sum(1 for c in j["causes"] for x in c["details"] if x.get("kind") == "stack" and any(("trainsim.py:" in f or "trainsim_work.py:" in f) for f in x["frames"]))'; }

# --- check -p -----------------------------------------------------------------
"$PY" "$TS" -s gil -n 1000000 -t 60 -q &
JOB=$!
sleep 2	# its threads started
"$IG" check -p "$JOB" > "$TMP/check.txt" 2>&1
ok "check -p: 3.14 free-threaded, its GIL off, frames read by its published offsets" -- \
	grep -q "Python build.*3\.14\.[0-9]* free-threaded, its GIL off.*published debug offsets" "$TMP/check.txt"
grep "Python build" "$TMP/check.txt" | sed 's/^/# /'

# --- attach: the gil scenario, no GIL -------------------------------------------
"$IG" attach -p "$JOB" -d 3 --json "$TMP/attach.json" > /dev/null 2> "$TMP/err"
is "$?" 0 "attach to the free-threaded job exits 0"
ok "attach: no gil cause in a build without a GIL ($(causes "$TMP/attach.json"))" -- \
	sh -c "! grep -q '\"cause\": *\"gil\"' '$TMP/attach.json'"
kill "$JOB" 2>/dev/null; wait "$JOB" 2>/dev/null; JOB=

# --- run: gil, objlock, storage ---------------------------------------------------
"$IG" run -q --json "$TMP/gil.json" -- "$PY" "$TS" -s gil -t 3 -q 2> "$TMP/err"
is "$?" 0 "gil scenario on 3.14t: traced by run"
ok "gil scenario on 3.14t: no gil cause ($(causes "$TMP/gil.json"))" -- \
	sh -c "! grep -q '\"cause\": *\"gil\"' '$TMP/gil.json'"
ok "gil scenario on 3.14t: the GPU's work was seen ($(json "$TMP/gil.json" 'j["gpu"]["busy_s"]') s busy)" -- \
	py "$(json "$TMP/gil.json" 'j["gpu"]["busy_s"]') > 0.1"
n=$(pyframes "$TMP/gil.json")
ok "gil scenario on 3.14t: $n stacks name Python frames of trainsim.py" -- test "$n" -gt 0
ok "3.14t: no warning of unread Python frames" -- \
	sh -c "! grep -q 'without Python frames' '$TMP/err'"

# which cause leads, judged by the kernel's accounting, is tests/pylock.t's;
# here the frames of the lock's two sides
for try in 1 2; do	# once more on a busy machine (CPU waits instead)
	"$IG" run -q --json "$TMP/objlock.json" -- "$PY" "$TS" -s objlock -t 4 -q 2> "$TMP/err"
	rc=$?
	held=$(stacks "$TMP/objlock.json" lock holder sort_hog)
	wait=$(stacks "$TMP/objlock.json" lock waiter append_batch)
	[ "$rc" = 0 ] && [ "$held" = yes ] && [ "$wait" = yes ] && break
	diag "objlock: try $try: exit $rc, causes $(causes "$TMP/objlock.json")"
done
is "$rc" 0 "objlock on 3.14t: traced by run"
ok "objlock: no gil cause ($(causes "$TMP/objlock.json"))" -- \
	sh -c "! grep -q '\"cause\": *\"gil\"' '$TMP/objlock.json'"
is "$held" yes "objlock: the lock's holder stack names sort_hog with a line inside it"
is "$wait" yes "objlock: the lock's waiter stack names append_batch with a line inside it"

for try in 1 2; do
	"$IG" run -q --json "$TMP/storage.json" -- "$PY" "$TS" -s storage -t 3 -q 2> "$TMP/err"
	rc=$?
	r=$(stacks "$TMP/storage.json" storage blocked read_batch)
	[ "$rc" = 0 ] && [ "$r" = yes ] && break
	diag "storage: try $try: exit $rc, causes $(causes "$TMP/storage.json")"
done
is "$rc" 0 "storage on 3.14t: traced by run"
is "$r" yes "storage on 3.14t: the blocked stack names read_batch with a line inside it"
done_testing

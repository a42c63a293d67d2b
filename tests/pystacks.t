#!/bin/sh
# Python stacks on every CPython here (pyenv 3.9-3.13, Debian's 3.11, and a
# free-threaded 3.14t where `make free-threaded` built it): a
# thread blocked in os.read and one holding the GIL in a busy loop, traced
# into a recording; the replayed dump must name both functions with their
# file and line, and their callers.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$IG" ] || skip_all "build first: make all"
trap 'rm -rf "$TMP"' EXIT

SCRIPT="$IG_TOP/tests/py/stacks.py"
line() { grep -n "# $1\$" "$SCRIPT" | cut -d: -f1; }
READ=$(line WORKER_READ_LINE)
GIL=$(line HOLD_GIL_LINE)
CALL=$(line MAIN_CALL_LINE)

check() {	# name python [seconds]
	name=$1 py=$2 secs=${3:-1}
	if [ ! -x "$py" ]; then
		skip "$name" "no $py"
		return
	fi
	"$IG" run -q -o "$TMP/$name.igrec" -- "$py" "$SCRIPT" "$secs" 2> "$TMP/err"
	is "$?" 0 "$name: traced"
	"$IG" report --dump "$TMP/$name.igrec" > "$TMP/dump" 2> "$TMP/err"
	is "$?" 0 "$name: replayed"
	/usr/bin/python3 - "$TMP/dump" "$SCRIPT" "$READ" "$GIL" "$CALL" <<'PY'
import re, sys
dump, script, read, gil, call = sys.argv[1:]
stacks = []
for l in open(dump):
    w = l.split(" ", 2)
    if len(w) > 2 and w[1] == "pystack" and " stack=" in l:
        stacks.append(l.split(" stack=", 1)[1].rstrip("\n").split(" <- "))
def has(pred):
    return any(pred(s) for s in stacks)
reader = "worker_read (%s:%s)" % (script, read)
holder = "hold_gil (%s:%s)" % (script, gil)
ok = [has(lambda s: s[0] == reader),
      has(lambda s: s[0] == reader and len(s) > 1 and
          re.match(r"(Thread\.)?run \(.*threading\.py:\d+\)$", s[1])),
      has(lambda s: s[0] == holder),
      has(lambda s: s[0].startswith("hold_gil (") and len(s) > 1 and
          s[1] == "main (%s:%s)" % (script, call))]
unread = sum(1 for s in stacks for f in s if f.startswith("? "))
print("R" if ok[0] and ok[1] else "r", "G" if ok[2] and ok[3] else "g",
      len(stacks), unread)
PY
} > "$TMP/res"

for v in 3.9 3.10 3.11 3.12 3.13; do
	py=$(ls -d /root/.pyenv/versions/$v.*/bin/python3 2>/dev/null | head -1)
	check "$v" "${py:-/root/.pyenv/versions/$v/bin/python3}"
	cat "$TMP/res" | grep -v '^[RrGg] ' || true
	set -- $(tail -1 "$TMP/res")
	[ -x "${py:-/nonexistent}" ] || continue
	is "$1" R "$v: worker_read (stacks.py:$READ) under threading's run"
	is "$2" G "$v: hold_gil (stacks.py:$GIL) called from main (stacks.py:$CALL)"
	diag "$v: $3 stacks with frames, $4 frames unnamed"
done
# the free-threaded fixture (make free-threaded: CPython 3.14 built with
# --disable-gil): each thread runs its own copy of the bytecode
FT=$IG_TOP/build/freethreaded/py314t/bin/python3.14t
if [ -f "$IG_TOP/build/freethreaded/ok" ]; then
	# 4 s: its start is slower, and names are read while the process lives
	check "3.14t" "$FT" 4
	cat "$TMP/res" | grep -v '^[RrGg] ' || true
	set -- $(tail -1 "$TMP/res")
	is "$1" R "3.14t (free-threaded): worker_read (stacks.py:$READ) under threading's run"
	is "$2" G "3.14t (free-threaded): hold_gil (stacks.py:$GIL) called from main (stacks.py:$CALL)"
	diag "3.14t: $3 stacks with frames, $4 frames unnamed"
else
	skip "3.14t" "no free-threaded CPython in build/freethreaded (make free-threaded)"
fi
check "debian-3.11" /usr/bin/python3.11
cat "$TMP/res" | grep -v '^[RrGg] ' || true
if [ -x /usr/bin/python3.11 ]; then
	set -- $(tail -1 "$TMP/res")
	is "$1" R "Debian 3.11: worker_read (stacks.py:$READ) under threading's run"
	is "$2" G "Debian 3.11: hold_gil (stacks.py:$GIL) called from main"
fi
done_testing

#!/bin/sh
# Stacks tied to each cause's time, on every CPython here (pyenv 3.9-3.13,
# Debian's 3.11) with tools/trainsim.py: the JSON names the function that
# held the GIL (gil: holder), that read (storage: blocked), that faulted
# (page_fault: blocked), that waited for a mutex and held it (lock: waiter
# and holder), and for a DataLoader-like job the feeder's wait for a batch
# (storage: waiter) and the forked worker's read (blocked); replaying the
# recording gives the same stacks; the native loader of build/trainsim
# names read_file/read_sample.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$IG" ] || skip_all "build first: make all"
trap 'rm -rf "$TMP"' EXIT
export LD_LIBRARY_PATH="$IG_TOP/build/simgpu"

# file cause role function: does a stack of (cause, role) name function?
names() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
path, cause, role, fn = sys.argv[1:]
d = json.load(open(path))
hit = [x for c in d["causes"] if c["cause"] == cause for x in c["details"]
       if x.get("kind") == "stack" and x["role"] == role and
       any(f.startswith(fn + " (") for f in x["frames"])]
print("yes" if hit else "no")
PY
}

# what a run found, for a failure's log: causes, lost records, top stacks
explain() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["events"]
print("stacks.t: dropped %s, user lost %s, by type %s" % (e["dropped"], e["user_lost"], e["by_type"]))
for c in d["causes"]:
    print("stacks.t: %s %.3f s" % (c["cause"], c.get("seconds", 0)))
    for x in [x for x in c["details"] if x.get("kind") == "stack"][:6]:
        print("stacks.t:   %s %.3f s %s" % (x["role"], x["seconds"],
                                          " <- ".join(x["frames"][:4])))
PY
}

stacks_of() {
	/usr/bin/python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(json.dumps([[c["cause"], x] for c in d["causes"] for x in c["details"] if x.get("kind") == "stack"]))' "$1"
}

top_cause() {
	json "$1" 'max(j["causes"], key=lambda c: c["seconds"])["cause"]'
}

# traced python scenario cause role function...: "yes" when every (role,
# function) is named; the run's status in $rc
traced() {
	py=$1 sc=$2 cause=$3
	shift 3
	"$IG" run -q --json "$TMP/$sc.json" --folded "$TMP/$sc.folded" \
		-o "$TMP/$sc.igrec" -- "$py" "$IG_TOP/tools/trainsim.py" -s "$sc" \
		-t 3 -q 2> "$TMP/err"
	rc=$?
	all=yes
	while [ $# -ge 2 ]; do
		[ "$(names "$TMP/$sc.json" "$cause" "$1" "$2")" = yes ] || all=no
		shift 2
	done
}

scenario() {	# name python scenario cause role function [role function]...
	name=$1 py=$2 sc=$3 cause=$4
	shift 4
	# once more when a stack is missing: on a small busy machine a run
	# may spend its idle time waiting for a CPU instead
	traced "$py" "$sc" "$cause" "$@"
	if [ "$rc" != 0 ] || [ "$all" != yes ]; then
		echo "# $name $sc: a stack missing, once more:"
		explain "$TMP/$sc.json" | sed 's/^/# /'
		traced "$py" "$sc" "$cause" "$@"
	fi
	is "$rc" 0 "$name $sc: traced"
	while [ $# -ge 2 ]; do
		r=$(names "$TMP/$sc.json" "$cause" "$1" "$2")
		is "$r" yes "$name $sc: $cause $1 stack names $2"
		[ "$r" = yes ] || explain "$TMP/$sc.json" >&2
		shift 2
	done
	"$IG" report -q --json "$TMP/$sc.r.json" "$TMP/$sc.igrec" 2> "$TMP/err"
	is "$(stacks_of "$TMP/$sc.r.json")" "$(stacks_of "$TMP/$sc.json")" \
		"$name $sc: replay gives the same stacks"
	ok "$name $sc: folded stacks under $cause" grep -q "^$cause;" "$TMP/$sc.folded"
}

check() {	# name python
	if [ ! -x "$2" ]; then
		skip "$1" "no $2"
		return
	fi
	scenario "$1" "$2" gil gil holder gil_hog
	scenario "$1" "$2" storage storage blocked read_batch
	scenario "$1" "$2" pagefault page_fault blocked touch_batch
	scenario "$1" "$2" lock lock waiter take_lock holder hold_lock
	# the holder works without the GIL: the feeder waits for the mutex only
	is "$(top_cause "$TMP/lock.json")" lock "$1 lock: lock is the largest cause"
	scenario "$1" "$2" loader storage blocked load_sample waiter next_batch
}

for v in ${IG_PYVERSIONS:-3.9 3.10 3.11 3.12 3.13}; do
	py=$(ls -d /root/.pyenv/versions/$v.*/bin/python3 2>/dev/null | head -1)
	check "$v" "${py:-/root/.pyenv/versions/$v/bin/python3}"
done
check debian-3.11 /usr/bin/python3.11

# native: the C loader's read
"$IG" run -q --json "$TMP/native.json" -- "$IG_TOP/build/trainsim" -s storage \
	-n 100 2> "$TMP/err"
is "$?" 0 "native storage: traced"
r=$(names "$TMP/native.json" storage blocked read_file)
[ "$r" = yes ] || r=$(names "$TMP/native.json" storage blocked read_sample)
is "$r" yes "native storage: blocked stack names read_file or read_sample"
done_testing

#!/bin/sh
# The current stack in a container: a Debian forky root (build/forky, made
# by `make forky-root`: python3.14, python3-torch 2.14, python3.15 from
# unstable) run by tests/forky/container.sh (own mount namespace,
# pivot_root), traced from the host.  On 3.14: the GIL, storage and
# page-fault loops of tools/trainsim.py give their cause, with Python frames
# naming the loop's function and a line inside it, by run, attach and the
# agent; a torch DataLoader job (tools/torchloader.py: 2 workers started by
# 3.14's forkserver) gives storage, its blocked stack in a worker in
# ColdFiles.__getitem__; check -p names the build.  On 3.15: frames from
# its published offsets, or one line saying why not.  Needs root and the
# cached root (SKIP otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib/prom.sh"
need_root
[ -x "$IG" ] || skip_all "build first: make all"
R=$IG_TOP/build/forky/root
[ -f "$IG_TOP/build/forky/ok" ] || skip_all "no Debian forky root in build/forky (make forky-root)"
[ -x "$IG_TOP/build/simgpu/libcuda.so.1" ] || [ -f "$IG_TOP/build/simgpu/libcuda.so.1" ] ||
	skip_all "build first: make all"
command -v unshare > /dev/null && command -v pivot_root > /dev/null ||
	skip_all "no unshare or pivot_root (util-linux)"
AGENT=
cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	[ -n "${JOB:-}" ] && kill "$JOB" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
C=$IG_TOP/tests/forky/container.sh
# CMD...: in the container, on the simulated GPU (the tree is at /ig)
in_box() { env LD_LIBRARY_PATH=/ig/build/simgpu "$C" "$R" "$@"; }

# stacks JSON CAUSE ROLE FUNCTION: "yes" when a stack of (CAUSE, ROLE) has a
# frame FUNCTION (/ig/tools/FILE:LINE) with LINE inside FUNCTION's body
stacks() {
	/usr/bin/python3 - "$IG_TOP/tools" "$@" <<'PY'
import ast, json, re, sys
tools, path, cause, role, fn = sys.argv[1:]
span = {}
for f in ("trainsim.py", "trainsim_work.py", "torchloader.py"):
    for n in ast.walk(ast.parse(open("%s/%s" % (tools, f)).read())):
        if isinstance(n, ast.ClassDef):
            for m in n.body:
                if isinstance(m, ast.FunctionDef):
                    span["%s.%s" % (n.name, m.name)] = (f, m.lineno, m.end_lineno)
        if isinstance(n, ast.FunctionDef):
            span.setdefault(n.name, (f, n.lineno, n.end_lineno))
f, lo, hi = span[fn]
pat = re.compile(r"^%s \(/ig/tools/%s:(\d+)\)$" % (re.escape(fn), re.escape(f)))
d = json.load(open(path))
ok = any(m and lo <= int(m.group(1)) <= hi
         for c in d["causes"] if c["cause"] == cause for x in c["details"]
         if x.get("kind") == "stack" and x["role"] == role
         for m in map(pat.match, x["frames"]))
print("yes" if ok else "no")
PY
}
causes() { json "$1" '" ".join("%s=%.2f" % (c["cause"], c["seconds"]) for c in j["causes"])'; }

# --- 3.14 by run: GIL, storage, page faults ---------------------------------
scenario() {	# python scenario cause role function
	py=$1 sc=$2 cause=$3 role=$4 fn=$5
	for try in 1 2; do	# once more on a busy machine (CPU waits instead)
		"$IG" run -q --json "$TMP/$py-$sc.json" -- env LD_LIBRARY_PATH=/ig/build/simgpu \
			"$C" "$R" "$py" /ig/tools/trainsim.py -s "$sc" -t 3 -q 2> "$TMP/err"
		rc=$?
		r=$(stacks "$TMP/$py-$sc.json" "$cause" "$role" "$fn")
		[ "$rc" = 0 ] && [ "$r" = yes ] && break
		diag "$py $sc: try $try: exit $rc, causes $(causes "$TMP/$py-$sc.json")"
	done
	is "$rc" 0 "$py $sc in the container: traced by run"
	is "$r" yes "$py $sc: $cause $role stack names $fn with a line inside it"
}
scenario python3.14 gil gil holder gil_hog
scenario python3.14 storage storage blocked read_batch
scenario python3.14 pagefault page_fault blocked touch_batch
ok "python3.14: no warning of unread Python frames" -- \
	sh -c "! grep -q 'without Python frames' '$TMP/err'"

# --- 3.14 by attach, and check -p --------------------------------------------
in_box python3.14 /ig/tools/trainsim.py -s gil -n 1000000 -t 40 -q &
JOB=$!
# the job's python: the one in another mount namespace
boxed() {
	for p in $(pgrep -x python3.14); do
		[ "$(readlink /proc/$p/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] &&
			echo $p && return
	done
}
i=0
until pid=$(boxed); [ -n "$pid" ] || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 2
"$IG" check -p "$pid" > "$TMP/check.txt" 2>&1
ok "check -p names the build: 3.14, with the GIL, frames by its offsets" -- \
	grep -q "Python build.*3\.14\.[0-9]* with the GIL.*published debug offsets" "$TMP/check.txt"
for try in 1 2; do
	"$IG" attach -p "$pid" -d 3 --json "$TMP/attach.json" > /dev/null 2> "$TMP/err"
	rc=$?
	r=$(stacks "$TMP/attach.json" gil holder gil_hog)
	[ "$rc" = 0 ] && [ "$r" = yes ] && break
done
is "$rc" 0 "python3.14 gil: attach exits 0"
is "$r" yes "python3.14 gil by attach: the holder's stack names gil_hog with its line"

# --- 3.14 by the agent -------------------------------------------------------
PORT=$(prom_free_port)
start_agent "$TMP/agent.out" --listen 127.0.0.1:$PORT --window 2 --every 2 --reports "$TMP/rep"
sleep 7
stop_agent
kill $JOB 2>/dev/null; wait $JOB 2>/dev/null; JOB=
named=no
for f in "$TMP"/rep/*.json; do
	[ -f "$f" ] && [ "$(stacks "$f" gil holder gil_hog)" = yes ] && named=yes
done
is "$named" yes "python3.14 gil by the agent: a window's holder stack names gil_hog"

# --- torch 2.14's DataLoader, workers by forkserver ---------------------------
# --libcuda: the same file as the job's /ig/build/simgpu/libcuda.so.1, probed
# before it starts; found in the maps instead, it is probed late or not at
# all while idlegap names torch's 300 MB libraries (its loop is behind)
"$IG" run -q --json "$TMP/torch.json" -o "$TMP/torch.igrec" -- \
	env LD_LIBRARY_PATH=/ig/build/simgpu \
	"$C" "$R" python3.14 /ig/tools/torchloader.py -t 8 > "$TMP/torch.out" 2> "$TMP/err"
is "$?" 0 "torch DataLoader in the container: traced"
ok "torch 2.14 on 3.14, workers started by forkserver" -- \
	grep -q "torch 2\.14.*start method forkserver, 2 workers" "$TMP/torch.out"
is "$(stacks "$TMP/torch.json" storage blocked ColdFiles.__getitem__)" yes \
	"torch: the storage cause's blocked stack names ColdFiles.__getitem__ with its line"
"$IG" report --dump "$TMP/torch.igrec" > "$TMP/torch.dump" 2> /dev/null
pychecks "$TMP/torch.json" "$TMP/torch.dump" <<'PY'
import json, re, sys
from tap import check
d = json.load(open(sys.argv[1]))
procs = {p["pid"]: p for p in d["processes"]}
main = [p["pid"] for p in d["processes"] if p["launches"]]
getitem = set()
for l in open(sys.argv[2]):
    if " pystack " in l and "ColdFiles.__getitem__ (" in l:
        getitem.add(int(re.search(r" pid=(\d+)", l).group(1)))
check(main and getitem and main[0] not in getitem,
      "__getitem__ runs in worker processes, not the training loop's",
      "main %s, __getitem__ in %s" % (main, getitem))
par = {p: procs[p]["ppid"] for p in getitem if p in procs}
check(par and all(q != main[0] and q in procs and procs[q]["ppid"] == main[0]
                  for q in par.values()),
      "the workers are children of the fork server, a child of the main process",
      "workers and parents %s" % par)
check(all(procs[p]["python"] for p in par), "the workers are Python from their start")
PY

# --- 3.15: frames by its published offsets, or one line why not ---------------
if [ -x "$R/usr/bin/python3.15" ]; then
	"$IG" run -q --json "$TMP/315.json" -- env LD_LIBRARY_PATH=/ig/build/simgpu \
		"$C" "$R" python3.15 /ig/tools/trainsim.py -s gil -t 3 -q 2> "$TMP/err"
	is "$?" 0 "python3.15 gil: traced"
	r=$(stacks "$TMP/315.json" gil holder gil_hog)
	n=$(grep -c 'without Python frames' "$TMP/err")
	ok "python3.15: Python frames (gil_hog: $r), or one line why not ($n)" -- \
		test "$r" = yes -o "$n" = 1
	diag "python3.15 ($(cat "$IG_TOP/build/forky/py315/version" 2>/dev/null)): frames $r"
else
	skip "python3.15" "not in the root ($(cat "$IG_TOP/build/forky/py315.ver" 2>/dev/null))"
fi
done_testing

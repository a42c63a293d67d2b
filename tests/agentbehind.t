#!/bin/sh
# The agent's reader behind the kernel (docs/design.md §7.10): a job is
# followed in a 10 s window; the agent is stopped for 3 s while a second
# job maps libcuda and starts its work.  At its resume the agent looks at
# the cgroup's processes (finding the second job, which it follows) before
# it has read that job's first libcuda mapping from the ring buffer, 3 s
# of records behind.  That mapping, read late, must not make the job one
# the agent does not follow yet: the window reports its device and its
# launches.
. "$(dirname "$0")/lib.sh"
need_root
need_ranks_build
CG=$(cgroup_root)
[ -d "$CG" ] || skip_all "no cgroup v2 hierarchy"
JOB=/idlegap-agentbehind-$$
mkdir "$CG$JOB" 2>/dev/null || skip_all "cannot make a cgroup under $CG"
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu SIMGPU_DEVICES=2

AGENT= PA= PB=
cleanup() {
	[ -n "$AGENT" ] && kill -CONT "$AGENT" 2>/dev/null && kill "$AGENT" 2>/dev/null &&
		wait "$AGENT" 2>/dev/null
	for p in $PA $PB; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rmdir "$CG$JOB" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
# in the test's cgroup, its pid in FILE: job FILE ARGS...
job() {
	sh -c 'echo $$ > "$1/cgroup.procs" && echo $$ > "$2" && shift 2 && exec "$@"' \
		job "$CG$JOB" "$@" &
}
job "$TMP/a.pid" "$TS" -s healthy -n 4000 -k 4 -d 500 > "$TMP/a.out" 2>&1
wait_until 10 test -s "$TMP/a.pid"
PA=$(cat "$TMP/a.pid")
sleep 1
start_agent "$TMP/ag.out" --cgroup "$JOB" --listen 127.0.0.1:0 --window 10 --every 10 \
	--reports "$TMP/r"
ok "the agent starts" -- grep -q 'agent: metrics on port' "$TMP/ag.out"
sleep 2.5
kill -STOP "$AGENT"
sleep 1
CUDA_VISIBLE_DEVICES=1 job "$TMP/b.pid" "$TS" -s healthy -n 2000 -k 4 -d 500 > "$TMP/b.out" 2>&1
sleep 2
kill -CONT "$AGENT"
PB=$(cat "$TMP/b.pid")
# the window open at the resume ends (10 s after the agent's start)
wait_until 20 sh -c 'ls "$1"/*.json > /dev/null 2>&1' - "$TMP/r"
kill "$AGENT"; wait "$AGENT"; rc=$?; AGENT=
is "$rc" 0 "the agent exits 0 on SIGTERM"

pychecks "$TMP/r" "$PA" "$PB" <<'PY'
import glob, json, sys
from tap import check
rdir, pa, pb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
reps = [json.load(open(f)) for f in sorted(glob.glob(rdir + "/*.json"))]
if not check(reps, "a window's report"):
    sys.exit(0)
j = reps[0]
procs = {p["pid"]: p for p in j["processes"]}
for name, pid, dev in (("the first job", pa, 0), ("the job started while the agent was stopped", pb, 1)):
    p = procs.get(pid, {})
    check(p.get("launches", 0) > 0,
          "%s: followed in the window, with its launches (%s)" % (name, p.get("launches")))
    check(p.get("device") == dev, "%s: on GPU %d (%s)" % (name, dev, p.get("device")))
    check(any(d["device"] == dev and d["busy_s"] > 0 for d in j["gpu"]["devices"]),
          "%s: GPU %d has a device entry, busy" % (name, dev))
ev = j["events"]
check(not ev["evidence_lost"], "no evidence lost (dropped %s, of which late %s; ring full %s)" % (
    ev["dropped"], ev["user_lost"], ev["kernel"]["drops"]))
PY
done_testing

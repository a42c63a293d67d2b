#!/bin/bash
# guest.sh: runs inside the test VM (run-vm.sh), as root, with the host's / read-only and /tmp an
# ext4 disk; IG_TOP (kernel command line igtop=) is the source tree.  Writes under /mnt/out:
# check.txt and check.rc (idlegap check), then per job NAME.json (the report), NAME.err,
# NAME.rc and NAME.truth.json (the job's accounting of its threads, storage, gil, pagefault), the verifier's per-program counts (verified.txt), and summary.json: check's verdict,
# whether each run started, and the first causes.
set -u
OUT=/mnt/out
IG_TOP=$(sed -n 's/.* igtop=\([^ ]*\).*/\1/p' /proc/cmdline)
[ -n "$IG_TOP" ] || IG_TOP=$(cd "$(dirname "$0")/../.." && pwd)
IG=$IG_TOP/build/idlegap
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
export TMPDIR=/tmp
cd /tmp
uname -r > $OUT/kernel
HANG=$(sed -n 's/.* ighang=\([^ ]*\).*/\1/p' /proc/cmdline)
mkdir -p $OUT/steps
# SysRq dumps (w, l, t) from the host's watchdog (tests/kernels/vmwatch.py) through the
# monitor's keyboard: the kernel's default mask leaves them out
echo 1 > /proc/sys/kernel/sysrq
# block IO delay per thread for the jobs' truth (the oracle kernels.t judges causes by): a
# switch from 5.14 on, off by default; before, counted unless booted with nodelayacct
[ -w /proc/sys/kernel/task_delayacct ] && echo 1 > /proc/sys/kernel/task_delayacct
# Progress lines for the host's watchdog: every 10 s, the CPU time the running step's own tasks
# used (its cgroup, $CG; the verifier's work in the kernel counts), when it is 20 ms or more.  A
# step asleep for good or blocked in the kernel makes none, and the host stops the VM after 120 s without one (tests/kernels/vmwatch.py);
# this loop's own work (forks under TCG) is not counted.  Every 120 s, the tasks not running or
# sleeping interruptibly and the kernel's list of blocked tasks.
CG=/sys/fs/cgroup/igstep
mkdir -p $CG 2>/dev/null || CG=
cpu_usec() { local k v; while read -r k v; do [ "$k" = usage_usec ] && { echo $v; return; }; done < $CG/cpu.stat; echo 0; }
(n=0 idle=0; u0=$(cpu_usec)
while sleep 10; do
	u1=$(cpu_usec); d=$(( (u1 - u0) / 1000 )); u0=$u1
	if [ -z "$CG" ] || [ $d -ge 20 ]; then echo "GUEST-PROGRESS step used ${d} ms of CPU time"; idle=0
	else echo "GUEST-IDLE step used ${d} ms of CPU time"; idle=$((idle + 1)); fi
	# 100 s idle: the guest dumps its own tasks, before the host's watchdog stops it
	[ $idle = 10 ] && echo w > /proc/sysrq-trigger && echo t > /proc/sysrq-trigger
	n=$((n + 1))
	[ $((n % 12)) = 0 ] || continue
	echo "GUEST: $(cut -d' ' -f1 /proc/uptime)s: $(ps -eo pid,stat,wchan:32,args --no-headers |
		awk '$2 !~ /^[RSI]/' | head -20 | tr '\n' ';')"
	echo w > /proc/sysrq-trigger
done) > /dev/console 2>&1 &
watchdog=$!
# step NAME FUNCTION: runs a step of this script once: a step done before the VM was restarted
# (a retry after a stuck step, tests/kernels.t) is not run again.  ighang=NAME on the kernel
# command line plants a hang in step NAME: it sleeps for good (the watchdog's own check).
step() {
	if [ -e $OUT/steps/$1.done ]; then
		echo "GUEST-STEP skip $1: done before a restart" > /dev/console
		return 0
	fi
	echo "GUEST-STEP start $1 at $(cut -d' ' -f1 /proc/uptime)s" > /dev/console
	# the step's tasks in the cgroup the progress lines measure; the script goes back after
	[ -n "$CG" ] && echo $BASHPID > $CG/cgroup.procs
	[ "$HANG" = "$1" ] && { echo "GUEST: a hang planted in $1" > /dev/console; sleep infinity; }
	"$2"
	[ -n "$CG" ] && echo $BASHPID > /sys/fs/cgroup/cgroup.procs
	touch $OUT/steps/$1.done
	echo "GUEST-STEP done $1 at $(cut -d' ' -f1 /proc/uptime)s" > /dev/console
}
# check: its verdict is what run must agree with
step_check() {
	$IG check > $OUT/check.txt 2>&1; echo $? > $OUT/check.rc
	$IG check -v > $OUT/check-v.txt 2>&1
	grep -E 'debug: program .* instructions' $OUT/check-v.txt | sed 's/.*program //' > $OUT/verified.txt
}
step check step_check

# job NAME -- COMMAND...: idlegap run with a JSON report
job() {
	local name=$1; shift; shift
	timeout 600 $IG run --no-nvml --json $OUT/$name.json -- "$@" > $OUT/$name.out 2> $OUT/$name.err
	echo $? > $OUT/$name.rc
}
# storage: cold reads from the (throttled) data disk
step_storage() {
	job storage -- $IG_TOP/build/trainsim -s storage --data /tmp/data --data-mb 8 -n 12 -t 300 -q \
		--truth $OUT/storage.truth.json
}
step storage step_storage
# GIL: a Python feeder and many threads that hold the GIL; its stacks named
step_gil() { job gil -- /usr/bin/python3 $IG_TOP/tools/trainsim.py -s gil -n 12 -t 300 --threads 6 -q \
	--truth $OUT/gil.truth.json; }
step gil step_gil
# page faults: cold mmap'd samples
step_pagefault() {
	job pagefault -- $IG_TOP/build/trainsim -s pagefault --data /tmp/pf --data-mb 8 -n 10 -t 300 -q \
		--truth $OUT/pagefault.truth.json
}
step pagefault step_pagefault
# attach to a running GPU process: libcuda found in its maps and probed
step_attach() {
	# it runs until the attach is over (killed then): a slow guest starts idlegap late
	$IG_TOP/build/trainsim -s healthy -n 100000 -t 900 -q > /dev/null 2>&1 &
	tpid=$!
	sleep 3
	timeout 120 $IG attach -p $tpid -d 6 --no-nvml --json $OUT/attach.json > $OUT/attach.out 2> $OUT/attach.err
	echo $? > $OUT/attach.rc
	kill $tpid 2>/dev/null; wait $tpid
}
step attach step_attach

# the agent: its discovery finds a GPU job started after it, and a window report names it
step_agent() {
rm -rf /tmp/agent-reports
mkdir -p /tmp/agent-reports
$IG agent --listen 127.0.0.1:9477 --window 3 --every 3 --reports /tmp/agent-reports \
	> $OUT/agent.out 2> $OUT/agent.err &
apid=$!
sleep 3
$IG_TOP/build/trainsim -s healthy -n 100000 -t 900 -q > /dev/null 2>&1 &
tpid=$!
i=0
# found, or 300 s (the job runs until then)
until grep -qs "\"pid\": *$tpid\b" /tmp/agent-reports/*.json || [ $i -ge 300 ] ||
	! kill -0 $apid 2>/dev/null; do
	sleep 1; i=$((i + 1))
done
echo $i > $OUT/agent.wait
kill $tpid 2>/dev/null
kill -TERM $apid
# an agent must end on SIGTERM (a DaemonSet's pod is killed after its grace period): one still
# there after 180 s is killed, and where its threads wait in the kernel is kept (agent.stuck)
i=0
while [ -d /proc/$apid ] && [ "$(cut -d' ' -f3 /proc/$apid/stat 2>/dev/null)" != Z ] && [ $i -lt 180 ]; do
	sleep 1; i=$((i + 1))
	# a wait bounded here: progress for the host's watchdog
	[ $((i % 10)) = 0 ] && echo "GUEST-PROGRESS agent: waiting for its exit, $i s" > /dev/console
done
if [ $i -ge 180 ]; then
	for t in /proc/$apid/task/*; do
		echo "thread $(cat $t/comm) wchan $(cat $t/wchan)"; cat $t/stack
	done > $OUT/agent.stuck 2>&1
	kill -KILL $apid
fi
wait $apid; echo $? > $OUT/agent.rc
echo $i > $OUT/agent.exit_s
f=$(grep -ls "\"pid\": *$tpid\b" /tmp/agent-reports/*.json | head -1)
[ -n "$f" ] && cp "$f" $OUT/agentwin.json
echo $tpid > $OUT/agent.tpid
}
step agent step_agent
kill $watchdog; wait

python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def rd(p, d=""):
    try: return open(os.path.join(out, p)).read().strip()
    except OSError: return d
s = {"kernel": rd("kernel"), "check_rc": int(rd("check.rc", "-1")),
     "check_summary": rd("check.txt").splitlines()[-1:] or [""], "jobs": {}}
s["check_summary"] = s["check_summary"][0]
s["check_object"] = next((l.split(None, 2)[-1] for l in rd("check.txt").splitlines()
                          if "BPF object" in l), "")
s["verified"] = rd("verified.txt").splitlines()
for name in ("storage", "gil", "pagefault", "attach"):
    j = {"rc": int(rd(name + ".rc", "-1")), "err_tail": rd(name + ".err").splitlines()[-3:]}
    try:
        r = json.load(open(os.path.join(out, name + ".json")))
        c = r.get("causes") or []
        j["causes"] = [(x["cause"], round(x["share"], 3)) for x in c]
        j["processes"] = len(r.get("processes") or [])
        j["files"] = sorted({d.get("file") for x in c for d in x.get("details", [])
                             if d.get("kind") == "file"})[:5]
        j["py_frames"] = "trainsim.py" in json.dumps(r)
        j["block_reads"] = sum(b.get("reads", 0) for b in r.get("block") or [])
    except Exception as e:
        j["report_error"] = str(e)
    s["jobs"][name] = j
a = {"rc": int(rd("agent.rc", "-1")), "wait_s": int(rd("agent.wait", "-1")),
     "exit_s": int(rd("agent.exit_s", "-1")), "err_tail": rd("agent.err").splitlines()[-3:]}
if rd("agent.stuck"):
    a["stuck"] = rd("agent.stuck").splitlines()[:60]
try:
    r = json.load(open(os.path.join(out, "agentwin.json")))
    a["found"] = any(p.get("pid") == int(rd("agent.tpid", "0")) for p in r.get("processes", []))
except Exception as e:
    a["found"] = False
    a["report_error"] = str(e)
s["agent"] = a
json.dump(s, open(os.path.join(out, "summary.json"), "w"), indent=1)
PY
echo "guest.sh done"

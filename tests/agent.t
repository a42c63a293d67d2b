#!/bin/sh
# `idlegap agent` end to end, as root:
#  A. on a duty cycle of 3 s every 3 s, scraped by Debian's Prometheus,
#     while trainsim scenarios run in a Kubernetes-shaped cgroup with Slurm
#     and torchrun variables: idle seconds read back through Prometheus's
#     API match the simulator's truth (within the windows the agent traced)
#     within 10%, the scenario's cause leads, the workload labels are
#     there, and `promtool check metrics` passes on the live exposition;
#  B. 1 s every 2 s, no --libcuda: a job in another mount namespace is
#     found, so is a Python job that loads libcuda late, no uprobe is
#     attached between windows, 2000 libcuda users
#     come and go with the agent's memory flat, --reports stays bounded,
#     and SIGTERM ends it at once with none of its BPF objects left;
#  C. continuous 1 s windows: every window names a Python job's code;
#     two containers' jobs that each call their own GPU 0 are two GPUs,
#     each with its own labels;
#  D. bad input: one line, non-zero exit;
#  E. without NVML (libnvidia-ml.so.1 not where the agent's loader looks),
#     3 s every 3 s, a Python storage job that dlopens the simulated
#     libcuda after the agent started (its context's creation not seen):
#     one line says NVML cannot be loaded, the job is on /metrics under
#     gpu="unknown" with its pid and comm (never gpu="0"), its proven
#     idle and its idle with the unresolved time bracketing the
#     simulator's truth over the windows within 5% (less the idle a
#     loaded VM hid by delaying the simulated GPU's ends), storage
#     first (or a CPU, where the kernel's accounting says it waited for
#     one, as in A), and it is counted in each window's
#     gpu_processes.unknown_device and in
#     idlegap_gpu_processes_unknown_device_total.
# Other GPU processes on the host are found too: part A gives the agent
# its own copy of libcuda (--libcuda) so that only its jobs produce GPU
# records, and every query names the job's labels.
. "$(dirname "$0")/lib.sh"
. "$IG_TOP/tests/lib/prom.sh"
need_root
TS=$IG_TOP/build/trainsim
SIM=$IG_TOP/build/simgpu/libcuda.so.1
FAKE=$IG_TOP/build/tests/fakecuda
[ -x "$TS" ] && [ -f "$SIM" ] || skip_all "build first: make all"
[ -x "$FAKE/fakecuda_app" ] || skip_all "build first: make test-progs"
command -v "$PROMETHEUS" > /dev/null || skip_all "no prometheus (Debian: prometheus)"
command -v promtool > /dev/null || skip_all "no promtool (Debian: prometheus)"
command -v curl > /dev/null || skip_all "no curl"
command -v unshare > /dev/null || skip_all "no unshare (util-linux)"

AGENT=
cleanup() {
	delayacct_restore
	prom_stop
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	[ -n "${POD:-}" ] && rmdir "$POD" "${POD%/*}" "${POD%/*/*}" 2>/dev/null
	[ -n "${CGE:-}" ] && rmdir "$CGE" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
delayacct_on	# for the oracle on the scenarios' causes
free_port() { prom_free_port; }

# --- A: Prometheus, truth, labels -------------------------------------------
mkdir -p "$TMP/lib" "$TMP/reports"
cp "$SIM" "$TMP/lib/"
PUID=$(cat /proc/sys/kernel/random/uuid)
CID=$(cat /proc/sys/kernel/random/uuid /proc/sys/kernel/random/uuid | tr -d -- '-\n')
CG=$(cgroup_root)
POD=$CG/kubepods.slice/kubepods-pod$(echo "$PUID" | tr - _).slice/cri-containerd-$CID.scope
mkdir -p "$POD" 2>/dev/null || POD=
# containerd's record of the container names its pod; the job's own
# HOSTNAME (trainer-N) does not
REC=$TMP/node/run/containerd/io.containerd.runtime.v2.task/k8s.io/$CID
mkdir -p "$REC"
printf '{"annotations": {"io.kubernetes.cri.sandbox-uid": "%s", "io.kubernetes.cri.sandbox-name": "trainer-pod", "io.kubernetes.cri.sandbox-namespace": "ml"}}' \
	"$PUID" > "$REC/config.json"
JOB=$$
# storage: cold reads for the whole 4 s (the files dropped before each
# read), not only until the dataset has been read once
job_opts() { [ "$1" = storage ] && echo --buffered; }
# job SCENARIO SUFFIX: trainsim in the pod's cgroup, as rank SUFFIX of job $JOB$SUFFIX
job() {
	SIMGPU_TRACE=$TMP/$1.trace LD_LIBRARY_PATH=$TMP/lib HOSTNAME=trainer-$2 \
	SLURM_JOB_ID=$JOB$2 RANK=$2 LOCAL_RANK=$2 WORLD_SIZE=2 \
	sh -c '[ -n "$1" ] && echo $$ > "$1/cgroup.procs"; shift; exec "$@"' job "$POD" \
		"$TS" -s "$1" -t 4 -n 1000000 $(job_opts "$1") -q --truth "$TMP/$1.truth.json"
}
PORT=$(free_port)
start_agent "$TMP/a.out" --listen 127.0.0.1:$PORT --window 3 --every 3 \
	--libcuda "$TMP/lib/libcuda.so.1" --label cluster=agenttest --reports "$TMP/reports" \
	--node-root "$TMP/node"
ok "agent A starts" -- kill -0 "$AGENT"
if ! prom_start "127.0.0.1:$PORT"; then
	fail "prometheus ready"
	exit 1
fi
# one job at a time: a window's GPU series carry the labels its jobs share
job storage 1
sleep 3.5
job lock 2
sleep 3.5
ok "Prometheus scraped the agent's windows" -- prom_wait "idlegap_windows_total{cluster=\"agenttest\"} >= 3" 20
# Prometheus has every window the agent had completed by now
nwin=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^idlegap_windows_total/ { print $2; exit }')
prom_wait "idlegap_windows_total{cluster=\"agenttest\"} >= ${nwin:-3}" 20 ||
	echo "agent.t: Prometheus did not reach the agent's $nwin windows" >&2
curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/expo"
ok "promtool check metrics passes on the live /metrics" -- sh -c "promtool check metrics < '$TMP/expo'"
# truth_idle SCENARIO: the simulator's idle seconds inside the agent's
# windows, over the span the agent saw of the job's own GPU (it looks for
# jobs every second).  The agent follows every GPU process of the host:
# a window's overall span ("gpu.span_start_ns", "gpu.span_s") covers
# other jobs' GPUs too, so the job's device in "gpu.devices" bounds it.
# OTHER: the other scenario; a window whose GPU both jobs used (windows
# stretched by a starved agent) has series under the labels they share,
# no slurm_job, so it is not the job's in Prometheus either.
truth_idle() {
	/usr/bin/python3 - "$IG_TOP/tools" "$TMP/$1.trace" "$TMP/reports" "$TMP/$1.truth.json" \
		"$TMP/$2.truth.json" <<'PY'
import glob, json, sys
sys.path.insert(0, sys.argv[1]); import truth
busy = truth.merge(truth.read_traces([sys.argv[2]])[1])
feeder = json.load(open(sys.argv[4]))["pids"]["feeder"]
other = json.load(open(sys.argv[5]))["pids"]["feeder"]
idle = 0
for f in glob.glob(sys.argv[3] + "/*.json"):
    r = json.load(open(f))
    procs = [p for p in r["processes"] if p["pid"] == feeder]
    if not procs or procs[0]["device"] is None:
        continue
    dev = [d for d in r["gpu"]["devices"] if d["device"] == procs[0]["device"]]
    if not dev or dev[0].get("span_start_ns") is None or \
       any(p["pid"] == other and p["device"] == procs[0]["device"] for p in r["processes"]):
        continue
    # the first probed call of a job found mid-window starts the span
    t0 = max(dev[0]["span_start_ns"], procs[0]["first_seen_ns"])
    b = truth.clip(busy, t0, dev[0]["span_end_ns"])
    if b:
        idle += (b[-1][1] - b[0][0]) - truth.total(b)
print("%.6f" % (idle / 1e9))
PY
}
for s in storage:1:lock lock:2:storage; do
	sc=${s%%:*}; n=${s#*:}; n=${n%:*}
	want=$(truth_idle "$sc" "${s##*:}")
	got=$(prom_query "sum(idlegap_gpu_seconds_total{slurm_job=\"$JOB$n\",state=~\"idle|unresolved_.*\"})")
	ok "$sc: idle seconds in Prometheus match the truth within 10% ($got vs $want)" -- \
		/usr/bin/python3 -c "import sys; g, w = float('${got:-nan}'), float('${want:-nan}'); sys.exit(not (w > 0.2 and abs(g - w) <= 0.1 * w))" ||
		echo "agent.t: $sc: Prometheus ${got:-nothing} vs truth ${want:-nothing}; reports: $(ls "$TMP/reports" | wc -l)" >&2
	causes=$(prom_labels "topk(2, sum by (cause) (idlegap_gpu_idle_seconds_total{slurm_job=\"$JOB$n\"}))" cause | tr '\n' ' ')
	lead=$(prom_labels "topk(1, sum by (cause) (idlegap_gpu_idle_seconds_total{slurm_job=\"$JOB$n\"}))" cause)
	# the kernel's accounting of the job's feeding threads says what they
	# waited for (tools/accuracy.py): the scenario's cause, or a CPU
	set -- $(oracle "$TMP/$sc.truth.json")
	verdict=$1; shift; orc="[$*]"
	case $verdict in
	design | None)
		is "$lead" "$sc" "$sc: the scenario's cause leads in Prometheus $orc" ;;
	cpu)
		ok "$sc: the job waited for a CPU more than for $sc: cpu_starvation ($causes) leads, or $sc with cpu_starvation second $orc" -- \
			sh -c "[ '$lead' = cpu_starvation ] || { [ '$lead' = '$sc' ] && echo '$causes' | grep -qw cpu_starvation; }" ;;
	*)
		ok "$sc: the oracle cannot decide between $sc and cpu_starvation: one of them leads ($lead) $orc" -- \
			sh -c "[ '$lead' = cpu_starvation ] || [ '$lead' = '$sc' ]" ;;
	esac
	diag "$sc: idle seconds by cause: $(prom_api "sort_desc(sum by (cause) (idlegap_gpu_idle_seconds_total{slurm_job=\"$JOB$n\"}))" \
		'print(", ".join("%s %.3f" % (s["metric"]["cause"], float(s["value"][1])) for s in r))')"
done
labels=$(prom_api "idlegap_gpu_seconds_total{slurm_job=\"${JOB}1\",state=\"idle\"}" \
	'm = r[0]["metric"] if r else {}; print(" ".join("%s=%s" % (k, m.get(k, "")) for k in ("rank", "comm", "cluster", "self_reported", "pod", "pod_uid", "container", "namespace")))')
is "$(echo "$labels" | cut -d' ' -f1-4)" "rank=1 comm=trainsim cluster=agenttest self_reported=slurm_job,rank" \
	"Slurm job and rank from the environment, flagged self-reported; --label on the series"
if [ -n "$POD" ]; then
	is "$(echo "$labels" | cut -d' ' -f5-)" "pod=trainer-pod pod_uid=$PUID container=$CID namespace=ml" \
		"pod UID and container id from the cgroup path, pod and namespace from the runtime's record, not HOSTNAME"
else
	skip "pod labels from the cgroup path" "cgroup v2 not writable here"
fi
# a pid only on the series of a process whose GPU nothing placed
# (gpu="unknown": another test's job on the host, its own simulated
# machine, which this NVML does not list)
ok "no pid label but on a GPU nothing placed" -- \
	sh -c "! grep 'pid=' '$TMP/expo' | grep -v '[{,]gpu=\"unknown\",' | grep -q ."

prom_stop
stop_agent
is "$?" 0 "agent A exits 0 on SIGTERM"

# --- B: containers, the duty cycle, lifecycles, --reports, SIGTERM ----------
mkdir "$TMP/mnt"
PORT=$(free_port)
start_agent "$TMP/b.out" --listen 127.0.0.1:$PORT --window 1 --every 2 \
	--reports "$TMP/rb" --reports-keep 3 -v
ok "agent B starts" -- kill -0 "$AGENT"
# a job whose libcuda exists only in its own mount namespace; it runs until
# a window report names it (or 120 s), then is stopped: on a loaded host the
# agent may find it late
LD_LIBRARY_PATH=$TMP/mnt unshare -m --propagation private sh -c \
	'mount -t tmpfs none "$1" && cp "$2" "$1"/ && shift 2 && exec "$@"' ns "$TMP/mnt" "$SIM" \
	"$TS" -s healthy -q -t 120 &
ns_job=$!
# uprobe links of the agent, sampled: the hot path's during windows only,
# the set-up ones (libcuda's for every process of the file, the loaders')
# all the time
uprobe_links() {
	grep -l '^link_type:.*\(uprobe\|perf_event\)' /proc/$AGENT/fdinfo/* 2>/dev/null | wc -l
}
: > "$TMP/links"
# sampled while the job runs (it runs on until it is found)
for i in $(seq 40); do uprobe_links >> "$TMP/links"; sleep 0.1; done
ok "duty cycle: uprobes attached during a window ($(sort -n "$TMP/links" | tail -1) links at most)" -- \
	[ "$(sort -n "$TMP/links" | tail -1)" -gt 0 ]
lo=$(sort -n "$TMP/links" | head -1) hi=$(sort -n "$TMP/links" | tail -1)
ok "duty cycle: the hot path's uprobes are off between windows ($lo links then, $hi in a window)" -- \
	[ "$lo" -lt "$hi" ]
ns_found() {
	test ! -e "$TMP/mnt/libcuda.so.1" &&
		cat "$TMP"/rb/*.json 2>/dev/null | grep -q "\"path\": \"$TMP/mnt/libcuda.so.1\""
}
ok "a job in another mount namespace is found: its libcuda (there only) probed" -- wait_until 120 ns_found
kill $ns_job 2>/dev/null; wait $ns_job
# a Python job that dlopens libcuda (ctypes) once told to (the file $TMP/go),
# and runs until a window report names it (or 120 s)
LD_LIBRARY_PATH=$IG_TOP/build/simgpu /usr/bin/python3 -c 'import os, sys, time, runpy
end = time.monotonic() + 120
while not os.path.exists(sys.argv[2]) and time.monotonic() < end:
    time.sleep(0.05)
sys.argv = [sys.argv[1], "-s", "healthy", "-t", "120", "-q"]
runpy.run_path(sys.argv[0], run_name="__main__")' "$IG_TOP/tools/trainsim.py" "$TMP/go" &
py_job=$!
# the interpreter is up (the agent may look at it) with no libcuda yet
wait_until 60 grep -q 'libpython\|/python3' /proc/$py_job/maps
ok "the Python job has no libcuda mapped at first" -- sh -c "! grep -q libcuda /proc/$py_job/maps"
sleep 1.5	# a discovery pass or more sees it without libcuda
touch "$TMP/go"
py_found() {
	/usr/bin/python3 -c 'import glob, json, sys
def procs(f):
    try:
        return json.load(open(f))["processes"]
    except (OSError, ValueError):	# rotated away, or being written
        return []
sys.exit(not any(p["pid"] == int(sys.argv[2]) and p["python"] and p["launches"] > 0
                 for f in glob.glob(sys.argv[1] + "/*.json") for p in procs(f)))' "$TMP/rb" $py_job
}
ok "the Python job that loaded libcuda late is found, traced as Python" -- wait_until 120 py_found
kill $py_job 2>/dev/null; wait $py_job
# 2000 libcuda users come and go under a followed parent that maps libcuda
# its heap: what it keeps per process (the ring buffer's pages, mapped,
# come and go with how far behind it reads on a loaded host)
rss() { awk '/^RssAnon/ { print $2 }' /proc/$AGENT/status; }
lifecycles() {
	LD_PRELOAD=$FAKE/libcuda.so.1 sh -c 'sleep 2.2; i=0; while [ $i -lt $1 ]; do
		"$2" 1 0 > /dev/null; i=$((i + 1)); done' lc "$1" "$FAKE/fakecuda_app"
}
lifecycles 300
rss0=$(rss)
lifecycles 1000 &
lc=$!
lifecycles 1000
wait $lc
rss1=$(rss)
diag "agent heap (RssAnon): $rss0 KiB after 300 processes, $rss1 KiB after 2300"
gone=$(grep -c '^idlegap: debug: pid [0-9]* ended' "$TMP/b.out")
ok "the agent followed and forgot the short-lived processes ($gone)" -- [ "$gone" -ge 1500 ]
ok "memory flat through 2000 process lifecycles ($rss0 -> $rss1 KiB)" -- [ $((rss1 - rss0)) -lt 4096 ]
n=$(ls "$TMP/rb" | wc -l)
ok "--reports-keep 3: $n window reports kept, the newest" -- [ "$n" -eq 3 ]
is "$(stat -c %a "$TMP"/rb/* | sort -u)" 600 "window reports are 0600"
ids() { cat /proc/$AGENT/fdinfo/* 2>/dev/null | sed -n "s/^$1_id:[[:space:]]*//p" | sort -n | tr '\n' ' '; }
progs=$(ids prog); links=$(ids link)
t0=$(date +%s.%N)
stop_agent
rc=$?
t1=$(date +%s.%N)
stop_s=$(/usr/bin/python3 -c "print('%.2f' % ($t1 - $t0))")
is "$rc" 0 "SIGTERM: exit 0"
# well within a pod's 30 s grace period, on a loaded host too
ok "SIGTERM: stopped within 10 s (${stop_s} s)" -- /usr/bin/python3 -c "import sys; sys.exit($stop_s > 10)"
left=
if command -v bpftool > /dev/null; then
	# the kernel frees them after the last reference goes, once a grace
	# period has passed: later on a loaded host
	bpf_gone() {
		left=
		for p in $progs; do bpftool prog show id "$p" > /dev/null 2>&1 && left="$left prog $p"; done
		for l in $links; do bpftool link show id "$l" > /dev/null 2>&1 && left="$left link $l"; done
		[ -n "$progs" ] && [ -z "$left" ]
	}
	ok "SIGTERM: none of its programs or links is left (bpftool)" -- wait_until 60 bpf_gone
	[ -z "$left" ] || diag "left after 60 s:$left"
else
	skip "SIGTERM: nothing left" "no bpftool"
fi

# --- C: stacks in every window ----------------------------------------------
# A new window's analysis starts empty: the stacks and Python names sent in
# earlier windows are sent again, so later windows name their code too.
PORT=$(free_port)
start_agent "$TMP/c.out" --listen 127.0.0.1:$PORT --window 1 --every 1 --reports "$TMP/rc"
LD_LIBRARY_PATH=$IG_TOP/build/simgpu /usr/bin/python3 "$IG_TOP/tools/trainsim.py" \
	-s storage -n 1000000 -t 6 -q &
py_job=$!
wait $py_job
# two containers' jobs, each given its own GPU by the device plugin
# (NVIDIA_VISIBLE_DEVICES), each calling it GPU 0
UA=GPU-0a0a0a0a-1111-2222-3333-444455556666
UB=GPU-0b0b0b0b-1111-2222-3333-444455556666
for r in 0 1; do
	[ $r = 0 ] && u=$UA || u=$UB
	NVIDIA_VISIBLE_DEVICES=$u RANK=$r LD_LIBRARY_PATH=$IG_TOP/build/simgpu \
		"$TS" -s storage -t 3 -n 1000000 --data "$TMP/ds$r" --data-mb 16 -q &
	jobs="${jobs:-} $!"
done
wait $jobs
sleep 1.5
curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/expo-c"
stop_agent
pychecks "$TMP/rc" "$py_job" <<'PY'
import glob, json, sys
from tap import check
named, unnamed = [], []
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    r = json.load(open(f))
    # the windows the Python job ran through
    if not [p for p in r["processes"] if p["pid"] == int(sys.argv[2]) and
            p["launches"] and p["exit_ns"] is None]:
        continue
    st = [x for c in r["causes"] if c["cause"] == "storage"
          for x in c["details"] if x.get("kind") == "stack" and x["role"] == "waiter"]
    if st:
        ok = any(fr.startswith("read_batch (") for x in st for fr in x["frames"])
        (named if ok else unnamed).append(f.rsplit("-", 1)[-1])
check(len(named) + len(unnamed) >= 2,
      "a Python storage job's waits are in %d windows" % (len(named) + len(unnamed)))
check(not unnamed, "every window names the waiting Python function (read_batch)",
      "unnamed in windows %s; named in %s" % (unnamed, named))
PY
pychecks "$TMP/rc" $jobs <<'PY'
import glob, json, sys
from tap import check
pids = {int(x) for x in sys.argv[2:]}
both = []
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    r = json.load(open(f))
    ts = [p for p in r["processes"] if p["pid"] in pids and p["device"] is not None]
    if len(ts) == 2:
        both.append((r["gpu"]["devices"], ts))
check(both, "the two jobs shared %d windows" % len(both))
devs, ts = both[-1] if both else ([], [])
mine = [d for d in devs if d["device"] in [p["device"] for p in ts]]
check(len(mine) == 2 and all(p["ordinal"] == 0 for p in ts),
      "each job's GPU 0 is a GPU of its own in the report",
      "devices %s, processes %s" % ([d["device"] for d in devs],
                                    [(p["device"], p["ordinal"]) for p in ts]))
check(len(mine) == 2 and all(sum(c["seconds"] for c in d["causes"]) > 0 for d in mine),
      "each GPU has its own idle time by cause")
PY
for r in 0 1; do
	[ $r = 0 ] && u=$UA || u=$UB
	ok "rank $r's idle seconds by cause carry its GPU's UUID" -- \
		grep -q "^idlegap_gpu_idle_seconds_total{UUID=\"$u\",.*rank=\"$r\",.*cause=\"storage\"}" "$TMP/expo-c"
done

# --- D: bad input ------------------------------------------------------------
one_line() {	# NAME WANT_RC ARGS...: exit WANT_RC with one line on stderr
	_name=$1; _want=$2; shift 2
	"$@" > /dev/null 2> "$TMP/err"
	is "$?:$(wc -l < "$TMP/err")" "$_want:1" "$_name: one line, exit $_want ($(cat "$TMP/err"))"
}
# a port held by a listener of the test's own (bound to port 0, so no other
# process can take it first), until the agent has tried it; an agent that
# got the port after all is stopped by timeout
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
open(sys.argv[1] + ".new", "w").write("%d\n" % s.getsockname()[1])
__import__("os").rename(sys.argv[1] + ".new", sys.argv[1])
time.sleep(120)' "$TMP/busy_port" &
holder=$!
wait_until 60 test -s "$TMP/busy_port"
one_line "port in use" 1 timeout 60 "$IG" agent --listen 127.0.0.1:$(cat "$TMP/busy_port")
kill $holder 2>/dev/null
one_line "bad --listen" 1 "$IG" agent --listen nowhere
one_line "malformed --label" 2 "$IG" agent --label 'a b=c'
one_line "--reports unwritable" 1 "$IG" agent --reports /proc/idlegap
if command -v setpriv > /dev/null; then
	one_line "not root" 1 setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all "$IG" agent
fi

# --- E: without NVML ----------------------------------------------------------
CGE=$(cgroup_root)/idlegap-agent-e-$$
if mkdir "$CGE" 2>/dev/null; then
	# no build/simgpu on the agent's loader path: no NVML to load (the
	# job keeps it, for its libcuda)
	env -u LD_LIBRARY_PATH "$IG" agent --cgroup "/${CGE##*/}" --listen 127.0.0.1:0 \
		--window 3 --every 3 --reports "$TMP/re" > "$TMP/e.ag" 2>&1 &
	AGENT=$!
	wait_until 30 grep -q 'agent: metrics on port' "$TMP/e.ag"
	LD_LIBRARY_PATH=$IG_TOP/build/simgpu SIMGPU_TRACE=$TMP/e.trace SIMGPU_LATE=$TMP/e.late.%p \
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' job "$CGE" \
		/usr/bin/python3 "$IG_TOP/tools/trainsim.py" -s storage -t 9 -n 1000000 -q \
		--truth "$TMP/e.truth.json"
	sleep 4		# the window under way when the job ended is reported
	PORT=$(grep -o 'metrics on port [0-9]*' "$TMP/e.ag" | grep -o '[0-9]*$')
	curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/expo-e"
	stop_agent
	is "$?" 0 "without NVML: the agent exits 0 on SIGTERM"
	is "$(grep -c 'NVML cannot be loaded (no libnvidia-ml.so.1 where the loader looks)' "$TMP/e.ag")" 1 \
		"without NVML: the agent says so in one line"
	# the kernel's accounting of the feeder says what it waited for, as
	# in A: storage, or a CPU on a loaded host
	orc=$(oracle "$TMP/e.truth.json")
	pychecks "$IG_TOP/tools" "$TMP/e.trace" "$TMP/re" "$TMP/e.truth.json" "$TMP/expo-e" \
		"$orc" "$TMP/e.late.*" "$TMP/e.ag" <<'PY'
import glob, json, re, sys
sys.path.insert(0, sys.argv[1])
import truth
from tap import check
ivs = truth.read_traces([sys.argv[2]])[1]
busy = truth.merge(ivs)
late = truth.read_late([sys.argv[7]])
tj = json.load(open(sys.argv[4]))
feeder = tj["pids"]["feeder"]
want = hidden = 0
unknown, placed, gp = set(), set(), []
reps = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[3] + "/*.json"))]
for r in reps:
    unknown |= {d["pid"] for d in r["gpu"]["devices"] if d["device"] is None}
    placed |= {p["pid"] for p in r["processes"] if p["device"] is not None}
    dev = [d for d in r["gpu"]["devices"] if d["device"] is None and d["pid"] == feeder]
    if dev:
        gp.append(r.get("gpu_processes", {}).get("unknown_device"))
    procs = [p for p in r["processes"] if p["pid"] == feeder]
    if not dev or not procs or dev[0].get("span_start_ns") is None:
        continue
    # the simulator's idle over the span the window saw of the job's GPU
    b = truth.clip(busy, max(dev[0]["span_start_ns"], procs[0]["first_seen_ns"]),
                   dev[0]["span_end_ns"])
    if b:
        want += ((b[-1][1] - b[0][0]) - truth.total(b)) / 1e9
        hidden += truth.hidden_idle(late, ivs, b[0][0], b[-1][1]) / 1e9
text = open(sys.argv[5]).read().splitlines()
def series(name):
    for l in text:
        if l.startswith(name + "{"):
            yield dict(re.findall(r'(\w+)="([^"]*)"', l.split("}")[0])), float(l.split()[-1])
mine = [(lab, v) for lab, v in series("idlegap_gpu_seconds_total")
        if lab.get("pid") == str(feeder)]
# on a miss: each window against the job's steps (ms from its first), what
# it followed, and the agent's log
t0 = tj["step_list"][0]["start_ns"] if tj.get("step_list") else 0
why = "the job's steps 0 to %.0f ms; windows: " % (
    (tj["step_list"][-1]["end_ns"] - t0) / 1e6 if t0 else 0) + "; ".join(
    "[%.0f,%.0f] devices %s processes %s" % (
        (r["meta"]["start_ns"] - t0) / 1e6, (r["window"]["end_ns"] - t0) / 1e6,
        [(d.get("pid"), d.get("device")) for d in r["gpu"]["devices"]],
        [p["pid"] for p in r["processes"]][:8])
    for r in sorted(reps, key=lambda r: r["meta"]["start_ns"])) + \
    " | the agent: " + " / ".join(open(sys.argv[8]).read().splitlines()[-6:])
check(mine and all(lab.get("gpu") == "unknown" and lab.get("comm") == "python3"
                   for lab, v in mine),
      'the job\'s series say gpu="unknown", its pid and comm (%s)' % (mine[:1] and mine[0][0]),
      why)
check(not [lab for lab, v in series("idlegap_gpu_seconds_total") if lab.get("gpu") == "0"],
      'no series says gpu="0"')
# proven idle is never more than there was, and with the unresolved
# time (neither proven idle nor busy: on this VM a sync woken late puts
# a tenth of the idle there) it misses none of it: the two bracket the
# truth within 5%, less the idle no evidence could show (op ends the
# simulated GPU's device thread, delayed by a loaded VM, delivered over
# 1 ms late: the sync that waited was busy until then; SIMGPU_LATE,
# docs/design.md §9, "What the VM hid")
idle = sum(v for lab, v in mine if lab["state"] == "idle")
got = sum(v for lab, v in mine if re.match("idle$|unresolved_", lab["state"]))
check(want > 1 and idle <= 1.05 * want and got + hidden >= 0.95 * want,
      "its idle on /metrics, proven %.3f s and with the unresolved %.3f s, brackets "
      "the truth %.3f s within 5%% (%.3f s of it hidden by late ends)" % (
          idle, got, want, hidden))
causes = [c for v, c in sorted(((v, lab["cause"]) for lab, v in
                                 series("idlegap_gpu_idle_seconds_total")
                                 if lab.get("pid") == str(feeder)), reverse=True)]
verdict, orc = (sys.argv[6].split(" ", 1) + [""])[:2]
if verdict in ("design", "None"):
    ok = causes[:1] == ["storage"]
elif verdict == "cpu":
    ok = causes[:1] == ["cpu_starvation"] or causes[:2] == ["storage", "cpu_starvation"]
else:
    ok = causes[:1] in (["storage"], ["cpu_starvation"])
check(ok, "storage leads its idle causes, or the CPU it waited for as the "
      "oracle says (%s) [%s: %s]" % (", ".join(causes[:3]), verdict, orc))
n = [float(v) for lab, v in [(l.split()[0], l.split()[1]) for l in text
     if l.startswith("idlegap_gpu_processes_unknown_device_total ")]]
shown = {lab.get("pid") for lab, v in series("idlegap_gpu_seconds_total")}
check(gp and all(g == 1 for g in gp),
      "each window's gpu_processes.unknown_device counts it (%s)" % gp)
check(feeder in unknown and n and n[0] == len(unknown) and
      all(str(p) in shown for p in unknown - placed),
      "every followed GPU process is on /metrics, counted in "
      "idlegap_gpu_processes_unknown_device_total (%s; %d without a GPU)" % (n, len(unknown)))
PY
else
	skip "without NVML: a single job on the agent" "cannot make a cgroup under $(cgroup_root)"
fi
done_testing

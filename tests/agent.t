#!/bin/sh
# `idlegap agent` end to end, as root:
#  A. on a duty cycle of 3 s every 3 s, scraped by Debian's Prometheus,
#     while trainsim scenarios run in a Kubernetes-shaped cgroup with Slurm
#     and torchrun variables: idle seconds read back through Prometheus's
#     API match the simulator's truth (within the windows the agent traced)
#     within 10%, the scenario's cause leads, the workload labels are
#     there, and `promtool check metrics` passes on the live exposition;
#  B. 1 s every 2 s, no --libcuda: a job in another mount namespace is
#     found, no uprobe is attached between windows, 2000 libcuda users
#     come and go with the agent's memory flat, --reports stays bounded,
#     and SIGTERM ends it at once with none of its BPF objects left;
#  C. bad input: one line, non-zero exit.
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
	prom_stop
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	[ -n "${POD:-}" ] && rmdir "$POD" "${POD%/*}" "${POD%/*/*}" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
free_port() { prom_free_port; }
# start_agent OUT ARGS...: starts the agent in the background (AGENT)
start_agent() {
	_o=$1; shift
	"$IG" agent "$@" > "$_o" 2>&1 &
	AGENT=$!
	_i=0
	until grep -q 'agent: metrics on port' "$_o" || [ $_i -ge 150 ]; do
		kill -0 $AGENT 2>/dev/null || break
		sleep 0.1; _i=$((_i + 1))
	done
	grep -q 'agent: metrics on port' "$_o"
}
stop_agent() { kill "$AGENT" 2>/dev/null; wait "$AGENT"; _rc=$?; AGENT=; return $_rc; }

# --- A: Prometheus, truth, labels -------------------------------------------
mkdir -p "$TMP/lib" "$TMP/reports"
cp "$SIM" "$TMP/lib/"
PUID=$(cat /proc/sys/kernel/random/uuid)
CID=$(cat /proc/sys/kernel/random/uuid /proc/sys/kernel/random/uuid | tr -d -- '-\n')
CG=/sys/fs/cgroup/unified
[ -f /sys/fs/cgroup/cgroup.controllers ] && CG=/sys/fs/cgroup
POD=$CG/kubepods.slice/kubepods-pod$(echo "$PUID" | tr - _).slice/cri-containerd-$CID.scope
mkdir -p "$POD" 2>/dev/null || POD=
JOB=$$
# job SCENARIO SUFFIX: trainsim in the pod's cgroup, as rank SUFFIX of job $JOB$SUFFIX
job() {
	SIMGPU_TRACE=$TMP/$1.trace LD_LIBRARY_PATH=$TMP/lib HOSTNAME=trainer-$2 \
	SLURM_JOB_ID=$JOB$2 RANK=$2 LOCAL_RANK=$2 WORLD_SIZE=2 \
	sh -c '[ -n "$1" ] && echo $$ > "$1/cgroup.procs"; shift; exec "$@"' job "$POD" \
		"$TS" -s "$1" -t 4 -q --truth "$TMP/$1.truth.json"
}
PORT=$(free_port)
start_agent "$TMP/a.out" --listen 127.0.0.1:$PORT --window 3 --every 3 \
	--libcuda "$TMP/lib/libcuda.so.1" --label cluster=agenttest --reports "$TMP/reports"
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
curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/expo"
ok "promtool check metrics passes on the live /metrics" -- sh -c "promtool check metrics < '$TMP/expo'"
# truth_idle SCENARIO: the simulator's idle seconds inside the agent's
# windows, from when the agent found the job (it looks every second)
truth_idle() {
	/usr/bin/python3 - "$IG_TOP/tools" "$TMP/$1.trace" "$TMP/reports" "$TMP/$1.truth.json" <<'PY'
import glob, json, sys
sys.path.insert(0, sys.argv[1]); import truth
busy = truth.merge(truth.read_traces([sys.argv[2]])[1])
feeder = json.load(open(sys.argv[4]))["pids"]["feeder"]
idle = 0
for f in glob.glob(sys.argv[3] + "/*.json"):
    r = json.load(open(f))
    seen = [p["first_seen_ns"] for p in r["processes"] if p["pid"] == feeder]
    if not seen:
        continue
    t0 = max(r["meta"]["start_ns"], seen[0])
    t1 = r["meta"]["start_ns"] + int(r["duration_s"] * 1e9)
    b = truth.clip(busy, t0, t1)
    if b:
        idle += (b[-1][1] - b[0][0]) - truth.total(b)
print("%.6f" % (idle / 1e9))
PY
}
for s in storage:1 lock:2; do
	sc=${s%:*}; n=${s#*:}
	want=$(truth_idle "$sc")
	got=$(prom_query "sum(idlegap_gpu_seconds_total{slurm_job=\"$JOB$n\",state=~\"idle|unresolved\"})")
	ok "$sc: idle seconds in Prometheus match the truth within 10% ($got vs $want)" -- \
		/usr/bin/python3 -c "import sys; g, w = float('${got:-nan}'), float('${want:-nan}'); sys.exit(not (w > 0.2 and abs(g - w) <= 0.1 * w))"
	lead=$(prom_labels "topk(1, sum by (cause) (idlegap_gpu_idle_seconds_total{slurm_job=\"$JOB$n\"}))" cause)
	is "$lead" "$sc" "$sc: the scenario's cause leads in Prometheus"
done
labels=$(prom_api "idlegap_gpu_seconds_total{slurm_job=\"${JOB}1\",state=\"idle\"}" \
	'm = r[0]["metric"] if r else {}; print(" ".join("%s=%s" % (k, m.get(k, "")) for k in ("rank", "comm", "cluster", "pod", "pod_uid", "container")))')
is "$(echo "$labels" | cut -d' ' -f1-3)" "rank=1 comm=trainsim cluster=agenttest" \
	"Slurm job and rank from the environment, --label on the series"
if [ -n "$POD" ]; then
	is "$(echo "$labels" | cut -d' ' -f4-)" "pod=trainer-1 pod_uid=$PUID container=$CID" \
		"pod UID and container id from the cgroup path, pod name from HOSTNAME"
else
	skip "pod labels from the cgroup path" "cgroup v2 not writable here"
fi
ok "no pid label" -- sh -c "! grep -q 'pid=' '$TMP/expo'"
prom_stop
stop_agent
is "$?" 0 "agent A exits 0 on SIGTERM"

#!/bin/sh
# The late rank's pod (docs/design.md §4.9, §7.4, §7.7): trainsim ranks,
# 4 ranks, rank 2 starved of CPU, ranks 0 to 2 each in a cgroup shaped as
# the kubelet makes a pod's (kubepods.slice/kubepods-pod<uid>.slice/
# cri-containerd-<id>.scope) with containerd's record of its container
# under --node-root.  stragglers[0] is rank 2 where the simulated NCCL's
# truth agrees that its peers waited for it most (else the rank the truth
# names), and rank 2's entry names its pod, namespace and pod
# UID, in `run`'s JSON and text and in `report`'s of the recording; what
# the workload says does not decide the pod: rank 2's environment names
# another pod (POD_NAME, POD_NAMESPACE, HOSTNAME, KUBERNETES_*) and it
# runs in a cgroup it nested below its own as another pod's, with a
# runtime record for that pod; rank 3, in no pod, says it is one.  Two
# `run`s of 2 ranks each, merged by `report`, keep each rank's pod.
# `report --dump` prints the ident records; `attach` names the pod of a
# process that was in it before.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
need_ranks_build
CG=$(cgroup_root)
[ -d "$CG" ] || skip_all "no cgroup v2 hierarchy"
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
export TMPDIR=$TMP
STEPS=${STEPS:-40}

DIRS=
cleanup() {
	for d in $DIRS; do rmdir "$d" 2>/dev/null; done
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT

uuid() { cat /proc/sys/kernel/random/uuid; }
hex64() { cat /proc/sys/kernel/random/uuid /proc/sys/kernel/random/uuid | tr -d -- '-\n'; }
# record CONTAINER UID NAME NAMESPACE: containerd's record of a container
record() {
	mkdir -p "$TMP/node/run/containerd/io.containerd.runtime.v2.task/k8s.io/$1"
	printf '{"annotations": {"io.kubernetes.cri.sandbox-uid": "%s", "io.kubernetes.cri.sandbox-name": "%s", "io.kubernetes.cri.sandbox-namespace": "%s"}}' \
		"$2" "$3" "$4" > "$TMP/node/run/containerd/io.containerd.runtime.v2.task/k8s.io/$1/config.json"
}
# pod RANK: the cgroup of rank RANK's container (made; its pod UID in UID_RANK)
for r in 0 1 2; do
	uid=$(uuid); cid=$(hex64)
	slice=$CG/kubepods.slice/kubepods-pod$(echo "$uid" | tr - _).slice
	scope=$slice/cri-containerd-$cid.scope
	mkdir -p "$scope" 2>/dev/null || skip_all "cannot make a cgroup under $CG"
	DIRS="$scope $slice $DIRS"
	record "$cid" "$uid" "trainer-$r" ml
	eval "UID_$r=$uid CG_$r=$scope"
done
DIRS="$DIRS $CG/kubepods.slice"
# rank 2 nests another pod's cgroup below its own and makes as if it ran
# there; a record of that container exists and names the victim's pod
vuid=$(uuid); vcid=$(hex64)
CG_2=$CG_2/kubepods/pod$vuid/$vcid
mkdir -p "$CG_2" || skip_all "cannot nest a cgroup under $CG"
DIRS="$CG_2 ${CG_2%/*} ${CG_2%/*/*} $DIRS"
record "$vcid" "$vuid" victim-pod finance
export CG_0 CG_1 CG_2 TS STEPS

# ranks FIRST LAST: those ranks of 4, each in its pod's cgroup, the NCCL
# id shared through a file; rank 2 and rank 3 say they are other pods
cat > "$TMP/ranks.sh" <<'SH'
#!/bin/sh
for r in $(seq "$1" "$2"); do
	eval "cg=\${CG_$r:-}"
	env RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 TRAINSIM_NCCL_ID=$ID \
		POD_NAME=trainer-0 POD_NAMESPACE=default HOSTNAME=trainer-0 \
		KUBERNETES_SERVICE_HOST=10.0.0.1 KUBERNETES_POD_NAME=trainer-0 \
		sh -c '[ -n "$1" ] && echo $$ > "$1/cgroup.procs"; shift; exec "$@"' rank "$cg" \
		"$TS" ranks --world 4 -s cpu --steps "$STEPS" &
done
wait
SH
chmod +x "$TMP/ranks.sh"

export ID="$TMP/ncclid"
# the simulated NCCL's own record of who arrived when: the oracle of which
# rank its peers waited for (tools/truth.py nccl, waited_for_s)
export SIMNCCL_TRACE="$TMP/nccl-live.%p"
"$IG" run --as-root --node-root "$TMP/node" --json "$TMP/live.json" -o "$TMP/live.igrec" \
	-- "$TMP/ranks.sh" 0 3 > "$TMP/live.out" 2>&1
ok "the traced job ran" -- test -s "$TMP/live.json"
"$IG" report --json "$TMP/replay.json" "$TMP/live.igrec" > "$TMP/replay.out" 2>&1
ok "its recording is read back" -- test -s "$TMP/replay.json"
"$IG_TOP/tools/truth.py" nccl "$TMP/nccl-live.*" > "$TMP/live.truth"
ok "the simulated NCCL's truth is read" -- test -s "$TMP/live.truth"

# stragglers[0] is judged by the truth of which rank kept its peers waiting
# (tests/lib/straggler.py), and rank 2's entry checked wherever it stands
libpy() { PYTHONPATH="$IG_TOP/tests/lib" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$@"; }

# check JSON: one line per check, "ok what" or "bad what"
check() {
	libpy - "$@" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); uid2 = sys.argv[2]; uid0 = sys.argv[3]
from straggler import straggler, waited_for
def say(ok, what): print(("ok " if ok else "bad ") + what)
s = straggler(j, waited_for(json.load(open(sys.argv[4]))), 2, say)
say(s.get("pod") == "trainer-2" and s.get("namespace") == "ml",
    "rank 2's straggler entry names its pod ml/trainer-2, not what it says or nests "
    "(%s/%s)" % (s.get("namespace"), s.get("pod")))
say(s.get("pod_uid") == uid2, "rank 2's straggler entry has its pod's pod_uid (%s)" % s.get("pod_uid"))
ranks = {r["rank"]: r for r in j["collectives"]["ranks"]}
say(ranks.get(0, {}).get("pod") == "trainer-0" and ranks.get(0, {}).get("pod_uid") == uid0,
    "rank 0's pod is trainer-0 (%s)" % ranks.get(0, {}).get("pod"))
r3 = ranks.get(3, {})
say(3 in ranks and r3.get("pod") is None and r3.get("namespace") is None
    and r3.get("pod_uid") is None,
    "rank 3, in no pod, has none whatever its environment says (%s)" % r3.get("pod"))
devs = [d for d in j["gpu"]["devices"] if d.get("rank") == 2]
say(devs and all(d.get("pod") == "trainer-2" for d in devs),
    "the GPU of rank 2 names its pod (%s)" % [d.get("pod") for d in devs])
PY
}
verdicts() {
	while read -r verdict what; do
		case $verdict in
		ok) pass "$1: $what" ;;
		"#") echo "# $1: $what" ;;
		*) fail "$1: $what" ;;
		esac
	done < "$2"
}
for w in live replay; do
	check "$TMP/$w.json" "$UID_2" "$UID_0" "$TMP/live.truth" > "$TMP/$w.checks" 2>&1 ||
		echo "bad the report could not be read: $(tail -1 "$TMP/$w.checks")" > "$TMP/$w.checks"
	verdicts "$w" "$TMP/$w.checks"
done
ok "text: the straggler line names its pod" -- \
	grep -q "straggler: rank 2 (pid [0-9]* on .* pod ml/trainer-2)" "$TMP/live.out"
ok "text of the replay: the same" -- \
	grep -q "straggler: rank 2 (pid [0-9]* on .* pod ml/trainer-2)" "$TMP/replay.out"
"$IG" report --dump "$TMP/live.igrec" > "$TMP/dump.txt" 2>&1
ok "dump: rank 2's ident record" -- \
	grep -q " ident .* pod_uid=$UID_2 pod=trainer-2 namespace=ml " "$TMP/dump.txt"
ok "dump: no ident record names the nested pod" -- \
	sh -c "! grep -q -e victim-pod -e $vuid '$TMP/dump.txt'"

# attach: a process already running in its pod is named when followed
sh -c 'echo $$ > "$1/cgroup.procs"; exec "$2" -s healthy -t 4 -q' job "$CG_0" "$TS" \
	> "$TMP/att.job" 2>&1 &
j=$!
sleep 0.5
"$IG" attach -q --node-root "$TMP/node" -p "$j" -d 1 -o "$TMP/att.igrec" > "$TMP/att.out" 2>&1
wait $j
"$IG" report --dump "$TMP/att.igrec" > "$TMP/att.dump" 2>&1
ok "attach: the followed process's ident record names its pod" -- \
	grep -q " ident tid=$j pid=$j .* pod_uid=$UID_0 pod=trainer-0 namespace=ml " "$TMP/att.dump"

# Two nodes: ranks 0-1 and 2-3 traced apart, merged by report
rm -f "$ID"
export SIMNCCL_TRACE="$TMP/nccl-AB.%p"
"$IG" run -q --as-root --node-root "$TMP/node" -o "$TMP/A.igrec" -- "$TMP/ranks.sh" 0 1 \
	> "$TMP/A.out" 2>&1 &
a=$!
"$IG" run -q --as-root --node-root "$TMP/node" -o "$TMP/B.igrec" -- "$TMP/ranks.sh" 2 3 \
	> "$TMP/B.out" 2>&1
wait $a
"$IG" report --json "$TMP/merged.json" "$TMP/A.igrec" "$TMP/B.igrec" > "$TMP/merged.out" 2>&1
ok "two recordings merged" -- test -s "$TMP/merged.json"
"$IG_TOP/tools/truth.py" nccl "$TMP/nccl-AB.*" > "$TMP/AB.truth"
libpy - "$TMP/merged.json" "$TMP/AB.truth" > "$TMP/merged.checks" 2>&1 <<'PY' ||
import json, sys
j = json.load(open(sys.argv[1]))
from straggler import straggler, waited_for
def say(ok, what): print(("ok " if ok else "bad ") + what)
ranks = {r["rank"]: r for r in j["collectives"]["ranks"]}
want = {0: "trainer-0", 1: "trainer-1", 2: "trainer-2", 3: None}
say(all(ranks.get(r, {}).get("pod", "-") == p for r, p in want.items()),
    "each rank keeps its pod (%s)" % {r: ranks.get(r, {}).get("pod", "-") for r in want})
s = straggler(j, waited_for(json.load(open(sys.argv[2]))), 2, say)
say(s.get("pod") == "trainer-2", "rank 2's straggler entry is in trainer-2 (%s)" % s.get("pod"))
PY
	echo "bad the merged report could not be read: $(tail -1 "$TMP/merged.checks")" > "$TMP/merged.checks"
verdicts merged "$TMP/merged.checks"
done_testing

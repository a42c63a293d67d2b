#!/bin/sh
# The container image (`make image`) run by Debian's podman as the
# DaemonSet (deploy/kubernetes/idlegap-agent.yaml) runs it: podman's
# options are derived from the manifest by tests/lib/podman_args.py
# (host PID namespace, all capabilities dropped but the manifest's,
# read-only root, no-new-privileges, the seccomp and AppArmor settings,
# the hostPath and emptyDir mounts, the memory limit, the pod's env and
# arguments with their $(VAR)s expanded, the grace period).  The agent in
# it finds a trainsim job started on the host and one in another container,
# serves /metrics on the pod IP and declared port with each job's labels,
# and stops cleanly on `podman stop`.  The derivation refuses a manifest
# that disagrees with this test on capabilities, mounts or ports: shown on
# altered copies.  Needs root and a podman that can run containers.
. "$(dirname "$0")/lib.sh"
need_root
MAN=$IG_TOP/deploy/kubernetes/idlegap-agent.yaml
VERSION=$(cat "$IG_TOP/VERSION")
IMAGE=$IG_TOP/build/idlegap-image-$VERSION-amd64.oci.tar
TS=$IG_TOP/build/trainsim
SIM=$IG_TOP/build/simgpu/libcuda.so.1
ARGS="/usr/bin/python3 $IG_TOP/tests/lib/podman_args.py"
# what this test provides and checks: the manifest must ask for no more
CAPS=BPF,PERFMON,SYS_PTRACE
MOUNTS=/sys/kernel/btf:ro,/sys/fs/cgroup:ro,/run/containerd/io.containerd.runtime.v2.task:ro,/run/containers/storage/overlay-containers:ro,/tmp:rw
PORT=10437
[ "$(uname -m)" = x86_64 ] || skip_all "the amd64 image on $(uname -m)"
command -v podman > /dev/null || skip_all "no podman (Debian: podman)"
/usr/bin/python3 -c 'import yaml' 2> /dev/null || skip_all "no python3-yaml"
[ -f "$IMAGE" ] || skip_all "build it first: make image"
[ -x "$TS" ] && [ -f "$SIM" ] || skip_all "build first: make all"
[ -d /sys/kernel/btf ] || skip_all "no /sys/kernel/btf"

AGENT=ig-agent-$$
JOBC=ig-job-$$
JOBIMG=localhost/idlegap-testjob:$$
HOSTJOB=
cleanup() {
	podman rm -f -t 0 "$AGENT" "$JOBC" > /dev/null 2>&1
	podman rmi -f "$JOBIMG" > /dev/null 2>&1
	[ -n "$HOSTJOB" ] && kill "$HOSTJOB" 2> /dev/null
	delayacct_restore
	rm -rf "$TMP"
}
trap cleanup EXIT
delayacct_on	# for the oracle on the host job's cause

# --- the manifest and this test agree ----------------------------------------
# translate MANIFEST: podman's arguments for it, one a line, into $TMP/args
translate() {
	$ARGS "$1" --caps $CAPS --mounts $MOUNTS --port $PORT \
		--env POD_IP="$POD_IP" --env NODE_NAME=node-$$ --emptydir "$TMP/emptydir" \
		> "$TMP/args" 2> "$TMP/args.err"
}
# the pod IP: an address on podman's default network, given to the container
POD_IP=10.88.$(($(od -An -N1 -tu1 /dev/urandom) % 200 + 20)).$(($(od -An -N1 -tu1 /dev/urandom) % 250 + 2))
mkdir -m 1777 "$TMP/emptydir"
translate "$MAN"
rc=$?
sed 's/^/# /' "$TMP/args.err"
if [ $rc != 0 ]; then
	fail "the manifest asks for what this test provides ($(cat "$TMP/args.err"))"
	done_testing
	exit 1
fi
pass "the manifest asks for what this test provides: caps $CAPS, mounts $MOUNTS, port $PORT"
is "$(grep -c '^idlegap:' "$TMP/args")" 1 "the manifest names one image"
is "$(grep '^idlegap:' "$TMP/args")" "idlegap:$VERSION" "the manifest's image is this version's (VERSION)"

# altered copies: each disagreement is refused in one line naming it
# altered NAME SED-SCRIPT WORD: the copy edited by SED-SCRIPT is refused,
# the line saying WORD
altered() {
	sed "$2" "$MAN" > "$TMP/altered.yaml"
	if cmp -s "$MAN" "$TMP/altered.yaml"; then
		fail "altered manifest, $1: the edit changed nothing"
		return
	fi
	$ARGS "$TMP/altered.yaml" --caps $CAPS --mounts $MOUNTS --port $PORT \
		--env POD_IP="$POD_IP" --env NODE_NAME=n --emptydir "$TMP/emptydir" \
		> /dev/null 2> "$TMP/altered.err"
	_rc=$?
	diag "$1: $(cat "$TMP/altered.err")"
	ok "altered manifest, $1: refused (exit $_rc), one line naming $3" -- \
		sh -c "test $_rc = 1 && test \$(wc -l < '$TMP/altered.err') = 1 && grep -q '$3' '$TMP/altered.err'"
}
altered "a capability more" 's/add: \[BPF, PERFMON, SYS_PTRACE\]/add: [BPF, PERFMON, SYS_PTRACE, SYS_ADMIN]/' capabilities
altered "a capability less" 's/add: \[BPF, PERFMON, SYS_PTRACE\]/add: [BPF, PERFMON]/' capabilities
altered "the cgroup mount writable" 's|{name: cgroup, mountPath: /sys/fs/cgroup, readOnly: true}|{name: cgroup, mountPath: /sys/fs/cgroup}|' mounts
altered "a mount more" 's|^\(            - {name: tmp, mountPath: /tmp}\)$|\1\n            - {name: btf, mountPath: /host-btf, readOnly: true}|' mounts
altered "another container port" 's/containerPort: 10437/containerPort: 10438/' ports
altered "another --listen port" 's/(POD_IP):10437/(POD_IP):9100/' ports
altered "privileged" 's/privileged: false/privileged: true/' privileged

# --- podman can run the image ---------------------------------------------------
podman load -i "$IMAGE" > "$TMP/load" 2>&1
rc=$?
sed 's/^/# /' "$TMP/load"
ok "podman load -i $(basename "$IMAGE") (exit $rc)" -- \
	sh -c "test $rc = 0 && grep -q 'Loaded image.*idlegap:$VERSION' '$TMP/load'"
is "$(podman image inspect --format '{{.Architecture}} {{index .Config.Labels "org.opencontainers.image.version"}}' "idlegap:$VERSION" 2> /dev/null)" \
	"amd64 $VERSION" "the loaded image is amd64, labelled with the version"
# This machine's limits and cgroups, not the manifest's: podman raises the
# open-file and process limits, which needs CAP_SYS_RESOURCE; crun refuses a
# hybrid cgroup v1/v2 host that runc takes.
RT=
try_run() {
	podman $RT run --rm "$@" "idlegap:$VERSION" --version > "$TMP/probe" 2>&1
}
if ! try_run; then
	diag "podman run: $(tail -1 "$TMP/probe")"
	if grep -q 'setrlimit\|rlimit' "$TMP/probe"; then
		n=$(ulimit -Hn)
		set -- --ulimit "nofile=$n:$n" --ulimit nproc=16384:16384
	fi
	try_run "$@" || { command -v runc > /dev/null && RT="--runtime runc" && try_run "$@"; }
fi
if [ "$(cat "$TMP/probe")" != "idlegap $VERSION" ]; then
	diag "podman run: $(tail -1 "$TMP/probe")"
	skip_all "podman cannot run a container here: $(tail -1 "$TMP/probe")"
fi
pass "the image runs: $(cat "$TMP/probe")${RT:+ ($RT)}${1:+ ($*)}"
LIMITS="$*"

# --- a job on the host and one in another container ---------------------------
U1=GPU-$(cat /proc/sys/kernel/random/uuid)
U2=GPU-$(cat /proc/sys/kernel/random/uuid)
J1=${$}1
J2=${$}2
# each job has its own GPU (as the device plugin gives them), so the other
# GPU processes on this host share no series with it
NVIDIA_VISIBLE_DEVICES=$U1 SLURM_JOB_ID=$J1 RANK=0 WORLD_SIZE=1 LD_LIBRARY_PATH=$IG_TOP/build/simgpu \
	"$TS" -s lock -t 120 -n 100000000 -q --truth "$TMP/hostjob.truth.json" > "$TMP/hostjob.out" 2>&1 &
HOSTJOB=$!
# the other container: trainsim, the simulated libcuda where the loader finds it
/usr/bin/python3 "$IG_TOP/deploy/mkimage.py" --arch amd64 --tag "$JOBIMG" --out "$TMP/job.oci.tar" \
	--entrypoint /usr/bin/trainsim "$TS:/usr/bin/trainsim" \
	"$SIM:/usr/lib/x86_64-linux-gnu/libcuda.so.1" > "$TMP/jobimg" 2>&1 &&
	podman load -i "$TMP/job.oci.tar" >> "$TMP/jobimg" 2>&1
ok "a job image: trainsim and the simulated libcuda" -- grep -q "Loaded image.*idlegap-testjob" "$TMP/jobimg"
sed 's/^/# /' "$TMP/jobimg"
# shellcheck disable=SC2086
podman $RT run -d --name "$JOBC" $LIMITS --env NVIDIA_VISIBLE_DEVICES="$U2" --env SLURM_JOB_ID="$J2" \
	--env RANK=1 --env WORLD_SIZE=2 "$JOBIMG" -s cpu -t 120 -n 100000000 -q > "$TMP/jobc.id" 2> "$TMP/jobc.err"
ok "the job container runs" -- sh -c "test \"\$(podman inspect --format '{{.State.Running}}' '$JOBC' 2>/dev/null)\" = true"
sed 's/^/# /' "$TMP/jobc.err"
CID=$(cat "$TMP/jobc.id")
JPID=$(podman inspect --format '{{.State.Pid}}' "$JOBC" 2> /dev/null)
diag "container job: pid $JPID, cgroup $(tr '\n' ' ' < /proc/"$JPID"/cgroup 2>/dev/null | cut -c1-300)"
# both jobs have their libcuda mapped before the agent starts
i=0
until { grep -q libcuda /proc/$HOSTJOB/maps && grep -q libcuda "/proc/$JPID/maps"; } 2> /dev/null || [ $i -ge 100 ]; do
	sleep 0.1; i=$((i + 1))
done

# --- the agent as the DaemonSet runs it ------------------------------------------
# shellcheck disable=SC2046,SC2086
podman $RT run -d --name "$AGENT" --ip "$POD_IP" $LIMITS $(cat "$TMP/args") > "$TMP/agent.id" 2> "$TMP/agent.err"
rc=$?
sed 's/^/# /' "$TMP/agent.err"
ok "podman run, the manifest's options: the agent starts (exit $rc)" -- test $rc = 0
diag "podman run --ip $POD_IP $(tr '\n' ' ' < "$TMP/args")"
APID=$(podman inspect --format '{{.State.Pid}}' "$AGENT" 2> /dev/null)
is "$(grep '^CapEff' /proc/"${APID:-0}"/status 2> /dev/null | cut -f2)" \
	"$(printf '%016x' $(( (1 << 38) | (1 << 39) | (1 << 19) )))" \
	"the agent's effective capabilities are BPF, PERFMON and SYS_PTRACE alone"
is "$(readlink /proc/"${APID:-0}"/ns/pid)" "$(readlink /proc/self/ns/pid)" "the agent is in the host's PID namespace"
# the agent's BPF programs, by the processes holding them
# (their ids from /proc/PID/fdinfo)
progs() {
	for _f in /proc/"$1"/fd/*; do
		[ "$(readlink "$_f" 2> /dev/null)" = anon_inode:bpf-prog ] &&
			awk '/^prog_id:/ { print $2 }' /proc/"$1"/fdinfo/"${_f##*/}" 2> /dev/null
	done | sort -un | tr '\n' ' '
}
# the first window (the manifest's 10 s) loads them
i=0
held=
while [ -z "$held" ] && [ $i -lt 40 ]; do
	held=$(progs "${APID:-0}")
	[ -n "$held" ] || sleep 0.25
	i=$((i + 1))
done
ok "the agent holds BPF programs in its window (ids ${held:-none})" -- test -n "$held"
# the first window ends, then /metrics has it
i=0
while [ $i -lt 60 ]; do
	curl -s --max-time 5 "http://$POD_IP:$PORT/metrics" > "$TMP/expo" 2> /dev/null &&
		grep -q "^idlegap_windows_total[{ ].* [1-9]" "$TMP/expo" && break
	sleep 1; i=$((i + 1))
done
podman logs "$AGENT" 2>&1 | sed 's/^/# agent: /'
ok "/metrics on the pod IP and declared port ($POD_IP:$PORT): a window done" -- \
	grep -q "^idlegap_windows_total[{ ].* [1-9]" "$TMP/expo"
# series whose GPU is the host job's / the container job's
grep "UUID=\"$U1\"" "$TMP/expo" > "$TMP/host.prom"
grep "UUID=\"$U2\"" "$TMP/expo" > "$TMP/ctr.prom"
sed 's/^/# host job: /' "$TMP/host.prom"
sed 's/^/# container job: /' "$TMP/ctr.prom"
ok "the host job: its GPU's busy time, labelled with its Slurm job and rank (self-reported: from its environment) and the manifest's node label" -- \
	grep -q "^idlegap_gpu_seconds_total{UUID=\"$U1\",slurm_job=\"$J1\",rank=\"0\",comm=\"trainsim\",self_reported=\"UUID,slurm_job,rank\",node=\"node-$$\",state=\"busy\"} [0-9.e+-]*[1-9]" "$TMP/host.prom"
ok "the host job: idle seconds by cause" -- grep -q "^idlegap_gpu_idle_seconds_total{UUID=\"$U1\",.*cause=" "$TMP/host.prom"
ok "the container job: its GPU's busy time, labelled with its container, Slurm job and rank (self-reported)" -- \
	grep -q "^idlegap_gpu_seconds_total{UUID=\"$U2\",container=\"$CID\",slurm_job=\"$J2\",rank=\"1\",comm=\"trainsim\",self_reported=\"UUID,slurm_job,rank\",node=\"node-$$\",state=\"busy\"} [0-9.e+-]*[1-9]" "$TMP/ctr.prom"
ok "the container job: idle seconds by cause" -- grep -q "^idlegap_gpu_idle_seconds_total{UUID=\"$U2\",.*cause=" "$TMP/ctr.prom"
# ranked FILE N: the N causes with the most idle seconds, most first, one a line
ranked() { sed -n 's/^idlegap_gpu_idle_seconds_total{.*cause="\([a-z_]*\)"} \(.*\)/\2 \1/p' "$1" | sort -gr | awk -v n="$2" 'NR <= n { print $2 }'; }
# lead FILE: the cause with the most idle seconds
lead() { ranked "$1" 1; }
hostlead=$(lead "$TMP/host.prom")
hostcauses=$(ranked "$TMP/host.prom" 2 | tr '\n' ' ')
is "$(lead "$TMP/ctr.prom")" cpu_starvation "the container job (trainsim -s cpu): cpu_starvation leads"
if command -v promtool > /dev/null; then
	ok "promtool check metrics passes" -- sh -c "promtool check metrics < '$TMP/expo' > /dev/null 2>&1"
else
	skip "promtool check metrics passes" "no promtool (Debian: prometheus)"
fi

# --- podman stop --------------------------------------------------------------------
podman stop "$AGENT" > /dev/null 2>&1
is "$(podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$AGENT" 2> /dev/null)" "exited 0" \
	"podman stop: the agent exits 0 within the grace period (no SIGKILL)"
ok "podman stop: it says it stopped on SIGTERM" -- sh -c "podman logs '$AGENT' 2>&1 | grep -q 'stopped by signal 15'"
left=
for id in $held; do bpftool prog show id "$id" > /dev/null 2>&1 && left="$left $id"; done
is "${left:-none}" none "podman stop: none of its BPF programs is left"

# the host job ends on SIGTERM with its truth: the kernel's accounting of
# its feeding threads says what they waited for (tools/accuracy.py), the
# lock or a CPU, on this machine at this load
kill "$HOSTJOB" 2> /dev/null
wait "$HOSTJOB" 2> /dev/null
HOSTJOB=
set -- $(oracle "$TMP/hostjob.truth.json")
verdict=$1; shift; orc="[$*]"
case $verdict in
design | None)
	is "$hostlead" lock "the host job (trainsim -s lock): lock leads $orc" ;;
cpu)
	ok "the host job waited for a CPU more than for its lock: cpu_starvation ($hostcauses) leads, or lock with cpu_starvation second $orc" -- \
		sh -c "[ '$hostlead' = cpu_starvation ] || { [ '$hostlead' = lock ] && echo '$hostcauses' | grep -qw cpu_starvation; }" ;;
*)
	ok "the host job: the oracle cannot decide between lock and cpu_starvation: one of them leads ($hostlead) $orc" -- \
		sh -c "[ '$hostlead' = cpu_starvation ] || [ '$hostlead' = lock ]" ;;
esac
done_testing

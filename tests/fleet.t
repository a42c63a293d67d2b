#!/bin/sh
# A job's late rank across nodes (docs/design.md §7.5), as root: trainsim
# ranks, 4 ranks of one NCCL communicator on the simulated NCCL, rank 2
# starved by storage.  Two `idlegap agent`s stand for two nodes: each
# follows one cgroup (--cgroup), ranks 0-1 in one, 2-3 in the other, so
# neither sees the whole communicator and no collective is matched within
# an agent.  Debian's Prometheus scrapes both and evaluates
# deploy/prometheus/idlegap.rules.yml: the recording rule names rank 2 as
# the job's late rank, with the causes of its own GPU's idle time (storage
# first after the host's own CPU contention).
. "$(dirname "$0")/lib.sh"
. "$IG_TOP/tests/lib/prom.sh"
need_root
RULES=$IG_TOP/deploy/prometheus/idlegap.rules.yml
need_ranks_build
command -v "$PROMETHEUS" > /dev/null || skip_all "no prometheus (Debian: prometheus)"
command -v curl > /dev/null || skip_all "no curl"
CG=$(cgroup_root)
[ -d "$CG" ] || skip_all "no cgroup v2 hierarchy"
NODE_A=/idlegap-fleet-$$-a
NODE_B=/idlegap-fleet-$$-b
mkdir "$CG$NODE_A" "$CG$NODE_B" 2>/dev/null || skip_all "cannot make cgroups under $CG"

A1= A2= RANKS=
cleanup() {
	prom_stop
	for p in $RANKS; do kill "$p" 2>/dev/null; done
	for p in $A1 $A2; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rmdir "$CG$NODE_A" "$CG$NODE_B" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
plan 11

says=--cgroup one_line "--cgroup not from the root" 2 "$IG" agent --cgroup "${NODE_A#/}"
says=--cgroup one_line "--cgroup with .." 2 "$IG" agent --cgroup "$NODE_A/../x"

# agent NAME CGROUP PORT: one node's agent, continuous 2 s windows
agent() {
	"$IG" agent --cgroup "$2" --listen "127.0.0.1:$3" --window 2 --every 2 \
		--label node="$1" --reports "$TMP/reports-$1" > "$TMP/$1.out" 2>&1 &
	echo $!
}
up() {
	_i=0
	until grep -q 'agent: metrics on port' "$TMP/$1.out" || [ $_i -ge 150 ]; do
		sleep 0.1; _i=$((_i + 1))
	done
	grep -q 'agent: metrics on port' "$TMP/$1.out"
}
PA=$(prom_free_port)
PB=$(prom_free_port)
A1=$(agent a "$NODE_A" "$PA")
A2=$(agent b "$NODE_B" "$PB")
if up a && up b; then
	pass "two agents, one cgroup each, serve /metrics"
else
	fail "two agents, one cgroup each, serve /metrics"
	sed 's/^/# /' "$TMP/a.out" "$TMP/b.out"
	exit 1
fi

# the rules as shipped, evaluated every second instead of every minute
sed 's/^\(    interval:\) 1m$/\1 1s/' "$RULES" > "$TMP/rules.yml"
PROM_RULES=$TMP/rules.yml
if ! prom_start "127.0.0.1:$PA" "127.0.0.1:$PB"; then
	fail "prometheus ready"
	exit 1
fi
pass "prometheus ready at $PROM_URL, scraping both agents"

# rank R GPU CGROUP: rank R in CGROUP, given the host's GPU number GPU as
# its only one (CUDA_VISIBLE_DEVICES, as a pod or a Slurm task gets one):
# every rank calls it GPU 0, and the agent knows which GPU it is whether
# or not it saw the rank open its context
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
export TRAINSIM_NCCL_ID=$TMP/ncclid
rank() {
	RANK=$1 LOCAL_RANK=0 WORLD_SIZE=4 CUDA_VISIBLE_DEVICES=$2 \
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' rank "$CG$3" \
		"$TS" ranks -s storage --steps "${STEPS:-400}" --truth "$TMP/rank$1.truth" \
		> "$TMP/rank$1.out" 2>&1 &
	RANKS="$RANKS $!"
}
# found by each agent's sweep, every second: the job starts after both look
sleep 1
rank 0 0 "$NODE_A"
rank 1 1 "$NODE_A"
rank 2 2 "$NODE_B"
rank 3 3 "$NODE_B"
st=0
for p in $RANKS; do wait "$p" || st=$?; done
RANKS=
is "$st" 0 "the 4 ranks ran to their end"
# the last windows of the job, then their scrapes
sleep 5
# comm_rank values in an agent's exposition
seen() {
	curl -s "http://127.0.0.1:$1/metrics" |
		sed -n 's/^idlegap_collectives_ended_total{.*comm_rank="\([0-9]*\)",comm_size="4".*/\1/p' |
		sort -u | tr '\n' ' '
}
is "$(seen "$PA")/$(seen "$PB")" "0 1 /2 3 " "each agent saw its two ranks of the 4-rank communicator"
ok "no collective was matched within an agent" -- sh -c \
	"! cat '$TMP'/reports-a/*.json '$TMP'/reports-b/*.json | grep -q '\"matched\": [1-9]'"
ok "the rules recorded a late rank" -- prom_wait 'idlegap:collective_late_rank:lateness10m' 30
late=$(prom_api 'idlegap:collective_late_rank:lateness10m' \
	'print(" ".join("%s/%s@%s" % (s["metric"].get("comm_rank"), s["metric"].get("rank"), s["metric"].get("node")) for s in r))')
# the rank the others waited for, by the simulator's truth: on a busy host
# another rank may be held back as much as the starved one
truth=$(/usr/bin/python3 -c 'import json, sys
w = [json.load(open(f))["nccl"]["wait_s"] for f in sys.argv[1:]]
others = w[:2] + w[3:]
print("late" if min(range(4), key=lambda r: w[r]) == 2 and w[2] <= 0.5 * sum(others) / 3
      else "waits: " + ", ".join("rank %d %.3f s" % (r, w[r]) for r in range(4)))' \
	"$TMP"/rank0.truth.rank0 "$TMP"/rank1.truth.rank1 "$TMP"/rank2.truth.rank2 "$TMP"/rank3.truth.rank3 2>&1)
if [ "$truth" = late ]; then
	is "$late" "2/2@b" "the recording rule names rank 2 (comm_rank/RANK@node), on node b"
else
	skip "the recording rule names rank 2 (it named '$late')" \
		"the simulator's truth does not show rank 2 late on this host ($truth)"
fi
diag "each rank's mean launch-to-end time (ms): $(prom_api 'idlegap:collective_launch_to_end_seconds:mean10m' \
	'print(", ".join("rank %s %.3f" % (s["metric"]["comm_rank"], 1e3 * float(s["value"][1])) for s in sorted(r, key=lambda s: s["metric"]["comm_rank"])))')"
diag "lateness (ms): $(prom_api 'idlegap:collective_lateness_seconds:mean10m' \
	'print(", ".join("rank %s %.3f" % (s["metric"]["comm_rank"], 1e3 * float(s["value"][1])) for s in sorted(r, key=lambda s: s["metric"]["comm_rank"])))')"
diag "the simulator's peer wait per rank (s): $(for r in 0 1 2 3; do printf 'rank %s %s, ' $r "$(json "$TMP/rank$r.truth.rank$r" "round(j['nccl']['wait_s'], 3)" 2>/dev/null)"; done)"
diag "rank 2's lateness in the simulator's truth (ms per collective, the earliest rank's wait less its own): $(
	/usr/bin/python3 -c 'import json, sys
w = [json.load(open(f))["nccl"] for f in sys.argv[1:]]
print("%.3f" % (1e3 * (max(x["wait_s"] for x in w) - w[2]["wait_s"]) / w[2]["collectives"]))' \
	"$TMP"/rank0.truth.rank0 "$TMP"/rank1.truth.rank1 "$TMP"/rank2.truth.rank2 "$TMP"/rank3.truth.rank3 2>&1)"
causes=$(prom_api 'sort_desc(idlegap:collective_late_rank_idle_fraction_by_cause:rate10m)' \
	'print(" ".join("%s=%.3f" % (s["metric"]["cause"], float(s["value"][1])) for s in r))')
diag "the late rank's causes: $causes"
ok "its causes carry the late rank's labels, storage among them ($causes)" -- \
	sh -c "echo '$causes' | grep -q 'storage='"
# this host's own CPU contention (2 CPUs shared with other jobs) is a real
# cause of every rank's lateness: storage must lead the rest
lead=$(echo "$causes" | tr ' ' '\n' | grep -v '^cpu_starvation=' | head -1 | cut -d= -f1)
is "$lead" storage "storage leads the late rank's causes after the host's cpu_starvation"

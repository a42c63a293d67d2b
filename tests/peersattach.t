#!/bin/sh
# Attached to a multi-rank job already training (docs/design.md §4.9,
# "Communicators created before tracing"): trainsim ranks, 4 ranks on the
# simulated NCCL, rank 2 starved by storage, its communicator created
# before `idlegap attach` came.  The ranks' communicators are inferred
# from their calls' pattern and ends, the wait is found, the starved
# rank is stragglers[0] (its rank unknown: the probes never saw it), and
# every other rank's peer wait is within 10% of the simulator's truth
# over the collectives that arrived while attached; `idlegap top`,
# host-wide, shows the ranks' wait too.  Two jobs of the same
# shape side by side, attached together, stay two communicators: their
# calls agree, their ends do not; attached without NVML (its nvmlInit
# failing, the driver not loaded: SIMNVML_INIT_FAIL=driver), with one
# line that says so, each rank on a GPU of its own, unknown (no GPU 0 by
# default).  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
need_ranks_build
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu

# JOB WORLD: waits until the job's WORLD ranks are training (each rank's
# simulated NCCL has traced a few collectives); their pids in $pids
training() {
	pids=
	for _ in $(seq 1 300); do
		pids=$(pgrep -P $1 | sort -n | paste -sd, -)
		n=0
		for p in $(echo "$pids" | tr , ' '); do
			[ -f "$TMPDIR/trainsim-nccl.$p" ] &&
				[ "$(wc -l < "$TMPDIR/trainsim-nccl.$p")" -ge 5 ] && n=$((n + 1))
		done
		[ $n -eq $2 ] && break
		sleep 0.1
	done
	is "$n" $2 "the $2 ranks of job $1 are training before idlegap attaches"
}

MASTER_PORT=29611 "$TS" ranks --world 4 -s storage --steps 2000 -t 60 > "$TMP/job.out" 2>&1 &
job=$!
training $job 4
"$IG" attach -p "$job,$pids" -d 5 -q --json "$TMP/a.json" -o "$TMP/a.igrec" \
	2> "$TMP/attach.err"
is "$?" 0 "attach: traced the running job for 5 s"
"$IG" report --dump "$TMP/a.igrec" > "$TMP/a.txt" 2>&1
# the starved rank: the one whose simulated NCCL waited least
/usr/bin/python3 - "$TMP/a.json" "$TMP/a.txt" "$TMPDIR" "$pids" <<'PY' > "$TMP/checks" 2>&1 ||
import json, sys
j = json.load(open(sys.argv[1]))
recs = [l.split() for l in open(sys.argv[2]) if len(l.split()) > 1]
t0 = int(next(r[0] for r in recs if r[1] == "meta"))
t1 = int(next(r[0] for r in recs if r[1] == "end"))
truth, rank = {}, {}
for pid in map(int, sys.argv[4].split(",")):
    w = 0
    for l in open("%s/trainsim-nccl.%d" % (sys.argv[3], pid)):
        f = l.split()
        rank[pid] = int(f[2])
        if t0 <= int(f[7]) <= t1:
            w += int(f[8]) - int(f[7])
    truth[pid] = w / 1e9
late = min(truth, key=truth.get)
def say(ok, what): print(("ok " if ok else "bad ") + what)
say(rank[late] == 2, "the simulator's truth: rank 2 (pid %d) made the others wait" % late)
c = j["collectives"]
say(c.get("inferred_communicators") == 1 and c["matched"] >= 20,
    "one communicator inferred, %d collectives matched (%d calls without a communicator)"
    % (c["matched"], c["calls_without_communicator"]))
say(j["gpu"]["peer_wait_s"] > 0, "peer wait found: %.3f s" % j["gpu"]["peer_wait_s"])
st = j["stragglers"]
say(st and st[0]["pid"] == late and st[0]["causes"][0]["cause"] == "storage",
    "stragglers[0] is the starved rank, pid %d, storage first (%s)" % (late,
    "; ".join("pid %d rank %s: %s" % (s["pid"], s["rank"], s["causes"][0]["cause"])
              for s in st) or "none"))
say(st and st[0]["rank"] is None, "its rank unknown: the probes never saw it")
ranks = {r["pid"]: r for r in c["ranks"]}
for pid in sorted(truth):
    if pid == late:
        continue
    got = ranks[pid]["peer_wait_s"] if pid in ranks else 0
    say(abs(got - truth[pid]) <= 0.10 * truth[pid],
        "pid %d: peer wait %.3f s, truth while attached %.3f s" % (pid, got, truth[pid]))
bc = c["by_communicator"]
say(len(bc) == 4 and all(b.get("inferred") and b["size"] is None for b in bc),
    "by_communicator: 4 ranks, inferred, size unknown")
PY
	echo "bad the report could not be read: $(tail -1 "$TMP/checks")" >> "$TMP/checks"
# `idlegap top` host-wide, started after the job: each rank's line (no
# terminal: one line per row per snapshot) gives its wait for peers
timeout 30 "$IG" top -d 8 > "$TMP/top.lines" 2> "$TMP/top.err"
is "$?" 0 "top: ran host-wide for 8 s"
n=0
for p in $(echo "$pids" | tr , ' '); do
	tail -n 40 "$TMP/top.lines" | grep " pid $p " | tail -1 |
		grep -q ' rank ? peer_wait [1-9][0-9]*%' && n=$((n + 1))
done
ok "top: at least 3 of the 4 ranks show their wait for peers, rank unknown ($n)" -- test $n -ge 3
# the job's trace goes with it: stopped after the checks read it
for p in $(echo "$pids" | tr , ' ') $job; do kill "$p" 2>/dev/null; done
wait $job 2>/dev/null
while read -r verdict what; do
	if [ "$verdict" = ok ]; then pass "$what"; else fail "$what"; fi
done < "$TMP/checks"
ok "text: the inferred communicator is said so" -- \
	sh -c "'$IG' report '$TMP/a.igrec' 2>/dev/null | grep -q 'created before tracing, inferred'"

# Two 3-rank jobs of the same shape (the same all-reduce every step, rank
# 2 of each starved), attached together without NVML: two communicators,
# each of one job's ranks, every rank's GPU unknown
MASTER_PORT=29612 "$TS" ranks --world 3 -s storage --steps 2000 -t 60 > "$TMP/j1.out" 2>&1 &
j1=$!
MASTER_PORT=29613 "$TS" ranks --world 3 -s storage --steps 2000 -t 60 > "$TMP/j2.out" 2>&1 &
j2=$!
training $j1 3
p1=$pids
training $j2 3
p2=$pids
SIMNVML_INIT_FAIL=driver "$IG" attach -p "$j1,$p1,$j2,$p2" -d 6 -q --json "$TMP/b.json" \
	2> "$TMP/attach2.err"
is "$?" 0 "attach without NVML: traced both jobs for 6 s"
is "$(grep -c 'warning: NVML failed to initialise: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED, 9)' "$TMP/attach2.err"):$(grep -vc ': tracing ' "$TMP/attach2.err")" "1:1" \
	"attach without NVML: one line says why ($(grep -v ': tracing ' "$TMP/attach2.err" | head -2))"
for p in $(echo "$p1,$p2" | tr , ' ') $j1 $j2; do kill "$p" 2>/dev/null; done
wait $j1 $j2 2>/dev/null
/usr/bin/python3 - "$TMP/b.json" "$p1" "$p2" <<'PY' > "$TMP/checks2" 2>&1 ||
import json, sys
c = json.load(open(sys.argv[1]))["collectives"]
jobs = [set(map(int, a.split(","))) for a in sys.argv[2:4]]
comms = {}
for b in c["by_communicator"]:
    comms.setdefault(b["communicator"], set()).add(b["pid"])
def say(ok, what): print(("ok " if ok else "bad ") + what)
say(all(any(m <= j for j in jobs) for m in comms.values()),
    "no inferred communicator mixes the two jobs (%s)" % sorted(map(sorted, comms.values())))
say(c.get("inferred_communicators") == 2 and sorted(map(sorted, comms.values())) ==
    sorted(map(sorted, jobs)), "each job's 3 ranks are one inferred communicator")
j = json.load(open(sys.argv[1]))
ranks = set().union(*jobs)
devs = j["gpu"]["devices"]
say(all(p["device"] is None and p["ordinal"] is None for p in j["processes"] if p["pid"] in ranks) and
    sorted(d["pid"] for d in devs if d["device"] is None) == sorted(ranks) and
    all(b["device"] is None for b in c["by_communicator"]),
    "without NVML every rank's GPU is unknown, a device of its own, no ordinal (%s)" % (
        [(d["device"], d.get("pid")) for d in devs]))
PY
	echo "bad the report could not be read: $(tail -1 "$TMP/checks2")" >> "$TMP/checks2"
while read -r verdict what; do
	if [ "$verdict" = ok ]; then pass "two jobs: $what"; else fail "two jobs: $what"; fi
done < "$TMP/checks2"
done_testing

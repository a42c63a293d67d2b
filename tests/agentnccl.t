#!/bin/sh
# The agent's windows on one steady multi-rank job (docs/design.md §7.10,
# §4.9), as root: trainsim ranks, 4 ranks of one NCCL communicator on the
# simulated NCCL, started torchrun-style (RANK, WORLD_SIZE), rank 2
# starved by storage; one agent scoped to the job's cgroup, windows of 2 s
# every 3 s, so its probes come off and on again between windows.  Each
# window counts that window's calls only: a steady job gives about the
# same count in every window (no growth beyond 1.5x the first full one),
# every full window matches collectives across the 4 ranks, each rank
# numbering them as the others do, and the last full window still names
# rank 2 the late rank.  The agent runs without NVML (its nvmlInit
# failing for want of permission: SIMNVML_INIT_FAIL=permission): it says
# so in one line, and each rank, its context seen, is on /metrics under
# its own GPU (the one its context named) and its rank, none unknown.
. "$(dirname "$0")/lib.sh"
need_root
need_ranks_build
command -v curl > /dev/null || skip_all "no curl"
CG=$(cgroup_root)
[ -d "$CG" ] || skip_all "no cgroup v2 hierarchy"
JOB=/idlegap-agentnccl-$$
mkdir "$CG$JOB" 2>/dev/null || skip_all "cannot make a cgroup under $CG"

AGENT= RANKS=
cleanup() {
	for p in $RANKS; do kill "$p" 2>/dev/null; done
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	rmdir "$CG$JOB" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
plan 9

# the first window opens as the agent starts: the ranks, started at once,
# are probed before they create their communicator
export SIMNVML_INIT_FAIL=permission
start_agent "$TMP/a.out" --cgroup "$JOB" --listen 127.0.0.1:0 --window 2 --every 3 \
	--reports "$TMP/reports" -v
st=$?
unset SIMNVML_INIT_FAIL
if [ $st = 0 ]; then
	pass "the agent serves /metrics, windows of 2 s every 3 s"
else
	fail "the agent serves /metrics, windows of 2 s every 3 s"
	sed 's/^/# /' "$TMP/a.out"
	exit 1
fi

export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
export TRAINSIM_NCCL_ID=$TMP/ncclid
: > "$TMP/pids"
for r in 0 1 2 3; do
	RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 \
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' rank "$CG$JOB" \
		"$TS" ranks -s storage --steps "${STEPS:-700}" --truth "$TMP/rank$r.truth" \
		> "$TMP/rank$r.out" 2>&1 &
	RANKS="$RANKS $!"
	echo "$r $!" >> "$TMP/pids"
done
st=0
for p in $RANKS; do wait "$p" || st=$?; done
RANKS=
is "$st" 0 "the 4 ranks ran to their end"
# the window under way when the job ended, and its report
sleep 6
PORT=$(grep -o 'metrics on port [0-9]*' "$TMP/a.out" | grep -o '[0-9]*$')
curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/metrics"
is "$(grep -c 'warning: NVML failed to initialise: Insufficient Permissions (NVML_ERROR_NO_PERMISSION, 4)' "$TMP/a.out")" 1 \
	"without NVML (no permission): the agent says so in one line"
got=$(/usr/bin/python3 -c 'import re, sys
s = {(d.get("gpu"), d.get("rank")) for d in (dict(re.findall(r"(\w+)=\"([^\"]*)\"", l.split("}")[0]))
     for l in open(sys.argv[1]) if l.startswith("idlegap_gpu_seconds_total{"))}
print(" ".join("%s:%s" % x for x in sorted(s, key=str)))' "$TMP/metrics")
is "$got" "0:0 1:1 2:2 3:3" "without NVML: each rank's series under the GPU its context named (gpu:rank)"
kill "$AGENT"
wait "$AGENT"
is "$?" 0 "the agent exits 0 on SIGTERM"
AGENT=

pychecks "$TMP/reports" "$TMP/pids" "$TMP" <<'PY'
import glob, json, sys
import tap
from tap import check


def skip(name, why):
    tap._n += 1
    print("ok %d - %s # SKIP %s" % (tap._n, name, why))


reports = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/*.json"))]
pids = {int(l.split()[1]): int(l.split()[0]) for l in open(sys.argv[2])}
rank_pid = {r: p for p, r in pids.items()}
# the windows the job ran through from start to end: the first and the
# last that saw its calls may have seen only part of it
busy = [j for j in reports if j["collectives"]["calls"] > 0]
full = busy[1:-1]
calls = [j["collectives"]["calls"] for j in busy]
print("# calls per window: %s" % calls)
print("# matched per window: %s" % [j["collectives"]["matched"] for j in busy])
if not check(len(full) >= 4, "at least 4 full windows of the job (%d)" % len(full)):
    sys.exit(0)
first = full[0]["collectives"]["calls"]
check(first > 0 and all(j["collectives"]["calls"] <= 1.5 * first for j in full),
      "each window counts its own calls: none of the full windows has more "
      "than 1.5x the first's (%s)" % [j["collectives"]["calls"] for j in full])


def known(j):
    """The job's communicator as the probes saw it created: one id, 4
    ranks, not inferred."""
    ids = {(c["communicator"], c["size"], c["inferred"])
           for c in j["collectives"].get("by_communicator", [])}
    return len(ids) == 1 and list(ids)[0][1:] == (4, False)


# each rank numbers a collective as the others do: about every call of a
# full window is matched (a collective launched in it by some ranks only,
# at its edges, is not), each collective once (about as many in every
# window)
name = "collectives matched across the 4 ranks in every full window, each once"
if all(known(j) for j in full):
    m0 = full[0]["collectives"]["matched"]
    bad = [j["collectives"] for j in full
           if j["collectives"]["matched"] * 4 < 0.8 * j["collectives"]["calls"] or
           j["collectives"]["matched"] > 1.5 * m0]
    check(not bad, name + " (matched/calls: %s)" % ", ".join(
          "%d/%d" % (j["collectives"]["matched"], j["collectives"]["calls"]) for j in full))
else:
    skip(name, "the ranks were not all probed before they created their "
         "communicator (host load): %s" % [j["collectives"].get("by_communicator") for j in full][:1])
truth = [json.load(open("%s/rank%d.truth.rank%d" % (sys.argv[3], r, r)))["nccl"]["wait_s"]
         for r in range(4)]
others = truth[:2] + truth[3:]
st = full[-1].get("stragglers") or []
got = st[0]["pid"] if st else None
if min(range(4), key=lambda r: truth[r]) == 2 and truth[2] <= 0.5 * sum(others) / 3:
    check(got == rank_pid[2], "the last full window names rank 2 (pid %d) the late rank "
          "(stragglers[0]: %s)" % (rank_pid[2], got and "pid %d, rank %s" % (got, pids.get(got))))
else:
    skip("the last full window names rank 2 the late rank", "the simulator's truth does not "
         "show rank 2 late on this host (waits %s)" % ", ".join("%.3f" % w for w in truth))
PY

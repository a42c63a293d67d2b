#!/bin/sh
# Steps (docs/design.md §4.11), as root, on the simulated GPU, scored
# against trainsim's step_list (tests/lib/stepscore.py):
#  A. run: jobs with a step structure (coldshard: a cold shard every 10th
#     batch; evalstep: host work every 10th step; storage; a Python
#     loop with a multiprocessing loader and a cold shard every 10th
#     batch; 4 ranks with rank 2 straggling every 5th step): the count
#     within 1% of the truth, 99% of boundaries within 1 ms, p50 and p99
#     within 3%, 95% of the slowed steps found slow with their cause, at
#     most 5% of the slow steps not slow in truth; a fast rank's slowed
#     steps (slow in truth) whose collective rank 2 reached last by the
#     simulated NCCL's trace (on a loaded host another rank may be held
#     back more) name rank 2 late in 90%.
#  B. what-if: coldshard's prediction without storage within 10% of the
#     same job run with --no-slow.
#  C. no step structure: irregular requests get no steps, and say so.
#  D. attach 4 s into a coldshard job, and the agent's windows: the same
#     figures over the steps each report spans; partial steps apart.
#  E. --step: a Python marker is refused in one line; a driver call's
#     marker ends the steps.
. "$(dirname "$0")/lib.sh"
need_root
need_ranks_build
PY=/usr/bin/python3
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
CG=$(cgroup_root)
JOB=/idlegap-steps-$$
AGENT= JOBPID=
cleanup() {
	[ -n "$JOBPID" ] && kill "$JOBPID" 2>/dev/null
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	rmdir "$CG$JOB" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT

# run NAME ARGS...: the job under `idlegap run`, its report and truth
run() {
	_name=$1; shift
	"$IG" run --json "$TMP/$_name.json" -- "$@" --truth "$TMP/$_name.truth" \
		> "$TMP/$_name.out" 2>&1
	ok "$_name: run exits 0" -- test $? = 0
}

run coldshard "$TS" -s coldshard -q
run coldshard-noslow "$TS" -s coldshard --no-slow -q
run evalstep "$TS" -s evalstep -q
run storage "$TS" -s storage -n 300 -q
run irregular "$TS" -s irregular -q
run pyloader $PY "$IG_TOP/tools/trainsim.py" -s loader --slow-every 10 -q
SIMGPU_DEVICES=4 run ranks "$TS" ranks --world 4 -s storage --straggle-every 5 -n 200 -q

pychecks "$TMP" <<'PY'
import json, os, sys
from tap import check
from stepscore import score, steps_obj
sys.path.insert(0, os.path.join(os.environ["IG_TOP"], "tools"))
import truth as T

tmp = sys.argv[1]

def load(name):
    try:
        return (json.load(open("%s/%s.json" % (tmp, name))),
                json.load(open("%s/%s.truth" % (tmp, name))))
    except (OSError, ValueError) as e:
        return None, None

def judge(label, st, truth, slow=True, **kw):
    r = score(truth, st, **kw)
    ok = r["found"]
    check(ok, "%s: steps found (%s)" % (label, r.get("source")), r.get("why_none", ""))
    if not ok:
        return r
    ct, cf = r["count_truth"], r["count_found"]
    check(abs(cf - ct) <= max(1, 0.01 * ct),
          "%s: %d steps, the truth %d (1%%)" % (label, cf, ct))
    check(r["boundary_share"] >= 0.99,
          "%s: %.3f of boundaries within 1 ms of the truth" % (label, r["boundary_share"]))
    for q in ("p50", "p99"):
        # the truth's ends read late by the feeder's run delay widen it
        t, f = r["truth_" + q], r["found_" + q]
        lo, hi = r["truth_%s_lo" % q], r["truth_%s_hi" % q]
        check(t > 0 and 0.97 * lo <= f <= 1.03 * hi,
              "%s: %s %.2f ms, the truth %.2f ms (%.2f-%.2f with its ends' run delay; "
              "3%%)" % (label, q, f * 1e3, t * 1e3, lo * 1e3, hi * 1e3))
    if slow and r["slow_truth"]:
        check(r["slow_recall"] >= 0.95,
              "%s: %.3f of %d slowed steps slow with their cause" %
              (label, r["slow_recall"], r["slow_truth"]), "missed %s" % r["slow_missed"])
        check(r["slow_false_share"] <= 0.05,
              "%s: %.3f of %d slow steps not slow in truth" %
              (label, r["slow_false_share"], r["slow_found"]), "%s" % r["slow_false"])
    return r

for name in ("coldshard", "evalstep", "storage", "pyloader"):
    rep, tr = load(name)
    if rep is None:
        check(False, "%s: report and truth read" % name)
        continue
    judge(name, steps_obj(rep), tr, slow=bool(tr.get("slow_steps")))

# 4 ranks: each rank's steps in its device's entry; the fast ranks'
# slowed steps wait for rank 2, and say so
rep, tr = load("ranks")
if rep is None:
    check(False, "ranks: report and truth read")
else:
    arr = T.nccl_arrivals([r["nccl"]["trace_file"] for r in tr["ranks"]
                           if r.get("nccl", {}).get("trace_file")])
    check(arr, "ranks: the simulated NCCL's trace read (%d collectives)" % len(arr))
    for rt in tr["ranks"]:
        k = rt["rank"]
        st = steps_obj(rep, rt.get("local_rank", k))
        r = judge("ranks: rank %d" % k, st, rt, arrivals=arr, late=tr["straggler"])
        if k != tr["straggler"] and st and st.get("found"):
            print("# ranks: rank %d: of its slowed steps slow in truth, rank %d reached the "
                  "collective last in %d; another rank in %s" % (
                      k, tr["straggler"], r["late_truth"], r["late_other"]))
            check(r["late_truth"] > 0 and r["late_named"] >= 0.9 * r["late_truth"],
                  "ranks: rank %d's slow steps name rank %d late (%d of the %d it reached "
                  "last)" % (k, tr["straggler"], r["late_named"], r["late_truth"]))

# B. what-if against the same job without the stall
rep, tr = load("coldshard")
rn, tn = load("coldshard-noslow")
if rep and rn:
    wi = [w for w in rep["steps"]["what_if"] if w["cause"] == "storage"]
    ws = [s for s in tn["step_list"][1:]]
    meas = sum(s["end_ns"] - s["start_ns"] for s in ws) / len(ws) / 1e9
    check(wi and abs(wi[0]["step_mean_without_s"] - meas) <= 0.10 * meas,
          "what-if: coldshard without storage %.2f ms a step, measured %.2f ms (10%%)" %
          (wi[0]["step_mean_without_s"] * 1e3 if wi else -1, meas * 1e3))
    check(rep["steps"]["what_if_method"].startswith("first-order estimate"),
          "what-if: labelled an estimate")
    st = steps_obj(rn)
    check(st["found"] and not [x for x in st["list"] if x["slow"] and x["cause"] == "storage"],
          "what-if: the run without the stall has no slow storage step")

# C. no step structure
rep, tr = load("irregular")
if rep:
    st = rep["steps"]
    check(tr["step_structure"] is False and not st["found"] and st["count"] == 0
          and not st["list"], "irregular: no steps (%s)" % st.get("why_none"))
    check(all(not d["steps"]["found"] for d in rep["gpu"]["devices"]),
          "irregular: no device has steps")
PY
grep -q "^Steps: .* whole" "$TMP/coldshard.out"
ok "coldshard: the text report has its steps section" -- test $? = 0
grep -q "^Steps: none found (no repeating" "$TMP/irregular.out"
ok "irregular: the text report says no steps were found" -- test $? = 0

# D. attach 4 s into a coldshard job; the agent's windows on another
"$TS" -s coldshard -n 1500 -q --truth "$TMP/attach.truth" > "$TMP/job.out" 2>&1 &
JOBPID=$!
sleep 4
"$IG" attach -p $JOBPID -d 8 --json "$TMP/attach.json" > "$TMP/attach.out" 2>&1
ok "attach: exits 0" -- test $? = 0
wait $JOBPID
JOBPID=
# the agent kept to the job's cgroup: the host's other GPU processes
# are not this test's
mkdir "$CG$JOB" 2>/dev/null
sh -c 'echo $$ > "$1/cgroup.procs" 2>/dev/null; shift; exec "$@"' job "$CG$JOB" \
	"$TS" -s coldshard -n 1500 -q --truth "$TMP/agent.truth" > "$TMP/job2.out" 2>&1 &
JOBPID=$!
mkdir "$TMP/rep"
scope=
[ -d "$CG$JOB" ] && scope="--cgroup $JOB"
# shellcheck disable=SC2086
start_agent "$TMP/agent.out" $scope --listen 127.0.0.1:0 --window 3 --every 3 --reports "$TMP/rep"
ok "agent: starts" -- test $? = 0
wait $JOBPID
JOBPID=
sleep 3
PORT=$(sed -n 's/.*metrics on port \([0-9]*\).*/\1/p' "$TMP/agent.out" | head -1)
curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/metrics.txt"
stop_agent
pychecks "$TMP" <<'PY'
import glob, json, sys
from tap import check
from stepscore import score, steps_obj

tmp = sys.argv[1]
tr = json.load(open(tmp + "/attach.truth"))
rep = json.load(open(tmp + "/attach.json"))
st = rep["steps"]
r = score(tr, st)
check(st["found"] and r["count_truth"] > 100 and
      abs(r["count_found"] - r["count_truth"]) <= max(1, 0.01 * r["count_truth"]),
      "attach: %s steps over the window, the truth %s" % (r.get("count_found"), r.get("count_truth")))
# the last step is partial, or tracing stopped just after a boundary (the
# idle gap after it, still open then, is idle_open, in no step): a whole
# last step ends where a truth step does
last = st["list"][-1] if st["found"] else None
tends = [t["end_ns"] for t in tr["step_list"]]
check(st["found"] and st["list"][0]["partial"] and
      (last["partial"] or min(abs(e - last["end_ns"]) for e in tends) <= 1000000),
      "attach: the steps cut by the window's start and end are partial")
check(r.get("boundary_share", 0) >= 0.99,
      "attach: %.3f of boundaries within 1 ms" % r.get("boundary_share", 0))
for q in ("p50", "p99"):
    # the truth's ends read late by the feeder's run delay widen it, as
    # in part A
    t, f = r.get("truth_" + q, 0), r.get("found_" + q, 0)
    lo, hi = r.get("truth_%s_lo" % q, 0), r.get("truth_%s_hi" % q, 0)
    check(t > 0 and 0.97 * lo <= f <= 1.03 * hi,
          "attach: %s %.2f ms, the truth %.2f ms (%.2f-%.2f with its ends' run delay; "
          "3%%)" % (q, f * 1e3, t * 1e3, lo * 1e3, hi * 1e3))
if r.get("slow_truth"):
    check(r["slow_recall"] >= 0.95, "attach: %.3f of slowed steps slow with their cause"
          % r["slow_recall"], "%s" % r["slow_missed"])

tr = json.load(open(tmp + "/agent.truth"))
pid = tr["pids"]["feeder"]
wins = [json.load(open(f)) for f in sorted(glob.glob(tmp + "/rep/*.json"))]
# the agent sees every GPU process of the host: the job's own steps
wins = [s for s in (steps_obj(w, pid=pid) for w in wins) if s and s["found"]]
check(len(wins) >= 3, "agent: %d windows found the job's steps" % len(wins))
share = [score(tr, s).get("boundary_share", 0) for s in wins]
check(wins and min(share) >= 0.99,
      "agent: every window's boundaries within 1 ms (least %.3f)" % (min(share) if share else 0))
rs = [score(tr, s) for s in wins]
nin = sum(r["slow_truth"] for r in rs)
hit = sum(r["slow_recall"] * r["slow_truth"] for r in rs if r["slow_truth"])
check(nin and hit >= 0.95 * nin, "agent: %d of %d slowed steps slow with their cause"
      % (hit, nin), "%s" % [r["slow_missed"] for r in rs])
partial = all(s["list"][0]["partial"] for s in wins)
check(partial, "agent: each window's first step is partial")
m = open(tmp + "/metrics.txt").read()
count = [l for l in m.splitlines() if l.startswith("idlegap_step_seconds_count{")]
check(count and sum(float(l.split()[-1]) for l in count) > 100,
      "agent: idlegap_step_seconds counts the whole steps", "%s" % count)
check('idlegap_step_idle_seconds_total{' in m and 'cause="storage"' in m,
      "agent: idlegap_step_idle_seconds_total has storage")
PY

# E. --step
"$IG" report --step python:train.py:step "$TMP/none.igrec" 2> "$TMP/err"
is "$?" 2 "--step python: is refused, exit 2"
head -1 "$TMP/err" | grep -q "a Python function as the step's end is not supported"
ok "--step python: says why in its first line" -- test $? = 0
"$IG" run --step cuda:cuStreamSynchronize --json "$TMP/marker.json" -- \
	"$TS" -s healthy -n 60 -k 4 -d 500 -q > /dev/null 2>&1
is "$(json "$TMP/marker.json" "j['steps']['source']")" "marker:cuda:cuStreamSynchronize" \
	"--step cuda:cuStreamSynchronize: the steps end at its returns"
done_testing

#!/bin/sh
# The trainsim workloads on the simulated driver: one short run per
# scenario writes valid ground truth, and tools/truth.py scores synthetic
# and real traces correctly.  Needs no root.
. "$(dirname "$0")/lib.sh"

TS=$IG_TOP/build/trainsim
PY=$IG_TOP/tools/trainsim.py
TRUTH=$IG_TOP/tools/truth.py
[ -x "$TS" ] && [ -f "$IG_TOP/build/simgpu/libcuda.so.1" ] || \
	skip_all "build first: make all"

export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
export TMPDIR=$TMP		# trainsim's own trace files land here
unset SIMGPU_TRACE
DATA="--data $TMP/data --data-mb 4"

# truth.py's arithmetic on synthetic traces and reports.
out=$("$TRUTH" selftest 2>&1)
rc=$?
echo "$out" | grep -v '^ok' | sed 's/^/# /'
is "$rc" 0 "truth.py selftest"

# check_truth FILE SCENARIO CAUSE STEPS MIN_IDLE MAX_IDLE: the ground truth
# is complete and the idle share is where the scenario puts it.
check_truth() {
	/usr/bin/python3 - "$@" <<'EOF'
import json, os, sys
f, scen, cause, steps, lo, hi = sys.argv[1:]
j = json.load(open(f))
g = j["gpu"]
errs = []
want = None if cause == "none" else cause
if j["scenario"] != scen: errs.append("scenario %r" % j["scenario"])
if j["expected_cause"] != want: errs.append("cause %r" % j["expected_cause"])
if j["steps"] != int(steps): errs.append("steps %r" % j["steps"])
if not j["simulated"]: errs.append("not simulated")
if not (g["ops"] > 0 and g["busy_s"] > 0): errs.append("no GPU work")
if g["span_end_ns"] <= g["span_start_ns"]: errs.append("empty span")
span = (g["span_end_ns"] - g["span_start_ns"]) / 1e9
if abs(g["busy_s"] + g["idle_s"] - span) > 1e-5: errs.append("busy+idle != span")
# the oracle (the kernel's accounting in the truth): the time the
# feeding threads waited for a CPU starves even a healthy job's GPU on a
# loaded host, so it widens the bound by its share of the wall time
acc = j.get("accounting") or {}
wait = sum(t["run_delay_ns"] for t in acc.get("threads", [])
           if t.get("role") in ("feeder", "worker"))
slack = min(1.0, wait / acc["wall_ns"]) if acc.get("wall_ns") else 0.0
if not (float(lo) <= g["idle_share"] <= float(hi) + slack):
    errs.append("idle share %.3f outside [%s, %s + %.3f, the feeding threads' run delay"
                " share]" % (g["idle_share"], lo, hi, slack))
if not j["trace_files"] or not all(os.path.exists(t) for t in j["trace_files"]):
    errs.append("trace files %r" % j["trace_files"])
if j["pids"]["feeder"] <= 0: errs.append("pids")
# every step in step_list, in order, the cause in each alike
L = j.get("step_list") or []
if len(L) != j["steps"]: errs.append("step_list has %d steps" % len(L))
if [s["index"] for s in L] != list(range(len(L))): errs.append("step indices")
if any(s["end_ns"] <= s["start_ns"] for s in L): errs.append("a step ends before it starts")
if any(b["start_ns"] < a["end_ns"] for a, b in zip(L, L[1:])): errs.append("steps overlap")
if any(s["cause"] != want for s in L): errs.append("a step's cause is not %r" % want)
if j.get("slow_steps") != [] or j.get("step_structure") is not True:
    errs.append("slow_steps %r, step_structure %r" % (j.get("slow_steps"), j.get("step_structure")))
for e in errs: print("# " + e)
sys.exit(1 if errs else 0)
EOF
}

# One short run per scenario; the idle bounds are loose on purpose.
while read -r scen cause args; do
	f=$TMP/$scen.json
	"$TS" -s "$scen" $DATA $args -q --truth "$f" 2>"$TMP/err"
	rc=$?
	sed 's/^/# /' "$TMP/err"
	is "$rc" 0 "trainsim $scen runs"
	steps=$(echo "$args" | sed -n 's/.*-n \([0-9]*\).*/\1/p')
	if [ "$scen" = healthy ]; then lo=0; hi=0.3; else lo=0.2; hi=1; fi
	ok "trainsim $scen: ground truth" -- check_truth "$f" "$scen" "$cause" "$steps" $lo $hi
done <<EOF
healthy none -n 15
storage storage -n 20
pagefault page_fault -n 20
cpu cpu_starvation -n 15
lock lock -n 8
network network -n 15
launch cuda_api -n 4
sync_copy cuda_api -n 4 --copy-mb 16
EOF

# Loader variants: threads and the shared-memory ring, --no-sync, and a
# per-thread default stream.
"$TS" -s healthy $DATA -n 10 --threads --queue shm --stream ptds -q \
	--truth "$TMP/variant.json"
is "$?" 0 "trainsim: threads + shm queue + per-thread stream"
ok "trainsim: variant ground truth" -- check_truth "$TMP/variant.json" healthy none 10 0 0.5
"$TS" -s healthy $DATA -n 10 --no-sync -q --truth "$TMP/nosync.json"
is "$?" 0 "trainsim: --no-sync"
is "$(json "$TMP/nosync.json" 'j["gpu"]["idle_share"] < 0.2')" True \
	"trainsim: --no-sync keeps the GPU fed"

# check_steps FILE STEPS EVERY CAUSE: step_list holds STEPS steps in order,
# every EVERY'th slowed on purpose with CAUSE (EVERY 0: none slowed, every
# cause null, no cause expected; all: CAUSE in every step alike, none
# slowed beyond the others) and measurably slower: the median of the
# slowed at least 1.5 times the median of the others.  A ranks truth:
# each rank's, CAUSE the straggler's, peer_wait the others' (late_rank
# the straggler).
check_steps() {
	/usr/bin/python3 - "$@" <<'EOF'
import json, statistics, sys
f, steps, every, cause = sys.argv[1:5]
alike = every == "all"
steps, every = int(steps), 0 if alike else int(every)
cause = None if cause == "none" else cause
doc = json.load(open(f))
errs = []
ranks = doc["ranks"] if doc.get("mode") == "ranks" else [doc]
for j in ranks:
    who = "rank %d: " % j["rank"] if "rank" in j else ""
    L = j.get("step_list") or []
    slow = [i for i in range(steps) if every and (i + 1) % every == 0]
    if j.get("step_structure") is not True: errs.append(who + "no step structure")
    if len(L) != steps or j["steps"] != steps: errs.append(who + "%d steps listed" % len(L))
    if [s["index"] for s in L] != list(range(len(L))): errs.append(who + "indices")
    if any(s["end_ns"] <= s["start_ns"] for s in L): errs.append(who + "a step ends before it starts")
    if any(b["start_ns"] < a["end_ns"] for a, b in zip(L, L[1:])): errs.append(who + "steps overlap")
    if j.get("slow_steps") != slow: errs.append(who + "slow_steps %r" % j.get("slow_steps"))
    if not every and not alike and j.get("expected_cause") is not None:
        errs.append(who + "--no-slow, expected cause %r" % j["expected_cause"])
    want, late = cause, None
    if "rank" in j and j["rank"] != doc["straggler"]:
        want, late = "peer_wait", doc["straggler"]
    for s in L:
        hit = alike or s["index"] in slow
        c = want if hit else None
        if s["cause"] != c or s.get("late_rank") != (late if hit else None):
            errs.append(who + "step %d: cause %r late_rank %r" % (s["index"], s["cause"], s.get("late_rank")))
            break
    if slow and len(L) == steps:
        d = [s["end_ns"] - s["start_ns"] for s in L]
        a = statistics.median(d[i] for i in slow)
        b = statistics.median(d[i] for i in range(steps) if i not in slow)
        print("# %smedian step %.1f ms slowed, %.1f ms others" % (who, a / 1e6, b / 1e6))
        if a < 1.5 * b: errs.append(who + "slowed steps not slower")
for e in errs: print("# " + e)
sys.exit(1 if errs else 0)
EOF
}

# Jobs that slow only some steps, and the same jobs with --no-slow: NAME
# CAUSE EVERY COMMAND...
while read -r name cause every cmd; do
	f=$TMP/steps-$name.json
	# shellcheck disable=SC2086
	$cmd -q --truth "$f" 2>"$TMP/err"
	rc=$?
	sed 's/^/# /' "$TMP/err"
	is "$rc" 0 "$name runs"
	steps=$(echo "$cmd" | sed -n 's/.*-n \([0-9]*\).*/\1/p')
	ok "$name: step_list" -- check_steps "$f" "$steps" "$every" "$cause"
done <<EOF
coldshard storage 10 $TS -s coldshard $DATA -n 40
coldshard_no_slow none 0 $TS -s coldshard $DATA -n 20 --no-slow
evalstep host_compute 5 $TS -s evalstep $DATA -n 20 --slow-every 5
evalstep_no_slow none 0 $TS -s evalstep $DATA -n 10 --no-slow
ranks_compute_every none 5 $TS ranks --world 3 -s compute $DATA -n 20 --straggle-every 5
ranks_storage_every storage 5 $TS ranks --world 3 -s storage $DATA -n 20 --straggle-every 5
ranks_storage_no_slow none 0 $TS ranks --world 3 -s storage $DATA -n 10 --straggle-every 5 --no-slow
py_loader_every storage 5 $PY -s loader -n 20 --slow-every 5
py_loader_no_slow none 0 $PY -s loader -n 10 --no-slow
ranks_compute none all $TS ranks --world 3 -s compute $DATA -n 6
py_ranks_compute none all $PY ranks --world 3 -s compute -n 6
EOF
"$TS" -s healthy $DATA -n 2 --slow-every 3 -q 2>/dev/null
is "$?" 2 "trainsim: --slow-every on a scenario that slows no steps exits 2"
"$TS" ranks --world 2 -s cpu $DATA -n 2 --straggle-every 3 -q 2>/dev/null
is "$?" 2 "trainsim ranks: --straggle-every on cpu exits 2"

# irregular: requests with no step structure; the same run from the same
# seed (the simulated GPU's ops, their kinds and durations), another from
# another seed
for seed in 3 3 4; do
	"$TS" -s irregular $DATA -n 15 --seed $seed -q --truth "$TMP/irr.json" &&
		/usr/bin/python3 - "$TMP/irr.json" <<'EOF' >> "$TMP/irr.ops"
import json, sys
j = json.load(open(sys.argv[1]))
ops = [l.split() for l in open(j["trace_files"][0])]
print(j["step_structure"], j["steps"], len(j["step_list"]), j["slow_steps"],
      "".join("%s:%d," % (o[0], int(o[3]) - int(o[2])) for o in ops))
EOF
done
is "$(cut -d' ' -f1-4 "$TMP/irr.ops" | sort -u)" "False 15 15 []" \
	"trainsim irregular: 15 requests, step_structure false"
is "$(cut -d' ' -f5 "$TMP/irr.ops" | uniq | wc -l)" 2 \
	"trainsim irregular: a seed's requests are the same, another's not"

# truth.py agrees with trainsim on the same trace, and scores a report
# that marks exactly the true gaps as perfect.
tf=$(json "$TMP/storage.json" 'j["trace_files"][0]')
is "$("$TRUTH" union "$tf" | /usr/bin/python3 -c 'import json,sys
u = json.load(sys.stdin); t = json.load(open(sys.argv[1]))["gpu"]
print(abs(u["busy_s"] - t["busy_s"]) < 1e-6 and abs(u["idle_s"] - t["idle_s"]) < 1e-6)' \
	"$TMP/storage.json")" True "truth.py union matches trainsim"
/usr/bin/python3 - "$tf" "$TMP/report.json" "$IG_TOP/tools" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[3])
import truth
# the intervals exactly as the scorer reads them, so that a line it skips
# cannot make a gap here that it does not see
busy = truth.merge(truth.read_traces([sys.argv[1]])[1])
gaps = [{"start_ns": a, "end_ns": b, "tid": 1} for a, b in truth.holes(busy)]
json.dump({"gpu": {"gap_list": gaps, "unresolved_list": [],
                   "span_start_ns": busy[0][0], "span_end_ns": busy[-1][1]}},
          open(sys.argv[2], "w"))
EOF
mkdir -p "$TMP/g" && cp "$tf" "$TMP/g/trace.1"
"$TRUTH" score --truth "$TMP/g/trace.*" --report "$TMP/report.json" \
	> "$TMP/score.json"
is "$?" 0 "truth.py score runs on a glob"
pr=$(json "$TMP/score.json" '(j["precision"], j["recall"])')
is "$pr" "(1.0, 1.0)" "truth.py score: exact gaps score 1/1"
[ "$pr" = "(1.0, 1.0)" ] || { sed 's/^/# /' "$TMP/score.json"; wc -l "$tf" "$TMP/g/trace.1" | sed 's/^/# /'; }

# Without --truth, a trace file trainsim chose itself is removed.
before=$(ls "$TMP" | grep -c '^trainsim-trace\.')
"$TS" -s healthy $DATA -n 3 -q
after=$(ls "$TMP" | grep -c '^trainsim-trace\.')
is "$after" "$before" "trainsim: leaves no stray trace file"
"$TS" --scenario nope >/dev/null 2>&1
is "$?" 2 "trainsim: bad usage exits 2"

# The Python variant: GIL contention, and its healthy baseline.
"$PY" -s gil -n 20 -q --truth "$TMP/gil.json"
is "$?" 0 "trainsim.py gil runs"
ok "trainsim.py gil: ground truth" -- check_truth "$TMP/gil.json" gil gil 20 0.2 1
"$PY" -s healthy -n 10 -q --truth "$TMP/pyhealthy.json"
is "$?" 0 "trainsim.py healthy runs"
ok "trainsim.py healthy: ground truth" -- check_truth "$TMP/pyhealthy.json" healthy none 10 0 0.3

done_testing

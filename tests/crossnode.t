#!/bin/sh
# Two nodes (docs/design.md §4.9, §7.4): the 4 ranks of one communicator
# traced by two separate `idlegap run`s of 2 ranks each, one recording's
# clock moved 5 ms ahead (tools/recshift.py), merged by `idlegap report
# A B`: the offset is recovered within 1 ms and stated with its error,
# every all-reduce is matched across the recordings, the straggler and
# each rank's peer wait are those of a single run of all 4 ranks (within
# 10% of the simulator's truth, as tests/peers.t asks of that run), the
# ranks keep their hosts' pids and GPUs of their own.  Recordings without
# matched collectives, corrupt, truncated or repeated ones are refused
# with one line.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
TS=$IG_TOP/build/trainsim
[ -x "$TS" ] && [ -f "$IG_TOP/build/simgpu/libnccl.so.2" ] ||
	skip_all "build first: make all test-progs"
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
STEPS=${STEPS:-60}
SHIFT=5000000

# half FIRST TRUTH: ranks FIRST and FIRST+1 of 4, as a node's launcher
# starts them (LOCAL_RANK 0 and 1), the NCCL id shared through a file
cat > "$TMP/half.sh" <<'SH'
#!/bin/sh
f=$1
for r in $f $((f + 1)); do
	RANK=$r LOCAL_RANK=$((r - f)) WORLD_SIZE=4 TRAINSIM_NCCL_ID=$ID \
		"$TS" ranks --world 4 -s storage --steps "$STEPS" --truth "$2" &
done
wait
SH
chmod +x "$TMP/half.sh"
export TS STEPS ID="$TMP/ncclid"

"$IG" run -q --json "$TMP/single.json" -- "$TS" ranks --world 4 -s storage \
	--steps "$STEPS" --truth "$TMP/single.truth" > "$TMP/single.out" 2>&1
ok "a single run of the 4 ranks" -- test -s "$TMP/single.json"

"$IG" run -q -o "$TMP/A.igrec" -- "$TMP/half.sh" 0 "$TMP/t" > "$TMP/A.out" 2>&1 &
a=$!
"$IG" run -q -o "$TMP/B.igrec" -- "$TMP/half.sh" 2 "$TMP/t" > "$TMP/B.out" 2>&1
rb=$?
wait $a
ra=$?
ok "two runs of 2 ranks each (exit $ra, $rb)" -- test $ra = 0 -a $rb = 0
ok "B's clock moved 5 ms ahead" -- /usr/bin/python3 "$IG_TOP/tools/recshift.py" \
	"$TMP/B.igrec" "$TMP/B5.igrec" $SHIFT

"$IG" report --json "$TMP/merged.json" "$TMP/A.igrec" "$TMP/B5.igrec" \
	> "$TMP/merged.txt" 2> "$TMP/merged.err"
is "$?" 0 "report A B5 merges them"
ok "the text report states the offset and its error" -- \
	grep -q 'offset -0.00[0-9]* s +/- [0-9.]* s from [0-9]* collective ends' "$TMP/merged.txt"

pychecks "$TMP/merged.json" "$TMP/single.json" "$TMP/t" "$STEPS" "$SHIFT" <<'PY'
import json, re, sys
from tap import check
m = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
tpre, steps, shift = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]) / 1e9
def truth(r):
    t = open("%s.rank%d" % (tpre, r)).read()
    return (float(re.search(r'"wait_s": ([0-9.]+)', t).group(1)),
            int(re.search(r'"feeder": ([0-9]+)', t).group(1)))
ca = m["clock_alignment"]
check(len(ca) == 2 and ca[0]["offset_s"] == 0 and not ca[1]["given"],
      "clock_alignment: the first recording is the reference, the second estimated")
check(abs(ca[1]["offset_s"] + shift) <= 0.001,
      "offset recovered within 1 ms: %.6f s (moved %.6f s)" % (ca[1]["offset_s"], shift))
check(0 <= ca[1]["error_s"] <= 0.001 and ca[1]["collectives"] >= steps * 9 // 10,
      "error %.6f s stated, from %d matched collective ends" % (ca[1]["error_s"], ca[1]["collectives"]))
c = m["collectives"]
check(c["matched"] == steps and c["unmatched_calls"] == 0,
      "every all-reduce matched across the recordings (%d of %d, %d unmatched)"
      % (c["matched"], steps, c["unmatched_calls"]))
devs = sorted(d["device"] for d in m["gpu"]["devices"])
check(len(devs) == 4, "4 GPUs, the second host's their own: %s" % devs)
ranks = {r["rank"]: r for r in c["ranks"]}
check(sorted(ranks) == [0, 1, 2, 3], "the 4 ranks: %s" % sorted(ranks))
check(all(ranks[r]["pid"] == truth(r)[1] for r in ranks),
      "each rank named by its pid on its host: %s" % {r: ranks[r]["pid"] for r in ranks})
def late_truth(texts):
    """The simulator's truth: per rank, the time the others waited for it
    (each rank's NCCL trace: its arrival, the last arrival)."""
    coll, late = {}, {}
    for r, t in enumerate(texts):
        for line in open(re.search(r'"trace_file": "([^"]+)"', t).group(1)):
            f = line.split()
            coll.setdefault(int(f[4]), {})[r] = int(f[7])
    for rs in coll.values():
        last = max(rs.values())
        L = min(r for r in rs if rs[r] == last)
        late[L] = late.get(L, 0) + sum(last - a for a in rs.values()) / 1e9
    return late
lt = late_truth([open("%s.rank%d" % (tpre, r)).read() for r in range(4)])
single_truth = json.load(open(sys.argv[2].replace(".json", ".truth")))
lts = late_truth([json.dumps(r) for r in single_truth["ranks"]])
top, tops = max(lt, key=lt.get), max(lts, key=lts.get)
st, ss = m["stragglers"], s["stragglers"]
check(st and st[0]["rank"] == top and abs(st[0]["late_s"] - lt[top]) <= 0.10 * lt[top],
      "merged: stragglers[0] is the truth's latest rank, late within 10%% (rank %s, %.3f s; "
      "truth %s)" % (st and st[0]["rank"], st and st[0]["late_s"],
      {r: round(v, 3) for r, v in sorted(lt.items())}))
check(ss and ss[0]["rank"] == tops, "single run: stragglers[0] is its truth's latest rank "
      "(rank %s; truth %s)" % (ss and ss[0]["rank"], {r: round(v, 3) for r, v in sorted(lts.items())}))
if top != 2 or tops != 2:
    print("# the host did not hold rank 2 back the most in both jobs (latest: merged job "
          "%d, single job %d)" % (top, tops))
print("# straggler causes: merged %s; single %s" % (
      st and [(c["cause"], c["share"]) for c in st[0]["causes"][:2]],
      ss and [(c["cause"], c["share"]) for c in ss[0]["causes"][:2]]))
check(st and st[0]["pid"] == truth(st[0]["rank"])[1] and st[0]["host"],
      "the straggler's pid on its host and its host named (%s on %s)"
      % (st and st[0]["pid"], st and st[0]["host"]))
sr = {r["rank"]: r for r in s["collectives"]["ranks"]}
st1 = {r["rank"]: r["nccl"]["wait_s"] for r in json.load(open(sys.argv[2].replace(".json", ".truth")))["ranks"]}
for r in (0, 1, 3):
    got, want = ranks[r]["peer_wait_s"], truth(r)[0]
    sgot = sr.get(r, {}).get("peer_wait_s", -1)
    check(abs(got - want) <= 0.10 * want and abs(sgot - st1[r]) <= 0.10 * st1[r],
          "rank %d: peer wait merged %.3f s (truth %.3f s), single run %.3f s (truth %.3f s)"
          % (r, got, want, sgot, st1[r]))
PY

# refusals: one line, non-zero, nothing on stdout, no JSON left behind
rep() { "$IG" report --json "$TMP/r.json" "$@" > "$TMP/r.out"; }
refuse() {
	_what=$1; shift
	rm -f "$TMP/r.json"
	one_line "$_what" 1 rep "$@"
	ok "$_what: nothing printed, no JSON" -- test ! -s "$TMP/r.out" -a ! -e "$TMP/r.json"
}
"$IG" run -q -o "$TMP/plain.igrec" -- "$TS" -s storage --steps 5 > /dev/null 2>&1
says="no collective ends in both" refuse "no matched collectives" "$TMP/A.igrec" "$TMP/plain.igrec"
"$IG" report -q --json "$TMP/given.json" --clock-offset "$TMP/plain.igrec=0.25" \
	"$TMP/A.igrec" "$TMP/plain.igrec" 2> "$TMP/given.err"
is "$?" 0 "with --clock-offset FILE=SECONDS they merge"
ok "the offset given is stated" -- grep -q '"offset_s":0.25,.*"given":true\|"offset_s": 0.25' "$TMP/given.json"
says="same run" refuse "a recording given twice" "$TMP/A.igrec" "$TMP/A.igrec"

size=$(stat -c %s "$TMP/B5.igrec")
head -c $((size / 2)) "$TMP/B5.igrec" > "$TMP/cut.igrec"
says="cut.igrec" refuse "a truncated recording among them" "$TMP/A.igrec" "$TMP/cut.igrec"
cp "$TMP/B5.igrec" "$TMP/bad.igrec"
printf 'XXXXXXXX' | dd of="$TMP/bad.igrec" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
says="bad.igrec" refuse "a corrupt recording among them" "$TMP/bad.igrec" "$TMP/A.igrec"
printf 'not a recording' > "$TMP/junk.igrec"
says="junk.igrec" refuse "a file that is no recording among them" "$TMP/A.igrec" "$TMP/junk.igrec"
"$IG" report -q --partial --json "$TMP/part.json" "$TMP/A.igrec" "$TMP/cut.igrec" 2>/dev/null
ok "--partial merges what the truncated one holds (complete: false)" -- \
	grep -q '"complete": false' "$TMP/part.json"
"$IG" report --dump "$TMP/A.igrec" "$TMP/B.igrec" > "$TMP/r.out" 2> "$TMP/err"
ok "--dump takes one recording (exit 2, nothing printed)" -- \
	test $? = 2 -a ! -s "$TMP/r.out" -a "$(grep -c 'dump takes one recording' "$TMP/err")" = 1
done_testing

#!/bin/sh
# Same answers with the evidence folded as it ages (docs/design.md §3.5,
# §4.10): a report whose estimate closes a block every second (and every
# 1,024 launches), folding each block's launches, syncs and unresolved
# spans into sums, gives the same proven busy, idle, unresolved time and
# causes as the whole-run report, to 1 ms each; the estimate may move,
# and the diagnostics say by how much.  On the recordings the bench reads
# (tests/fuzz/corpus, no root needed) and, as root, on a 10 s storage job
# as the bench records it, and on a 20 s launch-heavy `run --every 2`
# whose own final report (its estimate folded every 2 s) is compared with
# the whole-run report of its recording.
. "$(dirname "$0")/lib.sh"
TS=$IG_TOP/build/trainsim
SIM=$IG_TOP/build/simgpu
[ -x "$IG" ] || skip_all "build first: make all test-progs"

# same NAME WHOLE.json FOLDED.json: proven figures to 1 ms, the estimate
# reported
same() {
	pychecks "$1" "$2" "$3" <<'PY'
import json, sys
from tap import check
name, a, b = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
ga, gb = a["gpu"], b["gpu"]
bad = ["%s %.6f/%.6f" % (k, ga[k], gb[k])
       for k in ("busy_s", "idle_s", "unresolved_s", "idle_open_s",
                 "unresolved_host_bound_s", "unresolved_gpu_bound_s")
       if abs(ga[k] - gb[k]) > 0.001]
ca = {c["cause"]: c["seconds"] for c in a["causes"]}
cb = {c["cause"]: c["seconds"] for c in b["causes"]}
bad += ["cause %s %.6f/%.6f" % (c, ca.get(c, 0), cb.get(c, 0))
        for c in set(ca) | set(cb) if abs(ca.get(c, 0) - cb.get(c, 0)) > 0.001]
check(not bad, "%s: proven busy, idle, unresolved and causes the same to 1 ms" % name,
      "; ".join(bad))
fa, fb = ga.get("idle_estimated_s"), gb.get("idle_estimated_s")
blocks = b["events"]["evidence_folded"]["estimate_blocks"]
if fa is not None and fb is not None:
    print("# %s: estimated idle %.4f s whole (%.4f-%.4f), %.4f s folded in %d blocks"
          " (%.4f-%.4f): %+.4f s, %.1f%% of the unresolved time" % (
              name, fa, ga["idle_estimated_low_s"], ga["idle_estimated_high_s"], fb,
              blocks, gb["idle_estimated_low_s"], gb["idle_estimated_high_s"], fb - fa,
              100 * (fb - fa) / max(ga["unresolved_s"], 1e-9)))
else:
    print("# %s: estimate whole %s, folded %s (%s / %s)" % (
        name, fa, fb, ga.get("estimate_refused"), gb.get("estimate_refused")))
PY
}

for rec in "$IG_TOP"/tests/fuzz/corpus/*.igrec; do
	n=$(basename "$rec" .igrec)
	"$IG" report -q --json "$TMP/$n.whole.json" "$rec" 2> /dev/null
	"$IG" report -q --json "$TMP/$n.fold.json" --estimate-block 1024 \
		--estimate-block-s 1 "$rec" 2> /dev/null
	same "corpus $n" "$TMP/$n.whole.json" "$TMP/$n.fold.json"
done

if [ "$(id -u)" != 0 ]; then
	skip "recorded jobs" "needs root"
	done_testing
	exit
fi
[ -x "$TS" ] && [ -f "$SIM/libcuda.so.1" ] || { skip "recorded jobs" "build first: make all test-progs"; done_testing; exit; }

# the bench's storage job (tools/bench.py, row 8)
"$IG" run -q --no-nvml -o "$TMP/s.igrec" -- env LD_LIBRARY_PATH="$SIM" "$TS" -s storage -q -t 10 \
	> /dev/null 2>&1
"$IG" report -q --json "$TMP/s.whole.json" "$TMP/s.igrec" 2> /dev/null
"$IG" report -q --json "$TMP/s.fold.json" --estimate-block 1024 --estimate-block-s 1 \
	"$TMP/s.igrec" 2> /dev/null
same "storage 10 s" "$TMP/s.whole.json" "$TMP/s.fold.json"

# a launch-heavy run in periods, its own final report folded as it went
"$IG" run -q --no-nvml --every 2 --estimate-block-s 2 --json "$TMP/lh.run.json" \
	-o "$TMP/lh.igrec" -- env LD_LIBRARY_PATH="$SIM" "$TS" -s healthy -k 20 -d 100 \
	-n 1000000000 -t 20 -q > /dev/null 2> "$TMP/lh.err"
is "$?" 0 "launch-heavy run --every 2 exits 0"
"$IG" report -q --json "$TMP/lh.whole.json" "$TMP/lh.igrec" 2> /dev/null
pychecks "$TMP/lh.run.json" <<'PY'
import json, sys
from tap import check
f = json.load(open(sys.argv[1]))["events"]["evidence_folded"]
check(f["estimate_blocks"] >= 3, "the run folded its estimate's evidence as it went",
      "%d blocks" % f["estimate_blocks"])
PY
same "launch-heavy run --every 2" "$TMP/lh.whole.json" "$TMP/lh.run.json"
done_testing

#!/bin/sh
# The Perfetto writer: a synthetic timeline decodes with protoc against the
# project's subset of Perfetto's schema, its interned ids resolve, its
# slices balance and nest, its flows start and end on slices, the device's
# idle slices are those written; a full disk is an error; the intern
# tables stay bounded on many distinct strings.  As root: a storage run's
# trace, its steps on a track per GPU, and 4 ranks with one starved, whose
# waits flow to its cause.
. "$(dirname "$0")/lib.sh"
SYNTH=$IG_TOP/build/tests/view/pf_synth
SCHEMA=$IG_TOP/tests/perfetto
CHECK=$IG_TOP/tests/perfetto/check_trace.py
command -v protoc > /dev/null || skip_all "protoc not found (Debian protobuf-compiler)"
[ -x "$SYNTH" ] || skip_all "$SYNTH not built (make test-progs)"

decode() {
	protoc --proto_path="$SCHEMA" --decode=perfetto.protos.Trace \
		"$SCHEMA/perfetto-subset.proto" < "$1"
}

ok "synthetic trace written" -- sh -c "'$SYNTH' '$TMP/a.pftrace' 50 > '$TMP/a.stats'"
diag "$(cat "$TMP/a.stats")"
ok "protoc decodes it" -- sh -c "decode() { protoc --proto_path='$SCHEMA' --decode=perfetto.protos.Trace '$SCHEMA/perfetto-subset.proto'; }; decode < '$TMP/a.pftrace' > '$TMP/a.txt'"
ok "interning, tracks, nesting and flows check" -- sh -c "'$CHECK' < '$TMP/a.txt' > '$TMP/a.idle' 2> '$TMP/a.err'"
sed 's/^/# /' "$TMP/a.err"
# 50 rounds, every 5th unresolved: 40 idle gaps at 1e9 + r*20000 + 10000
want=$(awk 'BEGIN { for (r = 0; r < 50; r++) if (r % 5 != 4) print 1000000000 + r * 20000 + 10000, 4000, "idle: storage" }')
is "$(cut -d' ' -f1-4 "$TMP/a.idle")" "$want" "device idle slices are the gaps written"
# rounds 3, 19, 35 use shard 3 (16 files); 19 is unresolved
is "$(grep -c 'file=/data/shard-00003.bin' "$TMP/a.idle")" 2 "gap annotations resolve through interning"
is "$(grep -o 'flows=[0-9]*' "$TMP/a.err")" "flows=120" "three flows per gap, each ending on a slice"
is "$(grep -c 'name: "idle: storage"' "$TMP/a.txt")" 1 "an event name is written once"

# the checker itself fails on a dangling flow and on an unknown iid
ok "the checker sees a flow that ends nowhere" -- sh -c "! grep -v terminating_flow_ids '$TMP/a.txt' | '$CHECK' > /dev/null 2>&1"
ok "the checker sees an undefined iid" -- sh -c "! sed 's/name_iid: 1\$/name_iid: 999/' '$TMP/a.txt' | '$CHECK' > /dev/null 2>&1"

# a long path is not interned and still reaches the trace
ok "a string longer than the intern limit is written inline" -- grep -q 'string_value: "/data/ddd' "$TMP/a.txt"

# many distinct strings: the tables are cleared and the trace stays valid
ok "many distinct strings" -- sh -c "'$SYNTH' '$TMP/b.pftrace' 20000 20000 > '$TMP/b.stats'"
diag "$(cat "$TMP/b.stats")"
ok "intern tables were reset" -- grep -qv 'resets=0 ' "$TMP/b.stats"
ok "the reset trace decodes and checks" -- sh -c "protoc --proto_path='$SCHEMA' --decode=perfetto.protos.Trace '$SCHEMA/perfetto-subset.proto' < '$TMP/b.pftrace' | '$CHECK' > '$TMP/b.idle' 2> '$TMP/b.err'"
is "$(wc -l < "$TMP/b.idle")" 16000 "every gap is there after resets"

# a full disk is an error, said once
"$SYNTH" /dev/full 50 > /dev/null 2> "$TMP/full.err"
rc=$?
is "$rc" 1 "a full disk: exit 1"
ok "a full disk: says so" -- grep -q "No space left on device" "$TMP/full.err"

# A trainsim storage run under `idlegap run --perfetto` (root): the trace
# decodes and checks, its device idle slices are the JSON report's gaps,
# most are named by storage and carry flows, and a replay of the run's
# recording writes the same device slices.
if [ "$(id -u)" != 0 ]; then
	skip "a storage run's trace" "needs root"
	done_testing
	exit
fi
TS=$IG_TOP/build/trainsim
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
# the kernel's accounting of the job's feeding threads says whether they
# waited for storage, or for a CPU (tools/accuracy.py's oracle)
trap 'delayacct_restore; rm -rf "$TMP"' EXIT
delayacct_on
"$IG" run -q --gaps -1 --json "$TMP/r.json" --perfetto "$TMP/r.pftrace" -o "$TMP/r.igrec" \
	-- "$TS" -s storage -t 3 -q --truth "$TMP/r.truth" 2> "$TMP/run.err"
delayacct_restore
is "$?" 0 "idlegap run --perfetto traces a storage job"
sed 's/^/# /' "$TMP/run.err"
ok "protoc decodes the run's trace" -- sh -c "protoc --proto_path='$SCHEMA' --decode=perfetto.protos.Trace '$SCHEMA/perfetto-subset.proto' < '$TMP/r.pftrace' > '$TMP/r.txt'"
ok "interning, tracks, nesting and flows check" -- sh -c "'$CHECK' < '$TMP/r.txt' > '$TMP/r.idle' 2> '$TMP/r.err'"
sed 's/^/# /' "$TMP/r.err"
pychecks "$TMP/r.json" "$TMP/r.idle" "$TMP/r.truth" "$IG_TOP/tools" <<'PY'
import json, sys
from tap import check
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[4])
import accuracy
j = json.load(open(sys.argv[1]))["gpu"]
gaps = [(g["start_ns"], g["end_ns"] - g["start_ns"]) for g in j["gap_list"]]
idle = [l.split() for l in open(sys.argv[2])]
got = [(int(l[0]), int(l[1])) for l in idle]
check(len(gaps) > 10, "the JSON report lists the run's gaps", "%d gaps" % len(gaps))
check(sorted(got) == sorted(gaps), "the device's idle slices are the JSON gap_list",
      "%d slices, %d gaps; first slice %s, first gap %s" % (len(got), len(gaps),
      sorted(got)[:1], sorted(gaps)[:1]))
by = {}
for l in idle:
    by[l[3]] = by.get(l[3], 0) + int(l[1])
lead = max(by, key=by.get)
first = json.load(open(sys.argv[1]))["causes"][0]["cause"]
try:
    tj = json.load(open(sys.argv[3]))
except (OSError, ValueError):
    tj = {}
o = accuracy.oracle("storage", accuracy.feeding_figures(tj))
why = "by cause %s; the report's first %s" % (by, first)
if o["verdict"] in ("design", None):
    check(lead == "storage" and first == "storage",
          "storage names most of the idle slices' time, as the report's first cause [%s]" % o["text"], why)
elif o["verdict"] == "cpu":
    check(lead == first and lead in ("storage", "cpu_starvation") and by.get("cpu_starvation"),
          "the job's threads waited for a CPU more than for storage: storage or cpu_starvation "
          "names most of the idle slices' time, as the report's first cause [%s]" % o["text"], why)
else:
    check(lead == first and lead in ("storage", "cpu_starvation"),
          "the oracle cannot decide between storage and cpu_starvation: one of them names most "
          "of the idle slices' time, as the report's first cause [%s]" % o["text"], why)
st = sum(1 for l in idle if l[3] == "storage")
check(any("file=" in " ".join(l) for l in idle), "gap annotations name the file read")
print("# %d gaps, %d named idle: storage" % (len(gaps), st))
PY
ok "flows from the gaps" -- sh -c "grep -q 'flows=[1-9]' '$TMP/r.err'"
"$IG" report -q --perfetto "$TMP/p.pftrace" "$TMP/r.igrec" 2> "$TMP/rep.err"
is "$?" 0 "idlegap report --perfetto writes the recording's trace"
protoc --proto_path="$SCHEMA" --decode=perfetto.protos.Trace "$SCHEMA/perfetto-subset.proto" \
	< "$TMP/p.pftrace" | "$CHECK" > "$TMP/p.idle" 2> /dev/null
ok "the replay's trace checks" -- test -s "$TMP/p.idle"
ok "the replay gives the same device idle slices" -- cmp -s "$TMP/r.idle" "$TMP/p.idle"
# the clock snapshot is taken when the trace is written; the rest is the same
noclock() {
	protoc --proto_path="$SCHEMA" --decode=perfetto.protos.Trace "$SCHEMA/perfetto-subset.proto" < "$1" |
		awk '/clock_snapshot \{/ { skip = 1 } skip { d += gsub(/\{/, "{"); d -= gsub(/\}/, "}"); if (!d) skip = 0; next } { print }'
}
noclock "$TMP/r.pftrace" > "$TMP/r.noclock"
noclock "$TMP/p.pftrace" > "$TMP/p.noclock"
ok "the replay gives the same trace, but for the clock snapshot" -- cmp -s "$TMP/r.noclock" "$TMP/p.noclock"
is "$(grep -c 'clock_snapshot' "$TMP/r.txt")" 1 "the trace has one clock snapshot"

# The steps (design §4.11, §7.8): each GPU's on a track "GPU N steps", a
# slice for each step the JSON report lists, named by its index and cause;
# the storage job's slow steps are named by storage (by storage or
# cpu_starvation where the kernel's accounting says its threads waited
# for a CPU, as above).
"$CHECK" --dump "$TMP/r.slices" < "$TMP/r.txt" > /dev/null 2>&1
pychecks "$TMP/r.json" "$TMP/r.slices" "$TMP/r.truth" "$IG_TOP/tools" <<'PY'
import json, sys
from tap import check
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[4])
import accuracy
j = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))


def name(s):
    return "step %d%s%s" % (s["index"], " (partial)" if s["partial"] else "",
                            ": " + s["cause"] if s["cause"] else "")


devs = [g for g in j["gpu"]["devices"] if g["steps"]["found"]]
check(devs and j["steps"]["found"], "the storage job's steps are found",
      "why none: %s" % j["steps"]["why_none"])
slow = []
for g in devs:
    s, dev = g["steps"], g["device"]
    got = [x for x in d["slices"] if x["track_name"] == "GPU %d steps" % dev]
    check(got, "GPU %d: a steps track" % dev, "tracks: %s" % sorted(
        t["name"] for t in d["tracks"].values() if t["name"]))
    check(len(got) == s["count"] - s["list_omitted"],
          "GPU %d: a slice per step (the JSON's count less those not listed)" % dev,
          "%d slices, count %d, not listed %d" % (len(got), s["count"], s["list_omitted"]))
    want = sorted((x["start_ns"], x["end_ns"] - x["start_ns"], name(x)) for x in s["list"])
    have = sorted((x["ts"], x["dur"], x["name"]) for x in got)
    check(have == want, "GPU %d: each slice is a listed step, named by its index and cause" % dev,
          "first slices %s, first steps %s" % (have[:3], want[:3]))
    by = {x["ts"]: x for x in got}
    check(all(x["start_ns"] in by and
              abs(float(by[x["start_ns"]]["annots"]["wall_ms"]) - x["wall_s"] * 1e3) < 0.002 and
              abs(float(by[x["start_ns"]]["annots"]["idle_ms"]) - x["idle_s"] * 1e3) < 0.002 and
              by[x["start_ns"]]["annots"]["slow"] == ("true" if x["slow"] else "false")
              for x in s["list"]),
          "GPU %d: the slices' wall, idle and slow annotations are the JSON's" % dev)
    slow += [(by.get(x["start_ns"], {}).get("name"), x) for x in s["list"] if x["slow"]]
named = sorted(set(n.split(": ", 1)[1] for n, _ in slow if n and ": " in n))
try:
    tj = json.load(open(sys.argv[3]))
except (OSError, ValueError):
    tj = {}
o = accuracy.oracle("storage", accuracy.feeding_figures(tj))
causes = ("storage",) if o["verdict"] in ("design", None) else ("storage", "cpu_starvation")
st = [n for n, x in slow if x["cause"] == "storage"]
check(all(n == "step %d: storage" % x["index"] for n, x in slow if x["cause"] == "storage")
      and any(n.endswith(": " + c) for n, _ in slow for c in causes if n),
      "the slow steps named by storage are \"step N: storage\", and %s names some [%s]"
      % (" or ".join(causes), o["text"]),
      "%d slow steps; their causes %s" % (len(slow), named))
print("# %d slow steps, %d named storage; their causes %s" % (len(slow), len(st), named))
PY

# Collectives across ranks (design §4.9, §7.8): 4 ranks of trainsim, rank 2
# starved by storage.  The other ranks' waits for it flow to slices on rank
# 2's process named by its cause; each flow starts once and ends once, no
# earlier; each rank's GPU has its steps, those that waited for rank 2
# named by peer_wait; a balanced job's waits start (almost) no flow.
[ -f "$IG_TOP/build/simgpu/libnccl.so.2" ] || { skip "ranks' flows" "build/simgpu/libnccl.so.2 not built"; done_testing; exit; }
ranks() {
	"$IG" run -q --json "$TMP/$1.json" --perfetto "$TMP/$1.pftrace" -- \
		"$TS" ranks --world 4 -s "$1" --steps 60 --truth "$TMP/$1.truth" > "$TMP/$1.out" 2>&1 &&
	protoc --proto_path="$SCHEMA" --decode=perfetto.protos.Trace "$SCHEMA/perfetto-subset.proto" \
		< "$TMP/$1.pftrace" > "$TMP/$1.txt" &&
	"$CHECK" --forward --dump "$TMP/$1.slices" < "$TMP/$1.txt" > /dev/null 2> "$TMP/$1.err"
}
for s in storage balanced; do
	ok "ranks $s: traced, decoded, interning, nesting and flows (forward in time) check" -- ranks $s ||
		sed 's/^/# /' "$TMP/$s.out" "$TMP/$s.err"
done
pychecks "$TMP/storage.slices" "$TMP/storage.truth" "$TMP/balanced.slices" "$TMP/balanced.truth" <<'PY'
import json, re, sys
from tap import check

def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return {"tracks": {}, "slices": []}

def flows(d):
    """Each flow id: the slices it starts on and ends on."""
    starts, ends = {}, {}
    for s in d["slices"]:
        for f in s["out"]:
            starts.setdefault(f, []).append(s)
        for f in s["in"]:
            ends.setdefault(f, []).append(s)
    return starts, ends

def rank_pids(d):
    pids = {}
    for t in d["tracks"].values():
        m = re.match(r"rank (\d+) collectives \(pid (\d+)\)", t["name"] or "")
        if m:
            pids[int(m.group(1))] = int(m.group(2))
    return pids

d, truth = load(sys.argv[1]), json.load(open(sys.argv[2]))
late, cause = truth["straggler"], truth["straggler_cause"]
pids = rank_pids(d)
starts, ends = flows(d)
check(all(len(starts.get(f, [])) == 1 and len(ends.get(f, [])) == 1
          for f in set(starts) | set(ends)),
      "storage: each flow id has exactly one start and one end",
      "%d started, %d ended" % (len(starts), len(ends)))
waits = {}
for f, (s,) in ((f, v) for f, v in starts.items() if len(v) == 1):
    if not s["name"].startswith("waiting for rank"):
        continue
    e = ends.get(f, [None])[0]
    m = re.match(r"rank (\d+) collectives", s["track_name"] or "")
    if e and m and e["pid"] == pids.get(late) and cause in e["name"] and e["ts"] >= s["ts"]:
        waits.setdefault(int(m.group(1)), []).append((s, e))
others = sorted(r for r in pids if r != late)
check(len(pids) == 4 and all(len(waits.get(r, [])) > 0 for r in others),
      "storage: every other rank's waits flow to a %s slice on rank %d's process" % (cause, late),
      "flows by waiting rank %s; ranks %s" % ({r: len(v) for r, v in waits.items()}, pids))
to_late = [s for f, v in starts.items() for s in v
           if s["name"].startswith("waiting for rank %d:" % late)]
check(to_late and sum(len(v) for v in waits.values()) >= len(to_late) // 2,
      "storage: most waits for rank %d end on its %s slices" % (late, cause),
      "%d of %d" % (sum(len(v) for v in waits.values()), len(to_late)))
check(waits and all(e["name"].startswith("late: ") and e["track_name"].startswith("rank %d late" % late)
          and s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"]
          for v in waits.values() for s, e in v),
      "storage: each ends on a 'late: CAUSE' slice inside the wait, on rank %d's own track" % late)

steps = [s for s in d["slices"] if re.match(r"GPU \d+ steps$", s["track_name"] or "")]
check(len(set(s["track_name"] for s in steps)) == 4,
      "storage: each rank's GPU has a steps track",
      "tracks %s" % sorted(set(s["track_name"] for s in steps)))
waited = [s for s in steps if s["name"].endswith(": peer_wait") and
          str(s["annots"].get("late_rank")) == str(late)]
check(waited, "storage: steps that waited for rank %d most are named by peer_wait, the late "
      "rank an annotation" % late, "%d steps" % len(steps))

b, bt = load(sys.argv[3]), json.load(open(sys.argv[4]))


def true_waits(bt):
    """The waits that deserve a flow by the simulator's own record of each
    collective (SIMNCCL_TRACE: arrive, last arrival, start, end): at least
    a tenth of the rank's time in it (IG_TIMELINE_PEER_SHARE).  On a loaded
    host a balanced job's rank is late for real now and then."""
    n = total = 0
    for r in bt["ranks"]:
        try:
            lines = open(r["nccl"]["trace_file"]).read().splitlines()
        except (OSError, TypeError, KeyError):
            return None
        for line in lines:
            f = line.split()
            if len(f) < 11:
                continue
            a, last, _, e = (int(x) for x in f[7:11])
            total += 1
            n += e > a and last - a >= 0.1 * (e - a)
    return n, total


bwaits = [s for s in b["slices"] if s["name"].startswith("waiting for")]
bflows = [s for s in bwaits if s["out"]]
tw = true_waits(bt)
check(bwaits and tw is not None and len(bflows) <= max(2, len(bwaits) // 20) + tw[0],
      "balanced: no more waits start a flow than the simulator's truth has waits of a tenth of "
      "their collective, and a twentieth of the waits",
      "%d of %d waits start one; the truth: %s" % (len(bflows), len(bwaits),
      "%d of %d waits" % tw if tw else "no record"))
print("# balanced: %d of %d waits start a flow; the simulator's truth: %s" % (
    len(bflows), len(bwaits), "%d of %d waits are a tenth of their collective" % tw if tw else "none"))
PY
done_testing

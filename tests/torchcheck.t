#!/bin/sh
# tools/torchcheck.py without torch or a GPU: `steps` scores a report's
# steps (docs/design.md §4.11) against torch.profiler's ProfilerStep#N
# spans, here of a synthetic profile (500 steps of about 8 ms, every 23rd
# 2.5 times as long; idlegap's boundary 40-60 us before each prof.step())
# and a synthetic report:
#  - the report's own steps pass ("ok"), with the phase offset and the
#    slow steps as planted; so does a constant offset of 3 ms (another
#    sync of the step), and a long run's list (first steps, slow ones,
#    last ones); the GPU-side copies of the spans are not read as steps;
#  - steps of two iterations fail on the count and p50, boundaries
#    scattered by up to 30% of a step fail the one-to-one match, a report
#    with no steps fails on "found" and says why;
#  - --recording sets the clock on the launches both saw (a marker 3 ms
#    late, as one that waited for the GIL);
#  - unreadable input: exit 2, one line on stderr.
# No root needed.
. "$(dirname "$0")/lib.sh"
TC=$IG_TOP/tools/torchcheck.py

for c in "" train compare steps; do
	ok "torchcheck.py $c --help: exit 0" -- sh -c \
		"/usr/bin/python3 '$TC' $c --help > /dev/null"
done

pychecks "$TMP" "$TC" <<'PY'
import json, os, random, subprocess, sys
from tap import check

tmp, tc = sys.argv[1], sys.argv[2]
rnd = random.Random(7)
MARK = "idlegap_clock_mark"
M = 5000000000000		# the marker's CLOCK_MONOTONIC, ns
T = 812345678.0			# the profile's clock at the marker, us
S = 500				# prof.step() calls


def us(mono):
    return (mono - M) / 1e3 + T


# the loop: three warm-up iterations, then S under the profiler; r the
# loss sync's return of each, q its prof.step() just after
r = [M - 30000000 + 8000000 * i for i in range(3)]
q = []
t = M + 200000
for k in range(S):
    w = 8000000 * rnd.lognormvariate(0, 0.05) * (2.5 if k % 23 == 11 else 1)
    t += int(w)
    r.append(t)
    q.append(t + 40000 + rnd.randrange(20000))
start, stop = M - 300000, q[-1] + 300000


def profile(path, marker_late=0, cat="user_annotation"):
    ev = [{"ph": "X", "cat": "user_annotation", "name": MARK, "ts": T, "dur": 2}]
    # the GPU's copies of the spans, over each step's kernels only: read
    # as steps, they would move every boundary
    for k in range(1, S):
        s = q[k - 1] + rnd.randrange(2000000)
        ev.append({"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#%d" % k,
                   "ts": us(s), "dur": rnd.randrange(1000, 4000)})
    b = [start] + q + [stop]
    for k in range(S + 1):
        ev.append({"ph": "X", "cat": cat, "name": "ProfilerStep#%d" % k,
                   "ts": us(b[k]), "dur": (b[k + 1] - b[k]) / 1e3})
    for k in range(S):	# five launches a step, 6 ms before its sync
        for j in range(5):
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                       "ts": us(r[k + 3] - 6000000 + 500000 * j), "dur": 4})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm",
                   "ts": us(r[k + 3] - 5000000), "dur": 3000})
    with open(path, "w") as f:
        json.dump({"traceEvents": ev, "idlegap_mark_monotonic_ns": M + marker_late}, f)


def pct(v, p):
    v = sorted(v)
    return v[min(len(v), max(1, int(p * len(v) + 0.999999))) - 1]


def report(path, bounds, first=None, last=0, found=True):
    """A report whose steps end at BOUNDS (the trace's start and end
    around them); with FIRST, the list of a long run: its FIRST steps,
    slow ones after them, and its LAST ones."""
    b = [start - 50000000] + bounds + [stop + 1000000]
    lst = [{"index": i, "start_ns": b[i], "end_ns": b[i + 1],
            "wall_s": (b[i + 1] - b[i]) / 1e9, "partial": i in (0, len(b) - 2)}
           for i in range(len(b) - 1)]
    whole = [x["wall_s"] for x in lst if not x["partial"]]
    p50 = pct(whole, 0.5)
    for x in lst:
        x["slow"] = not x["partial"] and x["wall_s"] > 1.5 * p50
    listed = [x for x in lst if first is None or x["index"] < first or x["slow"]
              or x["index"] >= len(lst) - last]
    st = {"found": True, "count": len(lst), "complete": len(whole),
          "source": "sync:cuMemcpyDtoH_v2", "why_none": None, "device": 0,
          "p50_s": p50, "p90_s": pct(whole, 0.9), "p99_s": pct(whole, 0.99),
          "slow": [x["index"] for x in lst if x["slow"]], "list": listed,
          "list_omitted": len(lst) - len(listed)}
    if not found:
        st = {"found": False, "count": 0, "complete": 0, "source": None, "device": None,
              "why_none": "no repeating sequence of launches, syncs and collectives",
              "list": [], "list_omitted": 0}
    dev = {k: v for k, v in st.items() if k != "device"}
    with open(path, "w") as f:
        json.dump({"steps": st, "gpu": {"devices": [{"device": 0, "steps": dev}]}}, f)


def steps(prof, rep, *more):
    p = subprocess.run([sys.executable, tc, "steps", prof, rep] + list(more),
                       capture_output=True, text=True)
    try:
        return p.returncode, json.loads(p.stdout), p.stderr
    except ValueError:
        return p.returncode, {}, p.stdout + p.stderr


profile(tmp + "/prof.json")
report(tmp + "/good.json", r)
rc, j, err = steps(tmp + "/prof.json", tmp + "/good.json", "--json", tmp + "/out.json")
check(rc == 0 and j.get("ok") is True, "steps: the report's own steps pass", err or j.get("failed"))
check(j and json.load(open(tmp + "/out.json")) == j, "steps: --json OUT holds what it printed")
c = j.get("count", {})
check(c.get("idlegap") == c.get("profiler") and c.get("profiler", 0) >= S - 3,
      "steps: the same steps counted over the same span (%s)" % c)
ph = j.get("phase", {})
check(ph.get("offset_ms") is not None and -0.065 <= ph["offset_ms"] <= -0.035
      and ph.get("spread_ms", 1) <= 0.03,
      "steps: phase offset %s ms, spread %s ms: before each prof.step() by 40-60 us"
      % (ph.get("offset_ms"), ph.get("spread_ms")))
m = j.get("match", {})
check(m.get("share") == 1.0, "steps: every profiler step matched (%s)" % m)
sl = j.get("slow", {})
check(sl.get("profiler") == sl.get("idlegap") == sl.get("profiler_found") >= 20,
      "steps: the slow steps, the same on both sides (%s of %s)"
      % (sl.get("profiler_found"), sl.get("profiler")))

report(tmp + "/shift.json", [x - 3000000 for x in r])
rc, j, err = steps(tmp + "/prof.json", tmp + "/shift.json")
check(j.get("ok") is True and abs(j["phase"]["offset_ms"] + 3.05) < 0.02,
      "steps: a constant 3 ms offset passes, and is the phase (%s ms)"
      % j.get("phase", {}).get("offset_ms"), err or j.get("failed"))

report(tmp + "/long.json", r, first=150, last=100)
rc, j, err = steps(tmp + "/prof.json", tmp + "/long.json")
check(j.get("ok") is True and j["count"]["idlegap"] == j["count"]["profiler"]
      and j["list_omitted"] > 0,
      "steps: a list with steps omitted, scored over what it lists (%s)"
      % j.get("count"), err or j.get("failed"))

report(tmp + "/double.json", r[::2])
rc, j, err = steps(tmp + "/prof.json", tmp + "/double.json")
check(rc == 0 and j.get("ok") is False and {"count", "p50"} <= set(j.get("failed", [])),
      "steps: steps of two iterations fail (%s)" % j.get("failed"), err)

report(tmp + "/jitter.json", [x + rnd.randrange(-2500000, 2500000) for x in r])
rc, j, err = steps(tmp + "/prof.json", tmp + "/jitter.json")
check(rc == 0 and j.get("ok") is False and "match" in j.get("failed", []),
      "steps: boundaries scattered by up to 30%% of a step fail the match (%s, share %s)"
      % (j.get("failed"), j.get("match", {}).get("share")), err)

report(tmp + "/none.json", r, found=False)
rc, j, err = steps(tmp + "/prof.json", tmp + "/none.json")
check(rc == 0 and j.get("ok") is False and j.get("failed") == ["found"]
      and "no repeating" in (j.get("why_none") or "")
      and j.get("count", {}).get("profiler") == S - 1,
      "steps: no steps found: fails, says why", err or j)

# a marker read 3 ms late; the launches as idlegap recorded them, 3 us
# after the runtime's call
profile(tmp + "/late.json", marker_late=3000000, cat="cpu_op")
with open(tmp + "/dump.txt", "w") as f:
    for k in range(S):
        f.write("%d launches tid=1 pid=1 cpu=0 stream=0x7 n=5 %s\n" % (
            r[k + 3], " ".join("%d:0x10:1:128" % (r[k + 3] - 6000000 + 500000 * i + 3000)
                               for i in range(5))))
with open(tmp + "/fakeidlegap", "w") as f:
    f.write("#!/bin/sh\ncat '%s/dump.txt'\n" % tmp)
os.chmod(tmp + "/fakeidlegap", 0o755)
rc, j, err = steps(tmp + "/late.json", tmp + "/good.json")
check(j.get("clock") == "marker" and abs(j["phase"]["offset_ms"] + 3.05) < 0.02,
      "steps: by the marker alone, off by its 3 ms (%s ms)"
      % j.get("phase", {}).get("offset_ms"), err)
rc, j, err = steps(tmp + "/late.json", tmp + "/good.json", "--recording",
                   tmp + "/rec.igrec", "--idlegap", tmp + "/fakeidlegap")
check(j.get("clock") == "launches" and abs(j["marker_off_by_us"] + 2997) < 5
      and abs(j["phase"]["offset_ms"] + 0.05) < 0.02 and j.get("ok") is True,
      "steps --recording: the clock by the launches, the marker %s us off"
      % j.get("marker_off_by_us"), err or j.get("failed"))

# inputs for the shell's checks below
with open(tmp + "/nosteps.json", "w") as f:
    json.dump({"traceEvents": [e for e in json.load(open(tmp + "/prof.json"))["traceEvents"]
                               if not e["name"].startswith("ProfilerStep")],
               "idlegap_mark_monotonic_ns": M}, f)
with open(tmp + "/nostepsobj.json", "w") as f:
    json.dump({"gpu": {}}, f)
PY

# unreadable input: exit 2 and one line
says="No such file"
one_line "steps: a profile that is not there" 2 \
	/usr/bin/python3 "$TC" steps "$TMP/absent.json" "$TMP/good.json"
says="ProfilerStep"
one_line "steps: a profile without ProfilerStep#N spans" 2 \
	/usr/bin/python3 "$TC" steps "$TMP/nosteps.json" "$TMP/good.json"
printf '{"steps": ' > "$TMP/cut.json"
says="not JSON"
one_line "steps: a report cut short" 2 \
	/usr/bin/python3 "$TC" steps "$TMP/prof.json" "$TMP/cut.json"
says="no steps object"
one_line "steps: a report without steps" 2 \
	/usr/bin/python3 "$TC" steps "$TMP/prof.json" "$TMP/nostepsobj.json"
printf '#!/bin/sh\necho "idlegap: rec.igrec: not a recording" >&2\nexit 1\n' > "$TMP/badidlegap"
chmod +x "$TMP/badidlegap"
says="not a recording"
one_line "steps --recording: a recording idlegap cannot read" 2 \
	/usr/bin/python3 "$TC" steps "$TMP/prof.json" "$TMP/good.json" \
	--recording "$TMP/rec.igrec" --idlegap "$TMP/badidlegap"
done_testing

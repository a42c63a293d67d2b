#!/bin/sh
# Native stacks stay right when their leaf scan is answered from the
# thread's memo: a thread that sleeps alternately through path_a() and
# path_b(), from the same sp, rbp and words above sp, shows each path at
# the matching switch-out.  IDLEGAP_NO_USTACKS turns native stacks off and
# nothing else.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
TP=$IG_TOP/build/tests/progs/twopaths
[ -x "$TP" ] || skip_all "build first: make test-progs"

"$IG" run -q -o "$TMP/r.igrec" -- "$TP" 60 2> "$TMP/err"
is "$?" 0 "idlegap traces a thread sleeping through two callers"
"$IG" report --dump "$TMP/r.igrec" > "$TMP/dump" 2> "$TMP/err"
is "$?" 0 "report --dump reads the recording"

pychecks "$TMP/dump" <<'PY'
import bisect, re, sys
from tap import check
kv = lambda line: dict(re.findall(r"(\w+)=(\S+)", line))
stacks, at, switches, names, offs = {}, [], [], {}, {}
for line in open(sys.argv[1]):
    f = line.split(" ", 2)
    if len(f) < 3:
        continue
    ts, kind, d = int(f[0]), f[1], kv(f[2])
    if kind == "ustack":
        if "ips" in d:
            stacks[d["id"]] = [int(x, 16) for x in d["ips"].split(",")]
        at.append((ts, d["id"]))
        if "switch" in d["flags"].split(","):
            switches.append(ts)
    elif kind == "usym":
        names[int(d["ip"], 16)] = f[2].split(" name=", 1)[1].split(" ")[0]
    elif kind == "offcpu":
        offs[int(d["off"])] = d.get("reason")
at.sort()
# A switch-out's stack is the last one recorded at or before it: an
# unchanged stack is not sent again.  A switch-out stamps its stack with
# its own time, which its interval's record carries as off=; one with no
# such record is a switch-out whose switch back in the kernel's
# sched_switch tracepoint never reported (seen under load, by perf too).
# The program's sleeps alternate between the callers, so the sleeps and
# those unreported switch-outs, in time order, must alternate too.
unrep = [t for t in switches if t not in offs]
seq = sorted([(t, "sleep") for t, r in offs.items() if r == "sleep"] +
             [(t, "unreported") for t in unrep])
def path(t):
    i = bisect.bisect_right(at, (t, "~"))
    ips = stacks.get(at[i - 1][1], []) if i else []
    fr = [names.get(ip - 1, "?") for ip in ips[1:]]
    return next((x for x in fr if x.startswith("path_")), "none")
paths = [(path(t), r) for t, r in seq]
nsleep = sum(1 for _, r in seq if r == "sleep")
check(nsleep >= 50, "the thread slept (%d sleeps)" % nsleep)
bad = [(a, b) for a, b in zip(paths, paths[1:]) if {a[0], b[0]} != {"path_a", "path_b"}]
check(len(paths) > 1 and not bad,
      "each sleep's stack names the caller it came through, alternating",
      "%d of %d consecutive pairs do not alternate: %s" % (
          len(bad), len(paths) - 1,
          " ".join("%s(%s)->%s(%s)" % (a + b) for a, b in bad[:6])))
check(len(unrep) <= max(2, nsleep // 100),
      "switch-outs with no interval reported are rare",
      "%d, against %d sleeps" % (len(unrep), nsleep))
PY

IDLEGAP_NO_USTACKS=1 "$IG" run -q -o "$TMP/off.igrec" -- "$TP" 20 2> "$TMP/err"
is "$?" 0 "IDLEGAP_NO_USTACKS=1: the run succeeds"
"$IG" report --dump "$TMP/off.igrec" > "$TMP/off" 2> "$TMP/err"
cnt() { awk -v k="$1" '$2 == k' "$TMP/off" | wc -l; }
is "$(cnt ustack)" 0 "IDLEGAP_NO_USTACKS=1: no native stack is recorded"
[ "$(cnt offcpu)" -ge 20 ]
is "$?" 0 "IDLEGAP_NO_USTACKS=1: off-CPU intervals are still recorded"
done_testing

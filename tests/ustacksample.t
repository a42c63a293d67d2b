#!/bin/sh
# Native stacks at CPU samples: a thread that spins in a leaf keeping no
# frame (leaf_spin, as memset is) shows, at the samples taken there, the
# leaf's caller (spin_here), which only the return address at sp names,
# then main.  The sample path scans fewer words than a switch-out does, and
# not for the thread's memo; the stack at each sleep between the spins is
# still the sleep's own (nanosleep, then main), not a sample's.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
LS=$IG_TOP/build/tests/progs/leafspin
[ -x "$LS" ] || skip_all "build first: make test-progs"

"$IG" run -q -o "$TMP/r.igrec" -- "$LS" 1500 2> "$TMP/err"
is "$?" 0 "idlegap traces a thread spinning in a frameless leaf"
"$IG" report --dump "$TMP/r.igrec" > "$TMP/dump" 2> "$TMP/err"
is "$?" 0 "report --dump reads the recording"

pychecks "$TMP/dump" <<'PY'
import re, sys
from tap import check
kv = lambda line: dict(re.findall(r"(\w+)=(\S+)", line))
stacks, recs, names, at, sleeps = {}, [], {}, {}, []
for line in open(sys.argv[1]):
    f = line.split(" ", 2)
    if len(f) < 3:
        continue
    ts, kind, d = int(f[0]), f[1], kv(f[2])
    if kind == "ustack":
        if "ips" in d:
            stacks[d["id"]] = [int(x, 16) for x in d["ips"].split(",")]
        recs.append((d["flags"].split(","), d["id"]))
        if "switch" in d["flags"].split(","):
            at[(d["tid"], ts)] = d["id"]
    elif kind == "offcpu" and d.get("reason") == "sleep":
        sleeps.append((d["tid"], int(d["off"])))
    elif kind == "usym":
        names[int(d["ip"], 16)] = f[2].split(" name=", 1)[1].split(" ")[0].split("+")[0]
def frames(ips):
    return [names.get(ip if i == 0 else ip - 1, "?") for i, ip in enumerate(ips)]
spin = [frames(stacks.get(i, [])) for fl, i in recs if "sample" in fl]
spin = [fr for fr in spin if fr and fr[0] == "leaf_spin"]
check(len(spin) >= 20, "samples land in leaf_spin (%d)" % len(spin))
good = [fr for fr in spin if fr[1:3] == ["spin_here", "main"]]
check(len(spin) and len(good) >= 0.9 * len(spin),
      "at them the stack is leaf_spin <- spin_here <- main (%d of %d)" %
      (len(good), len(spin)), "; ".join(" <- ".join(fr[:4]) for fr in
                                        spin if fr not in good)[:600])
# the stack sent at each sleep's switch-out: same thread, same instant
bad, nostack = [], 0
for tid, off in sleeps:
    if (tid, off) not in at:
        nostack += 1
        continue
    fr = frames(stacks.get(at[(tid, off)], []))
    if not any("nanosleep" in x for x in fr[:2]) or "main" not in fr:
        bad.append(" <- ".join(fr[:4]))
check(len(sleeps) >= 50 and not bad and nostack <= len(sleeps) // 10,
      "each sleep's stack is nanosleep's, up to main (%d sleeps, %d without a stack)" %
      (len(sleeps), nostack),
      "%d not: %s" % (len(bad), "; ".join(bad[:5])))
PY
done_testing

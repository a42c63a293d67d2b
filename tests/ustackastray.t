#!/bin/sh
# Native stacks where the frame-pointer register holds no frame: code built
# without frame pointers keeps anything there, a pointer into the stack
# included.  fpastray sleeps with it pointing at a record on its stack that
# looks like two frames whose return addresses are code no call precedes
# (decoy_a, decoy_b).  The walk stops where a return address follows no
# call: no stack names a decoy, and none of them claims to be whole (the
# record ends in a null link, which would otherwise read as the outermost
# frame).  The sleep's own caller, main, is still there.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
FA=$IG_TOP/build/tests/progs/fpastray
[ -x "$FA" ] || skip_all "build first: make test-progs"

"$IG" run -q -o "$TMP/r.igrec" -- "$FA" 60 > "$TMP/out" 2> "$TMP/err"
is "$?" 0 "idlegap traces a thread whose frame pointer leads astray"
"$IG" report --dump "$TMP/r.igrec" > "$TMP/dump" 2> "$TMP/err"
is "$?" 0 "report --dump reads the recording"

pychecks "$TMP/dump" "$TMP/out" <<'PY'
import bisect, re, sys
from tap import check
kv = lambda line: dict(re.findall(r"(\w+)=(\S+)", line))
decoys = {int(x, 16) for x in open(sys.argv[2]).read().split()[1:3]}
stacks, flags, names, at, sleeps = {}, {}, {}, {}, []
for line in open(sys.argv[1]):
    f = line.split(" ", 2)
    if len(f) < 3:
        continue
    ts, kind, d = int(f[0]), f[1], kv(f[2])
    if kind == "ustack":
        if "ips" in d:
            stacks[d["id"]] = [int(x, 16) for x in d["ips"].split(",")]
            flags[d["id"]] = d["flags"].split(",")
        at.setdefault(d["tid"], []).append((ts, d["id"]))
    elif kind == "offcpu" and d.get("reason") == "sleep":
        sleeps.append((d["tid"], int(d["off"])))
    elif kind == "usym":
        names[int(d["ip"], 16)] = f[2].split(" name=", 1)[1].split(" ")[0].split("+")[0]
check(len(decoys) == 2, "fpastray says where its decoys are", str(decoys))
# a thread's stack at a switch-out: its latest stack record at or before it
def stack_at(tid, t):
    v = at.get(tid, [])
    i = bisect.bisect_right(v, (t, "~"))
    return v[i - 1][1] if i else None
for v in at.values():
    v.sort()
mine = [i for i in (stack_at(t, o) for t, o in sleeps) if i]
check(len(sleeps) >= 30 and len(mine) >= 0.9 * len(sleeps),
      "a stack at each sleep's switch-out (%d of %d)" % (len(mine), len(sleeps)))
astray = [i for i in set(mine) if decoys & set(stacks.get(i, []))]
check(not astray, "no stack takes a decoy for a return address",
      "; ".join(",".join("%x" % a for a in stacks[i]) for i in astray[:3]))
whole = [i for i in set(mine) if "end" in flags.get(i, [])]
check(not whole, "none of them claims to reach the outermost frame",
      str(whole[:3]))
main = [i for i in set(mine) if "main" in
        [names.get(ip - 1, "?") for ip in stacks.get(i, [])[1:]]]
check(len(mine) and len(main) == len(set(mine)),
      "each names the sleep's caller, main (%d of %d)" % (len(main), len(set(mine))))
PY
done_testing

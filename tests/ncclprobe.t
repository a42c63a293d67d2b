#!/bin/sh
# The NCCL probes (docs/design.md §4.9) on a stand-in libnccl.so.2: every
# collective and point-to-point call is recorded with the op, bytes, peer,
# stream and per-communicator sequence number the program used; a
# communicator's id is the same in every rank; the compat object does the
# same; NCCL linked into another library is said in one line; a job
# without NCCL gets no NCCL probe.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
NC=$IG_TOP/build/tests/fakenccl
FAKE=$IG_TOP/build/tests/fakecuda

# every "call" line of the program has its record, field for field
compare() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import re, sys
calls = [dict(kv.split("=") for kv in l.split()[1:]) for l in open(sys.argv[1]) if l.startswith("call ")]
recs = []
for l in open(sys.argv[2]):
    if " nccl " in l and "kind=coll" in l:
        recs.append(dict(kv.split("=", 1) for kv in l.split() if "=" in kv))
ids = []
for r in recs:
    if r["id"] not in ids:
        ids.append(r["id"])
bad = 0
if len(calls) != len(recs):
    print("# %d calls, %d records" % (len(calls), len(recs))); bad = 1
for c, r in zip(calls, recs):
    want = (c["api"], c["op"], c["seq"], c["bytes"], c["count"], c.get("peer", "-"), str(ids.index(r["id"]) + 1))
    got = (r["api"], r["op"], r["seq"], r["bytes"], r["count"], r.get("peer", "-"), c["comm"])
    if want != got or r["stream"] != "0x4000":
        print("# want %s got %s stream %s" % (want, got, r["stream"])); bad = 1
sys.exit(bad)
PY
}

for rank in 0 2; do
	"$IG" run -q -o "$TMP/r$rank.igrec" -- "$NC/fakenccl_app" $rank 4 > "$TMP/r$rank.out" 2> "$TMP/r$rank.err"
	"$IG" report --dump "$TMP/r$rank.igrec" > "$TMP/r$rank.txt"
	ok "rank $rank: every call recorded with its op, bytes, count, peer, stream and sequence" -- \
		compare "$TMP/r$rank.out" "$TMP/r$rank.txt"
done
ok "the probes were attached to the process's libnccl" -- \
	grep -q "libnccl .*attached=18 symbols=18 static=0 path=.*/libnccl.so.2" "$TMP/r0.txt"
ok "a communicator is created with its rank and size" -- \
	grep -q "kind=comm api=ncclCommInitRank .* rank=2 nranks=4 .*ret=0" "$TMP/r2.txt"
id0=$(sed -n 's/.*kind=comm api=ncclCommInitRank .* id=\(0x[0-9a-f]*\) .*/\1/p' "$TMP/r0.txt")
id2=$(sed -n 's/.*kind=comm api=ncclCommInitRank .* id=\(0x[0-9a-f]*\) .*/\1/p' "$TMP/r2.txt")
ok "the communicator's id is the same in both ranks ($id0)" -- test -n "$id0" -a "$id0" = "$id2"
s0=$(sed -n 's/.*kind=comm api=ncclCommSplit .* id=\(0x[0-9a-f]*\) .*/\1/p' "$TMP/r0.txt")
s2=$(sed -n 's/.*kind=comm api=ncclCommSplit .* id=\(0x[0-9a-f]*\) .*/\1/p' "$TMP/r2.txt")
ok "a split communicator's id is the same in both ranks and not its parent's" -- \
	test -n "$s0" -a "$s0" = "$s2" -a "$s0" != "$id0"
ok "ncclCommUserRank and ncclCommCount give the split communicator's rank and size" -- \
	grep -q "kind=comm_info api=ncclCommUserRank .* rank=1 nranks=2" "$TMP/r2.txt"
n=$(grep -c "kind=group_end" "$TMP/r2.txt")
is "$n" 1 "one record for the group: its calls launch at its end"
ok "the calls inside the group are marked grouped" -- \
	grep -q "api=ncclSend .*group=1 flags=0x1" "$TMP/r2.txt"

IDLEGAP_COMPAT=1 "$IG" run -q -o "$TMP/c.igrec" -- "$NC/fakenccl_app" 1 4 > "$TMP/c.out" 2>/dev/null
"$IG" report --dump "$TMP/c.igrec" > "$TMP/c.txt"
ok "compat object: the same records" -- compare "$TMP/c.out" "$TMP/c.txt"

"$IG" run -o "$TMP/s.igrec" -- "$NC/static/fakenccl_app" 1 4 > /dev/null 2> "$TMP/s.err"
n=$(grep -c "NCCL is linked into .*libtorch_cuda.so.*not probed" "$TMP/s.err")
is "$n" 1 "NCCL linked into another library: one line says it is not probed"
"$IG" report --dump "$TMP/s.igrec" > "$TMP/s.txt"
ok "... and no NCCL call is recorded" -- sh -c "! grep -q ' nccl ' '$TMP/s.txt'"

"$IG" run -q -o "$TMP/n.igrec" --libcuda "$FAKE/libcuda.so.1" -- "$FAKE/fakecuda_app" 2 2 > /dev/null 2>&1
"$IG" report --dump "$TMP/n.igrec" > "$TMP/n.txt"
ok "a job without NCCL: no NCCL probe attached, no NCCL record" -- \
	sh -c "! grep -q -e ' libnccl ' -e ' nccl ' '$TMP/n.txt'"
done_testing

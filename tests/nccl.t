#!/bin/sh
# The simulated NCCL (build/simgpu/libnccl.so.2): its ABI and API, a
# 4-rank job whose rank 3 comes 50 ms late to an all-reduce (the others'
# truth shows the wait), groups as one launch, send/receive pairs, split
# communicators, and a traced trainsim ranks job (root).
. "$(dirname "$0")/lib.sh"

LIB=$IG_TOP/build/simgpu/libnccl.so.2
CHECK=$IG_TOP/build/tests/nccl_check
TS=$IG_TOP/build/trainsim
[ -x "$CHECK" ] && [ -f "$LIB" ] || skip_all "build first: make all test-progs"

export SIMNCCL_TRACE="$TMP/nccl.%p" SIMGPU_TRACE="$TMP/gpu.%p"
unset SIMNCCL_BW_GBPS SIMNCCL_LAT_US

out=$("$CHECK" abi 2>&1)
rc=$?
[ -n "$out" ] && echo "$out" | sed 's/^/# /'
is "$rc" 0 "nccl: version, unique id by value, enum values, argument checks"

# One uprobe per entry point: one address each, only nccl* exported, and
# the entry points the project's probes rely on are all there.
if command -v nm >/dev/null; then
	syms=$(nm -D --defined-only "$LIB")
	is "$(echo "$syms" | awk '{print $1}' | sort | uniq -d | wc -l)" 0 \
		"nccl: no two exported symbols share an address"
	is "$(echo "$syms" | awk '{print $3}' | grep -vc '^nccl')" 0 \
		"nccl: only nccl* symbols exported"
	missing=
	for f in ncclGetVersion ncclGetUniqueId ncclCommInitRank \
		 ncclCommInitRankConfig ncclCommInitAll ncclCommSplit \
		 ncclCommDestroy ncclCommAbort ncclCommCount ncclCommUserRank \
		 ncclCommCuDevice ncclGetErrorString ncclGetLastError \
		 ncclAllReduce ncclBroadcast ncclReduce ncclAllGather \
		 ncclReduceScatter ncclSend ncclRecv ncclGroupStart \
		 ncclGroupEnd; do
		echo "$syms" | awk '{print $3}' | grep -qx "$f" || missing="$missing $f"
	done
	is "$missing" "" "nccl: the NCCL 2.x entry points are exported"
	# nothing inside the library calls or jumps to an entry point
	if command -v objdump >/dev/null; then
		is "$(objdump -d "$LIB" | grep -cE '[[:space:]](call|jmp)[a-z]*[[:space:]].*<nccl')" 0 \
			"nccl: no entry point is called from inside the library"
	fi
	# the library calls the driver's public launch entry point
	ok "nccl: launches through cuLaunchKernel" -- sh -c \
		"nm -D --undefined-only '$LIB' | grep -qw cuLaunchKernel"
else
	skip "nccl: exported symbols" "no nm"
fi

rm -f "$TMP"/nccl.* "$TMP"/gpu.*
"$CHECK" ranks 4 3 50 > "$TMP/ranks.out" 2>&1
rc=$?
sed 's/^/# /' "$TMP/ranks.out"
is "$rc" 0 "nccl: a 4-rank job runs its collectives, pairs and split"

pychecks "$TMP" "$TMP/ranks.out" <<'PY'
import glob, os, re, sys
from tap import check
d, outf = sys.argv[1], sys.argv[2]
host = {}
for l in open(outf):
    m = re.match(r"rank (\d+) pid (\d+) hostwait (\d+)", l)
    if m:
        host[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
rows, kernels = [], {}
for f in glob.glob(d + "/nccl.*"):
    pid = int(f.rsplit(".", 1)[1])
    for l in open(f):
        p = l.split()
        rows.append(dict(op=p[0], comm=p[1], rank=int(p[2]), n=int(p[3]),
                         seq=int(p[4]), peer=int(p[5]), bytes=int(p[6]),
                         arrive=int(p[7]), last=int(p[8]), start=int(p[9]),
                         end=int(p[10]), stream=p[11], status=p[12], pid=pid))
for f in glob.glob(d + "/gpu.*"):
    kernels[int(f.rsplit(".", 1)[1])] = [l.split() for l in open(f)
                                         if l.startswith("kernel ")]
check(len(host) == 4 and len(kernels) == 4, "four ranks, four driver traces",
      "%d ranks, %d traces" % (len(host), len(kernels)))
check(rows and all(r["status"] == "ok" for r in rows), "every task completed",
      "%d rows" % len(rows))
main = [r for r in rows if r["n"] == 4]
ids = {r["comm"] for r in main}
check(len(ids) == 1, "one 4-rank communicator", repr(ids))

late = {r["rank"]: r for r in main if r["op"] == "allreduce" and r["seq"] == 2}
ok = len(late) == 4
if ok:
    wait = {k: v["last"] - v["arrive"] for k, v in late.items()}
    for k in range(3):
        print("# rank %d: truth wait %.3f ms, host saw %.3f ms from call to "
              "sync return" % (k, wait[k] / 1e6, host[k][1] / 1e6))
    print("# rank 3 (late): truth wait %.3f ms" % (wait[3] / 1e6))
    check(all(40e6 <= wait[k] <= 1e9 for k in range(3)),
          "the on-time ranks wait about 50 ms for the late one",
          repr(wait))
    check(wait[3] < 10e6, "the late rank waits for nobody", repr(wait[3]))
    check(len({v["last"] for v in late.values()}) == 1 and
          late[0]["last"] == late[3]["arrive"],
          "every rank's last arrival is the late rank's arrival")
    check(len({v["end"] for v in late.values()}) == 1,
          "the all-reduce ends at the same time on every rank")
    want = 10000 + int(2 * 3 / 4 * (1 << 22) * 1e9 / 100e9)
    check(all(abs(v["end"] - v["start"] - want) <= 1 for v in late.values()),
          "transfer = latency + 2(n-1)/n bytes / bandwidth",
          "%d vs %d" % (late[0]["end"] - late[0]["start"], want))
    check(all(host[k][1] >= wait[k] for k in range(3)),
          "each host's sync lasted at least its device wait")
else:
    check(False, "the late all-reduce is in the truth", repr(sorted(late)))

# group of three collectives = one launch (one driver kernel line)
for pid, ks in kernels.items():
    mine = [r for r in main if r["pid"] == pid]
    g = [r for r in mine if r["seq"] in (3, 4, 5)]
    rank = mine[0]["rank"] if mine else -1
    nl = 8 if rank in (0, 1) else 7
    check(len(ks) == nl, "rank %d: one driver kernel per launch" % rank,
          "%d kernel lines, want %d" % (len(ks), nl))
    check([r["op"] for r in sorted(g, key=lambda r: r["seq"])] ==
          ["allreduce", "allgather", "reducescatter"] and
          len({r["arrive"] for r in g}) == 1 and
          any(int(k[2]) == g[0]["arrive"] and int(k[3]) == max(r["end"] for r in g)
              for k in ks),
          "rank %d: a group of three collectives is one kernel" % rank)

# every send pairs with the receive at its peer
sends = {(r["rank"], r["peer"], r["seq"]): r for r in main if r["op"] == "send"}
recvs = {(r["peer"], r["rank"], r["seq"]): r for r in main if r["op"] == "recv"}
check(len(sends) == 5 and sorted(sends) == sorted(recvs),
      "sends and receives pair up", "%r / %r" % (sorted(sends), sorted(recvs)))
check(all(s["last"] == recvs[k]["last"] == max(s["arrive"], recvs[k]["arrive"])
          for k, s in sends.items() if k in recvs),
      "a pair starts once both sides arrived")
lone = sends.get((0, 1, 2))
check(lone is not None and lone["last"] - lone["arrive"] >= 15e6,
      "a send waits for its late receiver")
sub = [r for r in rows if r["n"] == 2]
check(len(sub) == 4 and len({r["comm"] for r in sub}) == 2,
      "ncclCommSplit: two 2-rank communicators")
PY

left=
for id in $(cat "$TMP"/nccl.* | awk '{print $2}' | sort -u); do
	[ -e "/dev/shm/simnccl-$id" ] && left="$left $id"
done
is "$left" "" "nccl: no shared-memory file left behind"

# truth.py's summary of the same files: 8 (process, communicator, rank)
# entries, and the on-time ranks' waits of about 50 ms among them.
"$IG_TOP/tools/truth.py" nccl "$TMP/nccl.*" > "$TMP/sum.json"
is "$?" 0 "truth.py nccl summarizes the collectives"
# Each entry's wait is the sum of its rows' (last - arrive), as read
# here from the files; the on-time ranks 0-2 of the 4-rank communicator
# waited about 50 ms for rank 3 at seq 2 (on a loaded host rank 3 may wait
# as long for a rank the load held back, so it is not counted).
ok "truth.py nccl: every rank of both communicators, waits counted" -- \
	/usr/bin/python3 -c '
import glob, json, sys
j = json.load(open(sys.argv[1]))
want = {}
for f in glob.glob(sys.argv[2] + "/nccl.*"):
    for l in open(f):
        v = l.split()
        k = (int(v[13]), v[1], int(v[2]))
        want[k] = want.get(k, 0) + max(0, int(v[8]) - int(v[7]))
got = {(x["pid"], x["comm"], x["rank"]): x["wait_s"] for x in j["ranks"]}
r = [x for x in j["ranks"] if x["nranks"] == 4]
bad = [k for k in want if k not in got or abs(got[k] - want[k] / 1e9) > 1e-9]
print("# waits: " + ", ".join("rank %d %.3f s" % (x["rank"], x["wait_s"]) for x in r))
if bad or len(got) != len(want):
    print("# entries that differ from the files: %r" % bad, file=sys.stderr)
sys.exit(not (len(j["ranks"]) == 8 and len(r) == 4 and not bad and len(got) == len(want) and
              sum(x["tasks"] for x in r) == 9 * 4 + 2 and
              all(x["wait_s"] >= 0.04 for x in r if x["rank"] < 3)))' "$TMP/sum.json" "$TMP"

rm -f "$TMP"/nccl.*
"$CHECK" initall 3 > "$TMP/all.out" 2>&1
is "$?" 0 "nccl: ncclCommInitAll, a rank left waiting for its peers, a group over three communicators"
sed 's/^/# /' "$TMP/all.out"
is "$(cat "$TMP"/nccl.* | awk '$5 == 2 {print $9, $11}' | sort -u | wc -l)" 1 \
	"nccl: the three ranks of one process share last arrival and end"

is "$(cat "$TMP"/nccl.* | awk '$3 == 0 && $5 == 1 && $9 - $8 >= 20000000' | wc -l)" 1 \
	"nccl: the rank left alone waited at least the 20 ms before its peers came"

# A rank whose peer's process is gone does not hang: its all-reduce ends,
# marked aborted, and the communicator reports a remote error.
rm -f "$TMP"/nccl.*
timeout 60 "$CHECK" orphan > "$TMP/orphan.out" 2>&1
is "$?" 0 "nccl: a peer that left ends the wait with ncclRemoteError"
sed 's/^/# /' "$TMP/orphan.out"
is "$(cat "$TMP"/nccl.* | awk '{print $1, $13}')" "allreduce aborted" \
	"nccl: the orphaned all-reduce is marked aborted in the truth"

# trainsim ranks (C) and trainsim.py ranks (Python): the launcher starts
# the ranks, each all-reduces once a step, and the merged truth names the
# straggler and accounts for every collective.
check_ranks() {
	/usr/bin/python3 - "$@" <<'EOF'
import json, sys
f, scen, world, steps, strag = sys.argv[1:]
j = json.load(open(f))
errs = []
if j["mode"] != "ranks" or j["scenario"] != scen: errs.append("header %r" % j)
if j["world"] != int(world) or len(j["ranks"]) != int(world): errs.append("world")
if j["straggler"] != int(strag): errs.append("straggler %r" % j["straggler"])
for i, r in enumerate(j["ranks"]):
    if not r: errs.append("rank %d wrote no truth" % i); continue
    want = "balanced" if int(strag) < 0 else "straggler" if i == int(strag) else "peer"
    if r["rank"] != i or r["role"] != want: errs.append("rank %d role %r" % (i, r["role"]))
    n = r["nccl"]
    if n["collectives"] != int(steps) or n["traced"] != int(steps):
        errs.append("rank %d: %r collectives" % (i, n))
    if not (n["transfer_s"] > 0 and n["wait_s"] >= 0): errs.append("rank %d: %r" % (i, n))
    if r["steps"] != int(steps) or r["gpu"]["ops"] <= 0: errs.append("rank %d steps" % i)
for e in errs: print("# " + e)
sys.exit(1 if errs else 0)
EOF
}
if [ -x "$TS" ]; then
	unset SIMNCCL_TRACE SIMGPU_TRACE
	LD_LIBRARY_PATH=$IG_TOP/build/simgpu "$TS" ranks --world 4 -s storage \
		-n 20 -q --data "$TMP/data" --data-mb 16 --truth "$TMP/c.json"
	is "$?" 0 "trainsim ranks: a 4-rank storage job runs"
	ok "trainsim ranks: merged truth" -- check_ranks "$TMP/c.json" storage 4 20 2
	LD_LIBRARY_PATH=$IG_TOP/build/simgpu "$TS" ranks --world 3 -s balanced \
		-n 10 -q --data "$TMP/data" --data-mb 16 --truth "$TMP/b.json"
	is "$?" 0 "trainsim ranks: a 3-rank balanced job runs"
	ok "trainsim ranks: balanced truth" -- check_ranks "$TMP/b.json" balanced 3 10 -1
	LD_LIBRARY_PATH=$IG_TOP/build/simgpu "$IG_TOP/tools/trainsim.py" ranks \
		--world 4 -s gil -n 20 -q --truth "$TMP/py.json"
	is "$?" 0 "trainsim.py ranks: a 4-rank GIL job runs"
	ok "trainsim.py ranks: merged truth" -- check_ranks "$TMP/py.json" gil 4 20 2
	ok "trainsim ranks: no rendezvous left behind" -- sh -c \
		"! ls -d '$TMPDIR'/trainsim-ranks.* 2>/dev/null | grep -q ."
else
	skip "trainsim ranks" "build first: make all"
fi

# A traced ranks job: idlegap follows every rank of the host.
if [ "$(id -u)" != 0 ]; then
	skip "nccl: idlegap run traces a ranks job" "needs root"
elif [ ! -x "$TS" ] || ! "$TS" --help 2>/dev/null | grep -q -- --world; then
	skip "nccl: idlegap run traces a ranks job" "trainsim has no ranks mode"
else
	rm -f "$TMP"/nccl.*
	LD_LIBRARY_PATH=$IG_TOP/build/simgpu "$IG" run -q --json "$TMP/r.json" \
		-- "$TS" ranks --world 4 -s storage -n 30 -q \
		--truth "$TMP/ranks.json" 2> "$TMP/run.err"
	is "$?" 0 "nccl: idlegap run traces a 4-rank trainsim job"
	sed 's/^/# /' "$TMP/run.err"
	ok "nccl: the traced job wrote its truth" -- test -s "$TMP/ranks.json"
	is "$(json "$TMP/r.json" 'sum(1 for p in j["processes"] if p.get("launches", 0) > 0)')" 4 \
		"nccl: idlegap followed the launches of all four ranks"
fi
done_testing

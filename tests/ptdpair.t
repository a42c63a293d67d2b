#!/bin/sh
# Per-thread default streams under idlegap against the simulator's trace
# (tests/progs/ptdpair.c): a synchronous copy on one thread's per-thread
# stream drains neither another thread's per-thread stream nor a created
# stream, a copy on the legacy stream drains both, and a stream the kernel
# side takes as drained is one the engine takes as drained too, so no
# later synchronize that proves a drain is hidden from the engine.
# Idle the trace says was busy is a bug (precision); a known gap that
# idlegap does not find is evidence lost (recall).
# Needs root.
. "$(dirname "$0")/lib.sh"
need_root
P=$IG_TOP/build/tests/progs/ptdpair
[ -x "$IG" ] && [ -x "$P" ] && [ -f "$IG_TOP/build/simgpu/libcuda.so.1" ] || \
	skip_all "build first: make all test-progs"
trap 'rm -rf "$TMP"' EXIT

export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
export SIMGPU_TRACE=$TMP/trace.%p
"$IG" run -q --no-nvml --gaps -1 --json "$TMP/r.json" -o "$TMP/r.igrec" -- "$P" 60 \
	2> "$TMP/err"
is "$?" 0 "ptdpair ran under idlegap"
sed 's/^/# /' "$TMP/err"

/usr/bin/python3 "$IG_TOP/tools/truth.py" score --truth "$TMP/trace.*" \
	--report "$TMP/r.json" --min-gap-ms 20 > "$TMP/score.json"
is "$?" 0 "truth.py scores the run"
sed 's/^/# /' "$TMP/score.json"
ok "no idle where the trace shows work (precision >= 0.95)" -- \
	/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); p=s["precision"]; sys.exit(not (p is None or p >= 0.95))' "$TMP/score.json"
ok "the known gaps are found (recall >= 0.8)" -- \
	/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); r=s["recall"]; sys.exit(not (r is not None and r >= 0.8))' "$TMP/score.json"
done_testing

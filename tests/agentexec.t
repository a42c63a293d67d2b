#!/bin/sh
# A followed process that execs (docs/design.md §7.7): the agent follows
# a process from its first libcuda mapping and reads its identity then;
# a program that maps libcuda and then execs the GPU job with the job's
# environment (a launcher that sets SLURM_JOB_ID and RANK for the
# program it becomes, as an entrypoint script's `exec` or torchrun's
# spawned ranks do) is named by the program it became, in the window
# the exec came in, not only from the next one: one agent window of 5 s
# (the next 300 s away), a Python process that loads the stand-in
# libcuda, sleeps 1.5 s and execs fakecuda_app with SLURM_JOB_ID=77 and
# RANK=5 added; its series on /metrics after the window say
# slurm_job="77", rank="5" and comm="fakecuda_app", and none names it
# python3 or lacks the job.
. "$(dirname "$0")/lib.sh"
need_root
APP=$IG_TOP/build/tests/fakecuda/fakecuda_app
LIB=$IG_TOP/build/tests/fakecuda/libcuda.so.1
[ -x "$APP" ] && [ -f "$LIB" ] || skip_all "build first: make test-progs"
command -v curl > /dev/null || skip_all "no curl"

AGENT= JOB=
cleanup() {
	[ -n "$JOB" ] && kill "$JOB" 2>/dev/null && wait "$JOB" 2>/dev/null
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/lib"
cp "$LIB" "$TMP/lib/"
if ! start_agent "$TMP/a.out" --listen 127.0.0.1:0 --window 5 --every 300 \
	--libcuda "$TMP/lib/libcuda.so.1" --reports "$TMP/r"; then
	fail "the agent serves /metrics"
	sed 's/^/# /' "$TMP/a.out"
	exit 1
fi
PORT=$(sed -n 's/.*metrics on port \([0-9]*\).*/\1/p' "$TMP/a.out" | head -1)
LD_LIBRARY_PATH=$TMP/lib /usr/bin/python3 - "$APP" > "$TMP/job.out" 2>&1 <<'PY' &
import ctypes, os, sys, time
ctypes.CDLL("libcuda.so.1")	# mapped: the agent follows this process
time.sleep(1.5)
env = dict(os.environ, SLURM_JOB_ID="77", RANK="5")
os.execve(sys.argv[1], [sys.argv[1], "20", "20"], env)
PY
JOB=$!
wait "$JOB"
is "$?" 0 "the job maps libcuda, execs fakecuda_app and ends"
JOB=
# the window ends 5 s after the agent started
wait_until 20 sh -c "curl -s http://127.0.0.1:$PORT/metrics | grep -q '^idlegap_windows_total 1'"
curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/metrics"
pychecks "$TMP/metrics" <<'PY'
import re, sys
from tap import check
text = open(sys.argv[1]).read().splitlines()
series = [dict(re.findall(r'(\w+)="([^"]*)"', l.split("}")[0]))
          for l in text if l.startswith("idlegap_gpu_seconds_total{")]
mine = [s for s in series if s.get("comm") in ("fakecuda_app", "python3")]
print("# %d series of the job: %s" % (len(mine), sorted({(s.get("comm"), s.get("slurm_job"),
                                                          s.get("rank")) for s in mine})))
check(mine, "the job is on /metrics after its window")
check(all(s.get("comm") == "fakecuda_app" for s in mine),
      "its series name the program it exec'd (fakecuda_app)")
check(all(s.get("slurm_job") == "77" and s.get("rank") == "5" for s in mine),
      "its series carry the environment it exec'd with: slurm_job=77, rank=5")
PY
stop_agent
is "$?" 0 "the agent exits 0 on SIGTERM"
done_testing

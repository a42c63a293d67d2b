#!/bin/sh
# Which GPU each process is on, from evidence that outlives its set-up
# (docs/design.md §4.2), on the simulated NVML: a single-GPU Python job
# (ctypes, libcuda by dlopen) on GPU 3 of 4, attached mid-run, is on
# device 3 with that GPU's UUID; `report` of its recording says the same;
# a process nothing places is a device of its own, "device": null, never
# GPU 0; the ranks of a 4-GPU job attached mid-run get one device each,
# with its rank.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
PY=$IG_TOP/tools/trainsim.py
NVCHECK=$IG_TOP/build/tests/simgpu_nvml
[ -x "$IG" ] && [ -x "$NVCHECK" ] &&
	[ -f "$IG_TOP/build/simgpu/libnvidia-ml.so.1" ] ||
	skip_all "build first: make all test-progs"

# A simulated machine of the test's own: no other job's processes on it.
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu SIMGPU_DEVICES=4 \
	SIMGPU_MACHINE="devices-t-$$"
trap 'rm -f "/dev/shm/simgpu-machine-$SIMGPU_MACHINE"; rm -rf "$TMP"' EXIT
uuid3=$("$NVCHECK" basic | sed -n 's/^uuid3 //p')
ok "NVML names GPU 3 ($uuid3)" -- test -n "$uuid3"

# JOB OUT: waits until the job's GPU has run work for a second
started() {
	for _ in $(seq 1 100); do
		[ -s "$TMPDIR/trainsim-py-trace.$1" ] &&
			[ "$(wc -l < "$TMPDIR/trainsim-py-trace.$1")" -ge 50 ] && return 0
		sleep 0.1
	done
	return 1
}

# devices JSON: "device/uuid/source;" per gpu.devices entry
devices() {
	json "$1" '"".join("%s/%s/%s;" % (d["device"], d["uuid"], d["device_source"]) for d in j["gpu"]["devices"])'
}

CUDA_VISIBLE_DEVICES=3 "$PY" -s healthy --seconds 8 > "$TMP/one.out" 2>&1 &
job=$!
started $job
"$IG" attach -p $job -d 2 -q --json "$TMP/one.json" -o "$TMP/one.igrec" \
	2> "$TMP/one.err"
is "$?" 0 "attach: a running single-GPU job for 2 s"
wait $job
is "$(devices "$TMP/one.json")" "3/$uuid3/nvml;" \
	"attached mid-run, the job on CUDA_VISIBLE_DEVICES=3 is on device 3, with its UUID, from NVML"
is "$(json "$TMP/one.json" '[p["device"] for p in j["processes"] if p["pid"] == '$job'][0]')" 3 \
	"processes[]: its device is 3"
"$IG" report --json "$TMP/one.r.json" "$TMP/one.igrec" > /dev/null 2>&1
is "$(devices "$TMP/one.r.json")" "3/$uuid3/nvml;" "report of the recording: the same device"
n=$("$IG" report --dump "$TMP/one.igrec" | grep -c " gpudev .*pid=$job .*device=3 source=nvml")
ok "the recording holds the gpudev record ($n)" -- test "$n" -ge 1

# NVML without process lists, and nothing in the environment: unknown
"$PY" -s healthy --seconds 8 > "$TMP/none.out" 2>&1 &
job=$!
started $job
SIMNVML_NO_PROCESSES=1 "$IG" attach -p $job -d 2 --json "$TMP/none.json" \
	> "$TMP/none.txt" 2> "$TMP/none.err"
is "$?" 0 "attach: a job whose GPU nothing names"
wait $job
is "$(json "$TMP/none.json" '[(d["device"], d["pid"]) for d in j["gpu"]["devices"]]')" \
	"[(None, $job)]" "its GPU is device null, its own, not device 0"
ok "the text report says so" -- grep -q "the GPU of pid $job is not known" "$TMP/none.txt"

# 4 ranks, one GPU each (cuda:LOCAL_RANK), attached mid-run: 4 devices,
# each with its rank
export TRAINSIM_NCCL_ID=$TMP/ncclid
"$PY" ranks --world 4 -s storage -n 400 > "$TMP/ranks.out" 2>&1 &
job=$!
for _ in $(seq 1 300); do
	pids=$(pgrep -P $job | sort -n | paste -sd, -)
	n=0
	for p in $(echo "$pids" | tr , ' '); do
		[ -s "$TMPDIR/trainsim-py-nccl.$p" ] && n=$((n + 1))
	done
	[ $n -eq 4 ] && break
	sleep 0.1
done
is "$n" 4 "the 4 ranks are training"
"$IG" attach -p "$job,$pids" -d 3 -q --json "$TMP/ranks.json" 2> "$TMP/ranks.err"
is "$?" 0 "attach: the running 4-rank job for 3 s"
kill $job 2>/dev/null
wait $job
is "$(json "$TMP/ranks.json" '" ".join("%s:%s" % (d["device"], d["rank"]) for d in j["gpu"]["devices"])')" \
	"0:0 1:1 2:2 3:3" "4 devices, each with its rank"
is "$(json "$TMP/ranks.json" '",".join(sorted(set(d["device_source"] for d in j["gpu"]["devices"])))')" \
	"nvml" "every rank's device from NVML"

done_testing

#!/bin/sh
# The simulated NVML (build/simgpu/libnvidia-ml.so.1), loaded by dlopen as
# idlegap loads it: devices, UUIDs and error codes; the processes on each
# GPU (CUDA_VISIBLE_DEVICES, a killed process, an exited one); utilization
# samples, rates, per process and GPM against a second of known work; the
# switches that make each query unsupported, and the one that makes
# nvmlInit fail.
. "$(dirname "$0")/lib.sh"

LIB=$IG_TOP/build/simgpu/libnvidia-ml.so.1
CHECK=$IG_TOP/build/tests/simgpu_nvml
[ -x "$CHECK" ] && [ -f "$LIB" ] || skip_all "build first: make all test-progs"

# A machine of the test's own, removed at the end.
export SIMGPU_MACHINE="simnvml-t-$$" SIMGPU_DEVICES=4
trap 'rm -f "/dev/shm/simgpu-machine-$SIMGPU_MACHINE"; rm -rf "$TMP"' EXIT

for c in basic procs util; do
	out=$("$CHECK" "$c" 2>&1)
	rc=$?
	[ -n "$out" ] && echo "$out" | sed 's/^/# /'
	is "$rc" 0 "simnvml: $c"
	[ "$c" = basic ] && uuid3=$(echo "$out" | sed -n 's/^uuid3 //p')
done

# UUIDs are stable: another process of the same machine gets the same one,
# and another machine another one.
again=$("$CHECK" basic | sed -n 's/^uuid3 //p')
is "$again" "$uuid3" "simnvml: a GPU's UUID is the same in every process"
other=$(SIMGPU_MACHINE="simnvml-u-$$" "$CHECK" basic | sed -n 's/^uuid3 //p')
rm -f "/dev/shm/simgpu-machine-simnvml-u-$$"
ok "simnvml: another machine's GPU 3 has another UUID" -- \
	test -n "$other" -a "$other" != "$uuid3"

# A machine name that is not a plain file name is not used as one.
SIMGPU_MACHINE="../x" "$CHECK" basic >/dev/null 2>&1
ok "simnvml: SIMGPU_MACHINE with a slash stays under /dev/shm" -- \
	test ! -e /dev/x -a ! -e "/dev/shm/simgpu-machine-../x"

# A machine file an older build left (magic "SIMM", version 1, the
# smaller layout) is replaced; a newer build's is left as it is.
old=/dev/shm/simgpu-machine-simnvml-v-$$
/usr/bin/python3 -c 'import struct, sys
open(sys.argv[1], "wb").write(struct.pack("<IIII", 0x53494d4d, int(sys.argv[2]), 1, 0) + bytes(4096))' "$old" 1
SIMGPU_MACHINE="simnvml-v-$$" "$CHECK" basic > /dev/null 2> "$TMP/v.err"
is "$?" 0 "simnvml: an older build's machine file is replaced"
ver=$(od -An -tu4 -j4 -N4 "$old" | tr -d ' ')
is "$ver" 2 "simnvml: the machine file is of this version afterwards"
/usr/bin/python3 -c 'import struct, sys
open(sys.argv[1], "wb").write(struct.pack("<IIII", 0x53494d4d, int(sys.argv[2]), 1, 0) + bytes(4096))' "$old" 99
SIMGPU_MACHINE="simnvml-v-$$" "$CHECK" basic > /dev/null 2> "$TMP/v.err"
rc=$?
ok "simnvml: a newer build's machine file is not used" -- test "$rc" -ne 0
ok "simnvml: ... nor replaced" -- test "$(od -An -tu4 -j4 -N4 "$old" | tr -d ' ')" = 99
ok "simnvml: ... and said so" -- grep -q 'not a machine of this version' "$TMP/v.err"
rm -f "$old"

# SIMNVML_INIT_FAIL: nvmlInit fails as a real one does where the module is
# not loaded, the driver was upgraded without a reboot, or the device
# nodes may not be opened; nothing else answers then
for m in driver:9:'Driver Not Loaded' version:18:'RM has detected an NVML/RM version mismatch.' \
	 permission:4:'Insufficient Permissions'; do
	want=${m#*:}
	got=$(SIMNVML_INIT_FAIL=${m%%:*} /usr/bin/python3 - "$LIB" <<'PY'
import ctypes, sys
nv = ctypes.CDLL(sys.argv[1])
nv.nvmlErrorString.restype = ctypes.c_char_p
r = nv.nvmlInit_v2()
n = ctypes.c_uint(0)
print("%d:%s:%d" % (r, nv.nvmlErrorString(r).decode(), nv.nvmlDeviceGetCount_v2(ctypes.byref(n))))
PY
)
	is "$got" "$want:1" "simnvml: SIMNVML_INIT_FAIL=${m%%:*}: nvmlInit_v2 answers ${want%%:*}, then nothing is initialised"
done
is "$(SIMNVML_INIT_FAIL=0 "$CHECK" basic > /dev/null 2>&1; echo $?)" 0 "simnvml: SIMNVML_INIT_FAIL=0 is off"

if command -v nm >/dev/null; then
	syms=$(nm -D --defined-only "$LIB" | awk '{print $3}')
	other=$(echo "$syms" | grep -vc '^nvml')
	is "$other" 0 "simnvml: only nvml* symbols exported"
	for s in nvmlInit_v2 nvmlDeviceGetComputeRunningProcesses_v3 \
		 nvmlDeviceGetSamples nvmlGpmMetricsGet; do
		echo "$syms" | grep -qx "$s" || fail "simnvml: exports $s"
	done
	pass "simnvml: exports the versioned entry points"
else
	skip "simnvml: symbol checks" "nm not installed"
fi

done_testing

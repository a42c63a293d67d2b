#!/bin/sh
# Targets idlegap cannot see as it sees itself: a job whose libcuda exists
# only in its own mount namespace (a container's), a zombie, a pid gone
# before tracing started.  Each is traced right or refused with one line,
# never reported as "No GPU activity" with exit 0.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
TS=$IG_TOP/build/trainsim
SIM=$IG_TOP/build/simgpu/libcuda.so.1
[ -x "$TS" ] && [ -f "$SIM" ] || skip_all "build/trainsim or build/simgpu missing (make)"
command -v unshare > /dev/null || skip_all "unshare missing (util-linux)"

# --- libcuda only in the target's mount namespace ---------------------------
# The directory is empty here; in the job's namespace a tmpfs holds libcuda.
mkdir "$TMP/mnt"
in_ns() {	# CMD...: in a private mount namespace where $TMP/mnt holds libcuda
	exec unshare -m --propagation private sh -c 'mount -t tmpfs none "$1" && cp "$2" "$1"/ && shift 2 && exec "$@"' \
		in_ns "$TMP/mnt" "$SIM" "$@"
}
stop() { kill "$1" 2> /dev/null; wait "$1" 2> /dev/null; }
# mapped PID: waits (10 s at most) until PID maps libcuda
mapped() {
	_i=0
	until grep -q libcuda /proc/$1/maps 2> /dev/null || [ $_i -ge 1000 ]; do
		sleep 0.01; _i=$((_i + 1))
	done
}

LD_LIBRARY_PATH=$TMP/mnt in_ns "$TS" -s healthy -q -n 100000 &
job=$!
mapped $job
ok "container: the job maps libcuda from its own mount namespace" -- \
	grep -q "$TMP/mnt/libcuda.so.1" /proc/$job/maps
ok "container: libcuda is not visible outside it" -- test ! -e "$TMP/mnt/libcuda.so.1"
"$IG" check -p $job > "$TMP/check.txt" 2>&1
rc=$?
ok "container: check -p reads the job's libcuda (exit $rc)" -- \
	sh -c "test $rc = 0 && grep -q '^  ok   entry points' '$TMP/check.txt' && grep -q '^ready' '$TMP/check.txt'"
"$IG" attach -p $job -d 2 --json "$TMP/ns.json" > "$TMP/ns.txt" 2> "$TMP/ns.err"
rc=$?
stop $job
is "$rc" 0 "container: attach exits 0"
ok "container: the job's GPU work is seen" -- grep -q '^GPU busy' "$TMP/ns.txt"
is "$(json "$TMP/ns.json" 'j["cuda"]["libcuda"][0]["path"]')" "$TMP/mnt/libcuda.so.1" \
	"container: libcuda is named as the job names it"

# The same, with libcuda mapped only after tracing started (exec).
LD_LIBRARY_PATH=$TMP/mnt in_ns sh -c "sleep 1; exec '$TS' -s healthy -q -n 100000" &
job=$!
sleep 0.3
"$IG" attach -p $job -d 3 > "$TMP/late.txt" 2> "$TMP/late.err"
rc=$?
stop $job
is "$rc" 0 "container, libcuda mapped after attach: exits 0"
ok "container, libcuda mapped after attach: the GPU work is seen" -- grep -q '^GPU busy' "$TMP/late.txt"

# Without CAP_SYS_PTRACE another user's namespace cannot be entered.
LD_LIBRARY_PATH=$TMP/mnt in_ns "$TS" -s healthy -q -n 100000 &
job=$!
mapped $job
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,+bpf,+perfmon \
	--ambient-caps=-all,+bpf,+perfmon --bounding-set=-all,+bpf,+perfmon \
	"$IG" attach -p $job -d 1 > "$TMP/np.txt" 2> "$TMP/np.err"
rc=$?
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,+bpf,+perfmon,+dac_read_search \
	--ambient-caps=-all,+bpf,+perfmon,+dac_read_search --bounding-set=-all,+bpf,+perfmon,+dac_read_search \
	"$IG" check -p $job > "$TMP/npc.txt" 2>&1
crc=$?
stop $job
ok "container, no CAP_SYS_PTRACE: check -p is not ready and says why (exit $crc)" -- \
	sh -c "test $crc = 1 && grep -q '^NOT READY' '$TMP/npc.txt' && grep -q 'FAIL.*CAP_SYS_PTRACE' '$TMP/npc.txt' && ! grep -q '^ready' '$TMP/npc.txt'"
ok "container, no CAP_SYS_PTRACE: refused with exit 1 naming it (exit $rc)" -- \
	sh -c "test $rc = 1 && grep -q CAP_SYS_PTRACE '$TMP/np.err'"
ok "container, no CAP_SYS_PTRACE: no report of an idle GPU" -- \
	sh -c "! grep -q 'No GPU activity' '$TMP/np.txt'"

# --- a job in a chroot -------------------------------------------------------
# A root made of the build's files; the job names its libcuda /sim/libcuda.so.1,
# which is no file here, and maps shows the path from idlegap's root, which is
# no file under the job's root: the mapped inode says which name is the file.
CR=$TMP/chroot
mkdir -p "$CR/sim" "$CR/bin" "$CR/tmp"
cp "$TS" "$CR/bin/" && cp "$SIM" "$CR/sim/"
for l in $(ldd "$TS" "$SIM" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }' | sort -u); do
	mkdir -p "$CR$(dirname "$l")" && cp -L "$l" "$CR$l"
done
TMPDIR=/tmp LD_LIBRARY_PATH=/sim "$IG" run --json "$TMP/cr.json" -- chroot "$CR" /bin/trainsim -s healthy -q -n 3000 \
	> "$TMP/cr.txt" 2> "$TMP/cr.err"
rc=$?
is "$rc" 0 "chroot, run: exits 0"
ok "chroot, run: no warning that libcuda cannot be probed" -- sh -c "! grep -q 'cannot probe' '$TMP/cr.err'"
ok "chroot, run: the job's GPU work is seen" -- grep -q '^GPU busy' "$TMP/cr.txt"
TMPDIR=/tmp LD_LIBRARY_PATH=/sim chroot "$CR" /bin/trainsim -s healthy -q -n 100000 &
job=$!
mapped $job
"$IG" attach -p $job -d 2 > "$TMP/cra.txt" 2> "$TMP/cra.err"
rc=$?
stop $job
is "$rc" 0 "chroot, attach: exits 0"
ok "chroot, attach: the job's GPU work is seen" -- grep -q '^GPU busy' "$TMP/cra.txt"

# --- a zombie target ---------------------------------------------------------
# The shell execs sleep, which never reaps the child the shell started.
sh -c "sleep 0 & echo \$! > '$TMP/zombie'; exec sleep 30" &
parent=$!
sleep 0.3
zombie=$(cat "$TMP/zombie")
ok "zombie: pid $zombie is one" -- grep -q '^State:.*Z' /proc/$zombie/status
"$IG" check -p $zombie > "$TMP/zc.txt" 2>&1
rc=$?
ok "zombie: check -p is not ready (exit $rc)" -- \
	sh -c "test $rc = 1 && grep -q 'FAIL.*zombie' '$TMP/zc.txt'"
timeout 10 "$IG" attach -p $zombie > /dev/null 2> "$TMP/za.err"
rc=$?
ok "zombie: attach refuses it at once (exit $rc)" -- \
	sh -c "test $rc = 1 && grep -q zombie '$TMP/za.err' && test \$(wc -l < '$TMP/za.err') = 1"
stop $parent

# A traced process that becomes a zombie ends the trace as one that is gone.
sh -c "sleep 1 & echo \$! > '$TMP/dying'; exec sleep 30" &
parent=$!
until [ -s "$TMP/dying" ]; do sleep 0.01; done
timeout 15 "$IG" attach -p "$(cat "$TMP/dying")" > "$TMP/zd.txt" 2> "$TMP/zd.err"
rc=$?
stop $parent
ok "zombie: a target that becomes one ends the trace (exit $rc, not a timeout)" -- \
	sh -c "test $rc != 124"

# --- a pid that does not exist --------------------------------------------------
free=$( (sleep 0 & echo $!) ); wait
while [ -e /proc/$free ]; do free=$((free + 7919)); done
"$IG" attach -p $free -d 1 > "$TMP/nx.txt" 2> "$TMP/nx.err"
rc=$?
ok "no such pid: attach is an error in one line (exit $rc)" -- \
	sh -c "test $rc = 1 && test \$(wc -l < '$TMP/nx.err') = 1 && test ! -s '$TMP/nx.txt'"
"$IG" check -p $free > "$TMP/nxc.txt" 2>&1
rc=$?
ok "no such pid: check -p is not ready (exit $rc)" -- \
	sh -c "test $rc = 1 && ! grep -q '^ready' '$TMP/nxc.txt'"

# --- a pid gone before tracing started ----------------------------------------
# idlegap has looked at the pid and is loading its programs (it holds a BPF
# map); the target exits and is reaped before tracing starts.  (If the pid
# is looked at after the target is gone, it is "no such process": also
# right.)
sleep 30 &
target=$!
"$IG" attach -p $target -d 2 > "$TMP/gone.txt" 2> "$TMP/gone.err" &
ig=$!
i=0
until ls -l /proc/$ig/fd 2> /dev/null | grep -q 'anon_inode:bpf' || [ $i -ge 1000 ]; do
	sleep 0.01; i=$((i + 1))
done
stop $target
wait $ig
rc=$?
sed 's/^/# /' "$TMP/gone.err"
ok "gone: a target that exited before tracing is an error in one line (exit $rc)" -- \
	sh -c "test $rc = 1 && grep -Eq 'exited before tracing started|no such process' '$TMP/gone.err' && test \$(wc -l < '$TMP/gone.err') = 1"
ok "gone: no report of an idle GPU" -- sh -c "! grep -q 'No GPU activity' '$TMP/gone.txt'"
done_testing

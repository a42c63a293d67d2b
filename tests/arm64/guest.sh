#!/bin/sh
# The checks `make test-arm64` runs inside the arm64 guest (Debian's arm64
# kernel under qemu-system-aarch64, tests/arm64/init.sh), as root, on the
# cross-built tree in /opt/idlegap: `idlegap check`; a storage run whose
# blocked reads carry arm64's syscall numbers; a GIL run and a Python
# program traced with their Python stacks; a launch on a stream of its own
# (the 9th argument, read from the stack); and the unit tests.  TAP.
IG_TOP=/opt/idlegap
export IG_TOP
cd "$IG_TOP" || exit 1
. tests/lib.sh
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
TS=$IG_TOP/build/trainsim
diag "guest: $(uname -r) $(uname -m), $(nproc) CPUs, python $(python3 -c 'import sys; print(sys.version.split()[0])')"
# lead JSON: the cause with the most idle seconds
lead() { json "$1" 'max(j["causes"], key=lambda c: c["seconds"])["cause"] if j["causes"] else "none"'; }
t0=$(cut -d' ' -f1 /proc/uptime)
step() { diag "$1 at $(cut -d' ' -f1 /proc/uptime) s"; }
# Progress for the host's watchdog (tools/test-arm64.sh, tests/kernels/vmwatch.py): "IGVM-STEP
# start NAME" as each part begins, and every 10 s, when this script's tasks (a cgroup of their
# own) used 20 ms of CPU time or more, an IGVM-PROGRESS line.  After 100 s without, the guest
# dumps its blocked tasks and all its tasks; the host stops it after 120 s.  ighang=NAME on the
# kernel command line plants a hang in part NAME (it sleeps for good).
HANG=$(sed -n 's/.* ighang=\([^ ]*\).*/\1/p' /proc/cmdline)
echo 1 > /proc/sys/kernel/sysrq
CG=/sys/fs/cgroup/igstep
mkdir -p $CG 2> /dev/null || CG=
cpu_usec() { while read -r k v; do [ "$k" = usage_usec ] && { echo $v; return; }; done < $CG/cpu.stat; echo 0; }
(idle=0; u0=$(cpu_usec)
while sleep 10; do
	u1=$(cpu_usec); d=$(( (u1 - u0) / 1000 )); u0=$u1
	if [ -z "$CG" ] || [ $d -ge 20 ]; then echo "IGVM-PROGRESS ${d} ms of CPU time"; idle=0
	else echo "IGVM-IDLE ${d} ms of CPU time"; idle=$((idle + 1)); fi
	[ $idle = 10 ] && echo w > /proc/sysrq-trigger && echo t > /proc/sysrq-trigger
done) &
beat=$!
[ -n "$CG" ] && echo $$ > $CG/cgroup.procs
begin() {
	echo "IGVM-STEP start $1"
	[ "$HANG" = "$1" ] && { echo "IGVM: a hang planted in $1"; sleep infinity; }
}

# --- check ---------------------------------------------------------------------
begin check
"$IG" check > "$TMP/check.txt" 2>&1
rc=$?
sed 's/^/# check: /' "$TMP/check.txt"
ok "idlegap check: ready (exit $rc)" -- sh -c "test $rc = 0 && grep -q '^ready' '$TMP/check.txt'"
step "check done"

# --- storage ---------------------------------------------------------------------
begin storage
"$IG" run -q -o "$TMP/storage.igrec" -- "$TS" -s storage -t 6 --buffered -q > "$TMP/storage.out" 2>&1
rc=$?
sed 's/^/# storage: /' "$TMP/storage.out"
is "$rc" 0 "storage: traced"
"$IG" report --json "$TMP/storage.json" "$TMP/storage.igrec" > "$TMP/storage.txt" 2>&1
sed -n '1,40s/^/# storage report: /p' "$TMP/storage.txt"
# under TCG the emulated CPU, not the disk, is what is slow: storage is
# one of the causes, host compute may lead
share() { json "$1" "round(sum(c['seconds'] for c in j['causes'] if c['cause'] == '$2') / max(1e-9, sum(c['seconds'] for c in j['causes'])), 3)"; }
sh=$(share "$TMP/storage.json" storage)
ok "storage: storage is a cause, $sh of the idle time (first: $(lead "$TMP/storage.json"))" -- \
	/usr/bin/python3 -c "import sys; sys.exit(not $sh >= 0.05)"
"$IG" report --dump "$TMP/storage.igrec" > "$TMP/storage.dump" 2>&1
# the loader blocked in libc's pread wrapper, a frameless leaf: its caller
# from the link register, once (ustack_leaf_arch(), bpf/ustack.bpf.h)
ok "storage: the blocked pread's native stack goes on to read_file through lr" -- \
	grep -qE "blocked \(native, .*pread[^<]*\(libc\.so\.6\) < read_file \(lo" "$TMP/storage.txt"
ok "storage: no function is its own caller at the top of a stack (a stale lr)" -- \
	sh -c "! grep -qE '(native|mixed)[^:]*: ([a-z_]+)\+0x[0-9a-f]+ \(libc\.so\.6\) < \2\+0x' '$TMP/storage.txt'"
# trainsim's loader reads a sample with pread64, arm64's 67 (x86-64's 17)
ok "storage: a sample file's pread64 blocked on storage, by arm64's number (67)" -- \
	grep -qE "reason=storage syscall=67 .* name=sample-[0-9]*\.bin" "$TMP/storage.dump"
grep -E -m2 "reason=storage syscall=67 " "$TMP/storage.dump" | sed 's/^/# /'
step "storage done"

# --- the GIL, with Python stacks --------------------------------------------------
begin gil
"$IG" run -q -o "$TMP/gil.igrec" -- /usr/bin/python3 tools/trainsim.py -s gil -t 8 -q > "$TMP/gil.out" 2>&1
rc=$?
sed 's/^/# gil: /' "$TMP/gil.out"
is "$rc" 0 "gil: traced"
"$IG" report --json "$TMP/gil.json" "$TMP/gil.igrec" > "$TMP/gil.txt" 2>&1
sed -n '1,25s/^/# gil report: /p' "$TMP/gil.txt"
sh=$(share "$TMP/gil.json" gil)
ok "gil: the GIL is a cause, $sh of the idle time (first: $(lead "$TMP/gil.json"))" -- \
	/usr/bin/python3 -c "import sys; sys.exit(not $sh >= 0.05)"
"$IG" report --dump "$TMP/gil.igrec" > "$TMP/gil.dump" 2>&1
ok "gil: Python stacks name tools/trainsim.py's code" -- \
	grep -q " pystack .* stack=.*trainsim.py:" "$TMP/gil.dump"
grep -m2 " pystack .* stack=" "$TMP/gil.dump" | cut -c1-400 | sed 's/^/# /'
step "gil done"

begin pystacks
SCRIPT=tests/py/stacks.py
"$IG" run -q -o "$TMP/py.igrec" -- /usr/bin/python3 "$SCRIPT" 6 > "$TMP/py.out" 2>&1
is "$?" 0 "python stacks: traced"
"$IG" report --dump "$TMP/py.igrec" > "$TMP/py.dump" 2>&1
ok "python stacks: a thread blocked in os.read, in worker_read" -- \
	grep -q " pystack .* stack=worker_read ($IG_TOP/$SCRIPT:" "$TMP/py.dump"
ok "python stacks: the GIL holder's hold_gil, called from main" -- \
	grep -q " pystack .* stack=hold_gil ($IG_TOP/$SCRIPT:[0-9]*) <- main (" "$TMP/py.dump"
step "python stacks done"

# --- a launch on a stream of its own: the 9th argument ------------------------------
begin stream
# cuLaunchKernel's stream is its 9th argument, on the stack: the
# launches of a step count on the stream trainsim created, so that
# stream's synchronize ends with them submitted (nsub > 1: the copy and
# the kernels), not with the copy alone
"$IG" run -q -o "$TMP/stream.igrec" -- "$TS" -s healthy -n 20 --stream nonblocking -q > "$TMP/stream.out" 2>&1
is "$?" 0 "stream: traced"
"$IG" report --dump "$TMP/stream.igrec" > "$TMP/stream.dump" 2>&1
S=$(sed -n 's/.* kind=stream_new .* stream=\(0x[0-9a-f]*\) .*/\1/p' "$TMP/stream.dump" | head -1)
grep -m2 " kind=sync_end .* stream=${S:-none} " "$TMP/stream.dump" | sed 's/^/# /'
ok "stream: kernels launched on trainsim's stream ${S:-none} are submitted there" -- \
	grep -qE " kind=sync_end .* stream=${S:-none} .* nsub=([2-9]|[1-9][0-9]+) " "$TMP/stream.dump"
step "stream done"

# --- unit tests --------------------------------------------------------------------
begin unit
export CMOCKA_MESSAGE_OUTPUT=TAP
for u in build/tests/test_*; do
	case $u in *.d) continue ;; esac
	[ -x "$u" ] || continue
	"$u" > "$TMP/unit.out" 2>&1
	rc=$?
	[ $rc = 0 ] || sed 's/^/# /' "$TMP/unit.out" | tail -20
	is "$rc" 0 "unit: ${u##*/} ($(grep -c '^ok' "$TMP/unit.out") passed)"
done
step "unit tests done"
kill $beat
diag "guest checks took $(echo "$(cut -d' ' -f1 /proc/uptime) $t0" | awk '{ printf "%.0f", $1 - $2 }') s"
done_testing

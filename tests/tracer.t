#!/bin/sh
# The tracer core on this kernel: programs load, processes and their
# descendants are followed, off-CPU intervals carry their reason and waker,
# the uprobe path fires on a libcuda stand-in, runs stop cleanly, bad input
# gets one clear line.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
FAKE=$IG_TOP/build/tests/fakecuda
PROGS=$IG_TOP/build/tests/progs
dump() { "$IG" report --dump "$1"; }

# --- programs load -------------------------------------------------------
"$IG" check > "$TMP/check.txt" 2>&1
ok "check: this machine is ready" -- grep -q '^ready' "$TMP/check.txt"
ok "check: every program loads and attaches" -- grep -q 'ok   BPF programs load+attach' "$TMP/check.txt"

# the large hash maps are made by a thread beside the flavours' pick and
# handed to libbpf: all of them, each as the object defines it
"$IG" run -v -q -o "$TMP/maps.igrec" -- sh -c 'sleep 1.5' > /dev/null 2> "$TMP/maps.err" &
mrun=$!
wait_until 30 grep -q 'hash maps made beside' "$TMP/maps.err"
sleep 0.3
bpftool map show > "$TMP/maps.txt" 2>&1
wait $mrun
made=$(sed -n "s/.*debug: \([0-9]*\) of \([0-9]*\) hash maps made beside.*/\1 \2/p" "$TMP/maps.err")
ok "load: every large hash map made beside the flavours' pick (${made:-none})" -- \
	sh -c "set -- $made; test \"\${1:-0}\" -ge 10 -a \"\${1:-0}\" = \"\${2:-}\""
ok "load: libbpf took them, creating none of them again" -- \
	sh -c "test \"\$(grep -c 'skipping creation (preset fd' '$TMP/maps.err')\" = '${made%% *}'"
ok "load: a made map is as the object defines it (threads: 232 B values, 32768 entries)" -- \
	sh -c "grep -A1 'hash  name threads ' '$TMP/maps.txt' | grep -q 'key 4B  value 232B  max_entries 32768'"
ok "load: ... and an LRU one (events: 65536 entries)" -- \
	sh -c "grep -A1 'lru_hash  name events ' '$TMP/maps.txt' | grep -q 'max_entries 65536'"

# traced FILE PID: waits (bounded) until the recording FILE, still being
# written, says PID is traced: the tracer is past its start, which takes
# seconds on a loaded host
traced() {
	wait_until 60 sh -c "'$IG' report --partial --dump '$1' 2>/dev/null | grep -q ' task tid=$2 '" ||
		diag "$1: pid $2 not traced after 60 s"
}

# --- attach follows children forked after attach -------------------------
mkfifo "$TMP/go"
sh -c 'read x < '"$TMP"'/go; sh -c "sleep 0.2; exit 0"; sleep 0.3' &
target=$!
"$IG" attach -p $target -q -o "$TMP/fork.igrec" 2> "$TMP/fork.err" &
tracer=$!
traced "$TMP/fork.igrec" $target
echo go > "$TMP/go"
wait $target
wait $tracer
is "$?" 0 "attach: exits 0 when the target exits"
dump "$TMP/fork.igrec" > "$TMP/fork.txt"
child=$(awk -v p=$target '$2 == "proc" && $0 ~ "kind=fork ppid=" p " " { sub("pid=", "", $4); print $4; exit }' "$TMP/fork.txt")
ok "attach: a child forked after attach is tracked (pid ${child:-none})" -- test -n "$child"
ok "attach: the grandchild's exec is seen" -- grep -q "kind=exec .*name=/usr/bin/sleep" "$TMP/fork.txt"
ok "attach: the stop reason is the targets' exit" -- grep -q "end .*reason=target_exit" "$TMP/fork.txt"

# --- a cold read blocks on storage ----------------------------------------
head -c 8388608 /dev/urandom > "$TMP/cold.bin"
sync
dd if="$TMP/cold.bin" iflag=nocache count=0 status=none
"$IG" run -q -o "$TMP/cold.igrec" -- cat "$TMP/cold.bin" > /dev/null 2>&1
dump "$TMP/cold.igrec" > "$TMP/cold.txt"
ok "storage: a read of a cold file is off CPU for storage, naming the file" -- \
	grep -q "reason=storage syscall=0 .*name=cold.bin" "$TMP/cold.txt"
ok "storage: block requests of the reader are recorded" -- grep -q " bio .*bytes=" "$TMP/cold.txt"

# --- a futex wait has its address and its waker ---------------------------
"$IG" run -q -o "$TMP/futex.igrec" -- "$PROGS/futexpair" > "$TMP/futex.out" 2>/dev/null
addr=$(sed -n 's/.*mutex=\(0x[0-9a-f]*\).*/\1/p' "$TMP/futex.out")
holder=$(sed -n 's/.*holder=\([0-9]*\).*/\1/p' "$TMP/futex.out")
dump "$TMP/futex.igrec" > "$TMP/futex.txt"
n=$(grep -c "reason=futex syscall=202 arg=$addr flags=0x8 waker=$holder/" "$TMP/futex.txt")
is "$n" 3 "futex: three mutex waits at $addr, each woken by the holder $holder"

# --- the uprobe path on a library exporting cuLaunchKernel -----------------
"$IG" run -q -o "$TMP/cuda.igrec" --libcuda "$FAKE/libcuda.so.1" -- "$FAKE/fakecuda_app" 5 10 2>/dev/null
dump "$TMP/cuda.igrec" > "$TMP/cuda.txt"
ok "uprobes: every cuLaunchKernel call is counted" -- grep -q "stats .*cuLaunchKernel=50 " "$TMP/cuda.txt"
n=$(grep -c "kind=submit api=cuLaunchKernel stream=0x1000 " "$TMP/cuda.txt")
is "$n" 5 "uprobes: one submission record per step, stream read from the stack"
n=$(grep -c "kind=sync_end api=cuStreamSynchronize stream=0x1000 .*flags=0x1$" "$TMP/cuda.txt")
is "$n" 5 "uprobes: each blocking sync ends with a drained record"
ok "uprobes: _ptsz launches use the per-thread stream" -- \
	grep -q "kind=submit api=cuLaunchKernel_ptsz stream=0x80000000" "$TMP/cuda.txt"
ok "uprobes: a NOT_READY query is busy evidence" -- grep -q "kind=query_busy .*ret=600" "$TMP/cuda.txt"
ok "uprobes: a timed API call is recorded" -- grep -q "kind=api api=cuMemAlloc_v2" "$TMP/cuda.txt"
IDLEGAP_NO_UPROBE_MULTI=1 "$IG" run -q -o "$TMP/each.igrec" --libcuda "$FAKE/libcuda.so.1" -- "$FAKE/fakecuda_app" 5 10 2>/dev/null
ok "uprobes: one link per probe (kernels before 6.6) sees the same calls" -- \
	sh -c "'$IG' report --dump '$TMP/each.igrec' | grep -q 'stats .*cuLaunchKernel=50 .*cuStreamSynchronize=5 '"
# the compat object (kernels before 5.17): one program per entry point, its
# id and class a constant instead of the attach cookie
IDLEGAP_COMPAT=1 "$IG" run -q -o "$TMP/compat.igrec" --libcuda "$FAKE/libcuda.so.1" -- "$FAKE/fakecuda_app" 5 10 2>/dev/null
dump "$TMP/compat.igrec" > "$TMP/compat.txt"
ok "uprobes: the compat object sees the same calls" -- \
	grep -q 'stats .*cuLaunchKernel=50 .*cuStreamSynchronize=5 ' "$TMP/compat.txt"
n=$(grep -c "kind=sync_end api=cuStreamSynchronize stream=0x1000 .*flags=0x1$" "$TMP/compat.txt")
is "$n" 5 "uprobes: the compat object's syncs end with drained records"
ok "uprobes: the compat object's _ptsz launches use the per-thread stream" -- \
	grep -q "kind=submit api=cuLaunchKernel_ptsz stream=0x80000000" "$TMP/compat.txt"
FAKECUDA_WAIT_MS=300 "$IG" run -q -o "$TMP/dl.igrec" -- "$FAKE/fakecuda_app" 2 1 2>/dev/null
dump "$TMP/dl.igrec" > "$TMP/dl.txt"
ok "uprobes: a libcuda opened after start is found and probed" -- \
	grep -q "stats .*cuLaunchKernel=20 " "$TMP/dl.txt"

# --- clean stops ---------------------------------------------------------
sleep 30 &
sleeper=$!
for sig in INT TERM; do
	rm -f "$TMP/sig.igrec"
	"$IG" attach -p $sleeper -q -o "$TMP/sig.igrec" 2>/dev/null &
	tracer=$!
	traced "$TMP/sig.igrec" $sleeper
	kill -$sig $tracer
	wait $tracer
	is "$?" 0 "SIG$sig: the tracer finishes and exits 0"
	ok "SIG$sig: the recording is complete" -- sh -c "'$IG' report --dump '$TMP/sig.igrec' | grep -q 'end .*reason=signal'"
done
start=$(date +%s%N)
"$IG" attach -p $sleeper -d 1 -q -o "$TMP/dur.igrec" 2>/dev/null
is "$?" 0 "-d: exits 0"
ok "-d: stops by duration" -- sh -c "'$IG' report --dump '$TMP/dur.igrec' | grep -q 'end .*reason=duration'"

# --- a killed tracer leaves no probes behind --------------------------------
progs() { bpftool prog show 2>/dev/null | grep -c ' name ig_'; }
base=$(progs)
"$IG" attach -p $sleeper -q -o "$TMP/killed.igrec" 2>/dev/null &
tracer=$!
traced "$TMP/killed.igrec" $sleeper
during=$(progs)
kill -9 $tracer
wait $tracer 2>/dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do [ "$(progs)" -le "$base" ] && break; sleep 0.3; done
after=$(progs)
ok "kill -9: programs were loaded ($during, $base before)" -- test "$during" -gt "$base"
ok "kill -9: no program or probe is left behind ($after after)" -- test "$after" -le "$base"
"$IG" report "$TMP/killed.igrec" > /dev/null 2> "$TMP/killed.err"
is "$?" 1 "kill -9: the truncated recording is refused"
ok "kill -9: with one line saying it is truncated" -- sh -c "test \$(wc -l < '$TMP/killed.err') = 1 && grep -q truncated '$TMP/killed.err'"
"$IG" report --partial --dump "$TMP/killed.igrec" > "$TMP/partial.txt" 2>/dev/null
ok "kill -9: --partial still reads what was recorded" -- grep -q " meta " "$TMP/partial.txt"
kill $sleeper

# --- bad input -----------------------------------------------------------
one_line() {	# NAME WANT_RC CMD...: exit status and a single stderr line
	_name=$1; _want=$2; shift 2
	"$@" > /dev/null 2> "$TMP/err"
	_rc=$?
	if [ $_rc = "$_want" ] && [ "$(wc -l < "$TMP/err")" = 1 ]; then
		pass "$_name: exit $_want, '$(cat "$TMP/err")'"
	else
		fail "$_name: exit $_rc (want $_want), stderr:"; sed 's/^/#   /' "$TMP/err"
	fi
}
one_line "unknown pid" 1 "$IG" attach -p 999999 -d 1
one_line "kernel thread" 1 "$IG" attach -p 2 -d 1
one_line "unknown command" 2 "$IG" frobnicate
one_line "missing recording" 1 "$IG" report "$TMP/nope.igrec"
echo "not a recording" > "$TMP/garbage"
one_line "not a recording" 1 "$IG" report "$TMP/garbage"
one_line "command not found" 1 "$IG" run -q -- /nonexistent/cmd
if command -v setpriv > /dev/null; then
	one_line "not root" 1 setpriv --reuid=65534 --regid=65534 --clear-groups "$IG" attach -p 1 -d 1
else
	skip "not root" "setpriv missing"
fi
done_testing

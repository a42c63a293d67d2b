#!/bin/sh
# The simulated driver (build/simgpu/libcuda.so.1): stream semantics, sync
# and query behaviour, events, error codes, trace accuracy, per-process
# trace files, and one address per exported entry point.
. "$(dirname "$0")/lib.sh"

LIB=$IG_TOP/build/simgpu/libcuda.so.1
CHECK=$IG_TOP/build/tests/simgpu_check
[ -x "$CHECK" ] && [ -f "$LIB" ] || skip_all "build first: make all test-progs"

# Every case runs in its own process, with its own trace file.
for c in order overlap sync events legacy durations pageable errors \
	 procaddr threads stress devices; do
	out=$("$CHECK" "$c" "$TMP/$c.trace" 2>&1)
	rc=$?
	[ -n "$out" ] && echo "$out" | sed 's/^/# /'
	is "$rc" 0 "simgpu: $c"
done

# Per-process trace files: the parent and a forked child that re-initializes
# the driver each write their own SIMGPU_TRACE=...%p file.
out=$("$CHECK" fork "$TMP/fork.%p" 2>&1)
is "$?" 0 "simgpu: fork case runs"
child=$(echo "$out" | sed -n 's/^child //p')
nfiles=$(ls "$TMP" | grep -c '^fork\.')
is "$nfiles" 2 "simgpu: one trace file per process"
ok "simgpu: child traced to its own file" -- test -n "$child" -a -f "$TMP/fork.$child"
is "$(cat "$TMP"/fork.* | wc -l | tr -d ' ')" 4 "simgpu: all ops traced once"

# A sync waits for GPU work in FUTEX_WAIT_BITSET, as on a semaphore; only
# the library's lock is a mutex (plain FUTEX_WAIT).  idlegap takes a
# mutex's wakeup inside a sync for the lock's hand-over, not the GPU's
# completion (docs/design.md §4.4).
if command -v strace >/dev/null; then
	# the main thread's id is the process's: the shell's, which execs
	strace -f -e trace=futex -o "$TMP/syncwait.st" sh -c \
		'echo $$ > "$1"; shift; exec "$@"' sh "$TMP/syncwait.pid" \
		"$CHECK" syncwait "$TMP/syncwait.trace" > "$TMP/syncwait.out" 2>&1
	is "$?" 0 "simgpu: syncwait case runs under strace"
	main=$(cat "$TMP/syncwait.pid")
	n=$(grep -Ec "^$main +futex\(.*FUTEX_WAIT_BITSET_PRIVATE" "$TMP/syncwait.st")
	ok "simgpu: the sync slept in FUTEX_WAIT_BITSET ($n waits)" -- test "$n" -ge 1
else
	skip "simgpu: the kind of a sync's wait" "strace not installed"
fi

# Trace lines are whole: kind, stream, start <= end.
bad=$(cat "$TMP"/*.trace "$TMP"/fork.* | awk 'NF != 4 || $3 > $4 || \
	($1 != "kernel" && $1 != "copy" && $1 != "memset")' | wc -l)
is "$bad" 0 "simgpu: trace lines are well formed"

# One uprobe per symbol needs one address per symbol.
if command -v nm >/dev/null; then
	syms=$(nm -D --defined-only "$LIB")
	dups=$(echo "$syms" | awk '{print $1}' | sort | uniq -d | wc -l)
	is "$dups" 0 "simgpu: no two exported symbols share an address"
	other=$(echo "$syms" | awk '{print $3}' | grep -v '^cu' | grep -vx simgpu_version | wc -l)
	is "$other" 0 "simgpu: only cu* symbols and simgpu_version exported"
	for s in cuLaunchKernel cuLaunchKernel_ptsz cuMemcpyHtoD_v2_ptds \
		 cuMemcpyHtoDAsync_v2_ptsz cuStreamSynchronize_ptsz \
		 cuCtxCreate_v4 cuEventElapsedTime_v2 cuGetProcAddress_v2; do
		echo "$syms" | awk '{print $3}' | grep -qx "$s" || fail "simgpu: exports $s"
	done
	pass "simgpu: exports the versioned entry points"
	stub=${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so
	if [ -f "$stub" ]; then
		missing=$(echo "$syms" | awk '{print $3}' | grep '^cu' | sort | \
			comm -23 - "$(nm -D "$stub" | awk '{print $3}' | sort > "$TMP/stub"; echo "$TMP/stub")")
		is "$missing" "" "simgpu: every exported name exists in the real driver"
	else
		skip "simgpu: names match the real driver" "no $stub"
	fi
else
	skip "simgpu: symbol checks" "nm not installed"
fi

done_testing

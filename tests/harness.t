#!/bin/sh
# The harness itself: `make bench` interrupted (SIGINT, SIGTERM, SIGHUP)
# leaves no traced workload or tracer behind, and tests/accuracy.t keeps a
# valid TAP plan when its runs fail.  Needs root (bench and accuracy.t
# trace).
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$IG_TOP/build/trainsim" ] || skip_all "build first: make all"

# pids of the processes that carry MARK in their environment
marked() {
	grep -l "IG_HARNESS_MARK=$1" /proc/[0-9]*/environ 2> /dev/null |
		sed 's|/proc/\([0-9]*\)/environ|\1|' | grep -vx "$$" || true
}

# bench's memory row: trainsim under `idlegap run`, for a minute
for sig in INT TERM HUP; do
	mark="$$-$sig"
	IG_HARNESS_MARK=$mark BENCH_QUICK=1 /usr/bin/python3 "$IG_TOP/tools/bench.py" --rows 5 \
		> "$TMP/bench-$sig.out" 2>&1 &
	bench=$!
	i=0
	# wait for the traced workload itself
	until [ -n "$(for p in $(marked "$mark"); do grep -lx trainsim /proc/$p/comm 2> /dev/null; done)" ] ||
	      [ $i -ge 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	ok "bench ($sig): a traced trainsim was running" -- test $i -lt 300
	sleep 0.5
	kill -$sig $bench
	wait $bench
	rc=$?
	ok "bench ($sig): exits non-zero when interrupted (status $rc)" -- test $rc -ne 0
	sleep 0.5
	left=$(for p in $(marked "$mark"); do printf '%s(%s) ' "$p" "$(cat /proc/$p/comm 2> /dev/null)"; done)
	is "$left" "" "bench ($sig): no trainsim or idlegap left running"
	for p in $(marked "$mark"); do kill -9 "$p" 2> /dev/null; done
done

# accuracy.t when its runs fail, in a copy of the top with a stand-in
# tools/accuracy.py: STUB is its main part
acc_failing() {
	what=$1 stub=$2 top=$TMP/top-$1
	mkdir -p "$top/tools" "$top/tests" "$top/build"
	cp "$IG_TOP/tests/accuracy.t" "$IG_TOP/tests/lib.sh" "$top/tests/"
	ln -s "$IG_TOP/build/trainsim" "$top/build/trainsim"
	printf '#!/usr/bin/python3\nimport sys\ndef waiting_first(r):\n    return None, None\nif __name__ == "__main__":\n%s\n' \
		"$stub" > "$top/tools/accuracy.py"
	chmod +x "$top/tools/accuracy.py"
	IG_TOP=$top "$top/tests/accuracy.t" > "$TMP/acc.tap" 2> "$TMP/acc.err"
	rc=$?
	sed 's/^/# | /' "$TMP/acc.tap"
	plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$TMP/acc.tap")
	ran=$(grep -cE '^(not )?ok ' "$TMP/acc.tap")
	is "$plan" "$ran" "accuracy.t, $what: the plan counts the tests it ran"
	nums=$(grep -E '^(not )?ok ' "$TMP/acc.tap" | sed 's/^\(not \)\{0,1\}ok \([0-9]*\).*/\2/' | tr '\n' ' ')
	is "$nums" "$(seq 1 "$ran" | tr '\n' ' ')" "accuracy.t, $what: tests numbered 1..$ran in order"
	ok "accuracy.t, $what: reports a failure" -- grep -q '^not ok' "$TMP/acc.tap"
	ok "accuracy.t, $what: exits non-zero (status $rc)" -- test $rc -ne 0
}
# a case fails: exit 1, no JSON
acc_failing "a run failing" '    print("storage: exit 1: idlegap: something failed", file=sys.stderr)
    sys.exit(1)'
# a result the checks cannot read: they stop half-way
acc_failing "its checks crashing" '    print("[{\"scenario\": \"storage\", \"dropped\": 0}]")'
done_testing

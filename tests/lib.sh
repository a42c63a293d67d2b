# TAP helpers for shell tests; source from a tests/*.t script.
#   need_root; plan N | done_testing; ok COND... -- NAME; is GOT WANT NAME;
#   skip NAME REASON; pychecks ARGS... (a Python script on stdin)
set -u
# Commands under `idlegap run` stay root, as the suite is (under sudo they
# would run as the invoking user, who cannot write the suite's files).
unset SUDO_UID SUDO_GID SUDO_USER
IG_TOP=${IG_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
IG=${IG:-$IG_TOP/build/idlegap}
_n=0
_failed=0
TMP=$(mktemp -d /tmp/idlegap-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# Scratch files of the programs under test (trainsim's GPU trace among
# them) land here and go with $TMP; sticky and world-writable like /tmp,
# as tests run some targets as another user.
mkdir -m 1777 "$TMP/tmp" && export TMPDIR="$TMP/tmp"

plan() { echo "1..$1"; }
done_testing() { echo "1..$_n"; [ $_failed -eq 0 ]; }
skip_all() { echo "1..0 # SKIP $*"; echo "SKIP $(basename "$0"): $*" >&2; exit 0; }
need_root() { [ "$(id -u)" = 0 ] || skip_all "needs root"; }
pass() { _n=$((_n + 1)); echo "ok $_n - $*"; }
fail() { _n=$((_n + 1)); _failed=$((_failed + 1)); echo "not ok $_n - $*"; }
# ok NAME -- CMD...: passes when CMD exits 0
ok() {
	_name=$1; shift; [ "${1:-}" = "--" ] && shift
	if "$@"; then pass "$_name"; else fail "$_name"; fi
}
is() {
	if [ "$1" = "$2" ]; then pass "$3"; else fail "$3"; echo "#   $3: got '$1', want '$2'" >&2; fi
}
skip() { _n=$((_n + 1)); echo "ok $_n - $1 # SKIP $2"; echo "SKIP $1: $2" >&2; }
diag() { echo "# $*"; }
# NAME WANT_RC CMD...: exit status and a single stderr line (which holds
# $says when that is set)
one_line() {
	_name=$1; _want=$2; shift 2
	"$@" 2> "$TMP/err"
	_rc=$?
	if [ $_rc = "$_want" ] && [ "$(wc -l < "$TMP/err")" = 1 ] &&
	   grep -q -- "${says:-}" "$TMP/err"; then
		pass "$_name: exit $_want, '$(cat "$TMP/err")'"
	else
		fail "$_name: exit $_rc (want $_want), stderr:"; sed 's/^/#   /' "$TMP/err" >&2
	fi
}
# pychecks ARGS... <<'PY' ... PY: runs a Python check script (stdin) with
# ARGS; its tests (tap.check, tests/lib/tap.py) number on after the shell's
# and count with them, and a script that does not run to its end is one
# more failed test
pychecks() {
	IG_TAP_FIRST=$_n PYTHONDONTWRITEBYTECODE=1 \
		PYTHONPATH="$IG_TOP/tests/lib${PYTHONPATH:+:$PYTHONPATH}" \
		/usr/bin/python3 - "$@" > "$TMP/pychecks.tap" 2> "$TMP/pychecks.err"
	_rc=$?
	cat "$TMP/pychecks.tap"
	# a failed check's why, a traceback: stderr, which prove always shows
	cat "$TMP/pychecks.err" >&2
	_n=$((_n + $(grep -cE '^(not )?ok [0-9]' "$TMP/pychecks.tap")))
	_failed=$((_failed + $(grep -E '^not ok [0-9]' "$TMP/pychecks.tap" | grep -cv ' # TODO ')))
	[ $_rc -eq 0 ] || fail "the checks ran to their end (status $_rc)"
}
# wait_until SECONDS CMD...: runs CMD every 0.2 s until it succeeds (0) or
# SECONDS of wall time pass (1): a wait for an event, not for a clock; the
# bound is generous, for a loaded host
wait_until() {
	_end=$(($(date +%s) + $1)); shift
	until "$@"; do
		[ "$(date +%s)" -lt $_end ] || return 1
		sleep 0.2
	done
}
# delayacct_on: the kernel's block IO delay accounting (kernel.task_delayacct)
# on, for the oracle of the tests that judge causes (tools/accuracy.py);
# delayacct_restore (in the test's EXIT trap) sets it back as it was
DACCT=/proc/sys/kernel/task_delayacct
delayacct_on() {
	_dacct0=$(cat "$DACCT" 2>/dev/null) && echo 1 > "$DACCT" 2>/dev/null ||
		{ _dacct0=; diag "no kernel.task_delayacct: block IO delay is counted as the kernel was booted (before 5.14, unless nodelayacct)"; }
}
delayacct_restore() { [ -z "${_dacct0:-}" ] || echo "$_dacct0" > "$DACCT"; }
# oracle TRUTH.json: the verdict of the kernel's accounting of the feeding
# threads on the scenario's cause (design, cpu, undecided or None), then its
# figures (tools/accuracy.py)
oracle() {
	/usr/bin/python3 -c 'import json, sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import accuracy
try:
    tj = json.load(open(sys.argv[2]))
except (OSError, ValueError) as e:
    print("None oracle: no truth (%s)" % e); sys.exit()
o = accuracy.oracle(tj.get("expected_cause"), accuracy.feeding_figures(tj))
print(o["verdict"], o["text"])' "$IG_TOP/tools" "$1"
}
# json FILE PYTHON-EXPR: evaluates EXPR with j = the parsed file, prints it
# start_agent OUT ARGS...: starts the agent in the background (AGENT)
start_agent() {
	_o=$1; shift
	# with the simulated NVML, as on a node with the driver
	LD_LIBRARY_PATH=$IG_TOP/build/simgpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		"$IG" agent "$@" > "$_o" 2>&1 &
	AGENT=$!
	_i=0
	until grep -q 'agent: metrics on port' "$_o" || [ $_i -ge 150 ]; do
		kill -0 $AGENT 2>/dev/null || break
		sleep 0.1; _i=$((_i + 1))
	done
	grep -q 'agent: metrics on port' "$_o"
}
stop_agent() { kill "$AGENT" 2>/dev/null; wait "$AGENT"; _rc=$?; AGENT=; return $_rc; }
# trainsim ($TS) and the simulated libnccl, for the tests of several ranks
need_ranks_build() {
	TS=$IG_TOP/build/trainsim
	[ -x "$TS" ] && [ -f "$IG_TOP/build/simgpu/libnccl.so.2" ] ||
		skip_all "build first: make all test-progs"
}
# the cgroup v2 hierarchy (the unified one under a hybrid layout)
cgroup_root() {
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo /sys/fs/cgroup
	else echo /sys/fs/cgroup/unified; fi
}
json() { /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

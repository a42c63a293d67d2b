#!/bin/sh
# Runs every test: TAP producers under tests/*.t (shell, root or not) and the
# cmocka unit-test binaries under build/tests/.  Serial: the root tests
# attach probes and must not share the machine with each other.
set -u
cd "$(dirname "$0")/.."
export CMOCKA_MESSAGE_OUTPUT=TAP
export IG_TOP="$PWD"
# The long suites (QEMU guests: tests/kernels.t, tests/kernels-hang.t) run
# with IG_LONG=1 (.ci/run sets it); without it they print SKIP, saying so.
[ "${IG_LONG:-0}" = 1 ] || export IG_SKIP_LONG=1
status=0
out=$(mktemp)
units=$(find build/tests -maxdepth 1 -type f -name 'test_*' ! -name '*.*' -perm -u+x | sort)
# shellcheck disable=SC2086
{ prove --exec '' --timer --failures ${PROVE_FLAGS:-} $units tests/*.t 2>&1; echo $? > "$out.rc"; } | tee "$out"
[ "$(cat "$out.rc")" = 0 ] || status=1
# One line for CI: counts across all files.
perl -ne 'if (/^Files=(\d+), Tests=(\d+)/) { $f=$1; $t=$2 } END { print "idlegap tests: files=$f tests=$t\n" if defined $t }' "$out"
rm -f "$out" "$out.rc"
exit $status

#!/bin/sh
# The identity parsers under libFuzzer (ASan, UBSan): a fixed number of
# inputs mutated from real cgroup, environ and namespace files.
. "$(dirname "$0")/lib.sh"
FUZZ=$IG_TOP/build/fuzz/fuzz_identity
RUNS=${IG_FUZZ_RUNS:-50000}
plan 2

if [ ! -x "$FUZZ" ]; then
	skip "identity fuzz run" "no libFuzzer program (clang with libclang-rt-dev)"
	skip "no crash artifacts" "no fuzzer"
	exit 0
fi
mkdir -p "$TMP/corpus" "$TMP/crash"
"$FUZZ" -runs="$RUNS" -seed=1 -max_len=4096 -timeout=10 \
	-artifact_prefix="$TMP/crash/" "$TMP/corpus" "$IG_TOP/tests/fuzz/corpus_identity" \
	> "$TMP/log" 2>&1
rc=$?
grep -E "^(Done|==[0-9]+==ERROR|SUMMARY|.*runtime error)" "$TMP/log" | sed 's/^/# /'
ok "$RUNS fuzzed cgroup, environ and namespace files (rc $rc)" -- \
	grep -q "^Done $RUNS runs" "$TMP/log"
is "$(ls "$TMP/crash" | wc -l)" 0 "no crash artifacts"

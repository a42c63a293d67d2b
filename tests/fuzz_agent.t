#!/bin/sh
# The agent's parsers under libFuzzer (ASan, UBSan): a fixed number of
# inputs mutated from real cgroup, environ and namespace files, from a
# real window report for the metrics registry, and from HTTP requests sent
# as raw bytes to the /metrics server.
. "$(dirname "$0")/lib.sh"
FUZZ=$IG_TOP/build/fuzz/fuzz_identity
RUNS=${IG_FUZZ_RUNS:-50000}
plan 6

if [ ! -x "$FUZZ" ]; then
	skip "identity fuzz run" "no libFuzzer program (clang with libclang-rt-dev)"
	skip "no crash artifacts" "no fuzzer"
	skip "metrics fuzz run" "no libFuzzer program"
	skip "no crash artifacts (metrics)" "no fuzzer"
	skip "HTTP fuzz run" "no libFuzzer program"
	skip "no crash artifacts (HTTP)" "no fuzzer"
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

MX=$IG_TOP/build/fuzz/fuzz_metrics
MRUNS=${IG_FUZZ_RUNS:-20000}
mkdir -p "$TMP/mcorpus" "$TMP/mcrash"
"$MX" -runs="$MRUNS" -seed=1 -max_len=16384 -timeout=10 \
	-artifact_prefix="$TMP/mcrash/" "$TMP/mcorpus" "$IG_TOP/tests/fuzz/corpus_metrics" \
	> "$TMP/mlog" 2>&1
rc=$?
grep -E "^(Done|==[0-9]+==ERROR|SUMMARY|.*runtime error)" "$TMP/mlog" | sed 's/^/# /'
ok "$MRUNS fuzzed window reports through the metrics registry (rc $rc)" -- \
	grep -q "^Done $MRUNS runs" "$TMP/mlog"
is "$(ls "$TMP/mcrash" | wc -l)" 0 "no crash artifacts (metrics)"

HT=$IG_TOP/build/fuzz/fuzz_http
HRUNS=${IG_FUZZ_RUNS:-2000}
mkdir -p "$TMP/hcorpus" "$TMP/hcrash"
"$HT" -runs="$HRUNS" -seed=1 -max_len=8192 -timeout=20 \
	-artifact_prefix="$TMP/hcrash/" "$TMP/hcorpus" "$IG_TOP/tests/fuzz/corpus_http" \
	> "$TMP/hlog" 2>&1
rc=$?
grep -E "^(Done|==[0-9]+==ERROR|SUMMARY|.*runtime error)" "$TMP/hlog" | sed 's/^/# /'
ok "$HRUNS fuzzed HTTP requests to /metrics, a scrape answered every 256th (rc $rc)" -- \
	grep -q "^Done $HRUNS runs" "$TMP/hlog"
is "$(ls "$TMP/hcrash" | wc -l)" 0 "no crash artifacts (HTTP)"

#!/bin/sh
# The report path under libFuzzer (ASan, UBSan): a fixed number of inputs
# mutated from the seed recordings must find nothing; the seeds themselves
# are valid recordings of this format version.
. "$(dirname "$0")/lib.sh"
FUZZ=$IG_TOP/build/fuzz/fuzz_report
RUNS=${IG_FUZZ_RUNS:-20000}
plan 3

for f in "$IG_TOP"/tests/fuzz/corpus/*.igrec; do
	"$IG" report "$f" > /dev/null 2> "$TMP/err" || { echo "# $f: $(cat "$TMP/err")"; bad=1; }
done
ok "seed recordings read without error" -- [ -z "${bad:-}" ]

if [ ! -x "$FUZZ" ]; then
	why=$(printf 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
	      clang -fsanitize=fuzzer,address,undefined -x c - -o /dev/null 2>&1 | head -1)
	skip "libFuzzer smoke run" "clang cannot build a libFuzzer program: ${why:-clang missing} (Debian: libclang-rt-dev)"
	skip "no crash artifacts" "no fuzzer"
	exit 0
fi
mkdir -p "$TMP/corpus" "$TMP/crash"
# new inputs to a scratch corpus; the seeds are read only
"$FUZZ" -runs="$RUNS" -seed=1 -max_len=32768 -timeout=20 -close_fd_mask=2 \
	-artifact_prefix="$TMP/crash/" "$TMP/corpus" "$IG_TOP/tests/fuzz/corpus" \
	> "$TMP/log" 2>&1
rc=$?
grep -E "^(Done|==[0-9]+==ERROR|SUMMARY|.*runtime error)" "$TMP/log" | sed 's/^/# /'
ok "$RUNS fuzzed inputs through reader, engine, text and JSON (rc $rc)" -- \
	grep -q "^Done $RUNS runs" "$TMP/log"
is "$(ls "$TMP/crash" | wc -l)" 0 "no crash artifacts"

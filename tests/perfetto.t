#!/bin/sh
# The Perfetto writer: a synthetic timeline decodes with protoc against the
# project's subset of Perfetto's schema, its interned ids resolve, its
# slices balance and nest, its flows start and end on slices, the device's
# idle slices are those written; a full disk is an error; the intern
# tables stay bounded on many distinct strings.
. "$(dirname "$0")/lib.sh"
SYNTH=$IG_TOP/build/tests/view/pf_synth
SCHEMA=$IG_TOP/tests/perfetto
CHECK=$IG_TOP/tests/perfetto/check_trace.py
command -v protoc > /dev/null || skip_all "protoc not found (Debian protobuf-compiler)"
[ -x "$SYNTH" ] || skip_all "$SYNTH not built (make test-progs)"

decode() {
	protoc --proto_path="$SCHEMA" --decode=perfetto.protos.Trace \
		"$SCHEMA/perfetto-subset.proto" < "$1"
}

ok "synthetic trace written" -- sh -c "'$SYNTH' '$TMP/a.pftrace' 50 > '$TMP/a.stats'"
diag "$(cat "$TMP/a.stats")"
ok "protoc decodes it" -- sh -c "decode() { protoc --proto_path='$SCHEMA' --decode=perfetto.protos.Trace '$SCHEMA/perfetto-subset.proto'; }; decode < '$TMP/a.pftrace' > '$TMP/a.txt'"
ok "interning, tracks, nesting and flows check" -- sh -c "'$CHECK' < '$TMP/a.txt' > '$TMP/a.idle' 2> '$TMP/a.err'"
sed 's/^/# /' "$TMP/a.err"
# 50 rounds, every 5th unresolved: 40 idle gaps at 1e9 + r*20000 + 10000
want=$(awk 'BEGIN { for (r = 0; r < 50; r++) if (r % 5 != 4) print 1000000000 + r * 20000 + 10000, 4000, "idle: storage" }')
is "$(cut -d' ' -f1-4 "$TMP/a.idle")" "$want" "device idle slices are the gaps written"
# rounds 3, 19, 35 use shard 3 (16 files); 19 is unresolved
is "$(grep -c 'file=/data/shard-00003.bin' "$TMP/a.idle")" 2 "gap annotations resolve through interning"
is "$(grep -o 'flows=[0-9]*' "$TMP/a.err")" "flows=120" "three flows per gap, each ending on a slice"
is "$(grep -c 'name: "idle: storage"' "$TMP/a.txt")" 1 "an event name is written once"

# the checker itself fails on a dangling flow and on an unknown iid
ok "the checker sees a flow that ends nowhere" -- sh -c "! grep -v terminating_flow_ids '$TMP/a.txt' | '$CHECK' > /dev/null 2>&1"
ok "the checker sees an undefined iid" -- sh -c "! sed 's/name_iid: 1\$/name_iid: 999/' '$TMP/a.txt' | '$CHECK' > /dev/null 2>&1"

# a long path is not interned and still reaches the trace
ok "a string longer than the intern limit is written inline" -- grep -q 'string_value: "/data/ddd' "$TMP/a.txt"

# many distinct strings: the tables are cleared and the trace stays valid
ok "many distinct strings" -- sh -c "'$SYNTH' '$TMP/b.pftrace' 20000 20000 > '$TMP/b.stats'"
diag "$(cat "$TMP/b.stats")"
ok "intern tables were reset" -- grep -qv 'resets=0 ' "$TMP/b.stats"
ok "the reset trace decodes and checks" -- sh -c "protoc --proto_path='$SCHEMA' --decode=perfetto.protos.Trace '$SCHEMA/perfetto-subset.proto' < '$TMP/b.pftrace' | '$CHECK' > '$TMP/b.idle' 2> '$TMP/b.err'"
is "$(wc -l < "$TMP/b.idle")" 16000 "every gap is there after resets"

# a full disk is an error, said once
"$SYNTH" /dev/full 50 > /dev/null 2> "$TMP/full.err"
rc=$?
is "$rc" 1 "a full disk: exit 1"
ok "a full disk: says so" -- grep -q "No space left on device" "$TMP/full.err"
done_testing

#!/bin/sh
# The engine's files call one another without a cycle: the GPU model hands
# gaps to attribution through a sink, not a call, so that a change to one
# layer cannot reach back into the one below it.  tools/callgraph.sh builds
# the file-level graph from the objects' symbols; this checks it on a known
# cycle first, then on every engine object.  No root needed.
. "$(dirname "$0")/lib.sh"

CG=$IG_TOP/tools/callgraph.sh
command -v nm >/dev/null && command -v tsort >/dev/null &&
	command -v cc >/dev/null || skip_all "needs nm, tsort and cc (binutils)"

objs=""
missing=""
for c in "$IG_TOP"/user/engine/*.c; do
	o=$IG_TOP/build/user/engine/$(basename "$c" .c).o
	if [ -f "$o" ]; then objs="$objs $o"; else missing="$missing $o"; fi
done
[ -z "$missing" ] || skip_all "engine not built (make):$missing"

# the checker sees a cycle through two files and a clean chain as clean
printf 'void b(void);\nvoid a(void) { b(); }\n' > "$TMP/a.c"
printf 'void a(void);\nvoid b(void) { a(); }\n' > "$TMP/b.c"
printf 'void c(void) { }\n' > "$TMP/c.c"
printf 'void c(void);\nvoid d(void) { c(); }\n' > "$TMP/d.c"
for f in a b c d; do cc -c -o "$TMP/$f.o" "$TMP/$f.c" || exit 1; done
ok "a cycle between two files fails the check" -- \
	sh -c '! "$1" "$2/a.o" "$2/b.o" >/dev/null 2>&1' sh "$CG" "$TMP"
is "$("$CG" "$TMP/c.o" "$TMP/d.o" 2>&1)" "d c" "a chain passes, one edge caller callee"

# shellcheck disable=SC2086
if "$CG" $objs > "$TMP/edges" 2> "$TMP/err"; then
	pass "no call cycle among the engine's files"
else
	fail "no call cycle among the engine's files"
	sed 's/^/# /' "$TMP/err"
fi
# the GPU model reaches attribution only through the sink
bad=$(grep -E '^(gpu|drain|timeline) (attrib|causes|detail)$' "$TMP/edges")
is "$bad" "" "the GPU model does not call attribution"
bad=$(grep -E '^(attrib|causes|detail) ' "$TMP/edges" |
	grep -vE ' (attrib|causes|detail|stacks|tasks|files|ring|htab|names|vec)$')
is "$bad" "" "attribution calls only itself, the stack tables and the task and file tables"
done_testing

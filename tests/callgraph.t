#!/bin/sh
# The code's layers hold, in two graphs.
# Includes, over all of user/ and bpf/ (tools/includegraph.py): no cycle
# between files or between folders, and each folder includes only the
# folders docs/design.md §3.1 allows it; the checker is tried first on
# small trees and on a copy of this one with a cycle planted in it.
# Calls, from the objects' symbols (tools/callgraph.sh): no cycle among the
# engine's files, where the GPU model hands gaps to attribution through a
# sink, not a call, so that a change to one layer cannot reach back into
# the one below it; none between the engine's files at its top and its
# sub-folders, each sub-folder taken as one (the task tables call no GPU
# code; a call planted from tasks.c into gpu/ is found); and none between
# folders, nor between the engine's sub-folders (gpu, attrib, estimate,
# peers, report).
# Inside each folder (tools/foldergraph.py): no circle among the files of
# a folder of user/ or simgpu/ (from the objects' symbols, and a header's
# static inline functions both ways) nor among tools/'s Python modules
# (their imports); no file of user/ or tools/ over 600 lines.  Tried on
# a small tree first; on this one, only the known ones are left.
# Exported names (tools/prefixes.py): each carries its file's or folder's
# prefix (design §3.1), checked on small trees, on this one and on a copy
# with a name planted in it; --rename applies tools/prefixes.map and
# refuses a map that would take a name already in use.  No root needed.
. "$(dirname "$0")/lib.sh"

IG=$IG_TOP/tools/includegraph.py
CG=$IG_TOP/tools/callgraph.sh

# ---- includes ----------------------------------------------------------------
# tree DIR ROWS...: a checkout with a design table of ROWS ("name|allowed")
tree() {
	d=$1
	shift
	mkdir -p "$d/docs" "$d/user" "$d/bpf"
	{
		echo "### 3.1 Layers"
		echo "| folder | holds | may include |"
		echo "|---|---|---|"
		echo "| \`bpf/\` | kernel | |"
		for r in "$@"; do
			echo "| \`user/${r%%|*}/\` | x | ${r#*|} |"
		done
		echo "### 3.2 Next"
	} > "$d/docs/design.md"
	echo 'ENGINE_DIRS := a' > "$d/Makefile"
	echo '/* nothing */' > "$d/bpf/k.h"
}
# inc FILE NAME...: FILE includes each NAME
inc() {
	f=$1
	shift
	mkdir -p "$(dirname "$f")"
	for n in "$@"; do echo "#include \"$n\""; done >> "$f"
}

t=$TMP/clean
# shellcheck disable=SC2016 # the rows hold backquotes, as the design's do
tree "$t" 'a|`b`' 'b|'
inc "$t/user/a/x.c" a/x.h b/y.h
inc "$t/user/a/x.h"
inc "$t/user/b/y.h"
is "$("$IG" "$t" 2>&1)" "a b" "includes: a layered tree passes, one line per folder edge"

t=$TMP/foldercycle
# shellcheck disable=SC2016
tree "$t" 'a|`b`' 'b|`a`'
inc "$t/user/a/x.c" b/y.h
inc "$t/user/b/y.c" a/z.h
inc "$t/user/a/z.h"
inc "$t/user/b/y.h"
out=$("$IG" "$t" 2>&1)
ok "includes: folders in a cycle fail the check" -- test $? -ne 0
like=$(echo "$out" | grep -c 'folders include one another in a cycle: a -> b -> a')
is "$like" 1 "includes: the cycle is named"

t=$TMP/filecycle
tree "$t" 'a|'
inc "$t/user/a/p.h" a/q.h
inc "$t/user/a/q.h" p.h
out=$("$IG" "$t" 2>&1)
ok "includes: headers in a cycle fail the check" -- test $? -ne 0
is "$(echo "$out" | grep -c 'files include one another in a cycle')" 1 \
	"includes: the file cycle is named"

t=$TMP/notallowed
tree "$t" 'a|' 'b|'
up=../..
inc "$t/user/a/x.c" b/y.h "$up/bpf/k.h"
inc "$t/user/b/y.h"
out=$("$IG" "$t" 2>&1)
ok "includes: a folder including one it may not fails" -- test $? -ne 0
is "$(echo "$out" | grep -c 'folder a may not include b$')" 1 "includes: the folder pair is named"
is "$(echo "$out" | grep -c 'folder a may not include bpf')" 1 "includes: bpf/ counts as a folder"

t=$TMP/loose
tree "$t" 'a|'
inc "$t/user/flat.c" a/x.h
inc "$t/user/c/z.c" nowhere.h
inc "$t/user/a/x.c" '<bpf/libbpf.h>'
sed -i 's/"<bpf\/libbpf.h>"/<bpf\/libbpf.h>/' "$t/user/a/x.c"
out=$("$IG" "$t" 2>&1)
ok "includes: loose files fail the check" -- test $? -ne 0
for what in 'user/flat.c: in user/ outside a folder' \
	'folder c is not in the table' \
	'"nowhere.h", which is not in the tree' \
	'library.s folder a includes a libbpf header'; do
	is "$(echo "$out" | grep -c "$what")" 1 "includes: reports $what"
done

# this tree, then a copy of it with a cycle planted between two layers
if "$IG" "$IG_TOP" > "$TMP/fedges" 2> "$TMP/ferr"; then
	pass "includes: no cycle in user/ and bpf/, each folder within its allowed ones"
else
	fail "includes: no cycle in user/ and bpf/, each folder within its allowed ones"
	sed 's/^/# /' "$TMP/ferr"
fi
diag "folder edges: $(tr '\n' ',' < "$TMP/fedges")"
is "$(grep -c '^engine ' "$TMP/fedges")" "$(grep -cE '^engine (stacks|stream|util)$' "$TMP/fedges")" \
	"includes: the engine reaches only the stacks, the record stream and util"
is "$(grep -E ' (modes|probes|views)$' "$TMP/fedges" | grep -v '^modes ')" "" \
	"includes: only the run modes include the probes or the views"
is "$(grep -E ' engine$' "$TMP/fedges" | grep -vE '^(modes|views) ')" "" \
	"includes: only the run modes and the views include the engine"
for sub in gpu attrib estimate peers report; do
	ok "includes: user/engine/$sub/ is a sub-folder with its own row" -- \
		grep -q "^| \`user/engine/$sub/\` |" "$IG_TOP/docs/design.md"
done
is "$(grep '^engine/gpu ' "$TMP/fedges")" "" \
	"includes: the GPU model includes no other sub-folder of the engine"

# sub-folders: each has its own row; siblings include one another one way
t=$TMP/subs
# shellcheck disable=SC2016
tree "$t" 'a|' 'a/x|`a`, `a/y`' 'a/y|`a`'
inc "$t/user/a/top.h"
inc "$t/user/a/top.c" a/x/x.h a/y/y.h
inc "$t/user/a/x/x.h" a/top.h a/y/y.h
inc "$t/user/a/y/y.h" a/top.h
is "$("$IG" "$t" 2>&1)" "a/x a/y" "includes: a folder and its sub-folders pass, sibling edges named"
inc "$t/user/a/y/y.c" a/x/x.h
out=$("$IG" "$t" 2>&1)
ok "includes: sub-folders in a cycle fail the check" -- test $? -ne 0
is "$(echo "$out" | grep -c 'sub-folders include one another in a cycle: a/x -> a/y -> a/x')" 1 \
	"includes: the sub-folder cycle is named"
is "$(echo "$out" | grep -c 'folder a/y may not include a/x$')" 1 \
	"includes: a sibling the row does not name is refused"

p=$TMP/planted
mkdir -p "$p"
cp -r "$IG_TOP/user" "$IG_TOP/bpf" "$IG_TOP/docs" "$IG_TOP/Makefile" "$p/"
low=$(find "$p/user/util" -name '*.h' | sort | head -1)
echo '#include "modes/cli.h"' >> "$low"
out=$("$IG" "$p" 2>&1)
ok "includes: a cycle planted in a copy of this tree fails the check" -- test $? -ne 0
is "$(echo "$out" | grep -c 'folders include one another in a cycle')" 1 \
	"includes: the planted folder cycle is named"
is "$(echo "$out" | grep -c 'folder util may not include modes')" 1 \
	"includes: the planted include is refused"

# ---- exported names carry their prefix (design §3.1) ----------------------------
PX=$IG_TOP/tools/prefixes.py
# ptree DIR: a checkout whose design gives user/a/long_name.c the short
# prefix ln; long_name.c exports one name without a prefix, other.c calls it
ptree() {
	d=$1
	mkdir -p "$d/docs" "$d/user/a" "$d/tools" "$d/tests"
	{
		echo "### 3.1 Layers"
		echo "| file | short prefix |"
		echo "|---|---|"
		echo "| \`user/a/long_name.c\` | \`ln\` |"
		echo "### 3.2 Next"
	} > "$d/docs/design.md"
	cat > "$d/user/a/long_name.c" <<'C'
/* ig_bad() has no prefix */
int ig_ln_ok(void) { return 0; }
int ig_long_ok(void) { return 1; }
int
ig_a_ok(void)
{
	return 2;
}
static int ig_keep(void) { return 3; }
int ig_bad(int x,
	   int y)
{
	return ig_keep() + x + y;
}
C
	printf 'int ig_bad(int x,\n\t   int y);\nint ig_other_x(void) { return ig_bad(1,\n\t\t\t\t\t     2); }\n' \
		> "$d/user/a/other.c"
	echo 'ig_bad ig_ln_bad' > "$d/tools/prefixes.map"
	echo 'ig_bad() is called in a test; the key ig_bad is not a call' > "$d/tests/notes.txt"
}
t=$TMP/px
ptree "$t"
out=$("$PX" --sources "$t" 2> "$TMP/pxerr")
ok "prefixes: a name without its prefix fails the check" -- test $? -eq 1
is "$out" "user/a/long_name.c: ig_bad" \
	"prefixes: only it is named; file, word, folder and short prefixes pass, statics are free"
is "$(grep -c 'user/a/long_name.c: ig_long_name_, ig_long_, ig_name_, ig_a_, ig_ln_' "$TMP/pxerr")" 1 \
	"prefixes: the prefixes the file may use are listed"
is "$("$PX" --suggest --sources "$t" 2>/dev/null | tr '\t\n' ' |')" "# user/a/long_name.c|ig_bad ig_ln_bad|" \
	"prefixes: --suggest prints a map line, with the file's short form"
"$PX" --rename "$t" > /dev/null
ok "prefixes: --rename applies the map" -- test $? -eq 0
ok "prefixes: the renamed tree passes" -- "$PX" --sources "$t"
is "$(grep -c 'ig_ln_bad' "$t/user/a/long_name.c" "$t/user/a/other.c" "$t/tests/notes.txt" | tr '\n' ' ')" \
	"$t/user/a/long_name.c:2 $t/user/a/other.c:2 $t/tests/notes.txt:1 " \
	"prefixes: the definition, its callers, its prototype and the tests are renamed"
is "$(cat "$t/tests/notes.txt")" 'ig_ln_bad() is called in a test; the key ig_bad is not a call' \
	"prefixes: outside C files only a call is renamed"
is "$(sed -n 2p "$t/user/a/other.c")" "$(printf '\t      int y);')" \
	"prefixes: a prototype's continuation line follows its ( "
is "$(grep -c 'ig_ln_bad\|ig_bad' "$t/tools/prefixes.map")" 1 "prefixes: the map itself is kept"
echo 'int ig_other_y(void) { return ig_bad(3, 4); }' >> "$t/user/a/other.c"
"$PX" --rename "$t" > /dev/null
ok "prefixes: --rename runs again on code that still calls an old name" -- test $? -eq 0
is "$(grep -c 'ig_bad' "$t/user/a/other.c")" 0 "prefixes: the new caller is renamed"
printf '#include "a/ig_bad.h"\nint ig_a_m(struct s *p) { return p->ig_bad + p[1].ig_bad + ig_bad(); }\n' \
	> "$t/user/a/third.c"
"$PX" --rename "$t" > /dev/null
is "$(cat "$t/user/a/third.c")" "$(printf '#include "a/ig_bad.h"\nint ig_a_m(struct s *p) { return p->ig_bad + p[1].ig_bad + ig_ln_bad(); }')" \
	"prefixes: members and file names that share an old name are kept"
is "$("$PX" --rename "$t")" "prefixes: no old name of the 1 in the map is left; nothing to do" \
	"prefixes: a map applied already changes nothing"

for bad in 'ig_bad ig_ln_ok|ig_ln_ok already exists' \
	'ig_bad ig_zz_bad|ig_zz_bad lacks the prefix' \
	'ig_keep ig_ln_keep|ig_keep is a static function' \
	'ig_bad ig_ln_x ig_y|want "old new"'; do
	t=$TMP/pxbad
	rm -rf "$t"
	ptree "$t"
	echo "${bad%%|*}" > "$t/tools/prefixes.map"
	before=$(cd "$t" && find . -type f | sort | xargs cat | cksum)
	out=$("$PX" --rename "$t" 2>&1)
	ok "prefixes: --rename refuses: ${bad#*|}" -- test $? -eq 1
	is "$(echo "$out" | grep -c "${bad#*|}")" 1 "prefixes: the refusal is named"
	is "$(cd "$t" && find . -type f | sort | xargs cat | cksum)" "$before" \
		"prefixes: a refused --rename changes nothing"
done

ok "prefixes: every exported function in user/ carries its prefix (sources)" -- \
	sh -c '"$1" --sources "$2" >&2' sh "$PX" "$IG_TOP"
p=$TMP/pxplanted
mkdir -p "$p"
cp -r "$IG_TOP/user" "$IG_TOP/docs" "$p/"
printf '\nint ig_planted_name(void)\n{\n\treturn 0;\n}\n' >> "$p/user/util/escape.c"
out=$("$PX" --sources "$p" 2>/dev/null)
ok "prefixes: a name planted in a copy of this tree fails the check" -- test $? -eq 1
is "$out" "user/util/escape.c: ig_planted_name" "prefixes: the planted name is named"
sed -i '/^| `user\/host\/procfs.c` | `proc` |$/d' "$p/docs/design.md"
out=$("$PX" --sources "$p" 2>/dev/null | grep -c '^user/host/procfs.c: ig_proc_')
ok "prefixes: the design's table of short prefixes is what allows them" -- test "$out" -gt 0

# ---- calls among the engine's files ---------------------------------------------
if ! command -v nm >/dev/null || ! command -v tsort >/dev/null ||
	! command -v cc >/dev/null; then
	skip "calls: the engine's call graph" "needs nm, tsort and cc (binutils)"
	done_testing
	exit
fi
objs=""
missing=""
for c in $(find "$IG_TOP/user/engine" -name '*.c' | sort); do
	o=$IG_TOP/build/${c#"$IG_TOP"/}
	o=${o%.c}.o
	if [ -f "$o" ]; then objs="$objs $o"; else missing="$missing $o"; fi
done
if [ -n "$missing" ]; then
	skip "calls: the engine's call graph" "engine not built (make):$missing"
	done_testing
	exit
fi

# the checker sees a cycle through two files and a clean chain as clean
printf 'void b(void);\nvoid a(void) { b(); }\n' > "$TMP/a.c"
printf 'void a(void);\nvoid b(void) { a(); }\n' > "$TMP/b.c"
printf 'void c(void) { }\n' > "$TMP/c.c"
printf 'void c(void);\nvoid d(void) { c(); }\n' > "$TMP/d.c"
for f in a b c d; do cc -c -o "$TMP/$f.o" "$TMP/$f.c" || exit 1; done
ok "calls: a cycle between two files fails the check" -- \
	sh -c '! "$1" "$2/a.o" "$2/b.o" >/dev/null 2>&1' sh "$CG" "$TMP"
is "$("$CG" "$TMP/c.o" "$TMP/d.o" 2>&1)" "d c" "calls: a chain passes, one edge caller callee"

# shellcheck disable=SC2086
if "$CG" $objs > "$TMP/edges" 2> "$TMP/err"; then
	pass "calls: no call cycle among the engine's files"
else
	fail "calls: no call cycle among the engine's files"
	sed 's/^/# /' "$TMP/err"
fi
# the GPU model reaches attribution only through the sink
bad=$(grep -E '^(gpu|drain|sweep) (attrib|causes|detail)$' "$TMP/edges")
is "$bad" "" "calls: the GPU model does not call attribution"
bad=$(grep -E '^(attrib|causes|detail|atattach) ' "$TMP/edges" |
	grep -vE ' (attrib|causes|detail|stacks|tasks|files|names|atattach)$')
is "$bad" "" "calls: attribution calls only itself, the stack tables and the task and file tables"

# the engine's top files and its sub-folders, each sub-folder one node:
# no cycle, so no file at the top that a sub-folder calls (the task
# tables, the gap list, the observer) calls back into that sub-folder.
# engine_nodes EDGES: the edges between those nodes
for o in $objs; do
	d=$(dirname "${o#"$IG_TOP"/build/user/engine/}")
	f=$(basename "$o" .o)
	if [ "$d" = . ]; then echo "$f $f"; else echo "$f engine/$d"; fi
done > "$TMP/nodeof"
engine_nodes() {
	awk 'NR == FNR { n[$1] = $2; next } n[$1] != n[$2] { print n[$1], n[$2] }' \
		"$TMP/nodeof" "$1" | sort -u
}
engine_nodes "$TMP/edges" > "$TMP/nodecalls"
diag "calls between the engine's top files and sub-folders: $(tr '\n' ',' < "$TMP/nodecalls")"
ok "calls: no cycle between the engine's top files and its sub-folders" -- \
	sh -c 'tsort "$1" > /dev/null 2>&1' sh "$TMP/nodecalls"
is "$(grep '^tasks engine/' "$TMP/nodecalls")" "" \
	"calls: the task tables call no sub-folder of the engine (a process's exit reaches the GPU model from the intake)"
# a call from tasks.c into the GPU model, planted beside the objects
mkdir -p "$TMP/plant"
printf 'struct ig_engine;\nstruct ig_process;\nvoid ig_gpu_proc_exit(struct ig_engine *e, struct ig_process *p, unsigned long long ts);\nvoid ig_tasks_planted(void) { ig_gpu_proc_exit(0, 0, 0); }\n' \
	> "$TMP/plant/tasks.c"
cc -c -o "$TMP/plant/tasks.o" "$TMP/plant/tasks.c" || exit 1
# shellcheck disable=SC2086
"$CG" $objs "$TMP/plant/tasks.o" > "$TMP/pedges" 2> /dev/null
engine_nodes "$TMP/pedges" > "$TMP/pnodecalls"
ok "calls: a call planted from tasks.c into gpu/ makes a cycle the check finds" -- \
	sh -c '! tsort "$1" > /dev/null 2>&1' sh "$TMP/pnodecalls"

# the call graph names a file by its name alone
is "$(find "$IG_TOP/user" -mindepth 2 -name '*.c' -printf '%f\n' | sort | uniq -d | tr '\n' ' ')" "" \
	"calls: no two files of user/ share a name"
# every user object: the calls between folders go the way the includes do
# (the objects of the sources in the tree: a renamed source leaves its old object)
all=$(find "$IG_TOP/user" -mindepth 2 -name '*.c' | sort |
	sed "s|^$IG_TOP/user/\(.*\)\.c\$|$IG_TOP/build/user/\1.o|" |
	while read -r o; do [ -f "$o" ] && echo "$o"; done)
nsrc=$(find "$IG_TOP/user" -mindepth 2 -name '*.c' | wc -l)
if [ "$(echo "$all" | grep -c .)" -ne "$nsrc" ]; then
	skip "calls: between folders" "user/ not all built (make)"
	done_testing
	exit
fi
# shellcheck disable=SC2086
"$CG" $all > "$TMP/alledges" 2> "$TMP/allerr"
[ -s "$TMP/allerr" ] && diag "call cycles between files of one folder: $(tail -n +2 "$TMP/allerr" | tr -s ' \n' ' ')"
# a file's folder: NAME, or NAME/SUB in a sub-folder (as includegraph.py
# names them); between folders a sub-folder counts as its folder, and
# between sibling sub-folders each counts as itself
for o in $all; do
	d=$(dirname "${o#"$IG_TOP"/build/user/}")
	echo "$(basename "$o" .o) $d"
done | sort > "$TMP/folderof"
awk 'NR == FNR { f[$1] = $2; next }
	{ a = f[$1]; b = f[$2]; la = a; lb = b; sub(/\/.*/, "", la); sub(/\/.*/, "", lb) }
	la != lb { print la, lb; next }
	a != b && a != la && b != lb { print a, b }' \
	"$TMP/folderof" "$TMP/alledges" | sort -u > "$TMP/fcalls"
# the exported names, from the objects' symbols, and a planted object
ok "prefixes: every exported function in user/ carries its prefix (objects)" -- \
	sh -c '"$1" "$2" >&2' sh "$PX" "$IG_TOP"
p=$TMP/pxobjs
mkdir -p "$p/build" "$p/user/util"
cp -r "$IG_TOP/user" "$IG_TOP/docs" "$p/"
cp -r "$IG_TOP/build/user" "$p/build/"
printf 'int ig_stray_obj(void) { return 0; }\nstatic int ig_util_s(void) { return 1; }\nint ig_util_ok(void) { return ig_util_s(); }\n' > "$p/user/util/planted.c"
cc -c -o "$p/build/user/util/planted.o" "$p/user/util/planted.c" || exit 1
is "$("$PX" "$p" 2>/dev/null)" "user/util/planted.c: ig_stray_obj" \
	"prefixes: an object planted in a copy of this tree fails the check, and is named"
ok "calls: no call cycle between folders" -- sh -c 'grep -v / "$1" | tsort > /dev/null' sh "$TMP/fcalls"
grep '^engine/' "$TMP/fcalls" > "$TMP/subcalls"
diag "calls between the engine's sub-folders: $(tr '\n' ',' < "$TMP/subcalls")"
ok "calls: no call cycle between the engine's sub-folders" -- \
	sh -c 'tsort "$1" > /dev/null' sh "$TMP/subcalls"
# (between sub-folders: the model's header declares what they call)
is "$(sort "$TMP/fedges" | grep -v / | comm -23 "$TMP/fcalls" - | grep -v /)" "" \
	"calls: a folder calls only into folders it includes"

# ---- inside each folder: no circle, no long file (tools/foldergraph.py) -------
FG=$IG_TOP/tools/foldergraph.py
t=$TMP/inside
mkdir -p "$t/user/a" "$t/user/b" "$t/build/user/a" "$t/build/user/b" "$t/tools"
# a: x.c and y.c call each other; b: a header's inline calls t.c, which
# calls the inline (model.h and tasks.c's shape), and h.h's inline calls
# h.c, its own module, which is no circle
printf 'void y(void);\nvoid x(void) { y(); }\n' > "$t/user/a/x.c"
printf 'void x(void);\nvoid y(void) { x(); }\n' > "$t/user/a/y.c"
printf 'int m_add(void);\nstatic inline int m_get(void)\n{\n\treturn m_add();\n}\n' > "$t/user/b/m.h"
printf '#include "m.h"\nint m_add(void) { return 1; }\nint t_use(void) { return m_get(); }\n' > "$t/user/b/t.c"
printf 'int h_add(void);\nstatic inline int h_get(void) { return h_add(); }\n' > "$t/user/b/h.h"
printf '#include "h.h"\nint h_add(void) { return 2; }\nint h_use(void) { return h_get(); }\n' > "$t/user/b/h.c"
for c in a/x a/y b/t b/h; do
	cc -c -I"$t/user/b" -o "$t/build/user/$c.o" "$t/user/$c.c" || exit 1
done
# tools/: p.py imports q, and q imports p inside a function
printf 'import os\nimport q\n' > "$t/tools/p.py"
printf 'def f():\n    import p\n    return p\n' > "$t/tools/q.py"
# 601 lines is one too many, 600 is not
seq 601 | sed 's|.*|// line|' > "$t/user/a/long.h"
seq 600 | sed 's|.*|// line|' > "$t/user/b/fits.h"
out=$("$FG" "$t" 2>&1 >/dev/null)
ok "inside: circles and a long file fail the check" -- test $? -eq 1
for what in 'user/a/: files call one another in a circle: x -> y -> x' \
	'user/b/: files call one another in a circle: m.h -> t -> m.h' \
	'tools/: files call one another in a circle: p.py -> q.py -> p.py' \
	'user/a/long.h: 601 lines, over 600'; do
	is "$(echo "$out" | grep -cF "$what")" 1 "inside: reports $what"
done
is "$(echo "$out" | grep -c 'fits.h\|user/b/: .*h -> h')" 0 \
	"inside: a header and its own .c file are one module; 600 lines fit"
is "$(echo "$out" | wc -l)" 4 "inside: nothing else is reported"
printf 'void x(void) { }\n' > "$t/user/a/x.c"
cc -c -o "$t/build/user/a/x.o" "$t/user/a/x.c" || exit 1
printf 'def f():\n    return 0\n' > "$t/tools/q.py"
sed -i 1d "$t/user/a/long.h"
printf 'static inline int m_get(void)\n{\n\treturn 0;\n}\n' > "$t/user/b/m.h"
is "$("$FG" "$t" 2>&1 >/dev/null)" "" "inside: once each circle is broken, the tree passes"

# this tree: no circle inside any folder, no file over 600 lines
"$FG" "$IG_TOP" > "$TMP/inedges" 2> "$TMP/inerr"
sed 's/^foldergraph: //' "$TMP/inerr" > "$TMP/inprob"
is "$(cat "$TMP/inprob")" "" \
	"inside: no circle inside a folder of user/, simgpu/ or tools/, and no file of user/ or tools/ over 600 lines"
is "$(grep '^tools trainsim\.py trainsim_cuda\.py$' "$TMP/inedges")" "tools trainsim.py trainsim_cuda.py" \
	"inside: the import graph holds tools/ (trainsim.py imports its driver's part)"
is "$(grep ' trainsim\.py$' "$TMP/inedges")" "" \
	"inside: nothing imports trainsim.py (its ranks, its parts and torchloader.py import the parts)"
done_testing

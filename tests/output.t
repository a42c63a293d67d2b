#!/bin/sh
# Output that can fail fails loudly (exit 1, one line), output paths are
# checked before a run, output files are private (0600, or the sudo
# user's) and never written through a link another user planted, the
# target's strings reach the terminal escaped.  The root parts trace.
. "$(dirname "$0")/lib.sh"
REC=$IG_TOP/tests/fuzz/corpus/cpu.igrec

# --- write errors ---------------------------------------------------------
says="No space left on device"
one_line "text report to a full disk" 1 sh -c "'$IG' report '$REC' > /dev/full"
one_line "--json to a full disk" 1 "$IG" report -q --json /dev/full "$REC"
one_line "--json - to a full disk" 1 sh -c "'$IG' report --json - '$REC' > /dev/full"
one_line "--dump to a full disk" 1 sh -c "'$IG' report --dump '$REC' > /dev/full"
says="No such file or directory"
one_line "--json into a missing directory" 1 "$IG" report --json "$TMP/no/such/x.json" "$REC"
says=
"$IG" report --json /dev/null "$REC" > /dev/null 2> "$TMP/err"
is "$?:$(cat "$TMP/err")" "0:" "--json to a device that takes it: exit 0, quiet"

# --- input that is not a recording file ------------------------------------
mkfifo "$TMP/fifo"
one_line "report on a FIFO is refused, not waited on" 1 timeout 5 "$IG" report "$TMP/fifo"

# --- --gaps 0 lists none ---------------------------------------------------
"$IG" report --gaps 0 --json "$TMP/g.json" "$REC" > /dev/null
is "$(json "$TMP/g.json" "len(j['gpu']['gap_list'])")" 0 "--gaps 0: no gap listed"
ok "--gaps 0: the gaps are still counted" -- \
	test "$(json "$TMP/g.json" "j['gpu']['gap_list_omitted'] == j['gpu']['gaps'] > 0")" = True

# --- private output files ---------------------------------------------------
"$IG" report -q --json "$TMP/p.json" "$REC"
is "$(stat -c %a "$TMP/p.json")" 600 "JSON report: mode 0600"
umask 000
printf 'old' > "$TMP/old.json"
"$IG" report -q --json "$TMP/old.json" "$REC"
is "$(stat -c %a "$TMP/old.json")" 600 "JSON report over an old 0666 file: a new file, mode 0600"
umask 022

if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null; then
	skip "planted links" "needs root and setpriv"
	done_testing
	exit
fi
# A sticky world-writable directory like /tmp, where nobody plants links.
chmod 711 "$TMP"
PUB=$TMP/pub
mkdir -m 1777 "$PUB"
echo secret > "$TMP/target"
chmod 600 "$TMP/target"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
as_nobody ln -s "$TMP/target" "$PUB/x.json"
one_line "--json through nobody's link is refused" 1 "$IG" report -q --json "$PUB/x.json" "$REC"
is "$(cat "$TMP/target")" secret "--json: the link's target is untouched"
as_nobody ln -s "$TMP/target" "$PUB/x.igrec"
one_line "-o through nobody's link is refused" 1 "$IG" run -q -o "$PUB/x.igrec" -- true
is "$(cat "$TMP/target")" secret "-o: the link's target is untouched"
as_nobody sh -c "umask 0; echo planted > '$PUB/y.json'"
"$IG" report -q --json "$PUB/y.json" "$REC"
is "$(stat -c '%a %u' "$PUB/y.json")" "600 0" "nobody's own file at the path: replaced by a new 0600 root file"
SUDO_UID=65534 SUDO_GID=65534 "$IG" report -q --json "$TMP/sudo.json" "$REC"
is "$(stat -c '%a %u:%g' "$TMP/sudo.json")" "600 65534:65534" "under sudo: the invoking user's file, 0600"
ln -s "$TMP/mine.json" "$TMP/mylink.json"
"$IG" report -q --json "$TMP/mylink.json" "$REC"
ok "a link of the user's own is followed" -- test -s "$TMP/mine.json"

# --- tracing: outputs checked first, write errors loud ----------------------
if ! "$IG" check > /dev/null 2>&1; then
	skip "tracing output checks" "idlegap check fails here"
	done_testing
	exit
fi
start=$(date +%s)
one_line "run: a bad --json path fails before the command runs" 1 \
	"$IG" run -q --json "$TMP/no/such/x.json" -- sh -c "touch '$TMP/ran'; sleep 3"
ok "run: the command never ran, no trace was taken" -- test ! -e "$TMP/ran" -a $(($(date +%s) - start)) -lt 3
"$IG" run -- true > /dev/full 2> "$TMP/err"
is "$?:$(grep -v ': tracing ' "$TMP/err")" \
	"1:idlegap: error: cannot write the report to standard output: No space left on device" \
	"run -- true to a full disk: exit 1, one line besides the progress line"
"$IG" run --json "$TMP/run.json" -o "$TMP/run.igrec" -- true > /dev/null 2>&1
is "$(stat -c %a "$TMP/run.json") $(stat -c %a "$TMP/run.igrec")" "600 600" "run: JSON and recording mode 0600"
# the target's name is a terminal escape sequence
cp /bin/sleep "$TMP/$(printf 'x\033]0;pwned\007')"
"$IG" run -- "$TMP/$(printf 'x\033]0;pwned\007')" 0.2 > "$TMP/esc.txt" 2> /dev/null
ok "a comm of escape sequences is printed escaped" -- grep -q 'x\\x1b\]0;pwned\\x07' "$TMP/esc.txt"
ok "no raw escape byte in the report" -- sh -c "! grep -q \"\$(printf '\\033')\" '$TMP/esc.txt'"
done_testing

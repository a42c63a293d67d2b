#!/bin/sh
# Outputs the workload cannot steer and that fail loudly: paths walked
# without a link or directory another user planted (fs.protected_symlinks
# 0 and 1), the agent's --reports directory alike, FIFOs nobody reads
# refused, closed standard fds, `run` exiting with the job's status,
# UTF-8 in JSON and Perfetto, --label messages, the errno of a failed
# write, and no empty or cut output left behind (docs/design.md §7.2).
. "$(dirname "$0")/lib.sh"
REC=$IG_TOP/tests/fuzz/corpus/storage.igrec

# --- closed standard fds ----------------------------------------------------
# The first file opened would take fd 1: the JSON went into the folded file.
"$IG" report -q --folded "$TMP/f8.folded" --json - "$REC" >&- 2> "$TMP/err"
rc=$?
ok "--json - with stdout closed: an error, not exit 0 (exit $rc)" -- [ $rc = 1 ]
ok "  the line names standard output" -- grep -q "standard output: Bad file descriptor" "$TMP/err"
ok "  the JSON did not land in the --folded file" -- sh -c "! grep -q '\"gpu\"' '$TMP/f8.folded' 2>/dev/null"
"$IG" report -q --json "$TMP/f8.json" "$REC" <&- 2>&-
is "$?:$(json "$TMP/f8.json" "j['gpu']['gaps'] > 0")" "0:True" "stdin and stderr closed: the report is written, exit 0"

# --- FIFOs ---------------------------------------------------------------------
mkfifo "$TMP/fifo"
says="FIFO that nothing reads"
one_line "--json to a FIFO nothing reads: refused, not waited on" 1 \
	timeout 10 "$IG" report -q --json "$TMP/fifo" "$REC"
says=
cat "$TMP/fifo" > "$TMP/fromfifo" &
reader=$!
# the reader opens the FIFO soon; until then the output is refused
i=0
until "$IG" report -q --json "$TMP/fifo" "$REC" 2> /dev/null || [ $i -ge 50 ]; do
	sleep 0.1; i=$((i + 1))
done
wait $reader
is "$(json "$TMP/fromfifo" "j['gpu']['gaps'] > 0")" True "--json to a FIFO with a reader: the report goes through"

# /dev/stdout is root's link to /proc's link to the open file, a pipe here
"$IG" report -q --json /dev/stdout "$REC" | cat > "$TMP/viapipe.json"
is "$(json "$TMP/viapipe.json" "j['gpu']['gaps'] > 0")" True "--json /dev/stdout into a pipe: written"
"$IG" report -q --json /dev/stdout "$REC" > "$TMP/viafile.json"
is "$(json "$TMP/viafile.json" "j['gpu']['gaps'] > 0")" True "--json /dev/stdout into a file: written"

# --- --label: which part is wrong, on one line ------------------------------------
says="KEY is not a Prometheus label name"
one_line "--label with a bad KEY" 2 "$IG" agent --label 'a-b=v'
says="VALUE holds a control character"
one_line "--label with a newline in VALUE: one line, VALUE blamed" 2 "$IG" agent --label "$(printf 'cluster=a\nb')"
ok "  the newline is shown escaped" -- grep -q "cluster=a\\\\x0ab" "$TMP/err"
one_line "--label with bytes that are not UTF-8 in VALUE" 2 "$IG" agent --label "$(printf 'cluster=\377')"
says="no '='"
one_line "--label without =" 2 "$IG" agent --label cluster
says=

# --- outputs that fail are removed ---------------------------------------------
says="No such file or directory"
one_line "--folded into a missing directory" 1 \
	"$IG" report -q --json "$TMP/early.json" --folded "$TMP/no/such/f" "$REC"
ok "  the --json file opened before it is removed, not left empty" -- test ! -e "$TMP/early.json"
one_line "--json into a missing directory" 1 \
	"$IG" report -q --perfetto "$TMP/early.pftrace" --json "$TMP/no/such/j" "$REC"
ok "  the --perfetto file opened before it is removed" -- test ! -e "$TMP/early.pftrace"
says="not a recording\|cannot read\|corrupt\|too short\|magic"
printf 'not a recording at all, just text of some length\n' > "$TMP/junk.igrec"
"$IG" report -q --json "$TMP/junk.json" "$TMP/junk.igrec" 2> "$TMP/err"
is "$?:$(test -e "$TMP/junk.json" && echo left)" "1:" "a recording refused: its --json file is not left behind"
says=

# --- UTF-8 in what machines read ------------------------------------------------
# a comm with bytes \xff\xfe (block checksums made right again)
/usr/bin/python3 - "$REC" "$TMP/bad.igrec" <<'PY'
import struct, sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
old, new = b"trainsim", b"tr\xff\xfensim"
blk, n = 24, 0
while blk + 16 <= len(b):
    magic, ln, nrec, crc = struct.unpack_from("<IIII", b, blk)
    body = bytes(b[blk + 16:blk + 16 + ln])
    if old in body:
        body = body.replace(old, new)
        n += 1
        b[blk + 16:blk + 16 + ln] = body
        struct.pack_into("<I", b, blk + 12, zlib.crc32(body, zlib.crc32(bytes(b[blk:blk + 12]))))
    blk += 16 + ln + (8 - ln % 8) % 8
assert n
open(sys.argv[2], "wb").write(b)
PY
"$IG" report -q --json "$TMP/bad.json" --perfetto "$TMP/bad.pftrace" "$TMP/bad.igrec"
is "$?" 0 "a recording with a name of bytes that are not UTF-8: reported"
ok "  the JSON parses (strict UTF-8)" -- /usr/bin/python3 -c '
import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$TMP/bad.json"
ok "  the bad bytes became U+FFFD" -- grep -q "tr$(printf '\357\277\275\357\277\275')nsim" "$TMP/bad.json"
ok "  the Perfetto trace holds no raw bad byte" -- sh -c "! grep -q \"\$(printf 'tr\\377\\376')\" '$TMP/bad.pftrace'"
ok "  the Perfetto trace holds the name with U+FFFD" -- grep -q "tr$(printf '\357\277\275\357\277\275')nsim" "$TMP/bad.pftrace"

if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null; then
	skip "planted links and directories, tracing" "needs root and setpriv"
	done_testing
	exit
fi

# --- a full file system: the real errno, no file left -----------------------------
mkdir "$TMP/full"
if mount -t tmpfs -o size=16k tmpfs "$TMP/full" 2> /dev/null; then
	trap 'umount "$TMP/full" 2>/dev/null; rm -rf "$TMP"' EXIT
	dd if=/dev/zero of="$TMP/full/fill" bs=4k count=3 2> /dev/null
	says="No space left on device"
	one_line "--json to a full file system" 1 "$IG" report -q --json "$TMP/full/r.json" "$REC"
	ok "  no empty or cut file left" -- test ! -e "$TMP/full/r.json"
	says=
	umount "$TMP/full"
	trap 'rm -rf "$TMP"' EXIT
else
	skip "--json to a full file system" "cannot mount a tmpfs here"
fi

# --- planted links and directories -------------------------------------------------
# As /tmp: root's, sticky, world-writable; another user plants in it.
chmod 711 "$TMP"
PUB=$TMP/pub
mkdir -m 1777 "$PUB"
mkdir -m 700 "$TMP/victim"
echo secret > "$TMP/victim/important.conf"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
as_nobody ln -s "$TMP/victim" "$PUB/dirlink"
as_nobody ln -s ../victim "$PUB/rellink"
as_nobody mkdir -m 777 "$PUB/open"
as_nobody mkdir -m 1777 "$PUB/sticky"
as_nobody sh -c "echo theirs > '$PUB/sticky/theirs.json'"
ln -s "$TMP/victim" "$PUB/rootlink"	# root's own, as /var/run -> /run
old_ps=$(sysctl -n fs.protected_symlinks)
trap 'sysctl -qw fs.protected_symlinks=$old_ps; rm -rf "$TMP"' EXIT
for ps in 0 1; do
	sysctl -qw fs.protected_symlinks=$ps
	says="symbolic link owned by another user"
	one_line "ps=$ps: --json through nobody's link to a directory" 1 \
		"$IG" report -q --json "$PUB/dirlink/important.conf" "$REC"
	is "$(cat "$TMP/victim/important.conf")" secret "ps=$ps:   root's file behind it is untouched"
	one_line "ps=$ps: --json through nobody's relative link, deeper" 1 \
		"$IG" report -q --json "$PUB/rellink/new.json" "$REC"
	ok "ps=$ps:   nothing created behind it" -- test ! -e "$TMP/victim/new.json"
	one_line "ps=$ps: -o through nobody's link" 1 \
		"$IG" run -q -o "$PUB/dirlink/x.igrec" -- true
	ok "ps=$ps:   nothing created behind it" -- test ! -e "$TMP/victim/x.igrec"
	says="another user and anyone may write it"
	one_line "ps=$ps: --json into nobody's directory that anyone may write" 1 \
		"$IG" report -q --json "$PUB/open/r.json" "$REC"
	says="another user's file is there"
	one_line "ps=$ps: --json over nobody's file in nobody's sticky directory" 1 \
		"$IG" report -q --json "$PUB/sticky/theirs.json" "$REC"
	is "$(cat "$PUB/sticky/theirs.json")" theirs "ps=$ps:   their file is untouched"
	says=
	"$IG" report -q --json "$PUB/sticky/mine$ps.json" "$REC"
	is "$?:$(stat -c '%u %a' "$PUB/sticky/mine$ps.json")" "0:0 600" "ps=$ps: a new file in nobody's sticky directory"
	"$IG" report -q --json "$PUB/rootlink/r$ps.json" "$REC"
	is "$?:$(stat -c %a "$TMP/victim/r$ps.json")" "0:600" "ps=$ps: root's own link is followed"
	# the agent's directory of window reports
	says="symbolic link owned by another user"
	one_line "ps=$ps: agent --reports through nobody's link" 1 \
		timeout 20 "$IG" agent --listen 127.0.0.1:0 --window 1 --every 1 --reports "$PUB/dirlink"
	says="another user and anyone may write it"
	one_line "ps=$ps: agent --reports in nobody's 0777 directory" 1 \
		timeout 20 "$IG" agent --listen 127.0.0.1:0 --window 1 --every 1 --reports "$PUB/open"
	says=
	ok "ps=$ps:   no window report where they point" -- \
		sh -c "! ls '$TMP/victim' '$PUB/open' | grep -q idlegap-window"
done
sysctl -qw fs.protected_symlinks=$old_ps
trap 'rm -rf "$TMP"' EXIT

# --- tracing: the job's status, outputs checked first -------------------------------
if ! "$IG" check > /dev/null 2>&1; then
	skip "tracing checks" "idlegap check fails here"
	done_testing
	exit
fi
# top with stdout closed wrote its screen into a BPF object's fd
timeout 20 "$IG" top >&- 2> "$TMP/err"
rc=$?
ok "top with stdout closed: exit 1 (got $rc), 'Bad file descriptor'" -- \
	sh -c "[ $rc = 1 ] && grep -q 'top: Bad file descriptor' '$TMP/err'"
"$IG" run -q --json "$TMP/j7.json" -- sh -c 'exit 7' 2> /dev/null
is "$?" 7 "run: a job that exits 7 gives 7"
ok "  its report still comes" -- test -s "$TMP/j7.json"
"$IG" run -q --json "$TMP/segv.json" -- sh -c 'kill -SEGV $$' 2> /dev/null
is "$?" 139 "run: a job SIGSEGV ended gives 128+11"
ok "  its report still comes" -- test -s "$TMP/segv.json"
"$IG" run -q -- true 2> /dev/null
is "$?" 0 "run: a job that succeeds gives 0"
says="FIFO that nothing reads"
one_line "run --json to a FIFO nothing reads: refused before the job" 1 \
	timeout 20 "$IG" run -q --json "$TMP/fifo" -- sh -c "touch '$TMP/ran'"
ok "  the job never ran" -- test ! -e "$TMP/ran"
says=
says="No such file or directory"
one_line "run: a bad --json path after -o" 1 \
	"$IG" run -q -o "$TMP/never.igrec" --json "$TMP/no/such/j" -- true
ok "  the recording of a run that never began is not left behind" -- test ! -e "$TMP/never.igrec"
says=
# folded stacks to a full disk: the errno of the write, not EIO
LD_LIBRARY_PATH=$IG_TOP/build/simgpu "$IG" run -q -o "$TMP/stk.igrec" -- \
	"$IG_TOP/build/trainsim" -s cpu -n 6 -q 2> /dev/null
if "$IG" report -q --folded "$TMP/stk.folded" "$TMP/stk.igrec" && [ -s "$TMP/stk.folded" ]; then
	says="No space left on device"
	one_line "--folded to a full disk" 1 "$IG" report -q --folded /dev/full "$TMP/stk.igrec"
	says=
else
	skip "--folded to a full disk" "the recording has no folded stacks"
fi
done_testing

#!/bin/sh
# Do two builds give the same reports?  Runs `report` of each binary on each
# recording and compares, byte for byte, the text report, the JSON report,
# the Perfetto trace, the folded stacks, the --dump listing, what each
# printed on stderr and the exit status.  The Perfetto trace is compared
# without its clock snapshot (TracePacket field 6: the two clocks read when
# it was written), which differs from one run to the next.  Recordings: the
# arguments after the binaries, else the checked-in corpus
# (tests/fuzz/corpus/*.igrec).  Exit 0 when all are the same; else names
# each difference and exits 1.
#
#   tools/samereports.sh OLD_BIN NEW_BIN [RECORDING...]
set -u
[ $# -ge 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN [RECORDING...]" >&2; exit 2; }
old=$1 new=$2
shift 2
for b in "$old" "$new"; do
	[ -x "$b" ] || { echo "samereports: $b is not an executable" >&2; exit 2; }
done
if [ $# -eq 0 ]; then
	set -- "$(dirname "$0")"/../tests/fuzz/corpus/*.igrec
	[ -f "$1" ] || { echo "samereports: no recordings in tests/fuzz/corpus" >&2; exit 2; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# noclock.py FILE: the trace, each packet without its clock snapshot
cat > "$tmp/noclock.py" <<'PY'
import sys

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i

def fields(b):
    i = 0
    while i < len(b):
        start = i
        key, i = varint(b, i)
        wt, n = key & 7, 0
        if wt == 0:
            _, i = varint(b, i)
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        elif wt == 2:
            n, i = varint(b, i)
            i += n
        else:
            raise ValueError("wire type %d at byte %d" % (wt, start))
        if i > len(b):
            raise ValueError("truncated at byte %d" % start)
        yield key >> 3, wt, b[start:i], b[i - n:i]

out = sys.stdout.buffer
for f, wt, raw, body in fields(open(sys.argv[1], "rb").read()):
    if f == 1 and wt == 2:
        out.write(b"packet\n")
        for g, _, graw, _ in fields(body):
            if g != 6:
                out.write(graw)
        out.write(b"\n")
    else:
        out.write(raw)
PY

# run BIN DIR REC: every output of one binary on one recording into DIR
run() {
	mkdir -p "$2"
	# the same output names for both binaries: the outputs may name them
	"$1" report --json "$tmp/json" --perfetto "$tmp/pftrace" \
		--folded "$tmp/folded" "$3" > "$2/text" 2> "$2/stderr"
	echo "$?" > "$2/status"
	for f in json pftrace folded; do
		if [ -f "$tmp/$f" ]; then mv "$tmp/$f" "$2/$f"; else echo absent > "$2/$f"; fi
	done
	/usr/bin/python3 "$tmp/noclock.py" "$2/pftrace" > "$2/pftrace.noclock" 2>&1 ||
		echo "not a trace" >> "$2/pftrace.noclock"
	"$1" report --dump "$3" > "$2/dump" 2> "$2/dump.stderr"
	echo "$?" >> "$2/status"
}

n=0 bad=0
for rec in "$@"; do
	[ -r "$rec" ] || { echo "samereports: cannot read $rec" >&2; exit 2; }
	run "$old" "$tmp/old" "$rec"
	run "$new" "$tmp/new" "$rec"
	for f in text json pftrace.noclock folded dump status stderr dump.stderr; do
		n=$((n + 1))
		if ! cmp -s "$tmp/old/$f" "$tmp/new/$f"; then
			echo "differs: $rec: $f"
			bad=$((bad + 1))
		fi
	done
	rm -rf "$tmp/old" "$tmp/new"
done
echo "samereports: $# recordings, $n outputs compared, $bad differ"
[ "$bad" -eq 0 ]

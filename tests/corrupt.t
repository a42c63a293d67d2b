#!/bin/sh
# Randomly corrupted recordings (bits flipped in real ones): `report`
# refuses them with one line and exit 1, or, when the flips hit only
# padding, gives the very answer of the intact recording.  Never an
# answer that differs with exit 0.  --partial leaves corrupt blocks out
# and says so, and its answer is never absurd (a span longer than the
# intact recording's, or busy, idle and unresolved not adding up).  800
# corruptions gave 50 absurd answers with exit 0 before recordings had
# checksummed blocks and bounded times.
. "$(dirname "$0")/lib.sh"
N=${IG_CORRUPT_N:-800}
plan 9

/usr/bin/python3 - "$IG" "$IG_TOP/tests/fuzz/corpus" "$N" "$TMP" > "$TMP/out" <<'PY'
import os, random, re, subprocess, sys
ig, corpus, n, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rnd = random.Random(9)
files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus))
def report(path, *opt):
    p = subprocess.run([ig, "report", *opt, path], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr
orig = {f: report(f)[1] for f in files}
def head(out):	# (busy + idle + unresolved %, span s) of a text report
    m = re.match(r"GPU busy ([0-9.]+)%, idle ([0-9.]+)%, unresolved ([0-9.]+)% of ([0-9.]+) s", out)
    return (sum(map(float, m.groups()[:3])), float(m.group(4))) if m else None
span = {f: head(orig[f])[1] for f in files}
same = refused = absurd = onelines = partial_ok = partial_said = partial_absurd = 0
for i in range(n):
    f = files[i % len(files)]
    b = bytearray(open(f, "rb").read())
    for _ in range(rnd.randint(1, 4)):
        bit = rnd.randrange(24 * 8, len(b) * 8)   # after the file header
        b[bit // 8] ^= 1 << (bit % 8)
    p = os.path.join(tmp, "c.igrec")
    open(p, "wb").write(b)
    rc, out, err = report(p)
    if rc == 0 and out == orig[f]:
        same += 1
    elif rc == 0:
        absurd += 1
        print("# absurd answer from %s with flips" % f)
    else:
        refused += 1
        onelines += rc == 1 and out == "" and len(err.strip().splitlines()) == 1
    rc, out, err = report(p, "--partial")
    if rc == 0:
        partial_ok += 1
        partial_said += "corrupt block" in err or "truncated" in err or out == orig[f]
        h = head(out)
        if h and ((h[1] > 0 and abs(h[0] - 100) > 0.2) or h[1] > span[f] + 0.001):
            partial_absurd += 1
            print("# absurd --partial answer from %s: %s" % (f, out.splitlines()[0]))
print("n=%d same=%d refused=%d absurd=%d oneline=%d partial_ok=%d partial_said=%d partial_absurd=%d" %
      (n, same, refused, absurd, onelines, partial_ok, partial_said, partial_absurd))
PY
cat "$TMP/out" | sed 's/^/# /'
line=$(tail -1 "$TMP/out")
get() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
is "$(get absurd)" 0 "no absurd answer with exit 0 from $N corrupted recordings"
ok "most are refused ($(get refused) of $N)" -- [ "$(get refused)" -gt $((N / 2)) ]
is "$(get oneline)" "$(get refused)" "each refusal: exit 1, one line, no report"
is "$(get partial_said)" "$(get partial_ok)" "--partial says what it left out"
is "$(get partial_absurd)" 0 "no absurd --partial answer (span, shares)"

# --- the probe's case: bit 48 of one record's time (+281475 s) ----------------
# Once as it comes (the block's checksum fails), once with the checksum made
# right again (the time is outside the recording's start and end).
/usr/bin/python3 - "$IG_TOP/tests/fuzz/corpus/healthy.igrec" "$TMP" <<'PY'
import struct, sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
blk = 24					# file header
magic, ln, nrec, crc = struct.unpack_from("<IIII", b, blk)
rec = blk + 16 + struct.unpack_from("<H", b, blk + 16 + 2)[0]	# second record
b[rec + 16 + 6] ^= 1				# ts bit 48
open(sys.argv[2] + "/ts.igrec", "wb").write(b)
struct.pack_into("<I", b, blk + 12, zlib.crc32(b[blk + 16:blk + 16 + ln], zlib.crc32(b[blk:blk + 12])))
open(sys.argv[2] + "/tscrc.igrec", "wb").write(b)
PY
"$IG" report "$TMP/ts.igrec" > "$TMP/out" 2> "$TMP/err"
is "$?:$(wc -l < "$TMP/err"):$(wc -c < "$TMP/out")" "1:1:0" "one record's time +2^48 ns: refused with one line ($(cat "$TMP/err"))"
ok "  the line says the block is corrupt" -- grep -q "corrupt block" "$TMP/err"
"$IG" report "$TMP/tscrc.igrec" > "$TMP/out" 2> "$TMP/err"
is "$?:$(wc -l < "$TMP/err"):$(wc -c < "$TMP/out")" "1:1:0" "the same with the checksum right: refused with one line ($(cat "$TMP/err"))"
ok "  the line says the time is outside the recording" -- grep -q "outside the recording" "$TMP/err"

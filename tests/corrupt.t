#!/bin/sh
# Randomly corrupted recordings (bits flipped in real ones): `report`
# refuses them with one line and exit 1, or, when the flips hit only
# padding, gives the very answer of the intact recording.  Never an
# answer that differs with exit 0.  --partial leaves corrupt blocks out
# and says so.
. "$(dirname "$0")/lib.sh"
N=${IG_CORRUPT_N:-300}
plan 4

/usr/bin/python3 - "$IG" "$IG_TOP/tests/fuzz/corpus" "$N" "$TMP" > "$TMP/out" <<'PY'
import os, random, subprocess, sys
ig, corpus, n, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rnd = random.Random(9)
files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus))
def report(path, *opt):
    p = subprocess.run([ig, "report", *opt, path], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr
orig = {f: report(f)[1] for f in files}
same = refused = absurd = onelines = partial_ok = partial_said = 0
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
print("n=%d same=%d refused=%d absurd=%d oneline=%d partial_ok=%d partial_said=%d" %
      (n, same, refused, absurd, onelines, partial_ok, partial_said))
PY
cat "$TMP/out" | sed 's/^/# /'
line=$(tail -1 "$TMP/out")
get() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
is "$(get absurd)" 0 "no absurd answer with exit 0 from $N corrupted recordings"
ok "most are refused ($(get refused) of $N)" -- [ "$(get refused)" -gt $((N / 2)) ]
is "$(get oneline)" "$(get refused)" "each refusal: exit 1, one line, no report"
is "$(get partial_said)" "$(get partial_ok)" "--partial says what it left out"

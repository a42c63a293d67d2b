#!/bin/sh
# A recording's replay and records too late to sort (docs/design.md
# §3.4): a recording holds its records in arrival order, and its replay
# takes a record user space wrote as written at most 10 s ahead of the
# kernel's.  One written 11 s ahead (a reader that far behind) releases
# kernel records that come after it in the file: the replay counts them
# in user_lost and says the evidence is not whole, as a live run does,
# never sorting them in silently.  The same recording untouched loses
# nothing.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$IG_TOP/build/trainsim" ] || skip_all "build first: make all"

LD_LIBRARY_PATH=$IG_TOP/build/simgpu "$IG" run -q -o "$TMP/a.igrec" -- \
	"$IG_TOP/build/trainsim" -s healthy -t 16 -n 100000000 -q > "$TMP/run.out" 2>&1
is "$?" 0 "a 16 s run recorded"

# one record user space wrote, early in the run, moved 11 s ahead; the
# block's checksum made again (docs/design.md §6.5)
/usr/bin/python3 - "$TMP/a.igrec" "$TMP/b.igrec" 11000000000 <<'PY'
import struct, sys, zlib
src, dst, ahead = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = bytearray(open(src, "rb").read())
hsize, = struct.unpack_from("<I", data, 12)
recs, pos = [], hsize
while pos + 16 <= len(data):
    magic, blen, nrec, crc = struct.unpack_from("<IIII", data, pos)
    off = 0
    while off + 24 <= blen:
        t, size = struct.unpack_from("<HH", data, pos + 16 + off)
        ts, = struct.unpack_from("<Q", data, pos + 16 + off + 16)
        recs.append((pos, blen, pos + 16 + off, t, ts))
        off += size
    pos += 16 + blen + (-blen % 8)
last = max(r[4] for r in recs if r[4] != 2**64 - 1)
# an NVML sample (nvml, nvwin): stamped when it is read, as a record user
# space writes is.  Not a usym: it carries the time of the stack it names,
# resolved up to seconds later, so its place in the file may be seconds
# past its time, and moving it may release nothing
# and one the jump makes release too early: its replay reads it as written
# 1 s ahead, so for the next second of the file each record is released
# as it comes, and a kernel record older than one read before it (the
# two CPUs' records interleave with a skew) is then too late
def skewed(i):
    newest = max(r[4] for r in recs[:i] if r[4] != 2**64 - 1 and r[3] != 0x103)
    for r in recs[i + 1:]:
        if r[4] == 2**64 - 1 or r[3] >= 0x100:
            continue
        if r[4] >= recs[i][4] + 950000000:
            return False
        if r[4] < newest:
            return True
        newest = r[4]
    return False
cand = [r for i, r in enumerate(recs) if i >= len(recs) // 50 and r[3] in (0x107, 0x10e)
        and r[4] and r[4] + ahead < last and skewed(i)]
if not cand:
    sys.exit("no NVML sample early enough that kernel records after it interleave")
bpos, blen, rpos, t, ts = cand[0]
struct.pack_into("<Q", data, rpos + 16, ts + ahead)
hdr = bytes(data[bpos:bpos + 12])
struct.pack_into("<I", data, bpos + 12, zlib.crc32(bytes(data[bpos + 16:bpos + 16 + blen]), zlib.crc32(hdr)))
open(dst, "wb").write(data)
PY
is "$?" 0 "a record user space wrote moved 11 s ahead"

"$IG" report --json "$TMP/a.json" "$TMP/a.igrec" > "$TMP/a.txt" 2>&1
is "$?" 0 "the recording as made: reported"
"$IG" report --json "$TMP/b.json" "$TMP/b.igrec" > "$TMP/b.txt" 2>&1
is "$?" 0 "the one with a record 11 s ahead: reported"
pychecks "$TMP/a.json" "$TMP/b.json" <<'PY'
import json, sys
from tap import check
a, b = (json.load(open(f))["events"] for f in sys.argv[1:3])
check(a["user_lost"] == 0 and not a["evidence_lost"],
      "as made: nothing too late to sort (%d)" % a["user_lost"])
check(b["user_lost"] > 0 and b["evidence_lost"] and b["dropped"] >= b["user_lost"],
      "11 s ahead: the records it released too early are counted (%d) and the evidence is not whole"
      % b["user_lost"])
PY
ok "the text report warns of it" -- grep -q 'records were lost' "$TMP/b.txt"
done_testing

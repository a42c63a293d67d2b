#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""recshift.py IN OUT NANOSECONDS: a copy of an idlegap recording whose
clocks run NANOSECONDS ahead (negative: behind), as a host whose clock is
off by that much would have written it.  For tests of `idlegap report`
over several hosts' recordings (docs/design.md §4.9): every timestamp a
record carries moves by the same amount: ig_hdr.ts, each field that
bpf/record_fields.def lists as a TIME (the fields user/stream/remap.c
moves for a merged report, under the same conditions), and META's wall
clock (realtime_ns, which that table leaves out on purpose); 0 and ~0
stay (none).  The table's offsets and sizes come from the C compiler
($CC, else cc), over the same headers as the build.  The blocks'
checksums are made again (docs/design.md §6.5).  Only whole, valid blocks
are copied: a damaged recording is refused."""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

BLOCK_MAGIC = 0x4b424749
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
NONE = 0xffffffffffffffff

# bpf/record_fields.def's lines and bpf/records.def's types, with the
# offsets and sizes the compiler gives them: one line each, printed as
# "row TYPE KIND WHEN OFF SIZE TEST_OFF TEST_SIZE VALUE BASE STRIDE MAX
# COUNT_OFF COUNT_SIZE", "type NAME NUMBER", "extra WHAT OFF SIZE".
FIELDS_C = r"""
#include <stdio.h>
#include "stream/records.h"

#define M(s, m)		(((struct s *)0)->m)
#define U(x)		((unsigned long long)(x))
#define ROW(T, K, when, off, size, toff, tsize, v, base, stride, max, coff, csize) \
	printf("row %llu %s %s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n", \
	       U(IG_REC_##T), #K, when, U(off), U(size), U(toff), U(tsize), U(v), \
	       U(base), U(stride), U(max), U(coff), U(csize));

int main(void)
{
#define IG_FIELDS_NONE(T) \
	ROW(T, NONE, "always", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
#define IG_FIELD(T, K, s, m) \
	ROW(T, K, "always", offsetof(struct s, m), sizeof(M(s, m)), 0, 0, 0, 0, 0, 0, 0, 0)
#define IG_FIELD_IF(T, K, s, m, test, v) \
	ROW(T, K, "eq", offsetof(struct s, m), sizeof(M(s, m)), offsetof(struct s, test), \
	    sizeof(M(s, test)), (v), 0, 0, 0, 0, 0)
#define IG_FIELD_IF_FLAG(T, K, s, m, test, f) \
	ROW(T, K, "flag", offsetof(struct s, m), sizeof(M(s, m)), offsetof(struct s, test), \
	    sizeof(M(s, test)), (f), 0, 0, 0, 0, 0)
#define IG_FIELD_EACH(T, K, s, a, m, count) \
	ROW(T, K, "always", offsetof(struct s, a[0].m) - offsetof(struct s, a), \
	    sizeof(M(s, a[0].m)), 0, 0, 0, offsetof(struct s, a), sizeof(M(s, a[0])), \
	    sizeof(M(s, a)) / sizeof(M(s, a[0])), offsetof(struct s, count), sizeof(M(s, count)))
#include "record_fields.def"
#define IG_REC(T, value, name, min)	printf("type %s %llu\n", #T, U(value));
#include "records.def"
	printf("extra ts %llu %llu\n", U(offsetof(struct ig_hdr, ts)), U(sizeof(M(ig_hdr, ts))));
	printf("extra realtime %llu %llu\n", U(offsetof(struct ig_meta, realtime_ns)),
	       U(sizeof(M(ig_meta, realtime_ns))));
	return 0;
}
"""


def field_table(top=TOP):
    """{record type: [TIME row, ...]} from bpf/record_fields.def, each row a
    dict of the columns above; and the header's and META's time fields."""
    cc = os.environ.get("CC") or "cc"
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "fields")
        try:
            cp = subprocess.run(
                [cc, "-std=gnu11", "-D_GNU_SOURCE", "-Werror=implicit-function-declaration",
                 "-I", os.path.join(top, "user"), "-I", os.path.join(top, "bpf"),
                 "-x", "c", "-", "-o", exe],
                input=FIELDS_C, text=True, capture_output=True)
        except OSError as e:
            sys.exit("recshift: %s: %s (the record table needs a C compiler)" % (cc, e))
        if cp.returncode:
            sys.exit("recshift: the record table (bpf/record_fields.def) does not compile:\n" +
                     cp.stderr.strip())
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    cols = ("type", "kind", "when", "off", "size", "test_off", "test_size", "value",
            "base", "stride", "max", "count_off", "count_size")
    times, listed, types, extra = {}, set(), {}, {}
    for line in out.splitlines():
        w = line.split()
        if w[0] == "row":
            row = dict(zip(cols, [int(w[1]), w[2], w[3]] + [int(x) for x in w[4:]]))
            listed.add(row["type"])
            if row["kind"] == "TIME":
                if row["size"] != 8:
                    sys.exit("recshift: a TIME field of %d bytes in record type %#x" %
                             (row["size"], row["type"]))
                times.setdefault(row["type"], []).append(row)
        elif w[0] == "type":
            types[w[1]] = int(w[2])
        elif w[0] == "extra":
            extra[w[1]] = (int(w[2]), int(w[3]))
    extra["meta"] = types["META"]
    missing = [name for name, num in types.items() if num not in listed]
    if missing:
        sys.exit("recshift: bpf/record_fields.def has no line for %s" % " ".join(missing))
    return times, extra


def load(rec, off, size):
    return int.from_bytes(rec[off:off + size], "little")


def move(rec, off, ns):
    """The time at @off, NANOSECONDS later; 0 and ~0 (none) stay, and so
    does a field past the record's end."""
    if off + 8 <= len(rec):
        v, = struct.unpack_from("<Q", rec, off)
        if v and v != NONE:
            struct.pack_into("<Q", rec, off, (v + ns) & NONE)


def applies(rec, f):
    if f["when"] == "always":
        return True
    if f["test_off"] + f["test_size"] > len(rec):
        return False
    t = load(rec, f["test_off"], f["test_size"])
    return t == f["value"] if f["when"] == "eq" else (t & f["value"]) != 0


def shift_record(rec, ns, table):
    times, extra = table
    rtype, = struct.unpack_from("<H", rec, 0)
    move(rec, extra["ts"][0], ns)
    if rtype == extra["meta"]:
        move(rec, extra["realtime"][0], ns)
    for f in times.get(rtype, ()):
        if not applies(rec, f):
            continue
        if not f["stride"]:
            move(rec, f["off"], ns)
            continue
        n = load(rec, f["count_off"], f["count_size"]) \
            if f["count_off"] + f["count_size"] <= len(rec) else 0
        k = 0
        while k < n and k < f["max"] and f["base"] + (k + 1) * f["stride"] <= len(rec):
            move(rec, f["base"] + k * f["stride"] + f["off"], ns)
            k += 1


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: recshift.py IN OUT NANOSECONDS")
    src, dst, ns = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(src, "rb").read()
    if data[:8] != b"IDLEGAP\0":
        sys.exit("recshift: %s is not an idlegap recording" % src)
    hsize, = struct.unpack_from("<I", data, 12)
    table = field_table()
    out = bytearray(data[:hsize])
    pos = hsize
    while pos + 16 <= len(data):
        magic, blen, nrec, crc = struct.unpack_from("<IIII", data, pos)
        payload = bytearray(data[pos + 16:pos + 16 + blen])
        if magic != BLOCK_MAGIC or len(payload) != blen or \
                zlib.crc32(payload, zlib.crc32(data[pos:pos + 12])) != crc:
            sys.exit("recshift: %s: bad block at byte %d" % (src, pos))
        off = 0
        while off + 24 <= blen:
            size, = struct.unpack_from("<H", payload, off + 2)
            if size < 24 or off + size > blen:
                sys.exit("recshift: %s: bad record at byte %d" % (src, pos + 16 + off))
            rec = payload[off:off + size]
            shift_record(rec, ns, table)
            payload[off:off + size] = rec
            off += size
        hdr = struct.pack("<III", magic, blen, nrec)
        out += hdr + struct.pack("<I", zlib.crc32(payload, zlib.crc32(hdr)))
        out += payload + b"\0" * (-blen % 8)
        pos += 16 + blen + (-blen % 8)
    if pos != len(data):
        sys.exit("recshift: %s: %d bytes after the last block" % (src, len(data) - pos))
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()

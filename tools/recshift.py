#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""recshift.py IN OUT NANOSECONDS: a copy of an idlegap recording whose
clocks run NANOSECONDS ahead (negative: behind), as a host whose clock is
off by that much would have written it.  For tests of `idlegap report`
over several hosts' recordings (docs/design.md §4.9): every timestamp a
record carries (ig_hdr.ts, the off-CPU, block, CUDA and NCCL records'
times) and META's wall clock move by the same amount; 0 stays 0 (none).
The blocks' checksums are made again (docs/design.md §6.5).  Only whole,
valid blocks are copied: a damaged recording is refused."""
import struct
import sys
import zlib

BLOCK_MAGIC = 0x4b424749
# record type -> offsets of its u64 timestamps after the 24-byte header
TIMES = {
    2: (24, 32),            # offcpu: t_off, t_wake
    3: (24,),               # bio: t_issue
    4: (40, 48, 56),        # cuda: t_begin, t_wake, last_submit
    12: (64,),              # nccl: t_begin
    0x100: (32,),           # meta: realtime_ns
}


LAUNCHES = 11              # launches: n at 32, entries of 24 bytes from 40,
                           # each starting with its ts


def shift_record(rec, ns):
    rtype, size = struct.unpack_from("<HH", rec, 0)
    ts, = struct.unpack_from("<Q", rec, 16)
    if ts:
        struct.pack_into("<Q", rec, 16, ts + ns)
    times = TIMES.get(rtype, ())
    if rtype == LAUNCHES and size >= 40:
        n, = struct.unpack_from("<I", rec, 32)
        times = [40 + 24 * k for k in range(n)]
    for off in times:
        if off + 8 <= size:
            v, = struct.unpack_from("<Q", rec, off)
            if v and v != 0xffffffffffffffff:
                struct.pack_into("<Q", rec, off, v + ns)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: recshift.py IN OUT NANOSECONDS")
    src, dst, ns = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(src, "rb").read()
    if data[:8] != b"IDLEGAP\0":
        sys.exit("recshift: %s is not an idlegap recording" % src)
    hsize, = struct.unpack_from("<I", data, 12)
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
            shift_record(rec, ns)
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

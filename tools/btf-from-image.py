#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""btf-from-image.py IMAGE OUT: copies the kernel's BTF out of a raw kernel
Image (arm64's vmlinuz has no ELF sections to find .BTF by): the blob that
starts with the BTF magic and whose header's type and string sections fit,
the largest such.  `bpftool btf dump file OUT format c` then gives
vmlinux.h.  One line and exit 1 when there is none."""
import struct
import sys

data = open(sys.argv[1], "rb").read()
best = None
i = data.find(b"\x9f\xeb\x01")
while i >= 0:
    if i + 24 <= len(data):
        hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<IIIII", data, i + 4)
        end = i + hdr_len + max(type_off + type_len, str_off + str_len)
        if hdr_len == 24 and type_off == 0 and str_off == type_len and end <= len(data) \
                and str_len > 0 and data[i + hdr_len + str_off] == 0:
            if not best or end - i > best[1] - best[0]:
                best = (i, end)
    i = data.find(b"\x9f\xeb\x01", i + 1)
if not best:
    print("btf-from-image: %s: no BTF found" % sys.argv[1], file=sys.stderr)
    sys.exit(1)
open(sys.argv[2], "wb").write(data[best[0]:best[1]])
print("%s: BTF at offset %d, %d bytes" % (sys.argv[1], best[0], best[1] - best[0]))

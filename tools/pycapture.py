#!/usr/bin/env python3
"""Capture the memory idlegap reads of a running CPython, for the unit tests.

Run under the Python to capture (3.9 to 3.15, and free-threaded builds): it writes a fixture for
tests/unit/test_pycode.c with the interpreter's file name, the start of its
_PyRuntime (3.13+: _Py_DebugOffsets), the bytes of one function's code
object and of the objects it points to (its type and type name, name,
qualified name, file name, line table), and the line CPython itself gives
for each instruction, as idlegap's frames give the instruction:

    python3.X tools/pycapture.py tests/fixtures/py/3.X.txt
    python3.14t tools/pycapture.py tests/fixtures/py/3.14t.txt
"""
import ctypes
import dis
import os
import sys
import sysconfig


# The function captured, compiled under a file name of its own so that
# the fixture names no path of the machine it was captured on.
SAMPLE = """

def sample(n):
    total = 0
    for i in range(n):  # a loop, a call and a branch on several lines
        if i % 3:
            total += i
        else:
            total -= len(str(i))
    return total
"""
exec(compile(SAMPLE, "pycapture_sample.py", "exec"))


def peek(addr, n):
    return ctypes.string_at(addr, n)


def main():
    out = sys.argv[1]
    code = sample.__code__
    v = sys.version_info
    # a free-threaded build (3.13t+): "python3.14t", and object headers
    # 16 bytes longer (ob_tid, flags, the object's mutex, a split count)
    ft = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    ld = sysconfig.get_config_var("LDVERSION") or "%d.%d" % v[:2]
    lib = sysconfig.get_config_var("INSTSONAME") or "python" + ld
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        lib = "python" + ld
    head = 16 if ft else 0
    rt = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
    # _Py_DebugOffsets: 584 bytes in 3.13, 760 in 3.14, 744 read of 3.15
    regions = [(rt, 800 if v >= (3, 14) else 592)]
    co = id(code)
    regions.append((co, 256 + head))
    tp = ctypes.c_void_p.from_address(co + 8 + head).value
    regions.append((tp, 32 + head))
    tp_name = ctypes.c_void_p.from_address(tp + 24 + head).value
    regions.append((tp_name, 8))
    for obj in (code.co_name, getattr(code, "co_qualname", code.co_name),
                code.co_filename):
        regions.append((id(obj), 80 + head + 4 * len(obj)))
    table = getattr(code, "co_linetable", None) if v >= (3, 10) else code.co_lnotab
    regions.append((id(table), 40 + head + len(table)))
    if v >= (3, 10):
        lines = [(s, e, l) for s, e, l in code.co_lines()]
    else:
        starts = list(dis.findlinestarts(code)) + [(len(code.co_code), None)]
        lines = [(starts[i][0], starts[i + 1][0], starts[i][1])
                 for i in range(len(starts) - 1)]
    adaptive = 0
    if v >= (3, 11):  # the instructions follow the object's fixed part
        adaptive = type(code).__basicsize__
    with open(out + ".tmp", "w") as f:
        f.write("# %s, written by tools/pycapture.py\n" % sys.version.split()[0])
        f.write("path %s\nruntime %#x\ncode %#x\n" % (lib, rt, co))
        f.write("name %s\nqualname %s\nfile %s\nfirstline %d\n" % (
            code.co_name, getattr(code, "co_qualname", code.co_name),
            code.co_filename, code.co_firstlineno))
        for a, n in regions:
            f.write("mem %#x %s\n" % (a, peek(a, n).hex()))
        for s, e, l in lines:
            for off in range(s, e, 2):
                if l is None:
                    continue
                if v >= (3, 11):
                    lasti = adaptive + off
                elif v >= (3, 10):
                    lasti = off // 2
                else:
                    lasti = off
                f.write("line %d %d\n" % (lasti, l))
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a person sees on an `idlegap --html` page, from headless
Chromium's screenshot and the DOM it ran (tests/html.t).

check_page.py PAGE PNG DOM LOG (--report JSON | --synth) [--name NAME]

PAGE the page, PNG its screenshot, DOM the page after its script ran
(--dump-dom: the page writes what it drew, and where, into #ig-check),
LOG Chromium's stderr (--enable-logging=stderr: the console).  With
--report, the strips' coloured areas and the flame graph's root widths
are measured in the screenshot's pixels and compared with the JSON
report's seconds, to 1% of the strip's or the graph's width; with
--synth, the strips with the shares tests/html/synth.c fed them.
The PNG is decoded here (zlib, no imaging library)."""
import argparse
import html
import json
import re
import struct
import sys
import zlib

from tap import check

COLORS = {
    "busy": "#2e7d32", "unresolved": "#9e9e9e", "peer_wait": "#7e57c2", "idle": "#f48fb1",
    "storage": "#e53935", "page_fault": "#f4511e", "cpu_starvation": "#fb8c00",
    "gil": "#fdd835", "lock": "#c0ca33", "network": "#1e88e5", "host_compute": "#8d6e63",
    "cuda_api": "#00acc1", "sleep": "#5c6bc0", "wait_untracked": "#d81b60",
    "peer_compute": "#00897b", "unknown": "#37474f",
}
RGB = {k: tuple(int(v[i:i + 2], 16) for i in (1, 3, 5)) for k, v in COLORS.items()}
TOL = 0.01


def png_rgb(path, last):
    """(width, height, rows of RGB triples) of an 8-bit RGB or RGBA PNG,
    its rows up to @last decoded (each row's filter needs the one above)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, "PNG kind %d/%d" % (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(min(h, last + 1)):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def state_of(px):
    """The state whose colour this pixel is (within 6 a channel), or None."""
    for k, c in RGB.items():
        if all(abs(px[i] - c[i]) <= 6 for i in range(3)):
            return k
    return None


def count(rows, x0, x1, y0, y1):
    n = {}
    for y in range(y0, y1):
        for x in range(x0, x1):
            s = state_of(rows[y][x])
            if s:
                n[s] = n.get(s, 0) + 1
    return n


def device_truth(report, key):
    """A device's seconds by state, from the JSON report."""
    for d in report["gpu"].get("devices", []):
        if d.get("device") == key:
            t = {"busy": d["busy_s"], "unresolved": d["unresolved_s"],
                 "peer_wait": d.get("peer_wait_s", 0.0)}
            for c in d.get("causes", []):
                t[c["cause"]] = t.get(c["cause"], 0.0) + c["seconds"]
            # idle time the report gives no cause, if any
            t["idle"] = max(0.0, d["idle_s"] - sum(c["seconds"] for c in d.get("causes", [])))
            return t
    return None


def synth_truth():
    """tests/html/synth.c's round of 20 ms: busy 4 ms of which 1 waits for
    peers, 1 ms of each cause's idle time, the rest unresolved."""
    t = {k: 1.0 for k in COLORS if k not in ("busy", "unresolved", "peer_wait", "idle")}
    t.update({"busy": 3.0, "peer_wait": 1.0, "unresolved": 20.0 - 4.0 - len(t)})
    return t


def compare(name, measured, truth):
    tot_m, tot_t = sum(measured.values()) or 1, sum(truth.values()) or 1
    worst, where = 0.0, ""
    for k in set(measured) | set(truth):
        err = abs(measured.get(k, 0) / tot_m - truth.get(k, 0.0) / tot_t)
        if err > worst:
            worst, where = err, k
    print("# %s: largest share error %.4f (%s)" % (name, worst, where or "-"))
    check(worst <= TOL, "%s: coloured shares match the seconds to 1%%" % name,
          "%s off by %.4f: measured %s, want %s" % (where, worst, measured, truth))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("png")
    ap.add_argument("dom")
    ap.add_argument("log")
    ap.add_argument("--report")
    ap.add_argument("--synth", action="store_true")
    ap.add_argument("--name", default="page")
    a = ap.parse_args()
    name = a.name

    page = open(a.page, encoding="utf-8").read()
    shell = re.sub(r'(<script type="application/json" id="ig-data">).*?(</script>)', r"\1\2", page, flags=re.S)
    refs = re.findall(r"https?:|<link|\bsrc\s*=|@import|url\(", shell)
    check(not refs, "%s: no external reference (script, style, image, link)" % name, "found %s" % refs)
    check("default-src 'none'" in shell, "%s: its policy forbids any request" % name)

    console = [l for l in open(a.log, errors="replace") if ":CONSOLE" in l]
    check(not console, "%s: nothing on the console" % name, "".join(console[:5]))
    m = re.search(r'<pre id="ig-check"[^>]*>(.*?)</pre>', open(a.dom, errors="replace").read(), re.S)
    self_check = json.loads(html.unescape(m.group(1))) if m and m.group(1).strip() else {}
    check(self_check.get("drawn") is True, "%s: its script ran to the end" % name)
    check(self_check.get("errors") == [], "%s: no script error" % name, str(self_check.get("errors")))

    strips = self_check.get("strips", [])
    f = self_check.get("flame")
    last = max([s["rect"]["y"] + s["rect"]["h"] for s in strips] + [f["rect"]["y"] + 2 if f else 0])
    w, h, rows = png_rgb(a.png, int(last) + 1)
    report = json.load(open(a.report)) if a.report else None
    check(len(strips) > 0, "%s: a strip per GPU drawn" % name)
    errs = []
    for s in strips:
        r = s["rect"]
        x0, y0 = int(round(r["x"])), int(round(r["y"]))
        x1, y1 = x0 + int(round(r["w"])), y0 + int(round(r["h"]))
        if y1 > h or x1 > w:
            check(False, "%s: GPU %s's strip is on the screenshot" % (name, s["key"]), "%s beyond %dx%d" % (r, w, h))
            continue
        truth = synth_truth() if a.synth else device_truth(report, s["key"])
        if truth is None:
            check(False, "%s: GPU %s is in the report" % (name, s["key"]))
            continue
        errs.append(compare("%s: GPU %s's strip" % (name, s["key"]), count(rows, x0, x1, y0, y1), truth))
    if report is None:
        return
    causes = {c["cause"]: c["seconds"] for c in report.get("causes", [])}
    if not causes:
        check(f is None, "%s: no idle time, no flame graph" % name)
        return
    if not check(f is not None, "%s: a flame graph drawn" % name):
        return
    r = f["rect"]
    x0, y = int(round(r["x"])), int(round(r["y"])) + 1	# the roots' row, above their names
    roots = count(rows, x0, x0 + int(round(r["w"])), y, y + 1)
    compare("%s: the flame graph's roots" % name, roots, causes)
    width = sum(roots.values())
    check(abs(width - r["w"]) <= len(causes) + 1, "%s: the roots span the graph's width" % name,
          "%d of %s px" % (width, r["w"]))
    for c, s in causes.items():
        want = s / sum(causes.values()) * r["w"]
        if want >= 3:
            check(abs(roots.get(c, 0) - want) <= max(2, TOL * r["w"]),
                  "%s: %s's root is %.0f px wide, for %.3f s" % (name, c, want, s),
                  "%d px" % roots.get(c, 0))


if __name__ == "__main__":
    main()

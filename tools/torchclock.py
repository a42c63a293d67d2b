#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A torch.profiler trace's clock onto CLOCK_MONOTONIC, for
tools/torchcheck.py: by the marker its train step writes, corrected by
the submissions the profile and an idlegap recording both saw; and the
inputs' one-line errors."""
import bisect
import json

MARK = "idlegap_clock_mark"


class Bad(Exception):
    """An input that cannot be read or used: one line on stderr."""


def load(path, what):
    try:
        with open(path) as f:
            j = json.load(f)
    except OSError as e:
        raise Bad("%s: %s" % (path, e.strerror))
    except ValueError as e:
        raise Bad("%s: not JSON (%s)" % (path, e))
    if not isinstance(j, dict):
        raise Bad("%s: not %s" % (path, what))
    return j


def mark_offset(tr):
    """The profile's clock onto CLOCK_MONOTONIC by its marker (ns)."""
    mark = [e for e in tr["traceEvents"] if e.get("name") == MARK and e.get("ph") == "X"]
    if not mark or "idlegap_mark_monotonic_ns" not in tr:
        raise Bad("no clock marker in the profile")
    return tr["idlegap_mark_monotonic_ns"] - int(float(mark[0]["ts"]) * 1000)


def launch_offset(tr, recording, idlegap):
    """A correction to the marker's offset (ns), from the submissions both
    saw: the profile's launch and copy calls on the CPU against the entry
    times of the submissions in the recording's launch records.  The
    marker is read by Python, so a thread waiting for the GIL (the gil
    job) can put it milliseconds off; the calls are the same events on
    both sides.  None when too few match."""
    import subprocess
    try:
        r = subprocess.run([idlegap, "report", "--dump", recording], capture_output=True,
                           text=True)
    except OSError as e:
        raise Bad("%s: %s" % (idlegap, e.strerror))
    if r.returncode:
        why = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        raise Bad("%s report --dump %s: %s" % (idlegap, recording, why))
    dump = r.stdout
    ours = []
    for line in dump.splitlines():
        f = line.split()
        if len(f) > 2 and f[1] == "launches":
            ours += [int(x.split(":")[0]) for x in f[2:] if x.count(":") == 3]
    ours.sort()
    off = mark_offset(tr)
    theirs = sorted(int(float(e["ts"]) * 1000) + off for e in tr["traceEvents"]
                    if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
                    and ("Launch" in e.get("name", "") or "Memcpy" in e.get("name", "")
                         or "Memset" in e.get("name", "")))
    if len(ours) < 20 or len(theirs) < 20:
        return None
    # the most common difference to a submission within 100 ms, in 20 us bins
    votes = {}
    for t in theirs[:: max(1, len(theirs) // 400)]:
        i = bisect.bisect_left(ours, t - 100000000)
        while i < len(ours) and ours[i] <= t + 100000000:
            b = (ours[i] - t) // 20000
            votes[b] = votes.get(b, 0) + 1
            i += 1
    if not votes:
        return None  # no submission of one within 100 ms of the other's
    coarse = max(votes, key=votes.get) * 20000 + 10000
    # then the median distance to the nearest submission around it
    d = []
    for t in theirs:
        i = bisect.bisect_left(ours, t + coarse - 50000)
        if i < len(ours) and abs(ours[i] - (t + coarse)) <= 50000:
            d.append(ours[i] - t)
    if len(d) < 20:
        return None
    d.sort()
    return d[len(d) // 2]


def clock_fix(prof, a):
    """The correction to the marker's offset (ns) by the launches, with
    --recording; None without, or where too few matched."""
    return launch_offset(prof, a.recording, a.idlegap) if a.recording else None

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Rows 7 and 8 of the bench (tools/bench.py): the accuracy tables
(tools/accuracy.py) and the cost of writing a Perfetto trace.
"""
import json
import os

import accuracy
from common import (GENREC, IG, SIMENV, TRAINSIM, best_time, out, row, rows,
                    scratch, traced)

# ---- 7. accuracy ---------------------------------------------------------------------

def accuracy_tables(quick):
    scen = ["healthy", "storage", "pagefault", "cpu", "lock", "network",
            "launch", "sync_copy", "gil", "eager", "gpubound", "gil_eager"]
    res = []
    # alone, then beside an untraced neighbour job (a shared host)
    accuracy.prepare_neighbour()
    for nb in (False, True):
        secs = (4 if nb else 6) if quick else None
        for s, extra in [(s, []) for s in scen] + [("healthy", ["--no-sync"])]:
            try:
                res.append(accuracy.run(s, extra, secs, neighbour=nb))
            except (RuntimeError, OSError, ValueError) as e:
                # one scenario that fails is a MISS, not the end of the bench
                row("7", "accuracy %s%s" % (" ".join([s] + extra),
                                            " +neighbour" if nb else ""),
                    "failed", "runs", False, str(e)[-300:])
    print()
    print("7   GPU idle gaps against the simulator's trace (precision target"
          " >= 0.99, recall >= 0.90)")
    print("    and attribution: the scenario's cause against idlegap's first;"
          " +nb: beside an untraced neighbour")
    print("    unresolved time called host-bound (hostb) and GPU-bound (gpub)"
          " against the trace")
    print("    (targets: launch, eager, gil_eager hostb >= 0.8; gpubound"
          " gpub >= 0.8)")
    accuracy.table(res)
    for r in res:
        r["row"] = "7"
    rows.extend(dict(row="7", name="accuracy " + r["scenario"],
                     value=r, target="", result="", note="") for r in res)


# ---- 8. Perfetto trace writing -----------------------------------------------


def trace_writing(quick):
    """report --perfetto on a synthetic recording (records/s, bytes per
    record) and on a trainsim storage run's recording (bytes per gap)."""
    tmp = scratch()
    rec, pf = os.path.join(tmp, "big.igrec"), os.path.join(tmp, "t.pftrace")
    nrec = int(out([GENREC, rec, str(2000000 if quick else 5000000)]))
    base, base_cpu = best_time(["taskset", "-c", "0", IG, "report", "-q", rec])
    dt, cpu = best_time(["taskset", "-c", "0", IG, "report", "-q", "--perfetto", pf, rec])
    size, rsize = os.path.getsize(pf), os.path.getsize(rec)
    rate = nrec / cpu
    row("8", "perfetto: records/s writing the trace (CPU time)",
        "%.2fM" % (rate / 1e6), ">= 1M",
        rate >= 1e6, "%d records in %.2f s wall (%.2fM/s), CPU %.2f s (report"
        " alone %.2f s, CPU %.2f s)" % (nrec, dt, nrec / dt / 1e6, cpu, base,
                                        base_cpu))
    # a slice costs about 70 bytes (docs/design.md §7.8); the synthetic
    # job makes about two per record: the trace should stay smaller than
    # the recording it comes from
    row("8", "perfetto: bytes per record (synthetic)", "%.1f" % (size / nrec),
        "<= %.0f" % (rsize / nrec), size <= rsize,
        "%d bytes; the recording %.1f per record" % (size, rsize / nrec))
    os.unlink(rec)
    srec, rep = os.path.join(tmp, "s.igrec"), os.path.join(tmp, "s.json")
    out(traced([TRAINSIM, "-s", "storage", "-q", "-t", "4" if quick else "10"],
               "--no-nvml", "-o", srec), env=SIMENV)
    out([IG, "report", "-q", "--json", rep, "--perfetto", pf, srec])
    with open(rep) as f:
        j = json.load(f)
    gaps, n = j["gpu"]["gaps"], j["events"]["total"]
    size = os.path.getsize(pf)
    row("8", "perfetto: bytes per gap (trainsim storage)", "%.0f" % (size / max(gaps, 1)),
        "<= 8192", gaps > 0 and size / gaps <= 8192,
        "%d bytes, %d gaps%s" % (size, gaps, ", %.1f bytes per record" % (size / n) if n else ""))

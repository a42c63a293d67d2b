#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""idlegap's NCCL probes against the calls torch.distributed makes, on a
real GPU (docs/design.md §4.9).

USAGE
    ncclcheck.py run [--steps N] [--port P] > CALLS.txt
        torch.distributed with the NCCL backend at world size 1 (NCCL
        refuses two ranks on one GPU): MASTER_ADDR=127.0.0.1, MASTER_PORT
        (P, default 29533), RANK=0, WORLD_SIZE=1, unless already set.
        N rounds (default 3) of all_reduce, broadcast and all_gather on
        tensors of known sizes and types; every call is printed as
            call op=OP count=C bytes=B dtype=T
        in the order it was made.  Run it under idlegap:
            sudo idlegap run -o r.igrec --json r.json -- \\
                python3 tools/ncclcheck.py run > calls.txt
    ncclcheck.py compare CALLS.txt DUMP.txt|RECORDING.igrec [--json R.json]
                         [--idlegap PATH]
        Checks what the probes recorded (the `idlegap report --dump` text,
        made from the recording when one is given) against CALLS.txt:
        libnccl was probed (not linked statically); every call has its
        record, in order, with the same op, count and bytes; the
        communicator's sequence numbers run 1, 2, 3... without a hole;
        with --json, the report matched them and, at world size 1, no rank
        waited for another.  Prints each check and PASS or FAIL; exits 1
        on FAIL.
"""

import argparse
import json
import os
import subprocess
import sys

# torch dtype -> (nccl name, bytes), as ProcessGroupNCCL maps them
DTYPES = [("float32", 4), ("float16", 2), ("bfloat16", 2), ("int64", 8),
          ("uint8", 1)]


def run(a):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(a.port))
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    import torch
    import torch.distributed as dist

    if not torch.cuda.is_available():
        sys.exit("ncclcheck: no CUDA device")
    if not dist.is_nccl_available():
        sys.exit("ncclcheck: this torch has no NCCL backend")
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", rank=int(os.environ["RANK"]),
                            world_size=int(os.environ["WORLD_SIZE"]))
    world = dist.get_world_size()

    def said(op, t, count=None):
        n = t.numel() if count is None else count
        print("call op=%s count=%d bytes=%d dtype=%s"
              % (op, n, n * t.element_size(), str(t.dtype).split(".")[-1]),
              flush=True)

    for step in range(a.steps):
        for i, (name, _) in enumerate(DTYPES):
            t = torch.ones(1000 + 4096 * i + step, dtype=getattr(torch, name),
                           device=dev)
            dist.all_reduce(t)          # ncclAllReduce, count = numel
            said("all_reduce", t)
        b = torch.arange(333 + step, dtype=torch.int64, device=dev)
        dist.broadcast(b, src=0)        # ncclBcast / ncclBroadcast
        said("broadcast", b)
        x = torch.ones(257 + step, dtype=torch.float32, device=dev)
        out = torch.empty(world * x.numel(), dtype=x.dtype, device=dev)
        dist.all_gather_into_tensor(out, x)   # ncclAllGather, sendcount
        said("all_gather", x)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    return 0


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


def compare(a):
    calls = [fields(l) for l in open(a.calls) if l.startswith("call ")]
    if a.dump.endswith(".igrec"):
        ig = a.idlegap or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                       "..", "build", "idlegap")
        text = subprocess.run([ig, "report", "--dump", a.dump], check=True,
                              capture_output=True, text=True).stdout.splitlines()
    else:
        text = open(a.dump).read().splitlines()
    ok = True

    def check(cond, what):
        nonlocal ok
        print("%s %s" % ("ok  " if cond else "FAIL", what))
        ok &= bool(cond)

    libs = [fields(l) for l in text if " libnccl " in l]
    check(calls, "%d calls made by the program" % len(calls))
    check(any(l.get("static") == "0" and int(l.get("attached", 0)) > 0 for l in libs),
          "libnccl probed (%s)" % ", ".join("%s: %s of %s attached%s" % (
              l.get("path"), l.get("attached"), l.get("symbols"),
              ", linked statically: not probed" if l.get("static") == "1" else "")
              for l in libs) or "no libnccl record")
    recs = [fields(l) for l in text if " nccl " in l and "kind=coll" in l]
    by_comm = {}
    for r in recs:
        by_comm.setdefault(r["id"], []).append(r)
    # the program's communicator: the one carrying most of its calls
    best, best_n, best_match = None, -1, []
    for cid, rs in by_comm.items():
        j, match = 0, []
        for r in rs:
            if j < len(calls) and (r["op"], r["count"], r["bytes"]) == \
                    (calls[j]["op"], calls[j]["count"], calls[j]["bytes"]):
                match.append(r)
                j += 1
        if j > best_n:
            best, best_n, best_match = cid, j, match
    check(best_n == len(calls), "every call recorded in order with its op, count "
          "and bytes (%d of %d, communicator %s)" % (max(best_n, 0), len(calls), best))
    if best is not None:
        seqs = [int(r["seq"]) for r in by_comm[best]]
        check(seqs == list(range(1, len(seqs) + 1)),
              "sequence numbers 1..%d without a hole" % len(seqs))
        # torch.distributed makes calls of its own on the same
        # communicator (a barrier's all-reduce, the object collectives'
        # size exchange): the program's calls keep their order among them
        ms = [int(r["seq"]) for r in best_match]
        mine = set(ms)
        others = ["%s seq %s" % (r["op"], r["seq"]) for r in by_comm[best]
                  if int(r["seq"]) not in mine]
        check(bool(ms) and all(x < y for x, y in zip(ms, ms[1:])),
              "the program's calls in increasing sequence (seq %s..%s; %d made by "
              "torch itself: %s)" % (ms[0] if ms else "-", ms[-1] if ms else "-",
                                     len(others), ", ".join(others) or "none"))
        check(all(r["rank"] == "0" and r["nranks"] == "1" for r in by_comm[best]),
              "rank 0 of a communicator of 1")
    if a.json:
        j = json.load(open(a.json))
        c = j.get("collectives", {})
        check(c.get("matched", 0) >= len(calls),
              "report: %s collectives matched" % c.get("matched"))
        check(j.get("stragglers") == [], "report: no straggler at world size 1")
        check(j["gpu"].get("peer_wait_s", -1) == 0,
              "report: no peer wait at world size 1")
        check(any(d.get("rank") == 0 for d in j["gpu"].get("devices", [])),
              "report: the GPU is rank 0's")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--steps", type=int, default=3)
    r.add_argument("--port", type=int, default=29533)
    c = sub.add_parser("compare")
    c.add_argument("calls")
    c.add_argument("dump")
    c.add_argument("--json")
    c.add_argument("--idlegap")
    a = p.parse_args()
    return run(a) if a.cmd == "run" else compare(a)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench: idlegap's cost and accuracy, measured side by side in one run.

Absolute times on shared machines are noise; every row compares runs made
back to back here (interleaved, median of several rounds) and prints the
ratio, its target and PASS/MISS.

USAGE
    tools/bench.py [--quick] [--rows 1,2,...] [--json FILE]
    tools/bench.py --ab OTHER_IDLEGAP [--ab-rounds N] [--quick] [--rows 1,3]
        --quick   shorter runs, under 6 minutes in all: fewer probe hits and
                  syscalls, a half or a quarter of the training steps, the
                  memory row traces 30 s (not 300 s), accuracy runs 4 s;
                  also BENCH_QUICK=1
        --ab      this build ("after") against OTHER_IDLEGAP, an idlegap
                  built from another commit ("before"), for the launch
                  probe alone: row 1 (per hit, over an empty uprobe on
                  cuLaunchKernel) and row 3 (the launch job's added time,
                  over an empty uprobe on the same job).  Each round runs
                  the untraced job, the empty uprobe, then both builds, in
                  turn first (AB, BA, ...); ratios are taken within a round
                  and the rows print, per build, the median over the rounds,
                  their quartiles and range, and after/before (also over
                  the rounds each went first: the order's own effect).
                  Only rows 1 and 3; the other rows are not run.
        --ab-rounds  rounds of --ab, an even number: each build goes first
                  in half of them (default 10)

Interrupted (SIGINT, SIGTERM, SIGHUP), it stops every process it started,
and their children, and exits 128 + the signal's number: a traced workload
left running would skew whatever runs next.

PARTS
    tools/bench/ holds the rows, a file per group: cost.py (rows 1, 2, 3,
    11), engine.py (4, 4s, 5, 6), outputs.py (7, 8), agent.py (9),
    stacks.py (10), ab.py (--ab), and what they share, common.py.  This
    file runs the rows asked for.
"""

import argparse
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(TOOLS, "bench"), TOOLS]
from ab import ab_main  # noqa: E402
from agent import (agent_cost, agent_duty, agent_idle_cpu,  # noqa: E402
                   agent_latency, agent_lifecycles)
from common import finish, guard_children, guarded, row  # noqa: E402
from cost import end_to_end, probe_cost, ranks_cost, syscall_cost  # noqa: E402
from engine import (attach_latency, live_throughput, memory,  # noqa: E402
                    replay_throughput, stack_cost)
from outputs import accuracy_tables, trace_writing  # noqa: E402
from stacks import stacks_cost  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    default=os.environ.get("BENCH_QUICK", "") not in ("", "0"))
    ap.add_argument("--rows")
    ap.add_argument("--json")
    ap.add_argument("--ab", metavar="OTHER_IDLEGAP")
    ap.add_argument("--ab-rounds", type=int, default=10)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("make bench: tracing needs root: sudo make bench", file=sys.stderr)
        return 1
    guard_children()
    if a.ab:
        return ab_main(a, set((a.rows or "1,3").split(",")))
    want = set((a.rows or "1,2,3,4,5,6,7,8,9,10,11").split(","))
    print("%-3s %-44s %14s %12s  %s" % ("row", "what", "measured", "target",
                                        "result"))
    t0 = time.monotonic()
    costs = guarded("1", probe_cost, a.quick) \
        if "1" in want or "3" in want else None
    if "2" in want:
        guarded("2", syscall_cost, a.quick)
    if "3" in want:
        if costs:
            guarded("3", end_to_end, a.quick, costs)
        else:
            row("3", "end to end", "MISS", "", False,
                "no probe floor: row 1 did not measure")
    if "4" in want:
        guarded("4", replay_throughput, a.quick)
        guarded("4", live_throughput, a.quick)
    if "4" in want or "4s" in want:
        guarded("4s", stack_cost, a.quick)
    if "5" in want:
        guarded("5", memory, a.quick)
    if "6" in want:
        guarded("6", attach_latency, a.quick)
    if "7" in want:
        guarded("7", accuracy_tables, a.quick)
    if "8" in want:
        guarded("8", trace_writing, a.quick)
    if "9" in want:
        for f in (agent_cost, agent_duty, agent_idle_cpu, agent_lifecycles,
                  agent_latency):
            guarded("9", f, a.quick)
    if "10" in want:
        guarded("10", stacks_cost, a.quick)
    if "11" in want:
        guarded("11", ranks_cost, a.quick)
    return finish("bench", t0, a.json)


if __name__ == "__main__":
    sys.exit(main())

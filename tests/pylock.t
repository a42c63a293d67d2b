#!/bin/sh
# A free-threaded CPython has no GIL: tools/trainsim.py's objlock scenario,
# whose feeder appends to a list that another thread (sort_hog) keeps
# sorting, waits there for the list's own lock.  On the free-threaded
# interpreter built into build/freethreaded (IG_PY314T names another) that
# wait is lock, held by sort_hog, with no gil at all; on Debian's 3.11 the
# same job waits for the GIL, and nothing is lock.  Which cause leads is
# judged against the kernel's accounting of the feeder (the oracle of
# tools/accuracy.py): on a loaded host the feeder's spin for the lock
# (sched_yield) is run delay to the kernel, lock to idlegap.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$IG" ] || skip_all "build first: make all"
export LD_LIBRARY_PATH="$IG_TOP/build/simgpu"
PYT=${IG_PY314T:-$IG_TOP/build/freethreaded/py314t/bin/python3.14t}

# native stacks off: the free-threaded build carries its full debug info,
# and naming its frames from it holds the capture loop up for seconds, its
# libcuda probed that much later: most of a 4 s job would go unseen
export IDLEGAP_NO_USTACKS=1

traced() {	# name python
	"$IG" run -q --json "$TMP/$1.json" -- "$2" "$IG_TOP/tools/trainsim.py" \
		-s objlock -t 4 -q --truth "$TMP/$1.truth" 2> "$TMP/$1.err"
	is "$?" 0 "$1: traced"
	sed 's/^/# /' "$TMP/$1.err"
}

if [ -x "$PYT" ]; then
	traced ft "$PYT"
else
	skip "free-threaded" "no $PYT (make free-threaded)"
fi
if [ -x /usr/bin/python3.11 ]; then
	traced gil /usr/bin/python3.11
else
	skip "GIL build" "no /usr/bin/python3.11"
fi

pychecks "$TMP" "$IG_TOP/tools" <<'PY'
import json, os, sys
from tap import check

tmp = sys.argv[1]
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
import accuracy  # noqa: E402

def load(name):
    try:
        return (json.load(open(os.path.join(tmp, name + ".json"))),
                json.load(open(os.path.join(tmp, name + ".truth"))))
    except (OSError, ValueError):
        return None, None

def causes(j):
    return {c["cause"]: c["seconds"] for c in j["causes"]}

def shown(c):
    return ", ".join("%s %.3f s" % kv for kv in
                     sorted(c.items(), key=lambda kv: -kv[1]))

def leads(name, c, t, want):
    """WANT leads, as far as the kernel's accounting of the feeder agrees
    (tools/accuracy.py): where it waited for a CPU more, or the oracle
    cannot decide, WANT or cpu_starvation leads."""
    o = accuracy.oracle(want, accuracy.feeding_figures(t))
    lead = max(c, key=c.get) if c else None
    if o["verdict"] in ("design", None):
        check(lead == want, "%s: %s is the largest cause [%s]" % (name, want, o["text"]),
              "the largest is %s" % lead)
    else:
        check(lead in (want, "cpu_starvation"),
              "%s: %s or cpu_starvation is the largest cause, the feeder having waited "
              "for a CPU as much [%s]" % (name, want, o["text"]),
              "the largest is %s" % lead)

j, t = load("ft")
if j:
    c = causes(j)
    print("# free-threaded: " + shown(c))
    leads("free-threaded", c, t, "lock")
    check("gil" not in c, "free-threaded: no gil",
          "gil %.3f s" % c.get("gil", 0))
    lock = [x for x in j["causes"] if x["cause"] == "lock"]
    details = lock[0]["details"] if lock else []
    addrs = [d for d in details if d.get("kind") == "lock"]
    check(bool(addrs) and addrs[0]["seconds"] > 0.5 * c.get("lock", 0),
          "free-threaded: one lock (the list's) has most of the lock time",
          "locks %r" % [(d["addr"], d["seconds"]) for d in addrs[:3]])
    # the feeder parks only when its spin did not see the lock free
    holder = [r["tid"] for r in t["accounting"]["threads"]
              if r.get("role") == "holder"]
    wakers = sorted(((d["seconds"], d["tid"]) for d in details
                     if d.get("kind") == "waker"), reverse=True)
    if wakers:
        check(wakers[0][1] in holder,
              "free-threaded: the lock's holder, the thread that woke the "
              "parked feeder, is sort_hog",
              "wakers %r, sort_hog %r" % (wakers[:3], holder))
    else:
        print("# free-threaded: the feeder never parked (it spun until the "
              "list was free): no holder to check")

j, t = load("gil")
if j:
    c = causes(j)
    print("# GIL build: " + shown(c))
    # (a mutex of the driver or the C library may be waited for now and
    # then: a few ms)
    check(c.get("lock", 0) <= 0.01 + 0.05 * sum(c.values()),
          "GIL build: next to no lock (its critical sections are no-ops, "
          "not probed)", "lock %.3f s" % c.get("lock", 0))
    # how long the feeder waits for the GIL depends on where the sort is
    # when it asks (the key's Python work gives the GIL up, the sort's
    # comparisons do not): judged where the GPU waited a while
    if sum(c.values()) >= 0.2:
        leads("GIL build", c, t, "gil")
    else:
        print("# GIL build: the GPU waited %.3f s in all: too little to "
              "say which cause leads" % sum(c.values()))
PY
done_testing

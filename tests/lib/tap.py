"""TAP checks for the Python parts of the shell tests.

A test script runs its Python checks through lib.sh's `pychecks`, which
tells this module how many tests the shell has printed so far; check()
numbers on from there, and the shell counts what was printed.
"""
import os
import sys

_n = int(os.environ.get("IG_TAP_FIRST", "0"))


def check(ok, name, why="", todo=""):
    """One test: "ok N - name", or "not ok N - name" and why.  With todo,
    a known defect named by it: TAP's "# TODO", reported, not failing."""
    global _n
    _n += 1
    mark = " # TODO " + todo if todo else ""
    print(("ok %d - %s%s" if ok else "not ok %d - %s%s") % (_n, name, mark), flush=True)
    if not ok and why:	# on stderr, as prove --failures shows it (tests/run.sh)
        print("#   %s: %s" % (name, why), file=sys.stderr, flush=True)
    return ok


def skip(name, why):
    """One test not run, and why: "ok N - name # SKIP why", and the
    reason on stderr, as lib.sh's skip says it."""
    global _n
    _n += 1
    print("ok %d - %s # SKIP %s" % (_n, name, why), flush=True)
    print("SKIP %s: %s" % (name, why), file=sys.stderr, flush=True)

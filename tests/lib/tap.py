"""TAP checks for the Python parts of the shell tests.

A test script runs its Python checks through lib.sh's `pychecks`, which
tells this module how many tests the shell has printed so far; check()
numbers on from there, and the shell counts what was printed.
"""
import os

_n = int(os.environ.get("IG_TAP_FIRST", "0"))


def check(ok, name, why=""):
    """One test: "ok N - name", or "not ok N - name" and why."""
    global _n
    _n += 1
    print(("ok %d - %s" if ok else "not ok %d - %s") % (_n, name))
    if not ok and why:
        print("#   " + why)
    return ok

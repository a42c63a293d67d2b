#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Inside each folder: the files call one another one way, and none is long.

Checks TOP (default: .), a built checkout:

  - Calls inside a folder of user/ (each sub-folder a folder of its own)
    or of simgpu/: no circle among its files.  The calls between the
    folder's objects are tools/callgraph.sh's (build/FOLDER/FILE.o, from
    their symbols); a header's static inline functions count as the
    header's own calls, both ways: the header calls the file that defines
    a function its inline bodies call, and a file calls the header whose
    inline function it calls.  A header and the .c file of its name
    (htab.h, htab.c) are one node: the module and its interface.
  - Imports inside tools/: no circle among its Python modules (an import
    inside a function counts, as it runs all the same).
  - No source file in user/ or tools/ over MAX lines (--max-lines, 600).

Prints one "FOLDER CALLER CALLEE" line per edge inside a folder (a
header by its file name, a .c file by its name without .c, a module by
its file name) and fails (exit 1, one line per problem on stderr, the
circle's files in the order they call one another) when it finds a
circle or a long file.  Calls through function pointers are not edges:
a callback handed down is how a lower file reports up without a circle.

  tools/foldergraph.py [--max-lines N] [TOP]
"""
import argparse
import os
import re
import subprocess
import sys

ME = os.path.dirname(os.path.abspath(__file__))
CG = os.path.join(ME, "callgraph.sh")
C_FOLDERS = ("user", "simgpu")
LONG_FOLDERS = ("user", "tools")
SOURCES = (".c", ".h", ".def", ".py", ".sh")

problems = []


def strip_c(text):
    """@text without comments, strings and character constants."""
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  " ", text, flags=re.S)


CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
INLINE = re.compile(r"\bstatic\s+(?:__always_inline\s+|inline\s+)+[^;{}()]*?"
                    r"\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{")


def inline_bodies(text):
    """{name: body} of the static inline functions defined in C @text."""
    out = {}
    for m in INLINE.finditer(text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out[m.group(1)] = text[m.end():i]
    return out


def defined(objs):
    """{symbol: node} of the global symbols the objects define."""
    out = {}
    for o in objs:
        node = os.path.basename(o)[:-2]
        r = subprocess.run(["nm", "--defined-only", "-g", o], capture_output=True,
                           text=True, check=False)
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) == 3:
                out[f[2]] = node
    return out


def c_folder(top, rel, graph):
    """The edges among the files of the C folder @rel (relative to @top)."""
    d = os.path.join(top, rel)
    names = sorted(os.listdir(d))
    cs = [n for n in names if n.endswith(".c")]
    hs = [n for n in names if n.endswith(".h")]
    objs, missing = [], []
    for c in cs:
        o = os.path.join(top, "build", rel, c[:-2] + ".o")
        (objs if os.path.exists(o) else missing).append(o)
    if missing:
        problems.append("%s/: not built (make): %s" % (rel, " ".join(
            os.path.relpath(o, top) for o in missing)))
        return
    if len(objs) > 1:
        r = subprocess.run([CG] + objs, capture_output=True, text=True, check=False)
        if r.returncode not in (0, 1):
            problems.append("%s/: %s" % (rel, r.stderr.strip()))
        for line in r.stdout.splitlines():
            a, b = line.split()
            graph.setdefault(a, set()).add(b)
    defs = defined(objs)
    stems = set(c[:-2] for c in cs)

    def node_of(h):
        return h[:-2] if h[:-2] in stems else h

    texts = {n: strip_c(open(os.path.join(d, n), encoding="utf-8",
                             errors="replace").read()) for n in cs + hs}
    inlines = {}	# name -> the header that defines it
    for h in hs:
        for name, body in inline_bodies(texts[h]).items():
            inlines[name] = h
            for callee in CALL.findall(body):
                if callee in defs and defs[callee] != node_of(h):
                    graph.setdefault(node_of(h), set()).add(defs[callee])
    for n in cs + hs:
        me = n[:-2] if n.endswith(".c") else node_of(n)
        for callee in set(CALL.findall(texts[n])):
            h = inlines.get(callee)
            if h and node_of(h) != me:
                graph.setdefault(me, set()).add(node_of(h))


IMPORT = re.compile(r"^\s*(?:import\s+([^#\n]+)|from\s+(\w+)\s+import\b)", re.M)


def py_folder(top, rel, graph):
    """The imports among the Python modules of @rel."""
    d = os.path.join(top, rel)
    mods = set(n[:-3] for n in os.listdir(d) if n.endswith(".py"))
    for m in sorted(mods):
        text = open(os.path.join(d, m + ".py"), encoding="utf-8").read()
        for a, b in IMPORT.findall(text):
            for name in ([b] if b else [x.split()[0] for x in a.split(",") if x.strip()]):
                if name in mods and name != m:
                    graph.setdefault(m + ".py", set()).add(name + ".py")


def sccs(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    nodes = sorted(set(graph) | set(x for v in graph.values() for x in v))

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return sorted(out)


def circle(graph, comp):
    """One circle through the first node of @comp, within @comp."""
    start, inside = comp[0], set(comp)
    prev, todo = {start: None}, [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in inside and w not in prev:
                prev[w] = v
                todo.append(w)
    return comp


def folders(top, root):
    """@root and every folder under it that holds a source file."""
    out = []
    for d, subs, names in os.walk(os.path.join(top, root)):
        subs.sort()
        if any(n.endswith(SOURCES) for n in names):
            out.append(os.path.relpath(d, top))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-lines", type=int, default=600)
    ap.add_argument("top", nargs="?", default=".")
    a = ap.parse_args()
    top = a.top
    for root in C_FOLDERS + ("tools",):
        if not os.path.isdir(os.path.join(top, root)):
            continue
        for rel in folders(top, root):
            graph = {}
            if root == "tools":
                py_folder(top, rel, graph)
            else:
                c_folder(top, rel, graph)
            for x in sorted(graph):
                for y in sorted(graph[x]):
                    print(rel, x, y)
            for comp in sccs(graph):
                problems.append("%s/: files call one another in a circle: %s"
                                % (rel, " -> ".join(circle(graph, comp))))
    for root in LONG_FOLDERS:
        for rel in folders(top, root) if os.path.isdir(os.path.join(top, root)) else ():
            for n in sorted(os.listdir(os.path.join(top, rel))):
                p = os.path.join(top, rel, n)
                if not n.endswith(SOURCES) or not os.path.isfile(p):
                    continue
                with open(p, "rb") as f:
                    lines = f.read().count(b"\n")
                if lines > a.max_lines:
                    problems.append("%s/%s: %d lines, over %d" % (rel, n, lines, a.max_lines))
    for p in problems:
        print("foldergraph: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

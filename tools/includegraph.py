#!/usr/bin/python3
"""The include graph of user/ and bpf/, checked against the layers.

Reads every #include "..." under user/ and bpf/ of TOP (resolved as the
compiler does: beside the file, then through -Iuser; the generated
skeletons build/*.skel.h stand for bpf/), and the table of folders in
docs/design.md §3.1 (a row per folder: | `user/NAME/` | what it holds |
the folders it may include |; a sub-folder has a row of its own,
`user/NAME/SUB/`, and is named NAME/SUB).  Prints one "folder folder"
line per folder that includes another (a sub-folder counts as its
folder there) and one per sub-folder that includes a sibling, and fails
(exit 1, one line per problem on stderr) when:
  - a file includes one that is not in the tree;
  - a file lies in user/ outside a folder, or in a folder the table lacks;
  - the table names a folder that is not in the tree;
  - files include one another in a cycle;
  - folders include one another in a cycle, or sibling sub-folders do;
  - a folder or sub-folder includes one the table does not allow it (a
    folder may include its own sub-folders; a sub-folder names its
    folder, as `NAME`, where it includes the folder's own files);
  - a folder of the engine library (ENGINE_DIRS in the Makefile) includes
    a libbpf header.

  tools/includegraph.py [TOP]          # TOP: the checkout (default: .)
"""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
problems = []

# ---- the table ---------------------------------------------------------------
allowed = {}
in_sec = False
for line in open(os.path.join(top, "docs/design.md"), encoding="utf-8"):
    if re.match(r"#{2,4} ", line):
        in_sec = line.startswith("### 3.1 ")
        continue
    m = re.match(r"\|\s*`(user/[\w/]+/|bpf/)`\s*\|[^|]*\|([^|]*)\|", line)
    if in_sec and m:
        name = m.group(1).rstrip("/")
        name = "bpf" if name == "bpf" else name[len("user/"):]
        allowed[name] = set(re.findall(r"`([\w/]+)`", m.group(2)))
if not allowed:
    problems.append("docs/design.md §3.1: no table of folders")

# ---- the files ---------------------------------------------------------------
files = []
for root in ("user", "bpf"):
    for d, _, names in os.walk(os.path.join(top, root)):
        for n in names:
            if n.endswith((".c", ".h", ".def")):
                files.append(os.path.relpath(os.path.join(d, n), top))
files.sort()

def folder(path):
    """NAME, or NAME/SUB for a file in a sub-folder."""
    parts = path.split("/")
    if parts[0] == "bpf":
        return "bpf"
    return "/".join(parts[1:-1]) if len(parts) > 2 else None

def layer(name):
    """The folder a sub-folder belongs to."""
    return name.split("/")[0]

for f in files:
    d = folder(f)
    if d is None:
        problems.append("%s: in user/ outside a folder" % f)
    elif allowed and d not in allowed:
        problems.append("%s: folder %s is not in the table of docs/design.md §3.1" % (f, d))
present = set(folder(f) for f in files)
for d in sorted(allowed):
    if d not in present:
        problems.append("docs/design.md §3.1: folder %s is not in the tree" % d)

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
EXTERNAL = ("vmlinux.h",)
edges = {f: set() for f in files}
for f in files:
    text = open(os.path.join(top, f), encoding="utf-8", errors="replace").read()
    for name in INC.findall(text):
        beside = os.path.normpath(os.path.join(os.path.dirname(f), name))
        viauser = os.path.normpath(os.path.join("user", name))
        if beside in edges:
            edges[f].add(beside)
        elif f.startswith("user/") and viauser in edges:
            edges[f].add(viauser)
        elif name.endswith(".skel.h"):
            edges[f].add("bpf/idlegap.bpf.c")	# generated from it
        elif name not in EXTERNAL:
            problems.append("%s: includes \"%s\", which is not in the tree" % (f, name))

def cycle(graph):
    """A cycle in graph (node -> set of nodes) as a list, or None."""
    state = {}
    for start in sorted(graph):
        if start in state:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        state[start] = 1
        path = [start]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(graph.get(nxt, ())))))
    return None

c = cycle(edges)
if c:
    problems.append("files include one another in a cycle: " + " -> ".join(c))

fedges = {}	# between folders, a sub-folder counted as its folder
sedges = {}	# between sibling sub-folders
for f, ts in edges.items():
    for t in ts:
        a, b = folder(f), folder(t)
        if not a or not b or a == b:
            continue
        if layer(a) != layer(b):
            fedges.setdefault(layer(a), set()).add(layer(b))
            fedges.setdefault(layer(b), set())
            want = layer(b)
        elif a == layer(a):
            continue	# a folder includes its own sub-folder
        elif b == layer(b):
            want = b	# a sub-folder includes its folder's own files
        else:
            sedges.setdefault(a, set()).add(b)
            sedges.setdefault(b, set())
            want = b
        if allowed and a in allowed and want not in allowed[a]:
            problems.append("%s: includes %s, but folder %s may not include %s"
                            % (f, t, a, want))
c = cycle(fedges)
if c:
    problems.append("folders include one another in a cycle: " + " -> ".join(c))
c = cycle(sedges)
if c:
    problems.append("sub-folders include one another in a cycle: " + " -> ".join(c))

mk = os.path.join(top, "Makefile")
m = re.search(r"^ENGINE_DIRS\s*:=(.*)$", open(mk).read(), re.M) if os.path.exists(mk) else None
for d in (m.group(1).split() if m else []):
    for f in files:
        if folder(f) and layer(folder(f)) == d and re.search(r"^\s*#\s*include\s*<bpf/",
                                        open(os.path.join(top, f)).read(), re.M):
            problems.append("%s: the engine library's folder %s includes a libbpf header"
                            % (f, d))

for g in (fedges, sedges):
    for a in sorted(g):
        for b in sorted(g[a]):
            print(a, b)
for p in problems:
    print("includegraph: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)

#!/bin/sh
# Lays user/ out by layer (docs/design.md §3.1): moves each flat user/*.c,
# *.h into its folder with `git mv`, then rewrites what names the old places:
#   - `#include "x.h"` of a moved header becomes `#include "folder/x.h"`
#     (found through -Iuser, as the engine's "engine/x.h" already are), and
#     a moved file's own `../` includes gain one `../`;
#   - "user/x.c" and "user/x.h" in any tracked text file (docs, tests,
#     tools, comments) become "user/folder/x.c";
#   - objects in the makefiles ($(BUILD)/user/x.o, $(BUILD)/fuzz/x.o, and
#     the names in $(addprefix $(BUILD)/user/,...) lists) gain the folder;
#   - the Makefile takes every user/*/*.c, and the engine library's sources
#     from its folders (ENGINE_DIRS) instead of a list of files.
# It changes nothing else and commits nothing: review `git status`, build,
# then commit.  It refuses (exit 1, changing nothing) on a dirty tree, on a
# flat user/ file the table below does not place (add it to the table), on
# an engine-library source the table puts outside the library's folders,
# and on a tree already laid out.
#
#   tools/relayout.sh            # at the top of a checkout
set -eu
top=$(git rev-parse --show-toplevel)
cd "$top"
exec /usr/bin/python3 - <<'EOF'
import os, re, subprocess, sys

# Folder by folder, lowest layer first.  A folder may include only the
# folders docs/design.md §3.1 lists for it (tests/callgraph.t checks).
TABLE = """
util:   escape.c escape.h outfile.c outfile.h util.h
stream: records.c records.h recording.c recording.h reorder.c reorder.h
        crc32.c crc32.h cuda_api.c cuda_api.h
host:    procfs.c procfs.h elfsym.c elfsym.h identity.c identity.h
        nvml.c nvml.h
stacks: ustacks.c ustacks.h symbolize.c symbolize.h pycode.c pycode.h
        pynames.c folded.c folded.h
engine: engine.h engine_obs.h
probes: tracer.c tracer.h tracer_int.h tracer_probe.c tracer_uprobe.c
        discovery.c discovery.h cuda_attach.c cuda_attach.h pyrt.c pyrt.h
        pyframes.c pyframes.h pylayout.c privs.c privs.h spawn.c spawn.h
        log.c log.h
views:  perfetto.c perfetto.h pbwire.c pbwire.h timeline.h
        timeline_build.c timeline_build.h top_term.c top_term.h
        top_view.c top_view.h metrics.c metrics.h metrics_impl.h
        metrics_text.c httpd.c httpd.h progress.c progress.h
modes:  main.c cli.c cli.h session.c session.h session_int.h session_out.c
        session_view.c agent.c agent.h agent_int.h agent_cli.c
        agent_reports.c agent_win.c top.c top.h check.c check.h dump.c dump.h
"""
# The static library build/libidlegap-engine.a: these folders' sources.
ENGINE_DIRS = ["engine", "stacks", "stream", "host", "util"]

def die(msg):
    print("relayout: " + msg, file=sys.stderr)
    sys.exit(1)

def git(*args):
    return subprocess.run(["git"] + list(args), check=True,
                          capture_output=True, text=True).stdout

where = {}
folder = None
for line in TABLE.strip().splitlines():
    m = re.match(r"(\w+):\s*(.*)", line)
    if m:
        folder, names = m.group(1), m.group(2)
    else:
        names = line
    for n in names.split():
        if n in where:
            die("table: %s placed twice" % n)
        where[n] = folder

if git("status", "--porcelain", "--untracked-files=no").strip():
    die("the tree has uncommitted changes; commit or stash them first")

flat = sorted(f for f in os.listdir("user") if os.path.isfile("user/" + f))
if not flat:
    die("user/ has no flat files: already laid out")
unplaced = [f for f in flat if f not in where]
if unplaced:
    die("files in user/ that the table in tools/relayout.sh does not place "
        "(add each to a folder):\n  " + "\n  ".join("user/" + f for f in unplaced))
for f in sorted(where):
    if f not in flat:
        print("relayout: note: user/%s is in the table but not in the tree" % f)
for f in flat:
    if os.path.exists("user/%s/%s" % (where[f], f)):
        die("user/%s/%s exists already" % (where[f], f))

mk = open("Makefile").read()
USER_SRCS_OLD = "USER_SRCS := $(wildcard user/*.c user/engine/*.c)"
if USER_SRCS_OLD not in mk:
    die("Makefile: no line '%s' to replace" % USER_SRCS_OLD)
m = re.search(r"^ENGINE_SRCS := (?:.*\\\n)*.*\n", mk, re.M)
if not m:
    die("Makefile: no ENGINE_SRCS list to replace")
engine_srcs = m.group(0)
for src in re.findall(r"user/(\w+\.c)", engine_srcs):
    if where.get(src) not in ENGINE_DIRS:
        die("Makefile: the engine library builds user/%s, which the table "
            "puts in %s, outside its folders (%s)"
            % (src, where.get(src), " ".join(ENGINE_DIRS)))
for d in ENGINE_DIRS:
    for f in flat:
        if where[f] == d and re.search(r"#include\s*<bpf/", open("user/" + f).read()):
            die("user/%s includes a libbpf header but goes into the engine "
                "library's folder %s" % (f, d))

# ---- move ------------------------------------------------------------------
for f in flat:
    os.makedirs("user/" + where[f], exist_ok=True)
    git("mv", "user/" + f, "user/%s/%s" % (where[f], f))
moved = set("user/%s/%s" % (where[f], f) for f in flat)

# ---- rewrite -----------------------------------------------------------------
tracked = [p for p in git("ls-files").splitlines()
           if not p.startswith("vmlinux/") and p != "tools/relayout.sh"
           and os.path.isfile(p)]

INC = re.compile(r'^(\s*#\s*include\s+")([^"]+)(")', re.M)

def fix_include(path):
    def one(m):
        name = m.group(2)
        if "/" not in name:
            if name not in where:
                return m.group(0)
            # outside user/, a header beside the file is the one it means
            if not path.startswith("user/") and \
               os.path.exists(os.path.join(os.path.dirname(path), name)):
                return m.group(0)
            return m.group(1) + where[name] + "/" + name + m.group(3)
        if path in moved and name.startswith("../"):
            return m.group(1) + "../" + name + m.group(3)
        return m.group(0)
    return one

FLATNAME = re.compile(r"(?<![\w-])user/([A-Za-z0-9_]+\.[ch])\b(?![\w/])")
OBJ = re.compile(r"((?:\$\(BUILD\)|\bbuild)/(?:user|fuzz)/)([A-Za-z0-9_]+)\.o\b")
ADDPREFIX = re.compile(r"(\$\(addprefix (?:\$\(BUILD\)|build)/(?:user|fuzz)/,)([^)]*)(\))")
STEM = re.compile(r"(?<![\w/])([A-Za-z0-9_]+)\.o\b")

def obj_folder(stem):
    return where.get(stem + ".c")

def fix_obj(m):
    d = obj_folder(m.group(2))
    return m.group(0) if d is None else "%s%s/%s.o" % (m.group(1), d, m.group(2))

def fix_list(m):
    def stem(s):
        d = obj_folder(s.group(1))
        return s.group(0) if d is None else "%s/%s.o" % (d, s.group(1))
    return m.group(1) + STEM.sub(stem, m.group(2)) + m.group(3)

changed = []
for path in tracked:
    try:
        text = open(path, encoding="utf-8").read()
    except (UnicodeDecodeError, OSError):
        continue
    new = text
    if path == "Makefile":
        new = new.replace(USER_SRCS_OLD, "USER_SRCS := $(wildcard user/*/*.c)")
        new = new.replace(engine_srcs,
            "# Its sources are those of its folders (docs/design.md §3.1).\n"
            "ENGINE_DIRS := %s\n"
            "ENGINE_SRCS := $(wildcard $(ENGINE_DIRS:%%=user/%%/*.c))\n"
            % " ".join(ENGINE_DIRS))
    if path.endswith((".c", ".h")):
        new = INC.sub(fix_include(path), new)
    if path == "Makefile" or path.endswith(".mk"):
        new = ADDPREFIX.sub(fix_list, new)
    new = OBJ.sub(fix_obj, new)
    new = FLATNAME.sub(lambda m: "user/%s/%s" % (where[m.group(1)], m.group(1))
                       if m.group(1) in where else m.group(0), new)
    if new != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
        changed.append(path)

# ---- what is left naming an old place is a mistake of this script -----------
left = []
for path in git("ls-files").splitlines():
    if path.startswith("vmlinux/") or path == "tools/relayout.sh" or not os.path.isfile(path):
        continue
    try:
        text = open(path, encoding="utf-8").read()
    except (UnicodeDecodeError, OSError):
        continue
    for m in FLATNAME.finditer(text):
        if m.group(1) in where:
            left.append("%s: user/%s" % (path, m.group(1)))
    for m in OBJ.finditer(text):
        if obj_folder(m.group(2)):
            left.append("%s: %s" % (path, m.group(0)))
    if path.startswith("user/") and path.endswith((".c", ".h")):
        for m in INC.finditer(text):
            if "/" not in m.group(2) and m.group(2) in where:
                left.append("%s: #include \"%s\"" % (path, m.group(2)))
if "user/*.c" in open("Makefile").read():
    left.append("Makefile: user/*.c")
if left:
    die("still naming the old places (undo with `git reset --hard`):\n  "
        + "\n  ".join(left))
if changed:
    git("add", "--", *changed)
print("relayout: moved %d files into %s; rewrote %d files"
      % (len(flat), " ".join(sorted(set(where[f] for f in flat))), len(changed)))
print("relayout: now `make -j2 all test-progs`, the unit tests, and "
      "git commit -m 'layout: user/ by layer'")
EOF

#!/usr/bin/python3
"""Exported names carry their file's or folder's prefix (docs/design.md §3.1).

An exported function (external linkage, defined in user/FOLDER/FILE.c) is
named ig_PREFIX or ig_PREFIX_..., where PREFIX is FILE, one of FILE's
"_"-separated words, FOLDER, or a short form that the table of short
prefixes in docs/design.md §3.1 (| file | short prefix |) gives FILE.

  tools/prefixes.py [--sources] [TOP]
      Prints "user/FOLDER/FILE.c: NAME" for each exported function without
      its prefix, then (on stderr) the prefixes each such file may use;
      exit 1 if any, 0 if none, 2 when the check cannot run.  The names
      come from the objects under TOP/build/user (nm), or with --sources
      from the C sources themselves.  TOP: the checkout (default: this
      script's).

  tools/prefixes.py --suggest [--sources] [TOP]
      The same check, but prints map lines instead: "old new" for each
      name, the new one the file's short form or name put in front (or
      only "ig_" where that is all it lacks), under a "# user/FILE"
      comment; read them, better the names, append them to the map.

  tools/prefixes.py --rename [--dry-run] [--map FILE] [TOP]
      Applies the rename map (default: tools/prefixes.map, one "old new"
      pair a line, "#" comments), whole word, to every text file under
      user/, tests/, tools/, docs/ and bpf/ and to README.md: in C files
      (.c, .h, .def) each use but a type (after "struct", "enum" or
      "union"), a member (after "." or "->") or a file name ("name.c");
      elsewhere (prose, scripts) only a call, "name(".  A pair whose old
      name no longer occurs anywhere was applied already and is skipped, so
      the map can be applied again after a merge brings in new callers of
      old names.  Continuation lines aligned to a renamed call's or
      prototype's "(" are realigned.  Refuses (exit 1, changes nothing)
      when a new name is already defined (a function or a macro) while the
      old one is still defined (a new name only called, as a merge leaves
      it next to an old definition, is renamed on),
      when a new or old name is a static function somewhere, when a new
      name lacks the prefix of the file that defines it, or when the map
      itself is inconsistent.
"""
import os
import re
import subprocess
import sys

WORD = re.compile(r"[A-Za-z_]\w*$")


def die(msg, code=2):
    print("prefixes: " + msg, file=sys.stderr)
    sys.exit(code)


# ---- the design's table of short prefixes --------------------------------------
def short_forms(top):
    """{"folder/file.c": [prefix, ...]} from design §3.1's short-prefix table."""
    path = os.path.join(top, "docs/design.md")
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        die(f"{path}: {e.strerror}")
    m = re.search(r"^### 3\.1 .*?(?=^### )", text, re.M | re.S)
    if not m:
        die(f"{path}: no section 3.1")
    forms = {}
    intable = False
    for line in m.group(0).splitlines():
        if re.match(r"\|\s*file\s*\|\s*short prefix", line):
            intable = True
            continue
        if not intable:
            continue
        if not line.startswith("|"):
            if forms:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or set(cells[0]) <= set("-: "):
            continue
        files = re.findall(r"`([^`]+)`", cells[0])
        prefixes = re.findall(r"`([^`]+)`", cells[1])
        for f in files:
            f = f[len("user/"):] if f.startswith("user/") else f
            forms.setdefault(f, []).extend(prefixes)
    if not forms:
        die(f"{path}: §3.1 has no table of short prefixes (| file | short prefix |)")
    return forms


def allowed(rel, forms):
    """The prefixes of user/REL ("folder/file.c", or "folder/sub/file.c"
    in a sub-folder, whose name is a prefix as its folder's is)."""
    folders, stem = rel[:-2].split("/")[:-1], rel[:-2].split("/")[-1]
    out = [stem] + [w for w in stem.split("_") if w] + folders
    out += forms.get(rel, [])
    return list(dict.fromkeys(out))


def fits(name, prefixes):
    if not name.startswith("ig_"):
        return False
    rest = name[3:]
    return any(rest == p or rest.startswith(p + "_") for p in prefixes)


# ---- the C sources: function definitions ---------------------------------------
def strip_c(text):
    """TEXT with comments, string and char literals and preprocessor lines
    blanked (newlines kept, so offsets and line numbers stay)."""
    out = []
    i, n = 0, len(text)
    bol = True
    while i < n:
        c = text[i]
        if bol and c == "#":
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        bol = c == "\n"
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def definitions(path):
    """[(name, static, line)] for each function defined at the top of PATH."""
    try:
        text = strip_c(open(path, encoding="utf-8", errors="replace").read())
    except OSError:
        return []
    defs = []
    depth = 0
    start = 0  # where the current top-level declaration began
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "{":
            if depth == 0:
                decl = text[start:i]
                if "=" not in decl:
                    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", decl):
                        name = m.group(1)
                        if name.startswith("__") or name in ("if", "while", "for"):
                            continue
                        static = re.search(r"\bstatic\b", decl[:m.start()]) is not None
                        line = text.count("\n", 0, start + m.start()) + 1
                        defs.append((name, static, line))
                        break
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
        i += 1
    return defs


def user_sources(top):
    """The C files of user/'s folders and their sub-folders, as
    "folder/file.c" and "folder/sub/file.c"."""
    out = []
    root = os.path.join(top, "user")
    for d, _, names in sorted(os.walk(root)):
        rel = os.path.relpath(d, root)
        if rel != ".":
            out += [f"{rel}/{f}" for f in sorted(names) if f.endswith(".c")]
    return sorted(out)


# ---- the exported functions -----------------------------------------------------
def exported_from_objects(top):
    """{"folder/file.c": [name, ...]} from the objects' symbols (nm)."""
    srcs = user_sources(top)
    objs, missing = [], []
    for rel in srcs:
        o = os.path.join(top, "build", "user", rel[:-2] + ".o")
        (objs if os.path.isfile(o) else missing).append(o)
    if missing:
        die("not built (make), or use --sources: " + " ".join(missing))
    try:
        out = subprocess.run(["nm", "-A", "--defined-only", "-g"] + objs,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        die(f"nm: {e}")
    names = {rel: [] for rel in srcs}
    base = os.path.join(top, "build", "user") + os.sep
    for line in out.splitlines():
        obj, _, sym = line.rpartition(":")
        f = sym.split()
        if len(f) == 3 and f[1] == "T":
            names[obj[len(base):][:-2] + ".c"].append(f[2])
    return names


def exported_from_sources(top):
    names = {}
    for rel in user_sources(top):
        p = os.path.join(top, "user", rel)
        names[rel] = [d[0] for d in definitions(p) if not d[1]]
    return names


def suggest(name, rel, forms):
    """A new name for NAME in user/REL: ig_ put in front where that is all
    it lacks, else the file's short form, or its name, before it."""
    rest = name[3:] if name.startswith("ig_") else name
    if fits("ig_" + rest, allowed(rel, forms)):
        return "ig_" + rest
    pre = (forms.get(rel) or [rel.rsplit("/", 1)[1][:-2]])[0]
    return f"ig_{pre}_{rest}"


def check(top, use_sources, suggesting=False):
    forms = short_forms(top)
    srcs = set(user_sources(top))
    for f in sorted(forms):
        if f not in srcs:
            print(f"prefixes: docs/design.md §3.1 names user/{f}, which is not in the tree",
                  file=sys.stderr)
            return 1
    names = exported_from_sources(top) if use_sources else exported_from_objects(top)
    bad = {}
    for rel in sorted(names):
        pre = allowed(rel, forms)
        for name in sorted(set(names[rel])):
            if name != "main" and not fits(name, pre):
                if suggesting:
                    if rel not in bad:
                        print(f"# user/{rel}")
                    print(f"{name}\t{suggest(name, rel, forms)}")
                else:
                    print(f"user/{rel}: {name}")
                bad.setdefault(rel, pre)
    if bad:
        n = sum(1 for rel in names for x in set(names[rel])
                if x != "main" and not fits(x, allowed(rel, forms)))
        print(f"prefixes: {n} exported functions lack their prefix; each file may use:",
              file=sys.stderr)
        for rel, pre in bad.items():
            print(f"  user/{rel}: " + ", ".join(f"ig_{p}_" for p in pre), file=sys.stderr)
        print("  add \"old new\" lines to tools/prefixes.map (tools/prefixes.py --suggest"
              " prints some), run tools/prefixes.py --rename, then make", file=sys.stderr)
        return 1
    return 0


# ---- renaming -------------------------------------------------------------------
def read_map(path):
    pairs = []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        die(f"{path}: {e.strerror}", 1)
    olds, news = {}, {}
    for no, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        if len(line) != 2 or not all(WORD.match(w) for w in line):
            die(f"{path}:{no}: want \"old new\", two C names", 1)
        old, new = line
        if old == new:
            die(f"{path}:{no}: {old} renamed to itself", 1)
        if old in olds:
            die(f"{path}:{no}: {old} is renamed already on line {olds[old]}", 1)
        if new in news:
            die(f"{path}:{no}: {new} is the new name on line {news[new]} too", 1)
        olds[old], news[new] = no, no
        pairs.append((old, new))
    for old, new in pairs:
        if new in olds:
            die(f"{path}: {new} is both a new name (line {news[new]}) and an old one"
                f" (line {olds[new]})", 1)
    return pairs


def text_files(top, skip):
    out = []
    for d in ("user", "tests", "tools", "docs", "bpf"):
        for root, dirs, files in os.walk(os.path.join(top, d)):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            for f in sorted(files):
                out.append(os.path.join(root, f))
    out.append(os.path.join(top, "README.md"))
    res = []
    for p in out:
        if os.path.abspath(p) == skip or not os.path.isfile(p) or os.path.islink(p):
            continue
        try:
            data = open(p, "rb").read()
        except OSError:
            continue
        if b"\0" in data:
            continue
        try:
            res.append((p, data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return res


def word_re(names, calls_only=False):
    """The names, whole word, but not a type (after struct/enum/union), a
    member (after . or ->), a path (after /) or a file name (before .c);
    CALLS_ONLY: only right before "(" (prose and scripts name a function
    as name(), and may use the same word for a field or a key)."""
    alt = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return re.compile(r"(?<![\w./])(?<!->)(?<!struct )(?<!enum )(?<!union )(" + alt +
                      r")(?!\w)(?!\.\w)" + (r"(?=\()" if calls_only else ""))


def is_c(path):
    return path.endswith((".c", ".h", ".def"))


def vcol(s):
    """Visual width of S (tabs of 8)."""
    w = 0
    for c in s:
        w = (w // 8 + 1) * 8 if c == "\t" else w + 1
    return w


def indent_to(w):
    return "\t" * (w // 8) + " " * (w % 8)


def apply_line_renames(lines, rx, ren):
    """Renames in LINES (kept ends); realigns continuation lines that sat
    under the "(" after a renamed name."""
    out = []
    fix = None  # (old column, new column, open parens) of a pending alignment
    for line in lines:
        if fix is not None:
            oldc, newc, opens = fix
            m = re.match(r"[ \t]*", line)
            if vcol(m.group(0)) == oldc and line.strip():
                line = indent_to(newc) + line[m.end():]
        new = rx.sub(lambda m: ren[m.group(1)], line)
        if fix is not None:
            opens = fix[2] + new.count("(") - new.count(")")
            fix = (fix[0], fix[1], opens) if opens > 0 else None
        if new != line and fix is None:
            # the first "(" after a renamed name that stays open on this line
            for m in rx.finditer(line):
                after = line[m.end():]
                if not after.startswith("("):
                    continue
                tail = after
                if tail.count("(") <= tail.count(")"):
                    continue
                oldc = vcol(line[:m.end()]) + 1
                newc = vcol(rx.sub(lambda x: ren[x.group(1)], line[:m.end()])) + 1
                if oldc != newc:
                    fix = (oldc, newc, tail.count("(") - tail.count(")"))
                break
        out.append(new)
    return out


def rename(top, mapfile, dry):
    pairs = read_map(mapfile)
    forms = short_forms(top)
    files = text_files(top, os.path.abspath(mapfile))
    defs = {}  # name -> [(file, static, line)]
    for p, _ in files:
        if p.endswith(".c"):
            for name, static, line in definitions(p):
                defs.setdefault(name, []).append((os.path.relpath(p, top), static, line))
    macros = {}  # name -> [(file, line)] of each #define
    for p, text in files:
        if p.endswith((".c", ".h")):
            for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", text, re.M):
                macros.setdefault(m.group(1), []).append(
                    (os.path.relpath(p, top), text.count("\n", 0, m.start()) + 1))
    olds = [o for o, _ in pairs]
    rx_old = {c: word_re(olds, not c) for c in (True, False)}
    used_old = set()
    for p, text in files:
        used_old.update(m.group(1) for m in rx_old[is_c(p)].finditer(text))
    problems = []
    todo = {}
    for old, new in pairs:
        if old not in used_old:
            continue  # applied already
        odefs = [d for d in defs.get(old, []) if d[0].startswith("user/")]
        for name in (old, new):
            for f, static, line in defs.get(name, []):
                if static:
                    problems.append(f"{f}:{line}: {name} is a static function;"
                                    " static functions keep their names")
        exported = [d for d in odefs if not d[1]]
        # new defined too: two functions would become one.  New only used
        # (a merge brought callers of the new name next to the old
        # definition) is a rename half done: it goes on.
        taken = [(f, line) for f, _, line in defs.get(new, [])] + macros.get(new, [])
        if exported and taken:
            problems.append(f"{new} already exists ({taken[0][0]}:{taken[0][1]}) while"
                            f" {old} is still defined ({exported[0][0]}:{exported[0][2]})")
        home = exported or [d for d in defs.get(new, []) if not d[1] and d[0].startswith("user/")]
        for f, _, line in home:
            rel = f[len("user/"):]
            if rel.count("/") >= 1 and not fits(new, allowed(rel, forms)):
                problems.append(f"{f}:{line}: {new} lacks the prefix of {f} (" +
                                ", ".join(f"ig_{p}_" for p in allowed(rel, forms)) + ")")
        todo[old] = new
    if problems:
        for p in problems:
            print("prefixes: " + p, file=sys.stderr)
        print("prefixes: nothing renamed", file=sys.stderr)
        return 1
    absent = len(pairs) - len(todo)
    if not todo:
        print(f"prefixes: no old name of the {len(pairs)} in the map is left; nothing to do")
        return 0
    rxs = {c: word_re(list(todo), not c) for c in (True, False)}
    changed = 0
    for p, text in files:
        rx = rxs[is_c(p)]
        if not rx.search(text):
            continue
        lines = text.splitlines(keepends=True)
        new = "".join(apply_line_renames(lines, rx, todo))
        if new != text:
            changed += 1
            n = len(rx.findall(text))
            print(f"{os.path.relpath(p, top)}: {n} renamed")
            if not dry:
                with open(p, "w", encoding="utf-8") as f:
                    f.write(new)
    verb = "would rename" if dry else "renamed"
    print(f"prefixes: {verb} {len(todo)} names in {changed} files"
          f" ({absent} of the {len(pairs)} in the map not found: renamed already,"
          " or not in this tree)")
    return 0


def main(argv):
    args = argv[1:]
    opts = {"--sources": False, "--rename": False, "--dry-run": False, "--suggest": False}
    mapfile = None
    rest = []
    while args:
        a = args.pop(0)
        if a in opts:
            opts[a] = True
        elif a == "--map" and args:
            mapfile = args.pop(0)
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("-"):
            die(f"unknown option {a} (see --help)")
        else:
            rest.append(a)
    if len(rest) > 1:
        die("at most one TOP")
    top = rest[0] if rest else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    top = os.path.abspath(top)
    if not os.path.isdir(os.path.join(top, "user")):
        die(f"{top}: no user/ folder")
    if opts["--rename"]:
        return rename(top, mapfile or os.path.join(top, "tools", "prefixes.map"), opts["--dry-run"])
    return check(top, opts["--sources"], opts["--suggest"])


if __name__ == "__main__":
    sys.exit(main(sys.argv))

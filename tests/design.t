#!/bin/sh
# The design document is in the repository and the code's citations of it
# hold: every "docs/design.md §N" names a section that docs/design.md has,
# its own cross-references resolve, and no file cites a design file or a
# path outside the repository; every file that §3.1's tables (the folders,
# where it lives) name exists; every cause of §5.5 has its row in "where it
# lives", and the files that row names before any ";" are where the cause
# is decided: each holds a decision for it, and no other file of user/
# does.  No root needed.
. "$(dirname "$0")/lib.sh"

DOC=$IG_TOP/docs/design.md
[ -f "$DOC" ] || { echo "1..1"; echo "not ok 1 - docs/design.md exists"; exit 1; }

# Files a reader of the repository sees: tracked files where this is a git
# checkout, else the tree without build outputs and generated headers.
files=$TMP/files
if git -C "$IG_TOP" ls-files >"$files" 2>/dev/null && [ -s "$files" ]; then
	:
else
	(cd "$IG_TOP" && find . -path ./build -prune -o -path ./.git -prune -o \
		-type f -print | sed 's|^\./||') >"$files"
fi
# generated BTF headers cite nothing; this script names the bad patterns
grep -v -e '^vmlinux/' -e '^tests/design\.t$' "$files" >"$files.1"

# check.py MODE: prints one line per problem, "FILE:LINE: what".
cat >"$TMP/check.py" <<'EOF'
import os, re, sys

top, mode, listing = sys.argv[1], sys.argv[2], sys.argv[3]
doc = os.path.join(top, "docs", "design.md")
heads = []
for line in open(doc, encoding="utf-8"):
    m = re.match(r"#{2,4} (\d+(?:\.\d+)*)\.? ", line)
    if m:
        heads.append(m.group(1))
names = [l.strip() for l in open(listing) if l.strip()]
SEC = re.compile(r"§(\d+(?:\.\d+)*)")
CITE = re.compile(r"docs/design\.md((?:[ ,]*(?:and )?§\d+(?:\.\d+)*)+)")

def lines(name):
    try:
        with open(os.path.join(top, name), "rb") as f:
            data = f.read()
    except OSError:
        return
    if b"\0" in data[:65536]:
        return		# binary data (recordings, corpora) cites nothing
    for i, l in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        yield i, l

if mode == "sections":
    print(len(heads))
elif mode == "unique":
    for h in sorted(set(heads)):
        if heads.count(h) > 1:
            print("docs/design.md: section %s appears %d times" % (h, heads.count(h)))
elif mode == "where":
    # §3.1's tables: every path they name exists; a bare file name in a
    # folder's row exists in that folder
    import glob
    sec = None
    count = 0
    for i, l in enumerate(open(doc, encoding="utf-8"), 1):
        if re.match(r"#{2,4} ", l):
            sec = l.split()[1]
            continue
        if sec != "3.1" or not l.startswith("|"):
            continue
        cells = l.split("|")
        row = re.match(r"\s*`([\w/]+/)`", cells[1])
        for tok in re.findall(r"`([^`]+)`", l):
            if "/" in tok:
                # a sub-folder a row may include is named from user/
                where = tok if glob.glob(os.path.join(top, tok)) else "user/" + tok
            elif re.fullmatch(r"[\w*]+\.(c|h|def)", tok) and row:
                where = row.group(1) + tok
            else:
                continue
            count += 1
            if not glob.glob(os.path.join(top, where)):
                print("docs/design.md:%d: §3.1 names %s, which does not exist" % (i, where))
    print("#count %d" % count)
elif mode == "causes":
    # Every cause of §5.5's table (the same as causes.def's) has one row in
    # §3.1's "where it lives" whose first cell starts with a cause; the
    # files of that row before any ";" are where it is decided.  A decision
    # is a line of user/ that charges time to the cause's constant
    # (IG_C_*): passes it to the charging layer (detail.c's ig_detail_*),
    # stores time at [IG_C_X] or assigns or returns IG_C_X; or calls a
    # function of detail.c that charges a fixed cause (ig_detail_unknown):
    # the charging layer decides nothing, who calls it does.
    import collections
    text = open(doc, encoding="utf-8").read().splitlines()
    sec, taxonomy, rows = None, [], []
    for i, l in enumerate(text, 1):
        if re.match(r"#{2,4} ", l):
            sec = l.split()[1]
            continue
        cells = l.split("|")
        if sec == "5.5" and len(cells) > 3:
            m = re.fullmatch(r"\s*`(\w+)`\s*", cells[1])
            if m:
                taxonomy.append(m.group(1))
        if sec == "3.1" and len(cells) > 3:
            rows.append((i, cells[1], cells[2]))
    enum = {}
    for m in re.finditer(r"^IG_CAUSE\((\w+),\s*\"(\w+)\"",
                         open(os.path.join(top, "user/engine/attrib/causes.def")).read(), re.M):
        enum[m.group(1)] = m.group(2)
    name_of = dict(enum)
    if sorted(taxonomy) != sorted(enum.values()):
        print("docs/design.md: §5.5's causes (%s) are not causes.def's (%s)" %
              (" ".join(sorted(taxonomy)), " ".join(sorted(enum.values()))))
    table = collections.defaultdict(list)
    for i, what, where in rows:
        first = re.match(r"\s*`(\w+)`", what)
        if not first or first.group(1) not in taxonomy:
            continue
        files = re.findall(r"`([^`]+)`", where.split(";")[0])
        for c in re.findall(r"`(\w+)`", what):
            if c in taxonomy:
                table[c].append((i, files))

    def code(name):
        """@name's text without comments, each line where it was."""
        t = open(os.path.join(top, name), encoding="utf-8", errors="replace").read()
        return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), t,
                      flags=re.S)

    def direct(t):
        """(offset, ENUM) of each charge of a constant cause in @t."""
        pats = (r"\big_detail_\w+\s*\([^;]*?\bIG_C_([A-Z]\w*)",
                r"\[\s*IG_C_([A-Z]\w*)\s*\]\s*[-+]?=(?!=)",
                r"(?<![=!<>])=\s*IG_C_([A-Z]\w*)",
                r"\breturn\s+IG_C_([A-Z]\w*)")
        for p in pats:
            for m in re.finditer(p, t):
                yield m.start(), m.group(1)

    # the charging layer's functions of one cause, by their bodies
    layer = "user/engine/attrib/detail.c"
    t = code(layer)
    helpers = {}
    for m in re.finditer(r"^[a-z][\w \t\*]*?\b(ig_detail_\w+)\s*\([^;{]*\)\s*\{", t, re.M):
        depth, j = 1, m.end()
        while depth and j < len(t):
            depth += {"{": 1, "}": -1}.get(t[j], 0)
            j += 1
        got = {c for _, c in direct(t[m.end():j])}
        if len(got) == 1:
            helpers[m.group(1)] = got.pop()
    sites = collections.defaultdict(set)
    for name in names:
        if not name.startswith("user/") or not name.endswith((".c", ".h")) or name == layer:
            continue
        t = code(name)
        found = list(direct(t))
        for h, c in helpers.items():
            for m in re.finditer(r"\b%s\s*\(" % h, t):
                # a call, not a declaration ("void ig_detail_unknown(...);")
                pre = t[t.rfind("\n", 0, m.start()) + 1:m.start()]
                if not (re.fullmatch(r"\s*(?:[A-Za-z_]\w*[\s*]+)+", pre) and
                        not re.search(r"\b(?:return|else|do)\b", pre)):
                    found.append((m.start(), c))
        for off, c in found:
            if c not in name_of:
                print("%s:%d: charges IG_C_%s, which causes.def does not have" %
                      (name, t.count("\n", 0, off) + 1, c))
                continue
            sites[name_of[c]].add(name)
            print("#site %s %s:%d" % (name_of[c], name, t.count("\n", 0, off) + 1))
    for c in taxonomy:
        if not table[c]:
            print("docs/design.md: §3.1's \"where it lives\" has no row for the cause %s" % c)
            continue
        if len(table[c]) > 1:
            print("docs/design.md:%d: a second row for the cause %s" % (table[c][1][0], c))
        i, files = table[c][0]
        for f in files:
            if not os.path.isfile(os.path.join(top, f)):
                print("docs/design.md:%d: %s is decided in %s, which does not exist" % (i, c, f))
            elif f not in sites[c]:
                print("docs/design.md:%d: %s is decided in %s, which holds no decision for it" %
                      (i, c, f))
        for f in sorted(sites[c] - set(files)):
            print("docs/design.md:%d: %s is decided in %s too, which its row leaves out" %
                  (i, c, f))
        if not sites[c]:
            print("user/: no file decides %s" % c)
    print("#count %d" % len(taxonomy))
elif mode in ("code", "self", "outside"):
    count = 0
    for name in names:
        for i, l in lines(name):
            if mode == "code":
                for m in CITE.finditer(l):
                    for s in SEC.findall(m.group(1)):
                        count += 1
                        if s not in heads:
                            print("%s:%d: cites docs/design.md §%s, which has no such section" % (name, i, s))
                if re.search(r"(?<!docs/)\bdesign\.md\b", l, re.I) and "docs/design.md" not in l:
                    print("%s:%d: names a design file other than docs/design.md" % (name, i))
                if "DESIGN.md" in l:
                    print("%s:%d: names DESIGN.md, which the repository does not have" % (name, i))
            elif mode == "self" and name == "docs/design.md":
                for s in SEC.findall(l):
                    count += 1
                    if s not in heads:
                        print("%s:%d: refers to §%s, which does not exist" % (name, i, s))
            elif mode == "outside":
                for p in re.findall(r"/work/\S*|/shared/\S*", l):
                    print("%s:%d: cites %s, outside the repository" % (name, i, p))
                for p in re.findall(r"(?:\.\./)+[A-Za-z_][\w./-]*", l):
                    base = os.path.dirname(os.path.join(top, name))
                    real = os.path.normpath(os.path.join(base, p))
                    if os.path.relpath(real, top).startswith(".."):
                        print("%s:%d: cites %s, outside the repository" % (name, i, p))
    if mode != "outside":
        print("#count %d" % count)
EOF

nsec=$(/usr/bin/python3 "$TMP/check.py" "$IG_TOP" sections "$files.1")
ok "design: docs/design.md has numbered sections ($nsec)" -- test "$nsec" -ge 10

out=$(/usr/bin/python3 "$TMP/check.py" "$IG_TOP" unique "$files.1")
is "$out" "" "design: section numbers are unique"

out=$(/usr/bin/python3 "$TMP/check.py" "$IG_TOP" code "$files.1")
n=$(echo "$out" | sed -n 's/^#count //p')
bad=$(echo "$out" | grep -v '^#count ')
is "$bad" "" "design: every cited docs/design.md section exists"
ok "design: the code cites docs/design.md ($n citations)" -- test "$n" -ge 10

out=$(/usr/bin/python3 "$TMP/check.py" "$IG_TOP" self "$files.1")
bad=$(echo "$out" | grep -v '^#count ')
is "$bad" "" "design: docs/design.md's own § references resolve"

out=$(/usr/bin/python3 "$TMP/check.py" "$IG_TOP" where "$files.1")
n=$(echo "$out" | sed -n 's/^#count //p')
bad=$(echo "$out" | grep -v '^#count ')
is "$bad" "" "design: every file §3.1's tables name exists"
ok "design: §3.1 says where things live ($n paths)" -- test "$n" -ge 40

out=$(/usr/bin/python3 "$TMP/check.py" "$IG_TOP" causes "$files.1")
n=$(echo "$out" | sed -n 's/^#count //p')
echo "$out" | sed -n 's/^#site /# decided: /p'
bad=$(echo "$out" | grep -v '^#')
is "$bad" "" "design: each cause's row in \"where it lives\" names the files that decide it, and only those"
ok "design: §5.5 has the causes ($n)" -- test "${n:-0}" -ge 12

out=$(/usr/bin/python3 "$TMP/check.py" "$IG_TOP" outside "$files.1")
is "$out" "" "design: no file cites a path outside the repository"

done_testing

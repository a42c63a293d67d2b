#!/bin/sh
# The design document is in the repository and the code's citations of it
# hold: every "docs/design.md §N" names a section that docs/design.md has,
# its own cross-references resolve, and no file cites a design file or a
# path outside the repository; every file that §3.1's tables (the folders,
# where it lives) name exists.  No root needed.
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

out=$(/usr/bin/python3 "$TMP/check.py" "$IG_TOP" outside "$files.1")
is "$out" "" "design: no file cites a path outside the repository"

done_testing

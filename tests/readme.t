#!/bin/sh
# The front page and the reference pages hold: README.md is at most 250
# lines; every relative link in README.md and docs/*.md names a file of
# the repository, and an anchor that the page has, and every path of the
# repository they name exists; every command in
# README.md's code blocks can run as shown (idlegap's subcommands and
# options are in its --help, trainsim's in its own, make's targets in the
# Makefile, any other program on this machine); every idlegap command
# shown in docs/*.md uses a subcommand and options that its --help has,
# and every make target named there exists; the man page, the user guide's
# table of options and --help list the same options (and the man page
# the same commands); .ci/run runs the README's test command.  As root,
# the README's run example runs as shown on the simulated GPU and prints
# the report lines the README shows, numbers aside.
. "$(dirname "$0")/lib.sh"

[ -x "$IG" ] || diag "no $IG: the checks against --help are skipped (make all)"

pychecks "$IG_TOP" "$IG" <<'PY'
import glob, os, re, shlex, shutil, subprocess, sys
from tap import check, skip

top, ig = sys.argv[1], sys.argv[2]
readme = os.path.join(top, "README.md")
docs = sorted(glob.glob(os.path.join(top, "docs", "*.md")))
pages = [readme] + docs
rel = lambda p: os.path.relpath(p, top)
text = {p: open(p, encoding="utf-8").read() for p in pages}

# ---- size ------------------------------------------------------------------
n = text[readme].count("\n")
check(n <= 250, "README.md is at most 250 lines (%d)" % n, "%d lines" % n)

# ---- the reference pages the front page points to --------------------------
for name in ("guide", "accuracy", "cost", "kernels", "fleet", "python", "development"):
    p = os.path.join(top, "docs", name + ".md")
    check(os.path.isfile(p) and "](docs/%s.md)" % name in text[readme],
          "docs/%s.md exists and README.md links it" % name)

# ---- markdown: code blocks, code spans, headings, links ---------------------
def blocks(s):
    """(prose lines, code blocks): fenced and indented blocks apart."""
    prose, code, cur, fence = [], [], None, None
    for line in s.split("\n"):
        m = re.match(r"\s*(```+|~~~+)", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                code.append(cur); fence = None
            else:
                cur.append(line)
            continue
        if m:
            fence, cur = m.group(1), []
            continue
        prose.append(line)
    return prose, code

def spans(lines):
    """Inline code spans of prose lines (a span may cross one line end)."""
    joined = "\n".join(lines)
    return [m.group(2) for m in re.finditer(r"(`+)(.+?)\1", joined, re.S)]

def slug(h):
    h = re.sub(r"<[^>]+>", "", h).strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")

def anchors(path):
    if path not in text:
        text[path] = open(path, encoding="utf-8").read()
    prose, _ = blocks(text[path])
    seen, out = {}, set()
    for l in prose:
        m = re.match(r"#{1,6} (.*?)#*\s*$", l)
        if m:
            s = slug(m.group(1))
            k = seen.get(s, 0)
            out.add(s if k == 0 else "%s-%d" % (s, k))
            seen[s] = k + 1
    return out

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
nlinks, bad = 0, []
for p in pages:
    prose, _ = blocks(text[p])
    body = "\n".join(prose)
    body = re.sub(r"(`+).+?\1", "", body, flags=re.S)  # links in code spans are text
    for m in LINK.finditer(body):
        target = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue				# http:, https:, mailto:
        nlinks += 1
        path, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(p), path)) if path else p
        if not (dest + os.sep).startswith(top.rstrip(os.sep) + os.sep) and dest != top:
            bad.append("%s: %s leaves the repository" % (rel(p), target))
        elif not os.path.exists(dest):
            bad.append("%s: %s: no such file" % (rel(p), target))
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            bad.append("%s: %s: %s has no heading #%s" % (rel(p), target, rel(dest), frag))
check(nlinks > 20 and not bad,
      "every relative link of README.md and docs/*.md resolves, anchors included (%d links)" % nlinks,
      "; ".join(bad))

# ---- the repository's files that the pages name -----------------------------
PATH_RE = re.compile(r"(?<![\w./-])((?:bpf|deploy|docs|tests|tools|user|workload|simgpu|vmlinux|\.ci)/[\w./*-]*[\w*])")
named, bad = 0, []
for p in pages:
    for m in PATH_RE.finditer(text[p]):
        path = m.group(1)
        if re.search(r"(^|/)[A-Z]{3,}(/|\.|$)", path):
            continue			# a placeholder: user/FOLDER/FILE.c
        named += 1
        if not glob.glob(os.path.join(top, path)) and not glob.glob(os.path.join(top, path) + "*"):
            bad.append("%s: %s" % (rel(p), path))
check(named > 100 and not bad,
      "every file of the repository that README.md and docs/*.md name exists (%d names)" % named,
      "no such file: " + "; ".join(sorted(set(bad))))

# ---- what the commands may use ---------------------------------------------
def run(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""

def help_options(out):
    """Long and short options of an argp --help."""
    longs, shorts = set(), set()
    for l in out.split("\n"):
        m = re.match(r"\s+(?:-(\S), )?(--[a-z][\w-]*)", l)
        if m:
            longs.add(m.group(2))
            if m.group(1):
                shorts.add("-" + m.group(1))
        m = re.match(r"\s+-(\S)(?:,|\s{2,})", l)
        if m:
            shorts.add("-" + m.group(1))
    return longs, shorts

have_ig = os.access(ig, os.X_OK)
subs, helps = [], {}
if have_ig:
    top_help = run([ig, "--help"])
    subs = sorted(set(re.findall(r"^\s+idlegap ([a-z]+)\b", top_help, re.M)))
    for s in subs:
        helps[s] = help_options(run([ig, s, "--help"]))
    check(set(subs) >= {"check", "attach", "run", "report", "top", "agent"} and
          all(helps[s][0] for s in subs),
          "idlegap --help names its subcommands, each with options (%s)" % ", ".join(subs))

tool_helps = {}
def tool_options(prog):
    path = os.path.join(top, prog)
    if prog not in tool_helps:
        tool_helps[prog] = help_options(run([path, "--help"])) if os.access(path, os.X_OK) else None
    return tool_helps[prog]

mk = subprocess.run(["make", "-C", top, "-pRrq", ":"], capture_output=True, text=True).stdout
targets = set()
for l in mk.split("\n"):
    m = re.match(r"([A-Za-z][\w.-]*(?:\s+[A-Za-z][\w.-]*)*)\s*::?(?!=)", l)
    if m and not l.startswith(("#", "\t")):
        targets.update(m.group(1).split())
check({"all", "test", "demo"} <= targets, "the Makefile's targets are listed (%d)" % len(targets))

OPS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "(", ")"}

def words(cmd):
    lex = shlex.shlex(cmd, posix=True, punctuation_chars="|&;<>()")
    lex.whitespace_split = True
    lex.commenters = "#"
    try:
        return list(lex)
    except ValueError:
        return None

def simple_commands(cmd):
    """The simple commands of a shell line, each as its words."""
    w = words(cmd)
    if w is None:
        return None
    out, cur, redirect = [], [], False
    for t in w:
        if t in OPS or set(t) <= set("|&;<>()"):
            if t in (">", ">>", "<", "2>"):
                redirect = True
                continue
            if cur:
                out.append(cur)
            cur = []
            continue
        if redirect:
            redirect = False
            continue
        cur.append(t)
    if cur:
        out.append(cur)
    return out

def strip_prefix(w):
    """Leaves out sudo and its options, nice, env and VAR=value."""
    i = 0
    while i < len(w):
        t = w[i]
        if t == "sudo" or t == "env" or t == "nice":
            i += 1
            while i < len(w) and w[i].startswith("-"):
                i += 2 if w[i] == "-n" else 1
            continue
        if re.match(r"[A-Za-z_][A-Za-z0-9_]*=", t):
            i += 1
            continue
        break
    return w[i:]

def options(args):
    """The options of an argument list, up to a lone --."""
    out = []
    for t in args:
        if t == "--":
            break
        if re.match(r"--[a-z]", t):
            out.append(t.split("=")[0])
        elif re.match(r"-[A-Za-z?]$", t):
            out.append(t)
    return out

def check_idlegap(w, where, problems):
    if not have_ig:
        return
    if len(w) < 2 or w[1] not in subs:
        problems.append("%s: '%s': no such subcommand" % (where, " ".join(w[:2])))
        return
    longs, shorts = helps[w[1]]
    for o in options(w[2:]):
        if o not in longs and o not in shorts:
            problems.append("%s: 'idlegap %s' has no option %s" % (where, w[1], o))

def check_make(w, where, problems):
    for t in w[1:]:
        if t.startswith("-") or "=" in t:
            continue
        if t not in targets:
            problems.append("%s: make has no target '%s'" % (where, t))

def is_idlegap(prog):
    return prog == "idlegap" or prog.endswith("/idlegap")

# ---- README's commands -----------------------------------------------------
def commands(block):
    """A block's commands: its '$ ' lines where it has any (the rest is
    their output), else every line; a line ending in '\\' goes on."""
    prompt = any(l.startswith("$ ") for l in block)
    out, cur = [], None
    for l in block:
        if cur is not None:
            cur += " " + l.strip()
        elif prompt:
            if not l.startswith("$ "):
                continue
            cur = l[2:]
        else:
            if not l.strip() or l.lstrip().startswith("#"):
                continue
            cur = l
        if cur.endswith("\\"):
            cur = cur[:-1]
            continue
        out.append(cur)
        cur = None
    return out

prose, code = blocks(text[readme])
cmds = [c for b in code for c in commands(b)]
problems, checked = [], 0
for c in cmds:
    sc = simple_commands(c)
    if sc is None:
        problems.append("README.md: cannot parse '%s'" % c)
        continue
    for w in sc:
        w = strip_prefix(w)
        if is_idlegap(w[0] if w else "") and "--" in w:	# run's command too
            sc.append(w[w.index("--") + 1:])
        if not w:
            continue
        checked += 1
        where = "README.md: '%s'" % c
        prog = w[0]
        if is_idlegap(prog):
            if not have_ig:
                continue
            if prog != "idlegap" and not os.access(os.path.join(top, prog), os.X_OK):
                problems.append("%s: %s is not built by make all" % (where, prog))
            check_idlegap(w, where, problems)
        elif prog == "make":
            check_make(w, where, problems)
        elif "/" in prog and not prog.startswith("/"):
            opts = tool_options(prog)
            if opts is None:
                problems.append("%s: %s is not in the tree or not built" % (where, prog))
                continue
            for o in options(w[1:]):
                if o not in opts[0] and o not in opts[1]:
                    problems.append("%s: %s has no option %s" % (where, prog, o))
        elif not shutil.which(prog):
            problems.append("%s: no program %s on this machine" % (where, prog))
check(checked >= 5 and not problems,
      "README.md's commands can run as shown (%d commands)" % checked, "; ".join(problems))

# The run example runs as shown (root; on the simulated GPU), and its report
# has the lines the README shows, numbers aside, and the README's first cause.
def example(block):
    for i, l in enumerate(block):
        if l.startswith("$ ") and re.search(r"idlegap run\b", l):
            out = []
            for o in block[i + 1:]:
                if o.startswith("$ "):
                    break
                out.append(o)
            return l[2:], out
    return None, None
ex = [e for e in (example(b) for b in code) if e[0]]
shape = lambda l: re.sub(r"\d+(\.\d+)?", "#", l.rstrip())
if not ex:
    check(False, "README.md shows an idlegap run example")
elif os.geteuid() != 0:
    skip("README.md's run example runs as shown", "needs root (BPF)")
elif not os.path.exists(os.path.join(top, "build", "simgpu", "libcuda.so.1")):
    skip("README.md's run example runs as shown", "no build/simgpu (make all)")
else:
    cmd, shown = ex[0]
    argv = strip_prefix(words(cmd))
    envs = dict(t.split("=", 1) for t in words(cmd) if re.match(r"[A-Za-z_]\w*=", t))
    env = dict(os.environ, **envs)
    try:
        r = subprocess.run(argv, cwd=top, env=env, capture_output=True, text=True, timeout=300)
        got, rc = r.stdout, r.returncode
    except subprocess.TimeoutExpired:
        got, rc = "", "timeout"
    tops = [l for l in shown if l and not l.startswith((" ", "...", "$"))]
    gots = {shape(l) for l in got.split("\n")}
    missing = [l for l in tops if shape(l) not in gots]
    first = re.search(r"^  (\w+) +[\d.]+ +[\d.]+$", "\n".join(shown), re.M)
    why = got.split("Why the GPU was idle", 1)[-1].split("\n\n", 1)[0]
    check(rc == 0 and len(tops) >= 3 and not missing,
          "README.md's run example runs as shown: exit 0, its report has the lines shown (%d)" % len(tops),
          "exit %s; lines not in the report: %s; got: %s" % (rc, missing, got[:2000]))
    check(first is not None and re.search(r"^  %s " % first.group(1), why, re.M) is not None,
          "its report names the README's first cause (%s) among the causes" %
          (first.group(1) if first else "none"), why)

setup = [c for c in cmds if re.search(r"\bmake\s+test\b", c)]
ci = open(os.path.join(top, ".ci", "run"), encoding="utf-8").read()
check(setup and re.search(r"\bmake test\b", ci) is not None,
      ".ci/run runs the README's test command (%s)" % (setup[0] if setup else "none"),
      "README.md shows %r; .ci/run does not run make test" % setup)

# ---- idlegap and make commands in docs/*.md --------------------------------
INVOKE = re.compile(r"(?:^|[\s`(])(?:sudo\s+(?:-E\s+)?)?((?:[\w./-]*/)?idlegap)\s+([a-z]+)\b")
problems, seen = [], 0
for p in pages:
    prose, code = blocks(text[p])
    segs = spans(prose)
    for b in code:
        lines = []
        for l in b:		# a synopsis goes on on lines that start with [
            if lines and re.match(r"\s+\[", l):
                lines[-1] += " " + l.strip()
            else:
                lines.append(l)
        segs += [c for c in commands(lines)]
    for seg in segs:
        seg = seg.replace("\n", " ")
        sc = simple_commands(seg.replace("...", " ").replace("[", " ").replace("]", " "))
        for w0 in sc or []:
            w = strip_prefix(w0)
            if not w:
                continue
            where = "%s: '%s'" % (rel(p), seg.strip())
            # "idlegap simgpu" is a name; an invocation is a subcommand, or
            # under sudo, or by its path, or with options
            called = (len(w) > 1 and (w[1] in subs or w0[0] == "sudo" or w[0] != "idlegap" or
                      any(t.startswith("-") for t in w[2:])))
            if is_idlegap(w[0]) and called and re.match(r"[a-z]+$", w[1]):
                seen += 1
                check_idlegap(w, where, problems)
            elif w[0] == "make":
                seen += 1
                check_make(w, where, problems)
if have_ig:
    check(seen > 50 and not problems,
          "every idlegap subcommand and option, and make target, shown in README.md and docs/*.md exists (%d commands)" % seen,
          "; ".join(problems))
else:
    skip("idlegap commands in docs/*.md against --help", "no build/idlegap (make all)")

# ---- the man page, the guide's table and --help ----------------------------
if have_ig:
    longs = set().union(*(helps[s][0] for s in subs))
    shorts = set().union(*(helps[s][1] for s in subs))
    man = open(os.path.join(top, "docs", "idlegap.8"), encoding="utf-8").read()
    man = man.replace("\\-", "-").replace("\\(em", "")
    mlongs = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", man))
    mshorts = set(re.findall(r"^\.(?:B|BI|BR)\s+\"?(-[A-Za-z?])(?=[\s,\"])", man, re.M))
    msubs = set(re.findall(r"^\.TP\n\.B ([a-z]+)\n", man, re.M))
    check(msubs == set(subs), "the man page's COMMANDS are --help's subcommands",
          "man page: %s; --help: %s" % (sorted(msubs), sorted(subs)))
    check(mlongs == longs, "the man page's long options are --help's",
          "only in the man page: %s; only in --help: %s" %
          (sorted(mlongs - longs), sorted(longs - mlongs)))
    check(mshorts == shorts, "the man page describes each short option of --help",
          "only in the man page: %s; only in --help: %s" %
          (sorted(mshorts - shorts), sorted(shorts - mshorts)))

    guide = os.path.join(top, "docs", "guide.md")
    rows, problems = {}, []
    for l in text.get(guide, "").split("\n"):
        cells = [c.strip() for c in l.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`-"):
            continue
        opts = re.findall(r"(?<![\w-])(--?[A-Za-z?][\w-]*)", " ".join(re.findall(r"`([^`]*)`", cells[0])))
        cmds_for = subs if cells[1] == "every command" else [c.strip() for c in cells[1].split(",")]
        for o in opts:
            rows[o] = cmds_for
            for c in cmds_for:
                if c not in helps:
                    problems.append("%s: no command %s" % (o, c))
                elif o not in helps[c][0] and o not in helps[c][1]:
                    problems.append("'idlegap %s --help' has no %s" % (c, o))
    missing = sorted((longs | shorts) - set(rows))
    check(rows and not problems and not missing,
          "docs/guide.md's table of options is --help's (%d options)" % len(rows),
          "; ".join(problems + ["not in the table: %s" % ", ".join(missing)] if missing else problems))
else:
    skip("the man page's options against --help", "no build/idlegap (make all)")
    skip("docs/guide.md's table of options against --help", "no build/idlegap (make all)")
PY
done_testing

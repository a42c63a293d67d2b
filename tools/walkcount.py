#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The walk of a record through ig_engine_feed(): how often it crosses
from one source file into another and comes back.

USAGE
    walkcount.py [--rev REV] [--jobs N] [--keep DIR] [--top N] [RECORDING...]
        Builds idlegap at REV (default HEAD; taken with `git archive`
        into a fresh folder, so any commit builds as it was) with every
        file of user/ compiled with -finstrument-functions, links in
        tools/walkhook.c (of this checkout), replays each RECORDING with
        `idlegap report` and prints the counts below: per record type, in
        all, and the file pairs that the returns cross most.  Recordings:
        the arguments, else tests/fuzz/corpus/*.igrec.  The build and the
        replays run under nice (and ionice where there is one).  --keep
        DIR keeps the build there, and a later run with the same --keep
        DIR (and the same REV) builds on it.

WHAT IS COUNTED
    A file is a source file of user/ (a translation unit): each function
    defined in a .c file is instrumented and is placed in that file (by
    the executable's symbol table: a static function by the FILE symbol
    its object begins with, an exported one by the object that defines
    it).  Functions defined in headers (static inline) are not
    instrumented: their time is their caller's.  Library code (libc,
    libbpf, json-c) is not seen.  A folder is a file's directory under
    user/ (engine, engine/gpu, util, ...).

    One walk is one call of ig_engine_feed() from outside it, from its
    entry to its return (calls of it from inside it, if any, belong to
    the outer walk).  Over the walk's stack of instrumented frames:

    - a return to a file it left: a function returns and the frame it
      returns to is in another file.  The caller's file is on the stack
      by construction, so this is the number of calls that went into
      another file and came back: the headline figure.
    - cross-file moves: calls into another file plus returns into
      another file (twice the above, as every such call returns).
    - cross-folder moves: calls and returns into another folder;
      climbs back up: the returns among them.
    - re-entries: calls into a file that is already on the stack further
      down (A -> B -> A): the walk's circles at run time.
    - files and folders: the distinct ones a walk passes through.

    Each figure is summed over the walks of a record type and over all,
    with the mean per walk and the largest single walk.

    The last line, "summary:", holds the totals; docs/design.md §3.1
    gives them for the engine before and after its sub-folders.

EXAMPLE
    tools/walkcount.py --rev f072385 /tmp/recs/*.igrec
    tools/walkcount.py --rev HEAD /tmp/recs/*.igrec
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOK = os.path.join(TOP, 'tools', 'walkhook.c')
OTHER = '(not in user/)'
INSTRUMENT = '-O2 -g -finstrument-functions -finstrument-functions-exclude-file-list=.h'


def low(cmd):
    pre = ['nice', '-n', '19']
    if shutil.which('ionice'):
        pre += ['ionice', '-c3']
    return pre + cmd


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build(rev, work, jobs):
    """idlegap of REV, instrumented and hooked; returns (src, binary)."""
    src = os.path.join(work, 'src')
    if not os.path.isdir(src):  # else a build kept by --keep, made again
        os.makedirs(src)
        arch = subprocess.run(['git', '-C', TOP, 'archive', rev], check=True,
                              stdout=subprocess.PIPE).stdout
        run(['tar', '-x', '-C', src], input=arch)
    bdir = 'build-walk'
    binary = os.path.join(src, bdir, 'idlegap')
    # instrumented code warns where the project's build does not: no -Werror
    make = ['make', '-C', src, f'-j{jobs}', f'BUILD={bdir}',
            f'CFLAGS={INSTRUMENT}', 'WARN=-w']
    run(low(make + [f'{bdir}/idlegap']), stdout=subprocess.DEVNULL)
    # the link again, with the hooks and the wrap of ig_engine_feed
    os.unlink(binary)
    dry = subprocess.run(make + ['-n', f'{bdir}/idlegap'], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    link = [ln for ln in dry.splitlines()
            if f'-o {bdir}/idlegap' in ln and not ln.lstrip().startswith(('printf', 'echo'))]
    if len(link) != 1:
        sys.exit(f'walkcount: cannot find the link command of {rev}:\n{dry}')
    hook = os.path.join(work, 'walkhook.o')
    run(low(['cc', '-O2', '-Wall', '-Werror', '-c', HOOK, '-o', hook]))
    # the hooks first: the engine's archive then supplies the real feed
    cc, rest = link[0].strip().split(None, 1)
    run(low(['sh', '-c', f'{cc} {hook} {rest} -Wl,--wrap=ig_engine_feed']), cwd=src)
    return src, binary


def objects(src):
    """basename of each source of user/ -> its path under user/, and each
    exported function -> its path."""
    user = os.path.join(src, 'user')
    path_of, owner = {}, {}
    for d, _, names in os.walk(user):
        for n in names:
            if n.endswith('.c'):
                rel = os.path.relpath(os.path.join(d, n), user)
                if n in path_of:
                    sys.exit(f'walkcount: two files named {n} in user/')
                path_of[n] = rel
    for base, rel in path_of.items():
        obj = os.path.join(src, 'build-walk', 'user', rel[:-2] + '.o')
        out = subprocess.run(['nm', '--defined-only', '-g', obj], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        for ln in out.splitlines():
            f = ln.split()
            if len(f) == 3 and f[1] in 'TtWw':
                owner[f[2]] = rel
    return path_of, owner


def write_map(src, binary, mapfile):
    """The hook's map: files with their folders, then each function's
    address and file."""
    path_of, owner = objects(src)
    files = sorted(set(path_of.values()))
    folders = sorted(set(os.path.dirname(f) for f in files))
    fid = {f: i for i, f in enumerate(files)}
    fid[OTHER] = len(files)
    folder_id = {d: i for i, d in enumerate(folders)}
    out = subprocess.run(['readelf', '-sW', binary], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    cur = None
    fns = []
    sym = re.compile(r'^\s*\d+:\s+([0-9a-f]+)\s+\S+\s+(\w+)\s+(\w+)\s+\w+\s+(\w+)\s+(\S+)')
    in_symtab = False
    for ln in out.splitlines():
        if ln.startswith("Symbol table '"):
            in_symtab = "'.symtab'" in ln
            continue
        m = sym.match(ln)
        if not m or not in_symtab:
            continue
        addr, typ, bind, ndx, name = m.groups()
        if typ == 'FILE':
            cur = name
            continue
        if typ != 'FUNC' or ndx == 'UND':
            continue
        if bind == 'LOCAL':
            rel = path_of.get(cur, OTHER)
        else:
            rel = owner.get(name.split('@')[0], OTHER)
        fns.append((int(addr, 16), fid[rel]))
    with open(mapfile, 'w') as f:
        f.write(f'{len(files) + 1}\n')
        for rel in files:
            f.write(f'{fid[rel]} {folder_id[os.path.dirname(rel)]} {rel}\n')
        f.write(f'{len(files)} {len(folders)} {OTHER}\n')
        for a, i in fns:
            f.write(f'{a:x} {i}\n')


def type_names(src):
    names = {}
    try:
        with open(os.path.join(src, 'bpf', 'records.def')) as f:
            for m in re.finditer(r'IG_REC\(\s*(\w+)\s*,\s*(0x[0-9a-fA-F]+|\d+)\s*,', f.read()):
                names[int(m.group(2), 0)] = m.group(1).lower()
    except OSError:
        pass
    return names


FIELDS = ('n', 'calls', 'xret', 'xcall', 'fmoves', 'fret', 'reenter',
          'files', 'folders', 'max_xret', 'max_files', 'max_folders')


def replay(binary, mapfile, recs, work):
    stats = collections.defaultdict(lambda: dict.fromkeys(FIELDS, 0))
    pairs = collections.Counter()
    reenters = collections.Counter()
    per_rec = []
    unknown = 0
    for i, rec in enumerate(recs):
        out = os.path.join(work, f'walk.{i}')
        if os.path.exists(out):  # a kept build's earlier run
            os.unlink(out)
        env = dict(os.environ, IG_WALK_MAP=mapfile, IG_WALK_OUT=out)
        p = subprocess.run(low([binary, 'report', rec]), env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode:
            print(f'# {os.path.basename(rec)}: report exited {p.returncode}: '
                  f'{p.stderr.strip().splitlines()[-1:] or ""}', file=sys.stderr)
        n = x = 0
        if not os.path.exists(out):
            print(f'# {os.path.basename(rec)}: no walk counted', file=sys.stderr)
            per_rec.append((rec, 0, 0))
            continue
        with open(out) as f:
            for ln in f:
                w = ln.split()
                if w[0] == 'unknown':
                    unknown += int(w[1])
                elif w[0] == 'type':
                    t = int(w[1])
                    v = dict(zip(FIELDS, map(int, w[2:])))
                    s = stats[t]
                    for k in FIELDS:
                        s[k] = max(s[k], v[k]) if k.startswith('max_') else s[k] + v[k]
                    n += v['n']
                    x += v['xret']
                elif w[0] == 'ret':
                    pairs[(w[1], w[2])] += int(w[3])
                elif w[0] == 'reenter':
                    reenters[(w[1], w[2])] += int(w[3])
        per_rec.append((rec, n, x))
    return stats, pairs, reenters, per_rec, unknown


def show(rev, sha, stats, pairs, reenters, per_rec, unknown, names, top):
    total = dict.fromkeys(FIELDS, 0)
    for s in stats.values():
        for k in FIELDS:
            total[k] = max(total[k], s[k]) if k.startswith('max_') else total[k] + s[k]
    n = total['n'] or 1
    print(f'walkcount: {rev} ({sha}), {len(per_rec)} recordings, '
          f'{total["n"]} walks (ig_engine_feed calls)')
    print(f'{"type":<10} {"walks":>8} {"returns":>10} {"/walk":>6} {"max":>5} '
          f'{"x-file":>10} {"x-folder":>9} {"climbs":>8} {"re-entry":>8} '
          f'{"files":>5} {"max":>3} {"folders":>7} {"max":>3}')

    def row(label, s):
        k = s['n'] or 1
        print(f'{label:<10} {s["n"]:>8} {s["xret"]:>10} {s["xret"] / k:>6.2f} {s["max_xret"]:>5} '
              f'{s["xcall"] + s["xret"]:>10} {s["fmoves"]:>9} {s["fret"]:>8} {s["reenter"]:>8} '
              f'{s["files"] / k:>5.1f} {s["max_files"]:>3} {s["folders"] / k:>7.1f} {s["max_folders"]:>3}')
    for t in sorted(stats):
        row(names.get(t, hex(t)), stats[t])
    row('all', total)
    print('per recording (walks, returns to a file it left, per walk):')
    for rec, k, x in per_rec:
        print(f'  {os.path.basename(rec)}: {k} {x} {x / (k or 1):.2f}')
    print(f'returns to a file it left, the {top} most crossed (from -> to, share):')
    for (a, b), c in pairs.most_common(top):
        print(f'  {a} -> {b}: {c} ({100.0 * c / (total["xret"] or 1):.1f}%)')
    if reenters:
        print(f're-entries, the {top} most (caller -> a file already on the stack):')
        for (a, b), c in reenters.most_common(top):
            print(f'  {a} -> {b}: {c}')
    if unknown:
        print(f'# {unknown} calls of functions the map did not place (counted as {OTHER})')
    print(f'summary: {rev} {sha} walks {total["n"]} returns-to-a-file-left '
          f'{total["xret"]} per-walk {total["xret"] / n:.3f} cross-file {total["xcall"] + total["xret"]} '
          f'cross-folder {total["fmoves"]} climbs {total["fret"]} re-entries {total["reenter"]}')


def main():
    ap = argparse.ArgumentParser(description='the walk of a record through ig_engine_feed')
    ap.add_argument('--rev', default='HEAD')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--keep')
    ap.add_argument('--top', type=int, default=12)
    ap.add_argument('recordings', nargs='*')
    a = ap.parse_args()
    recs = [os.path.abspath(r) for r in a.recordings]
    if not recs:
        d = os.path.join(TOP, 'tests', 'fuzz', 'corpus')
        recs = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith('.igrec'))
    for r in recs:
        if not os.path.isfile(r):
            sys.exit(f'walkcount: no recording {r}')
    sha = subprocess.run(['git', '-C', TOP, 'rev-parse', '--short', a.rev + '^{commit}'],
                         check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    if a.keep:
        work = os.path.abspath(a.keep)
        os.makedirs(work, exist_ok=True)
    else:
        work = tempfile.mkdtemp(prefix='walkcount-')
    # -finstrument-functions-exclude-file-list matches a substring of the path
    if '.h' in work:
        sys.exit(f'walkcount: the build folder {work} holds ".h": choose another (--keep)')
    try:
        src, binary = build(a.rev, work, a.jobs)
        mapfile = os.path.join(work, 'walk.map')
        write_map(src, binary, mapfile)
        res = replay(binary, mapfile, recs, work)
        show(a.rev, sha, *res, type_names(src), a.top)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()

#!/bin/sh
# Native stacks: a traced job's storage waits come with user stacks whose
# frames, named while the job ran, are trainsim's own loader functions
# (built with frame pointers).  The job runs from a path that exists only
# in its own mount namespace, so its files are reached through
# /proc/PID/root.  `report --dump` of the recording shows the same.
# Then again under a second tracer of the same threads (idlegap under
# idlegap): with interrupts off, as at a context switch, bpf_find_vma()
# takes the mmap lock once until they are back on, so the program that
# runs second on the hook cannot look up memory itself.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
TS=$IG_TOP/build/trainsim
[ -x "$TS" ] || skip_all "build first: make all"
command -v unshare >/dev/null || skip_all "no unshare(1)"
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu

# $TMP may be a tmpfs, whose reads never wait for a disk.
for d in "$TMP" /var/tmp /tmp; do
	case $(findmnt -n -o FSTYPE -T "$d") in tmpfs|ramfs) continue ;; esac
	DS=$(mktemp -d "$d/idlegap-ustack.XXXXXX") && break
done
trap 'rm -rf "$DS"; rm -rf "$TMP"' EXIT
mkdir -p "$TMP/hidden" "$TMP/bin"
cp "$TS" "$TMP/hidden/trainsim-ns"

"$IG" run -q -o "$TMP/r.igrec" -- unshare -m --propagation private sh -c \
	"mount --bind '$TMP/hidden' '$TMP/bin' && exec '$TMP/bin/trainsim-ns' -s storage --data '$DS' --data-mb 16 -t 3 -q" \
	2> "$TMP/err"
is "$?" 0 "idlegap traces a storage-bound job in its own mount namespace"
sed 's/^/# /' "$TMP/err"
[ ! -e "$TMP/bin/trainsim-ns" ]
is "$?" 0 "the job's executable is not at its path outside the job's namespace"
"$IG" report --dump "$TMP/r.igrec" > "$TMP/dump" 2> "$TMP/err"
is "$?" 0 "report --dump reads the recording"

cat > "$TMP/check.py" <<'PY'
import bisect, re, sys
import tap
label = sys.argv[2]
def check(ok, name, why=""):
    return tap.check(ok, label + name, why)
kv = lambda line: dict(re.findall(r"(\w+)=(\S+)", line))
stacks, at, names, waits = {}, {}, {}, []
flags = set()
for line in open(sys.argv[1]):
    f = line.split(" ", 2)
    if len(f) < 3:
        continue
    ts, kind, rest = int(f[0]), f[1], f[2]
    d = kv(rest)
    if kind == "ustack":
        pid, sid = int(d["pid"]), d["id"]
        flags.add(d["flags"].split(",")[0])
        if "ips" in d:
            stacks[(pid, sid)] = [int(x, 16) for x in d["ips"].split(",")]
        at.setdefault(int(d["tid"]), []).append((ts, (pid, sid)))
    elif kind == "usym":
        names[(int(d["pid"]), int(d["ip"], 16))] = rest.split(" name=", 1)[1].strip()
    elif kind == "offcpu" and d.get("reason") == "storage":
        waits.append((int(d["tid"]), int(d["off"])))
def frames(pid, ips):
    return [names.get((pid, ip - (1 if i and ip else 0)), "?") for i, ip in enumerate(ips)]
check(flags >= {"switch", "sample"}, "stacks at switch-out and at samples", str(flags))
check(len(waits) >= 20, "the job waited on storage (%d waits)" % len(waits))
# a thread's stack at a switch-out: its latest stack record at or before it
def stack_at(tid, t):
    v = at.get(tid, [])
    i = bisect.bisect_right(v, (t, (1 << 32, "~")))
    return v[i - 1][1] if i else None
for v in at.values():
    v.sort()
named = loader = inl = 0
for tid, off in waits:
    k = stack_at(tid, off)
    if not k or k not in stacks:
        continue
    named += 1
    fr = frames(k[0], stacks[k])
    # read_file, which calls pread, is inlined: one frame a function
    if any(re.match(r"read_file \(loader\.c:\d+\)\\x0a", x) for x in fr):
        inl += 1
    if any(re.match(r"(worker_loop|make_batch|read_sample|read_file|dataset_\w+) \(loader\.c:\d+\)", x) for x in fr):
        loader += 1
    elif named - loader < 4:
        print("# no loader frame: %s" % fr)
check(named >= 0.95 * len(waits), "a stack for each storage wait (%d of %d)" % (named, len(waits)))
check(loader >= 0.9 * max(named, 1), "their frames name trainsim's loader, file and line (%d of %d)" % (loader, named))
check(inl >= 0.9 * max(named, 1), "functions inlined at a return address are frames of their own (%d of %d)" % (inl, named))
ex = [frames(k[0], stacks[k]) for t, o in waits for k in [stack_at(t, o)] if k in stacks]
if ex:
    print("# e.g. %s" % " <- ".join(ex[len(ex) // 2]))
wrong = [v for v in names.values() if re.match(r"(main|worker_loop) ", v) and "loader.c" not in v and "main.c" not in v]
check(not wrong, "no trainsim frame with another file's name", str(wrong[:3]))
PY
pychecks "$TMP/dump" "" < "$TMP/check.py"

"$IG" run -q -o "$TMP/outer.igrec" -- "$IG" run -q -o "$TMP/inner.igrec" -- \
	"$TS" -s storage --data "$DS" --data-mb 16 -t 3 -q 2> "$TMP/err"
is "$?" 0 "idlegap traces the job under another idlegap tracing it"
"$IG" report --dump "$TMP/inner.igrec" > "$TMP/inner" 2> "$TMP/err"
is "$?" 0 "report --dump reads the inner recording"
pychecks "$TMP/inner" "under a second tracer: " < "$TMP/check.py"
done_testing

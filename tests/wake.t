#!/bin/sh
# Who woke a thread, as the kernel side records it: a timer or a disk
# completion (an interrupt, a softirq, a kworker) names no task, even the
# one it happened to land on; a pipe write by a traced process names that
# process.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$IG" ] || skip_all "build first: make all"

# a file on a disk, not a tmpfs, for reads that wait for a completion
for d in /var/tmp /tmp "$IG_TOP"; do
	case $(findmnt -n -o FSTYPE -T "$d") in tmpfs|ramfs) continue ;; esac
	F=$(mktemp "$d/idlegap-wake.XXXXXX") && break
done
trap 'rm -f "$F"; rm -rf "$TMP"' EXIT
dd if=/dev/urandom of="$F" bs=1M count=16 status=none && sync "$F"

# the pipe's reader is seen blocked in its read before the write (on a
# loaded host a reader started with a fixed head start may come to the
# pipe after the write, and never wait)
mkfifo "$TMP/fifo"
"$IG" run -q -o "$TMP/r.igrec" -- sh -c "sleep 0.2
	cat '$TMP/fifo' > /dev/null & c=\$!
	exec 3> '$TMP/fifo'
	i=0; until grep -q pipe_read /proc/\$c/wchan 2> /dev/null || [ \$i -ge 100 ]; do
		sleep 0.05; i=\$((i + 1)); done
	sleep 0.1; echo hi >&3; exec 3>&-; wait \$c
	dd if='$F' of=/dev/null iflag=direct bs=256k status=none" \
	2> "$TMP/err"
is "$?" 0 "traced timers, a pipe and direct reads"
sed 's/^/# /' "$TMP/err"
"$IG" report --dump "$TMP/r.igrec" > "$TMP/dump"

pychecks "$TMP/dump" "$(basename "$F")" <<'PY'
import sys
from tap import check
IRQ, KERNEL = 1 << 2, 1 << 9
recs = []
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) > 2 and w[1] == "offcpu":
        f = dict(x.split("=", 1) for x in w[2:] if "=" in x)
        if f.get("wake", "0") != "0":
            recs.append(f)
by = lambda r: [x for x in recs if x["reason"] == r]
def flags(x): return int(x["flags"], 16)
def waker(x): return int(x["waker"].split("/")[0])
sl, pp, st = by("sleep"), by("pipe"), by("storage")
# the direct reads of the file wait for the disk; another storage wait (an
# exec faulting a page of a binary another exec holds locked) is woken by
# the task that unlocks it, and rightly names it
other = [x for x in st if x.get("name") != sys.argv[2]]
st = [x for x in st if x.get("name") == sys.argv[2]]
print("# woken: %d sleep, %d pipe, %d reads of the file, %d other storage"
      % (len(sl), len(pp), len(st), len(other)))
bad = [x for x in sl if not flags(x) & IRQ or waker(x)]
check(sl and not bad, "a timer wakes from an interrupt and names no task",
      "%d of %d: %s" % (len(bad), len(sl), bad[:2]))
named = [x for x in pp if waker(x) and not flags(x) & (IRQ | KERNEL)]
check(named, "a pipe write by a traced process names it", "%s" % pp[:2])
bad = [x for x in st if not flags(x) & (IRQ | KERNEL)]
# an interrupt taken right after a syscall returned to user mode saved
# registers that look like a syscall's but for ax (docs/design.md §2.3)
check(st and not bad, "a disk completion is an interrupt or a kernel thread, never the task it landed on",
      "%d of %d: %s" % (len(bad), len(st), bad[:2]))
bad = [x for x in st + other if flags(x) & IRQ and waker(x)]
check(not bad, "an interrupt names no waker", "%s" % bad[:2])
PY
done_testing

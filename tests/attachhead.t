#!/bin/sh
# The head of an attach (docs/design.md §4.12, §5.14), as root, on the
# simulated GPU: a Python job whose loader workers read shards past the
# page cache from a throttled disk (tools/trainsim.py loader, every second
# batch's shard cold for 2.5 s), attached while a worker is blocked in its
# read, for 6 s and for 20 s, with the simulated NVML and without it
# (SIMNVML_INIT_FAIL=driver).
#  - With NVML: the idle counted over the traced time (idle_s and
#    idle_open_s) within 5% of the simulator's truth and never above it;
#    the time before the first GPU work seen is a head whose idle the
#    counter proved (idle in the truth, most of the head, its unresolved
#    part the one window of the counter holding the first work), a gap
#    recovered at attach, its cause storage with the shard file; the worker's state at the start names the file; work
#    still pending at the end has the idle the counter proves after it
#    (the tail), and that idle is idle in the truth.
#  - Without NVML: nothing proves the head idle, so it counts in no idle
#    (the idle never above the truth), but it is labelled all the same:
#    storage with the shard file, recovered at attach.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$IG" ] && [ -f "$IG_TOP/build/simgpu/libcuda.so.1" ] || skip_all "build first: make all"
PY=/usr/bin/python3
# the shard file must be on a disk the kernel throttles, not on tmpfs
DATA=$TMPDIR
[ "$(stat -f -c %T "$DATA")" = tmpfs ] && DATA=$(mktemp -d /var/tmp/idlegap-head.XXXXXX)
DEV=$(findmnt -n -o MAJ:MIN -T "$DATA" | tr -d ' ')
PK=$(lsblk -n -o PKNAME "/dev/block/$DEV" 2>/dev/null | head -1)
[ -n "$PK" ] && DEV=$(lsblk -n -d -o MAJ:MIN "/dev/$PK" | tr -d ' ')
case "$DEV" in *:*) ;; *) skip_all "no block device under $DATA";; esac
# 16 MiB/s: one 8 MiB sample read in O_DIRECT takes half a second
BPS=16777216
CG=
if [ -d /sys/fs/cgroup/blkio ] && mkdir /sys/fs/cgroup/blkio/idlegap-head-$$ 2>/dev/null; then
	CG=/sys/fs/cgroup/blkio/idlegap-head-$$
	echo "$DEV $BPS" > "$CG/blkio.throttle.read_bps_device" || CG=
elif C2=$(cgroup_root) && grep -qw io "$C2/cgroup.controllers" 2>/dev/null &&
     mkdir "$C2/idlegap-head-$$" 2>/dev/null; then
	CG=$C2/idlegap-head-$$
	echo "+io" > "$C2/cgroup.subtree_control" 2>/dev/null
	echo "$DEV rbps=$BPS" > "$CG/io.max" || CG=
fi
[ -n "$CG" ] || skip_all "cannot throttle reads from $DEV (no blkio or io cgroup)"

JOB=
cleanup() {
	[ -n "$JOB" ] && kill "$JOB" 2>/dev/null && wait "$JOB" 2>/dev/null
	rmdir "$CG" 2>/dev/null
	rm -f "/dev/shm/simgpu-machine-idlegap-head-$$"
	[ "$DATA" = "${TMPDIR:-}" ] || rm -rf "$DATA"
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu SIMGPU_MACHINE=idlegap-head-$$

# job $1's feeder waiting for its batch (poll, futex) while a worker of
# it is blocked in a read (D, in preadv/preadv2/pread64/read), twice
# 0.3 s apart: a stall under way
stalled() {
	feeder_waiting "$1" && worker_reading "$1" && sleep 0.3 &&
		feeder_waiting "$1" && worker_reading "$1"
}
feeder_waiting() {
	case "$(cut -d' ' -f1 "/proc/$1/task/$1/syscall" 2>/dev/null)" in
	7|202|271) return 0;;
	esac
	return 1
}
# the job's worker processes are the feeder's children: only their
# threads are read, so that a loaded host with many tasks does not make
# the stall over before it is seen
worker_reading() {
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		for s in /proc/"$c"/task/*/stat; do
			st=$(sed 's/.*) //' "$s" 2>/dev/null | cut -d' ' -f1)
			sc=$(cut -d' ' -f1 "${s%stat}syscall" 2>/dev/null)
			[ "$st" = D ] && case "$sc" in 0|17|19|295|327) return 0;; esac
		done
	done
	return 1
}
# NAME DURATION [ENV...]: the job, attached while a worker reads, for
# DURATION s; its report in $TMP/NAME.json, the truth in $TMP/NAME.trace
attach_job() {
	name=$1 d=$2
	shift 2
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' job "$CG" \
		env TMPDIR="$DATA" SIMGPU_TRACE="$TMP/$name.trace" $PY "$IG_TOP/tools/trainsim.py" \
		-s loader --workers 2 --slow-every 2 --slow-ms 2500 -t $((d + 40)) -q \
		> "$TMP/$name.job" 2>&1 &
	JOB=$!
	sleep 3
	if ! wait_until 30 stalled "$JOB"; then
		fail "$name: the feeder waits while a worker of the job is blocked in a read"
		return 1
	fi
	# KEEP: the recording too, to look into what the checks found
	env "$@" "$IG" attach -p "$JOB" -d "$d" --json "$TMP/$name.json" \
		${KEEP:+-o "$TMP/$name.igrec"} \
		> "$TMP/$name.txt" 2> "$TMP/$name.err"
	is "$?" 0 "$name: attach -d $d while a worker reads"
	kill "$JOB" 2>/dev/null
	wait "$JOB" 2>/dev/null
	JOB=
	sed 's/^/# /' "$TMP/$name.txt" | head -14
}

check() {
	pychecks "$@" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["IG_TOP"], "tools"))
import truth as T
from tap import check
name, rep, trace, nvml = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "nvml"
NS = 1e9
r = json.load(open(rep))
a = r["meta"]["start_ns"]
b = a + int(r["duration_s"] * 1e9)
_, ivs = T.read_traces([trace])
tidle = ((b - a) - T.total(T.clip(T.merge(ivs), a, b))) / 1e9
g = r["gpu"]
got = g["idle_s"] + g["idle_open_s"]
ratio = got / tidle if tidle else 0
print("# %s: traced %.3f s, truth idle %.3f s; idle %.3f s + open %.3f s = %.3f (%.3f of "
      "the truth), unresolved %.3f s" % (name, (b - a) / 1e9, tidle, g["idle_s"],
                                         g["idle_open_s"], got, ratio, g["unresolved_s"]))
check(got <= tidle * 1.01 + 0.005, "%s: the idle counted is not above the truth "
      "(%.3f <= %.3f)" % (name, got, tidle))
heads = g.get("heads") or []
# the time after the last evidence that no state took: work still pending
# when tracing stopped (the tail, docs/design.md §4.5), not the head
inside = (g["busy_s"] + g["idle_s"] + g["unresolved_s"] + g.get("peer_wait_s", 0) +
          g["idle_open_s"] + sum(h.get("not_known_s", 0) for h in heads))
after = (b - a) / 1e9 - inside
# work pending when tracing stopped: the counter's 0% windows after the
# last evidence prove the GPU idle there (the tail, docs/design.md §4.12)
for t in g.get("tails") or []:
    x, y = t["to_ns"] - int(t["idle_s"] * 1e9), t["to_ns"]
    tt = ((y - x) - T.total(T.clip(T.merge(ivs), x, y))) / 1e9
    print("# %s: tail %.3f s after the last evidence: idle %.3f s (truth %.3f s), "
          "unresolved %.3f s" % (name, t["seconds"], t["idle_s"], tt, t["unresolved_s"]))
    check(t["idle_s"] <= tt * 1.01 + 0.002, "%s: the tail's idle is idle in the truth "
          "(%.3f of %.3f s)" % (name, t["idle_s"], tt))
if nvml:
    check(ratio >= 0.95, "%s: the idle counted over the traced time is within 5%% of the "
          "truth (%.3f; %.3f s after the last evidence in no state)" % (name, ratio, after))
check(len(heads) == 1, "%s: one device with a head (%d)" % (name, len(heads)))
h = heads[0] if heads else {}
print("# %s: head %s" % (name, {k: v for k, v in h.items() if k not in ("causes", "threads")}))
check(h.get("seconds", 0) > 0.1, "%s: the head lasts until the first work seen (%.3f s)" % (
    name, h.get("seconds", 0)))
# a head of a few of the counter's 1/6 s windows: the one holding the
# first work is not proven, so a short head is mostly that window
long_head = h.get("seconds", 0) >= 0.5
if nvml and not long_head:
    print("# %s: the head lasted %.3f s, under 3 counter windows: its proof not "
          "checked" % (name, h.get("seconds", 0)))
if nvml and long_head:
    # all but the window holding the first work (1/6 s), 20 ms allowed for
    # when the counter's sample came
    check(h.get("proof") == "utilization_samples" and
          h.get("idle_s", 0) >= h.get("seconds", 1) - 1 / 6.0 - 0.02,
          "%s: the counter proved the head idle but for the window of its first work "
          "(%s s of %s s, %s)" % (name, h.get("idle_s"), h.get("seconds"), h.get("proof")))
    # the proven part (§4.12): from the run of 0% windows reaching furthest
    # to the window holding the first work, whose time is unresolved
    ha, hb = h.get("from_ns", a), h.get("first_work_ns", a)
    px = ha + int(round(h.get("not_known_s", 0) * NS))
    py = hb - int(round(h.get("unresolved_s", 0) * NS))
    pidle = ((py - px) - T.total(T.clip(T.merge(ivs), px, py))) / NS
    check(h.get("idle_s", 0) <= pidle * 1.01 + 0.002,
          "%s: the head's proven idle is idle in the truth (%.3f of %.3f s)" % (
              name, h.get("idle_s", 0), pidle))
    # one window of the counter (1/6 s, a loaded host delivering its
    # sample late) holds the first work
    check(h.get("unresolved_s", 1) <= 0.25,
          "%s: the head's unresolved time is the window holding its first work "
          "(%.3f s)" % (name, h.get("unresolved_s", 1)))
    gaps = [x for x in g["gap_list"] if abs(x.get("start_ns", 0) - px) <= 2000]
    check(gaps and gaps[0].get("recovered_at_attach") is True,
          "%s: the head's gap is recovered at attach" % name,
          "no gap starts at %d: %s" % (px, g["gap_list"][:2]))
    st = [c for c in r["causes"] if c["cause"] == "storage"]
    check(st and st[0].get("recovered_at_attach_s", 0) > 0.5 * h.get("idle_s", 0),
          "%s: storage's time recovered at attach (%s s)" % (
              name, st[0].get("recovered_at_attach_s") if st else None))
elif nvml:
    check(h.get("idle_s", 0) <= h.get("seconds", 0),
          "%s: the short head's idle is within it (%s of %s s)" % (
              name, h.get("idle_s"), h.get("seconds")))
else:
    check(h.get("idle_s", 1) == 0 and h.get("proof") is None,
          "%s: without a counter nothing in the head is idle (%s)" % (name, h.get("idle_s")))
lab = h.get("causes") or [{}]
files = [d.get("path", "") for d in lab[0].get("details", []) if d.get("kind") == "file"]
whys = [d.get("why", "") for d in lab[0].get("details", []) if d.get("kind") == "why"]
# a queue thread whose first switch-in after the start the kernel did not
# report is still followed: its wait comes at its next switch-out (§5.15)
check(lab[0].get("cause") == "storage" and any("trainsim-" in f and f.endswith(".bin") for f in files),
      "%s: the head's cause is storage with the shard file (%s %s %s)" % (
          name, lab[0].get("cause"), files, whys))
check(h.get("recovered_at_attach") is True, "%s: the head is labelled recovered at attach" % name)
rd = [t for t in h.get("threads", []) if t.get("reason") == "storage" and
      (t.get("name") or "").startswith("trainsim-")]
check(rd and rd[0].get("state") == "D",
      "%s: a worker was in a read of the shard at the start (%s)" % (name, rd[:1]),
      "the threads: %s" % h.get("threads"))
PY
}

for d in 6 20; do
	attach_job "nvml$d" "$d" && check "nvml$d" "$TMP/nvml$d.json" "$TMP/nvml$d.trace" nvml
	attach_job "nonvml$d" "$d" SIMNVML_INIT_FAIL=driver &&
		check "nonvml$d" "$TMP/nonvml$d.json" "$TMP/nonvml$d.trace" none
done
done_testing

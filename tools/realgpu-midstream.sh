#!/bin/sh
# Joining running jobs on a real NVIDIA GPU (docs/design.md §4.2): the
# device and UUID idlegap gives a process whose context was made before it
# looked, against what nvidia-smi shows for that PID.
#   1. a torch DataLoader job is started, and once nvidia-smi lists it,
#      `idlegap attach` joins it for 8 s;
#   2. `idlegap agent` starts while that job still runs (a job older than
#      the agent), and a second job starts between its windows;
#   3. each report's device entries, and /metrics' gpu and uuid labels,
#      are compared with nvidia-smi's PID -> GPU map.
# Also kept: which /dev/nvidia* each job holds open (design §4.2 asks
# whether that evidence holds on a real driver).
# Usage (root):  tools/realgpu-midstream.sh [OUTDIR]   (default /tmp/idlegap-midstream)
# Needs build/idlegap; prints one MIDSTREAM line per check, PASS or FAIL.
set -u
cd "$(dirname "$0")/.."
out=${1:-/tmp/idlegap-midstream}
mkdir -p "$out"
py=${PYTHON:-python3}
ig=${IDLEGAP:-build/idlegap}
log() { printf '== %s\n' "$*"; }
# the job: $1 seconds, $2 its profile; MIDSTREAM_JOB (a command that takes
# the seconds last) stands in for the torch loop where torch is missing
job() {	# run in the background: exec keeps $! the job's pid
	if [ -n "${MIDSTREAM_JOB:-}" ]; then
		exec $MIDSTREAM_JOB "$1"
	else
		exec "$py" tools/torchcheck.py train --job dataloader --seconds "$1" --trace "$2"
	fi
}

nvidia-smi --query-gpu=index,uuid,name,driver_version --format=csv,noheader \
	> "$out/gpus.csv" || { echo "realgpu-midstream: nvidia-smi failed" >&2; exit 1; }
cat "$out/gpus.csv"

# $1: pid; waits (60 s at most) until nvidia-smi lists it as a compute app
listed() {
	i=0
	while [ $i -lt 120 ]; do
		nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader \
			2>/dev/null | grep -q "^$1," && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.5; i=$((i + 1))
	done
	return 1
}

snap() {	# $1: tag; nvidia-smi's apps and the /dev/nvidia* fds of $2
	nvidia-smi --query-compute-apps=pid,gpu_uuid,gpu_bus_id --format=csv,noheader \
		> "$out/$1-apps.csv" 2>&1
	ls -l /proc/"$2"/fd 2>/dev/null | grep -o '/dev/nvidia[^ ]*' | sort | uniq -c \
		> "$out/$1-fds.txt"
}

log "job A: torch DataLoader loop, 40 s"
job 40 "$out/a-prof.json" > "$out/a-job.txt" 2>&1 &
a=$!
if ! listed $a; then
	echo "MIDSTREAM FAIL job A never appeared in nvidia-smi"; cat "$out/a-job.txt"; exit 1
fi
snap a $a
cat "$out/a-apps.csv" "$out/a-fds.txt"
"$ig" check -p $a > "$out/a-check.txt" 2>&1; echo "check -p: exit $?"
log "attach -p $a -d 8"
"$ig" attach -p $a -d 8 --json "$out/a-attach.json" > "$out/a-attach.txt" 2>&1
echo "attach: exit $?"; head -30 "$out/a-attach.txt"

log "agent --window 4 --every 6, started while job A runs"
mkdir -p "$out/agent"
"$ig" agent --listen 127.0.0.1:10437 --window 4 --every 6 --reports "$out/agent" \
	> "$out/agent.txt" 2>&1 &
ag=$!
sleep 2
log "job B: torch DataLoader loop, 20 s, started between the agent's windows"
job 20 "$out/b-prof.json" > "$out/b-job.txt" 2>&1 &
b=$!
listed $b && snap b $b
wait $a; echo "job A: exit $?"
wait $b; echo "job B: exit $?"
sleep 7	# a window closes after both ended
"$py" -c 'import urllib.request,sys; sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:10437/metrics", timeout=5).read().decode())' \
	> "$out/metrics.txt" 2>&1
kill -TERM $ag; wait $ag; echo "agent: exit $?"
tail -5 "$out/agent.txt"

"$py" - "$out" $a $b <<'PY'
import csv, glob, json, os, sys
out, a, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
gpus = {r[1].strip(): int(r[0]) for r in csv.reader(open(out + "/gpus.csv"))}
truth = {}
for tag in ("a", "b"):
    p = "%s/%s-apps.csv" % (out, tag)
    if os.path.exists(p):
        for r in csv.reader(open(p)):
            if len(r) >= 2 and r[0].strip().isdigit():
                truth[int(r[0])] = r[1].strip()
fails = 0
def check(ok, what):
    global fails
    fails += not ok
    print("MIDSTREAM %s %s" % ("PASS" if ok else "FAIL", what))
def entries(rep):
    return rep.get("gpu", {}).get("devices", []) or []
def proc(rep, pid):
    for p in rep.get("processes", []) or []:
        if p.get("pid") == pid:
            return p
    return {}
for pid, tag in ((a, "A"), (b, "B")):
    check(pid in truth, "nvidia-smi listed job %s (pid %d): %s" % (tag, pid, truth.get(pid)))
rep = json.load(open(out + "/a-attach.json")) if os.path.exists(out + "/a-attach.json") else {}
devs = entries(rep)
print("attach devices:", json.dumps([{k: d.get(k) for k in ("device", "uuid", "device_source", "rank", "busy_s", "idle_s")} for d in devs]))
u = truth.get(a)
check(len(devs) == 1, "attach: one device entry (%d)" % len(devs))
check(any(d.get("uuid") == u for d in devs), "attach: the UUID nvidia-smi shows for job A (%s)" % u)
check(any(d.get("device") == gpus.get(u) for d in devs), "attach: the index nvidia-smi shows (%s)" % gpus.get(u))
node = ("nvml", "device_node", "context")	# never the environment's
check(all(d.get("device_source") in node for d in devs), "attach: the device came from the node's evidence (%s)" % [d.get("device_source") for d in devs])
pa = proc(rep, a)
check(pa.get("uuid") == u and pa.get("device") == gpus.get(u),
      "attach: job A's process entry is on nvidia-smi's GPU (%s %s %s)" % (pa.get("device"), pa.get("uuid"), pa.get("device_source")))
wins = sorted(glob.glob(out + "/agent/*.json"))
seen = set(); wrong = []
for w in wins:
    try:
        r = json.load(open(w))
    except Exception as e:
        wrong.append("%s: %s" % (w, e)); continue
    for p in r.get("processes", []) or []:
        if p.get("pid") in (a, b) and p.get("device") is not None:
            seen.add(("pid %d" % p["pid"], p.get("device"), p.get("uuid"), p.get("device_source")))
    for d in entries(r):
        seen.add((d.get("device"), d.get("uuid"), d.get("device_source")))
        if d.get("uuid") not in truth.values() or d.get("device") != gpus.get(d.get("uuid")):
            wrong.append("%s: %s %s" % (os.path.basename(w), d.get("device"), d.get("uuid")))
print("agent windows: %d, device entries seen: %s" % (len(wins), sorted(seen, key=str)))
check(len(wins) >= 2 and seen and not wrong, "agent: every window's device is nvidia-smi's (%s)" % (wrong[:3] or "ok"))
m = open(out + "/metrics.txt").read() if os.path.exists(out + "/metrics.txt") else ""
lines = [l for l in m.splitlines() if l.startswith("idlegap_gpu_seconds_total")]
print("\n".join(lines[:12]))
check(bool(lines) and all(('UUID="%s"' % u) in l for l in lines), "/metrics: every gpu series has the UUID %s" % u)
fds = open(out + "/a-fds.txt").read()
print("job A's /dev/nvidia* fds:", " ".join(fds.split()))
print("MIDSTREAM %s (%d failed)" % ("PASS" if not fails else "FAIL", fails))
sys.exit(1 if fails else 0)
PY

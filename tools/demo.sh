#!/bin/sh
# The main job on the bundled workload: trainsim, a training loop whose
# DataLoader workers read cold files, traced by idlegap.  On a machine with
# an NVIDIA GPU it uses the real driver; elsewhere the simulated one.
set -eu
cd "$(dirname "$0")/.."
scenario=${SCENARIO:-storage}
out=${DEMO_OUT:-/tmp/idlegap-demo}
mkdir -p "$out"

if [ "$(id -u)" != 0 ]; then
	echo "make demo: tracing needs root: sudo make demo" >&2
	exit 1
fi
if nvidia-smi -L > /dev/null 2>&1; then
	echo "== trainsim -s $scenario on the GPU ($(nvidia-smi -L | head -1))"
	unset LD_LIBRARY_PATH
else
	echo "== no GPU here: trainsim -s $scenario on the simulated driver (build/simgpu)"
	export LD_LIBRARY_PATH="$PWD/build/simgpu"
	export SIMGPU_TRACE="$out/simgpu-trace.%p"
	rm -f "$out"/simgpu-trace.*
fi
build/idlegap run --json "$out/report.json" --html "$out/report.html" -o "$out/run.igrec" -- \
	build/trainsim -s "$scenario" -q --truth "$out/truth.json"
echo
/usr/bin/python3 - "$out/truth.json" "$out/report.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
g = r["gpu"]
span = g["busy_s"] + g["idle_s"] + g["unresolved_s"]
first = r["causes"][0] if r["causes"] else None
print("== ground truth from the workload: GPU idle %.0f%% of its span, cause: %s"
      % (100 * t["gpu"]["idle_share"], t["expected_cause"]))
print("== idlegap: GPU idle %.0f%% (unresolved %.0f%%), first cause: %s (%.0f%% of idle time)"
      % (100 * g["idle_s"] / span if span else 0, 100 * g["unresolved_s"] / span if span else 0,
         first["cause"] if first else "none", 100 * first["share"] if first else 0))
PY
echo "== files: $out/report.json (JSON), $out/report.html (the page: open it in a browser),"
echo "   $out/run.igrec (recording: idlegap report $out/run.igrec)"

#!/bin/sh
# The checks that need a real NVIDIA GPU, in one go, on a machine where
# `make all test-progs bench-tools` has been run (or its build/ copied in):
#   1. the kernel and driver: do tracepoints and uprobes work here?
#   2. trainsim with the real PTX kernel, scored against its own
#      %globaltimer truth (tools/accuracy.py);
#   3. small PyTorch jobs under idlegap (a DataLoader loop, an eager MLP
#      with a small batch, a GIL-contended loop: REALGPU_TORCH_JOBS), their
#      known idle gaps and estimated idle checked against torch.profiler's
#      GPU timeline, their steps against its ProfilerStep#N spans
#      (tools/torchcheck.py);
#   4. which libcuda entry points fired, and the driver version;
#   5. torch.distributed with the NCCL backend at world size 1: the NCCL
#      probes against the calls it made (tools/ncclcheck.py).
# Usage (root):  tools/realgpu.sh [OUTDIR]      (default /tmp/idlegap-realgpu)
# Scenarios: REALGPU_SCENARIOS (default: all trainsim scenarios).
set -u
cd "$(dirname "$0")/.."
out=${1:-/tmp/idlegap-realgpu}
mkdir -p "$out"
py=${PYTHON:-python3}
scen=${REALGPU_SCENARIOS:-healthy storage pagefault cpu lock network launch sync_copy eager gpubound}
log() { printf '== %s\n' "$*"; }

log "host: $(uname -r), $(nproc) CPUs"
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader || {
	echo "realgpu: no NVIDIA GPU (nvidia-smi failed)" >&2; exit 1; }
log "BTF: $(ls -l /sys/kernel/btf/vmlinux 2>&1)"
log "libcuda: $(ldconfig -p | grep 'libcuda.so.1 ' | head -1)"

log "idlegap check"
build/idlegap check 2>&1 | tee "$out/check.txt"

log "trainsim on the real driver, scored against its own truth"
for s in $scen; do
	timeout 240 "$py" tools/accuracy.py --json --keep "$out/acc-$s" "$s" \
		> "$out/acc-$s.json" 2> "$out/acc-$s.err" ||
		{ echo "$s: FAILED: $(tail -3 "$out/acc-$s.err")"; continue; }
	"$py" - "$out/acc-$s.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r = r[0] if isinstance(r, list) else r
print("%-10s precision %s recall %s true-idle %.2f idle %.2f unresolved %.2f first %s %s"
      " host-bound %s (true %s) GPU-bound %s (true %s)" % (
    r["scenario"], r.get("precision"), r.get("recall"), r["true_idle_share"],
    r["idle_share"], r["unresolved_share"], r.get("first_cause"), r.get("first_share"),
    r.get("host_bound"), r.get("true_host_bound"), r.get("gpu_bound"), r.get("true_gpu_bound")))
PY
done

log "PyTorch jobs under idlegap, against torch.profiler (estimate included)"
for j in ${REALGPU_TORCH_JOBS:-dataloader eager_mlp gil}; do
	rm -f "$out/torch-$j-prof.json"
	timeout 300 build/idlegap run --gaps -1 --json "$out/torch-$j-report.json" \
		-o "$out/torch-$j.igrec" -- "$py" tools/torchcheck.py train --job "$j" \
		--trace "$out/torch-$j-prof.json" > "$out/torch-$j-run.txt" 2>&1
	echo "$j: exit $?"; tail -5 "$out/torch-$j-run.txt"
	"$py" tools/torchcheck.py compare --recording "$out/torch-$j.igrec" \
		"$out/torch-$j-prof.json" \
		"$out/torch-$j-report.json" | tee "$out/torch-$j-compare.json"
	"$py" tools/torchcheck.py steps --recording "$out/torch-$j.igrec" \
		--json "$out/torch-$j-steps.json" "$out/torch-$j-prof.json" \
		"$out/torch-$j-report.json" > /dev/null &&
	"$py" - "$j" "$out/torch-$j-steps.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))
if not r["found"]:
    print("%s steps: none found (%s)" % (sys.argv[1], r["why_none"]))
    sys.exit()
q, ph, m, sl = r["step_s"], r["phase"], r["match"], r["slow"]
ms = lambda x: "%.2f" % (x * 1e3) if x is not None else "-"
print("%s steps: ok %s%s; %s by %s: %s steps, profiler %s; p50 %s/%s ms, p99 %s/%s ms;"
      " offset %s ms, spread %s ms; matched %s; slow %s/%s, both %s" % (
    sys.argv[1], r["ok"], " (failed %s)" % ",".join(r["failed"]) if r["failed"] else "",
    r["source"], r["clock"], r["count"]["idlegap"], r["count"]["profiler"],
    ms(q["idlegap"]["p50"]), ms(q["profiler"]["p50"]), ms(q["idlegap"]["p99"]),
    ms(q["profiler"]["p99"]), ph["offset_ms"], ph["spread_ms"], m["share"],
    sl["idlegap"], sl["profiler"], sl["profiler_found"]))
PY
done
# the first job's report under the old names, for the summary below
cp "$out/torch-dataloader-report.json" "$out/torch-report.json" 2>/dev/null
"$py" - "$out/torch-report.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["gpu"]
print("torch loop: span %.3f s busy %.3f idle %.3f unresolved %.3f = host-bound %.3f"
      " + GPU-bound %.3f + open %.3f (threshold %s us)" % (
    g.get("span_s", 0), g.get("busy_s", 0), g.get("idle_s", 0), g["unresolved_s"],
    g["unresolved_host_bound_s"], g["unresolved_gpu_bound_s"], g["unresolved_open_s"],
    g.get("at_once_threshold_us")))
PY

log "NCCL: torch.distributed at world size 1 under idlegap (tools/ncclcheck.py)"
timeout 180 build/idlegap run --json "$out/nccl-report.json" -o "$out/nccl.igrec" \
	-- "$py" tools/ncclcheck.py run > "$out/nccl-calls.txt" 2> "$out/nccl-run.txt"
echo "nccl run: exit $?"; tail -5 "$out/nccl-run.txt"
"$py" tools/ncclcheck.py compare "$out/nccl-calls.txt" "$out/nccl.igrec" \
	--json "$out/nccl-report.json" --idlegap build/idlegap | tee "$out/nccl-compare.txt"

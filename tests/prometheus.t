#!/bin/sh
# The metrics end to end with Debian's Prometheus: two recorded window
# reports (a storage-bound trainsim run, the lock recording) of two pods,
# their identities read from fixture /proc trees, served over /metrics by
# httpd.c + metrics.c, scraped by a real Prometheus on loopback and read
# back through its HTTP API; the exposition passes `promtool check metrics`.
. "$(dirname "$0")/lib.sh"
. "$IG_TOP/tests/lib/prom.sh"
SERVE=$IG_TOP/build/tests/lib/metrics_serve
FIX=$IG_TOP/tests/fixtures/agent
command -v "$PROMETHEUS" > /dev/null || skip_all "no prometheus (Debian: prometheus)"
command -v promtool > /dev/null || skip_all "no promtool (Debian: prometheus)"
command -v curl > /dev/null || skip_all "no curl"
[ -x "$SERVE" ] || skip_all "build it first: make test-progs"
plan 16

UID1=1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b
CID1=3c5a8e1f9b2d4c6e8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f
# fixture PID POD NAMESPACE RANK GPU: a /proc/PID of a pod's process, given
# GPU by the device plugin; containerd's record of its container names the
# pod and the GPU.  The process's own HOSTNAME, service-account file and
# NVIDIA_VISIBLE_DEVICES claim another pod and GPU, and are not believed.
fixture() {
	case $1 in *[!0-9]*|"") echo "# no pid: $1"; return 1;; esac
	d=$TMP/proc/$1
	cid=$(printf '%.56s%08d' "$CID1" "$1")
	mkdir -p "$d/root/var/run/secrets/kubernetes.io/serviceaccount"
	echo "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$(echo $UID1 | tr - _).slice/cri-containerd-$cid.scope" > "$d/cgroup"
	printf 'PATH=/usr/bin\0HOSTNAME=coredns-0\0RANK=%s\0WORLD_SIZE=2\0NVIDIA_VISIBLE_DEVICES=GPU-forged\0' \
		"$4" > "$d/environ"
	echo python3 > "$d/comm"
	echo kube-system > "$d/root/var/run/secrets/kubernetes.io/serviceaccount/namespace"
	r=$TMP/node/run/containerd/io.containerd.runtime.v2.task/k8s.io/$cid
	mkdir -p "$r"
	printf '{"process": {"env": ["NVIDIA_VISIBLE_DEVICES=%s"]}, "annotations": {"io.kubernetes.cri.sandbox-uid": "%s", "io.kubernetes.cri.sandbox-name": "%s", "io.kubernetes.cri.sandbox-namespace": "%s"}}' \
		"$5" "$UID1" "$2" "$3" > "$r/config.json"
}
pid_of() { json "$1" "[p['pid'] for p in j['processes'] if p['device'] is not None][0]"; }
cause_s() { json "$1" "sum(c['seconds'] for c in j['causes'] if c['cause'] == '$2')"; }

"$IG" report --json "$TMP/lock.json" "$IG_TOP/tests/fuzz/corpus/lock.igrec" > /dev/null 2>&1
GPU0=GPU-8f3c0a1b-1111-2222-3333-444455556666
fixture "$(pid_of "$FIX/storage.json")" trainer-0 ml 0 "$GPU0"
fixture "$(pid_of "$TMP/lock.json")" infer-1 serving 1 3
set -- --proc-root "$TMP/proc" --node-root "$TMP/node" --label cluster=test "$FIX/storage.json" "$TMP/lock.json"

"$SERVE" --once "$@" > "$TMP/expo" 2> "$TMP/err"
ok "promtool check metrics passes on the exposition" -- sh -c "promtool check metrics < '$TMP/expo'"
CID_A=$(printf '%.56s%08d' "$CID1" "$(pid_of "$FIX/storage.json")")
ok "pod, namespace and GPU from the runtime's record, rank flagged self-reported" -- \
	grep -q "^idlegap_gpu_seconds_total{UUID=\"$GPU0\",namespace=\"ml\",pod=\"trainer-0\",pod_uid=\"$UID1\",container=\"$CID_A\",rank=\"0\",comm=\"python3\",self_reported=\"rank\",cluster=\"test\",state=\"idle\"} " "$TMP/expo"
ok "nothing from the process's forged HOSTNAME, namespace file or GPUs" -- \
	sh -c "! grep -q 'coredns\\|kube-system\\|GPU-forged' '$TMP/expo'"
ok "a pod given the host's GPU 3 has gpu=\"3\"" -- \
	grep -q "^idlegap_gpu_idle_seconds_total{gpu=\"3\",namespace=\"serving\",pod=\"infer-1\"," "$TMP/expo"

# served over HTTP
"$SERVE" --listen 127.0.0.1:0 "$@" > "$TMP/serve.out" 2>&1 &
SERVE_PID=$!
trap 'prom_stop; kill $SERVE_PID 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
while ! grep -q '^listening' "$TMP/serve.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
PORT=$(awk '/^listening/ { print $2 }' "$TMP/serve.out")
ok "metrics_serve listens (port ${PORT:-none})" -- [ -n "$PORT" ]
is "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "http://127.0.0.1:$PORT/metrics")" \
	"200 text/plain; version=0.0.4; charset=utf-8" "GET /metrics: 200, the exposition's content type"
is "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x "http://127.0.0.1:$PORT/metrics")" 405 "POST: 405"
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/")" 404 "elsewhere: 404"
"$SERVE" --listen "127.0.0.1:$PORT" "$@" > /dev/null 2> "$TMP/inuse"
is "$?:$(wc -l < "$TMP/inuse")" "1:1" "port in use: one line, exit 1 ($(cat "$TMP/inuse"))"

# scraped by Prometheus
if ! prom_start "127.0.0.1:$PORT"; then
	fail "prometheus ready"
	exit 1
fi
pass "prometheus ready at $PROM_URL"
ok "scraped: idlegap_windows_total is 2" -- prom_wait 'idlegap_windows_total{job="idlegap",cluster="test"} == 2' 30
want=$(cause_s "$FIX/storage.json" storage)
got=$(prom_query 'idlegap_gpu_idle_seconds_total{pod="trainer-0",namespace="ml",cause="storage"}')
ok "storage idle seconds of trainer-0 as in its report ($got vs $want)" -- \
	/usr/bin/python3 -c "import sys; sys.exit(abs(float('${got:-nan}') - $want) > 1e-6)"
is "$(prom_labels 'topk(1, sum by (cause) (idlegap_gpu_idle_seconds_total{pod="infer-1"}))' cause)" \
	lock "the lock recording's pod: lock leads"
is "$(prom_labels 'sum by (pod) (idlegap_gpu_seconds_total)' pod | tr '\n' ' ')" \
	"infer-1 trainer-0 " "one series set per pod, no pid label"
buckets=$(prom_query 'idlegap_gpu_gap_seconds_bucket{pod="trainer-0",le="+Inf"}')
is "$buckets" "$(json "$FIX/storage.json" "j['gpu']['gap_histogram']['count']")" \
	"the histogram's +Inf bucket counts every gap of the window"
prom_stop
kill "$SERVE_PID"
wait "$SERVE_PID"
is "$?" 0 "metrics_serve stops on SIGTERM with status 0"

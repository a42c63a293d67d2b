#!/bin/sh
# The Grafana dashboard (deploy/grafana/idlegap.json) against a live agent,
# as root: two jobs on the simulated GPU (5 GPUs), each in a cgroup shaped
# as the kubelet makes a pod's, with containerd's record of its container
# under --node-root: pod loader-0 (namespace ml), `trainsim -s coldshard`
# on GPU 4 (a cold shard every 10th step: storage); pod trainer-0
# (namespace ml), `trainsim ranks --world 4 -s storage --straggle-every 5`
# on GPUs 0-3, run as Slurm job 4242 inside the pod (SLURM_JOB_ID, as
# slurmd in a pod gives it): rank 2 reads cold every 5th step, the others
# wait for it.  One agent kept to the pods' cgroups (--label cluster=test,
# continuous windows of 3 s), scraped by Debian's Prometheus every second.
# Every template variable's query returns values, with every variable
# All and with one concrete value each (cluster test, the agent's
# instance, ml, trainer-0, 4242), and each concrete value is among its
# variable's values; every target of every panel, its variables
# substituted as Grafana does (All as ".*", a value regex-escaped),
# evaluated through the HTTP API (range queries for time series, instant
# ones for tables and bars) has no error and a series with a number.
# And `promtool check rules` passes on every rule file under deploy/.
. "$(dirname "$0")/lib.sh"
. "$IG_TOP/tests/lib/prom.sh"
need_root
need_ranks_build
command -v "$PROMETHEUS" > /dev/null || skip_all "no prometheus (Debian: prometheus)"
command -v promtool > /dev/null || skip_all "no promtool (Debian: prometheus)"
command -v curl > /dev/null || skip_all "no curl"
CG=$(cgroup_root)
[ -d "$CG" ] || skip_all "no cgroup v2 hierarchy"
TOP=/idlegap-grafana-$$
mkdir "$CG$TOP" 2>/dev/null || skip_all "cannot make a cgroup under $CG"
DASH=$IG_TOP/deploy/grafana/idlegap.json

AGENT='' JOBS='' DIRS="$CG$TOP"
cleanup() {
	for p in $JOBS; do kill "$p" 2>/dev/null; done
	for p in $JOBS; do wait "$p" 2>/dev/null; done
	prom_stop
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	for d in $DIRS; do rmdir "$d" 2>/dev/null; done
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
# a signal ends it through the same cleanup: no job, agent or cgroup left
trap 'exit 1' HUP INT PIPE TERM

uuid() { cat /proc/sys/kernel/random/uuid; }
hex64() { cat /proc/sys/kernel/random/uuid /proc/sys/kernel/random/uuid | tr -d -- '-\n'; }
# pod NAME NAMESPACE GPUS: a pod's container cgroup under $TOP (its path
# in POD_CG) and containerd's record of the container, given the host's
# GPUS by the device plugin
pod() {
	_uid=$(uuid); _cid=$(hex64)
	_slice=$CG$TOP/kubepods.slice/kubepods-pod$(echo "$_uid" | tr - _).slice
	POD_CG=$_slice/cri-containerd-$_cid.scope
	mkdir -p "$POD_CG" || return 1
	DIRS="$POD_CG $_slice $CG$TOP/kubepods.slice $DIRS"
	_r=$TMP/node/run/containerd/io.containerd.runtime.v2.task/k8s.io/$_cid
	mkdir -p "$_r"
	printf '{"process": {"env": ["NVIDIA_VISIBLE_DEVICES=%s"]}, "annotations": {"io.kubernetes.cri.sandbox-uid": "%s", "io.kubernetes.cri.sandbox-name": "%s", "io.kubernetes.cri.sandbox-namespace": "%s"}}' \
		"$3" "$_uid" "$1" "$2" > "$_r/config.json"
}
# in CGROUP CMD...: CMD in CGROUP, in the background (its pid in JOBS)
in_cg() {
	_c=$1; shift
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' job "$_c" "$@" \
		>> "$TMP/jobs.out" 2>&1 &
	JOBS="$JOBS $!"
}

pod loader-0 ml 4 || skip_all "cannot make a cgroup under $CG$TOP"
LOADER_CG=$POD_CG
pod trainer-0 ml 0,1,2,3 || skip_all "cannot make a cgroup under $CG$TOP"
TRAINER_CG=$POD_CG

# the shipped rule files (test files of `promtool test rules` excepted)
find "$IG_TOP/deploy" -name '*.yml' -o -name '*.yaml' | sort > "$TMP/yml"
while read -r f; do
	grep -q '^groups:' "$f" || continue
	promtool check rules "$f" > "$TMP/rules.out" 2>&1
	rc=$?
	ok "promtool check rules ${f#"$IG_TOP"/}" -- test $rc = 0
	[ $rc = 0 ] || sed 's/^/# /' "$TMP/rules.out"
done < "$TMP/yml"
# shellcheck disable=SC2016 # ${datasource} is the dashboard's, not the shell's
ok "the dashboard: Grafana's JSON model, every panel's targets on the \${datasource} variable" -- /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ps = [p for p in d["panels"] if p["type"] != "row"]
ts = [t for p in ps for t in p.get("targets", [])]
ids = [p["id"] for p in d["panels"]]
bad = [p["title"] for p in ps if not p.get("targets") or p["datasource"]["uid"] != "${datasource}"]
bad += [t["expr"] for t in ts if t["datasource"]["uid"] != "${datasource}" or not t["expr"].strip()]
names = [v["name"] for v in d["templating"]["list"]]
sys.exit(not (d["schemaVersion"] >= 36 and d["uid"] and ps and not bad and
              len(ids) == len(set(ids)) and names[0] == "datasource" and
              d["templating"]["list"][0]["query"] == "prometheus"))' "$DASH"

export LD_LIBRARY_PATH="$IG_TOP/build/simgpu" SIMGPU_DEVICES=5
if ! start_agent "$TMP/agent.out" --cgroup "$TOP" --listen 127.0.0.1:0 --window 3 --every 3 \
	--node-root "$TMP/node" --label cluster=test; then
	fail "the agent serves /metrics"
	sed 's/^/# /' "$TMP/agent.out"
	exit 1
fi
PORT=$(sed -n 's/.*metrics on port \([0-9]*\).*/\1/p' "$TMP/agent.out" | head -1)
pass "the agent serves /metrics on port $PORT"

CUDA_VISIBLE_DEVICES=4 in_cg "$LOADER_CG" "$TS" -s coldshard -n 100000 -t 300 -q
SLURM_JOB_ID=4242 in_cg "$TRAINER_CG" "$TS" ranks --world 4 -s storage --straggle-every 5 \
	-n 100000 -t 300 -q

if ! prom_start "127.0.0.1:$PORT"; then
	fail "prometheus ready"
	exit 1
fi
pass "prometheus ready at $PROM_URL"

pychecks "$DASH" "$PROM_URL" "127.0.0.1:$PORT" <<'PY'
import json, math, re, sys, time, urllib.parse, urllib.request
from tap import check

dash = json.load(open(sys.argv[1]))
url, instance = sys.argv[2], sys.argv[3]
t0 = time.time()
CONCRETE = {"cluster": "test", "node": instance, "namespace": "ml",
            "pod": "trainer-0", "slurm_job": "4242"}
ALL = {k: None for k in CONCRETE}
# Grafana's built-in intervals, for a dashboard showing the test's run:
# the rate interval four scrape intervals and more
BUILTIN = {"$__rate_interval": "15s", "$__interval": "2s", "$__range": "10m"}


def api(path, **params):
    q = urllib.parse.urlencode(params, doseq=True)
    try:
        with urllib.request.urlopen("%s/api/v1/%s?%s" % (url, path, q), timeout=30) as r:
            j = json.load(r)
    except urllib.error.HTTPError as e:
        j = json.load(e)
    except (OSError, ValueError) as e:
        return None, str(e)
    if j.get("status") != "success":
        return None, "%s: %s" % (j.get("errorType"), j.get("error"))
    return j["data"], None


def escape(v):
    """A variable's value in a regex matcher, as Grafana's Prometheus
    data source writes it (prometheusSpecialRegexEscape)."""
    v = v.replace("\\", "\\\\\\\\")
    return re.sub(r"[$^*{}\[\]'+?.()|]", lambda m: "\\\\" + m.group(0), v)


def subst(expr, values):
    for k, v in BUILTIN.items():
        expr = expr.replace(k, v)
    for name in sorted(values, key=len, reverse=True):
        v = values[name]
        expr = expr.replace("${%s}" % name, ".*" if v is None else escape(v))
        expr = expr.replace("$" + name, ".*" if v is None else escape(v))
    assert "$" not in expr, expr
    return expr


def variables():
    return [v for v in dash["templating"]["list"] if v["type"] == "query"]


def var_values(v, values):
    """The values of a label_values(METRIC{...}, LABEL) variable."""
    q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
    m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*", q, re.S)
    if not m:
        return None, "not label_values(SELECTOR, LABEL): %s" % q
    sel = subst(m.group(1), values)
    data, err = api("label/%s/values" % m.group(2), **{"match[]": sel,
                    "start": "%.3f" % t0, "end": "%.3f" % time.time()})
    return data, err


def targets():
    for p in dash["panels"]:
        for t in p.get("targets", []):
            yield p, t


def run(p, t, values):
    """(series, finite samples, error) of a target."""
    expr = subst(t["expr"], values)
    if t.get("instant") or p["type"] in ("table", "bargauge", "stat", "piechart"):
        data, err = api("query", query=expr)
        if err:
            return 0, 0, err
        vals = [s["value"][1] for s in data["result"]]
    else:
        data, err = api("query_range", query=expr, start="%.3f" % t0,
                        end="%.3f" % time.time(), step="2")
        if err:
            return 0, 0, err
        vals = [v[1] for s in data["result"] for v in s["values"]]
    finite = sum(1 for v in vals if math.isfinite(float(v)))
    return len(data["result"]), finite, None


sets = (("All", ALL), ("concrete", CONCRETE))


def windows():
    data, err = api("query", query='idlegap_windows_total{instance="%s"}' % instance)
    return float(data["result"][0]["value"][1]) if data and data["result"] else 0


def all_ok():
    # a few of the jobs' windows, so that rates span more than one
    if windows() < 5:
        return False
    for _, values in sets:
        for p, t in targets():
            n, f, err = run(p, t, values)
            if err or not f:
                return False
        for v in variables():
            data, err = var_values(v, values)
            if err or not data:
                return False
    return True


# the jobs' windows come every 3 s: wait (bounded, for a loaded host)
# until every query has what it shows, then judge each
while time.time() - t0 < 150 and not all_ok():
    time.sleep(2)
print("# waited %.0f s, %d windows" % (time.time() - t0, windows()))

nq = 0
for label, values in sets:
    for v in variables():
        data, err = var_values(v, values)
        check(not err and data, "variable %s (%s): %s" % (v["name"], label, data),
              err or "no values")
        if label == "concrete":
            # the value chosen is one of the variable's, the variables
            # before it set to theirs
            check(data and CONCRETE[v["name"]] in data,
                  "variable %s offers %s" % (v["name"], CONCRETE[v["name"]]), "%s" % data)
    for p, t in targets():
        n, f, err = run(p, t, values)
        nq += 1
        check(not err and f > 0, "%s: %s [%s] (%s): %d series, %d samples" % (
              label, p["title"], t["refId"], "instant" if t.get("instant") else "range", n, f),
              err or "no series with a number: %s" % subst(t["expr"], values))
print("# %d panel queries checked" % nq)


def table(title, values=ALL):
    p = [p for p in dash["panels"] if p["title"] == title][0]
    data, err = api("query", query=subst(p["targets"][0]["expr"], values))
    return [s["metric"] for s in data["result"]] if data else []


# what the panels show of these jobs
rows = table("Top jobs by idle GPU-seconds, and why")
check({r.get("pod") for r in rows} == {"loader-0", "trainer-0"} and
      all(r.get("slurm_job") == "4242" for r in rows if r.get("pod") == "trainer-0"),
      "the top jobs: both pods, trainer-0 with its Slurm job",
      "%s" % rows)
check("storage" in {r.get("cause") for r in rows if r.get("pod") == "loader-0"},
      "the top jobs: storage among loader-0's causes (its cold shards)",
      "%s" % [r for r in rows if r.get("pod") == "loader-0"])
rows = table("Late ranks over the time range")
check("2" in {r.get("late_rank") for r in rows},
      "the late ranks: rank 2 (the straggler) among them",
      "%s" % sorted({r.get("late_rank") for r in rows}))
PY
# what was scraped, for a failure's diagnosis (KEEP=1 keeps it)
curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/metrics.txt"
done_testing

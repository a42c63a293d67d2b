#!/bin/sh
# deploy/: the Prometheus rules pass `promtool check rules` and their unit
# tests (`promtool test rules`, input series in the test files); the
# Kubernetes manifest and the systemd unit are well-formed.
. "$(dirname "$0")/lib.sh"
D=$IG_TOP/deploy
command -v promtool > /dev/null || skip_all "no promtool (Debian: prometheus)"
plan 6

ok "promtool check rules" -- sh -c "promtool check rules '$D/prometheus/idlegap.rules.yml' > '$TMP/check' 2>&1"
sed 's/^/# /' "$TMP/check"
ok "promtool test rules (recording rules, docs/fleet.md's queries, alerts)" -- \
	sh -c "cd '$D/prometheus' && promtool test rules idlegap.rules.test.yml > '$TMP/test' 2>&1"
sed 's/^/# /' "$TMP/test"
ok "promtool test rules (a job's late rank across nodes, and its causes)" -- \
	sh -c "cd '$D/prometheus' && promtool test rules idlegap.collectives.test.yml > '$TMP/coll' 2>&1"
sed 's/^/# /' "$TMP/coll"
# promtool reads YAML strictly; use it to parse the manifest too when
# python3-yaml is absent
if /usr/bin/python3 -c 'import yaml' 2> /dev/null; then
	ok "the DaemonSet manifest parses, with hostPID and the read-only mounts" -- \
		/usr/bin/python3 -c 'import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
ds = [d for d in docs if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]
mounts = {m["mountPath"]: m.get("readOnly", False) for m in ds["containers"][0]["volumeMounts"]}
caps = ds["containers"][0]["securityContext"]["capabilities"]["add"]
assert ds["hostPID"] and mounts["/sys/kernel/btf"] and mounts["/sys/fs/cgroup"]
assert set(caps) == {"BPF", "PERFMON", "SYS_PTRACE"}' "$D/kubernetes/idlegap-agent.yaml"
else
	skip "the DaemonSet manifest parses" "no python3-yaml"
fi
ok "the DaemonSet asks for hostPID and no privileged mode" -- \
	sh -c "grep -q '^      hostPID: true' '$D/kubernetes/idlegap-agent.yaml' && grep -q 'privileged: false' '$D/kubernetes/idlegap-agent.yaml'"
if command -v systemd-analyze > /dev/null; then
	# the binary need not be installed here; anything else is a finding
	systemd-analyze verify "$D/systemd/idlegap-agent.service" 2>&1 |
		grep -v '/usr/local/sbin/idlegap' > "$TMP/sd"
	sed 's/^/# /' "$TMP/sd"
	is "$(wc -l < "$TMP/sd")" 0 "systemd-analyze verify accepts the unit"
else
	skip "systemd-analyze verify accepts the unit" "no systemd-analyze"
fi

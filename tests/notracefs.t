#!/bin/sh
# A host as it comes: tracefs and debugfs not mounted (a fresh VM, a pod).
# In a private mount namespace with both unmounted, `check` says ready and
# a short `run` of trainsim traces the simulated GPU, without mounting
# anything.  `check` predicts `run`: the same probes and choices, and
# without the kernel's BTF or without privileges it blames that, not the
# verifier or the kernel, and its verdict is the one `run` then gives.
# Needs root and unshare(1).
if [ -z "${IG_PRIVATE_NS:-}" ] && [ "$(id -u)" = 0 ] &&
   unshare -m --propagation private true 2> /dev/null; then
	IG_PRIVATE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
need_root
[ -n "${IG_PRIVATE_NS:-}" ] || skip_all "cannot make a private mount namespace (unshare -m)"
[ -x "$IG_TOP/build/trainsim" ] || skip_all "build first: make all"

# mount types in this namespace that the tracer must not need
trace_mounts() { awk '$3 == "tracefs" || $3 == "debugfs" { print $2 }' /proc/self/mounts; }
for m in /sys/kernel/debug/tracing /sys/kernel/tracing /sys/kernel/debug; do
	while mountpoint -q "$m" 2> /dev/null; do umount "$m" 2> /dev/null || umount -l "$m" || break; done
done
is "$(trace_mounts)" "" "neither tracefs nor debugfs is mounted here"

export LD_LIBRARY_PATH="$IG_TOP/build/simgpu"
"$IG" check > "$TMP/check.txt" 2>&1
is "$?" 0 "check: exits 0 without tracefs"
ok "check: says ready" -- grep -q '^ready' "$TMP/check.txt"
ok "check: every host hook loads and attaches" -- grep -q '^  ok   BPF programs load+attach' "$TMP/check.txt"
ok "check: uprobes attach" -- grep -q '^  ok   uprobes attach' "$TMP/check.txt"
ok "check: libcuda's probes attach" -- grep -q '^  ok   probes attach' "$TMP/check.txt"
grep FAIL "$TMP/check.txt" | sed 's/^/# /'

"$IG" run -q --json "$TMP/run.json" -- "$IG_TOP/build/trainsim" -s healthy -q -t 2 \
	> "$TMP/run.out" 2> "$TMP/run.err"
is "$?" 0 "run: trainsim traced to the end without tracefs"
sed 's/^/# /' "$TMP/run.err"
ok "run: no hook failed to attach" -- sh -c '! grep -qi "cannot attach\|unavailable" "$1"' _ "$TMP/run.err"
busy=$(json "$TMP/run.json" 'j["gpu"]["busy_s"] > 0')
is "$busy" True "run: the GPU's work was seen through the libcuda probes"
is "$(trace_mounts)" "" "run: mounted neither tracefs nor debugfs"

# --- check predicts run: the same probes, the same choices ------------------
"$IG" check -v > "$TMP/checkv.txt" 2>&1
is "$(grep -c 'probing multi-uprobe links' "$TMP/checkv.txt")" 1 \
	"check: multi-uprobe links probed once (its line and the tracer share the answer)"
is "$(grep -c 'probing tp_btf sched_switch$' "$TMP/checkv.txt")" 1 \
	"check: sched_switch's tp_btf flavour probed once"
is "$(grep 'probing tp_btf' "$TMP/checkv.txt" | sort | uniq -d)" "" \
	"check: each hook's tp_btf flavour probed once"
ok "check: sys_enter/sys_exit are not listed (no hook uses them)" -- \
	sh -c '! grep -q "sys_enter\|sys_exit" "$1"' _ "$TMP/check.txt"
IDLEGAP_NO_UPROBE_MULTI=1 "$IG" check > "$TMP/nomulti.txt" 2>&1
ok "check, IDLEGAP_NO_UPROBE_MULTI: says multi-uprobe links are off, as run has them" -- \
	grep -q '^  --   multi-uprobe links .*off' "$TMP/nomulti.txt"
ok "check, IDLEGAP_NO_UPROBE_MULTI: uprobes attach as perf-event links" -- \
	grep -q '^  ok   uprobes attach .*(perf-event links)' "$TMP/nomulti.txt"

# a kernel without BTF, as user space sees it: /sys/kernel/btf hidden
nobtf() { unshare -m --propagation private sh -c 'mount -t tmpfs none /sys/kernel/btf && exec "$@"' _ "$@"; }
nobtf "$IG" check > "$TMP/nobtf.txt" 2> "$TMP/nobtf.err"
is "$?" 1 "check without kernel BTF: not ready"
ok "check without kernel BTF: names the fix (CONFIG_DEBUG_INFO_BTF)" -- \
	grep -q '^  FAIL BTF .*kernel lacks BTF.*CONFIG_DEBUG_INFO_BTF=y' "$TMP/nobtf.txt"
is "$(grep -c '^  FAIL' "$TMP/nobtf.txt")" 1 "check without kernel BTF: the one FAIL is BTF (the verifier is not blamed)"
grep '^  FAIL' "$TMP/nobtf.txt" | sed 's/^/# /'
nobtf "$IG" run -q -- true > /dev/null 2>&1
is "$?" 1 "run without kernel BTF: fails, as check predicted"

# --- without privileges ----------------------------------------------------
command -v setpriv > /dev/null || { skip "non-root check" "no setpriv"; done_testing; exit; }
unpriv() { setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$@"; }
if ! unpriv test -x "$IG"; then
	skip "non-root check" "nobody cannot run $IG"
	done_testing
	exit
fi
unpriv "$IG" check > "$TMP/np.txt" 2>&1
is "$?" 1 "check as nobody: not ready"
ok "check as nobody: blames the privileges" -- grep -q '^  FAIL privileges' "$TMP/np.txt"
is "$(grep -c '^  FAIL' "$TMP/np.txt")" 1 "check as nobody: nothing else fails (the kernel is not blamed)"
grep '^  FAIL' "$TMP/np.txt" | sed 's/^/# /'
unpriv "$IG" run -q -- true > /dev/null 2>&1
is "$?" 1 "run as nobody: fails, as check predicted"
done_testing

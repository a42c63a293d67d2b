#!/bin/bash
# The kernel matrix: Debian's 5.10 (bullseye) and 6.1 (bookworm) kernels boot under QEMU (TCG)
# with this machine's userland and build tree, and run tests/kernels/guest.sh: `check`, then a
# storage job, a GIL job with Python stacks, a page-fault job and an attach to a running GPU
# process.  On each kernel, check's verdict must agree with run (ready: every run starts and
# reports; not ready: run ends with an error line and a non-zero exit) and the first causes must
# be right, as the guest kernel's accounting of each job's feeding threads says (the jobs'
# --truth, judged by tools/accuracy.py's oracle).  Kernels are fetched once into build/kernels/ (tests/kernels/fetch.sh: apt-get with
# its own sources and state).  KERNELS="6.1" picks kernels.  About 4 minutes per kernel.
. "$(dirname "$0")/lib.sh"

need_root
[ "${IG_SKIP_LONG:-0}" = 1 ] && skip_all "a long suite (about 2 minutes per kernel): IG_LONG=1 make test, or make test-kernels"
command -v qemu-system-x86_64 >/dev/null || skip_all "no qemu-system-x86_64 (make deps)"
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
	skip_all "no static busybox (make deps installs busybox-static)"
[ -x "$IG_TOP/build/idlegap" ] && [ -x "$IG_TOP/build/trainsim" ] || skip_all "build first: make all"

KD=$IG_TOP/build/kernels
# The guest's watchdog (tests/kernels/vmwatch.py): a guest with no progress line for
# VM_STALL_S seconds (default 120) has its tasks dumped on its console (SysRq w, l, t through
# the QEMU monitor) and is stopped; it boots again and goes on from the step that stuck
# (tests/kernels/guest.sh skips the steps done), with half the patience: a step stuck
# twice fails, named.  IG_GUEST_HANG=STEP plants a hang in STEP (tests/kernels-hang.t).
STALL=${VM_STALL_S:-120}
# boot_guest K OUT: runs the guest script on kernel K until it ends; 1 (a failed test) when
# a step stuck twice
boot_guest() {
	_k=$1 _out=$2 _once='' _boot=0 _stall=$STALL
	while :; do
		_boot=$((_boot + 1))
		echo "VMWATCH: boot $_boot at $(date -u +%T)" >> "$_out/console.log"
		echo "$(date +%s) $_boot" >> "$_out/boots.log"
		# a throttled data disk keeps the storage job storage-bound under TCG
		DRIVE_OPTS=throttling.bps-read=33554432 VM_TIMEOUT=${VM_TIMEOUT:-900} VM_STALL_S=$_stall nice \
			"$IG_TOP/tests/kernels/run-vm.sh" "$KD/$_k/vmlinuz" "$KD/$_k/initrd.gz" "$_out" \
			"$IG_TOP/tests/kernels/guest.sh" "igtop=$IG_TOP" ${IG_GUEST_HANG:+ighang=$IG_GUEST_HANG}
		[ $? = 124 ] && [ -s "$_out/stuck" ] || return 0
		_st=$(cat "$_out/stuck")
		diag "kernel $_k: step $_st: $(cat "$_out/stuck.why"); its tasks are dumped in $_out/console.log:"
		# from the stuck step's start: the guest's own dump at 100 s idle, the watchdog's
		tr -d '\r' < "$_out/console.log" | tac | sed '/^GUEST-STEP start/q' | tac |
			grep -v '^GUEST-IDLE' | grep -A12 'Show Blocked State\|VMWATCH' | head -40 | sed 's/^/#   /'
		if [ "$_st" = "$_once" ] || [ $_boot -ge 3 ]; then
			# the step's own time: from its first start, less the boot that started it again
			_t0=$(awk -v s="$_st" '$2 == s { print int($1); exit }' "$_out/steps.log")
			_t1=$(awk -v s="$_st" '$2 == s { t = int($1) } END { print t }' "$_out/steps.log")
			_b=$(tail -1 "$_out/boots.log" | cut -d' ' -f1)
			_boot_s=$(( ${_t1:-0} > ${_b:-0} ? ${_t1:-0} - ${_b:-0} : 0 ))
			fail "kernel $_k: step $_st stuck twice ($(cat "$_out/stuck.why"); the limits: $STALL s, then $_stall s without progress, ${VM_TIMEOUT:-900} s a boot): failed $(( $(date +%s) - ${_t0:-0} )) s after it first started, $_boot_s s of them booting the guest again; console and task dump in $_out/console.log"
			return 1
		fi
		_once=$_st
		_stall=$((STALL / 2))
		diag "kernel $_k: booting again, from step $_st"
	done
}
for k in ${KERNELS:-5.10 6.1}; do
	case $k in 5.10) suite=bullseye;; 6.1) suite=bookworm;; *) fail "unknown kernel $k"; continue;; esac
	if ! "$IG_TOP/tests/kernels/fetch.sh" "$suite" "$KD/$k" > "$TMP/fetch-$k" 2>&1; then
		sed 's/^/# /' "$TMP/fetch-$k"
		skip "kernel $k" "cannot fetch Debian's $suite kernel (no network or archive?)"
		continue
	fi
	kver=$(cat "$KD/$k/kver")
	[ "$KD/$k/initrd.gz" -nt "$IG_TOP/tests/kernels/init.sh" ] || "$IG_TOP/tests/kernels/mkinitrd.sh" "$KD/$k/root" "$kver" \
		"$KD/$k/initrd.gz" > "$TMP/initrd-$k" 2>&1 || { fail "kernel $k: initramfs"; continue; }
	out=$KD/$k/out
	rm -rf "$out"; mkdir -p "$out"
	t0=$(date +%s)
	if ! boot_guest "$k" "$out"; then
		diag "kernel $kver: $(( $(date +%s) - t0 )) s in the VM"
		continue
	fi
	diag "kernel $kver: $(( $(date +%s) - t0 )) s in the VM"
	if [ ! -s "$out/summary.json" ]; then
		fail "kernel $k: the guest script wrote its summary"
		tail -20 "$out/console.log" | sed 's/^/# /'
		continue
	fi
	pass "kernel $k ($kver) boots and runs the guest script"
	sed 's/^/# /' "$out/check.txt"
	# the guest kernel's own accounting of each job's feeding threads (its
	# truth, tools/accuracy.py's oracle): what they waited for on that guest
	for n in storage gil pagefault; do
		oracle "$out/$n.truth.json" > "$out/$n.oracle"
	done
	/usr/bin/python3 - "$out/summary.json" "$k" "$out" <<'PY' > "$TMP/res-$k"
import json, os, sys
s = json.load(open(sys.argv[1])); k = sys.argv[2]
res = []
def check(ok, name, why=""):
    res.append(("PASS " if ok else "FAIL ") + "kernel %s: %s" % (k, name) +
               ("" if ok else "  [%s]" % why))
j = s["jobs"]
ready = s["check_rc"] == 0
check(ready, "check says ready", s["check_summary"])
for n in ("storage", "gil", "pagefault", "attach"):
    r = j[n]
    if ready:
        check(r["rc"] == 0 and "causes" in r, "check ready, so %s runs and reports" % n,
              "rc %s, %s" % (r["rc"], r.get("report_error") or r["err_tail"]))
    else:
        check(r["rc"] != 0 and r["err_tail"] and "error" in r["err_tail"][-1],
              "check not ready, so %s ends with an error line" % n, r["err_tail"])
want_compat = k in ("5.10",)
check(s["check_object"].startswith("compat") == want_compat,
      "check picks the %s object" % ("compat" if want_compat else "main"), s["check_object"])
# the first cause is judged by the guest's accounting of the job's feeding
# threads, as on the host (tests/agent.t): the designed cause must lead
# where the oracle agrees with the design; where they waited for a CPU
# more, cpu_starvation leads, or the design's cause with cpu_starvation
# second; undecided: one of the two leads
for n, want in (("storage", "storage"), ("gil", "gil"), ("pagefault", "page_fault")):
    c = j[n].get("causes") or [("none", 0)]
    names = [x[0] for x in c]
    try:
        verdict, text = open(os.path.join(sys.argv[3], n + ".oracle")).read().strip().split(" ", 1)
    except (OSError, ValueError):
        verdict, text = "None", "oracle: no truth"
    if verdict in ("design", "None"):
        check(names[0] == want and c[0][1] >= 0.3,
              "%s job: first cause %s [%s]" % (n, want, text), "got %s" % c)
    elif verdict == "cpu":
        check(names[0] == "cpu_starvation" or (names[0] == want and "cpu_starvation" in names[:2]),
              "%s job: waited for a CPU more than for %s: cpu_starvation leads, or %s with "
              "cpu_starvation second [%s]" % (n, want, want, text), "got %s" % c)
    else:
        check(names[0] in (want, "cpu_starvation"),
              "%s job: the oracle cannot decide between %s and cpu_starvation: one of them "
              "leads [%s]" % (n, want, text), "got %s" % c)
check(any(f.startswith("sample-") for f in j["storage"].get("files", [])),
      "storage job: the files read are named", j["storage"].get("files"))
check(j["storage"].get("block_reads", 0) > 0,
      "storage job: the reader's block requests are recorded (block_rq_insert/issue, "
      "whichever arguments this kernel passes)", j["storage"].get("block_reads"))
check(j["gil"].get("py_frames"), "gil job: Python frames of the feeder are named")
check(j["attach"].get("processes", 0) >= 1, "attach: the running GPU process is traced",
      j["attach"])
a = s["agent"]
check(a["found"], "agent: a GPU job started after it is found in a window report", a)
check(a["rc"] == 0 and "stuck" not in a, "agent: ends on SIGTERM (within 180 s)",
      "rc %s after %s s; %s" % (a["rc"], a.get("exit_s"), " | ".join(a.get("stuck", []))))
if k == "6.1":
    check(sum(l.endswith(" verified") for l in s["verified"]) >= 10,
          "6.1: the verifier's count per program is logged", s["verified"][:3])
print("\n".join(res))
PY
	while read -r st name; do
		if [ "$st" = PASS ]; then pass "$name"; else fail "$name"; fi
	done < "$TMP/res-$k"
	for n in storage gil pagefault; do
		diag "$k $n: $(python3 -c "import json;print(json.load(open('$out/summary.json'))['jobs']['$n'].get('causes'))")"
	done
	diag "$k verifier: $(tr '\n' ';' < "$out/verified.txt" | head -c 2000)"
done
done_testing

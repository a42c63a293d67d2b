#!/bin/bash
# The guest watchdog of tests/kernels.t, checked on a planted hang: with IG_GUEST_HANG=check the
# guest's first step sleeps for good, so no progress line comes; the watchdog must dump the
# guest's tasks (SysRq w, l, t through the QEMU monitor), stop the VM, boot it again from that
# step, and, stuck again, fail the step by name within 4 minutes of its first start.  One
# kernel (KERNELS, default 5.10), two short boots: about 4 minutes.
. "$(dirname "$0")/lib.sh"

need_root
[ "${IG_SKIP_LONG:-0}" = 1 ] && skip_all "a long suite (about 4 minutes): IG_LONG=1 make test, or make test-kernels"
command -v qemu-system-x86_64 > /dev/null || skip_all "no qemu-system-x86_64 (make deps)"
k=${KERNELS:-5.10}
k=${k%% *}
t0=$(date +%s)
KERNELS=$k IG_GUEST_HANG=check prove -v "$IG_TOP/tests/kernels.t" > "$TMP/kernels.tap" 2>&1
rc=$?
t1=$(date +%s)
grep -E '^(not ok|ok|#)' "$TMP/kernels.tap" | head -60 | sed 's/^/# /'
if grep -q '^1\.\.0 # SKIP' "$TMP/kernels.tap"; then
	skip "a planted hang fails its step" "$(sed -n 's/^1\.\.0 # SKIP //p' "$TMP/kernels.tap")"
	done_testing
	exit
fi
line=$(grep "^not ok .*kernel $k: step check stuck twice" "$TMP/kernels.tap" | head -1)
ok "kernels.t fails (exit $rc) with the stuck step named: ${line#not ok * - }" -- test $rc != 0 -a -n "$line"
secs=$(echo "$line" | sed -n 's/.*failed \([0-9]*\) s after it first started.*/\1/p')
boot=$(echo "$line" | sed -n 's/.*first started, \([0-9]*\) s of them booting.*/\1/p')
# the step's own time: the guest's second boot, slower on a loaded host, is apart
ok "the step failed within 240 s of its own time: ${secs:-?} s after it first started, ${boot:-?} s of them booting the guest again" -- \
	test -n "$secs" -a -n "$boot" -a "$(( ${secs:-999} - ${boot:-0} ))" -le 240
out=$IG_TOP/build/kernels/$k/out
ok "the guest's blocked tasks and its tasks were dumped on its console" -- \
	grep -q 'sysrq: Show Blocked State\|SysRq : Show Blocked State' "$out/console.log"
ok "the VM was booted again from the stuck step" -- grep -q 'booting again, from step check' "$TMP/kernels.tap"
diag "kernels.t with a planted hang: $((t1 - t0)) s in all"
done_testing

#!/bin/bash
# Least privilege, measured with setpriv: each mode works with exactly the
# capabilities idlegap(8) lists, is refused up front with one line naming
# the one taken away, runs the command as the invoking user without any of
# idlegap's capabilities, and keeps only what re-attaching needs.  Needs
# root (to hand out capabilities).
. "$(dirname "$0")/lib.sh"
need_root
command -v setpriv > /dev/null || skip_all "setpriv missing (util-linux)"
TS=$IG_TOP/build/trainsim
[ -x "$TS" ] || skip_all "build/trainsim missing (make)"
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
NOBODY=65534
cd "$IG_TOP" || exit 1
# A checkout nobody may not reach (a clone under a private directory):
# the programs the other users run, from a copy they can reach.
chmod 755 "$TMP"
if ! setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups --inh-caps=-all \
	test -r "$LD_LIBRARY_PATH/libcuda.so.1" -a -x "$IG" -a -x "$TS"; then
	mkdir -p "$TMP/bin" && cp "$IG" "$TS" "$TMP/bin/" &&
		cp -r "$IG_TOP/build/simgpu" "$TMP/bin/simgpu" && chmod -R a+rX "$TMP/bin" ||
		{ echo "Bail out! cannot copy the programs where nobody can run them"; exit 1; }
	IG=$TMP/bin/idlegap TS=$TMP/bin/trainsim LD_LIBRARY_PATH=$TMP/bin/simgpu
	diag "the checkout is out of nobody's reach: running copies from $TMP/bin"
fi

# as_user CAPS CMD...: as nobody, holding CAPS ("bpf,perfmon") and no other
as_user() {
	local c="-all${1:+,+${1//,/,+}}"; shift
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups --inh-caps="$c" \
		--ambient-caps="$c" --bounding-set="$c" "$@"
}
# as_root CAPS CMD...: uid 0, holding CAPS and no other
as_root() {
	local c="-all${1:+,+${1//,/,+}}"; shift
	setpriv --inh-caps=-all --bounding-set="$c" "$@"
}
# The set for run and attach: tp/ hooks read tracefs, which is root's.
MIN=bpf,perfmon
if grep -q 'SEC("tp/' bpf/idlegap.bpf.c && ! as_user "" test -x /sys/kernel/tracing/events; then
	MIN=$MIN,dac_read_search
fi
diag "minimal set for run and attach here: $MIN"
without() { echo ",$1," | sed "s/,$2,/,/; s/^,//; s/,$//"; }
# refused FILE CAP: exit 1, one line naming CAP and nothing traced
refused() {
	test "$2" = 1 && test "$(wc -l < "$1")" = 1 && grep -qi "missing.*CAP_$3" "$1"
}
# mapped PID: waits (10 s at most) until PID maps libcuda
mapped() {
	local i=0
	until grep -q libcuda /proc/$1/maps 2> /dev/null || [ $i -ge 1000 ]; do
		sleep 0.01; i=$((i + 1))
	done
}
run_ts() { "$IG" run "$@" -- "$TS" -s healthy -q -n 300; }

# --- report: no capability ---------------------------------------------------
run_ts -q -o "$TMP/r.igrec" 2> /dev/null
chmod 644 "$TMP/r.igrec"; chmod 755 "$TMP"
as_user "" "$IG" report "$TMP/r.igrec" > "$TMP/rep.txt" 2>&1
ok "report: needs no capability (exit $?)" -- grep -q '^GPU busy' "$TMP/rep.txt"

# --- run as a user holding capabilities (ambient) ------------------------------
as_user "$MIN" "$IG" run -- "$TS" -s healthy -q -n 300 > "$TMP/u.txt" 2> "$TMP/u.err"
rc=$?
ok "run as nobody with $MIN: traces the GPU work (exit $rc)" -- \
	sh -c "test $rc = 0 && grep -q '^GPU busy' '$TMP/u.txt'"
for cap in ${MIN//,/ }; do
	as_user "$(without $MIN $cap)" "$IG" run -- "$TS" -s healthy -q -n 300 > /dev/null 2> "$TMP/u-$cap.err"
	rc=$?
	ok "run as nobody without $cap: refused up front in one line naming it (exit $rc)" -- \
		refused "$TMP/u-$cap.err" $rc "$cap"
done
as_user "$MIN" "$IG" check > "$TMP/c.txt" 2>&1
ok "check as nobody with $MIN: ready (exit $?)" -- grep -q '^ready' "$TMP/c.txt"
as_user "$(without $MIN perfmon)" "$IG" check > "$TMP/c2.txt" 2>&1
rc=$?
ok "check as nobody without perfmon: not ready, names it (exit $rc)" -- \
	sh -c "test $rc = 1 && grep -q 'FAIL privileges.*missing CAP_PERFMON' '$TMP/c2.txt' && grep -q '^NOT READY' '$TMP/c2.txt'"
as_user "$MIN" "$IG" run -q -- sh -c 'grep -E "^Cap(Inh|Prm|Eff|Amb)" /proc/self/status' > "$TMP/uc.txt" 2> /dev/null
is "$(grep -c ':	0000000000000000$' "$TMP/uc.txt")" 4 \
	"run as nobody with ambient capabilities: the command holds none (CapInh/Prm/Eff/Amb 0)"
IDLEGAP_NO_UPROBE_MULTI=1 as_user "$MIN" "$IG" run -- "$TS" -s healthy -q -n 300 > /dev/null 2> "$TMP/pp.err"
rc=$?
ok "perf-event uprobe links: refused without sys_admin, naming it (exit $rc)" -- \
	refused "$TMP/pp.err" $rc SYS_ADMIN
IDLEGAP_NO_UPROBE_MULTI=1 as_user "$MIN,sys_admin" "$IG" run -- "$TS" -s healthy -q -n 300 > "$TMP/pp.txt" 2> /dev/null
ok "perf-event uprobe links: work with sys_admin (exit $?)" -- grep -q '^GPU busy' "$TMP/pp.txt"

# --- root (sudo): the command runs as the invoking user ----------------------
SW=bpf,perfmon,setuid,setgid
SUDO_UID=$NOBODY SUDO_GID=$NOBODY as_root "$SW" "$IG" run -q -- \
	sh -c 'id -u; grep -E "^Cap(Inh|Prm|Eff|Amb)" /proc/self/status' > "$TMP/s.txt" 2> "$TMP/s.err"
rc=$?
is "$rc:$(head -1 "$TMP/s.txt")" "0:$NOBODY" "sudo run with $SW: the command runs as SUDO_UID"
is "$(grep -c ':	0000000000000000$' "$TMP/s.txt")" 4 "sudo run: the command holds no capability"
SUDO_UID=$NOBODY SUDO_GID=$NOBODY as_root "$SW" "$IG" run -- "$TS" -s healthy -q -n 300 > "$TMP/st.txt" 2> /dev/null
ok "sudo run with $SW: the user's GPU work is traced (exit $?)" -- grep -q '^GPU busy' "$TMP/st.txt"
SUDO_UID=$NOBODY SUDO_GID=$NOBODY "$IG" run -q -- sh -c 'id -u; grep -E "^Cap(Inh|Prm|Eff|Amb)" /proc/self/status' \
	> "$TMP/sf.txt" 2> /dev/null
is "$(head -1 "$TMP/sf.txt"):$(grep -c ':	0000000000000000$' "$TMP/sf.txt")" "$NOBODY:4" \
	"sudo run as full root: the command runs as SUDO_UID with no capability"
SUDO_UID=$NOBODY SUDO_GID=$NOBODY as_root "$(without $SW setgid)" "$IG" run -- true > /dev/null 2> "$TMP/sg.err"
rc=$?
ok "sudo run without setgid: refused up front naming it (exit $rc)" -- refused "$TMP/sg.err" $rc SETGID
SUDO_UID=$NOBODY "$IG" run -q --as-root -- id -u > "$TMP/ar.txt" 2> /dev/null
is "$(cat "$TMP/ar.txt")" 0 "--as-root: the command runs as root"
"$IG" run -q --user nobody -- id -u > "$TMP/us.txt" 2> /dev/null
is "$(cat "$TMP/us.txt")" $NOBODY "--user nobody: the command runs as nobody"
"$IG" run -q --user nobody --as-root -- true > /dev/null 2> "$TMP/ex.err"
is "$?" 2 "--user with --as-root: a usage error"
as_root "$(without $MIN perfmon)" "$IG" run -- true > /dev/null 2> "$TMP/rp.err"
rc=$?
ok "root without perfmon: refused up front, told to grant it (exit $rc)" -- \
	sh -c "test $rc = 1 && grep -q 'missing CAP_PERFMON.*grant' '$TMP/rp.err' && ! grep -q sudo '$TMP/rp.err'"

# --- after attach: only what re-attaching needs ------------------------------
# The command reads idlegap's (its parent's) effective set while tracing.
"$IG" run -q --as-root -- sh -c 'grep ^CapEff /proc/$PPID/status' > "$TMP/k.txt" 2> /dev/null
is "$(cut -f2 "$TMP/k.txt")" "$(printf '%016x' $((1 << 19)))" \
	"root after attach keeps CAP_SYS_PTRACE alone"
"$IG" run -v -q --json "$TMP/k.json" -- sh -c 'grep ^CapEff /proc/$PPID/status' > "$TMP/k2.txt" 2> "$TMP/k2.err"
is "$(cut -f2 "$TMP/k2.txt")" "$(printf '%016x' $(((1 << 19) | (1 << 1))))" \
	"root with a --json FILE to write also keeps CAP_DAC_OVERRIDE"
ok "-v says what is kept and why" -- grep -q 'capabilities kept after attach: CAP_DAC_OVERRIDE, CAP_SYS_PTRACE (probing processes that load libcuda later' "$TMP/k2.err"
"$IG" run -q -o "$TMP/k.igrec" -- sh -c 'grep ^CapEff /proc/$PPID/status' > "$TMP/k3.txt" 2> /dev/null
is "$(cut -f2 "$TMP/k3.txt")" "$(printf '%016x' $((1 << 19)))" \
	"root writing a recording (open before attach) keeps CAP_SYS_PTRACE alone"

# --- attach ------------------------------------------------------------------
"$TS" -s healthy -q -n 100000 &
job=$!
mapped $job
as_user "$MIN" "$IG" attach -p $job -d 1 > "$TMP/a.txt" 2> "$TMP/a.err"
rc=$?
ok "attach to root's job, same mounts, as nobody with $MIN (exit $rc)" -- \
	sh -c "test $rc = 0 && grep -q '^GPU busy' '$TMP/a.txt'"
as_user "$(without $MIN bpf)" "$IG" attach -p $job -d 1 > /dev/null 2> "$TMP/a2.err"
rc=$?
ok "attach without bpf: refused up front naming it (exit $rc)" -- refused "$TMP/a2.err" $rc BPF
kill $job; wait $job 2> /dev/null
mkdir "$TMP/mnt"
unshare -m --propagation private sh -c 'mount -t tmpfs none "$1" && cp "$2" "$1"/ && LD_LIBRARY_PATH=$1 exec "$3" -s healthy -q -n 100000' \
	sh "$TMP/mnt" "$LD_LIBRARY_PATH/libcuda.so.1" "$TS" &
job=$!
mapped $job
as_user "$MIN" "$IG" attach -p $job -d 1 > /dev/null 2> "$TMP/n1.err"
rc=$?
ok "attach to root's job in its own mounts, without sys_ptrace: refused naming it (exit $rc)" -- \
	refused "$TMP/n1.err" $rc SYS_PTRACE
as_user "$MIN,sys_ptrace" "$IG" attach -p $job -d 1 > "$TMP/n2.txt" 2> /dev/null
ok "attach to root's job in its own mounts, with sys_ptrace (exit $?)" -- grep -q '^GPU busy' "$TMP/n2.txt"
kill $job; wait $job 2> /dev/null
done_testing

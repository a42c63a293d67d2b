#!/bin/sh
# test-arm64.sh: `make test-arm64`.  Boots Debian's arm64 kernel under
# qemu-system-aarch64 (TCG: any host), root on an ext4 disk made from a
# debootstrap'd arm64 Debian 12 with the cross-built tree (make ARCH=arm64
# all test-progs) in /opt/idlegap, runs tests/arm64/guest.sh there and
# prints its TAP; exits 0 when every check passed.  The root file system
# is cached under build/arm64/rootfs (debootstrap --arch arm64, its second
# stage through qemu-user-static); the kernel and busybox come with the
# sysroot (tools/arm64-sysroot.sh).  ARM64_VM_TIMEOUT (seconds, default
# 1800) bounds the guest; a guest with no progress line for ARM64_STALL_S
# seconds (default 120) is dumped, stopped and tried once more (see boot).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
A=$TOP/build/arm64
D=$A/deps
V=$A/vm
KVER=${ARM64_KVER:-6.1.0-50-arm64}
PKGS=python3,libbpf1,libelf1,libdw1,libjson-c5,libmicrohttpd12,zlib1g,libcmocka0,procps
die() { echo "test-arm64: $*" >&2; exit 1; }
for c in qemu-system-aarch64 qemu-aarch64-static debootstrap mkfs.ext4 depmod cpio; do
	command -v $c > /dev/null || die "no $c (make deps)"
done
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
[ -x "$A/idlegap" ] || die "build it first: make ARCH=arm64 all test-progs"
mkdir -p "$V"
t0=$(date +%s)

# --- kernel, modules, busybox --------------------------------------------------------
if [ ! -f "$V/kroot/boot/vmlinuz-$KVER" ]; then
	rm -rf "$V/kroot"
	dpkg -x "$D"/debs/linux-image-"$KVER"-unsigned_*_arm64.deb "$V/kroot"
	depmod -b "$V/kroot" "$KVER"
fi
if [ ! -x "$V/busybox/bin/busybox" ]; then
	rm -rf "$V/busybox"
	dpkg -x "$D"/debs/busybox-static_*_arm64.deb "$V/busybox"
fi

# --- the arm64 root file system (cached) ----------------------------------------------
if [ ! -f "$A/rootfs/etc/debian_version" ]; then
	# binfmt_misc runs the second stage's arm64 programs through qemu
	[ -e /proc/sys/fs/binfmt_misc/register ] ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	update-binfmts --enable qemu-aarch64 > /dev/null 2>&1 || true
	[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || die "binfmt_misc has no qemu-aarch64 (qemu-user-static)"
	rm -rf "$A/rootfs.tmp"
	echo "test-arm64: debootstrap --arch arm64 into build/arm64/rootfs (minutes)"
	debootstrap --foreign --arch=arm64 --variant=minbase --include=$PKGS bookworm \
		"$A/rootfs.tmp" http://deb.debian.org/debian > "$A/debootstrap.log" 2>&1 ||
		die "debootstrap failed (see $A/debootstrap.log)"
	# the interpreter where binfmt_misc looks for it inside the chroot
	interp=$(sed -n 's/^interpreter //p' /proc/sys/fs/binfmt_misc/qemu-aarch64)
	mkdir -p "$A/rootfs.tmp$(dirname "$interp")"
	cp "$(command -v qemu-aarch64-static)" "$A/rootfs.tmp$interp"
	chroot "$A/rootfs.tmp" /debootstrap/debootstrap --second-stage >> "$A/debootstrap.log" 2>&1 ||
		die "debootstrap's second stage failed (see $A/debootstrap.log)"
	rm -f "$A/rootfs.tmp$interp"
	mv "$A/rootfs.tmp" "$A/rootfs"
fi

# --- initramfs: busybox, the modules that mount the root disk --------------------------
I=$V/initrd.d
rm -rf "$I"
mkdir -p "$I/bin" "$I/dev" "$I/proc" "$I/sys" "$I/newroot" "$I/lib/modules"
cp "$V/busybox/bin/busybox" "$I/bin/busybox"
cp "$TOP/tests/arm64/init.sh" "$I/init"
chmod 755 "$I/init"
MD=$V/kroot/lib/modules/$KVER
: > "$I/modules.order"
added=" "
add() {	# REL: the module at REL (under $MD) after its dependencies
	case "$added" in *" $1 "*) return ;; esac
	for dep in $(grep "^$1:" "$MD/modules.dep" | cut -d: -f2-); do add "$dep"; done
	mkdir -p "$I/lib/modules/$(dirname "$1")"
	cp "$MD/$1" "$I/lib/modules/$1"
	echo "$1" >> "$I/modules.order"
	added="$added$1 "
}
for m in crc32c_generic libcrc32c crc16 virtio_mmio virtio_blk mbcache jbd2 ext4; do
	rel=$(grep -oE "^([^:]*/)?$m\.ko(\.xz|\.zst)?:" "$MD/modules.dep" | head -1 | tr -d :) || true
	[ -n "$rel" ] && add "$rel"
done
(cd "$I" && find . | cpio -o -H newc 2> /dev/null | gzip -1 > "$V/initrd.gz")

# --- the root disk: the root file system and the cross-built tree ----------------------
S=$V/stage
rm -rf "$S"
cp -a "$A/rootfs" "$S"
G=$S/opt/idlegap
mkdir -p "$G/build/tests" "$G/build/simgpu" "$G/tools" "$G/tests" "$G/workload"
cp "$TOP/workload/spin.ptx" "$G/workload/"
cp "$A/idlegap" "$A/trainsim" "$G/build/"
cp "$A/simgpu/libcuda.so.1" "$G/build/simgpu/"
for f in "$A"/tests/test_*; do
	case $f in *.d) ;; *) cp "$f" "$G/build/tests/" ;; esac
done
cp -a "$TOP/tests/lib.sh" "$TOP/tests/lib" "$TOP/tests/py" "$TOP/tests/arm64" "$TOP/tests/fixtures" "$G/tests/"
cp "$TOP"/tools/trainsim*.py "$TOP"/tools/truth*.py "$G/tools/"
rm -f "$V/root.img"
mkfs.ext4 -q -F -d "$S" "$V/root.img" 3G || die "mkfs.ext4 -d failed"
rm -rf "$S"
t1=$(date +%s)

# --- boot ----------------------------------------------------------------------------------
# under the guest watchdog (tests/kernels/vmwatch.py): no progress line (IGVM, a TAP line,
# IGVM-STEP, IGVM-PROGRESS) for ARM64_STALL_S seconds (default 120): the vCPUs' registers and
# the guest's tasks are dumped, the VM stopped and booted again for one more try (the whole guest
# script: its TAP numbers run through it); a part stuck twice fails, named.
# ARM64_GUEST_HANG=PART plants a hang in a part of tests/arm64/guest.sh.
echo "test-arm64: booting $KVER under qemu-system-aarch64 (TCG); set-up took $((t1 - t0)) s"
once='' rc=0
for boot in 1 2; do
	rm -f "$V/console.log" "$V/monitor.sock"
	rc=0
	"$TOP/tests/kernels/vmwatch.py" --console "$V/console.log" --monitor "$V/monitor.sock" \
		--stall "${ARM64_STALL_S:-120}" --timeout "${ARM64_VM_TIMEOUT:-1800}" \
		--stuck-file "$V/stuck" --progress '^(IGVM|ok |not ok |IGVM-STEP|IGVM-PROGRESS)' \
		--step '^IGVM-STEP start (\S+)' -- \
		qemu-system-aarch64 -machine virt -cpu max,pauth-impdef=on \
		-smp 2 -m 3G -nographic -no-reboot \
		-kernel "$V/kroot/boot/vmlinuz-$KVER" -initrd "$V/initrd.gz" \
		-drive "file=$V/root.img,format=raw,if=none,id=hd0" -device virtio-blk-device,drive=hd0 \
		-append "console=ttyAMA0 panic=-1 loglevel=4${ARM64_GUEST_HANG:+ ighang=$ARM64_GUEST_HANG}" -nic none \
		-qmp unix:"$V/monitor.sock",server=on,wait=off -serial stdio || rc=$?
	[ $rc = 124 ] && [ -s "$V/stuck" ] || break
	st=$(cat "$V/stuck")
	cp "$V/console.log" "$V/console-stuck-$boot.log"
	if [ "$st" = "$once" ]; then
		echo "test-arm64: part $st of the guest stuck twice (no progress line for ${ARM64_STALL_S:-120} s); console and task dumps in $V/console-stuck-1.log, $V/console-stuck-2.log"
		exit 1
	fi
	once=$st
	echo "test-arm64: part $st of the guest made no progress for ${ARM64_STALL_S:-120} s (dump in $V/console-stuck-$boot.log); booting again"
done
t2=$(date +%s)
tr -d '\r' < "$V/console.log" > "$V/console.txt"
grep -E '^(ok|not ok|1\.\.|#|IGVM:)' "$V/console.txt" > "$V/guest.tap" || true
grep -E '^(ok|not ok|1\.\.)' "$V/guest.tap" > "$V/guest.tap.only" || true
cat "$V/guest.tap"
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$V/guest.tap.only" | tail -1)
pass=$(grep -c '^ok ' "$V/guest.tap.only" || true)
failed=$(grep -c '^not ok ' "$V/guest.tap.only" || true)
echo "test-arm64: $pass passed, $failed failed of ${plan:-no plan}; guest $((t2 - t1)) s, all $((t2 - t0)) s (qemu exit $rc; console in $V/console.log)"
[ -n "$plan" ] && [ "$failed" = 0 ] && [ "$pass" = "$plan" ]

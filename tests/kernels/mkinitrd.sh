#!/bin/bash
# mkinitrd.sh KROOT KVER OUT.cpio.gz
#   KROOT: where the kernel .deb was extracted with dpkg -x (has lib/modules/KVER)
#   Builds a tiny initramfs: static busybox + the modules needed to mount a
#   virtio-9p root and a virtio-blk ext4 disk, and /init (init.sh beside this script).
set -euo pipefail
KROOT=$1 KVER=$2 OUT=$(realpath -m "$3")
MD=$KROOT/lib/modules/$KVER
[ -f "$MD/modules.dep" ] || depmod -b "$KROOT" "$KVER"
W=$(mktemp -d)
mkdir -p "$W"/{bin,dev,proc,sys,newroot,lib/modules}
cp /bin/busybox "$W/bin/busybox"
cp "$(dirname "$0")/init.sh" "$W/init"
chmod 755 "$W/init"

# wanted modules (those built in, or absent on this kernel, are skipped);
# crc32c_generic first: ext4 asks the crypto API for crc32c
WANT="crc32c_generic crc32c-intel virtio virtio_ring virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
      virtio_blk crc16 mbcache jbd2 ext4 netfs fscache 9pnet 9pnet_virtio 9p"
: > "$W/modules.order"
added=" "
add() {   # add module $1 (path relative to $MD) after its dependencies
	local rel=$1 dep
	case "$added" in *" $rel "*) return;; esac
	for dep in $(grep -E "^$rel:" "$MD/modules.dep" | cut -d: -f2-); do add "$dep"; done
	case "$added" in *" $rel "*) return;; esac
	mkdir -p "$W/lib/modules/$(dirname "$rel")"
	cp "$MD/$rel" "$W/lib/modules/$rel"
	echo "$rel" >> "$W/modules.order"
	added="$added$rel "
}
for m in $WANT; do
	m_=${m//-/[-_]}
	rel=$(grep -oE "^([^:]*/)?${m_}\.ko(\.xz|\.zst)?:" "$MD/modules.dep" | head -1 | tr -d :) || true
	if [ -n "$rel" ]; then add "$rel"
	elif grep -qE "/${m_}\.ko$" "$MD/modules.builtin" 2>/dev/null; then echo "builtin: $m"
	else echo "absent:  $m"; fi
done
echo "modules in initramfs:"; sed 's/^/  /' "$W/modules.order"
(cd "$W" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -9 > "$OUT")
rm -rf "$W"
ls -la "$OUT"

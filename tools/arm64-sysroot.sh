#!/bin/sh
# arm64-sysroot.sh DIR: Debian's arm64 libraries and headers the build links
# (libbpf, libelf, libdw, zlib, json-c, libmicrohttpd, cmocka, and what they
# load), unpacked under DIR/sysroot with dpkg -x; the C library and kernel
# headers come from the cross toolchain (libc6-dev-arm64-cross).  Also the
# arm64 kernel and busybox `make test-arm64` boots, under DIR/debs.
set -eu
D=$1
T=$(cd "$(dirname "$0")" && pwd)
DEV="libbpf-dev libelf-dev libdw-dev zlib1g-dev libjson-c-dev libmicrohttpd-dev libcmocka-dev"
KVER=${ARM64_KVER:-6.1.0-50-arm64}
"$T/arm64-apt.sh" "$D/apt" update > "$D/apt.log" 2>&1 ||
	{ echo "arm64-sysroot: apt-get update failed (see $D/apt.log)" >&2; exit 1; }
# shellcheck disable=SC2086
"$T/arm64-apt.sh" "$D/apt" -y --download-only install $DEV >> "$D/apt.log" 2>&1 ||
	{ echo "arm64-sysroot: downloading $DEV failed (see $D/apt.log)" >&2; exit 1; }
rm -rf "$D/sysroot.tmp"
mkdir -p "$D/sysroot.tmp" "$D/debs"
for deb in "$D"/apt/cache/archives/*.deb; do
	name=$(basename "$deb" | sed 's/_.*//')
	case $name in
	# the toolchain's own C library headers, not a second copy
	libc6-dev|libc-dev-bin|libc-devtools|linux-libc-dev|libcrypt-dev|libnsl-dev|libtirpc-dev) ;;
	lib*|zlib*)
		dpkg -x "$deb" "$D/sysroot.tmp"
		# its file list where dpkg keeps one (deploy/mkimage.py reads it)
		mkdir -p "$D/sysroot.tmp/var/lib/dpkg/info"
		dpkg-deb -c "$deb" | awk '{ sub(/^\./, "", $6); if ($6 != "/") print $6 }' |
			sed 's|/$||' > "$D/sysroot.tmp/var/lib/dpkg/info/$name.list" ;;
	esac
done
rm -rf "$D/sysroot"
mv "$D/sysroot.tmp" "$D/sysroot"
(cd "$D/debs" && "$T/arm64-apt.sh" ../apt download "linux-image-$KVER-unsigned" busybox-static >> ../apt.log 2>&1) ||
	{ echo "arm64-sysroot: downloading the arm64 kernel $KVER failed (see $D/apt.log)" >&2; exit 1; }
echo "arm64 sysroot in $D/sysroot; kernel and busybox in $D/debs"

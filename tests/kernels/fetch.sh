#!/bin/bash
# fetch.sh SUITE DIR
#   Downloads Debian's current amd64 kernel of SUITE (bookworm: 6.1, bullseye: 5.10) and unpacks
#   it under DIR (DIR/root: the dpkg -x tree, DIR/kver: its version, DIR/vmlinuz).  apt-get runs
#   with its own sources list, state and cache under DIR/apt: the machine's apt configuration and
#   package state are never read or changed.  A second call with DIR/kver present does nothing.
set -euo pipefail
SUITE=$1 DIR=$2
[ -s "$DIR/kver" ] && [ -f "$DIR/vmlinuz" ] && exit 0
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
. "$(dirname "$0")/../lib/privapt.sh"
private_apt "$DIR" "$SUITE"
apt-get -q update >/dev/null
# the meta package names the current ABI: linux-image-amd64 -> linux-image-X.Y.Z-N-amd64
pkg=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -1)
[ -n "$pkg" ] || { echo "fetch.sh: no linux-image-amd64 in $SUITE" >&2; exit 1; }
kver=${pkg#linux-image-}
# the -unsigned package is the same kernel without the secure-boot signature (smaller, no shim)
if apt-cache show "$pkg-unsigned" >/dev/null 2>&1; then pkg=$pkg-unsigned; fi
(cd "$DIR" && rm -f linux-image-*.deb && apt-get -q download "$pkg" >/dev/null)
rm -rf "$DIR/root"
dpkg -x "$DIR"/linux-image-*.deb "$DIR/root"
cp "$DIR/root/boot/vmlinuz-$kver" "$DIR/vmlinuz"
rm -f "$DIR"/linux-image-*.deb
echo "$kver" > "$DIR/kver"
echo "fetched $kver ($SUITE)"

#!/bin/bash
# fetch315.sh DIR ROOT
#   Unpacks Debian unstable's python3.15 (a pre-release) into ROOT: the
#   interpreter, its library and standard library (dpkg -x of python3.15-minimal,
#   libpython3.15-minimal, libpython3.15-stdlib), not installed by dpkg, so the
#   root's packages stay forky's.  apt-get runs with its own sources list,
#   state and cache under DIR (as tests/kernels/fetch.sh): the machine's apt
#   configuration and package state are never read or changed (the archive
#   copy reached may be older than its Valid-Until: not checked).  Writes
#   DIR/version; exit 1 when unstable has no python3.15.
set -euo pipefail
DIR=$1 ROOT=$2
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
. "$(dirname "$0")/../lib/privapt.sh"
private_apt "$DIR" unstable 'Acquire::Check-Valid-Until "false";'
apt-get -q update > /dev/null
pkgs="python3.15-minimal libpython3.15-minimal libpython3.15-stdlib"
for p in $pkgs; do
	apt-cache show "$p" > /dev/null 2>&1 || { echo "fetch315.sh: no $p in unstable" >&2; exit 1; }
done
(cd "$DIR" && rm -f ./*.deb && apt-get -q download $pkgs > /dev/null)
for d in "$DIR"/*.deb; do dpkg -x "$d" "$ROOT"; done
apt-cache show python3.15-minimal | sed -n 's/^Version: //p' | head -1 > "$DIR/version"
rm -f "$DIR"/*.deb
echo "python3.15 $(cat "$DIR/version") unpacked into $ROOT"

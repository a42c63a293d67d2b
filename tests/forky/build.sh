#!/bin/bash
# build.sh DIR
#   Makes DIR/root, the test fixture of the current Python stack: a Debian
#   forky (testing) root made by debootstrap from the Debian archive, with
#   python3.14 and python3-torch (the CPU build), and python3.15 from Debian
#   unstable unpacked into it (tests/forky/fetch315.sh; DIR/py315.ver says
#   why when unstable has none).  debootstrap writes only under DIR: the
#   machine's own apt state is never read or changed.  /ig (where
#   tests/forky/container.sh binds this tree) and /.old (for pivot_root) are
#   made in it.  DIR/ok marks it complete; a second call then does nothing.
#   Needs root (debootstrap), about 2 GiB and a few minutes.
set -euo pipefail
DIR=$1
[ -f "$DIR/ok" ] && exit 0
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
R=$DIR/root
if [ ! -f "$DIR/bootstrapped" ]; then
	rm -rf "$R"
	# forky is the testing suite: debootstrap's sid script makes it
	debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		--include=python3.14,python3-torch,python3-numpy \
		forky "$R" http://deb.debian.org/debian /usr/share/debootstrap/scripts/sid
	touch "$DIR/bootstrapped"
fi
if [ ! -x "$R/usr/bin/python3.15" ]; then
	"$HERE/fetch315.sh" "$DIR/py315" "$R" ||
		echo "python3.15 not fetched from unstable (see above)" > "$DIR/py315.ver"
fi
mkdir -p "$R/ig" "$R/.old"
rm -f "$R/var/cache/apt/archives/"*.deb
touch "$DIR/ok"
echo "forky root ready in $R"

#!/bin/bash
# build.sh DIR
#   Builds DIR/py314t, the free-threaded CPython test fixture
#   (tests/freethreaded.t): CPython 3.14's release source configured with
#   --disable-gil, frame pointers kept, installed under DIR/py314t.  The
#   source is the upstream tarball as the Ubuntu archive carries it for its
#   python3.14 package (IG_PY314T_URL overrides where it comes from); it is
#   checked against the sha256 below before anything is built.  DIR/ok
#   marks it complete; a second call then does nothing.  No root is needed;
#   about 400 MiB and 10 to 20 minutes on 2 CPUs.
set -euo pipefail
DIR=$1
[ -f "$DIR/ok" ] && exit 0
VER=3.14.4
SHA=d923c51303e38e249136fc1bdf3568d56ecb03214efdef48516176d3d7faaef8
URL=${IG_PY314T_URL:-http://archive.ubuntu.com/ubuntu/pool/main/p/python3.14/python3.14_$VER.orig.tar.xz}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
SRC=$DIR/src.tar.xz
if ! echo "$SHA  $SRC" | sha256sum -c --status 2>/dev/null; then
	curl -fsS --retry 3 -o "$SRC.part" "$URL" ||
		{ echo "build.sh: cannot fetch $URL" >&2; exit 1; }
	echo "$SHA  $SRC.part" | sha256sum -c --status ||
		{ echo "build.sh: $URL: sha256 is not $SHA" >&2; rm -f "$SRC.part"; exit 1; }
	mv "$SRC.part" "$SRC"
fi
rm -rf "$DIR/Python-$VER" "$DIR/py314t"
tar -C "$DIR" -xJf "$SRC"
cd "$DIR/Python-$VER"
# frame pointers, so native stacks walk through the interpreter as they do
# in Debian's builds; no PGO (minutes more, the same layout)
./configure --disable-gil --prefix="$DIR/py314t" --without-ensurepip \
	CFLAGS="-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer" > "$DIR/configure.log"
make -j"$(nproc)" > "$DIR/make.log" 2>&1 || { tail -20 "$DIR/make.log" >&2; exit 1; }
make install > "$DIR/install.log" 2>&1 || { tail -20 "$DIR/install.log" >&2; exit 1; }
cd "$DIR" && rm -rf "Python-$VER"
"$DIR/py314t/bin/python3.14t" -c 'import ctypes, sys; assert not sys._is_gil_enabled(); print(sys.version)' > "$DIR/version"
touch "$DIR/ok"
echo "free-threaded CPython $VER ready in $DIR/py314t"

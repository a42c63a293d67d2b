#!/bin/sh
# container.sh ROOT CMD...
#   Runs CMD as a container of ROOT (a root made by tests/forky/build.sh):
#   in its own mount and pid namespaces (the command is pid 1 there), ROOT its root by pivot_root, with its own /proc, and
#   this tree at /ig (its tools, workload and build/simgpu, the simulated
#   libcuda), bound.  Needs root.  The command's exit status is its own.
set -eu
ROOT=$(cd "$1" && pwd)
shift
TOP=$(cd "$(dirname "$0")/../.." && pwd)
export TMPDIR=/tmp
exec unshare -m --propagation private --pid --fork --kill-child sh -c '
set -e
R=$1 TOP=$2
shift 2
mount --bind "$R" "$R"
mount --bind "$TOP" "$R/ig"
mount -t proc proc "$R/proc"
cd "$R"
pivot_root . .old
exec /usr/sbin/chroot . /bin/sh -c "umount -l /.old && cd / && exec \"\$@\"" sh "$@"
' container "$ROOT" "$TOP" "$@"

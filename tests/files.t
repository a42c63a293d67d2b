#!/bin/sh
# Storage waits reach files: a traced job's cold reads come back with each
# file's path as the job names it (here inside a private mount namespace,
# through a bind mount), its mount point and file system type, and the
# storage time summed per mount.  Needs root.
. "$(dirname "$0")/lib.sh"
need_root
TS=$IG_TOP/build/trainsim
[ -x "$TS" ] || skip_all "build first: make all"
command -v unshare >/dev/null || skip_all "no unshare(1)"
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu

DS=$TMP/ds
MNT=$TMP/mnt
mkdir -p "$DS" "$MNT"
# $TMP may be a tmpfs, whose reads never wait for a disk: use /var/tmp
# when it is not, as trainsim's own default does with /tmp.
for d in "$TMP" /var/tmp /tmp; do
	case $(findmnt -n -o FSTYPE -T "$d") in tmpfs|ramfs) continue ;; esac
	DS=$(mktemp -d "$d/idlegap-files.XXXXXX") && break
done
trap 'rm -rf "$DS"; rm -rf "$TMP"' EXIT
FST=$(findmnt -n -o FSTYPE -T "$DS")
diag "dataset in $DS ($FST)"

# The job sees its dataset at $MNT only, in its own mount namespace.
"$IG" run -q --json "$TMP/r.json" -- unshare -m --propagation private sh -c \
	"mount --bind '$DS' '$MNT' && exec '$TS' -s storage --data '$MNT' --data-mb 16 -t 3 -q" \
	2> "$TMP/err"
is "$?" 0 "idlegap traces a job in its own mount namespace"
sed 's/^/# /' "$TMP/err"

pychecks "$TMP/r.json" "$MNT" "$FST" <<'PY'
import json, sys
from tap import check
j, mnt, fst = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
st = [c for c in j["causes"] if c["cause"] == "storage"]
check(st, "the job waited on storage", "causes %s" % [c["cause"] for c in j["causes"]])
det = st[0]["details"] if st else []
files = [d for d in det if d["kind"] == "file"]
mounts = [d for d in det if d["kind"] == "mount"]
print("# %s" % json.dumps(det[:3]))
check(files and all(f["path"] == "%s/%s" % (mnt, f["file"]) for f in files),
      "file paths are as the job names them (%s/...)" % mnt,
      "%s" % [f.get("path") for f in files[:3]])
check(files and all(f["mount"] == mnt and f["fstype"] == fst for f in files),
      "files carry their mount point and file system type (%s)" % fst)
m = [x for x in mounts if x["mount"] == mnt]
check(m and m[0]["fstype"] == fst and m[0]["files"] >= 2,
      "the mount counts its files", "%s" % mounts)
check(m and abs(m[0]["seconds"] - st[0]["seconds"]) < 0.01 * st[0]["seconds"] + 1e-3,
      "the mount holds the storage time (%.3f of %.3f s)" % (
          m[0]["seconds"] if m else 0, st[0]["seconds"] if st else 0))
PY
done_testing

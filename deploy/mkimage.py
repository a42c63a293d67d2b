#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Builds idlegap's container image without a registry or a container
runtime: an OCI image archive (oci-archive, one layer) that holds the given
programs, the shared libraries they load (found from their ELF dynamic
sections, as the loader would), the man page and the Debian copyright files
of the packages those libraries come from.  No shell, no package manager.

  mkimage.py --arch amd64 --tag idlegap:0.1 --out IMAGE.oci.tar \
      [--root DIR]... [--entrypoint PATH] [--cmd ARG]... \
      [--label K=V]... SRC:DEST...

SRC is a file of this build, DEST its path in the image.  Libraries are
looked for in each --root (a Debian tree: / for the build machine's own
architecture, an unpacked sysroot for another) under the architecture's
multiarch directories.  The archive is the same bytes for the same inputs
(file times are SOURCE_DATE_EPOCH, or 0).  `podman load -i IMAGE.oci.tar`
or `skopeo copy oci-archive:IMAGE.oci.tar docker://...` take it.
"""
import argparse
import datetime
import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile

ARCHES = {
    # OCI architecture: (multiarch triplet, ELF machine as readelf names it)
    "amd64": ("x86_64-linux-gnu", "Advanced Micro Devices X86-64"),
    "arm64": ("aarch64-linux-gnu", "AArch64"),
}


def die(msg):
    print("mkimage: " + msg, file=sys.stderr)
    sys.exit(1)


def readelf(path, flag):
    try:
        return subprocess.run(["readelf", flag, "-W", path], check=True,
                              capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        die("%s: not an ELF file readelf can read (%s)" % (path, e))


def elf_machine(path):
    m = re.search(r"^\s*Machine:\s*(.*)$", readelf(path, "-h"), re.M)
    return m.group(1).strip() if m else None


class Tree:
    """The image's files: path in the image -> (kind, source or target)."""

    def __init__(self, roots, triplet):
        self.roots = roots
        self.triplet = triplet
        self.entries = {}

    def dir(self, path):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p and p not in self.entries:
                self.entries[p] = ("dir", None)

    def add(self, dest, kind, what):
        dest = dest.strip("/")
        old = self.entries.get(dest)
        if old and old != (kind, what) and old[0] != "dir":
            die("%s: two different files for one path" % dest)
        self.dir(os.path.dirname(dest))
        self.entries[dest] = (kind, what)

    def add_from_root(self, root, path):
        """Adds root/path as the image's /path, with each symbolic link on
        the way (Debian's /lib -> usr/lib, a library's soname link) kept as
        a link; returns the image path of the file itself."""
        parts = [p for p in path.split("/") if p]
        done = []
        hops = 0
        while parts:
            name = parts.pop(0)
            if name == "..":
                if done:
                    done.pop()
                continue
            if name == ".":
                continue
            cur = "/".join(done + [name])
            host = os.path.join(root, cur)
            if os.path.islink(host):
                hops += 1
                if hops > 40:
                    die("%s: too many symbolic links" % path)
                target = os.readlink(host)
                self.add(cur, "link", target)
                if target.startswith("/"):
                    done = []
                parts = [p for p in target.split("/") if p] + parts
                continue
            if not os.path.exists(host):
                return None
            done.append(name)
        cur = "/".join(done)
        host = os.path.join(root, cur)
        if os.path.isdir(host):
            self.dir(cur)
        else:
            self.add(cur, "file", host)
        return cur

    def find_lib(self, name):
        dirs = ["lib/" + self.triplet, "usr/lib/" + self.triplet, "lib", "usr/lib"]
        for root in self.roots:
            for d in dirs:
                if os.path.exists(os.path.join(root, d, name)):
                    return root, d + "/" + name
        return None


def needed(path):
    out = readelf(path, "-d")
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def interpreter(path):
    m = re.search(r"Requesting program interpreter: ([^\]]+)\]", readelf(path, "-l"))
    return m.group(1) if m else None


def add_elf_closure(tree, machine, srcs):
    """Adds the interpreter and every library the programs load, at the
    paths the loader finds them; returns the host paths used."""
    seen, todo, used = set(), list(srcs), []
    for s in srcs:
        interp = interpreter(s)
        if interp:
            hit = None
            for root in tree.roots:
                if os.path.exists(os.path.join(root, interp.lstrip("/"))):
                    hit = tree.add_from_root(root, interp)
                    if hit:
                        used.append(os.path.join(root, hit))
                        break
            if not hit:
                die("%s: its loader %s is in no root" % (s, interp))
    while todo:
        f = todo.pop()
        for lib in needed(f):
            if lib in seen:
                continue
            seen.add(lib)
            hit = tree.find_lib(lib)
            if not hit:
                die("%s needs %s, which is in no root (%s)" % (f, lib, ", ".join(tree.roots)))
            root, rel = hit
            real = tree.add_from_root(root, rel)
            host = os.path.join(root, real)
            if elf_machine(host) != machine:
                die("%s is for %s, not %s" % (host, elf_machine(host), machine))
            used.append(host)
            todo.append(host)
    return used


def debian_copyrights(tree, hosts):
    """The copyright file of each Debian package a library comes from, by
    the package file lists (var/lib/dpkg/info/*.list) under its root; an
    unpacked sysroot has them from tools/arm64-sysroot.sh."""
    for root in tree.roots:
        info = os.path.join(root, "var/lib/dpkg/info")
        if not os.path.isdir(info):
            continue
        want = set()
        for h in hosts:
            if not os.path.abspath(h).startswith(os.path.abspath(root).rstrip("/") + "/"):
                continue
            rel = "/" + os.path.relpath(h, root)
            want.add(rel)
            # a merged-/usr file listed by its path before the merge
            if rel.startswith("/usr/"):
                want.add(rel[4:])
        pkgs = set()
        for name in sorted(os.listdir(info)):
            if not name.endswith(".list"):
                continue
            with open(os.path.join(info, name), errors="replace") as f:
                if want & {line.rstrip("\n") for line in f}:
                    pkgs.add(name[:-5].split(":")[0])
        for p in sorted(pkgs):
            rel = "usr/share/doc/%s/copyright" % p
            host = os.path.join(root, rel)
            if os.path.isfile(host) and not os.path.islink(host):
                tree.add(rel, "file", host)


def layer_bytes(tree, mtime):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(tree.entries):
            kind, what = tree.entries[path]
            ti = tarfile.TarInfo(path)
            ti.mtime = mtime
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = ""
            if kind == "dir":
                ti.type = tarfile.DIRTYPE
                ti.mode = 0o1777 if path == "tmp" else 0o755
                tar.addfile(ti)
            elif kind == "link":
                ti.type = tarfile.SYMTYPE
                ti.linkname = what
                ti.mode = 0o777
                tar.addfile(ti)
            else:
                st = os.stat(what)
                ti.size = st.st_size
                ti.mode = 0o755 if st.st_mode & 0o111 else 0o644
                with open(what, "rb") as f:
                    tar.addfile(ti, f)
    return buf.getvalue()


def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", required=True, choices=sorted(ARCHES))
    ap.add_argument("--tag", required=True, help="NAME:VERSION")
    ap.add_argument("--out", required=True)
    ap.add_argument("--root", action="append", default=[])
    ap.add_argument("--entrypoint")
    ap.add_argument("--cmd", action="append", default=[])
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("files", nargs="+", metavar="SRC:DEST")
    a = ap.parse_args()

    if not re.fullmatch(r"[a-z0-9][a-z0-9._/-]*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", a.tag):
        die("--tag %r: want NAME:VERSION" % a.tag)
    triplet, machine = ARCHES[a.arch]
    roots = a.root or ["/"]
    for r in roots:
        if not os.path.isdir(r):
            die("--root %s: no such directory" % r)
    tree = Tree(roots, triplet)
    elfs = []
    for spec in a.files:
        src, sep, dest = spec.partition(":")
        if not sep or not dest.startswith("/"):
            die("%r: want SRC:/DEST" % spec)
        if not os.path.isfile(src):
            die("%s: no such file" % src)
        tree.add(dest, "file", os.path.abspath(src))
        with open(src, "rb") as f:
            if f.read(4) == b"\x7fELF":
                if elf_machine(src) != machine:
                    die("%s is for %s, not %s (--arch %s)" % (src, elf_machine(src), machine, a.arch))
                elfs.append(src)
    libs = add_elf_closure(tree, machine, elfs)
    debian_copyrights(tree, libs)
    for d in ("tmp", "proc", "sys", "dev", "etc"):
        tree.dir(d)

    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    layer = layer_bytes(tree, mtime)
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    gz = io.BytesIO()
    with gzip.GzipFile(fileobj=gz, mode="wb", mtime=0, compresslevel=9) as g:
        g.write(layer)
    layer_d, layer_b = blob(gz.getvalue())

    name, version = a.tag.rsplit(":", 1)
    labels = {"org.opencontainers.image.title": os.path.basename(name),
              "org.opencontainers.image.version": version}
    for kv in a.label:
        k, sep, v = kv.partition("=")
        if not sep:
            die("--label %r: want KEY=VALUE" % kv)
        labels[k] = v
    created = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    cfg = {
        "created": created,
        "architecture": a.arch,
        "os": "linux",
        "config": {
            "Env": ["PATH=/usr/sbin:/usr/bin"] + a.env,
            "Entrypoint": [a.entrypoint] if a.entrypoint else None,
            "Cmd": a.cmd or None,
            "WorkingDir": "/",
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": created, "created_by": "deploy/mkimage.py"}],
    }
    cfg["config"] = {k: v for k, v in cfg["config"].items() if v is not None}
    if a.arch == "arm64":
        cfg["variant"] = "v8"
    cfg_d, cfg_b = blob(json.dumps(cfg, sort_keys=True, separators=(",", ":")).encode())
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": cfg_d, "size": len(cfg_b)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": layer_d, "size": len(layer_b)}],
        "annotations": {"org.opencontainers.image.version": version},
    }
    man_d, man_b = blob(json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode())
    platform = {"architecture": a.arch, "os": "linux"}
    if a.arch == "arm64":
        platform["variant"] = "v8"
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "digest": man_d, "size": len(man_b), "platform": platform,
                       "annotations": {"org.opencontainers.image.ref.name": a.tag}}],
    }
    files = [
        ("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
        ("index.json", json.dumps(index, sort_keys=True, indent=1).encode() + b"\n"),
    ]
    for d, b in ((layer_d, layer_b), (cfg_d, cfg_b), (man_d, man_b)):
        files.append(("blobs/sha256/" + d.split(":")[1], b))
    tmp = a.out + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
        for d in ("blobs", "blobs/sha256"):
            ti = tarfile.TarInfo(d)
            ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, mtime
            tar.addfile(ti)
        for path, data in files:
            ti = tarfile.TarInfo(path)
            ti.size, ti.mode, ti.mtime = len(data), 0o644, mtime
            tar.addfile(ti, io.BytesIO(data))
    os.replace(tmp, a.out)
    nfiles = sum(1 for k in tree.entries.values() if k[0] == "file")
    print("%s: %s %s, %d files, layer %d bytes (%s)" % (a.out, a.tag, a.arch, nfiles,
                                                        len(layer_b), layer_d[:19]))


if __name__ == "__main__":
    main()

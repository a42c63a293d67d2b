#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The podman run arguments that run deploy/kubernetes/idlegap-agent.yaml's
agent container as the kubelet would, and a check that the manifest asks
for what the caller expects.

  podman_args.py MANIFEST --caps A,B,C --mounts PATH:ro,PATH:rw,... \
      --port N --env NAME=VALUE... --emptydir DIR

Prints one argument a line: podman's options, then the image, then the
container's arguments ($(VAR) expanded from the pod's env as the kubelet
does, the values of fieldRef variables from --env).  Exits 1 with one line
when the manifest and the expectations disagree on capabilities, mounts or
ports, or when the manifest asks for something this translation does not
know (so a test cannot quietly run the agent otherwise than it is shipped).
"""
import argparse
import os
import re
import sys

import yaml


class Disagree(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Disagree(msg)


KNOWN_SC = {"privileged", "allowPrivilegeEscalation", "readOnlyRootFilesystem", "runAsUser",
            "capabilities", "seccompProfile", "appArmorProfile"}
KNOWN_CONTAINER = {"name", "image", "args", "env", "ports", "readinessProbe", "resources",
                   "securityContext", "volumeMounts", "imagePullPolicy"}


def translate(man, a):
    docs = [d for d in yaml.safe_load_all(open(man)) if d]
    ds = [d for d in docs if d.get("kind") == "DaemonSet"]
    need(len(ds) == 1, "want one DaemonSet, found %d" % len(ds))
    pod = ds[0]["spec"]["template"]["spec"]
    tmpl_ann = ds[0]["spec"]["template"]["metadata"].get("annotations", {})
    need(len(pod["containers"]) == 1, "want one container")
    c = pod["containers"][0]
    unknown = set(c) - KNOWN_CONTAINER
    need(not unknown, "container fields not translated: %s" % ", ".join(sorted(unknown)))
    need(not pod.get("hostNetwork") and not pod.get("hostIPC"),
         "hostNetwork/hostIPC not translated")
    out = []
    if pod.get("hostPID"):
        out.append("--pid=host")

    sc = c.get("securityContext", {})
    unknown = set(sc) - KNOWN_SC
    need(not unknown, "securityContext fields not translated: %s" % ", ".join(sorted(unknown)))
    need(sc.get("privileged") is False, "privileged: want false, manifest says %r" % sc.get("privileged"))
    caps = sc.get("capabilities", {})
    need([x.upper() for x in caps.get("drop", [])] == ["ALL"],
         "capabilities.drop: want [ALL], manifest says %r" % caps.get("drop"))
    add = sorted(caps.get("add", []))
    want = sorted(x for x in a.caps.split(",") if x)
    need(add == want, "capabilities: the test grants %s, the manifest %s" %
         (",".join(want), ",".join(add)))
    out += ["--cap-drop=all", "--cap-add=" + ",".join(add)]
    if sc.get("readOnlyRootFilesystem"):
        out.append("--read-only")
        # the kubelet's container has no tmpfs of podman's own making
        out.append("--read-only-tmpfs=false")
    if sc.get("allowPrivilegeEscalation") is False:
        out.append("--security-opt=no-new-privileges")
    if "runAsUser" in sc:
        out.append("--user=%d" % int(sc["runAsUser"]))
    for key, opt in (("seccompProfile", "seccomp"), ("appArmorProfile", "apparmor")):
        t = sc.get(key, {}).get("type", "RuntimeDefault")
        need(t in ("Unconfined", "RuntimeDefault"), "%s %s not translated" % (key, t))
        # podman's default profiles stand for the runtime's defaults
        if t == "Unconfined":
            out.append("--security-opt=%s=unconfined" % opt)

    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = []
    for m in c.get("volumeMounts", []):
        v = vols.get(m["name"])
        need(v is not None, "volumeMount %s: no such volume" % m["name"])
        ro = bool(m.get("readOnly"))
        if "hostPath" in v:
            src = v["hostPath"]["path"]
            kind = v["hostPath"].get("type")
            need(kind in (None, "Directory", "DirectoryOrCreate"),
                 "hostPath type %s not translated" % kind)
            if kind == "DirectoryOrCreate":
                os.makedirs(src, mode=0o755, exist_ok=True)	# as the kubelet does
        elif "emptyDir" in v:
            need(a.emptydir, "an emptyDir volume, and no --emptydir")
            src = a.emptydir
        else:
            raise Disagree("volume %s: only hostPath and emptyDir are translated" % m["name"])
        mounts.append("%s:%s" % (m["mountPath"], "ro" if ro else "rw"))
        out.append("--volume=%s:%s:%s" % (src, m["mountPath"], "ro" if ro else "rw"))
    want = sorted(x for x in a.mounts.split(",") if x)
    need(sorted(mounts) == want, "mounts: the test provides %s, the manifest asks for %s" %
         (",".join(want), ",".join(sorted(mounts))))

    if "terminationGracePeriodSeconds" in pod:
        out.append("--stop-timeout=%d" % int(pod["terminationGracePeriodSeconds"]))
    lim = c.get("resources", {}).get("limits", {})
    if "memory" in lim:
        mm = re.fullmatch(r"(\d+)(Mi|Gi)", str(lim["memory"]))
        need(mm, "memory limit %s not translated" % lim["memory"])
        out.append("--memory=%d%s" % (int(mm.group(1)), "m" if mm.group(2) == "Mi" else "g"))

    # the pod's env, then $(VAR) in the arguments as the kubelet expands them
    given = dict(kv.split("=", 1) for kv in a.env)
    env = {}
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = str(e["value"])
        else:
            need(e["name"] in given, "env %s comes from the pod (%s): give it with --env" %
                 (e["name"], e.get("valueFrom")))
            env[e["name"]] = given[e["name"]]
        out.append("--env=%s=%s" % (e["name"], env[e["name"]]))

    def expand(s):
        return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                      lambda m: env.get(m.group(1), m.group(0)), s)
    args = [expand(str(x)) for x in c.get("args", [])]

    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    need(sorted(ports.values()) == [a.port], "ports: the test scrapes %d, the manifest declares %s" %
         (a.port, sorted(ports.values())))
    listen = [x.split("=", 1)[1] for x in args if x.startswith("--listen=")]
    need(len(listen) == 1 and listen[0].rsplit(":", 1)[1] == str(a.port),
         "ports: --listen %s is not the declared port %d" % (listen, a.port))
    need(str(tmpl_ann.get("prometheus.io/port")) == str(a.port),
         "ports: the scrape annotation says %s, not %d" % (tmpl_ann.get("prometheus.io/port"), a.port))
    probe = c.get("readinessProbe", {}).get("httpGet", {})
    if probe:
        need(ports.get(probe.get("port"), probe.get("port")) == a.port,
             "ports: the readiness probe asks port %s" % probe.get("port"))
    return out + [c["image"]] + args


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("--caps", required=True)
    ap.add_argument("--mounts", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--emptydir")
    a = ap.parse_args()
    try:
        out = translate(a.manifest, a)
    except Disagree as e:
        print("%s: %s" % (a.manifest, e), file=sys.stderr)
        sys.exit(1)
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as e:
        print("%s: cannot read the manifest: %s" % (a.manifest, e), file=sys.stderr)
        sys.exit(1)
    if any("\n" in x for x in out):
        print("%s: an argument spans lines" % a.manifest, file=sys.stderr)
        sys.exit(1)
    print("\n".join(out))


if __name__ == "__main__":
    main()

"""A process under `idlegap run` and the tracer's maps, as tests find them.

kids(pid): the children of each of pid's threads.
child_named(pid, prefix): the child of pid whose comm starts with prefix.
wait_child(p, prefix, limit): that child of the Popen p, once it runs.
map_info(pid, name): bpftool's description of the BPF map called name that
    pid holds open (its "id", "bytes_value", ...), or None.
map_id(pid, name): that map's id (a string), or None.
"""
import json, os, subprocess, time


def kids(pid):
    out = []
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                out += [int(k) for k in f.read().split()]
    except OSError:
        pass
    return out


def child_named(pid, prefix):
    for k in kids(pid):
        try:
            with open("/proc/%d/comm" % k) as f:
                if f.read().strip().startswith(prefix):
                    return k
        except OSError:
            pass
    return None


def wait_child(p, prefix, limit=60):
    t = time.monotonic()
    while p.poll() is None and time.monotonic() - t < limit:
        k = child_named(p.pid, prefix)
        if k is not None:
            return k
        time.sleep(0.05)
    return None


def map_info(pid, name):
    for f in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, f)) as fh:
                ids = [l.split()[1] for l in fh if l.startswith("map_id:")]
        except OSError:
            continue
        for i in ids:
            m = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", i],
                                          capture_output=True, text=True).stdout or "{}")
            if m.get("name") == name:
                return m
    return None


def map_id(pid, name):
    m = map_info(pid, name)
    return str(m["id"]) if m else None

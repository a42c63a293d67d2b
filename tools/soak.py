#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make soak: idlegap left running, its memory over time (not in CI).

For SOAK_SECONDS (default 3600), on a full node of SOAK_GPUS (default 8)
simulated GPUs: two agents, one with the default duty cycle (10 s windows
every 60 s) and one continuous (10 s windows every 10 s), both serving
/metrics, scraped every SOAK_EVERY, while beside them
  - an 8-rank data-parallel job with NCCL (trainsim ranks, one GPU each),
  - `idlegap run` on one long storage job (stacks on), and `idlegap
    attach` on a second one,
  - `idlegap run`, and `idlegap attach` on a second one, on a launch-heavy
    job: trainsim's healthy loop of 20 kernels of 100 us and a sync per
    step (SOAK_LH_ARGS), the highest launch rate the simulated GPU
    sustains here,
    each of the four recording (-o) in pieces of SOAK_OUTPUT_MB (default
    50) MiB, the last SOAK_OUTPUT_FILES (default 3) kept,
  - SOAK_LIFECYCLES (default 2000) short GPU processes come and go, five
    at a time at most, spread over the run.
The RSS of the six idlegap processes, and the total size of each
recording's pieces, are sampled every 10 s (SOAK_EVERY);
at the end it prints, for each, the first, peak and last figures, the
growth after the settling time (the first 10 minutes; the first minute
in a run shorter than 30 minutes) and the trend (the median of the last
quarter of the samples after it against that of the first quarter), and
says PASS when the trend stays within 4 MiB, the peak under 64 MiB (for
an agent, half the DaemonSet's memory limit, deploy/: 128 Mi) and, for a
run or attach, its recording's pieces within their cap
(docs/design.md §3.5, §5.13: history and tables are bounded; one
sample's swing is no trend).

USAGE
    tools/soak.py [--seconds N] [--lifecycles N] [--gpus N] [--json FILE]

Exit 0 when both stay flat, 1 when one grows, 2 when one cannot run.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools", "bench"))
import common  # noqa: E402  (the bench's child handling: process groups, stop_all)

FLAT_KIB = 4096
AGENT_PEAK_KIB = 64 * 1024
PEAK_KIB = 64 * 1024	# run and attach too (docs/design.md §3.5)
LH_ARGS = os.environ.get("SOAK_LH_ARGS", "-s healthy -k 20 -d 100").split()


def rec_bytes(path):
    """The total size of a recording's pieces (PATH, PATH.NNNNNN...)."""
    d, base = os.path.split(path)
    total = 0
    for n in os.listdir(d):
        if n == base or n.startswith(base + "."):
            try:
                total += os.path.getsize(os.path.join(d, n))
            except OSError:
                pass
    return total


def status(pid):
    """VmRSS, RssAnon, VmHWM in KiB; None once the process is gone."""
    got = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "RssAnon", "VmHWM"):
                    got[k] = int(v.split()[0])
    except OSError:
        return None
    return got if "VmRSS" in got else None


def free_port():
    sk = socket.socket()
    sk.bind(("127.0.0.1", 0))
    port = sk.getsockname()[1]
    sk.close()
    return port


def start_agent(log, env, *args):
    port = free_port()
    p = common.popen([common.IG, "agent", "--listen", "127.0.0.1:%d" % port]
                    + list(args), env=env, stdout=subprocess.DEVNULL,
                    stderr=log)
    for _ in range(600):
        log.seek(0)
        if b"agent: metrics on port" in log.read() or p.poll() is not None:
            break
        time.sleep(0.05)
    if p.poll() is not None:
        log.seek(0)
        raise RuntimeError("agent: exit %d: %s" % (
            p.returncode, log.read().decode(errors="replace")[-300:]))
    return p, port


def scrape(port):
    """/metrics' size in bytes and series, or None when it does not answer."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                    timeout=10) as r:
            body = r.read()
    except OSError:
        return None
    return len(body), sum(1 for ln in body.splitlines()
                          if ln and not ln.startswith(b"#"))


def summary(name, samples, settle, peak_max=None, rec=None, rec_cap=None):
    """samples: [(t s, VmRSS KiB, RssAnon KiB)]; rec: [(t s, bytes)] of
    its recording's pieces, which must stay within rec_cap bytes."""
    if not samples:
        return dict(name=name, ok=False, note="no samples")
    after = [s for s in samples if s[0] >= settle] or samples[-1:]
    base = after[0][1]
    growth = max(s[1] for s in after) - base
    # the trend: the median of the last quarter of the samples after the
    # first minute against that of the first quarter (one sample's swing,
    # a window of history or a file being named, is no trend)
    q = max(len(after) // 4, 1)
    trend = statistics.median(s[1] for s in after[-q:]) - \
        statistics.median(s[1] for s in after[:q])
    r = dict(name=name, first_mib=samples[0][1] / 1024,
             peak_mib=max(s[1] for s in samples) / 1024,
             last_mib=samples[-1][1] / 1024,
             settle_s=settle, at_settle_mib=base / 1024,
             growth_after_settle_mib=growth / 1024, trend_mib=trend / 1024,
             anon_first_mib=samples[0][2] / 1024,
             anon_last_mib=samples[-1][2] / 1024,
             peak_max_mib=peak_max / 1024 if peak_max else None,
             samples=len(samples),
             rec_peak_mb=max(b for _, b in rec) / 1e6 if rec else None,
             rec_cap_mb=rec_cap / 1e6 if rec_cap else None,
             ok=trend <= FLAT_KIB and (peak_max is None or
                                       max(s[1] for s in samples) <= peak_max)
             and (not rec or max(b for _, b in rec) <= rec_cap))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float,
                    default=float(os.environ.get("SOAK_SECONDS", "3600")))
    ap.add_argument("--lifecycles", type=int,
                    default=int(os.environ.get("SOAK_LIFECYCLES", "2000")))
    ap.add_argument("--every", type=float,
                    default=float(os.environ.get("SOAK_EVERY", "10")))
    ap.add_argument("--gpus", type=int,
                    default=int(os.environ.get("SOAK_GPUS", "8")))
    ap.add_argument("--output-mb", type=int,
                    default=int(os.environ.get("SOAK_OUTPUT_MB", "50")))
    ap.add_argument("--output-files", type=int,
                    default=int(os.environ.get("SOAK_OUTPUT_FILES", "3")))
    ap.add_argument("--json")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("make soak: tracing needs root: sudo make soak", file=sys.stderr)
        return 2
    if a.seconds < 70 or a.lifecycles < 0 or a.every <= 0 or \
            not 1 <= a.gpus <= 8:
        print("soak: --seconds must be at least 70 (growth is measured after"
              " the first minute), --lifecycles >= 0, --every > 0,"
              " --gpus 1 to 8", file=sys.stderr)
        return 2
    settle = 600 if a.seconds >= 1800 else 60
    common.guard_children()
    tmp = common.scratch()
    env = dict(common.SIMENV, SIMGPU_DEVICES=str(a.gpus),
               SIMGPU_MACHINE="soak-%d" % os.getpid(),
               TRAINSIM_NCCL_ID=os.path.join(tmp, "ncclid"))
    logs = {k: tempfile.TemporaryFile() for k in ("duty", "cont")}
    t0 = time.monotonic()
    end = t0 + a.seconds
    secs = str(int(a.seconds) + 30)
    rot = ["--output-max-mb", str(a.output_mb), "--output-files",
           str(a.output_files)]
    recs = {k: os.path.join(tmp, k + ".rec") for k in ("run", "attach", "run-lh", "attach-lh")}
    # a piece is cut at its size once a poll's records are written: one
    # poll's worth over it at most
    rec_cap = a.output_files * (a.output_mb + 1) * 1024 * 1024
    lh = [common.TRAINSIM] + LH_ARGS + ["-q", "-t", secs, "-n", "1000000000"]
    st = [common.TRAINSIM, "-s", "storage", "-q", "-t", secs, "-n", "100000000"]
    try:
        duty, duty_port = start_agent(logs["duty"], env)
        cont, cont_port = start_agent(logs["cont"], env, "--window", "10",
                                      "--every", "10")
        run = common.popen(
            common.traced(st, "--no-nvml", "--json", os.path.join(tmp, "run.json"),
                         "-o", recs["run"], *rot),
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run_lh = common.popen(
            common.traced(lh, "--no-nvml", "-o", recs["run-lh"], *rot),
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        job_lh = common.popen(lh, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        job_st = common.popen(st, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(1)	# their driver loaded: attach finds it mapped
        attach_st = common.popen(
            [common.IG, "attach", "-q", "-p", str(job_st.pid), "--no-nvml",
             "-o", recs["attach"], *rot],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        attach_lh = common.popen(
            [common.IG, "attach", "-q", "-p", str(job_lh.pid), "--no-nvml",
             "-o", recs["attach-lh"], *rot],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ranks = common.popen(
            [common.TRAINSIM, "ranks", "--world", str(a.gpus), "-s",
             "balanced", "-q", "-t", secs, "-n", "100000000"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (OSError, RuntimeError) as e:
        common.stop_all()
        print("soak: cannot start: %s" % e, file=sys.stderr)
        return 2
    procs = {"duty": duty, "cont": cont, "run": run, "attach": attach_st,
             "run-lh": run_lh, "attach-lh": attach_lh}
    samples = {k: [] for k in procs}
    rec_sizes = {k: [] for k in recs}
    ports = {"duty": duty_port, "cont": cont_port}
    metrics = {"duty": [], "cont": []}
    # the lifecycles spread over the run, the last starting a minute
    # before its end at the latest
    pace = max(a.seconds - 60, 1) / max(a.lifecycles, 1)
    started, running, next_sample = 0, [], t0
    print("soak: %.0f s on %d simulated GPUs: two agents (default duty cycle,"
          " continuous), run and attach on a storage job each, run and"
          " attach on a launch-heavy job each (%s), an %d-rank NCCL job, %d GPU"
          " process lifecycles; RSS every %.0f s; load average %s" % (
              a.seconds, a.gpus, " ".join(LH_ARGS), a.gpus, a.lifecycles,
              a.every,
              " ".join(open("/proc/loadavg").read().split()[:3])), flush=True)
    while time.monotonic() < end:
        now = time.monotonic()
        running = [r for r in running if r.poll() is None]
        while started < a.lifecycles and len(running) < 5 and \
                now >= t0 + started * pace:
            running.append(common.popen(
                [common.TRAINSIM, "-s", "healthy", "-q", "-t", "1.2", "-n",
                 "1000000"], env=env, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
            started += 1
        if now >= next_sample:
            next_sample += a.every
            line = []
            for k, p in procs.items():
                st = status(p.pid) if p.poll() is None else None
                if st:
                    samples[k].append((now - t0, st["VmRSS"], st["RssAnon"]))
                    line.append("%s %.1f MiB (anon %.1f)" % (
                        k, st["VmRSS"] / 1024, st["RssAnon"] / 1024))
                else:
                    line.append("%s gone" % k)
                if k in recs:
                    rec_sizes[k].append((now - t0, rec_bytes(recs[k])))
                    line.append("%s -o %.0f MB" % (k, rec_sizes[k][-1][1] / 1e6))
            for k, port in ports.items():
                m = scrape(port)
                metrics[k].append((now - t0,) + (m or (None, None)))
                line.append("%s /metrics %s" % (
                    k, "%d series" % m[1] if m else "no answer"))
            print("  %5.0f s  %s; %d lifecycles" % (now - t0, ", ".join(line),
                                                    started), flush=True)
        if any(p.poll() is not None for p in procs.values()) or \
                ranks.poll() is not None:
            break
        time.sleep(0.05)
    gone = [k for k, p in procs.items() if p.poll() is not None]
    if ranks.poll() is not None:
        gone.append("ranks (exit %d)" % ranks.returncode)
    for r in running:
        r.wait()
    for j in (job_lh, job_st):
        if j.poll() is None:
            j.terminate()
    left = common.stop_all()
    res = [summary(k, samples[k], settle,
                   AGENT_PEAK_KIB if k in ("duty", "cont") else PEAK_KIB,
                   rec_sizes.get(k), rec_cap if k in recs else None)
           for k in procs]
    print("\n%-9s %9s %9s %9s %16s %9s %15s %13s  %s" % (
        "what", "first", "peak", "last", "growth after %ds" % settle, "trend",
        "anon first/last", "-o peak/cap", "result"))
    for r in res:
        if "first_mib" not in r:
            print("%-6s %s  MISS" % (r["name"], r["note"]))
            continue
        rec = "%.0f/%.0f MB" % (r["rec_peak_mb"], r["rec_cap_mb"]) \
            if r["rec_cap_mb"] else "-"
        print("%-9s %7.1f M %7.1f M %7.1f M %+14.1f M %+7.1f M %7.1f/%.1f M %13s  %s" % (
            r["name"], r["first_mib"], r["peak_mib"], r["last_mib"],
            r["growth_after_settle_mib"], r["trend_mib"], r["anon_first_mib"],
            r["anon_last_mib"], rec,
            "PASS" if r["ok"] else "MISS"))
    print("soak: %.0f s, %d lifecycles; load average %s%s" % (
        time.monotonic() - t0, started,
        " ".join(open("/proc/loadavg").read().split()[:3]),
        "; ended early: %s" % ", ".join(gone) if gone else ""), flush=True)
    if left:
        print("soak: left running: %s" % left, file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(seconds=a.seconds, gpus=a.gpus, lifecycles=started,
                           results=res, samples=samples, metrics=metrics,
                           recordings=rec_sizes),
                      f, indent=1)
    if gone:
        return 2
    return 0 if all(r["ok"] for r in res) else 1


if __name__ == "__main__":
    sys.exit(main())

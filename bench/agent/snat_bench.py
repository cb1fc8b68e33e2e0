#!/usr/bin/env python3
"""SNAT accounting cost: the agent's added CPU and RSS with --snat on vs off, on a node whose conntrack table holds
~50,000 entries and takes 2,000 new flows a second (issue 19: under 2% of one core, under 10 MiB added RSS).

Three network namespaces of the bench's own, like tests/snat_lab.py: ``pod`` runs the load (flowgen), ``node``
masquerades it (nftables) and runs the agent, ``dst`` holds 50 "external" servers (192.0.2.1-50 on its loopback,
flowgen serve: accept and close). The load is --rate new flows a second, half TCP (connect; the server closes;
the node's entry leaves TIME_WAIT after --lifetime s) and half UDP (one datagram; its entry times out after
--lifetime s), round-robin over the 50 destinations, so the table settles at rate x lifetime entries (50,000 by
default) with as many NEW and DESTROY events a second as new flows. Lifetimes are the node namespace's own sysctls.

Arms, one after the other under the same continuous load, alternated (off, on, off, on, ...): the shipped agent
build, profile selecting no link (it tunes nothing), --kube=false, --snat=false or --snat=true. Each arm: start,
--warmup s to settle (the on arm dumps the whole table at start), then --seconds s measured: CPU = user+system
ticks of the agent process over the window (/proc/PID/stat), RSS = VmRSS sampled every second (mean and max),
VmHWM and the RssAnon/RssFile split at the end. Added = mean of the on arms minus mean of the off arms.

Profiling (--pprof DIR): the agent is built with -tags pprof instead (same code plus a pprof endpoint, and
symbols kept), and each on arm saves a CPU profile of its measured window, a heap profile at its end and, when
perf(1) is installed, a perf profile of the window (kernel time included), to DIR, with the binary. Its CPU
and RSS numbers are those of a profiled, unstripped build: use them to see where the time goes, not as the
recorded cost.

Usage: snat [--rate N] [--lifetime S] [--warmup S] [--seconds S] [--pairs N] [--json OUT] [--pprof DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import benchlib as bl

DESTINATIONS = [f"192.0.2.{i}" for i in range(1, 51)]
PREFIX = f"wsb{os.getpid() % 10000}"
POD, NODE, DST = f"{PREFIX}-pod", f"{PREFIX}-node", f"{PREFIX}-dst"
PROFILE = {"name": "bench-snat", "interfaces": {"roles": ["virtual"], "include": ["no-such-link*"], "exclude": []}}
TICK = os.sysconf("SC_CLK_TCK")


def nsexec(ns: str, *args: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *args]


def wire(lifetime: int, pod: str = POD, node: str = NODE, dst: str = DST) -> None:
    """The pod -> node (masquerading) -> dst path in the three namespaces (the probe bench puts it beside its own)."""
    bl.sh(["ip", "link", "add", "b-pod", "netns", pod, "type", "veth", "peer", "name", "pod0", "netns", node])
    bl.sh(["ip", "link", "add", "b-ext", "netns", node, "type", "veth", "peer", "name", "eth0", "netns", dst])
    steps = [
        (pod, ["addr", "add", "10.244.1.10/24", "dev", "b-pod"]), (pod, ["link", "set", "b-pod", "up"]),
        (pod, ["route", "add", "default", "via", "10.244.1.1"]),
        (node, ["addr", "add", "10.244.1.1/24", "dev", "pod0"]), (node, ["link", "set", "pod0", "up"]),
        (node, ["addr", "add", "10.240.0.4/24", "dev", "b-ext"]), (node, ["link", "set", "b-ext", "up"]),
        (node, ["route", "add", "default", "via", "10.240.0.1"]),
        (dst, ["addr", "add", "10.240.0.1/24", "dev", "eth0"]), (dst, ["link", "set", "eth0", "up"]),
    ]  # fmt: skip
    steps += [(dst, ["addr", "add", f"{d}/32", "dev", "lo"]) for d in DESTINATIONS]
    for ns, args in steps:
        bl.sh(["ip", "-n", ns, *args])
    rules = (
        "table ip wsnat { chain post { type nat hook postrouting priority srcnat; policy accept;"
        ' ip saddr 10.244.0.0/16 oifname "b-ext" masquerade; }; }'
    )
    bl.sh(nsexec(node, "nft", rules))
    for name, value in [
        ("net.ipv4.ip_forward", 1),
        ("net.netfilter.nf_conntrack_tcp_timeout_time_wait", lifetime),
        ("net.netfilter.nf_conntrack_udp_timeout", lifetime),
        ("net.ipv4.ip_local_port_range", "1024 65535"),
    ]:
        bl.sh(nsexec(node, "sysctl", "-qw", f"{name}={value}"))
    bl.sh(nsexec(pod, "sysctl", "-qw", "net.ipv4.ip_local_port_range=1024 65535"))


def conntrack_count(node: str = NODE) -> int:
    return int(bl.sh(nsexec(node, "cat", "/proc/sys/net/netfilter/nf_conntrack_count")).strip())


def agent_pid(launcher: subprocess.Popen[bytes]) -> int:
    """`ip netns exec` execs the agent in place: the launcher's pid is the agent's."""
    return launcher.pid


def scrape(port: int) -> dict[str, float]:
    code = f"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{port}/metrics').read().decode())"
    out = bl.sh(nsexec(NODE, sys.executable, "-c", code))
    metrics = {}
    for line in out.splitlines():
        if line.startswith("wirespeed_agent_snat") or line.startswith("go_memstats_heap_inuse_bytes"):
            key, _, value = line.rpartition(" ")
            metrics[key] = float(value)
    return metrics


def fetch(port: int, path: str, out: Path, timeout: float) -> subprocess.Popen[bytes]:
    """Fetch http://127.0.0.1:PORT/PATH inside the node namespace into out, in the background."""
    code = (
        f"import urllib.request as u, pathlib; pathlib.Path({str(out)!r}).write_bytes("
        f"u.urlopen('http://127.0.0.1:{port}{path}', timeout={timeout}).read())"
    )
    return subprocess.Popen(nsexec(NODE, sys.executable, "-c", code))


def start_profiles(pid: int, port: int, seconds: float, out: Path | None) -> list[subprocess.Popen[bytes]]:
    if out is None:
        return []
    window = max(1, int(seconds) - 2)
    procs = [fetch(port + 100, f"/debug/pprof/profile?seconds={window}", out / f"cpu-{port}.pprof", window + 30)]
    if shutil.which("perf"):
        perf = ["perf", "record", "-q", "-F", "499", "-g", "-p", str(pid), "-o", str(out / f"perf-{port}.data")]
        procs.append(subprocess.Popen([*perf, "--", "sleep", str(window)], stderr=subprocess.DEVNULL))
    return procs


def finish_profiles(procs: list[subprocess.Popen[bytes]], port: int, out: Path | None) -> None:
    for p in procs:
        p.wait(timeout=120)
    if out is not None:
        fetch(port + 100, "/debug/pprof/heap", out / f"heap-{port}.pprof", 30).wait(timeout=60)


def run_arm(
    agent: Path, tmp: Path, snat: bool, warmup: float, seconds: float, port: int, pprof: Path | None = None
) -> dict[str, Any]:
    profile = tmp / "profile.json"
    profile.write_text(json.dumps(PROFILE))
    log = (tmp / f"agent-{'on' if snat else 'off'}-{port}.log").open("w")
    args = [
        str(agent),
        f"--profile={profile}",
        "--kube=false",
        f"--listen=127.0.0.1:{port}",
        f"--snat={str(snat).lower()}",
    ]
    env = dict(os.environ, WIRESPEED_AGENT_PPROF=f"127.0.0.1:{port + 100}") if pprof else None
    launcher = subprocess.Popen(nsexec(NODE, *args), stdout=subprocess.DEVNULL, stderr=log, env=env)
    pid = agent_pid(launcher)
    profiled = pprof if snat else None
    try:
        time.sleep(warmup)
        entries_start, ticks0, t0 = conntrack_count(), bl.cpu_ticks(pid), time.monotonic()
        profiles = start_profiles(pid, port, seconds, profiled)
        rss = []
        while time.monotonic() - t0 < seconds:
            time.sleep(1)
            rss.append(bl.status_kib(pid, "VmRSS"))
        ticks1, t1 = bl.cpu_ticks(pid), time.monotonic()
        finish_profiles(profiles, port, profiled)
        arm = {
            "snat": snat,
            "cpu_pct_of_one_core": round(100 * (ticks1 - ticks0) / TICK / (t1 - t0), 3),
            "rss_mean_mib": round(statistics.mean(rss) / 1024, 2),
            "rss_max_mib": round(max(rss) / 1024, 2),
            "hwm_mib": round(bl.status_kib(pid, "VmHWM") / 1024, 2),
            **{f"rss_{k}_at_end": v for k, v in bl.rss_split_mib(pid).items()},
            "conntrack_entries_start_end": [entries_start, conntrack_count()],
        }
        if snat:
            arm["metrics"] = scrape(port)
        bl.log(f"arm {arm}")
        return arm
    finally:
        bl.terminate(launcher, timeout=30)
        log.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=int, default=2000, help="new flows a second (half TCP, half UDP)")
    ap.add_argument("--lifetime", type=int, default=25, help="seconds an entry stays after its flow (conntrack)")
    ap.add_argument("--warmup", type=float, default=30)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--pairs", type=int, default=2, help="off/on pairs of arms")
    ap.add_argument("--agent", type=Path, help="agent binary (default: the shipped build of the tree)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--pprof", type=Path, help="profile the on arms (a pprof build) into this directory")
    a = ap.parse_args()
    bl.require_root()
    bl.exit_on_sigterm()
    params = vars(a) | {
        "agent": bl.recorded_path(a.agent) if a.agent else None,
        "json": None,
        "pprof": bl.recorded_path(a.pprof) if a.pprof else "",
    }
    result: dict[str, Any] = {"bench": "agent-snat", "machine": bl.machine(), "source": bl.source(), "params": params}
    result["loadavg_before"], result["cpu_busy_pct_before"] = bl.loadavg(), bl.cpu_busy_pct()
    with bl.scratch_dir("wsbench-snat-") as tmp, bl.netns(POD, NODE, DST):
        if a.pprof:
            a.pprof.mkdir(parents=True, exist_ok=True)
        agent = a.agent or shipped_agent(tmp, profiled=a.pprof is not None)
        if a.pprof:
            shutil.copy(agent, a.pprof / "wirespeed-agent")  # perf report --symfs / pprof need the binary
        flowgen = bl.go_build("flowgen", tmp)
        wire(a.lifetime)
        total = a.warmup + (a.warmup + a.seconds + 5) * 2 * a.pairs + 30
        serve, load = start_load(flowgen, a.rate, total)
        try:
            bl.log(f"load on: {a.rate} new flows/s; settling {a.lifetime + a.warmup:.0f} s")
            time.sleep(a.lifetime + a.warmup)
            arms = []
            for _ in range(a.pairs):
                for snat in (False, True):
                    arms.append(run_arm(agent, tmp, snat, a.warmup, a.seconds, 9900 + len(arms), a.pprof))
        finally:
            bl.terminate(load, timeout=30)
            bl.terminate(serve)
        made = load.stdout.read().decode() if load.stdout else ""
        result["arms"], result["load"] = arms, json.loads(made) if made.strip() else None
    off = [x for x in arms if not x["snat"]]
    on = [x for x in arms if x["snat"]]
    mean = lambda key, xs: statistics.mean(x[key] for x in xs)  # noqa: E731
    result["added"] = {
        "cpu_pct_of_one_core": round(mean("cpu_pct_of_one_core", on) - mean("cpu_pct_of_one_core", off), 3),
        "rss_mean_mib": round(mean("rss_mean_mib", on) - mean("rss_mean_mib", off), 2),
        "hwm_mib": round(mean("hwm_mib", on) - mean("hwm_mib", off), 2),
    }
    result["loadavg_after"], result["cpu_busy_pct_after"] = bl.loadavg(), bl.cpu_busy_pct()
    print(json.dumps(result["added"]))
    return bl.finish(result, a.json)


def start_load(
    flowgen: Path, rate: int, seconds: float, pod: str = POD, dst: str = DST
) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]]:
    """flowgen serving on the 50 destinations in ``dst`` and loading them from ``pod`` at ``rate`` new flows a
    second (half TCP, half UDP) for ``seconds``: (server, load); the load prints what it made when it ends."""
    listen = ",".join(f"{d}:443" for d in DESTINATIONS)
    serve = subprocess.Popen(
        nsexec(dst, str(flowgen), "serve", "--listen", listen), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert serve.stdout is not None
    assert serve.stdout.readline().strip() == b"ready"
    load = subprocess.Popen(
        nsexec(pod, str(flowgen), "load", "--targets", ",".join(f"{d}:443" for d in DESTINATIONS),
               f"--tcp-rate={rate // 2}", f"--udp-rate={rate - rate // 2}", f"--duration={seconds}s"),
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return serve, load


def shipped_agent(tmp: Path, profiled: bool = False) -> Path:
    """The shipped build (stripped); profiled: with the pprof endpoint and symbols instead."""
    out = tmp / "wirespeed-agent"
    bl.log("building the profiling agent" if profiled else "building the shipped agent")
    flags = ["-tags", "pprof"] if profiled else ["-ldflags", "-s -w"]
    subprocess.run(
        ["go", "build", "-trimpath", *flags, "-o", str(out), "./cmd/wirespeed-agent"],
        cwd=bl.AGENT_MODULE, env=dict(os.environ, CGO_ENABLED="0"), check=True, timeout=900,
    )  # fmt: skip
    return out


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Continuous probe cost: the agent's CPU, RSS and network bandwidth with --probe at 8 peers x 4 streams at the
default rate (issue 30, item 5: under 1% of one core, under 5 MiB, under 100 kb/s per node), and the agent's whole
RSS with the probe, SNAT accounting and tuning all on (under 25 MiB).

Nine network namespaces of the bench's own: ``node`` (the node measured) and eight peers, each joined to the node
by its own veth pair (node side ``wpn<i>`` 10.77.<i>.1/24, peer side ``eth0`` 10.77.<i>.2/24), so every probe byte
the node sends or receives crosses one of the node's eight veths and nothing else does.

Two phases of peers, both the shipped agent binary:

- ``serve``: each peer only serves the probe (``wirespeed-agent probe --listen :9809``): the node's own probing,
  8 peers x 4 streams, alone;
- ``fleet``: each peer is a daemon with ``--probe --probe-static-peers node=10.77.<i>.1``: it serves the node's
  streams and probes the node with 4 streams of its own. On a fleet each node is chosen as a peer by P others on
  average (rendezvous hashing), so here the node probes 8 x 4 streams and serves 8 x 4, as in steady state.

Arms, each the shipped agent in ``node`` (--kube=false, --listen 127.0.0.1:9808, every probe flag at its default:
8 peers, 4 streams, 1 round trip a second per stream, port 9809, rounds of 1m):

- ``off`` (serve phase): no --probe, --snat=false, a profile selecting no link: the baseline, no probe traffic;
- ``probe`` (both phases): the same with ``--probe --probe-static-peers peer1=10.77.1.2,...,peer8=10.77.8.2``;
- ``all`` (fleet phase): --probe, --snat=true (conntrack accounting, the agent's default) and a profile that tunes:
  the built-in throughput profile selecting the node's eight veths with ``mtu`` 9000 (set on the real veths; the
  arm records wpn1's MTU) and its sysctls written under a scratch --proc-sys-root (a copy of the node namespace's
  /proc/sys/net, so no host sysctl changes).

With ``--flows N`` (the whole-RSS measurement under load), a third phase follows: the fleet's peers again, and the
SNAT bench's load beside them (``snat_bench.wire``/``start_load``: a ``pod`` and a ``dst`` namespace on the node,
the node masquerading, flowgen opening N new flows a second, half TCP and half UDP, to 50 destinations, each entry
living ``--lifetime`` s, so the node's conntrack table holds about N x lifetime entries), and the ``all`` arm
measured under it (label ``all-loaded``; its conntrack count at start and end and the agent's SNAT and heap
metrics are recorded). That arm warms up for ``--loaded-warmup`` s (default 270): the agent holds each closed
flow's port for its 240 s hold (``--snat-hold``'s default), so its table only reaches its steady size, and the
agent its steady RSS, once a whole hold has passed since it started.

Each arm: start, --warmup s, then --seconds s measured: CPU = user+system ticks of the agent over the window
(/proc/PID/stat), VmRSS sampled each second (mean, max), VmHWM and the RssAnon/RssFile split at the end,
bandwidth = the bytes the node's eight veths counted (/sys/class/net/wpn*/statistics/{rx,tx}_bytes in the node
namespace, Ethernet frames) over the window, in kb/s (1,000 bits) each way. Probe arms record their
wirespeed_agent_probe_* counts to show they ran. Added = the arm minus the off arm.

Usage: probe [--warmup S] [--seconds S] [--repeat N] [--flows N [--lifetime S] [--loaded-warmup S] [--loaded-only]]
             [--agent-env K=V ...] [--json OUT]
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import snat_bench

import benchlib as bl

PEERS = 8
PREFIX = f"wsp{os.getpid() % 10000}"
NODE = f"{PREFIX}-node"
PEER_NS = [f"{PREFIX}-p{i}" for i in range(1, PEERS + 1)]
LOAD_NS = [f"{PREFIX}-pod", f"{PREFIX}-dst"]  # --flows: the SNAT bench's pod and "external" servers
NO_LINK = {"name": "bench-probe", "interfaces": {"roles": ["virtual"], "include": ["no-such-link*"], "exclude": []}}
TICK = os.sysconf("SC_CLK_TCK")
METRICS_PORT = 9808
PROBE_PORT = 9809  # the agent's --probe-port default (agent/internal/probe DefaultProbePort)
VENV_PYTHON = bl.REPO / ".venv" / "bin" / "python"  # `make venv`: the wirespeed CLI prints the built-in profile


def nsexec(ns: str, *args: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *args]


def node_ip(i: int) -> str:
    return f"10.77.{i}.1"


def peer_ip(i: int) -> str:
    return f"10.77.{i}.2"


def wire() -> None:
    for i, ns in enumerate(PEER_NS, start=1):
        bl.sh(["ip", "link", "add", f"wpn{i}", "netns", NODE, "type", "veth", "peer", "name", "eth0", "netns", ns])
        bl.sh(["ip", "-n", NODE, "addr", "add", f"{node_ip(i)}/24", "dev", f"wpn{i}"])
        bl.sh(["ip", "-n", NODE, "link", "set", f"wpn{i}", "up"])
        bl.sh(["ip", "-n", ns, "addr", "add", f"{peer_ip(i)}/24", "dev", "eth0"])
        bl.sh(["ip", "-n", ns, "link", "set", "eth0", "up"])


def context_switches(pid: int) -> int:
    """Voluntary and involuntary context switches summed over the agent's threads (proc(5), /proc/PID/task/*/status):
    each is a thread that went to sleep or was switched out, so their rate counts the process's wake-ups, which a
    busy shared machine does not inflate as it does CPU ticks."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "status").read_text()
        except FileNotFoundError:  # a thread that ended since the listing
            continue
        for line in text.splitlines():
            if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                total += int(line.split()[1])
    return total


def veth_bytes() -> tuple[int, int]:
    """(rx, tx) bytes summed over the node's eight veths, read in the node namespace (sysfs is per namespace)."""
    paths = [f"/sys/class/net/wpn{i}/statistics/{d}_bytes" for i in range(1, PEERS + 1) for d in ("rx", "tx")]
    values = [int(v) for v in bl.sh(nsexec(NODE, "cat", *paths)).split()]
    return sum(values[0::2]), sum(values[1::2])


def http_get(ns: str, path: str) -> str:
    url = f"http://127.0.0.1:{METRICS_PORT}{path}"
    code = f"import urllib.request as u; print(u.urlopen({url!r}, timeout=5).read().decode())"
    return bl.sh(nsexec(ns, sys.executable, "-c", code))


def probe_samples() -> dict[str, float]:
    out = {}
    for line in http_get(NODE, "/metrics").splitlines():
        counted = line.startswith("wirespeed_agent_probe_") and ("_count" in line or "_total" in line)
        if counted or line.startswith(("wirespeed_agent_snat_flows", "go_memstats_heap_inuse_bytes")):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def tuning_profile(tmp: Path) -> Path:
    """The built-in throughput profile selecting the node's veths, with an MTU: a profile that really tunes."""
    text = subprocess.run(
        [str(VENV_PYTHON if VENV_PYTHON.exists() else sys.executable), "-m", "wirespeed", "profile", "show",
         "throughput", "--json"],
        check=True, capture_output=True, text=True, cwd=bl.REPO,
    ).stdout  # fmt: skip
    profile = json.loads(text)
    profile["name"] = "bench-probe-tuning"
    profile["interfaces"] = {"roles": ["virtual"], "include": ["wpn*"], "exclude": []}
    profile["mtu"] = {"value": 9000}
    path = tmp / "tuning.json"
    path.write_text(json.dumps(profile))
    return path


def scratch_proc_sys(tmp: Path) -> Path:
    """A writable copy of the node namespace's /proc/sys/net (unreadable entries skipped) for --proc-sys-root."""
    root = tmp / "proc-sys"
    shutil.rmtree(root, ignore_errors=True)  # a fresh copy per arm: the last arm's writes are not this one's start
    root.mkdir()
    subprocess.run(nsexec(NODE, "cp", "-r", "/proc/sys/net", str(root)), capture_output=True, timeout=120)
    return root


def agent_args(agent: Path, profile: Path, arm: str, proc_sys: Path) -> list[str]:
    args = [str(agent), f"--profile={profile}", "--kube=false", "--node-name=node",
            f"--listen=127.0.0.1:{METRICS_PORT}", f"--proc-sys-root={proc_sys}"]  # fmt: skip
    if arm == "off":
        return [*args, "--snat=false"]
    peers = ",".join(f"peer{i}={peer_ip(i)}" for i in range(1, PEERS + 1))
    args += ["--probe", f"--probe-static-peers={peers}"]
    return [*args, "--snat=false"] if arm == "probe" else [*args, "--snat=true"]


def run_arm(
    agent: Path, tmp: Path, arm: str, warmup: float, seconds: float, agent_env: Sequence[str] = ()
) -> dict[str, Any]:
    if arm == "all":
        profile, proc_sys = tuning_profile(tmp), scratch_proc_sys(tmp)
    else:
        profile, proc_sys = tmp / "no-link.json", tmp / "empty-proc-sys"
        profile.write_text(json.dumps(NO_LINK))
        proc_sys.mkdir(exist_ok=True)
    log = (tmp / f"node-{arm}.log").open("w")
    env = dict(os.environ, **dict(kv.split("=", 1) for kv in agent_env))
    launcher = subprocess.Popen(nsexec(NODE, *agent_args(agent, profile, arm, proc_sys)), stderr=log, env=env)
    pid = launcher.pid  # `ip netns exec` execs the agent in place
    try:
        time.sleep(warmup)
        (rx0, tx0), ticks0, switches0, t0 = veth_bytes(), bl.cpu_ticks(pid), context_switches(pid), time.monotonic()
        rss = []
        while time.monotonic() - t0 < seconds:
            time.sleep(1)
            rss.append(bl.status_kib(pid, "VmRSS"))
        (rx1, tx1), ticks1, switches1, t1 = veth_bytes(), bl.cpu_ticks(pid), context_switches(pid), time.monotonic()
        window = t1 - t0
        result: dict[str, Any] = {
            "arm": arm,
            "window_s": round(window, 2),
            "cpu_ticks": ticks1 - ticks0,
            "cpu_pct_of_one_core": round(100 * (ticks1 - ticks0) / TICK / window, 3),
            "context_switches_per_s": round((switches1 - switches0) / window, 1),
            "rss_mean_mib": round(statistics.mean(rss) / 1024, 2),
            "rss_max_mib": round(max(rss) / 1024, 2),
            "hwm_mib": round(bl.status_kib(pid, "VmHWM") / 1024, 2),
            **{f"rss_{k}_at_end": v for k, v in bl.rss_split_mib(pid).items()},
            "veth_rx_bytes": rx1 - rx0,
            "veth_tx_bytes": tx1 - tx0,
            "rx_kbps": round((rx1 - rx0) * 8 / 1000 / window, 2),
            "tx_kbps": round((tx1 - tx0) * 8 / 1000 / window, 2),
        }
        if arm != "off":
            result["probe_metrics"] = probe_samples()
            result["conntrack_entries_end"] = snat_bench.conntrack_count(NODE)
            result["mtu_wpn1"] = bl.sh(["ip", "-n", NODE, "-o", "link", "show", "wpn1"]).split(" mtu ")[1].split()[0]
        bl.log(f"arm {json.dumps({k: v for k, v in result.items() if k != 'probe_metrics'})}")
        return result
    finally:
        bl.terminate(launcher, timeout=30)
        log.close()


def start_peers(agent: Path, tmp: Path, fleet: bool) -> list[subprocess.Popen[bytes]]:
    """Fleet: each peer is a daemon probing the node (4 streams) while it serves; else it only serves the probe."""
    profile = tmp / "no-link.json"
    profile.write_text(json.dumps(NO_LINK))
    (tmp / "empty-proc-sys").mkdir(exist_ok=True)
    peers = []
    for i, ns in enumerate(PEER_NS, start=1):
        args = [str(agent), f"--profile={profile}", "--kube=false", f"--node-name=peer{i}", "--snat=false",
                f"--listen=127.0.0.1:{METRICS_PORT}", f"--proc-sys-root={tmp / 'empty-proc-sys'}", "--probe",
                f"--probe-static-peers=node={node_ip(i)}"]  # fmt: skip
        if not fleet:
            args = [str(agent), "probe", f"--listen=:{PROBE_PORT}"]
        log = (tmp / f"peer{i}-{'fleet' if fleet else 'serve'}.log").open("w")
        peers.append(subprocess.Popen(nsexec(ns, *args), stdout=subprocess.DEVNULL, stderr=log))
    return peers


def phase(
    agent: Path, tmp: Path, fleet: bool, arms: list[str], a: argparse.Namespace, label: str | None = None
) -> list[dict[str, Any]]:
    peers = start_peers(agent, tmp, fleet)
    try:
        out = []
        for _ in range(a.repeat):
            for arm in arms:
                start = snat_bench.conntrack_count(NODE)
                result = run_arm(agent, tmp, arm, a.warmup, a.seconds, a.agent_env)
                out.append(
                    result
                    | {"peers": "fleet" if fleet else "serve-only", "conntrack_entries_start": start,
                       "label": label or f"{arm}-{'fleet' if fleet else 'serve'}"}
                )  # fmt: skip
        return out
    finally:
        for p in peers:
            bl.terminate(p, timeout=30)


def added(arms: list[dict[str, Any]], label: str) -> dict[str, float]:
    """Mean of the arms labelled ``label`` minus the mean of the off arms (peers serving only: no probe traffic)."""
    keys = ["cpu_pct_of_one_core", "rss_mean_mib", "hwm_mib", "rx_kbps", "tx_kbps"]

    def mean(name: str, key: str) -> float:
        return float(statistics.mean(x[key] for x in arms if x["label"] == name))

    return {key: round(mean(label, key) - mean("off-serve", key), 3) for key in keys}


def loaded_phase(agent: Path, tmp: Path, a: argparse.Namespace) -> tuple[list[dict[str, Any]], Any]:
    """The ``all`` arm with the fleet's peers and --flows new flows a second through the node's conntrack."""
    pod, dst = LOAD_NS
    snat_bench.wire(a.lifetime, pod=pod, node=NODE, dst=dst)
    flowgen = bl.go_build("flowgen", tmp)
    settle = a.lifetime + a.warmup
    serve, load = snat_bench.start_load(flowgen, a.flows, settle + (a.loaded_warmup + a.seconds + 10) * a.repeat + 30,
                                        pod=pod, dst=dst)  # fmt: skip
    try:
        bl.log(f"load on: {a.flows} new flows/s; settling {settle:.0f} s")
        time.sleep(settle)
        arms = phase(agent, tmp, True, ["all"], argparse.Namespace(**(vars(a) | {"warmup": a.loaded_warmup})),
                     label="all-loaded")  # fmt: skip
    finally:
        bl.terminate(load, timeout=30)
        bl.terminate(serve)
    made = load.stdout.read().decode() if load.stdout else ""
    return arms, json.loads(made) if made.strip() else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warmup", type=float, default=15)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--repeat", type=int, default=1, help="rounds of the off, probe and all arms")
    ap.add_argument("--agent", type=Path, help="agent binary (default: the shipped build, agent/bin/wirespeed-agent)")
    ap.add_argument("--flows", type=int, default=0, help="new flows a second for the loaded phase (0: no such phase)")
    ap.add_argument("--lifetime", type=int, default=25, help="seconds a conntrack entry stays after its flow")
    ap.add_argument("--loaded-warmup", type=float, default=270, help="the loaded arm's warm-up (a whole SNAT hold)")
    ap.add_argument("--loaded-only", action="store_true", help="only the loaded phase (an A/B of --agent-env)")
    ap.add_argument("--agent-env", action="append", default=[], metavar="K=V",
                    help="environment of the measured agent (GOGC=50, GOMEMLIMIT=24MiB), repeatable")  # fmt: skip
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    if a.loaded_only and not a.flows:
        ap.error("--loaded-only needs --flows N")
    bl.require_root()
    bl.exit_on_sigterm()
    agent = (a.agent or bl.AGENT_MODULE / "bin" / "wirespeed-agent").resolve()
    if not agent.exists():
        raise SystemExit(f"{agent}: no agent binary; build it with `make agent`")
    params = vars(a) | {"agent": bl.recorded_path(agent), "json": None, "peers": PEERS}
    result: dict[str, Any] = {"bench": "agent-probe", "machine": bl.machine(), "source": bl.source(), "params": params}
    result["loadavg_before"], result["cpu_busy_pct_before"] = bl.loadavg(), bl.cpu_busy_pct()
    with bl.scratch_dir("wsbench-probe-") as tmp, bl.netns(NODE, *PEER_NS, *(LOAD_NS if a.flows else [])):
        shutil.copy(agent, tmp / "wirespeed-agent")
        wire()
        binary = tmp / "wirespeed-agent"
        arms = [] if a.loaded_only else phase(binary, tmp, False, ["off", "probe"], a)
        arms += [] if a.loaded_only else phase(binary, tmp, True, ["probe", "all"], a)
        if a.flows:
            loaded, result["load"] = loaded_phase(binary, tmp, a)
            arms += loaded
    result["arms"] = arms
    labels = ("probe-serve", "probe-fleet", "all-fleet", *(("all-loaded",) if a.flows else ()))
    result["added"] = {} if a.loaded_only else {label: added(arms, label) for label in labels}
    result["loadavg_after"], result["cpu_busy_pct_after"] = bl.loadavg(), bl.cpu_busy_pct()
    print(json.dumps(result["added"]))
    return bl.finish(result, a.json)


if __name__ == "__main__":
    sys.exit(main())

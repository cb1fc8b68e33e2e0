#!/usr/bin/env python3
"""Microburst lab: backlog drops on a veth receive path, and how they go once the agent applies `throughput`.

Two network namespaces joined by a veth pair; RPS steers the receiver's packets to one CPU; a ~200-rule
nftables chain on the receiver's prerouting hook makes each packet cost a few microseconds there; one sender
on another CPU emits bursts of 64-byte UDP frames with gaps (default 6,000 every 50 ms). The burst arrives
faster than the receive CPU drains it, so it piles up in that CPU's backlog; netdev_max_backlog decides
whether the pile fits (drops counted by enqueue_to_backlog in /proc/net/softnet_stat column 2).

Arms, side by side in one run, same namespaces and traffic:
  kernel-default     net.core.netdev_max_backlog = 1000 (the kernel default, written explicitly)
  profile            the profile applied by `wirespeed-agent --once` against the host /proc/sys
                     (netdev_max_backlog is global: a non-init netns has no such file), or with
                     --apply-with sysctl, the profile's sysctls written directly (labelled as such)

Host sysctls the run touches are saved first and restored at the end, also on failure or SIGTERM, under
the shared lock /run/lock/wirespeed-host-sysctl.lock; namespaces are deleted on the way out.

Usage: run [--quick] [--bursts N] [--agent BIN] [--burstgen BIN] [--profile FILE] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import benchlib as bl

BACKLOG = "net.core.netdev_max_backlog"
KERNEL_DEFAULT_BACKLOG = 1000  # net/core/dev.c: int netdev_max_backlog __read_mostly = 1000;
BUILTIN_PROFILE = bl.REPO / "components/wirespeed/data/profiles/throughput.json"

# Lab addressing: TEST-NET-style private /30 that only exists inside the two lab namespaces.
TX_ADDR, RX_ADDR, PREFIX = "10.213.0.1", "10.213.0.2", 30
PORT = 9000
# Shape of the project's earlier hand-run reproduction (the reference in bench/microburst-lab/RESULTS.md): a 200-rule
# nftables chain, 6,000-packet bursts of 64-byte UDP every 50 ms.
NFT_RULES = 200
BURST_SIZE = 6000
GAP_MS = 50
FRAME_BYTES = 64


def nft_ruleset(rules: int) -> str:
    """A prerouting chain of rules that never match the lab traffic, so every packet walks all of them.

    Linear rules, not a set lookup: the point is a receive path that costs microseconds per packet, like a
    node with kube-proxy/Cilium/host-firewall rules in the way.
    """
    lines = [
        "table inet wirespeed_lab {",
        "  chain pre {",
        "    type filter hook prerouting priority 0; policy accept;",
    ]
    for i in range(rules):
        # 192.0.2.0/24 is TEST-NET-1 (RFC 5737): no lab packet comes from there.
        lines.append(f"    ip saddr 192.0.2.{i % 250 + 1} udp dport {10000 + i} counter drop")
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def setup(tx: str, rx: str, rps_cpu: int, rules: int) -> None:
    bl.sh(["ip", "-n", tx, "link", "add", "vtx", "type", "veth", "peer", "name", "vrx", "netns", rx])
    bl.sh(["ip", "-n", tx, "addr", "add", f"{TX_ADDR}/{PREFIX}", "dev", "vtx"])
    bl.sh(["ip", "-n", rx, "addr", "add", f"{RX_ADDR}/{PREFIX}", "dev", "vrx"])
    bl.sh(["ip", "-n", tx, "link", "set", "vtx", "up"])
    bl.sh(["ip", "-n", rx, "link", "set", "vrx", "up"])
    # `ip netns exec` mounts the namespace's own /sys, where vrx lives.
    mask = format(1 << rps_cpu, "x")
    bl.sh(["ip", "netns", "exec", rx, "sh", "-c", f"echo {mask} > /sys/class/net/vrx/queues/rx-0/rps_cpus"])
    proc = subprocess.run(
        ["ip", "netns", "exec", rx, "nft", "-f", "-"],
        input=nft_ruleset(rules),
        text=True,
        capture_output=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"nft: {proc.stderr.strip()}")


def softnet(burstgen: Path, since: Path | None = None) -> dict[str, Any]:
    args = [str(burstgen), "softnet"] + (["--since", str(since)] if since else [])
    return json.loads(bl.sh(args))  # type: ignore[no-any-return]


def start_diagnose(agent: Path | None, bursts: int) -> subprocess.Popen[str] | None:
    """`wirespeed-agent diagnose` in the host namespace, as the DaemonSet runs it, over the arm's bursts.

    softnet_stat is global, so the host sees the receiver's backlog drops; the global sysctls it names as
    the fix are readable only there. Its first sample is taken before the sender starts (the caller waits
    DIAGNOSE_LEAD_S); the interval covers the bursts and the drain.
    """
    if agent is None:
        return None
    interval_ms = bursts * GAP_MS + 1500
    return subprocess.Popen(
        [str(agent), "diagnose", "--json", "--interval", f"{interval_ms}ms"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish_diagnose(diag: subprocess.Popen[str] | None) -> dict[str, Any] | None:
    if diag is None:
        return None
    out, err = diag.communicate(timeout=120)
    if diag.returncode not in (0, 1):
        raise RuntimeError(f"diagnose exited {diag.returncode}: {err.strip()}")
    return {"exit_code": diag.returncode, **json.loads(out)}


DIAGNOSE_LEAD_S = 0.3


def run_arm(
    burstgen: Path,
    tx: str,
    rx: str,
    sender_cpu: int,
    bursts: int,
    burst_size: int,
    work: Path,
    agent: Path | None = None,
) -> dict[str, Any]:
    recv = subprocess.Popen(
        ["ip", "netns", "exec", rx, str(burstgen), "recv", "--listen", f"{RX_ADDR}:{PORT}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    diag: subprocess.Popen[str] | None = None
    try:
        assert recv.stderr is not None
        ready = recv.stderr.readline()
        if not ready.startswith("listening"):
            raise RuntimeError(f"receiver did not start: {ready}{recv.stderr.read()}")
        before = work / "softnet-before.json"
        before.write_text(json.dumps(softnet(burstgen)))
        diag = start_diagnose(agent, bursts)
        if diag is not None:
            time.sleep(DIAGNOSE_LEAD_S)
        sent = json.loads(
            bl.sh(
                [
                    "ip",
                    "netns",
                    "exec",
                    tx,
                    "taskset",
                    "-c",
                    str(sender_cpu),
                    str(burstgen),
                    "send",
                    "--netns",
                    tx,
                    "--dst",
                    f"{RX_ADDR}:{PORT}",
                    "--bursts",
                    str(bursts),
                    "--burst-size",
                    str(burst_size),
                    "--gap",
                    f"{GAP_MS}ms",
                    "--frame",
                    str(FRAME_BYTES),
                ],
                timeout=120,
            )
        )
        # Let the backlog drain (at the rates seen here a full 32,768 backlog empties in well under 0.5 s).
        time.sleep(0.5)
        delta = softnet(burstgen, since=before)
        diagnosis = finish_diagnose(diag)
    finally:
        bl.terminate(recv)
        if diag is not None and diag.poll() is None:
            bl.terminate(diag)
    out, err = recv.communicate()
    if recv.returncode != 0:
        raise RuntimeError(f"receiver exited {recv.returncode}: {err.strip()}")
    got = json.loads(out)
    drops = delta["total"]["dropped"]
    return {
        "sent": sent["sent"],
        "delivered": got["received"],
        "softnet_dropped": drops,
        "softnet_dropped_pct": round(100 * drops / sent["sent"], 1) if sent["sent"] else None,
        "softnet_delta": delta,
        "receiver_udp_snmp": got["udp_snmp"],
        "sender": sent,
        **({"diagnose": diagnosis} if diagnosis is not None else {}),
    }


def agent_apply(agent: Path, profile: Path) -> dict[str, Any]:
    """Apply the profile with the real agent, after a dry run proves it would touch no host link."""
    common = [
        str(agent),
        "--once",
        "--profile",
        str(profile),
        "--proc-sys-root",
        "/proc/sys",
        "--listen",
        "",
        "--kube=false",
    ]
    dry = subprocess.run([*common, "--dry-run"], capture_output=True, text=True, timeout=60)
    try:
        plan = json.loads(dry.stdout)
    except json.JSONDecodeError as e:
        raise RuntimeError(
            f"agent --dry-run exited {dry.returncode}, stdout not JSON ({e}): {dry.stderr.strip()}"
        ) from e
    for itf in plan.get("interfaces") or []:
        if not itf.get("selected"):
            continue
        for key in ("rx", "tx", "mtu"):
            v = itf.get(key)
            if v and v.get("desired") and v["desired"] != v.get("current"):
                raise RuntimeError(
                    f"refusing: the profile would change {key} of host link {itf['name']} "
                    f"({v.get('current')} -> {v['desired']}); the lab only changes global sysctls"
                )
    applied = subprocess.run(common, capture_output=True, text=True, timeout=60)
    if applied.returncode != 0:
        raise RuntimeError(
            f"agent --once exited {applied.returncode}: {applied.stdout.strip()} {applied.stderr.strip()}"
        )
    return {"dry_run": plan, "report": json.loads(applied.stdout)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10 bursts per arm (CI smoke test)")
    ap.add_argument("--bursts", type=int, default=50, help="bursts per arm (default 50: 300,000 packets)")
    ap.add_argument("--burst-size", type=int, default=BURST_SIZE)
    ap.add_argument("--rules", type=int, default=NFT_RULES, help="nftables rules on the receive path")
    ap.add_argument("--profile", type=Path, default=BUILTIN_PROFILE)
    ap.add_argument("--apply-with", choices=["agent", "sysctl"], default="agent")
    ap.add_argument("--agent", type=Path, help="prebuilt wirespeed-agent (default: build ./agent/cmd/wirespeed-agent)")
    ap.add_argument("--burstgen", type=Path, help="prebuilt burstgen (default: build ./agent/cmd/burstgen)")
    ap.add_argument("--json", type=Path, help="write the full result here")
    args = ap.parse_args()
    bursts = 10 if args.quick else args.bursts

    bl.require_root()
    bl.exit_on_sigterm()
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("needs 2 CPUs: one sends, RPS steers receive processing to another")
    sender_cpu, rps_cpu = cpus[0], cpus[-1]
    profile = json.loads(args.profile.read_text())
    profile_sysctls = {k: v for k, v in (profile.get("sysctls") or {}).items() if v is not None}
    if BACKLOG not in profile_sysctls:
        raise SystemExit(f"{args.profile} sets no {BACKLOG}: nothing for the lab to show")

    with bl.scratch_dir("wirespeed-microburst-lab-") as bins:
        return run_lab(args, bursts, sender_cpu, rps_cpu, profile_sysctls, bins)


def run_lab(
    args: argparse.Namespace,
    bursts: int,
    sender_cpu: int,
    rps_cpu: int,
    profile_sysctls: dict[str, Any],
    bins: Path,
) -> int:
    burstgen = args.burstgen or bl.go_build("burstgen", bins)
    agent = None
    if args.apply_with == "agent":
        agent = args.agent or bl.go_build("wirespeed-agent", bins)

    tag = os.getpid()
    tx, rx = f"wsl-tx-{tag}", f"wsl-rx-{tag}"
    result: dict[str, Any] = {
        "bench": "microburst-lab",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": bl.machine(),
        "source": bl.source(),
        "loadavg_before": bl.loadavg(),
        "cpu_busy_pct_before": bl.cpu_busy_pct(),
        "method": {
            "bursts_per_arm": bursts,
            "burst_size": args.burst_size,
            "gap_ms": GAP_MS,
            "frame_bytes": FRAME_BYTES,
            "nft_rules": args.rules,
            "sender_cpu": sender_cpu,
            "rps_cpu": rps_cpu,
            "profile": str(
                args.profile.relative_to(bl.REPO)
                if args.profile.is_absolute() and args.profile.is_relative_to(bl.REPO)
                else args.profile
            ),
            "profile_applied_with": "wirespeed-agent --once" if agent else "direct sysctl write (no agent)",
        },
        "arms": {},
    }
    with bl.host_sysctl_lock(), bl.restored_sysctls(sorted({BACKLOG, *profile_sysctls})), bl.netns(tx, rx):
        setup(tx, rx, rps_cpu, args.rules)
        work = bins
        bl.write_sysctl(BACKLOG, KERNEL_DEFAULT_BACKLOG)
        bl.log(f"arm kernel-default: {BACKLOG}={bl.read_sysctl(BACKLOG)}, {bursts} bursts of {args.burst_size}")
        arm = run_arm(burstgen, tx, rx, sender_cpu, bursts, args.burst_size, work, agent)
        arm["netdev_max_backlog"] = int(bl.read_sysctl(BACKLOG))
        result["arms"]["kernel-default"] = arm

        if agent:
            applied = agent_apply(agent, args.profile)
            result["agent"] = {"binary": str(agent), **applied}
        else:
            for k, v in profile_sysctls.items():
                bl.write_sysctl(k, v)
        backlog = int(bl.read_sysctl(BACKLOG))
        if backlog != profile_sysctls[BACKLOG]:
            raise RuntimeError(f"after applying the profile {BACKLOG}={backlog}, want {profile_sysctls[BACKLOG]}")
        bl.log(f"arm profile: {BACKLOG}={backlog}")
        arm = run_arm(burstgen, tx, rx, sender_cpu, bursts, args.burst_size, work, agent)
        arm["netdev_max_backlog"] = backlog
        arm["host_sysctls_after_apply"] = {k: bl.read_sysctl(k) for k in profile_sysctls}
        result["arms"]["profile"] = arm
    result["loadavg_after"] = bl.loadavg()
    result["cpu_busy_pct_after"] = bl.cpu_busy_pct()

    print(f"{'arm':<16}{'backlog':>9}{'sent':>10}{'delivered':>11}{'softnet drops':>15}{'drop %':>8}")
    for name, a in result["arms"].items():
        print(
            f"{name:<16}{a['netdev_max_backlog']:>9}{a['sent']:>10}{a['delivered']:>11}"
            f"{a['softnet_dropped']:>15}{a['softnet_dropped_pct']:>8}"
        )
    return bl.finish(result, args.json)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Agent bench: link-event reaction time (agent vs a udev RUN+= rule on the same harness), RSS, binary size.

Reaction time: in a fresh network namespace, add N veth pairs one after another (default 200, 50 ms apart)
whose first end matches the profile (role virtual, include glob "wsr*", MTU opt-in 9000), and measure, from
the kernel's link-creation notification to the notification that the link's MTU is 9000, with one
`ip -ts monitor link` in the namespace timestamping both (so both ends of the interval share its latency).

Mechanisms, one after the other on the same harness:
  agent  wirespeed-agent running in the namespace with the profile (default flags unless --agent-arg)
  udev   systemd-udevd started in the namespace (it gets that namespace's net uevents, and its RUN+=
         programs run there) with the rule
           ACTION=="add", SUBSYSTEM=="net", KERNEL=="wsr*", RUN+="/sbin/ip link set dev %k mtu 9000"
         stopped afterwards.

The agent measured is the shipped build (agent/Makefile `build`, the image's: CGO_ENABLED=0,
-trimpath -buildvcs=false -ldflags='-s -w') unless --agent names another. Memory: VmRSS and VmHWM of
the running agent after the link adds. Size: the shipped build and a plain `CGO_ENABLED=0 go build`.

Usage: run [--links N] [--gap-ms MS] [--agent BIN] [--mechanism agent|udev ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import benchlib as bl

MTU = 9000
UDEV_RULE = 'ACTION=="add", SUBSYSTEM=="net", KERNEL=="wsr*", RUN+="/sbin/ip link set dev %k mtu 9000"\n'
UDEVD = Path("/lib/systemd/systemd-udevd")
UDEV_RULES_DIR = Path("/run/udev/rules.d")
# One `ip -ts -o monitor link` line: "[2026-11-22T12:59:22.132734] 3: wsr0@wsp0: <...> mtu 1500 qdisc ..."
MONITOR_LINE = re.compile(
    r"^\[(?P<ts>[^\]]+)\] (?P<deleted>Deleted )?(?P<index>\d+): "
    r"(?P<name>[^:@\s]+)(@\S+)?: .* mtu (?P<mtu>\d+)"
)


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (no interpolation: the value reported is one that was measured)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def summarize(ms: list[float]) -> dict[str, Any]:
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 2),
        "p90_ms": round(percentile(ms, 90), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "max_ms": round(max(ms), 2),
        "mean_ms": round(statistics.fmean(ms), 2),
    }


def parse_ts(ts: str) -> float:
    # ip -ts prints local wall time with microseconds: 2026-11-22T12:59:22.132577
    whole, frac = ts.split(".")
    return time.mktime(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + float("0." + frac)


@dataclass(frozen=True)
class Plan:
    """What the harness does to links: `add` creates wsr0..wsr<links-1>; `readd` deletes and re-creates
    wsr0 <links> times (a VF that the host hot-removes and re-adds, at a flapping rate)."""

    links: int
    gap_s: float
    pattern: str = "add"


def churn_links(ns: str, plan: Plan) -> None:
    for i in range(plan.links):
        t = time.monotonic()
        n = i if plan.pattern == "add" else 0
        if plan.pattern == "readd" and i > 0:
            bl.sh(["ip", "-n", ns, "link", "del", "wsr0"])
        bl.sh(["ip", "-n", ns, "link", "add", f"wsr{n}", "type", "veth", "peer", "name", f"wsp{n}"])
        if (rest := plan.gap_s - (time.monotonic() - t)) > 0:
            time.sleep(rest)


def reactions(monitor_out: str, plan: Plan) -> tuple[list[float], int]:
    """Reaction per link instance (name and ifindex: a re-added link is a new instance) and how many
    instances never showed the MTU."""
    created: dict[tuple[str, int], float] = {}
    done: dict[tuple[str, int], float] = {}
    for line in monitor_out.splitlines():
        m = MONITOR_LINE.match(line)
        if not m or m["deleted"] or not m["name"].startswith("wsr"):
            continue
        key, ts = (m["name"], int(m["index"])), parse_ts(m["ts"])
        created.setdefault(key, ts)
        if int(m["mtu"]) == MTU:
            done.setdefault(key, ts)
    ms = [(done[k] - created[k]) * 1000 for k in created if k in done]
    return ms, plan.links - len(ms)


def measure(ns: str, plan: Plan, work: Path) -> dict[str, Any]:
    # The monitor writes to a file, not a pipe: a pipe nobody drains fills up (64 KiB), the monitor blocks,
    # its netlink socket overflows and notifications are lost.
    mon_file = work / f"monitor-{ns}.txt"
    with open(mon_file, "w") as sink:
        mon = subprocess.Popen(["ip", "netns", "exec", ns, "ip", "-ts", "-o", "monitor", "link"], stdout=sink)
    try:
        time.sleep(0.3)  # let the monitor subscribe before the first add
        churn_links(ns, plan)
        # The slowest mechanism gets a full second after the last add; anything later counts as missing.
        time.sleep(1.0)
    finally:
        bl.terminate(mon)
    ms, missing = reactions(mon_file.read_text(), plan)
    return {
        "summary": summarize(ms) if ms else None,
        "missing": missing,
        "raw_ms": [round(x, 3) for x in ms],
    }


def proc_status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        # RssFile is mostly the binary's own text pages: a larger binary costs resident memory too.
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key + "_kib"] = int(value.split()[0])
    return out


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def wait_ready(ns: str, listen: str, proc: subprocess.Popen[Any], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"agent exited {proc.returncode} before ready")
        r = subprocess.run(
            ["ip", "netns", "exec", ns, "curl", "-sf", "-o", "/dev/null", f"http://{listen}/readyz"],
            check=False,
        )
        if r.returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError(f"agent not ready on {listen} after {timeout}s")


def run_agent(agent: Path, plan: Plan, extra_args: list[str], work: Path) -> dict[str, Any]:
    profile = work / "reaction-profile.json"
    profile.write_text(
        json.dumps(
            {
                "name": "bench-reaction",
                "interfaces": {"roles": ["virtual"], "include": ["wsr*"]},
                "mtu": {"value": MTU},
            }
        )
    )
    # The profile has no sysctls; an empty directory as the sysctl root guarantees nothing global is written.
    sysroot = work / "empty-proc-sys"
    sysroot.mkdir(exist_ok=True)
    ns = f"wsb-agent-{os.getpid()}"
    listen = "127.0.0.1:9808"  # inside the bench namespace: no clash with anything on the host
    args = [
        str(agent),
        "--profile",
        str(profile),
        "--proc-sys-root",
        str(sysroot),
        "--listen",
        listen,
        "--kube=false",
        *extra_args,
    ]
    with bl.netns(ns):
        with open(work / "agent.log", "w") as log:
            proc = subprocess.Popen(["ip", "netns", "exec", ns, *args], stdout=log, stderr=log)
        try:
            wait_ready(ns, listen, proc)
            cpu0 = cpu_seconds(proc.pid)
            res = measure(ns, plan, work)
            res["cpu_seconds_during_adds"] = round(cpu_seconds(proc.pid) - cpu0, 3)
            res["memory"] = proc_status(proc.pid)
            with contextlib.suppress(OSError):
                metrics = subprocess.run(
                    ["ip", "netns", "exec", ns, "curl", "-sf", f"http://{listen}/metrics"],
                    capture_output=True,
                    text=True,
                    check=False,
                ).stdout
                res["metrics_sample"] = [
                    line for line in metrics.splitlines() if line.startswith("wirespeed_") and "event" in line
                ][:10]
        finally:
            bl.terminate(proc)
        res["agent_exit_code"] = proc.returncode
        # Proof that the agent, not something else, set the MTU: its own "applied" log lines.
        applied = [json.loads(x) for x in (work / "agent.log").read_text().splitlines() if '"applied"' in x]
        res["agent_applied_mtu"] = sorted(
            {a.get("link", "") for a in applied if a.get("msg") == "applied" and a.get("setting") == "mtu"}
        )
        res["args"] = args[1:]
    return res


def run_udev(plan: Plan, work: Path) -> dict[str, Any]:
    if not UDEVD.exists():
        raise SystemExit(f"{UDEVD} missing: apt-get install udev")
    if subprocess.run(["pgrep", "-x", "systemd-udevd"], capture_output=True).returncode == 0:
        raise SystemExit("a systemd-udevd is already running here; this bench starts and stops its own")
    run_udev_existed = Path("/run/udev").exists()
    rule = UDEV_RULES_DIR / "99-wirespeed-bench.rules"
    ns = f"wsb-udev-{os.getpid()}"
    with bl.netns(ns):
        UDEV_RULES_DIR.mkdir(parents=True, exist_ok=True)
        rule.write_text(UDEV_RULE)
        udevd = subprocess.Popen(
            ["ip", "netns", "exec", ns, str(UDEVD)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            # udevd is ready when its control socket exists and answers.
            deadline = time.monotonic() + 15
            while subprocess.run(["udevadm", "control", "--ping", "--timeout=2"], capture_output=True).returncode != 0:
                if udevd.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"systemd-udevd did not come up (exit {udevd.returncode})")
                time.sleep(0.1)
            res = measure(ns, plan, work)
            res["rule"] = UDEV_RULE.strip()
            res["udevd_version"] = bl.sh(["udevadm", "--version"]).strip()
        finally:
            bl.terminate(udevd)
            rule.unlink(missing_ok=True)
            if not run_udev_existed:
                shutil.rmtree("/run/udev", ignore_errors=True)
    return res


def binary_sizes(work: Path) -> dict[str, Any]:
    """Size of the plain static build and of the shipped one (agent/Makefile `build`, the image's)."""
    plain = bl.go_build("wirespeed-agent", work)
    shipped = work / "wirespeed-agent-shipped"
    subprocess.run(
        ["go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", str(shipped), "./cmd/wirespeed-agent"],
        cwd=bl.AGENT_MODULE,
        env=dict(os.environ, CGO_ENABLED="0"),
        check=True,
        timeout=900,
    )
    # `go version -m` prints the build settings the binary carries; CGO_ENABLED=0 means no libc, static.
    settings = bl.sh(["go", "version", "-m", str(shipped)])
    return {
        "default_build_bytes": plain.stat().st_size,
        "shipped_build_bytes": shipped.stat().st_size,
        "shipped_build_flags": "CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags '-s -w'",
        "cgo_enabled_0": "CGO_ENABLED=0" in settings,
        "binary": shipped,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--links", type=int, default=200)
    ap.add_argument("--gap-ms", type=float, default=50, help="time between link adds")
    ap.add_argument(
        "--pattern",
        choices=["add", "readd"],
        default="add",
        help="add: N new links; readd: delete and re-create one link N times (a flapping VF)",
    )
    ap.add_argument("--mechanism", action="append", choices=["agent", "udev"], help="default: both")
    ap.add_argument("--agent", type=Path, help="prebuilt wirespeed-agent (default: build it)")
    ap.add_argument("--agent-arg", action="append", default=[], help="extra agent flag, e.g. --agent-arg=--debounce=0s")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    mechanisms = args.mechanism or ["agent", "udev"]
    plan = Plan(links=args.links, gap_s=args.gap_ms / 1000, pattern=args.pattern)
    bl.require_root()
    bl.exit_on_sigterm()

    with bl.scratch_dir("wirespeed-bench-agent-") as work:
        return run_bench(args, mechanisms, plan, work)


def run_bench(args: argparse.Namespace, mechanisms: list[str], plan: Plan, work: Path) -> int:
    result: dict[str, Any] = {
        "bench": "agent",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": bl.machine(),
        "source": bl.source(),
        "loadavg_before": bl.loadavg(),
        "cpu_busy_pct_before": bl.cpu_busy_pct(),
        "method": {"links": args.links, "gap_ms": args.gap_ms, "pattern": args.pattern, "mtu": MTU},
        "reaction": {},
    }
    agent = args.agent
    if "agent" in mechanisms or not agent:
        sizes = binary_sizes(work)
        agent = agent or sizes["binary"]
        sizes.pop("binary")
        sizes["measured_binary_bytes"] = agent.stat().st_size  # the one whose reaction and RSS were measured
        result["binary"] = sizes
    for m in mechanisms:
        bl.log(f"{m}: {args.links} link {args.pattern}s, {args.gap_ms} ms apart")
        result["reaction"][m] = run_agent(agent, plan, args.agent_arg, work) if m == "agent" else run_udev(plan, work)
    result["loadavg_after"] = bl.loadavg()
    result["cpu_busy_pct_after"] = bl.cpu_busy_pct()

    for m, r in result["reaction"].items():
        s = r["summary"] or {}
        print(
            f"{m:<6} p50 {s.get('p50_ms')} ms  p99 {s.get('p99_ms')} ms  max {s.get('max_ms')} ms",
            f" n={s.get('n')}  missing={r['missing']}",
        )
    if "agent" in result["reaction"]:
        print(f"agent memory {result['reaction']['agent']['memory']}  binary {result.get('binary')}")
    return bl.finish(result, args.json)


if __name__ == "__main__":
    sys.exit(main())

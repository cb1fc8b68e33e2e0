"""Benchmark: whole-process wall time and peak RSS of `wirespeed plan DIR --json`, and how it grows with pools.

Cases: every example under examples/ that has a Pulumi.yaml, the root project, and synthetic stacks of one
AKS cluster with N user pools (default N = 1, 10, 20, 40), generated into a scratch directory. A synthetic
pool is a `wirespeed.azure.NetworkOptimizedNodePool` when that component is installed (``--pool-kind
component``, the default when importable), else a plain `azure-native` `containerservice.AgentPool`
(``--pool-kind agentpool``). Also measured: the import floor (`import pulumi, pulumi_azure_native...`),
which every plan pays before the program runs.

Method: each case is a fresh process (spawned like a user runs it), 1 warm-up then --runs timed runs; wall
time from time.perf_counter() around spawn-to-exit, CPU time (user + system) and peak RSS from wait4()'s
rusage. CPU time is reported beside wall time because the machine is shared: wall time swings with the load,
CPU time much less. Also per project, in one process: the first plan (pays the SDK imports) and the median
of --runs more (only the program, the mocks and the review). The growth per pool is a least-squares line
through the synthetic cases' CPU medians, and through their warm in-process medians. Prints the results and
the machine load; with --record writes results/<date>-<time>.json (raw per-run numbers included).

Usage: bench/plan/run.py [--runs N] [--pools 1,10,20,40] [--pool-kind component|agentpool] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import benchlib as bl  # noqa: E402  (bench/ is not a package; the benches share this module)

WIRESPEED = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or "wirespeed"
TARGET_EXAMPLE_S = 3.0  # issue 6: each example under 3 s
TARGET_40_POOLS_S = 10.0  # issue 6: the 40-pool stack under 10 s

CLUSTER = """\
import pulumi
from pulumi_azure_native import containerservice as cs, resources

rg = resources.ResourceGroup("rg", resource_group_name="rg-bench")
cluster = cs.ManagedCluster(
    "aks",
    resource_group_name=rg.name,
    resource_name_="aks-bench",
    dns_prefix="aksbench",
    identity=cs.ManagedClusterIdentityArgs(type="SystemAssigned"),
    agent_pool_profiles=[
        cs.ManagedClusterAgentPoolProfileArgs(name="system", mode="System", vm_size="Standard_D4ds_v6", count=3)
    ],
    network_profile=cs.ContainerServiceNetworkProfileArgs(
        network_plugin="azure",
        outbound_type="loadBalancer",
        load_balancer_profile=cs.ManagedClusterLoadBalancerProfileArgs(
            allocated_outbound_ports=1024,
            managed_outbound_ips=cs.ManagedClusterLoadBalancerProfileManagedOutboundIPsArgs(count=20),
        ),
    ),
)
"""

AGENT_POOLS = """\
for i in range({n}):
    cs.AgentPool(
        f"pool{{i}}",
        resource_group_name=rg.name,
        resource_name_=cluster.name,
        agent_pool_name=f"pool{{i}}",
        vm_size="Standard_D16s_v6",
        mode="User",
        enable_auto_scaling=True,
        min_count=1,
        max_count=10,
        upgrade_settings=cs.AgentPoolUpgradeSettingsArgs(max_surge="10%"),
        node_labels={{"wirespeed.io/profile": "throughput"}},
        linux_os_config=cs.LinuxOSConfigArgs(sysctls=cs.SysctlConfigArgs(net_core_netdev_max_backlog=32768)),
    )
"""

COMPONENT_POOLS = """\
from wirespeed.azure import NetworkOptimizedNodePool, NetworkOptimizedNodePoolArgs

for i in range({n}):
    NetworkOptimizedNodePool(
        f"pool{{i}}",
        NetworkOptimizedNodePoolArgs(
            name=f"pool{{i}}",
            vm_size="Standard_D16s_v6",
            min_count=1,
            max_count=10,
            profile="throughput",
            resource_group_name=rg.name,
            cluster_name=cluster.name,
        ),
    )
"""


def component_available() -> bool:
    code = "import wirespeed.azure as a; a.NetworkOptimizedNodePool; a.NetworkOptimizedNodePoolArgs"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, check=False).returncode == 0


def write_synthetic(root: Path, pools: int, kind: str) -> Path:
    project = root / f"pools-{pools}"
    project.mkdir()
    (project / "Pulumi.yaml").write_text(f"name: bench-{pools}-pools\nruntime: python\n")
    body = (COMPONENT_POOLS if kind == "component" else AGENT_POOLS).format(n=pools)
    (project / "__main__.py").write_text(CLUSTER + "\n" + textwrap.dedent(body))
    return project


WARM = """
import json, sys, time
from wirespeed.program import run_program
from wirespeed.program.review import review
times = []
for _ in range(int(sys.argv[2]) + 1):
    start = time.perf_counter()
    review(run_program(sys.argv[1]))
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def measure_warm(project: Path, runs: int) -> dict[str, Any]:
    """In one process: the first plan pays the imports, later ones only the program, the mocks and the review."""
    out = subprocess.run(
        [sys.executable, "-c", WARM, str(project), str(runs)], capture_output=True, text=True, check=True
    )
    times = json.loads(out.stdout)
    return {
        "first_s": round(times[0], 3),
        "warm_s_median": round(statistics.median(times[1:]), 3),
        "warm_s": [round(t, 3) for t in times[1:]],
    }


# A synthetic stack is a bare cluster and pools: wirespeed's own rules find it untuned (tuning-agent-present,
# netdev-backlog-minimum are mandatory), and `plan` exits 2 after printing the whole plan and its verdicts.
VIOLATIONS_EXIT = 2


def measure(argv: list[str], runs: int, *, violations_ok: bool = False) -> dict[str, Any]:
    walls, rss, cpu = [], [], []
    for i in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        code = os.waitstatus_to_exitcode(status)
        finished = code == 0 or (violations_ok and code == VIOLATIONS_EXIT and "mandatory violation" in stderr)
        if not finished:
            raise SystemExit(f"{' '.join(argv)} failed: {stderr.strip()}")
        if i >= 1:
            walls.append(round(wall, 3))
            rss.append(round(usage.ru_maxrss / 1024, 1))
            cpu.append(round(usage.ru_utime + usage.ru_stime, 3))
    ordered = sorted(walls)
    return {
        "runs": runs,
        "wall_s_median": round(statistics.median(walls), 3),
        "wall_s_max": ordered[-1],
        "wall_s_min": ordered[0],
        "peak_rss_mib_max": max(rss),
        # CPU time (user + system) of the child: what the plan costs, whatever else the shared machine runs.
        "cpu_s_median": round(statistics.median(cpu), 3),
        "wall_s": walls,
        "cpu_s": cpu,
        "peak_rss_mib": rss,
    }


def slope(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares (intercept, per-unit slope) through (x, y)."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    return my - b * mx, b


def bytecode_state() -> dict[str, Any]:
    """Whether the SDK's modules are imported from cached bytecode or compiled from source on every run: a venv
    that uv made without --compile-bytecode has no .pyc files, and with PYTHONDONTWRITEBYTECODE set (common in CI
    and container images) Python never writes them, so each plan compiles every SDK module it imports."""
    import importlib.util

    spec = importlib.util.find_spec("pulumi_azure_native")
    cached = Path(importlib.util.cache_from_source(spec.origin)) if spec and spec.origin else None
    prefix = os.environ.get("PYTHONPYCACHEPREFIX")
    return {
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE"),
        "PYTHONPYCACHEPREFIX": prefix,
        "sdk_pyc_present": bool(cached and cached.exists()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pools", default="1,10,20,40")
    parser.add_argument("--pool-kind", choices=["component", "agentpool"], default=None)
    parser.add_argument("--record", action="store_true", help="write results/<date>-<time>.json")
    args = parser.parse_args()
    kind = args.pool_kind or ("component" if component_available() else "agentpool")
    pool_counts = [int(x) for x in args.pools.split(",") if x]  # --pools "": no synthetic stacks

    before = {"loadavg": bl.loadavg(), "cpu_busy_pct": bl.cpu_busy_pct()}
    results: dict[str, Any] = {}
    floor = [sys.executable, "-c", "import pulumi, pulumi_azure_native.containerservice, pulumi_kubernetes"]
    bl.log("import floor")
    results["import floor (pulumi, azure-native containerservice, kubernetes)"] = measure(floor, args.runs)
    projects = [bl.REPO, *sorted(p.parent for p in (bl.REPO / "examples").glob("*/Pulumi.yaml"))]
    for project in projects:
        name = "root project" if project == bl.REPO else str(project.relative_to(bl.REPO))
        bl.log(f"plan {name}")
        results[f"plan {name}"] = measure([WIRESPEED, "plan", str(project), "--json"], args.runs)
        results[f"plan {name}"]["in_process"] = measure_warm(project, args.runs)
    growth: list[tuple[int, float]] = []
    warm_growth: list[tuple[int, float]] = []
    with bl.scratch_dir("wirespeed-bench-plan-") as scratch:
        for n in pool_counts:
            project = write_synthetic(scratch, n, kind)
            bl.log(f"plan synthetic {n} pools ({kind})")
            r = measure([WIRESPEED, "plan", str(project), "--json"], args.runs, violations_ok=True)
            r["in_process"] = measure_warm(project, args.runs)
            results[f"plan synthetic {n} pools"] = r
            growth.append((n, r["cpu_s_median"]))
            warm_growth.append((n, r["in_process"]["warm_s_median"]))
    intercept, per_pool = slope(growth) if growth else (0.0, 0.0)
    warm_intercept, warm_per_pool = slope(warm_growth) if warm_growth else (0.0, 0.0)
    after = {"loadavg": bl.loadavg(), "cpu_busy_pct": bl.cpu_busy_pct()}
    doc = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {**bl.machine(), "python": platform.python_version()},
        "source": bl.source(),
        "method": "fresh process per run, 1 warm-up, wall from perf_counter, peak RSS from wait4 ru_maxrss",
        "synthetic_pool_kind": kind,
        "bytecode": bytecode_state(),
        "targets_s": {"each example": TARGET_EXAMPLE_S, "40 pools": TARGET_40_POOLS_S},
        "growth_cpu": {"intercept_s": round(intercept, 3), "per_pool_ms": round(per_pool * 1000, 1)},
        "growth_in_process_warm": {
            "intercept_s": round(warm_intercept, 3),
            "per_pool_ms": round(warm_per_pool * 1000, 1),
        },
        "loadavg_before": before["loadavg"],
        "loadavg_after": after["loadavg"],
        "cpu_busy_pct_before": before["cpu_busy_pct"],
        "cpu_busy_pct_after": after["cpu_busy_pct"],
        "results": results,
    }
    for name, r in results.items():
        warm = r.get("in_process")
        print(
            f"{name:66s} wall {r['wall_s_median']:5.2f} s (max {r['wall_s_max']:5.2f})  "
            f"cpu {r['cpu_s_median']:5.2f} s  "
            f"RSS {r['peak_rss_mib_max']:5.1f} MiB"
            + (f"  warm in-process {warm['warm_s_median']:.3f} s" if warm else "")
        )
    for key in ("growth_cpu", "growth_in_process_warm"):
        print(f"{key}: {doc[key]['intercept_s']} s + {doc[key]['per_pool_ms']} ms per pool ({kind})")
    if args.record:
        bl.record(HERE, doc)
    return bl.finish(doc, None)


if __name__ == "__main__":
    raise SystemExit(main())

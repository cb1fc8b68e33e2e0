"""Benchmark: `wirespeed drift` over 5,000 Nodes held by a real kube-apiserver (tests/apiserver.py).

Method: start the test fixture's etcd + kube-apiserver, apply the rendered tuning manifests (the profile
ConfigMaps), create N Nodes (8 concurrent POSTs) each with a tuning-status annotation in the agent's format (a
mix of tuned, ring-reverted, backlog-changed, stale, unlabelled and status-less nodes), then:
- the whole command as users run it, `wirespeed drift --json`, `--runs` times: wall time (time.perf_counter
  around the child) and peak RSS (wait4's ru_maxrss);
- in-process, the phases: listing every Node page by page (wirespeed.drift.cluster, raw JSON), judging them
  (wirespeed.drift.judge), and for comparison the same list through the client's typed models
  (CoreV1Api.list_node), which the command avoids.
Prints and (with --record) writes results/<date>-<time>.json with the machine, the commit and the load.
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
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent / "tests"))
import apiserver as fixture  # noqa: E402  (tests/apiserver.py)
import benchlib as bl  # noqa: E402  (bench/ is not a package; the benches share this module)
from wirespeed.drift import cluster as drift_cluster  # noqa: E402
from wirespeed.drift import judge, profiles_from_config_maps  # noqa: E402

WIRESPEED = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or "wirespeed"


def annotation(i: int, now: datetime) -> str | None:
    kind = i % 20
    if kind == 0:
        return None  # agent missing
    when = now - timedelta(hours=1) if kind == 1 else now
    rx = 1024 if kind == 2 else 8192
    backlog = 1000 if kind == 3 else 32768
    return json.dumps(
        {
            "profile": "throughput",
            "state": "applied",
            "reason": "all settings applied",
            "interfaces": [
                {"name": "enP1s1", "index": 7, "driver": "mlx5_core", "role": "sriov-vf", "selected": True,
                 "reason": "enslaved to eth0", "rx": {"desired": 8192, "current": rx, "max": 8192},
                 "tx": {"desired": 8192, "current": 8192, "max": 8192}},
            ],
            "sysctls": {"net.core.netdev_max_backlog": {"desired": 32768, "current": backlog}},
            "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        separators=(",", ":"),
    )  # fmt: skip


def node(i: int, now: datetime) -> dict[str, object]:
    labels = {"kubernetes.io/os": "linux", "agentpool": "net", "kubernetes.io/hostname": f"aks-net-{i:05d}"}
    if i % 50 != 49:
        labels["wirespeed.io/profile"] = "throughput"
    meta: dict[str, object] = {"name": f"aks-net-{i:05d}", "labels": labels}
    value = annotation(i, now)
    if value is not None:
        meta["annotations"] = {"wirespeed.io/tuning-status": value}
    # A kubelet's Node carries much more (status.images, addresses, capacity): a few KiB of status keeps the list
    # response near a real cluster's size per node.
    status = {
        "capacity": {"cpu": "16", "memory": "65843676Ki", "pods": "110"},
        "addresses": [{"type": "InternalIP", "address": f"10.{i // 65536}.{i // 256 % 256}.{i % 256}"}],
        "images": [
            {"names": [f"registry.example/app-{n}@sha256:{'0' * 64}"], "sizeBytes": 10_000_000} for n in range(12)
        ],
    }
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": status}


def create_nodes(server: fixture.ApiServer, count: int) -> float:
    now = datetime.now(UTC)
    return server.create_many("/api/v1/nodes", lambda i: node(i, now), count)


def whole_command(kubeconfig: Path, runs: int) -> dict[str, float]:
    walls, rss = [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(
            [WIRESPEED, "drift", "--kubeconfig", str(kubeconfig), "--json"], stdout=subprocess.DEVNULL
        )
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        rss.append(usage.ru_maxrss / 1024)
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise SystemExit(f"wirespeed drift exited {os.waitstatus_to_exitcode(status)}")
    return {
        "runs": runs,
        "wall_s_median": round(statistics.median(walls), 2),
        "wall_s_max": round(max(walls), 2),
        "peak_rss_mib_max": round(max(rss), 1),
    }


def phases(kubeconfig: Path) -> dict[str, float | int]:
    from kubernetes import client

    target = drift_cluster.Target(kubeconfig, None)
    api = drift_cluster.connect(target)
    start = time.perf_counter()
    profiles = profiles_from_config_maps(drift_cluster.list_profile_config_maps(api, target))
    nodes = list(drift_cluster.list_nodes(api, target, None))
    listed = time.perf_counter()
    report = judge(nodes, profiles, datetime.now(UTC))
    judged = time.perf_counter()
    start_typed = time.perf_counter()
    count, token = 0, None
    core = client.CoreV1Api(api)
    while True:
        page = core.list_node(limit=drift_cluster.PAGE_SIZE, _continue=token)
        count += len(page.items)
        token = page.metadata._continue
        if not token:
            break
    typed = time.perf_counter() - start_typed
    return {
        "nodes": len(nodes),
        "drifted": len(report.drifted),
        "list_raw_json_s": round(listed - start, 2),
        "judge_s": round(judged - listed, 3),
        "list_typed_models_s": round(typed, 2),
        "typed_nodes": count,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    reason = fixture.missing_prerequisite()
    if reason:
        raise SystemExit(reason)
    result: dict[str, object] = {"machine": bl.machine(), "source": bl.source(), "load_before": bl.loadavg()}
    with fixture.running() as server:
        rendered = subprocess.run(
            [WIRESPEED, "render", "node-tuning"], capture_output=True, text=True, check=True
        ).stdout
        server.apply(rendered)
        bl.log(f"creating {args.nodes} nodes")
        result["create_s"] = round(create_nodes(server, args.nodes), 1)
        result["nodes"] = args.nodes
        bl.log("wirespeed drift --json")
        result["command"] = whole_command(server.admin_kubeconfig, args.runs)
        result["phases"] = phases(server.admin_kubeconfig)
    result["load_after"] = bl.loadavg()
    print(bl.dump(result))
    if args.record:
        bl.record(HERE, result)


if __name__ == "__main__":
    main()

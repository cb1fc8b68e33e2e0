"""Benchmark: `wirespeed check` as a whole process on synthetic stack exports of 2,000, 20,000 and 200,000 resources.

Method: the exports are generated here (deterministic, seeded) in `pulumi stack export`'s shape and written with
4-space indentation as the CLI writes them; each size is checked N times as a fresh process (after one warm-up)
with `--format json`; wall time by time.perf_counter() around spawn-to-exit, peak RSS from wait4()'s ru_maxrss of
the child. Each stack is 20-resource blocks: a ManagedCluster, three AgentPools, two ConfigMaps (a tuning profile
and an unrelated one), the tuning DaemonSet, a Kubernetes provider and twelve resources no rule reads (storage,
network, Deployments, Services); one cluster in 20 leaves allocatedOutboundPorts at 0, so the check reports
violations (exit 1) like a real gate would. Prints the result; --record writes results/<date>-<time>.json.

`--shape terraform` writes `terraform show -json PLANFILE` documents instead (compact, as terraform writes them):
20-resource blocks of an azurerm_kubernetes_cluster, three azurerm_kubernetes_cluster_node_pool whose
kubernetes_cluster_id is unknown until apply (linked through `configuration` references), the tuning ConfigMap
and DaemonSet as kubernetes_manifest, and fourteen resources no rule reads; each resource appears in
planned_values, resource_changes and configuration, as in a real plan.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import benchlib as bl  # noqa: E402  (bench/ is not a package; the benches share this module)

WIRESPEED = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or "wirespeed"
SIZES = (2_000, 20_000, 200_000)
JSON_LOAD = "import json, sys; json.load(open(sys.argv[1]))"
BLOCK = 20  # resources per cluster block
STACK = "urn:pulumi:bench::synthetic::"
SUB = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups"
PROFILE = {
    "schema_version": 1,
    "name": "throughput",
    "interfaces": {"roles": ["sriov-vf", "primary"], "drivers": [], "include": [], "exclude": ["lo", "veth*"]},
    "rings": {"mana": {"rx": 8192, "tx": 8192}, "mlx5_core": {"rx": 8192, "tx": 8192}, "ena": {"rx": 8192, "tx": 1024}},
    "sysctls": {"net.core.netdev_max_backlog": 32768},
}


def _resource(
    type_token: str, name: str, inputs: dict[str, Any], outputs: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "urn": f"{STACK}{type_token}::{name}",
        "custom": True,
        "id": extra.pop("id", f"{name}-id"),
        "type": type_token,
        "inputs": inputs,
        "outputs": outputs,
        "parent": f"{STACK}pulumi:pulumi:Stack::synthetic-bench",
        "provider": extra.pop("provider", f"{STACK}pulumi:providers:azure-native::default::1"),
        "created": "2026-11-20T09:14:02.118Z",
        "modified": "2026-11-20T09:14:02.118Z",
        **extra,
    }


def _agent_daemon_set(image: str | None) -> dict[str, Any]:
    """A tuning agent DaemonSet as the least-privilege rule wants it (every block of the benched documents has one)."""
    container: dict[str, Any] = {
        "name": "agent",
        **({"image": image} if image is not None else {}),
        "securityContext": {"privileged": False, "capabilities": {"drop": ["ALL"], "add": ["NET_ADMIN"]}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "wirespeed-agent-throughput", "labels": {"app.kubernetes.io/name": "wirespeed-agent"}},
        "spec": {"template": {"spec": {"hostNetwork": True, "containers": [container]}}},
    }


def block(index: int, rng: random.Random) -> list[dict[str, Any]]:
    """One cluster and everything around it: 20 resources."""
    cluster = f"aks-{index}"
    group = f"rg-{index}"
    ports = 0 if index % 20 == 7 else 4000
    cluster_inputs = {
        "resourceGroupName": group,
        "resourceName": cluster,
        "location": "westeurope",
        "dnsPrefix": cluster,
        "networkProfile": {
            "networkPlugin": "azure",
            "loadBalancerSku": "standard",
            "outboundType": "loadBalancer",
            "loadBalancerProfile": {"allocatedOutboundPorts": ports, "managedOutboundIPs": {"count": 7}},
        },
        "agentPoolProfiles": [
            {
                "name": "system",
                "mode": "System",
                "vmSize": "Standard_D4ds_v6",
                "count": 3,
                "upgradeSettings": {"maxSurge": "1"},
            }
        ],
    }
    cluster_urn = f"{STACK}azure-native:containerservice:ManagedCluster::{cluster}"
    cluster_id = f"{SUB}/{group}/providers/Microsoft.ContainerService/managedClusters/{cluster}"
    resources = [
        _resource(
            "azure-native:containerservice:ManagedCluster",
            cluster,
            cluster_inputs,
            {**cluster_inputs, "name": cluster, "id": cluster_id, "provisioningState": "Succeeded"},
            id=cluster_id,
        )
    ]
    for pool in range(3):
        inputs = {
            "resourceGroupName": group,
            "resourceName": cluster,
            "agentPoolName": f"pool{pool}",
            "vmSize": "Standard_D16ds_v6",
            "enableAutoScaling": True,
            "minCount": 1,
            "maxCount": rng.randint(5, 30),
            "upgradeSettings": {"maxSurge": "1"},
            "linuxOSConfig": {"sysctls": {"netCoreNetdevMaxBacklog": 32768}},
        }
        resources.append(
            _resource(
                "azure-native:containerservice:AgentPool",
                f"{cluster}-pool{pool}",
                inputs,
                {**inputs, "name": f"pool{pool}", "provisioningState": "Succeeded"},
                propertyDependencies={"resourceGroupName": [], "resourceName": [cluster_urn]},
            )
        )
    k8s = f"{STACK}pulumi:providers:kubernetes::{cluster}::1"
    profile_cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "wirespeed-profile-throughput", "namespace": "wirespeed-system"},
        "data": {"profile.json": json.dumps(PROFILE, indent=2)},
    }
    other_cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "app-config"},
        "data": {"LOG_LEVEL": "info"},
    }
    daemon_set = _agent_daemon_set(image="ghcr.io/wirespeed-io/wirespeed-agent:v0.1.0")
    resources += [
        _resource("kubernetes:core/v1:ConfigMap", f"{cluster}-profile", profile_cm, profile_cm, provider=k8s),
        _resource("kubernetes:core/v1:ConfigMap", f"{cluster}-app", other_cm, other_cm, provider=k8s),
        _resource("kubernetes:apps/v1:DaemonSet", f"{cluster}-agent", daemon_set, daemon_set, provider=k8s),
        _resource("pulumi:providers:kubernetes", cluster, {"version": "4.34.2"}, {"version": "4.34.2"}, provider=""),
    ]
    for extra in range(BLOCK - len(resources)):
        kind = extra % 4
        if kind == 0:
            inputs = {"resourceGroupName": group, "accountName": f"st{index}x{extra}", "sku": {"name": "Standard_LRS"}}
            type_token = "azure-native:storage:StorageAccount"
        elif kind == 1:
            inputs = {"resourceGroupName": group, "addressSpace": {"addressPrefixes": ["10.0.0.0/16"]}}
            type_token = "azure-native:network:VirtualNetwork"
        elif kind == 2:
            inputs = {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"svc-{extra}"},
                "spec": {
                    "replicas": rng.randint(1, 10),
                    "template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}},
                },
            }
            type_token = "kubernetes:apps/v1:Deployment"
        else:
            inputs = {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"svc-{extra}"},
                "spec": {"ports": [{"port": 80}]},
            }
            type_token = "kubernetes:core/v1:Service"
        resources.append(_resource(type_token, f"{cluster}-r{extra}", inputs, inputs))
    return resources


def write_export(path: Path, count: int) -> None:
    rng = random.Random(count)
    resources: list[dict[str, Any]] = [
        {"urn": f"{STACK}pulumi:pulumi:Stack::synthetic-bench", "custom": False, "type": "pulumi:pulumi:Stack"}
    ]
    index = 0
    while len(resources) < count:
        resources += block(index, rng)
        index += 1
    doc = {
        "version": 3,
        "deployment": {
            "manifest": {"time": "2026-11-20T09:14:05Z", "version": "v3.259.0"},
            "resources": resources[:count],
        },
    }
    with path.open("w") as f:
        json.dump(doc, f, indent=4)


AZURERM = "registry.terraform.io/hashicorp/azurerm"


def _tf_change(tf_type: str, name: str, after: dict[str, Any], unknown: dict[str, Any]) -> dict[str, Any]:
    return {
        "address": f"{tf_type}.{name}",
        "mode": "managed",
        "type": tf_type,
        "name": name,
        "provider_name": AZURERM,
        "change": {
            "actions": ["create"],
            "before": None,
            "after": after,
            "after_unknown": unknown,
            "before_sensitive": False,
            "after_sensitive": {},
        },
    }


def tf_block(index: int, rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One cluster and everything around it as resource_changes, and its configuration resources: 20 resources."""
    cluster = f"aks{index}"
    ports = 0 if index % 20 == 7 else 4000
    pool_size = {"vm_size": "Standard_D16ds_v6", "upgrade_settings": [{"max_surge": "1"}]}
    backlog = [{"sysctl_config": [{"net_core_netdev_max_backlog": 32768}]}]
    changes = [
        _tf_change(
            "azurerm_kubernetes_cluster",
            cluster,
            {
                "name": cluster,
                "resource_group_name": f"rg-{index}",
                "location": "westeurope",
                "default_node_pool": [{"name": "system", "node_count": 3, **pool_size, "linux_os_config": backlog}],
                "network_profile": [
                    {
                        "network_plugin": "azure",
                        "outbound_type": "loadBalancer",
                        "load_balancer_sku": "standard",
                        "load_balancer_profile": [{"outbound_ports_allocated": ports, "managed_outbound_ip_count": 7}],
                    }
                ],
            },
            {"id": True, "kube_config": True, "fqdn": True},
        )
    ]
    config = [{"address": f"azurerm_kubernetes_cluster.{cluster}", "type": "azurerm_kubernetes_cluster"}]
    for pool in range(3):
        name = f"{cluster}_pool{pool}"
        after = {
            "name": f"pool{pool}",
            "auto_scaling_enabled": True,
            "min_count": 1,
            "max_count": rng.randint(5, 30),
            "linux_os_config": backlog,
            **pool_size,
        }
        changes.append(
            _tf_change("azurerm_kubernetes_cluster_node_pool", name, after, {"id": True, "kubernetes_cluster_id": True})
        )
        reference = f"azurerm_kubernetes_cluster.{cluster}"
        config.append(
            {
                "address": f"azurerm_kubernetes_cluster_node_pool.{name}",
                "type": "azurerm_kubernetes_cluster_node_pool",
                "expressions": {"kubernetes_cluster_id": {"references": [f"{reference}.id", reference]}},
            }
        )
    profile = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "wirespeed-profile-throughput", "namespace": "wirespeed-system"},
        "data": {"profile.json": json.dumps(PROFILE, indent=2)},
    }
    daemon_set = _agent_daemon_set(image=None)
    for name, manifest in (("profile", profile), ("agent", daemon_set)):
        changes.append(_tf_change("kubernetes_manifest", f"{cluster}_{name}", {"manifest": manifest}, {"object": True}))
        config.append({"address": f"kubernetes_manifest.{cluster}_{name}", "type": "kubernetes_manifest"})
    for extra in range(BLOCK - len(changes)):
        tf_type = ("azurerm_storage_account", "azurerm_virtual_network", "azurerm_subnet")[extra % 3]
        after = {"name": f"r{index}x{extra}", "resource_group_name": f"rg-{index}", "tags": {"team": "checkout"}}
        changes.append(_tf_change(tf_type, f"{cluster}_r{extra}", after, {"id": True}))
        config.append({"address": f"{tf_type}.{cluster}_r{extra}", "type": tf_type})
    return changes, config


def write_terraform_plan(path: Path, count: int) -> None:
    rng = random.Random(count)
    changes: list[dict[str, Any]] = []
    config: list[dict[str, Any]] = []
    index = 0
    while len(changes) < count:
        block_changes, block_config = tf_block(index, rng)
        changes += block_changes
        config += block_config
        index += 1
    changes, kept = changes[:count], {c["address"] for c in changes[:count]}
    planned = [
        {
            "address": c["address"],
            "mode": "managed",
            "type": c["type"],
            "name": c["name"],
            "provider_name": AZURERM,
            "schema_version": 0,
            "values": c["change"]["after"],
            "sensitive_values": {},
        }
        for c in changes
    ]
    doc = {
        "format_version": "1.2",
        "terraform_version": "1.11.4",
        "planned_values": {"root_module": {"resources": planned}},
        "resource_changes": changes,
        "configuration": {
            "provider_config": {"azurerm": {"name": "azurerm", "full_name": AZURERM}},
            "root_module": {
                "resources": [
                    {
                        "mode": "managed",
                        "name": c["address"].partition(".")[2],
                        "provider_config_key": "azurerm",
                        "expressions": {},
                        "schema_version": 0,
                        **c,
                    }
                    for c in config
                    if c["address"] in kept
                ]
            },
        },
        "timestamp": "2026-11-23T15:00:00Z",
        "applyable": True,
        "complete": True,
        "errored": False,
    }
    with path.open("w") as f:
        json.dump(doc, f)


def measure(argv: list[str], runs: int) -> dict[str, Any]:
    """Whole-process wall and CPU time (user + system, from wait4's rusage) and peak RSS; one warm-up run first.

    CPU time is reported next to wall time because the machine is shared: when other jobs hold both cores, the
    wall time stretches while the CPU time the check needs stays close to what it is on a quiet machine.
    """
    walls, cpus, rss, codes = [], [], [], set()
    for i in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        if code not in (0, 1):
            raise SystemExit(f"{argv} exited {code}: {stderr}")
        codes.add(code)
        if i >= 1:
            walls.append(wall)
            cpus.append(usage.ru_utime + usage.ru_stime)
            rss.append(usage.ru_maxrss * 1024)
    walls.sort()
    return {
        "runs": runs,
        "exit_codes": sorted(codes),
        "wall_s_median": round(statistics.median(walls), 3),
        "wall_s_min": round(walls[0], 3),
        "wall_s_max": round(walls[-1], 3),
        "cpu_s_median": round(statistics.median(cpus), 3),
        "peak_rss_bytes_max": max(rss),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--record", action="store_true", help="write results/<date>-<time>.json")
    parser.add_argument("--shape", choices=("export", "terraform"), default="export")
    args = parser.parse_args()
    write = write_terraform_plan if args.shape == "terraform" else write_export
    load_before, busy_before = bl.loadavg(), bl.cpu_busy_pct()
    results = {}
    with tempfile.TemporaryDirectory(prefix="wirespeed-check-bench-") as scratch:
        floor = measure([sys.executable, "-c", "pass"], args.runs)
        for count in args.sizes:
            path = Path(scratch) / f"{args.shape}-{count}.json"
            write(path, count)
            size = path.stat().st_size
            bl.log(f"{count:,} resources: {size / 2**20:.1f} MiB export; checking {args.runs + 1} times")
            result = measure([WIRESPEED, "check", str(path), "--format", "json"], args.runs)
            result.update(
                {
                    "export_bytes": size,
                    "resources_per_s": round(count / result["wall_s_median"]),
                    "resources_per_cpu_s": round(count / result["cpu_s_median"]),
                    "peak_rss_over_export": round(result["peak_rss_bytes_max"] / size, 2),
                    # The floor: the same interpreter only decoding the file with the stdlib, nothing checked.
                    "json_load_floor": measure([sys.executable, "-c", JSON_LOAD, str(path)], args.runs),
                }
            )
            results[str(count)] = result
            path.unlink()
    doc = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {**bl.machine(), "python": platform.python_version()},
        "source": bl.source(),
        "loadavg_before": load_before,
        "loadavg_after": bl.loadavg(),
        "cpu_busy_pct_before": busy_before,
        "cpu_busy_pct_after": bl.cpu_busy_pct(),
        "shape": "terraform show -json PLANFILE" if args.shape == "terraform" else "pulumi stack export",
        "interpreter_floor": floor,
        "results": results,
    }
    print(json.dumps(doc, indent=2))
    if args.record:
        bl.record(HERE, doc)


if __name__ == "__main__":
    main()

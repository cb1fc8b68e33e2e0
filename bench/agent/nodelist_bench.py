#!/usr/bin/env python3
"""The whole agent's RSS while its continuous probe lists 5,000 Nodes from a real kube-apiserver
(bench/agent/RESULTS.md, "Node list at 5,000 nodes (issue 30)"), for each agent build given: before and after
the Node list was streamed (agent/internal/nodestatus/nodes.go).

Method:
1. start the tests' etcd + kube-apiserver (tests/apiserver.py) and create N Nodes (8 concurrent POSTs) in the shape
   a kubelet on AKS reports (as agent/internal/nodestatus/nodelist_fixture_test.go's fleetNode: 18 labels,
   10 annotations, 5 conditions, capacity, allocatable, nodeInfo, 25 images; about 9 KiB of JSON each; the API
   server keeps a Node's status as given on create). InternalIPs are loopback addresses (127.10.x.y), which the
   agent's own probe server answers, so no probe traffic leaves the host;
2. per arm, one agent process on the host: `--node-name` the first Node, the admin kubeconfig, `--dry-run`, a
   profile selecting no link, `--proc-sys-root` a scratch tree, `--listen` on 127.0.0.1, and
   - `off`: no probe;
   - `static`: `--probe --probe-static-peers` naming 8 of the Nodes (the probe without the list);
   - `list`: `--probe` (the Node list; `--probe-node-refresh` 1m, so one list in the window);
   `--probe-round 5s`. Measured: the process's VmHWM (peak RSS) and VmRSS once its probe's first round has ended
   (/probe answers a round: the list was read and the peers chosen), after `--seconds` more;
3. arms run round after round, every build's in turn, on the same API server, so the shared machine's load falls
   on each alike.

Usage: nodelist_bench.py LABEL=AGENT[,LABEL=AGENT...] [--nodes 5000] [--rounds 2] [--seconds 10] [--json OUT]
(LABEL names the build in the output, e.g. its commit; the binary's path is not recorded).
"""

from __future__ import annotations

import argparse
import json
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent / "tests"))
import apiserver as fixture  # noqa: E402  (tests/apiserver.py)
import benchlib as bl  # noqa: E402

PROFILE = {"schema_version": 1, "name": "bench-nodelist", "interfaces": {"include": ["wsnl-none*"]}}
POOL_LABELS = ["kubernetes.azure.com/agentpool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool"]


def node_name(i: int) -> str:
    return f"aks-net-{i // 1000:05d}-vmss{i:06d}"


def node_ip(i: int) -> str:
    return f"127.10.{i // 256}.{i % 256 + 1}"


def fleet_node(i: int) -> dict[str, Any]:
    """Node i, shaped as fleetNode (nodelist_fixture_test.go) is: what a kubelet on AKS reports."""
    name, zone = node_name(i), f"westeurope-{i % 3 + 1}"
    labels = {
        "agentpool": "net", "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": "Standard_D16ds_v6",
        "beta.kubernetes.io/os": "linux", "failure-domain.beta.kubernetes.io/region": "westeurope",
        "failure-domain.beta.kubernetes.io/zone": zone, "kubernetes.azure.com/cluster": "MC_rg_net_westeurope",
        "kubernetes.azure.com/mode": "user",
        "kubernetes.azure.com/node-image-version": "AKSUbuntu-2204gen2containerd-202611.04.0",
        "kubernetes.azure.com/os-sku": "Ubuntu", "kubernetes.azure.com/role": "agent", "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "Standard_D16ds_v6",
        "topology.kubernetes.io/region": "westeurope", "topology.kubernetes.io/zone": zone,
        "topology.disk.csi.azure.com/zone": zone, POOL_LABELS[i % 3]: f"pool{i % 7}",
    }  # fmt: skip
    annotations = {
        "csi.volume.kubernetes.io/nodeid": json.dumps({"disk.csi.azure.com": name, "file.csi.azure.com": name}),
        "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        "kubernetes.azure.com/vmss-instance-id": str(i),
        "wirespeed.io/tuning-status": '{"profile":"throughput","state":"applied","reason":"all settings applied"}',
        "node.kubernetes.io/exclude-from-external-load-balancers": "false",
        "cluster-autoscaler.kubernetes.io/scale-down-disabled": "false",
        "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock",
        "example.com/owner": "platform-team", "example.com/cost-centre": "net-1234",
    }  # fmt: skip
    now = "2026-12-03T08:00:00Z"
    conditions = [
        {"type": t, "status": s, "reason": r, "message": m, "lastHeartbeatTime": now, "lastTransitionTime": now}
        for t, s, r, m in [
            ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ("NetworkTuningDegraded", "False", "TuningApplied", "all settings applied"),
        ]
    ]
    images = [
        {"names": [f"mcr.microsoft.com/oss/kubernetes/app-{n}@sha256:{n * 7919 + i:064x}",
                   f"mcr.microsoft.com/oss/kubernetes/app-{n}:v1.{n}.0"], "sizeBytes": 10_000_000 + n}
        for n in range(25)
    ]  # fmt: skip
    resources = {"cpu": "16", "memory": "65843676Ki", "pods": "110", "ephemeral-storage": "129886128Ki"}
    node_info = {
        "machineID": f"{i:032x}", "systemUUID": f"{i + 1:032x}", "bootID": f"{i + 2:032x}",
        "kernelVersion": "5.15.0-1074-azure", "osImage": "Ubuntu 22.04.5 LTS",
        "containerRuntimeVersion": "containerd://1.7.23-1", "kubeletVersion": "v1.31.2", "kubeProxyVersion": "v1.31.2",
        "operatingSystem": "linux", "architecture": "amd64",
    }  # fmt: skip
    status = {
        "capacity": resources, "allocatable": resources, "conditions": conditions, "nodeInfo": node_info,
        "addresses": [{"type": "Hostname", "address": name}, {"type": "InternalIP", "address": node_ip(i)}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}, "images": images,
    }  # fmt: skip
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": {"podCIDR": f"10.244.{i % 256}.0/24", "podCIDRs": [f"10.244.{i % 256}.0/24"],
                 "providerID": f"azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
                               f"mc_rg_net_westeurope/providers/Microsoft.Compute/virtualMachineScaleSets/"
                               f"aks-net-vmss/virtualMachines/{i}"},
        "status": status,
    }  # fmt: skip


def create_nodes(server: fixture.ApiServer, count: int) -> float:
    return server.create_many("/api/v1/nodes", fleet_node, count)


def list_bytes(server: fixture.ApiServer) -> int:
    """The size of the JSON list the agent reads (resourceVersion=0, uncompressed)."""
    context = ssl.create_default_context(cafile=str(server.workdir / "ca.crt"))
    request = urllib.request.Request(
        server.url + "/api/v1/nodes?resourceVersion=0",
        headers={"Authorization": f"Bearer {server.admin_token}", "Accept": "application/json"},
    )
    with urllib.request.urlopen(request, context=context, timeout=120) as response:
        return len(response.read())


def last_round(port: int) -> Any:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/probe", timeout=5) as response:
            return json.load(response)["last_round"]
    except OSError:
        return None


def run_arm(label: str, agent: Path, arm: str, server: fixture.ApiServer, tmp: Path, seconds: float) -> dict[str, Any]:
    listen = fixture.free_port()
    args = [str(agent), f"--profile={tmp / 'profile.json'}", f"--proc-sys-root={tmp / 'proc-sys'}", "--dry-run",
            f"--listen=127.0.0.1:{listen}", f"--node-name={node_name(0)}",
            f"--kubeconfig={server.admin_kubeconfig}"]  # fmt: skip
    if arm != "off":
        args += ["--probe", f"--probe-port={fixture.free_port()}", "--probe-round=5s"]
    if arm == "static":
        args.append("--probe-static-peers=" + ",".join(f"{node_name(i)}={node_ip(i)}" for i in range(1, 9)))
    log = (tmp / f"{arm}.log").open("wb")
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline, first = time.monotonic() + 120, None
        while arm != "off" and first is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
            first = last_round(listen)
        if arm != "off" and first is None:
            raise RuntimeError(f"{arm}: no probe round within 120 s: {(tmp / f'{arm}.log').read_text()[-2000:]}")
        time.sleep(seconds)
        out = {"arm": arm, "agent": label, "vmhwm_mib": round(bl.status_kib(proc.pid, "VmHWM") / 1024, 2),
               "vmrss_mib": round(bl.status_kib(proc.pid, "VmRSS") / 1024, 2)}  # fmt: skip
        if first is not None:
            out["peers"] = len(first["peers"])
        return out
    finally:
        bl.terminate(proc, timeout=30)
        log.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("agents", help="comma-separated LABEL=binary (make agent at each commit)")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    reason = fixture.missing_prerequisite()
    if reason:
        raise SystemExit(reason)
    bl.exit_on_sigterm()
    agents = [(label, Path(path).resolve()) for label, _, path in (item.partition("=") for item in a.agents.split(","))]
    result: dict[str, Any] = {"bench": "agent-nodelist", "machine": bl.machine(), "source": bl.source(),
                              "params": vars(a) | {"json": None, "agents": [label for label, _ in agents]}}  # fmt: skip
    result["loadavg_before"], result["cpu_busy_pct_before"] = bl.loadavg(), bl.cpu_busy_pct()
    arms = []
    with bl.scratch_dir("wsbench-nodelist-") as tmp, fixture.running() as server:
        (tmp / "profile.json").write_text(json.dumps(PROFILE))
        sysctl = tmp / "proc-sys" / "net" / "core"
        sysctl.mkdir(parents=True)
        bl.log(f"creating {a.nodes} nodes")
        result["create_s"] = round(create_nodes(server, a.nodes), 1)
        result["list_bytes"] = list_bytes(server)
        bl.log(f"list: {result['list_bytes']} bytes")
        for r in range(a.rounds):
            for label, agent in agents:
                for arm in ("off", "static", "list"):
                    out = run_arm(label, agent, arm, server, tmp, a.seconds) | {"round": r + 1, "loadavg": bl.loadavg()}
                    bl.log(json.dumps(out))
                    arms.append(out)
    result["arms"] = arms
    result["loadavg_after"], result["cpu_busy_pct_after"] = bl.loadavg(), bl.cpu_busy_pct()
    return bl.finish(result, a.json)


if __name__ == "__main__":
    sys.exit(main())

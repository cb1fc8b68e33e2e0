"""Every AKS example planned under Pulumi's mocks (no cloud, no CLI), with its defaults and its sample stack."""

from __future__ import annotations

import pytest

from builtin_profiles import THROUGHPUT_BACKLOG
from conftest import ROOT
from wirespeed.program import run_program

EXAMPLES = ROOT / "examples"
AKS_EXAMPLES = ["aks-dsv6", "aks-natgw", "aks-existing-cluster", "aks-nap"]


@pytest.mark.parametrize("example", AKS_EXAMPLES)
def test_example_is_a_runnable_project_of_its_own(example):
    folder = EXAMPLES / example
    for name in ("Pulumi.yaml", "__main__.py", "requirements.txt", "README.md", "Pulumi.dev.yaml"):
        assert (folder / name).is_file(), name
    # What requirements.txt installs (the library and its `pulumi` extra): tests/repo/test_requirements.py.


@pytest.mark.parametrize(
    ("stack", "ports", "ips"),
    [
        # api 40 + 4, workers 20 + 2, system 3 + 1 = 70 nodes; 12/s x 240 s x 1.25 = 3,600 ports -> 4 IPs.
        pytest.param(None, 3600, 4, id="defaults"),
        # api 60 + 6 -> 92 nodes; 16/s -> 4,800 ports; 441,600 -> 7 IPs.
        pytest.param("dev", 4800, 7, id="dev"),
    ],
)
def test_aks_dsv6_example_under_pulumi_mocks(stack, ports, ips):
    plan = run_program(EXAMPLES / "aks-dsv6", stack)
    out = plan.stack_outputs
    assert (out["allocated_outbound_ports"], out["outbound_ip_count"]) == (ports, ips)
    public_ips = plan.of_type("network", "PublicIPAddress")
    assert len(public_ips) == ips
    assert len(out["outbound_ip_addresses"]) == ips
    [component] = [r for r in plan.resources if r.type == "wirespeed:index:NetworkOptimizedCluster"]
    for ip in public_ips:
        assert ip.parent == component.urn
        assert ip.inputs["sku"] == {"name": "Standard", "tier": "Regional"}
        assert ip.inputs["publicIPAllocationMethod"] == "Static"
        assert ip.inputs["zones"] == ["1", "2", "3"]
    [cluster] = plan.of_type("containerservice", "ManagedCluster")
    lb = cluster.inputs["networkProfile"]["loadBalancerProfile"]
    assert lb["allocatedOutboundPorts"] == ports
    assert lb["idleTimeoutInMinutes"] == 10
    assert sorted(p["id"] for p in lb["outboundIPs"]["publicIPs"]) == sorted(ip.id for ip in public_ips)
    pools = {r.inputs["agentPoolName"]: r.inputs for r in plan.of_type("containerservice", "AgentPool")}
    assert {name: p["vmSize"] for name, p in pools.items()} == {
        "api": "Standard_D16s_v6",
        "workers": "Standard_D8ds_v6",
    }
    assert pools["workers"]["nodeTaints"] == ["workload=batch:NoSchedule"]
    assert pools["workers"]["linuxOSConfig"] == {"sysctls": {"netCoreNetdevMaxBacklog": THROUGHPUT_BACKLOG}}
    [alert] = plan.of_type("monitor", "MetricAlert")
    assert alert.inputs["criteria"]["allOf"][0]["threshold"] == ports * 80 // 100
    daemon_sets = sorted(r.name for r in plan.of_type("apps", "DaemonSet"))
    assert daemon_sets == ["dsv6-tuning-daemon-set-throughput"]  # one DaemonSet per profile, both pools share it
    nodes = 70 if stack is None else 92
    assert f"Capacity rule: {ports:,} ports x {nodes:,} nodes" in out["sizing"]


@pytest.mark.parametrize(("stack", "ips"), [pytest.param(None, 3, id="defaults"), pytest.param("dev", 7, id="dev")])
def test_aks_natgw_example_under_pulumi_mocks(stack, ips):
    plan = run_program(EXAMPLES / "aks-natgw", stack)
    [cluster] = plan.of_type("containerservice", "ManagedCluster")
    network = cluster.inputs["networkProfile"]
    assert network["outboundType"] == "managedNATGateway"
    assert network["natGatewayProfile"] == {"idleTimeoutInMinutes": 4, "managedOutboundIPProfile": {"count": ips}}
    assert "loadBalancerProfile" not in network
    assert plan.stack_outputs["nat_gateway_ip_count"] == ips
    [pool] = plan.of_type("containerservice", "AgentPool")
    # The backlog is the profile's; the other two are the example's own extra_sysctls.
    assert pool.inputs["linuxOSConfig"] == {
        "sysctls": {
            "netCoreNetdevMaxBacklog": THROUGHPUT_BACKLOG,
            "netCoreSomaxconn": 32768,
            "netIpv4TcpMaxSynBacklog": 32768,
        }
    }
    assert plan.of_type("network", "PublicIPAddress") == []
    assert plan.of_type("monitor", "MetricAlert") == []


def test_aks_existing_cluster_example_under_pulumi_mocks():
    plan = run_program(EXAMPLES / "aks-existing-cluster", "dev")
    assert plan.of_type("containerservice", "ManagedCluster") == []
    lookups = [i for i in plan.invokes if i.token == "azure-native:containerservice:getManagedCluster"]
    assert [i.args for i in lookups] == [{"resourceGroupName": "shop-prod-rg", "resourceName": "shop-prod-aks"}]
    [pool] = plan.of_type("containerservice", "AgentPool")
    assert pool.inputs["resourceName"] == "shop-prod-aks"
    assert pool.inputs["resourceGroupName"] == "shop-prod-rg"
    assert pool.inputs["vmSize"] == "Standard_D16ds_v6"
    assert pool.inputs["nodeTaints"] == ["wirespeed.io/fastlane=true:NoSchedule"]
    provider = next(r for r in plan.resources if r.type == "pulumi:providers:kubernetes")
    [daemon_set] = plan.of_type("apps", "DaemonSet")
    assert daemon_set.provider is not None
    assert daemon_set.provider.startswith(provider.urn)
    check = plan.stack_outputs["outbound_check"]
    # The looked-up cluster leaves allocatedOutboundPorts at 0: system 3 + 1 and fastlane 50 + 5 nodes put the
    # backend pool past 50, where Azure's default halves every node's ports to 512.
    assert (check["allocated_outbound_ports"], check["nodes_at_max"], check["dynamic_ports_per_node"]) == (0, 59, 512)
    assert (check["recommended"]["allocated_outbound_ports"], check["recommended"]["outbound_ips"]) == (3600, 4)


@pytest.mark.parametrize(
    ("stack", "ports", "ips", "net_nodes"),
    [
        # system 3 + 1, cobalt 256 / 8 = 32 + 4, net 640 / 16 = 40 + 4: 84 nodes; 12/s -> 3,600 ports; 302,400 -> 5 IPs.
        pytest.param(None, 3600, 5, 40, id="defaults"),
        # net 1,536 / 32 = 48 + 5 -> 93 nodes; 16/s -> 4,800 ports; 446,400 -> 7 IPs.
        pytest.param("dev", 4800, 7, 48, id="dev"),
    ],
)
def test_aks_nap_example_under_pulumi_mocks(stack, ports, ips, net_nodes):
    plan = run_program(EXAMPLES / "aks-nap", stack)
    out = plan.stack_outputs
    assert (out["allocated_outbound_ports"], out["outbound_ip_count"]) == (ports, ips)
    [cluster] = plan.of_type("containerservice", "ManagedCluster")
    assert cluster.inputs["nodeProvisioningProfile"] == {"mode": "Auto", "defaultNodePools": "None"}
    assert [p.get("enableAutoScaling") for p in cluster.inputs["agentPoolProfiles"]] == [False]
    assert plan.of_type("containerservice", "AgentPool") == []
    pools = {r.inputs["metadata"]["name"]: r.inputs for r in plan.of_type("karpenter.sh", "NodePool")}
    classes = {r.inputs["metadata"]["name"]: r.inputs for r in plan.of_type("karpenter.azure.com", "AKSNodeClass")}
    assert sorted(pools) == sorted(classes) == ["cobalt", "net"]
    for name, pool in pools.items():
        assert pool["spec"]["template"]["spec"]["nodeClassRef"] == {
            "group": "karpenter.azure.com",
            "kind": "AKSNodeClass",
            "name": name,
        }
        assert pool["spec"]["template"]["metadata"]["labels"]["wirespeed.io/profile"] == "throughput"
        assert classes[name]["spec"]["linuxOSConfig"] == {"sysctls": {"netCoreNetdevMaxBacklog": THROUGHPUT_BACKLOG}}
    assert f"net: {net_nodes} max + " in out["sizing"]
    assert f"= {net_nodes} node(s) at most" in out["node_ceilings"][0]


GOLDEN = ROOT / "tests" / "golden" / "aks"


def registrations(directory, stack=None) -> str:
    """What a program registers, as reviewable JSON: type, name, parent and inputs of each resource, by URN."""
    import json

    plan = run_program(directory, stack)
    rows = [
        {"urn": r.urn, "type": r.type, "parent": r.parent, "provider": r.provider, "inputs": r.inputs}
        for r in sorted(plan.resources, key=lambda r: r.urn)
    ]
    return json.dumps(rows, indent=2, sort_keys=True) + "\n"


@pytest.mark.parametrize(
    ("golden", "directory", "stack"),
    [
        pytest.param("root-defaults.json", ROOT, None, id="root-defaults"),
        pytest.param("aks-dsv6-dev.json", EXAMPLES / "aks-dsv6", "dev", id="aks-dsv6-dev"),
        pytest.param("aks-natgw-dev.json", EXAMPLES / "aks-natgw", "dev", id="aks-natgw-dev"),
        pytest.param("aks-nap-dev.json", EXAMPLES / "aks-nap", "dev", id="aks-nap-dev"),
        pytest.param("aks-existing-cluster-dev.json", EXAMPLES / "aks-existing-cluster", "dev", id="existing-dev"),
    ],
)
def test_registered_inputs_match_the_golden_file_under_pulumi_mocks(golden, directory, stack):
    """Golden files make every change to what the programs register show up in review.

    Regenerate after an intended change: UPDATE_GOLDEN=1 pytest tests/examples/test_examples_aks.py
    """
    import os

    actual = registrations(directory, stack)
    path = GOLDEN / golden
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
    assert actual == path.read_text()

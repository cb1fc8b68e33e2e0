"""`wirespeed plan` on node auto-provisioning objects a program registers itself (not through AutoProvisionedPool):
the node ceiling is recomputed from the registered limits.cpu, requirements and disruption budgets, counted in the
outbound of the cluster the NodePool belongs to, and what cannot be counted is said.

Programs run under the Pulumi SDK's mocks (the engine and the clouds cannot exist here).
"""

from __future__ import annotations

import json

from wirespeed import catalog
from wirespeed.program import run_program
from wirespeed.program.review import review

CLUSTER = """
def cluster(name):
    return cs.ManagedCluster(
        name, resource_group_name="rg", dns_prefix=name, location="westeurope",
        agent_pool_profiles=[cs.ManagedClusterAgentPoolProfileArgs(name="system", mode="System", count=3,
            vm_size="Standard_D4s_v6", upgrade_settings=cs.AgentPoolUpgradeSettingsArgs(max_surge="1"))],
        network_profile=cs.ContainerServiceNetworkProfileArgs(load_balancer_sku="standard",
            load_balancer_profile=cs.ManagedClusterLoadBalancerProfileArgs(allocated_outbound_ports=4000,
                managed_outbound_ips=cs.ManagedClusterLoadBalancerProfileManagedOutboundIPsArgs(count=2))),
    )


def node_pool(name, requirements, limits=None, budgets=None):
    spec = {"template": {"spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
        "name": name}, "requirements": requirements}}}
    if limits:
        spec["limits"] = limits
    if budgets:
        spec["disruption"] = {"budgets": budgets}
    return k8s.apiextensions.CustomResource(name, api_version="karpenter.sh/v1", kind="NodePool",
        metadata={"name": name}, spec=spec)


V6 = [{"key": "karpenter.azure.com/sku-version", "operator": "In", "values": ["6"]},
      {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
      {"key": "karpenter.azure.com/sku-cpu", "operator": "Gt", "values": ["7"]}]
"""


def program(tmp_path, body: str):
    (tmp_path / "Pulumi.yaml").write_text("name: t\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "import pulumi\nimport pulumi_kubernetes as k8s\nfrom pulumi_azure_native import containerservice as cs\n"
        + CLUSTER
        + body
    )
    return review(run_program(tmp_path))


def test_a_hand_written_node_pool_is_counted_at_its_ceiling_under_pulumi_mocks(tmp_path):
    # 400 vCPUs of at least 8-vCPU v6 sizes: 50 nodes; the larger of two budgets, 5, as surge.
    plan = program(
        tmp_path,
        "cluster('aks')\nnode_pool('net', V6, {'cpu': '400000m'}, [{'nodes': '2'}, {'nodes': '5'}])\n",
    )
    [nap] = plan.auto_provisioned
    assert (nap.cluster, nap.capacity.max_nodes, nap.capacity.surge_nodes, nap.capacity.smallest_vcpu) == (
        "aks",
        50,
        5,
        8,
    )
    [outbound] = plan.outbound
    # system 3 + 1 and net 50 + 5: 59 nodes x 4,000 = 236,000 ports; 2 IPs hold 128,000.
    assert outbound.nodes_at_max == 59
    assert outbound.lb_plan is not None
    assert not outbound.lb_plan.feasible
    text = plan.explain()
    assert "NodePool net: limits.cpu 400 / 8 vCPU (the smallest size its requirements admit: " in text
    assert "= 50 node(s) at most, + disruption budget 5 = 5 replacement node(s)" in text
    assert json.loads(json.dumps(plan.to_json()))["auto_provisioned_pools"][0]["capacity"]["max_nodes"] == 50


def test_a_node_pool_without_limits_or_a_cluster_is_named_in_the_findings_under_pulumi_mocks(tmp_path):
    plan = program(tmp_path, "cluster('a')\ncluster('b')\nnode_pool('open', V6)\n")
    [nap] = plan.auto_provisioned
    assert nap.capacity is None
    assert nap.cluster is None
    assert plan.findings[:2] == (
        "NodePool open: no limits.cpu a node ceiling can be read from, so node auto-provisioning may launch nodes "
        "without bound and outbound cannot count them; set spec.limits.cpu (wirespeed derives the node ceiling from "
        "it)",
        "NodePool open: no single AKS cluster in this program owns it, so no outbound counts its nodes; size that "
        "cluster's SNAT for it (`wirespeed render aks-nap` prints its node ceiling)",
    )
    assert all(o.nodes_at_max == 4 for o in plan.outbound)


def test_naps_default_node_pool_shape_is_flagged_as_not_network_optimised_under_pulumi_mocks(tmp_path):
    family_d = "[{'key': 'karpenter.azure.com/sku-family', 'operator': 'In', 'values': ['D']}]"
    plan = program(tmp_path, f"cluster('aks')\nnode_pool('default', {family_d}, {{'cpu': '1000'}})\n")
    # The catalog's family-D sizes without MANA, whatever families it holds; a few named so the set cannot be empty.
    families = {t.family for t in catalog.instance_types(cloud="azure") if t.family.startswith("D")}
    plain = {
        t.family for t in catalog.instance_types(cloud="azure") if t.family.startswith("D") and not t.network_optimised
    }
    assert {"Dsv2", "Dsv3", "Dsv5", "Dpsv5"} <= plain
    assert "Dsv6" in families - plain
    admits = ", ".join(sorted(plain))
    assert f"NodePool default: admits {admits}, not network-optimised" in plan.findings
    [nap] = plan.auto_provisioned
    assert nap.to_json()["network_optimised"] is False
    assert f"NOT network-optimised: {admits}" in plan.explain()

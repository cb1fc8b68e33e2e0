"""`wirespeed check` on real files (tests/fixtures/real/, each with its provenance beside it): unknown versus not
written in Terraform plans, clusters whose names are known only after apply, the retired Basic load balancer.

Every file is kept byte for byte; a probe is one named edit of a real file (tests/real_probes.py, or made here in
memory). The AKS Terraform cases run on the one licensed real AKS plan found and on probes whose cluster block this
project wrote (tests/fixtures/real/README.md says why).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from real_probes import BY_NAME, render
from wirespeed.check import check_text
from wirespeed.check import terraform as tf
from wirespeed.rules import resolve_config
from wirespeed.values import UNKNOWN

REAL = ROOT / "tests" / "fixtures" / "real"
PORTS = "aks-allocated-outbound-ports-default"
MINIMUM = "aks-snat-ports-minimum"
BASIC = "aks-basic-load-balancer"
CAPACITY = "aks-snat-capacity"
BACKLOG = "netdev-backlog-minimum"
SKU = "network-optimised-sku"
AGENT = "tuning-agent-present"

# The one real, licensed AKS plan found (Terraform 0.13.0, azurerm 2.37.0, Apache-2.0): nobody wrote its
# network_profile, so the plan marks the whole block `after_unknown: true` (azurerm: Optional+Computed). wirespeed
# reads plans of format 1.x, so the cases run on its relabelled probe.
AKS_REAL = "tf-aks-cost-estimator.tf0.13.0.plan.json"
AKS_REAL_1X = "tf-aks-cost-estimator.tf0.13.0--format-1.0.plan.json"
# The other cases are probes of tests/real_probes.py that add one cluster, written by this project in the shape
# Terraform 1.x plans azurerm 3.x, to a real azurerm plan (Terraform 1.3.6): no licensed real plan of them exists.
NSG = "tf-azurerm-nsg-no-aks.tf1.3.6--plus-"
UNWRITTEN = f"{NSG}aks-cluster-no-lb-profile.plan.json"
NO_PROFILE = f"{NSG}aks-cluster-network-profile-no-lb-profile.plan.json"
FROM_REFERENCE = f"{NSG}aks-cluster-lb-profile-from-reference.plan.json"
DYNAMIC = f"{NSG}aks-cluster-dynamic-lb-profile.plan.json"
ON_BASIC = f"{NSG}aks-cluster-basic-lb.plan.json"
MODULE = f"{NSG}aks-module-cluster.plan.json"
MODULE_AND_POOL = f"{NSG}aks-module-cluster-and-pool-by-reference.plan.json"
COUNTED = f"{NSG}counted-aks-module-cluster.plan.json"
PROBE_CLUSTER = "azurerm_kubernetes_cluster.probe"
MODULE_CLUSTER = "module.aks.azurerm_kubernetes_cluster.main"

# Plans that write no load_balancer_profile: the cluster and the rules each fires (Standard_D4s_v5 and the Azure/aks
# module's Standard_D2s_v3 are not network-optimised sizes; Standard_D2s_v3's 1 Gb/s needs no more backlog than the
# kernel's default 1,000, so an unset backlog passes there).
UNWRITTEN_PROFILE: dict[str, tuple[str, set[str]]] = {
    # Standard_D2_v2 (Dv2, Mellanox, not network-optimised) is in the catalog: the SKU rule fails it, and at its
    # 1.5 Gb/s the kernel's default backlog holds the stall, so the unset backlog passes.
    AKS_REAL_1X: ("azurerm_kubernetes_cluster.example", {PORTS, SKU, AGENT}),
    UNWRITTEN: (PROBE_CLUSTER, {PORTS, BACKLOG, SKU, AGENT}),
    NO_PROFILE: (PROBE_CLUSTER, {PORTS, BACKLOG, SKU, AGENT}),
    # The Azure/aks module's shape: the cluster's name and resource group are known only after apply.
    MODULE: (MODULE_CLUSTER, {PORTS, SKU, AGENT}),
}


def real(name: str) -> str:
    return (REAL / name).read_text()


def probe(name: str) -> str:
    return render(BY_NAME[name]).decode()


def report(text: str, config: dict[str, Any] | None = None):
    return check_text(text, "plan.json", resolve_config(config))


def verdicts(text: str) -> set[tuple[str, str, bool]]:
    return {(v.rule_id, v.resource_urn, v.unknown) for v in report(text).violations}


def cluster_change(document: dict[str, Any], address: str) -> dict[str, Any]:
    [change] = [rc["change"] for rc in document["resource_changes"] if rc["address"] == address]
    return change


def cluster_expressions(document: dict[str, Any], address: str) -> dict[str, Any]:
    """The configuration's expressions of the cluster at ``address`` (module calls followed)."""
    module = document["configuration"]["root_module"]
    *calls, resource_type, name = address.split(".")
    for index in range(0, len(calls), 2):
        module = module["module_calls"][calls[index + 1]]["module"]
    [resource] = [r for r in module["resources"] if r["address"] == f"{resource_type}.{name}"]
    expressions: dict[str, Any] = resource["expressions"]
    return expressions


def test_every_real_file_has_its_provenance():
    for path in sorted(p for p in REAL.iterdir() if not p.name.endswith(".provenance.json") and p.suffix != ".md"):
        provenance = json.loads(Path(f"{path}.provenance.json").read_text())
        assert set(provenance) >= {"repository", "path", "commit", "license", "url"}
        assert re.fullmatch(r"[0-9a-f]{40}", provenance["commit"])
        assert provenance["commit"] in provenance["url"]


def test_the_real_aks_plan_leaves_network_profile_unknown_and_unwritten():
    """The case is the real file's own: unknown in the plan, absent from the configuration."""
    document = json.loads(real(AKS_REAL))
    address = UNWRITTEN_PROFILE[AKS_REAL_1X][0]
    assert cluster_change(document, address)["after_unknown"]["network_profile"] is True
    assert "network_profile" not in cluster_expressions(document, address)
    assert json.loads(probe(AKS_REAL_1X))["resource_changes"] == document["resource_changes"]  # only relabelled


@pytest.mark.parametrize("name", [NO_PROFILE, MODULE])
def test_the_probe_clusters_write_network_profile_but_leave_load_balancer_profile_unknown_and_unwritten(name):
    document = json.loads(probe(name))
    address = UNWRITTEN_PROFILE[name][0]
    assert cluster_change(document, address)["after_unknown"]["network_profile"][0]["load_balancer_profile"] is True
    assert "load_balancer_profile" not in cluster_expressions(document, address)["network_profile"][0]


@pytest.mark.parametrize("name", list(UNWRITTEN_PROFILE))
def test_an_unwritten_load_balancer_profile_is_azures_default_so_the_headline_rule_fires(name):
    address, rules = UNWRITTEN_PROFILE[name]
    text = probe(name)
    assert verdicts(text) == {(rule, address, False) for rule in rules}
    [ports] = [v for v in report(text).violations if v.rule_id == PORTS]
    assert ports.enforcement == "mandatory"
    assert "is 0 or unset, so Azure picks SNAT ports per node by backend pool size" in ports.message


def test_a_profile_written_from_another_value_stays_unknown_and_could_not_be_checked_at_the_rules_level():
    document = json.loads(probe(FROM_REFERENCE))
    assert cluster_expressions(document, PROBE_CLUSTER)["network_profile"][0]["load_balancer_profile"] == [
        {"outbound_ports_allocated": {"references": ["local.outbound_ports"]}}
    ]
    found = report(probe(FROM_REFERENCE))
    unknown = {(v.rule_id, v.enforcement) for v in found.unknown}
    assert unknown == {(PORTS, "mandatory"), (MINIMUM, "mandatory"), (CAPACITY, "mandatory")}  # never a silent pass
    [ports] = [v for v in found.unknown if v.rule_id == PORTS]
    assert ports.resource_urn == PROBE_CLUSTER
    assert ports.unchecked
    # The plan marks the attribute unknown inside a known block (as Terraform does), so the message names it.
    assert ports.message.startswith(
        "aks-allocated-outbound-ports-default could not be checked: "
        "networkProfile.loadBalancerProfile.allocatedOutboundPorts is known only after apply"
    )
    assert (
        "(In Terraform: networkProfile.loadBalancerProfile.allocatedOutboundPorts is "
        "network_profile.load_balancer_profile.outbound_ports_allocated"
    ) in ports.message
    assert found.unchecked == []  # not a secret: no secrets advice
    assert found.blocked


def test_a_block_written_by_a_dynamic_block_keeps_its_unknowns_unknown():
    document = json.loads(probe(DYNAMIC))
    assert "load_balancer_profile" not in cluster_expressions(document, PROBE_CLUSTER)["network_profile"][0]
    found = report(probe(DYNAMIC))
    assert {v.rule_id for v in found.unknown} == {PORTS, MINIMUM, CAPACITY}
    assert PORTS not in {v.rule_id for v in found.violations if not v.unknown}


def test_without_configuration_the_real_plans_unknown_profile_could_not_be_checked():
    found = report(probe("tf-aks-cost-estimator.tf0.13.0--format-1.0-no-configuration.plan.json"))
    assert {v.rule_id for v in found.unknown} >= {PORTS, MINIMUM}
    # The outbound type is unknown too, so the NAT gateway zone advisory could not be checked either (advisory).
    levels = {v.rule_id: v.enforcement for v in found.unknown}
    assert levels.pop("aks-natgw-zone-redundant") == "advisory"
    assert set(levels.values()) == {"mandatory"}


def test_a_probe_cluster_on_the_basic_load_balancer_is_flagged_and_its_snat_rules_do_not_apply():
    found = verdicts(probe(ON_BASIC))
    assert (BASIC, PROBE_CLUSTER, False) in found
    assert (PORTS, PROBE_CLUSTER, False) not in found  # Basic has no outbound rules: nothing to size
    [basic] = [v for v in report(probe(ON_BASIC)).violations if v.rule_id == BASIC]
    assert basic.enforcement == "mandatory"
    assert "September 30, 2025" in basic.message
    assert "(In Terraform: " not in basic.message or "load_balancer_sku" in basic.message


def test_a_cluster_named_only_after_apply_is_judged_with_its_pools_linked_by_reference():
    document = json.loads(probe(MODULE))
    assert cluster_change(document, MODULE_CLUSTER)["after_unknown"]["name"] is True
    assert cluster_change(document, MODULE_CLUSTER)["after_unknown"]["resource_group_name"] is True
    [agent] = [v for v in report(probe(MODULE)).violations if v.rule_id == AGENT]
    assert agent.resource_urn == MODULE_CLUSTER
    assert "this cluster has 1 node pool(s)" in agent.message  # its default pool
    [agent] = [v for v in report(probe(MODULE_AND_POOL)).violations if v.rule_id == AGENT]
    assert "this cluster has 2 node pool(s)" in agent.message  # and the pool that references it


def test_settle_drops_only_what_nobody_wrote():
    values = {
        "name": UNKNOWN,
        "id": UNKNOWN,
        "network_profile": [{"load_balancer_profile": UNKNOWN, "network_plugin": "azure", "pod_cidr": UNKNOWN}],
        "tags": {"a": UNKNOWN},
        "dynamic_block": [{"x": UNKNOWN}],
    }
    expressions = {
        "name": {"references": ["var.name"]},
        "network_profile": [{"network_plugin": {"constant_value": "azure"}, "pod_cidr": {"references": ["var.c"]}}],
        "tags": {"references": ["local.tags"]},
    }
    assert tf.blocks.settle(copy.deepcopy(values), expressions) == {
        "name": UNKNOWN,  # written from a variable
        "id": None,  # the provider's own
        "network_profile": [{"load_balancer_profile": None, "network_plugin": "azure", "pod_cidr": UNKNOWN}],
        "tags": {"a": UNKNOWN},  # a map attribute written whole: its unknowns are the configuration's
        "dynamic_block": [{"x": UNKNOWN}],  # known block, absent from configuration: a dynamic block's
    }
    assert tf.blocks.settle(values, None) == values  # no configuration: nothing is settled


# --- pulumi-azure (bridged from azurerm): the same translation --------------------------------------------------

AZURE_EXPORT = "pulumi-azure-aks-basic-lb.cli3.129.stack.json"
CLASSIC_CLUSTER = "azure:containerservice/kubernetesCluster:KubernetesCluster"
CLASSIC_POOL = "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool"


def export_edited(edit: Callable[[dict[str, Any]], None]) -> str:
    document = json.loads(real(AZURE_EXPORT))
    edit(document)
    return json.dumps(document)


def _classic_cluster(document: dict[str, Any]) -> dict[str, Any]:
    [cluster] = [r for r in document["deployment"]["resources"] if r["type"] == CLASSIC_CLUSTER]
    return cluster


def test_a_real_pulumi_azure_cluster_on_basic_is_flagged_in_its_own_names():
    found = report(real(AZURE_EXPORT))
    by_rule = {v.rule_id: v for v in found.violations}
    # It passed every rule before pulumi-azure was read. Its Standard_D2_v2 is in the catalog (Dv2, 1.5 Gb/s): the
    # SKU rule fails it, and the kernel's default backlog holds its stall, so the backlog rule passes.
    assert set(by_rule) == {BASIC, SKU, AGENT}
    assert {v.resource_type for v in found.violations} == {CLASSIC_CLUSTER}
    assert by_rule[BASIC].resource_name == "exampleKubernetesCluster"
    assert "In pulumi-azure: " in by_rule[SKU].message
    assert "vmSize is defaultNodePool.vmSize" in by_rule[SKU].message
    assert "this cluster has 1 node pool(s)" in by_rule[AGENT].message  # its defaultNodePool, an object


def _standard_without_profile(document: dict[str, Any]) -> None:
    """Probe: the cluster on the Standard load balancer with no loadBalancerProfile written."""
    cluster = _classic_cluster(document)
    cluster["inputs"]["networkProfile"]["loadBalancerSku"] = "standard"
    cluster["outputs"]["networkProfile"]["loadBalancerSku"] = "standard"


def test_a_pulumi_azure_cluster_on_standard_without_a_profile_gets_the_headline_rule():
    found = {v.rule_id for v in report(export_edited(_standard_without_profile)).violations}
    assert PORTS in found
    assert BASIC not in found


def _separate_pool(document: dict[str, Any]) -> None:
    """Probe: a KubernetesClusterNodePool (pulumi-azure schema names) pointing at the cluster by its id output."""
    cluster = _classic_cluster(document)
    pool = {
        "urn": cluster["urn"].replace(f"{CLASSIC_CLUSTER}::exampleKubernetesCluster", f"{CLASSIC_POOL}::user"),
        "custom": True,
        "id": f"{cluster['id']}/agentPools/user",
        "type": CLASSIC_POOL,
        "inputs": {
            "kubernetesClusterId": cluster["id"],
            "name": "user",
            "vmSize": "Standard_D4s_v5",
            "nodeCount": 3,
            "linuxOsConfig": {"sysctlConfig": {"netCoreNetdevMaxBacklog": 1000}},
        },
        "propertyDependencies": {"kubernetesClusterId": [cluster["urn"]]},
        "parent": cluster["parent"],
    }
    pool["outputs"] = dict(pool["inputs"])
    document["deployment"]["resources"].append(pool)


def test_a_pulumi_azure_node_pool_counts_for_its_cluster_and_is_judged_like_an_azurerm_pool():
    found = report(export_edited(_separate_pool))
    [agent] = [v for v in found.violations if v.rule_id == AGENT]
    assert "this cluster has 2 node pool(s)" in agent.message
    pool_findings = {v.rule_id for v in found.violations if v.resource_type == CLASSIC_POOL}
    assert BACKLOG in pool_findings  # 1,000 in its linuxOsConfig.sysctlConfig
    [backlog] = [v for v in found.violations if v.resource_type == CLASSIC_POOL and v.rule_id == BACKLOG]
    assert "netCoreNetdevMaxBacklog is linuxOsConfig.sysctlConfig.netCoreNetdevMaxBacklog" in backlog.message


# --- self-managed nodes: pulumi-eks's default node group, NodeGroup (v1: CloudFormation), NodeGroupV2, Terraform ---

EKS_EXPORTS: dict[str, dict[str, str]] = {
    # eks:index:Cluster v3: its default node group is a launch template and an auto-scaling group, no managed group.
    "pulumi-eks-cluster.cli3.137.stack.json": {
        f"example-cluster-{n}-eksCluster": "1 self-managed node group(s) (auto-scaling groups)" for n in range(1, 5)
    },
    "pulumi-eks-aws-profile.cli3.130.stack.json": {
        "example-aws-profile-eksCluster": "1 self-managed node group(s) (auto-scaling groups)"
    },
    # NodeGroup (a CloudFormation stack holding the group, from a launch configuration) and NodeGroupV2.
    "pulumi-eks-nodegroup.cli3.137.stack.json": {
        "example-nodegroup-iam-advanced-eksCluster": "3 self-managed node group(s) (auto-scaling groups)",
        "example-nodegroup-iam-simple-eksCluster": "4 self-managed node group(s) (auto-scaling groups)",
    },
    "pulumi-eks-nodegroupv2-managed.cli3.133.stack.json": {
        "ignore-scaling-config-eksCluster": "1 managed node group(s) and 1 self-managed node group(s)",
    },
}


@pytest.mark.parametrize("name", list(EKS_EXPORTS))
def test_self_managed_nodes_of_pulumi_eks_count_for_the_agent_rule(name):
    """tuning-agent-present passed these clusters although the backlog rule flagged their launch templates."""
    found = report(real(name)).violations
    agents = {v.resource_name: v.message for v in found if v.rule_id == AGENT}
    assert set(agents) == set(EKS_EXPORTS[name])
    for cluster, counted in EKS_EXPORTS[name].items():
        assert f"this cluster has {counted}" in agents[cluster]


def test_pulumi_eks_v1_launch_configurations_are_judged_like_launch_templates():
    found = report(real("pulumi-eks-nodegroup.cli3.137.stack.json")).violations
    judged = {
        (v.rule_id, v.resource_name)
        for v in found
        if v.resource_type == "aws:ec2/launchConfiguration:LaunchConfiguration"
    }
    # Four NodeGroups boot t3.medium from user data that never sets the backlog.
    assert {rule for rule, _ in judged} == {BACKLOG, SKU}
    assert len({name for _, name in judged}) == 4


def _self_managed_nodes(document: dict[str, Any], tag_key: Any) -> None:
    document["resource_changes"].append(
        {
            "address": "aws_autoscaling_group.nodes",
            "mode": "managed",
            "type": "aws_autoscaling_group",
            "name": "nodes",
            "change": {
                "actions": ["create"],
                "after": {"name": "nodes", "min_size": 1, "max_size": 3, "tag": [{"key": tag_key, "value": "owned"}]},
                "after_unknown": {"tag": [{"key": tag_key is None}]},
            },
        }
    )


def _asg_by_tag(document: dict[str, Any]) -> None:
    """Probe: an auto-scaling group tagged kubernetes.io/cluster/checkout (the plan's EKS cluster)."""
    _self_managed_nodes(document, "kubernetes.io/cluster/checkout")


def _asg_by_reference(document: dict[str, Any]) -> None:
    """Probe: the group's tag key interpolates the cluster's name, so the plan knows it only after apply."""
    _self_managed_nodes(document, None)
    document["configuration"]["root_module"]["resources"].append(
        {
            "address": "aws_autoscaling_group.nodes",
            "mode": "managed",
            "type": "aws_autoscaling_group",
            "name": "nodes",
            "expressions": {"tag": [{"key": {"references": ["aws_eks_cluster.this.name", "aws_eks_cluster.this"]}}]},
        }
    )


@pytest.mark.parametrize("edit", [_asg_by_tag, _asg_by_reference], ids=["by-tag", "by-reference"])
def test_a_terraform_auto_scaling_group_counts_as_the_clusters_nodes(edit):
    document = json.loads((ROOT / "tests" / "fixtures" / "terraform" / "aws-bad" / "plan.json").read_text())
    edit(document)
    [agent] = [v for v in report(json.dumps(document)).violations if v.rule_id == AGENT]
    assert agent.resource_urn == "aws_eks_cluster.this"
    assert "2 managed node group(s) and 1 self-managed node group(s) (auto-scaling groups)" in agent.message


def _secret_vm_size(document: dict[str, Any], ciphertext: bool) -> None:
    """Probe: the default pool's vmSize written as a secret (plaintext, as `--show-secrets` writes it, or
    encrypted with no passphrase given)."""
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}
    secret |= {"ciphertext": "v1:AAAAAAAAAAAAAAAA:AAAA"} if ciphertext else {"plaintext": '"Standard_D2_v2"'}
    for side in ("inputs", "outputs"):
        _classic_cluster(document)[side]["defaultNodePool"]["vmSize"] = secret


def test_a_pulumi_azure_secret_reads_as_its_value_or_could_not_be_checked():
    plain_found = report(export_edited(lambda d: _secret_vm_size(d, ciphertext=False)))
    assert {v.rule_id for v in plain_found.violations} == {BASIC, SKU, AGENT}  # Standard_D2_v2: the default holds
    blinded = report(export_edited(lambda d: _secret_vm_size(d, ciphertext=True)))
    assert {v.rule_id for v in blinded.unchecked} >= {BACKLOG}  # its line rate needs the size
    assert all(v.enforcement == "mandatory" for v in blinded.unchecked)


def test_a_terraform_auto_scaling_groups_mixed_instance_sizes_are_judged():
    document = json.loads((ROOT / "tests" / "fixtures" / "terraform" / "aws-bad" / "plan.json").read_text())
    _asg_by_tag(document)
    [group] = [rc for rc in document["resource_changes"] if rc["address"] == "aws_autoscaling_group.nodes"]
    override = [{"launch_template": [{"override": [{"instance_type": "m5.large"}, {"instance_type": "c6in.8xlarge"}]}]}]
    group["change"]["after"]["mixed_instances_policy"] = override  # probe: the group launches m5.large too
    [sku] = [v for v in report(json.dumps(document)).violations if v.resource_urn == "aws_autoscaling_group.nodes"]
    assert sku.rule_id == SKU
    assert sku.resource_type == "aws_autoscaling_group"
    assert "instanceType: m5.large (m5) is not a network-optimised size" in sku.message
    assert "mixedInstancesPolicy.launchTemplate.overrides is mixed_instances_policy.launch_template.override" in (
        sku.message
    )


def test_an_unset_backlog_meets_a_1_gbps_sizes_minimum_and_not_a_faster_pools():
    """The kernel default 1,000 is what Standard_D2s_v3 (1 Gb/s) needs; the 40 x Standard_D4s_v5 pool needs more."""
    found = verdicts(probe(MODULE_AND_POOL))
    assert (BACKLOG, MODULE_CLUSTER, False) not in found
    assert (BACKLOG, "azurerm_kubernetes_cluster_node_pool.user", False) in found


def test_instances_of_counted_modules_and_resources_find_their_configuration():
    found = verdicts(probe(COUNTED))
    assert (PORTS, "module.aks[0].azurerm_kubernetes_cluster.main[0]", False) in found

"""`wirespeed check` on `terraform show -json` plans and states: the same rules, the same gates as on Pulumi.

Fixtures (tests/fixtures/terraform/README.md): real plans of the AWS provider 5.100.0 (aws-*) and the azurerm
provider 5.2.0 (azure-bad), both by regen.sh, and plans written by handwritten.py in the documented shape
(azure-good, kubernetes-*: the kubernetes provider cannot be installed here). Golden files in
tests/golden/check/; regenerate after an intended change with

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/check/test_check_terraform.py
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clirun import invoke
from conftest import ROOT, require, require_provider
from fixtures.rule_catalog import golden_form
from test_cli_robustness import mutated
from wirespeed.check import check_text
from wirespeed.check import terraform as tf
from wirespeed.check.readers import TERRAFORM_PLAN, TERRAFORM_STATE, Document, UnreadableInputError
from wirespeed.rules import resolve_config
from wirespeed.values import UNKNOWN, plain

FIXTURES = ROOT / "tests" / "fixtures" / "terraform"
GOLDEN = ROOT / "tests" / "golden" / "check"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
CONFIG = FIXTURES / "check-config.json"
MIRROR = Path("/opt/tf-plugins")
AWS_PROVIDER = MIRROR / "registry.terraform.io" / "hashicorp" / "aws"


def provider_mirror(name: str) -> Path | None:
    """The first mirror holding hashicorp/<name> for linux_amd64, in tests/terratest/tftest.Mirrors' order."""
    local_mirror = ROOT / "builders" / "tfproviders" / "mirror"
    for mirror in (os.environ.get("WIRESPEED_TF_PLUGIN_MIRROR", ""), local_mirror, MIRROR):
        if mirror and any(
            Path(mirror).glob(f"registry.terraform.io/hashicorp/{name}/*/linux_amd64/terraform-provider-*")
        ):
            return Path(mirror)
    return None


POOL = "module.pool.azurerm_kubernetes_cluster_node_pool.this[0]"
EXPECTED: dict[str, set[tuple[str, str]]] = {
    "aws-bad": {
        ("aws-natgw-capacity", "aws_nat_gateway.egress"),
        ("netdev-backlog-minimum", "aws_launch_template.nodes"),
        ("network-optimised-sku", "aws_eks_node_group.general"),
        ("network-optimised-sku", "aws_launch_template.nodes"),
        ("tuning-agent-present", "aws_eks_cluster.this"),
    },
    "azure-bad": {
        ("aks-allocated-outbound-ports-default", "azurerm_kubernetes_cluster.default_ports"),
        ("aks-snat-capacity", "azurerm_kubernetes_cluster.checkout"),
        ("aks-snat-ports-minimum", "azurerm_kubernetes_cluster.checkout"),
        # Not default_ports' system pool: a Standard_D4s_v3 (2 Gb/s: 651 packets in the stall) with no backlog runs
        # the kernel default 1,000, which holds them (issue 25: "unset (the kernel default 1,000), below the minimum
        # 1,024").
        ("netdev-backlog-minimum", POOL),
        ("network-optimised-sku", "azurerm_kubernetes_cluster.default_ports"),
        ("tuning-agent-present", "azurerm_kubernetes_cluster.checkout"),
        ("tuning-agent-present", "azurerm_kubernetes_cluster.default_ports"),
    },
    "kubernetes-bad": {
        ("netdev-backlog-minimum", "kubernetes_manifest.tuning_profile"),
        ("network-optimised-sku", "kubernetes_manifest.karpenter_general"),
        ("network-optimised-sku", "kubernetes_manifest.nap_pool"),
        ("netdev-backlog-minimum", "kubernetes_manifest.nap_node_class"),
        ("nic-ring-minimum", "kubernetes_manifest.tuning_profile"),
        ("tuning-agent-least-privilege", "kubernetes_manifest.tuning_agent"),
    },
    "aws-regional": {
        ("aws-natgw-capacity", "aws_nat_gateway.regional_manual"),
        ("aws-natgw-eip-quota", "aws_nat_gateway.zonal"),
    },
    "aws-good": set(),
    "azure-good": set(),
    "kubernetes-good": set(),
}


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def plan_path(name: str) -> Path:
    return FIXTURES / name / "plan.json"


def found(text: str, config: dict[str, Any] | None = None) -> set[tuple[str, str]]:
    report = check_text(text, "plan.json", resolve_config(config))
    return {(v.rule_id, v.resource_urn) for v in report.violations}


# --- the gate: bad plans fail with exactly the expected rules, good ones pass -----------------------------------


@pytest.mark.parametrize("name", list(EXPECTED))
def test_wirespeed_check_fails_bad_plans_with_the_expected_rules_and_passes_good_ones(name):
    out = invoke("check", rel(plan_path(name)), "--config", rel(CONFIG), "--format", "json")
    assert out.returncode == (1 if EXPECTED[name] else 0), out.stderr
    report = json.loads(out.stdout)
    assert report["input"] == "terraform show -json PLANFILE"
    assert {(v["rule"], v["urn"]) for v in report["violations"]} == EXPECTED[name]
    for violation in report["violations"]:
        assert violation["name"] == violation["urn"]  # the Terraform address
        assert violation["type"] == violation["urn"].rpartition(".")[0].rpartition(".")[2]  # the Terraform type
        assert isinstance(violation["line"], int)


def test_messages_name_the_terraform_attribute_of_each_field():
    out = invoke("check", rel(plan_path("azure-bad")), "--format", "json")
    messages = {(v["rule"], v["urn"]): v["message"] for v in json.loads(out.stdout)["violations"]}
    message = messages[("aks-allocated-outbound-ports-default", "azurerm_kubernetes_cluster.default_ports")]
    assert message.endswith(
        "(In Terraform: allocatedOutboundPorts is network_profile.load_balancer_profile.outbound_ports_allocated.)"
    )
    assert messages[("netdev-backlog-minimum", POOL)].endswith(
        "(In Terraform: netCoreNetdevMaxBacklog is linux_os_config.sysctl_config.net_core_netdev_max_backlog.)"
    )


def test_messages_on_kubernetes_manifests_name_the_path_under_manifest():
    out = invoke("check", rel(plan_path("kubernetes-bad")), "--format", "json")
    messages = {(v["rule"], v["urn"]): v["message"] for v in json.loads(out.stdout)["violations"]}
    nap_pool = messages[("network-optimised-sku", "kubernetes_manifest.nap_pool")]
    assert nap_pool.startswith(
        "requirements admit DS_v2 (DSv2 11-15 and Dsv2: Standard_DS11_v2, Standard_DS12_v2, ...), D_v2 (Dv2 and "
        "Dv2 11-15: Standard_D2_v2, "
    )
    assert nap_pool.endswith("(In Terraform: requirements is manifest.spec.template.spec.requirements.)")
    assert messages[("netdev-backlog-minimum", "kubernetes_manifest.nap_node_class")].endswith(
        "(In Terraform: spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is "
        "manifest.spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog.)"
    )


GOLDEN_CASES = {
    "terraform-azure-bad": ("azure-bad", "table", "txt"),
    "terraform-aws-bad": ("aws-bad", "sarif", "sarif.json"),
}


@pytest.mark.parametrize("case", list(GOLDEN_CASES))
def test_output_matches_the_golden_file(case):
    name, fmt, suffix = GOLDEN_CASES[case]
    out = invoke("check", rel(plan_path(name)), "--config", rel(CONFIG), "--format", fmt)
    assert out.returncode == 1, out.stderr
    golden = GOLDEN / f"{case}.{suffix}"
    if UPDATE:
        golden.write_text(golden_form(out.stdout, suffix))
    assert golden_form(out.stdout, suffix) == golden.read_text(), (
        f"{golden.name} is stale: UPDATE_GOLDEN=1 pytest {__file__}"
    )


def test_line_numbers_point_at_the_resource_change():
    text = plan_path("azure-bad").read_text()
    report = check_text(text, "plan.json", resolve_config(None))
    lines = text.splitlines()
    for address, line in report.lines.items():
        assert lines[line - 1].strip() == "{", address
        assert lines[line].strip() == f'"address": {json.dumps(address)},', address


# --- translations, one resource type at a time -------------------------------------------------------------------

TRANSLATIONS: dict[str, tuple[str, dict[str, Any], str, dict[str, Any]]] = {
    "azurerm-cluster": (
        "azurerm_kubernetes_cluster",
        {
            "name": "aks",
            "resource_group_name": "rg",
            "default_node_pool": [
                {
                    "name": "system",
                    "vm_size": "Standard_D4ds_v6",
                    "node_count": 3,
                    "auto_scaling_enabled": True,
                    "max_count": 5,
                    "upgrade_settings": [{"max_surge": "33%"}],
                    "linux_os_config": [{"sysctl_config": [{"net_core_netdev_max_backlog": 32768}]}],
                }
            ],
            "network_profile": [
                {
                    "outbound_type": "loadBalancer",
                    "load_balancer_sku": "standard",
                    "load_balancer_profile": [
                        {
                            "outbound_ports_allocated": 4000,
                            "managed_outbound_ip_count": 2,
                            "outbound_ip_address_ids": ["/pip/a"],
                            "outbound_ip_prefix_ids": None,
                        }
                    ],
                    "nat_gateway_profile": [],
                }
            ],
        },
        "azure-native:containerservice:ManagedCluster",
        {
            "resourceName": "aks",
            "resourceGroupName": "rg",
            "agentPoolProfiles": [
                {
                    "name": "system",
                    "vmSize": "Standard_D4ds_v6",
                    "count": 3,
                    "enableAutoScaling": True,
                    "maxCount": 5,
                    "upgradeSettings": {"maxSurge": "33%"},
                    "linuxOSConfig": {"sysctls": {"netCoreNetdevMaxBacklog": 32768}},
                }
            ],
            "networkProfile": {
                "outboundType": "loadBalancer",
                "loadBalancerSku": "standard",
                "loadBalancerProfile": {
                    "allocatedOutboundPorts": 4000,
                    "managedOutboundIPs": {"count": 2},
                    "outboundIPs": {"publicIPs": [{"id": "/pip/a"}]},
                },
            },
        },
    ),
    "azurerm-cluster-nat-gateway-azurerm-3": (
        "azurerm_kubernetes_cluster",
        {
            "name": "aks",
            "default_node_pool": [
                {"name": "system", "vm_size": "Standard_D4ds_v6", "enable_auto_scaling": False, "tags": {"team": "a"}}
            ],
            "network_profile": [
                {
                    "outbound_type": "managedNATGateway",
                    "load_balancer_profile": [],
                    "nat_gateway_profile": [{"managed_outbound_ip_count": 4, "idle_timeout_in_minutes": 4}],
                }
            ],
        },
        "azure-native:containerservice:ManagedCluster",
        {
            "resourceName": "aks",
            "agentPoolProfiles": [
                {"name": "system", "vmSize": "Standard_D4ds_v6", "enableAutoScaling": False, "tags": {"team": "a"}}
            ],
            "networkProfile": {
                "outboundType": "managedNATGateway",
                "natGatewayProfile": {"managedOutboundIPProfile": {"count": 4}, "idleTimeoutInMinutes": 4},
            },
        },
    ),
    "azurerm-node-pool": (
        "azurerm_kubernetes_cluster_node_pool",
        {
            "name": "net",
            "kubernetes_cluster_id": "/subscriptions/s/resourceGroups/rg-a/providers/Microsoft.ContainerService/"
            "managedClusters/aks-a",
            "vm_size": "Standard_D16ds_v6",
            "node_count": 2,
            "max_count": None,
            "os_type": "Linux",
            "upgrade_settings": [{"max_surge": "1"}],
            "linux_os_config": [{"sysctl_config": [{"net_core_netdev_max_backlog": 1000}]}],
            "tags": {"wirespeed.io.not-network-optimised-reason": "batch"},
        },
        "azure-native:containerservice:AgentPool",
        {
            "name": "net",
            "agentPoolName": "net",
            "resourceName": "aks-a",
            "resourceGroupName": "rg-a",
            "vmSize": "Standard_D16ds_v6",
            "count": 2,
            "osType": "Linux",
            "upgradeSettings": {"maxSurge": "1"},
            "linuxOSConfig": {"sysctls": {"netCoreNetdevMaxBacklog": 1000}},
            "tags": {"wirespeed.io.not-network-optimised-reason": "batch"},
        },
    ),
    "azurerm-public-ip-prefix": (
        "azurerm_public_ip_prefix",
        {"id": "/prefix/a", "prefix_length": 30},
        "azure-native:network:PublicIPPrefix",
        {"id": "/prefix/a", "prefixLength": 30},
    ),
    "aws-eks-cluster": ("aws_eks_cluster", {"name": "checkout"}, "aws:eks/cluster:Cluster", {"name": "checkout"}),
    "aws-eks-node-group": (
        "aws_eks_node_group",
        {
            "cluster_name": "checkout",
            "node_group_name": "net",
            "instance_types": ["c6in.4xlarge"],
            "launch_template": [{"id": "lt-1", "name": None, "version": "3"}],
            "scaling_config": [{"desired_size": 3, "min_size": 3, "max_size": 10}],
            "tags": {"wirespeed.io.not-network-optimised-reason": "batch"},
            "tags_all": {"wirespeed.io.not-network-optimised-reason": "batch", "team": "a"},
        },
        "aws:eks/nodeGroup:NodeGroup",
        {
            "clusterName": "checkout",
            "nodeGroupName": "net",
            "instanceTypes": ["c6in.4xlarge"],
            "launchTemplate": {"id": "lt-1", "version": "3"},
            "scalingConfig": {"desiredSize": 3, "minSize": 3, "maxSize": 10},
            "tags": {"wirespeed.io.not-network-optimised-reason": "batch"},
        },
    ),
    "aws-launch-template": (
        "aws_launch_template",
        {
            "name": "nodes",
            "instance_type": "c6in.4xlarge",
            "user_data": "IyEvYmluL2Jhc2g=",
            "tags": {"wirespeed.io.not-network-optimised-reason": "batch"},
        },
        "aws:ec2/launchTemplate:LaunchTemplate",
        {
            "name": "nodes",
            "instanceType": "c6in.4xlarge",
            "userData": "IyEvYmluL2Jhc2g=",
            "tags": {"wirespeed.io.not-network-optimised-reason": "batch"},
        },
    ),
    "aws-nat-gateway": (
        "aws_nat_gateway",
        {"allocation_id": "eipalloc-1", "connectivity_type": "public", "secondary_allocation_ids": ["eipalloc-2"]},
        "aws:ec2/natGateway:NatGateway",
        {"allocationId": "eipalloc-1", "connectivityType": "public", "secondaryAllocationIds": ["eipalloc-2"]},
    ),
    "aws-nat-gateway-regional": (
        "aws_nat_gateway",
        {
            "availability_mode": "regional",
            "vpc_id": "vpc-1",
            "allocation_id": None,
            "availability_zone_address": [
                {"allocation_ids": ["eipalloc-1", "eipalloc-2"], "availability_zone": "eu-west-1a"},
                {"allocation_ids": ["eipalloc-3"], "availability_zone_id": "euw1-az2", "availability_zone": None},
            ],
        },
        "aws:ec2/natGateway:NatGateway",
        {
            "availabilityMode": "regional",
            "vpcId": "vpc-1",
            "availabilityZoneAddresses": [
                {"allocationIds": ["eipalloc-1", "eipalloc-2"], "availabilityZone": "eu-west-1a"},
                {"allocationIds": ["eipalloc-3"], "availabilityZoneId": "euw1-az2"},
            ],
        },
    ),
    "aws-nat-gateway-regional-automatic": (
        "aws_nat_gateway",
        {"availability_mode": "regional", "vpc_id": "vpc-1", "availability_zone_address": []},
        "aws:ec2/natGateway:NatGateway",
        {"availabilityMode": "regional", "vpcId": "vpc-1"},
    ),
    "aws-internet-gateway": (
        "aws_internet_gateway",
        {"vpc_id": "vpc-1"},
        "aws:ec2/internetGateway:InternetGateway",
        {},
    ),
    "kubernetes-manifest-daemon-set": (
        "kubernetes_manifest",
        {"manifest": {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "a"}}, "object": None},
        "kubernetes:apps/v1:DaemonSet",
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "a"}},
    ),
    "kubernetes-manifest-core-config-map": (
        "kubernetes_manifest",
        {"manifest": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}},
        "kubernetes:core/v1:ConfigMap",
        {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}},
    ),
    "kubernetes-manifest-aks-node-class": (
        "kubernetes_manifest",
        {"manifest": {"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass", "spec": {}}},
        "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass",
        {"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass", "spec": {}},
    ),
    "kubernetes-manifest-karpenter-node-pool": (
        "kubernetes_manifest",
        {"manifest": {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "spec": {}}},
        "kubernetes:karpenter.sh/v1:NodePool",
        {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "spec": {}},
    ),
    "kubernetes-config-map-v1": (
        "kubernetes_config_map_v1",
        {"metadata": [{"name": "p", "namespace": "wirespeed-system"}], "data": {"profile.json": "{}"}},
        "kubernetes:core/v1:ConfigMap",
        {"metadata": {"name": "p", "namespace": "wirespeed-system"}, "data": {"profile.json": "{}"}},
    ),
    "kubernetes-daemon-set-v1": (
        "kubernetes_daemon_set_v1",
        {
            "metadata": [{"name": "agent", "namespace": "ws", "labels": {"app.kubernetes.io/name": "wirespeed-agent"}}],
            "spec": [
                {
                    "template": [
                        {
                            "spec": [
                                {
                                    "host_network": True,
                                    "host_pid": False,
                                    "container": [
                                        {
                                            "name": "agent",
                                            "image": "agent:1",
                                            "security_context": [
                                                {"privileged": True, "capabilities": [{"add": ["NET_ADMIN"]}]}
                                            ],
                                            "volume_mount": [
                                                {"name": "sys", "mount_path": "/sys", "read_only": False},
                                                {"name": "net", "mount_path": "/proc/sys/net", "read_only": False},
                                            ],
                                        }
                                    ],
                                    "init_container": [],
                                    "volume": [
                                        {"name": "sys", "host_path": [{"path": "/sys"}]},
                                        {"name": "net", "host_path": [{"path": "/proc/sys/net"}]},
                                    ],
                                }
                            ]
                        }
                    ]
                }
            ],
        },
        "kubernetes:apps/v1:DaemonSet",
        {
            "metadata": {"name": "agent", "namespace": "ws", "labels": {"app.kubernetes.io/name": "wirespeed-agent"}},
            "spec": {
                "template": {
                    "spec": {
                        "hostNetwork": True,
                        "hostPID": False,
                        "containers": [
                            {
                                "name": "agent",
                                "image": "agent:1",
                                "securityContext": {"privileged": True, "capabilities": {"add": ["NET_ADMIN"]}},
                                "volumeMounts": [
                                    {"name": "sys", "mountPath": "/sys", "readOnly": False},
                                    {"name": "net", "mountPath": "/proc/sys/net", "readOnly": False},
                                ],
                            }
                        ],
                        "volumes": [
                            {"name": "sys", "hostPath": {"path": "/sys"}},
                            {"name": "net", "hostPath": {"path": "/proc/sys/net"}},
                        ],
                    }
                }
            },
        },
    ),
    "unknown-type-kept-without-props": ("aws_s3_bucket", {"bucket": "b"}, "aws_s3_bucket", {}),
    "manifest-with-unknown-kind": ("kubernetes_manifest", {"manifest": UNKNOWN}, "kubernetes_manifest", {}),
}


@pytest.mark.parametrize("case", list(TRANSLATIONS))
def test_each_terraform_type_translates_to_the_shape_the_rules_read(case):
    tf_type, values, token, props = TRANSLATIONS[case]
    resource = tf.translate(tf_type, "x.y", json.loads(json.dumps(values)))
    assert (resource.type, plain(resource.props)) == (token, props)
    assert resource.urn == resource.name == "x.y"


def test_a_typed_daemon_set_is_judged_like_the_manifest_one():
    _, values, _, _ = TRANSLATIONS["kubernetes-daemon-set-v1"]
    text = json.dumps(plan_doc(rc("kubernetes_daemon_set_v1", "agent", values)))
    report = check_text(text, "plan.json", resolve_config(None))
    assert [(v.rule_id, v.resource_type) for v in report.violations] == [
        ("tuning-agent-least-privilege", "kubernetes_daemon_set_v1"),  # privileged: true
        ("tuning-agent-least-privilege", "kubernetes_daemon_set_v1"),  # /sys mounted read-write
    ]


def test_configuration_not_in_the_documented_shape_links_nothing_and_never_crashes():
    document = json.loads(plan_path("azure-bad").read_text())
    document["configuration"]["root_module"]["module_calls"]["pool"]["module"]["resources"] = 5
    document["configuration"]["root_module"]["module_calls"]["pool"]["expressions"] = []
    # The pool's cluster is then unknown, so the stack rules that count a cluster's pools could not be checked on
    # any cluster it might belong to (a plan is judged once: never a silent pass); the rest still runs.
    unplaced = {
        ("aks-snat-capacity", "azurerm_kubernetes_cluster.checkout"),
        ("tuning-agent-present", "azurerm_kubernetes_cluster.checkout"),
        ("tuning-agent-present", "azurerm_kubernetes_cluster.default_ports"),
    }
    report = check_text(json.dumps(document), "plan.json", resolve_config(None))
    assert {(v.rule_id, v.resource_urn) for v in report.violations if not v.unknown} == EXPECTED["azure-bad"] - unplaced
    assert {(v.rule_id, v.resource_urn) for v in report.unknown} == unplaced


def test_after_unknown_marks_become_the_unknown_value_at_any_depth():
    after = {"a": 1, "pools": [{"b": None}], "block": [], "list": [None, "x"]}
    unknown = {"id": True, "pools": [{"b": True}], "block": [{"c": True}], "list": [True, False], "a": False}
    assert tf.planned(after, unknown) == {
        "a": 1,
        "id": UNKNOWN,
        "pools": [{"b": UNKNOWN}],
        "block": [],
        "list": [UNKNOWN, "x"],
    }
    assert tf.planned(None, {"network_profile": [{"x": True}]}) == {"network_profile": [{"x": UNKNOWN}]}


# --- documents: plans, states, key order, unknowns, deletes ------------------------------------------------------


def plan_doc(*changes: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"format_version": "1.2", "terraform_version": "1.11.4", "resource_changes": list(changes), **top}


def rc(tf_type: str, name: str, after: Any, unknown: Any = None, actions: tuple[str, ...] = ("create",), **extra):
    module = extra.pop("module", "")
    address = f"{module + '.' if module else ''}{tf_type}.{name}"
    item = {"address": address, "mode": "managed", "type": tf_type, "name": name, **extra}
    if module:
        item["module_address"] = module
    item["change"] = {"actions": list(actions), "after": after, "after_unknown": unknown or {}}
    return item


NAT = {"allocation_id": "eipalloc-1", "connectivity_type": "public", "secondary_allocation_ids": None}
REGIONAL = {"availability_mode": "regional", "connectivity_type": "public", "vpc_id": "vpc-1"}
NAT_CONFIG = {"aws-natgw-capacity": {"peakConnectionsPerDestination": 200_000}}
BACKLOG_SET = [{"sysctl_config": [{"net_core_netdev_max_backlog": 32768}]}]
BAD_POOL = {"name": "net", "vm_size": "Standard_D4s_v3", "node_count": 3, "linux_os_config": BACKLOG_SET}


# A plan without `configuration` cannot say who wrote an unknown, so each stays unknown: the rule that needs it
# says "could not be checked" at its level (a plan is judged once; nothing judges it again at apply), the rest run.
UNKNOWN_CASES: dict[str, tuple[Any, ...]] = {
    "known-single-ip": (rc("aws_nat_gateway", "a", NAT), {("aws-natgw-capacity", "aws_nat_gateway.a")}, set()),
    "secondary-ids-unknown": (
        rc("aws_nat_gateway", "a", NAT, {"secondary_allocation_ids": True}),
        set(),
        {("aws-natgw-capacity", "aws_nat_gateway.a"), ("aws-natgw-eip-quota", "aws_nat_gateway.a")},
    ),
    "regional-addresses-unknown": (
        rc("aws_nat_gateway", "r", REGIONAL, {"availability_zone_address": True}),
        set(),
        {("aws-natgw-capacity", "aws_nat_gateway.r")},
    ),
    "regional-addresses-unknown-but-no-az-carries-the-peak": (
        rc("aws_nat_gateway", "r", REGIONAL, {"availability_zone_address": True}),
        {("aws-natgw-capacity", "aws_nat_gateway.r")},
        set(),
        {"aws-natgw-capacity": {"peakConnectionsPerDestination": 2_000_000}},
    ),
    "pool-size-unknown": (
        rc("azurerm_kubernetes_cluster_node_pool", "p", BAD_POOL, {"vm_size": True}),
        set(),
        {
            ("netdev-backlog-minimum", "azurerm_kubernetes_cluster_node_pool.p"),  # sized from the VM's line rate
            ("network-optimised-sku", "azurerm_kubernetes_cluster_node_pool.p"),
        },
    ),
    "network-profile-unknown": (
        rc("azurerm_kubernetes_cluster", "c", {"name": "c", "default_node_pool": []}, {"network_profile": True}),
        set(),
        {
            ("aks-allocated-outbound-ports-default", "azurerm_kubernetes_cluster.c"),
            ("aks-basic-load-balancer", "azurerm_kubernetes_cluster.c"),
            ("aks-natgw-zone-redundant", "azurerm_kubernetes_cluster.c"),  # outbound_type unknown: maybe a NAT gateway
            ("aks-snat-capacity", "azurerm_kubernetes_cluster.c"),
            ("aks-snat-ports-minimum", "azurerm_kubernetes_cluster.c"),
        },
    ),
    "instance-types-unknown": (
        rc("aws_eks_node_group", "g", {"cluster_name": "c"}, {"instance_types": True}),
        set(),
        {("network-optimised-sku", "aws_eks_node_group.g")},
    ),
}


@pytest.mark.parametrize("case", list(UNKNOWN_CASES))
def test_values_unknown_until_apply_could_not_be_checked_never_pass(case):
    change, expected, unknown, *nat = UNKNOWN_CASES[case]
    config = {**NAT_CONFIG, **(nat[0] if nat else {}), "tuning-agent-present": {"enforcementLevel": "disabled"}}
    report = check_text(json.dumps(plan_doc(change)), "plan.json", resolve_config(config))
    assert {(v.rule_id, v.resource_urn) for v in report.violations if not v.unknown} == expected
    assert {(v.rule_id, v.resource_urn) for v in report.unknown} == unknown
    for violation in report.unknown:
        assert violation.unchecked
        assert "could not be checked" in violation.message
        assert "known only after apply" in violation.message
    assert report.unchecked == []  # no secret is involved: the secrets advice never shows


@pytest.mark.parametrize(
    ("actions", "checked"),
    [
        (("delete",), False),
        (("forget",), False),
        (("read",), False),
        (("no-op",), True),
        (("update",), True),
        (("delete", "create"), True),
        (("create", "delete"), True),
    ],
    ids=lambda v: "-".join(v) if isinstance(v, tuple) else str(v),
)
def test_resources_the_apply_removes_are_not_checked(actions, checked):
    after = None if actions in (("delete",), ("forget",)) else BAD_POOL
    text = json.dumps(plan_doc(rc("azurerm_kubernetes_cluster_node_pool", "p", after, actions=actions)))
    expected = {("network-optimised-sku", "azurerm_kubernetes_cluster_node_pool.p")} if checked else set()
    assert {f for f in found(text) if f[0] == "network-optimised-sku"} == expected
    assert check_text(text, "plan.json", resolve_config(None)).resources == (1 if checked else 0)


def test_data_sources_are_not_resources():
    text = json.dumps(plan_doc(rc("aws_eks_node_group", "g", {"instance_types": ["m5.large"]}, mode="data")))
    assert check_text(text, "plan.json", resolve_config(None)).resources == 0


def test_child_module_resources_are_read_with_their_addresses():
    change = rc("azurerm_kubernetes_cluster_node_pool", "this", BAD_POOL, module="module.a.module.b[0]")
    assert found(json.dumps(plan_doc(change))) == {
        ("network-optimised-sku", "module.a.module.b[0].azurerm_kubernetes_cluster_node_pool.this")
    }


def reordered(document: dict[str, Any], first: str) -> str:
    return json.dumps({first: document[first], **{k: v for k, v in document.items() if k != first}}, indent=2)


@pytest.mark.parametrize("first", ["configuration", "resource_changes", "planned_values", "format_version"])
def test_top_level_keys_in_any_order_give_the_same_findings(first):
    document = json.loads(plan_path("azure-bad").read_text())
    assert found(reordered(document, first)) == EXPECTED["azure-bad"]


def test_pools_link_to_their_cluster_through_configuration_references_across_modules():
    """The pool's kubernetes_cluster_id is unknown (the cluster is being created); only the reference through
    module.pool's var.kubernetes_cluster_id says which cluster it scales, and the capacity rule counts it."""
    document = json.loads(plan_path("azure-bad").read_text())
    assert ("aks-snat-capacity", "azurerm_kubernetes_cluster.checkout") in found(json.dumps(document))
    del document["configuration"]  # no reference and no cluster in module.pool: the pool's cluster is unknown
    report = check_text(json.dumps(document), "plan.json", resolve_config(None))
    capacity = [v for v in report.violations if v.rule_id == "aks-snat-capacity"]
    assert [(v.resource_urn, v.unknown) for v in capacity] == [("azurerm_kubernetes_cluster.checkout", True)]


def test_without_configuration_a_pool_links_to_the_one_cluster_of_its_module():
    changes = json.loads(plan_path("azure-bad").read_text())["resource_changes"]
    [cluster] = [c for c in changes if c["address"] == "azurerm_kubernetes_cluster.checkout"]
    pool = rc(
        "azurerm_kubernetes_cluster_node_pool",
        "net",
        {**BAD_POOL, "vm_size": "Standard_D16ds_v6", "node_count": 200},
        {"kubernetes_cluster_id": True},
    )
    assert ("aks-snat-capacity", "azurerm_kubernetes_cluster.checkout") in found(json.dumps(plan_doc(cluster, pool)))


def as_state(plan: dict[str, Any]) -> dict[str, Any]:
    """The state after applying a plan: planned_values as values, unknown ids filled in."""
    values = copy.deepcopy(plan["planned_values"])
    arm = "/subscriptions/s/resourceGroups/rg-checkout/providers/Microsoft.ContainerService/managedClusters/"
    for module in [values["root_module"], *values["root_module"].get("child_modules", [])]:
        for resource in module["resources"]:
            if resource["type"] == "azurerm_kubernetes_cluster_node_pool":
                resource["values"]["kubernetes_cluster_id"] = arm + "aks-checkout"
    return {"format_version": "1.0", "terraform_version": "1.11.4", "values": values}


def test_a_state_is_checked_like_the_plan_it_came_from():
    state = as_state(json.loads(plan_path("azure-bad").read_text()))
    text = json.dumps(state, indent=2)
    report = check_text(text, "state.json", resolve_config(None))
    assert report.shape is TERRAFORM_STATE
    assert {(v.rule_id, v.resource_urn) for v in report.violations} == EXPECTED["azure-bad"]


@pytest.mark.parametrize(
    ("text", "shape", "resources"),
    [
        ('{"format_version": "1.0"}', TERRAFORM_STATE, 0),  # `terraform show -json` with no state at all
        ('{"format_version": "1.2", "planned_values": {"root_module": {}}}', TERRAFORM_PLAN, 0),  # nothing changes
    ],
    ids=["empty-state", "empty-plan"],
)
def test_empty_terraform_documents_are_readable(text, shape, resources):
    document = Document(text)
    assert len(list(document.resources())) == resources
    assert document.shape is shape


ERRORS = {
    "changes-not-array": ('{"resource_changes": {}}', "resource_changes: expected an array, got an object ({})"),
    "change-not-object": ('{"resource_changes": [1]}', "resource_changes[0]: expected an object, got a number (1)"),
    "address-missing": (
        '{"resource_changes": [{"type": "t", "name": "n", "mode": "managed"}]}',
        "resource_changes[0].address: expected a string, got null (null)",
    ),
    "actions-not-strings": (
        json.dumps({"resource_changes": [{**rc("t", "n", {}), "change": {"actions": [1]}}]}),
        "resource_changes[0].change.actions[0]: expected a string, got a number (1)",
    ),
    "after-not-object": (
        json.dumps({"resource_changes": [rc("aws_nat_gateway", "n", [1])]}),
        "resource_changes[0].change.after: expected an object, got an array ([1])",
    ),
    "after-unknown-not-object": (
        json.dumps({"resource_changes": [rc("aws_nat_gateway", "n", {}, "yes")]}),
        'resource_changes[0].change.after_unknown: expected an object, got a string ("yes")',
    ),
    "configuration-not-object": ('{"configuration": []}', "configuration: expected an object, got an array ([])"),
    "state-resource-values": (
        '{"values": {"root_module": {"child_modules": [{"resources": [{"address": "a.b", "type": "a", '
        '"name": "b", "mode": "managed", "values": 3}]}]}}}',
        "values.root_module.child_modules[0].resources[0].values: expected an object, got a number (3)",
    ),
    "format-version-2": (
        '{"format_version": "2.0"}',
        'format_version: "2.0" is not supported: wirespeed reads what `terraform show -json` has written ("0.1" '
        'Terraform 0.12 to 1.0.0; "0.2" Terraform 1.0.1 to 1.0.x; "1.x" Terraform 1.1 and later)',
    ),
    "plan-and-state": (
        '{"resource_changes": [], "values": {}}',
        'unknown shape: "values" (terraform show -json) next to terraform show -json PLANFILE content',
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_malformed_terraform_documents_name_the_json_path(case):
    text, message = ERRORS[case]
    with pytest.raises(UnreadableInputError) as caught:
        list(Document(text).resources())
    assert str(caught.value) == message


# --- fixtures stay what their sources make -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["aws-regional", "azure-good", "kubernetes-bad", "kubernetes-good"])
def test_handwritten_plans_are_what_handwritten_py_writes(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location("handwritten", FIXTURES / "handwritten.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert plan_path(name).read_text() == module.render(module.PLANS[name]()), (
        f"{name}/plan.json is stale: run .venv/bin/python tests/fixtures/terraform/handwritten.py"
    )


NO_TERRAFORM = "needs the terraform binary on PATH (>= 1.9) to plan the fixtures again"


@pytest.mark.parametrize(("address", "outcome"), [("hashicorp/aws", "fail"), ("hashicorp/azurerm", "skip")])
def test_under_ci_only_the_allow_listed_providers_may_be_missing(monkeypatch, address, outcome):
    """The CI image has hashicorp/aws in /opt/tf-plugins, so its absence there is a broken CI; azurerm cannot be had
    in CI's time (tests/allowed-skips.json)."""
    monkeypatch.setenv("CI", "true")
    raised = {"fail": pytest.fail.Exception, "skip": pytest.skip.Exception}[outcome]
    with pytest.raises(raised, match=f"needs the Terraform provider {address} in a plugin mirror"):
        require_provider(address, present=False, looked_in="nowhere")
    require_provider(address, present=True, looked_in="nowhere")


def read_parts(path: Path) -> list[tuple[str, list[str], Any, Any]]:
    """What the reader reads of a plan: each change's address, actions, after and after_unknown."""
    document = json.loads(path.read_text())
    return [
        (c["address"], c["change"]["actions"], c["change"]["after"], c["change"]["after_unknown"])
        for c in document["resource_changes"]
    ]


@pytest.fixture(scope="module")
def replanned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """regen.sh run once into a temporary folder: every plan whose provider a mirror holds, planned again."""
    out = tmp_path_factory.mktemp("replanned")
    if shutil.which("terraform") is None:
        return out
    done = subprocess.run(
        [str(FIXTURES / "regen.sh"), str(MIRROR), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_committed_aws_plans_are_what_the_real_provider_plans(replanned):
    require(None if shutil.which("terraform") else NO_TERRAFORM)
    require_provider("hashicorp/aws", AWS_PROVIDER.is_dir(), looked_in=str(MIRROR))
    for name in ("aws-bad", "aws-good"):
        assert read_parts(replanned / name / "plan.json") == read_parts(plan_path(name)), (
            f"{name}/plan.json is stale: run tests/fixtures/terraform/regen.sh"
        )
        # regen.sh marks what it writes (mark_plan.py), as the committed plans are marked.
        marker = json.loads((replanned / name / "plan.json").read_text())["//"]
        assert marker == json.loads(plan_path(name).read_text())["//"]


def test_committed_azure_bad_plan_is_what_the_real_azurerm_provider_plans(replanned):
    """Planned offline: regen.sh gives the provider a token from fake_azure_identity.py, and a plan of new resources
    asks Azure for nothing else."""
    require(None if shutil.which("terraform") else NO_TERRAFORM)
    require_provider(
        "hashicorp/azurerm",
        provider_mirror("azurerm") is not None,
        looked_in=(
            "$WIRESPEED_TF_PLUGIN_MIRROR, builders/tfproviders/mirror (builders/tfproviders/build.sh), /opt/tf-plugins"
        ),
    )
    assert read_parts(replanned / "azure-bad" / "plan.json") == read_parts(plan_path("azure-bad")), (
        "azure-bad/plan.json is stale: run tests/fixtures/terraform/regen.sh"
    )
    marker = json.loads((replanned / "azure-bad" / "plan.json").read_text())["//"]
    assert marker == json.loads(plan_path("azure-bad").read_text())["//"]


# --- robustness ---------------------------------------------------------------------------------------------------

PLANS = [json.loads(plan_path(name).read_text()) for name in EXPECTED]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_plans_give_a_verdict_or_an_error_naming_the_path_never_a_crash(data):
    """Any value anywhere replaced or deleted, aimed at what the reader reads (a change's after and after_unknown,
    the configuration) as often as at the whole document."""
    document = copy.deepcopy(data.draw(st.sampled_from(PLANS)))
    target = data.draw(st.sampled_from(["document", "after", "after_unknown", "configuration"]))
    if target == "document":
        document = data.draw(mutated(document))
    elif target == "configuration":
        document["configuration"] = data.draw(mutated(document["configuration"]))
    else:
        change = data.draw(st.sampled_from(document["resource_changes"]))["change"]
        change[target] = data.draw(mutated(change[target]))
    with contextlib.suppress(UnreadableInputError):  # its messages are tested above; anything else fails here
        check_text(json.dumps(document), "plan.json", resolve_config(None))


def test_the_default_config_advises_on_the_good_plans_nat_gateway_quota_and_still_passes():
    """aws-good's gateway has 4 Elastic IPs: above AWS's default quota of 2 (check-config.json declares it raised
    to 4), which is advice, not a failure."""
    out = invoke("check", rel(plan_path("aws-good")), "--format", "json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert [(v["rule"], v["enforcement"], v["urn"]) for v in report["violations"]] == [
        ("aws-natgw-eip-quota", "advisory", "aws_nat_gateway.egress")
    ]

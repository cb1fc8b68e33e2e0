"""Probes derived from the real files of tests/fixtures/real/: each is one real file with one named edit.

A probe isolates one case of issue 25 on a file nobody on this project wrote: the edit is the only difference
from the real bytes, so a verdict that changes between the real file and its probe is that edit's doing. The
edits are here, in code a review reads, rather than as committed copies of large files; to look at one:

    .venv/bin/python tests/real_probes.py OUTDIR      # writes every probe as OUTDIR/<probe name>

tests/check/test_real_corpus.py pins each probe's verdicts as it pins the real files'.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REAL = Path(__file__).resolve().parent / "fixtures" / "real"

Doc = dict[str, Any]


@dataclass(frozen=True)
class Probe:
    name: str  # <real file stem>--<edit>, and the real file's suffix
    source: str  # the real file in tests/fixtures/real/
    edit: str  # the one change, in words
    make: Callable[[bytes], bytes]


def _json(change: Callable[[Doc], None]) -> Callable[[bytes], bytes]:
    """An edit of a JSON document, written back in the layout the real file has (indented or on one line)."""

    def apply(data: bytes) -> bytes:
        doc = json.loads(data)
        change(doc)
        indent = 2 if data.lstrip()[1:2] in (b"\n", b"\r") else None
        separators = None if indent else (",", ":")
        return (json.dumps(doc, indent=indent, separators=separators) + "\n").encode()

    return apply


def _pulumi_resources(doc: Doc, type_suffix: str) -> Iterator[Doc]:
    for resource in doc["deployment"]["resources"]:
        if resource["type"].endswith(type_suffix):
            yield resource


AKS_CLASSIC = "containerservice/kubernetesCluster:KubernetesCluster"


def _aks_classic(edit: Callable[[Doc], None]) -> Callable[[Doc], None]:
    """Apply ``edit`` to the pulumi-azure cluster's inputs and outputs alike, as a `pulumi up` would record it."""

    def change(doc: Doc) -> None:
        clusters = list(_pulumi_resources(doc, AKS_CLASSIC))
        assert clusters, "the export holds no pulumi-azure KubernetesCluster"
        for cluster in clusters:
            for side in ("inputs", "outputs"):
                edit(cluster[side])

    return change


def _load_balancer_sku(sku: str) -> Callable[[Doc], None]:
    def edit(props: Doc) -> None:
        props["networkProfile"]["loadBalancerSku"] = sku

    return edit


def _with_load_balancer_profile(props: Doc) -> None:
    # pulumi-azure's names for azurerm's load_balancer_profile block (outbound_ports_allocated and so on).
    props["networkProfile"]["loadBalancerSku"] = "standard"
    props["networkProfile"]["loadBalancerProfile"] = {"managedOutboundIpCount": 2, "outboundPortsAllocated": 4000}


def _vm_size(size: str) -> Callable[[Doc], None]:
    def edit(props: Doc) -> None:
        props["defaultNodePool"]["vmSize"] = size

    return edit


def _backlog(value: int) -> Callable[[Doc], None]:
    def edit(props: Doc) -> None:
        props["defaultNodePool"]["linuxOsConfig"] = {"sysctlConfig": {"netCoreNetdevMaxBacklog": value}}

    return edit


def _null_dependencies_as_empty(doc: Doc) -> None:
    """What CLI 3.102 meant by ``"x": null`` (a Go nil slice): no dependencies."""
    for resource in doc["deployment"]["resources"]:
        deps = resource.get("propertyDependencies")
        if deps:
            for key, value in deps.items():
                if value is None:
                    deps[key] = []


def _format_version(version: str) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        doc["format_version"] = version

    return change


def _only_resource_changes(doc: Doc) -> None:
    for key in list(doc):
        if key != "resource_changes":
            del doc[key]


def _utf16_to_utf8(data: bytes) -> bytes:
    return data.decode("utf-16").encode()


def _drop_wrapper_line(data: bytes) -> bytes:
    """setup-terraform's wrapper prints ``[command]<path> show -json ...`` before the JSON."""
    first, _, rest = data.partition(b"\n")
    assert first.startswith(b"[command]"), first[:40]
    return rest


AL2023_SHELL = b'echo "Hello, AL2023!"'


def _al2023_backlog(data: bytes) -> bytes:
    assert data.count(AL2023_SHELL) == 1
    return data.replace(AL2023_SHELL, b"sysctl -w net.core.netdev_max_backlog=16384\n    " + AL2023_SHELL)


# The AKSNodeClass of Karpenter's Azure perftest example, and its two NodePools' pin on one size.
PERFTEST_IMAGE = b"spec:\n  imageFamily: Ubuntu\n"
PERFTEST_PIN = (
    b"        - key: karpenter.azure.com/sku-name\n          operator: In\n          values: [Standard_D2s_v4]\n"
)


def _perftest_backlog(data: bytes) -> bytes:
    assert data.count(PERFTEST_IMAGE) == 1
    sysctls = b"  linuxOSConfig:\n    sysctls:\n      netCoreNetdevMaxBacklog: 4096\n"
    return data.replace(PERFTEST_IMAGE, PERFTEST_IMAGE + sysctls)


def _perftest_unpinned(data: bytes) -> bytes:
    assert data.count(PERFTEST_PIN) == 2
    return data.replace(PERFTEST_PIN, b"")


AZURERM = "registry.terraform.io/hashicorp/azurerm"

# The ways a probe's cluster writes its network_profile (azurerm 3.x names). Optional+Computed blocks and
# attributes nobody wrote are `after_unknown: true` in a plan; the configuration then shows them unset.
NETWORK = ("unwritten", "no-lb-profile", "lb-profile", "lb-profile-from-reference", "dynamic-lb-profile", "basic")


def _network(kind: str) -> tuple[Doc | None, Any, list[Doc] | None]:
    """(after, after_unknown, expressions) of network_profile for ``kind`` (one of NETWORK)."""
    if kind == "unwritten":  # no network_profile block: the provider computes all of it
        return None, True, None
    sku = "basic" if kind == "basic" else "standard"
    after: Doc = {
        "network_plugin": "azure",
        "network_policy": "azure",
        "dns_service_ip": "10.0.0.10",
        "service_cidr": "10.0.0.0/16",
        "load_balancer_sku": sku,
        "outbound_type": "loadBalancer",
    }
    unknown: Doc = {"pod_cidr": True, "pod_cidrs": True, "service_cidrs": True, "ip_versions": True}
    expressions: Doc = {
        "network_plugin": {"constant_value": "azure"},
        "network_policy": {"constant_value": "azure"},
        "dns_service_ip": {"constant_value": "10.0.0.10"},
        "service_cidr": {"constant_value": "10.0.0.0/16"},
        "load_balancer_sku": {"constant_value": sku},
    }
    profile_after = {"idle_timeout_in_minutes": 30, "outbound_ip_address_ids": None, "outbound_ip_prefix_ids": None}
    if kind in ("no-lb-profile", "basic"):
        unknown["load_balancer_profile"] = True  # Optional+Computed, not written
    elif kind == "lb-profile":
        after["load_balancer_profile"] = [
            profile_after | {"managed_outbound_ip_count": 2, "outbound_ports_allocated": 4000}
        ]
        unknown["load_balancer_profile"] = [{"effective_outbound_ips": True, "managed_outbound_ipv6_count": True}]
        expressions["load_balancer_profile"] = [
            {
                "managed_outbound_ip_count": {"constant_value": 2},
                "outbound_ports_allocated": {"constant_value": 4000},
                "idle_timeout_in_minutes": {"constant_value": 30},
            }
        ]
    elif kind == "lb-profile-from-reference":
        # outbound_ports_allocated = local.outbound_ports, a local computed from values known only after apply:
        # the plan leaves it out of `after` and marks it unknown, the configuration shows who wrote it.
        after["load_balancer_profile"] = [profile_after]
        unknown["load_balancer_profile"] = [
            {
                "effective_outbound_ips": True,
                "managed_outbound_ip_count": True,
                "managed_outbound_ipv6_count": True,
                "outbound_ports_allocated": True,
            }
        ]
        expressions["load_balancer_profile"] = [{"outbound_ports_allocated": {"references": ["local.outbound_ports"]}}]
    elif kind == "dynamic-lb-profile":
        # `dynamic "load_balancer_profile" { for_each = ...; content { managed_outbound_ip_count = 2,
        # outbound_ports_allocated = local.outbound_ports } }`: Terraform's JSON configuration leaves dynamic
        # blocks out, so only the plan's values say the block exists.
        after["load_balancer_profile"] = [profile_after | {"managed_outbound_ip_count": 2}]
        unknown["load_balancer_profile"] = [
            {"effective_outbound_ips": True, "managed_outbound_ipv6_count": True, "outbound_ports_allocated": True}
        ]
    else:
        raise ValueError(f"network_profile kind {kind!r}: one of {NETWORK}")
    return after, [unknown], [expressions]


def _plus_aks_cluster(
    network: str, *, module: str = "", counted: bool = False, pool_by_reference: bool = False
) -> Callable[[Doc], None]:
    """Add one azurerm_kubernetes_cluster to a real azurerm plan, in the shape Terraform 1.x plans azurerm 3.x.

    The real plan (Terraform 1.3.6, azurerm >= 3.36) supplies the envelope, the provider and the resource group the
    cluster refers to; the cluster block is written by this project (no licensed real plan of an AKS cluster on
    Terraform 1.x was found). ``network`` picks its network_profile (see NETWORK). With ``module`` the cluster is
    ``module.<module>.azurerm_kubernetes_cluster.main`` as the Azure/aks registry module writes it: named from an
    input known only after apply, on that module's default size Standard_D2s_v3. ``counted`` calls the module and
    the cluster with count = 1; ``pool_by_reference`` adds a root node pool whose kubernetes_cluster_id is the
    module's ``aks_id`` output, so the plan knows it only after apply.
    """

    def change(doc: Doc) -> None:
        name = "main" if module else "probe"
        vm_size = "Standard_D2s_v3" if module else "Standard_D4s_v5"
        pool = {
            "name": "system",
            "vm_size": vm_size,
            "node_count": 3,
            "enable_auto_scaling": False,
            "max_count": None,
            "min_count": None,
            "type": "VirtualMachineScaleSets",
            "kubelet_config": [],
            "linux_os_config": [],
            "node_network_profile": [],
            "upgrade_settings": [],
            "zones": None,
        }
        after: Doc = {
            "location": "canadacentral",
            "dns_prefix": "aksprobe",
            "default_node_pool": [pool],
            "sku_tier": "Free",
            "tags": None,
            "identity": [{"type": "SystemAssigned", "identity_ids": None}],
            "timeouts": None,
        }
        unknown: Doc = {
            "id": True,
            "fqdn": True,
            "kube_config": True,
            "kube_config_raw": True,
            "kube_admin_config": True,
            "kube_admin_config_raw": True,
            "kubernetes_version": True,
            "node_resource_group": True,
            "identity": [{"principal_id": True, "tenant_id": True}],
            "default_node_pool": [
                {"max_pods": True, "orchestrator_version": True, "os_disk_size_gb": True, "node_labels": True}
            ],
        }
        expressions: Doc = {
            "dns_prefix": {"constant_value": "aksprobe"},
            "location": {"references": ["azurerm_resource_group.test.location", "azurerm_resource_group.test"]},
            "default_node_pool": [
                {
                    "name": {"constant_value": "system"},
                    "vm_size": {"constant_value": vm_size},
                    "node_count": {"constant_value": 3},
                }
            ],
            "identity": [{"type": {"constant_value": "SystemAssigned"}}],
        }
        if module:
            # name = "${var.prefix}-aks", resource_group_name = var.resource_group_name: both fed by the caller
            # from values known only after apply.
            unknown |= {"name": True, "resource_group_name": True}
            expressions["name"] = {"references": ["var.prefix"]}
            expressions["resource_group_name"] = {"references": ["var.resource_group_name"]}
        else:
            after |= {"name": "aks-probe", "resource_group_name": "test"}
            expressions["name"] = {"constant_value": "aks-probe"}
            expressions["resource_group_name"] = {
                "references": ["azurerm_resource_group.test.name", "azurerm_resource_group.test"]
            }
        net_after, net_unknown, net_expressions = _network(network)
        if net_after is not None:
            after["network_profile"] = [net_after]
        unknown["network_profile"] = net_unknown
        if net_expressions is not None:
            expressions["network_profile"] = net_expressions
        sensitive = {
            "kube_config": True,
            "kube_config_raw": True,
            "kube_admin_config": True,
            "kube_admin_config_raw": True,
        }

        module_address = f"module.{module}{'[0]' if counted else ''}" if module else ""
        address = f"{module_address + '.' if module else ''}azurerm_kubernetes_cluster.{name}{'[0]' if counted else ''}"
        rc: Doc = {"address": address}
        if module_address:
            rc["module_address"] = module_address
        rc |= {"mode": "managed", "type": "azurerm_kubernetes_cluster", "name": name}
        if counted:
            rc["index"] = 0
        rc |= {
            "provider_name": AZURERM,
            "change": {
                "actions": ["create"],
                "before": None,
                "after": after,
                "after_unknown": unknown,
                "before_sensitive": False,
                "after_sensitive": sensitive,
            },
        }
        doc["resource_changes"].append(rc)
        planned = {k: v for k, v in rc.items() if k not in ("change", "module_address")}
        planned |= {"schema_version": 2, "values": after, "sensitive_values": sensitive}
        config: Doc = {
            "address": f"azurerm_kubernetes_cluster.{name}",
            "mode": "managed",
            "type": "azurerm_kubernetes_cluster",
            "name": name,
            "provider_config_key": f"{module}:azurerm" if module else "azurerm",
            "expressions": expressions,
            "schema_version": 2,
        }
        if counted:
            config["count_expression"] = {"constant_value": 1}
        root = doc["configuration"]["root_module"]
        if not module:
            doc["planned_values"]["root_module"]["resources"].append(planned)
            root["resources"].append(config)
            return
        doc["planned_values"]["root_module"].setdefault("child_modules", []).append(
            {"address": module_address, "resources": [planned]}
        )
        call: Doc = {
            "source": "Azure/aks/azurerm",
            "expressions": {
                "prefix": {"references": ["azurerm_resource_group.test.id", "azurerm_resource_group.test"]},
                "resource_group_name": {
                    "references": ["azurerm_resource_group.test.name", "azurerm_resource_group.test"]
                },
            },
            "module": {
                "outputs": {
                    "aks_id": {
                        "expression": {
                            "references": [
                                f"azurerm_kubernetes_cluster.{name}.id",
                                f"azurerm_kubernetes_cluster.{name}",
                            ]
                        }
                    }
                },
                "resources": [config],
                "variables": {"prefix": {}, "resource_group_name": {}},
            },
        }
        if counted:
            call["count_expression"] = {"constant_value": 1}
        root.setdefault("module_calls", {})[module] = call
        if pool_by_reference:
            _plus_pool_by_reference(doc, f"module.{module}{'[0]' if counted else ''}")

    return change


def _plus_pool_by_reference(doc: Doc, module_address: str) -> None:
    """A root node pool whose kubernetes_cluster_id is the module cluster's id (unknown until apply)."""
    address = "azurerm_kubernetes_cluster_node_pool.user"
    values = {"name": "user", "vm_size": "Standard_D4s_v5", "node_count": 40, "linux_os_config": [], "zones": None}
    head = {"address": address, "mode": "managed", "type": "azurerm_kubernetes_cluster_node_pool", "name": "user"}
    doc["resource_changes"].append(
        head
        | {
            "provider_name": AZURERM,
            "change": {
                "actions": ["create"],
                "before": None,
                "after": values,
                "after_unknown": {"id": True, "kubernetes_cluster_id": True, "max_pods": True},
                "before_sensitive": False,
                "after_sensitive": {},
            },
        }
    )
    doc["planned_values"]["root_module"]["resources"].append(
        head | {"provider_name": AZURERM, "schema_version": 1, "values": values, "sensitive_values": {}}
    )
    reference = module_address.split("[")[0]
    doc["configuration"]["root_module"]["resources"].append(
        head
        | {
            "provider_config_key": "azurerm",
            "expressions": {
                "name": {"constant_value": "user"},
                "vm_size": {"constant_value": "Standard_D4s_v5"},
                "node_count": {"constant_value": 40},
                "kubernetes_cluster_id": {"references": [f"{reference}.aks_id", reference]},
            },
            "schema_version": 1,
        }
    )


def _without_configuration(doc: Doc) -> None:
    del doc["configuration"]


def _both(*changes: Callable[[Doc], None]) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        for each in changes:
            each(doc)

    return change


AZURE = "pulumi-azure-aks-basic-lb.cli3.129.stack.json"
AKS_REAL = "tf-aks-cost-estimator.tf0.13.0.plan.json"
NSG_PLAN = "tf-azurerm-nsg-no-aks.tf1.3.6.plan.json"
NSG = "tf-azurerm-nsg-no-aks.tf1.3.6"

PROBES: tuple[Probe, ...] = (
    Probe(
        "pulumi-azure-aks-basic-lb.cli3.129--standard-lb-no-profile.stack.json",
        AZURE,
        "loadBalancerSku basic -> standard, still no loadBalancerProfile written: Azure's default port allocation",
        _json(_aks_classic(_load_balancer_sku("standard"))),
    ),
    Probe(
        "pulumi-azure-aks-basic-lb.cli3.129--with-load-balancer-profile.stack.json",
        AZURE,
        "Standard load balancer with loadBalancerProfile {managedOutboundIpCount: 2, outboundPortsAllocated: 4000}",
        _json(_aks_classic(_with_load_balancer_profile)),
    ),
    Probe(
        "pulumi-azure-aks-basic-lb.cli3.129--vm-size-Standard_DS2_v2.stack.json",
        AZURE,
        "default pool vmSize Standard_D2_v2 -> Standard_DS2_v2 (a size the issue found missing from the catalog)",
        _json(_aks_classic(_vm_size("Standard_DS2_v2"))),
    ),
    Probe(
        "pulumi-azure-aks-basic-lb.cli3.129--vm-size-Standard_D4ps_v5.stack.json",
        AZURE,
        "default pool vmSize -> Standard_D4ps_v5 (Arm v5, missing from the catalog per the issue)",
        _json(_aks_classic(_vm_size("Standard_D4ps_v5"))),
    ),
    Probe(
        "pulumi-azure-aks-basic-lb.cli3.129--vm-size-Standard_F8s_v2.stack.json",
        AZURE,
        "default pool vmSize -> Standard_F8s_v2 (compute-optimised, missing from the catalog per the issue)",
        _json(_aks_classic(_vm_size("Standard_F8s_v2"))),
    ),
    Probe(
        "pulumi-azure-aks-basic-lb.cli3.129--vm-size-Standard_D4s_v7.stack.json",
        AZURE,
        "default pool vmSize -> Standard_D4s_v7 (a Dsv7 size, a family the catalog does not hold)",
        _json(_aks_classic(_vm_size("Standard_D4s_v7"))),
    ),
    Probe(
        "pulumi-azure-aks-basic-lb.cli3.129--vm-size-Standard_D4s_v3.stack.json",
        AZURE,
        "default pool vmSize -> Standard_D4s_v3 (Dsv3, a family the catalog has)",
        _json(_aks_classic(_vm_size("Standard_D4s_v3"))),
    ),
    Probe(
        "pulumi-azure-aks-basic-lb.cli3.129--backlog-1000.stack.json",
        AZURE,
        "default pool linuxOsConfig.sysctlConfig.netCoreNetdevMaxBacklog = 1000 (the kernel default, written)",
        _json(_aks_classic(_backlog(1000))),
    ),
    Probe(
        "pulumi-eks-extra-sg.cli3.102--null-dependencies-as-empty.stack.json",
        "pulumi-eks-extra-sg.cli3.102.stack.json",
        'every "propertyDependencies": {"x": null} written as [] (what the nil slice means)',
        _json(_null_dependencies_as_empty),
    ),
    Probe(
        "tf-eks-node-group.tf0.14.6--format-1.0.plan.json",
        "tf-eks-node-group.tf0.14.6.plan.json",
        'format_version "0.1" -> "1.0": the same content under the label Terraform 1.1+ writes',
        _json(_format_version("1.0")),
    ),
    Probe(
        "tf-asg-launch-template.tf0.12.25--format-1.0.plan.json",
        "tf-asg-launch-template.tf0.12.25.plan.json",
        'format_version "0.1" -> "1.0"',
        _json(_format_version("1.0")),
    ),
    Probe(
        "tf-asg-tags.tf1.0.7--format-1.0.plan.json",
        "tf-asg-tags.tf1.0.7.plan.json",
        'format_version "0.2" -> "1.0"',
        _json(_format_version("1.0")),
    ),
    Probe(
        "tf-gke-cluster-node-pool.tf0.14.2--format-1.0.plan.json",
        "tf-gke-cluster-node-pool.tf0.14.2.plan.json",
        'format_version "0.1" -> "1.0": a GKE plan wirespeed can parse, with nothing it reads',
        _json(_format_version("1.0")),
    ),
    Probe(
        "tf-nat-gateways.tf0.14.3--format-1.0.plan.json",
        "tf-nat-gateways.tf0.14.3.plan.json",
        'format_version "0.1" -> "1.0"',
        _json(_format_version("1.0")),
    ),
    Probe(
        "tf-aks-cost-estimator.tf0.13.0--format-1.0.plan.json",
        AKS_REAL,
        'format_version "0.1" -> "1.0": a real AKS plan nobody wrote a network_profile in, under the label '
        "Terraform 1.1+ writes",
        _json(_format_version("1.0")),
    ),
    Probe(
        "tf-aks-cost-estimator.tf0.13.0--format-1.0-no-configuration.plan.json",
        AKS_REAL,
        'format_version "0.1" -> "1.0" and its "configuration" removed: nothing says who wrote what',
        _json(_both(_format_version("1.0"), _without_configuration)),
    ),
    Probe(
        f"{NSG}--plus-aks-cluster-no-lb-profile.plan.json",
        NSG_PLAN,
        "one azurerm_kubernetes_cluster (written by this project: Standard_D4s_v5 x3) added with no network_profile "
        "written: after_unknown network_profile true, configuration without it",
        _json(_plus_aks_cluster("unwritten")),
    ),
    Probe(
        f"{NSG}--plus-aks-cluster-network-profile-no-lb-profile.plan.json",
        NSG_PLAN,
        "the same cluster with network_profile {azure, Standard load balancer} written but no load_balancer_profile: "
        "after_unknown load_balancer_profile true",
        _json(_plus_aks_cluster("no-lb-profile")),
    ),
    Probe(
        f"{NSG}--plus-aks-cluster-with-lb-profile.plan.json",
        NSG_PLAN,
        "the same cluster with network_profile.load_balancer_profile {managed_outbound_ip_count 2, "
        "outbound_ports_allocated 4000} written",
        _json(_plus_aks_cluster("lb-profile")),
    ),
    Probe(
        f"{NSG}--plus-aks-cluster-lb-profile-from-reference.plan.json",
        NSG_PLAN,
        "the same cluster with load_balancer_profile.outbound_ports_allocated = local.outbound_ports, known only "
        "after apply",
        _json(_plus_aks_cluster("lb-profile-from-reference")),
    ),
    Probe(
        f"{NSG}--plus-aks-cluster-dynamic-lb-profile.plan.json",
        NSG_PLAN,
        'the same cluster with a dynamic "load_balancer_profile" block (absent from the configuration): managed '
        "outbound IPs 2, ports unknown",
        _json(_plus_aks_cluster("dynamic-lb-profile")),
    ),
    Probe(
        f"{NSG}--plus-aks-cluster-basic-lb.plan.json",
        NSG_PLAN,
        'the same cluster with network_profile.load_balancer_sku "basic" written',
        _json(_plus_aks_cluster("basic")),
    ),
    Probe(
        f"{NSG}--plus-aks-module-cluster.plan.json",
        NSG_PLAN,
        "module.aks.azurerm_kubernetes_cluster.main added (written by this project in the Azure/aks module's shape: "
        "name and resource group known only after apply, Standard_D2s_v3 x3, network_profile without "
        "load_balancer_profile)",
        _json(_plus_aks_cluster("no-lb-profile", module="aks")),
    ),
    Probe(
        f"{NSG}--plus-aks-module-cluster-and-pool-by-reference.plan.json",
        NSG_PLAN,
        "the same module cluster and a root azurerm_kubernetes_cluster_node_pool whose kubernetes_cluster_id is "
        "module.aks.aks_id (unknown until apply)",
        _json(_plus_aks_cluster("no-lb-profile", module="aks", pool_by_reference=True)),
    ),
    Probe(
        f"{NSG}--plus-counted-aks-module-cluster.plan.json",
        NSG_PLAN,
        "the same module cluster with module.aks and its cluster called with count = 1: "
        "module.aks[0].azurerm_kubernetes_cluster.main[0]",
        _json(_plus_aks_cluster("no-lb-profile", module="aks", counted=True)),
    ),
    Probe(
        "tf-no-resource-changes.tf1.x--bare.plan.json",
        "tf-no-resource-changes.tf1.x.plan.json",
        'every key but "resource_changes" removed: the document {"resource_changes": []}',
        _json(_only_resource_changes),
    ),
    Probe(
        "tf-utf16.tf1.x--as-utf8.plan.json",
        "tf-utf16.tf1.x.plan.json",
        "re-encoded from UTF-16 LE (with BOM) to UTF-8",
        _utf16_to_utf8,
    ),
    Probe(
        "tf-wrapper-prefixed.tf1.0.11--prefix-removed.plan.json",
        "tf-wrapper-prefixed.tf1.0.11.plan.json",
        "the wrapper's leading [command] line removed",
        _drop_wrapper_line,
    ),
    Probe(
        "karpenter-aws-al2023-custom-userdata--backlog-16384.yaml",
        "karpenter-aws-al2023-custom-userdata.yaml",
        "the EC2NodeClass userData's shell part sets net.core.netdev_max_backlog=16384",
        _al2023_backlog,
    ),
    Probe(
        "karpenter-azure-perftest--node-class-backlog-4096.yaml",
        "karpenter-azure-perftest.yaml",
        "the AKSNodeClass sets spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog: 4096",
        _perftest_backlog,
    ),
    Probe(
        "karpenter-azure-perftest--sku-name-unpinned.yaml",
        "karpenter-azure-perftest.yaml",
        "both NodePools' karpenter.azure.com/sku-name requirement (Standard_D2s_v4) removed",
        _perftest_unpinned,
    ),
)

BY_NAME = {probe.name: probe for probe in PROBES}


def render(probe: Probe) -> bytes:
    source = (REAL / probe.source).read_bytes()
    out = probe.make(copy.copy(source))
    assert out != source, f"{probe.name}: the edit changed nothing"
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/real_probes.py OUTDIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for probe in PROBES:
        (out / probe.name).write_bytes(render(probe))
        print(f"{out / probe.name}: {probe.source} with {probe.edit}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Probes derived from the real files of tests/fixtures/real/: each is one real file with one named edit.

A probe isolates one case of issue 25 on a file nobody on this project wrote: the edit is the only difference
from the real bytes, so a verdict that changes between the real file and its probe is that edit's doing. The
edits are here, in code a review reads, rather than as committed copies of large files; to look at one:

    .venv/bin/python tests/real_probes.py OUTDIR      # writes every probe as OUTDIR/<probe name>

tests/test_real_corpus.py pins each probe's verdicts as it pins the real files'.
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


AZURERM = "registry.terraform.io/hashicorp/azurerm"


def _plus_aks_cluster(load_balancer_profile: bool) -> Callable[[Doc], None]:
    """Add one azurerm_kubernetes_cluster to a real azurerm plan, in the shape azurerm 3.x plans it.

    The real plan (Terraform 1.3.6, azurerm >= 3.36) supplies the envelope, the provider and the resource group the
    cluster refers to; the cluster is this edit. Without ``load_balancer_profile`` nobody writes network_profile:
    the plan then says ``after_unknown.network_profile: true`` (the block is Optional+Computed) while the
    configuration shows it unset, which is the case issue 25 found on every real AKS plan.
    """

    def change(doc: Doc) -> None:
        address = "azurerm_kubernetes_cluster.probe"
        pool = {
            "name": "system",
            "vm_size": "Standard_D4s_v5",
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
            "name": "aks-probe",
            "location": "canadacentral",
            "resource_group_name": "test",
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
            "name": {"constant_value": "aks-probe"},
            "dns_prefix": {"constant_value": "aksprobe"},
            "location": {"references": ["azurerm_resource_group.test.location", "azurerm_resource_group.test"]},
            "resource_group_name": {"references": ["azurerm_resource_group.test.name", "azurerm_resource_group.test"]},
            "default_node_pool": [
                {
                    "name": {"constant_value": "system"},
                    "vm_size": {"constant_value": "Standard_D4s_v5"},
                    "node_count": {"constant_value": 3},
                }
            ],
            "identity": [{"type": {"constant_value": "SystemAssigned"}}],
        }
        if load_balancer_profile:
            profile = {
                "managed_outbound_ip_count": 2,
                "outbound_ports_allocated": 4000,
                "idle_timeout_in_minutes": 30,
                "outbound_ip_address_ids": None,
                "outbound_ip_prefix_ids": None,
            }
            after["network_profile"] = [
                {
                    "network_plugin": "kubenet",
                    "load_balancer_sku": "standard",
                    "outbound_type": "loadBalancer",
                    "load_balancer_profile": [profile],
                }
            ]
            unknown["network_profile"] = [
                {
                    "load_balancer_profile": [{"effective_outbound_ips": True}],
                    "pod_cidr": True,
                    "service_cidr": True,
                    "dns_service_ip": True,
                }
            ]
            expressions["network_profile"] = [
                {
                    "network_plugin": {"constant_value": "kubenet"},
                    "load_balancer_sku": {"constant_value": "standard"},
                    "load_balancer_profile": [
                        {
                            "managed_outbound_ip_count": {"constant_value": 2},
                            "outbound_ports_allocated": {"constant_value": 4000},
                            "idle_timeout_in_minutes": {"constant_value": 30},
                        }
                    ],
                }
            ]
        else:
            unknown["network_profile"] = True
        sensitive = {
            "kube_config": True,
            "kube_config_raw": True,
            "kube_admin_config": True,
            "kube_admin_config_raw": True,
        }
        doc["resource_changes"].append(
            {
                "address": address,
                "mode": "managed",
                "type": "azurerm_kubernetes_cluster",
                "name": "probe",
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
        )
        doc["planned_values"]["root_module"]["resources"].append(
            {
                "address": address,
                "mode": "managed",
                "type": "azurerm_kubernetes_cluster",
                "name": "probe",
                "provider_name": AZURERM,
                "schema_version": 2,
                "values": after,
                "sensitive_values": sensitive,
            }
        )
        doc["configuration"]["root_module"]["resources"].append(
            {
                "address": address,
                "mode": "managed",
                "type": "azurerm_kubernetes_cluster",
                "name": "probe",
                "provider_config_key": "azurerm",
                "expressions": expressions,
                "schema_version": 2,
            }
        )

    return change


AZURE = "pulumi-azure-aks-basic-lb.cli3.129.stack.json"

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
        "tf-azurerm-nsg-no-aks.tf1.3.6--plus-aks-cluster-no-lb-profile.plan.json",
        "tf-azurerm-nsg-no-aks.tf1.3.6.plan.json",
        "one azurerm_kubernetes_cluster added (Standard_D4s_v5 x3) with no network_profile written: after_unknown "
        "network_profile true, configuration without it",
        _json(_plus_aks_cluster(load_balancer_profile=False)),
    ),
    Probe(
        "tf-azurerm-nsg-no-aks.tf1.3.6--plus-aks-cluster-with-lb-profile.plan.json",
        "tf-azurerm-nsg-no-aks.tf1.3.6.plan.json",
        "the same cluster with network_profile.load_balancer_profile {managed_outbound_ip_count 2, "
        "outbound_ports_allocated 4000} written",
        _json(_plus_aks_cluster(load_balancer_profile=True)),
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

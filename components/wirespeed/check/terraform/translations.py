"""Which Terraform types wirespeed reads, and each one's Pulumi type token, properties and field names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wirespeed.check.readonly import EMPTY, ReadOnlyMapping
from wirespeed.check.terraform.aws import (
    autoscaling_group,
    eks_cluster,
    eks_node_group,
    launch_configuration,
    launch_template,
    nat_gateway,
)
from wirespeed.check.terraform.azurerm import aks_cluster, aks_node_pool, public_ip_prefix
from wirespeed.check.terraform.blocks import Props, clean, known_text
from wirespeed.check.terraform.kubernetes import config_map, daemon_set, manifest_type
from wirespeed.rules import Resource
from wirespeed.rules._aks import AGENT_POOL, CLUSTER, PUBLIC_IP_PREFIX
from wirespeed.rules._k8s import CONFIG_MAP, DAEMON_SET
from wirespeed.rules._natgw import NAT_GATEWAY
from wirespeed.rules._node_pools import EKS_CLUSTER, NODE_GROUP
from wirespeed.rules._self_managed import AUTOSCALING_GROUP
from wirespeed.rules.netdev_backlog_minimum import LAUNCH_CONFIGURATION, LAUNCH_TEMPLATE
from wirespeed.values import at


def named(values: Any) -> Props:
    """A gateway the MTU rule only needs to know exists."""
    return clean({"name": at(values, "name")})


@dataclass(frozen=True)
class Translation:
    token: str
    props: Callable[[Any], Props]
    # Pulumi field names the rules' messages use -> the Terraform attribute, for the reports.
    fields: tuple[tuple[str, str], ...] = ()
    # Whole blocks a value unknown until apply can be (the rules name the block's path then) -> the Terraform block.
    blocks: tuple[tuple[str, str], ...] = ()


_LB = "network_profile.load_balancer_profile"
_SYSCTL = "linux_os_config.sysctl_config.net_core_netdev_max_backlog"
TRANSLATIONS: dict[str, Translation] = {
    "azurerm_kubernetes_cluster": Translation(
        CLUSTER,
        aks_cluster,
        (
            ("allocatedOutboundPorts", f"{_LB}.outbound_ports_allocated"),
            ("managedOutboundIPs.count", f"{_LB}.managed_outbound_ip_count"),
            ("outboundIPs.publicIPs", f"{_LB}.outbound_ip_address_ids"),
            ("outboundIPPrefixes", f"{_LB}.outbound_ip_prefix_ids"),
            ("agentPoolProfiles[0]", "default_node_pool"),
            ("netCoreNetdevMaxBacklog", f"default_node_pool.{_SYSCTL}"),
            ("vmSize", "default_node_pool.vm_size"),
            ("outboundType", "network_profile.outbound_type"),
        ),
        (
            ("networkProfile", "network_profile"),
            ("networkProfile.loadBalancerProfile", _LB),
            ("networkProfile.loadBalancerProfile.allocatedOutboundPorts", f"{_LB}.outbound_ports_allocated"),
            ("agentPoolProfiles", "default_node_pool"),
        ),
    ),
    "azurerm_kubernetes_cluster_node_pool": Translation(
        AGENT_POOL,
        aks_node_pool,
        (("netCoreNetdevMaxBacklog", _SYSCTL), ("vmSize", "vm_size")),
    ),
    "azurerm_public_ip_prefix": Translation(PUBLIC_IP_PREFIX, public_ip_prefix),
    "azurerm_nat_gateway": Translation("azure-native:network:NatGateway", named),
    "azurerm_virtual_network_gateway": Translation("azure-native:network:VirtualNetworkGateway", named),
    "azurerm_virtual_network_peering": Translation("azure-native:network:VirtualNetworkPeering", named),
    "aws_eks_cluster": Translation(EKS_CLUSTER, eks_cluster),
    "aws_eks_node_group": Translation(NODE_GROUP, eks_node_group, (("instanceTypes", "instance_types"),)),
    "aws_launch_template": Translation(
        LAUNCH_TEMPLATE,
        launch_template,
        (("userData", "user_data"), ("instanceType", "instance_type"), ("tags", "tags")),
    ),
    "aws_launch_configuration": Translation(
        LAUNCH_CONFIGURATION, launch_configuration, (("userData", "user_data"), ("instanceType", "instance_type"))
    ),
    "aws_autoscaling_group": Translation(
        AUTOSCALING_GROUP,
        autoscaling_group,
        (
            ("mixedInstancesPolicy.launchTemplate.overrides", "mixed_instances_policy.launch_template.override"),
            ("tags", "tag"),
        ),
    ),
    "aws_nat_gateway": Translation(
        NAT_GATEWAY,
        nat_gateway,
        (
            ("secondaryAllocationIds", "secondary_allocation_ids"),
            ("allocationId", "allocation_id"),
            ("availabilityZoneAddresses", "availability_zone_address (one block per AZ)"),
            ("allocationIds", "allocation_ids"),
        ),
    ),
    "aws_internet_gateway": Translation("aws:ec2/internetGateway:InternetGateway", named),
    "aws_egress_only_internet_gateway": Translation(
        "aws:ec2/egressOnlyInternetGateway:EgressOnlyInternetGateway", named
    ),
    "aws_vpn_gateway": Translation("aws:ec2/vpnGateway:VpnGateway", named),
    "aws_ec2_transit_gateway": Translation("aws:ec2transitgateway/transitGateway:TransitGateway", named),
    "aws_vpc_peering_connection": Translation("aws:ec2/vpcPeeringConnection:VpcPeeringConnection", named),
    "kubernetes_daemon_set_v1": Translation(DAEMON_SET, daemon_set),
    "kubernetes_daemonset": Translation(DAEMON_SET, daemon_set),
    "kubernetes_config_map": Translation(CONFIG_MAP, config_map),
    "kubernetes_config_map_v1": Translation(CONFIG_MAP, config_map),
}
KUBERNETES_MANIFEST = "kubernetes_manifest"  # KUBERNETES_DOCS/manifest: ``manifest`` is the object itself
# The fields the rules' messages name on Kubernetes objects, and where they sit in a kubernetes_manifest: the object
# is the ``manifest`` attribute as written, so every path is the same under it (the NodePool requirements of
# EKS Karpenter and AKS node auto-provisioning, the AKSNodeClass sysctls).
MANIFEST_FIELDS: tuple[tuple[str, str], ...] = (
    (
        "spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog",
        "manifest.spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog",
    ),
    ("requirements", "manifest.spec.template.spec.requirements"),
)

# Pools whose cluster is linked through configuration: attribute holding the reference, cluster type, and the
# property the rules link by (``_aks.PoolIndex``: resourceName; ``agent._Pools``: clusterName).
LINKS: dict[str, tuple[str, str, str]] = {
    "azurerm_kubernetes_cluster_node_pool": ("kubernetes_cluster_id", "azurerm_kubernetes_cluster", "resourceName"),
    "aws_eks_node_group": ("cluster_name", "aws_eks_cluster", "clusterName"),
    # "*": a reference anywhere in its configuration (a tag's key "kubernetes.io/cluster/${aws_eks_cluster.x.name}").
    "aws_autoscaling_group": ("*", "aws_eks_cluster", "clusterName"),
}
CLUSTER_NAMES = {"azurerm_kubernetes_cluster": "resourceName", "aws_eks_cluster": "name"}


def is_read(tf_type: str) -> bool:
    """Whether wirespeed translates this Terraform type (others are counted and dropped, their values unread)."""
    return tf_type in TRANSLATIONS or tf_type in LINKS or tf_type == KUBERNETES_MANIFEST


def translate(tf_type: str, address: str, values: Any) -> Resource:
    """One resource's values as the rules read it; a type wirespeed does not know keeps its Terraform type and
    no properties (counted, then dropped: no rule reads it)."""
    token: str | None = None
    props: Props | None = None
    if tf_type == KUBERNETES_MANIFEST:
        manifest = at(values, "manifest")
        token = manifest_type(manifest)
        props = manifest if token and isinstance(manifest, dict) else None
    elif tf_type in TRANSLATIONS:
        translation = TRANSLATIONS[tf_type]
        token, props = translation.token, translation.props(values)
    if token is None or props is None:
        return Resource(type=tf_type, name=address, urn=address, props=EMPTY)
    resource_id = known_text(at(values, "id"))
    view = ReadOnlyMapping(props)
    return Resource(type=token, name=address, urn=address, props=view, outputs=view, id=resource_id)

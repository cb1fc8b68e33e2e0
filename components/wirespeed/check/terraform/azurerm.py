"""azurerm resources as the Azure Native inputs the rules read (``AZURERM_DOCS``/<type>)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wirespeed.check.terraform.blocks import Props, clean, ids, known_text
from wirespeed.rules._aks import arm_segment
from wirespeed.values import UNKNOWN, at

AZURERM_DOCS = "https://registry.terraform.io/providers/hashicorp/azurerm/latest/docs/resources"


def arm_cluster(arm_id: Any) -> tuple[str | None, str | None]:
    """``(cluster name, resource group)`` from a ``.../resourceGroups/<rg>/.../managedClusters/<name>`` id."""
    text = known_text(arm_id)
    if not text:
        return None, None
    return arm_segment(text, "managedClusters"), arm_segment(text, "resourceGroups")


def aks_pool_profile(pool: Any, name: Any = None) -> Any:
    """A ``default_node_pool`` block or a node pool resource as an ARM agent pool profile
    (azurerm kubernetes_cluster ``default_node_pool`` / kubernetes_cluster_node_pool arguments)."""
    if pool == UNKNOWN:
        return UNKNOWN
    autoscale = at(pool, "auto_scaling_enabled")  # azurerm 4.x
    if autoscale is None:
        autoscale = at(pool, "enable_auto_scaling")  # azurerm 3.x
    return clean(
        {
            "name": at(pool, "name") if name is None else name,
            "vmSize": at(pool, "vm_size"),
            "count": at(pool, "node_count"),
            "enableAutoScaling": autoscale,
            "minCount": at(pool, "min_count"),
            "maxCount": at(pool, "max_count"),
            # azurerm `zones` (default_node_pool and kubernetes_cluster_node_pool): the pool's availability zones,
            # which the NAT gateway zone rule compares with a zonal gateway's one zone.
            "availabilityZones": at(pool, "zones"),
            "osType": at(pool, "os_type"),
            "tags": at(pool, "tags"),  # network-optimised-sku reads the written reason from them
            # The profile label the backlog gate names in its message; labels unknown until apply read as absent, so
            # they never turn a verdict into "could not be checked".
            "nodeLabels": labels if isinstance(labels := at(pool, "node_labels"), Mapping) else None,
            "upgradeSettings": {"maxSurge": at(pool, "upgrade_settings", "max_surge")},
            "linuxOSConfig": {
                "sysctls": {
                    "netCoreNetdevMaxBacklog": at(
                        pool, "linux_os_config", "sysctl_config", "net_core_netdev_max_backlog"
                    )
                }
            },
        }
    )


def _aks_network(network: Any) -> Any:
    if network == UNKNOWN:
        return UNKNOWN
    if network is None:
        return None
    balancer = at(network, "load_balancer_profile")
    nat = at(network, "nat_gateway_profile")
    return clean(
        {
            "networkPlugin": at(network, "network_plugin"),
            "outboundType": at(network, "outbound_type"),
            "loadBalancerSku": at(network, "load_balancer_sku"),
            "loadBalancerProfile": UNKNOWN
            if balancer == UNKNOWN
            else {
                "allocatedOutboundPorts": at(balancer, "outbound_ports_allocated"),
                "managedOutboundIPs": {"count": at(balancer, "managed_outbound_ip_count")},
                "outboundIPs": {"publicIPs": ids(at(balancer, "outbound_ip_address_ids"))},
                "outboundIPPrefixes": {"publicIPPrefixes": ids(at(balancer, "outbound_ip_prefix_ids"))},
                "idleTimeoutInMinutes": at(balancer, "idle_timeout_in_minutes"),
            },
            "natGatewayProfile": UNKNOWN
            if nat == UNKNOWN
            else {
                "managedOutboundIPProfile": {"count": at(nat, "managed_outbound_ip_count")},
                "idleTimeoutInMinutes": at(nat, "idle_timeout_in_minutes"),
            },
        }
    )


def aks_cluster(values: Any) -> Props:
    """azurerm_kubernetes_cluster (``AZURERM_DOCS``/kubernetes_cluster) as ManagedCluster inputs."""
    default_pool = at(values, "default_node_pool")
    profiles = UNKNOWN if default_pool == UNKNOWN else [aks_pool_profile(default_pool)] if default_pool else None
    return clean(
        {
            "resourceName": at(values, "name"),
            "resourceGroupName": at(values, "resource_group_name"),
            "location": at(values, "location"),
            "agentPoolProfiles": profiles,
            "networkProfile": _aks_network(at(values, "network_profile")),
        }
    )


def aks_node_pool(values: Any) -> Props:
    """azurerm_kubernetes_cluster_node_pool (``AZURERM_DOCS``/kubernetes_cluster_node_pool) as AgentPool inputs;
    ``resourceName`` (the cluster) from ``kubernetes_cluster_id`` when known (else linked later)."""
    cluster_id = at(values, "kubernetes_cluster_id")
    name, group = arm_cluster(cluster_id)
    props = aks_pool_profile(values, name=at(values, "name"))
    props["agentPoolName"] = props.get("name")
    props["resourceName"] = UNKNOWN if cluster_id == UNKNOWN else name
    props["resourceGroupName"] = group
    return clean(props)


def public_ip_prefix(values: Any) -> Props:
    """azurerm_public_ip_prefix (``AZURERM_DOCS``/public_ip_prefix): its length and id for the capacity rule."""
    return clean({"prefixLength": at(values, "prefix_length"), "id": at(values, "id")})

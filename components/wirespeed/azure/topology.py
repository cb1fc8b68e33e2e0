"""Where AKS puts the resources it manages for a cluster (pure string rules, no Pulumi)."""

from __future__ import annotations

import re

# learn.microsoft.com/azure/aks/load-balancer-standard: AKS names the cluster's Standard Load Balancer
# `kubernetes` and places it in the node resource group.
CLUSTER_LOAD_BALANCER_NAME = "kubernetes"

_SUBSCRIPTION = re.compile(r"^/subscriptions/([^/]+)/", re.IGNORECASE)


def subscription_of(resource_id: str) -> str:
    """The subscription ID in an ARM resource ID; ValueError when it has none."""
    found = _SUBSCRIPTION.match(resource_id)
    if not found:
        raise ValueError(f"resource ID {resource_id!r} does not start with /subscriptions/<id>/")
    return found.group(1)


def cluster_load_balancer_id(cluster_id: str, node_resource_group: str) -> str:
    """The ARM ID of the cluster's outbound load balancer (the SNAT metrics live on it)."""
    return (
        f"/subscriptions/{subscription_of(cluster_id)}/resourceGroups/{node_resource_group}"
        f"/providers/Microsoft.Network/loadBalancers/{CLUSTER_LOAD_BALANCER_NAME}"
    )

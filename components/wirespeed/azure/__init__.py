"""AKS building blocks: network-optimised node pools, node auto-provisioning pools and clusters with outbound sized
by wirespeed.

    from wirespeed.azure import NetworkOptimizedCluster, NetworkOptimizedClusterArgs, NodePoolSpec, OutboundSpec

The argument dataclasses (:mod:`wirespeed.azure.spec`) and their validation (:mod:`wirespeed.azure._validate`)
are pure; the Pulumi components (:mod:`wirespeed.azure.components`) load the Pulumi SDKs only when first used,
so ``import wirespeed.azure`` stays light for the CLI and the policy pack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from wirespeed.azure.spec import AutoProvisionedPoolSpec, ClusterSpec, NodePoolSpec, OutboundSpec, SnatAlertSpec

if TYPE_CHECKING:
    from wirespeed.azure.auto_provisioned import AutoProvisionedPool, AutoProvisionedPoolArgs
    from wirespeed.azure.components import (
        NetworkOptimizedCluster,
        NetworkOptimizedClusterArgs,
        NetworkOptimizedNodePool,
        NetworkOptimizedNodePoolArgs,
        outbound_profile,
    )

_AUTO_PROVISIONED = ("AutoProvisionedPool", "AutoProvisionedPoolArgs")
_COMPONENTS = (
    "NetworkOptimizedCluster",
    "NetworkOptimizedClusterArgs",
    "NetworkOptimizedNodePool",
    "NetworkOptimizedNodePoolArgs",
    "outbound_profile",
)

__all__ = [
    "AutoProvisionedPool",
    "AutoProvisionedPoolArgs",
    "AutoProvisionedPoolSpec",
    "ClusterSpec",
    "NetworkOptimizedCluster",
    "NetworkOptimizedClusterArgs",
    "NetworkOptimizedNodePool",
    "NetworkOptimizedNodePoolArgs",
    "NodePoolSpec",
    "OutboundSpec",
    "SnatAlertSpec",
    "outbound_profile",
]


def __getattr__(name: str) -> Any:
    if name in _AUTO_PROVISIONED:
        return getattr(importlib.import_module("wirespeed.azure.auto_provisioned"), name)
    if name in _COMPONENTS:
        return getattr(importlib.import_module("wirespeed.azure.components"), name)
    raise AttributeError(f"module 'wirespeed.azure' has no attribute {name!r}")

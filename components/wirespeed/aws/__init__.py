"""EKS node capacity and egress on AWS (pulumi-aws, pulumi-kubernetes).

Components: :class:`NetworkOptimizedNodeGroup` (managed node group + launch template), :class:`KarpenterNodePool`
(EC2NodeClass + NodePool) and :class:`NatEgress` (NAT gateways per AZ). Their decisions are pure functions in
``wirespeed.aws.capacity`` and ``wirespeed.aws.egress``, which import no Pulumi: importing this package loads the
Pulumi SDKs only when a component is first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from wirespeed.aws.capacity import Taint

if TYPE_CHECKING:
    from wirespeed.aws.karpenter_pool import KarpenterNodePool, KarpenterNodePoolArgs
    from wirespeed.aws.nat_egress import NatEgress, NatEgressArgs
    from wirespeed.aws.node_group import NetworkOptimizedNodeGroup, NetworkOptimizedNodeGroupArgs

_COMPONENTS = {
    "KarpenterNodePool": "wirespeed.aws.karpenter_pool",
    "KarpenterNodePoolArgs": "wirespeed.aws.karpenter_pool",
    "NatEgress": "wirespeed.aws.nat_egress",
    "NatEgressArgs": "wirespeed.aws.nat_egress",
    "NetworkOptimizedNodeGroup": "wirespeed.aws.node_group",
    "NetworkOptimizedNodeGroupArgs": "wirespeed.aws.node_group",
}

__all__ = [
    "KarpenterNodePool",
    "KarpenterNodePoolArgs",
    "NatEgress",
    "NatEgressArgs",
    "NetworkOptimizedNodeGroup",
    "NetworkOptimizedNodeGroupArgs",
    "Taint",
]


def __getattr__(name: str) -> Any:
    module = _COMPONENTS.get(name)
    if module is None:
        raise AttributeError(f"module 'wirespeed.aws' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

"""network-optimised-sku under its old module name: each rule is its own module now, named by its rule ID (see
docs/architecture.md). This module only re-exports the names it used to hold, so ``from wirespeed.rules.sku import
...`` keeps working."""

from __future__ import annotations

from wirespeed.rules._node_pools import NODE_GROUP, NODE_POOL_READS, NODE_POOL_TYPES
from wirespeed.rules.network_optimised_sku import (
    ASG_OVERRIDES,
    BANDWIDTH_LABEL,
    DEFAULT_MINIMUM_GBPS,
    EKS_DEFAULT_INSTANCE_TYPE,
    FAMILY_LABEL,
    INSTANCE_TYPE_LABEL,
    NETWORK_OPTIMISED_SKU,
    REASON_TAG,
    SOURCES,
    check_sku,
)

__all__ = [
    "ASG_OVERRIDES",
    "BANDWIDTH_LABEL",
    "DEFAULT_MINIMUM_GBPS",
    "EKS_DEFAULT_INSTANCE_TYPE",
    "FAMILY_LABEL",
    "INSTANCE_TYPE_LABEL",
    "NETWORK_OPTIMISED_SKU",
    "NODE_GROUP",
    "NODE_POOL_READS",
    "NODE_POOL_TYPES",
    "REASON_TAG",
    "SOURCES",
    "check_sku",
]

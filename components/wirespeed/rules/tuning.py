"""The kernel and NIC queue rules under their old home: netdev_max_backlog (AKS pools, EKS user data, tuning
profiles), RX rings and jumbo MTU in tuning profiles.

Each rule is its own module now, named by its rule ID: ``netdev_backlog_minimum``, ``nic_ring_minimum``,
``mtu_jumbo_path``; the line rate and the minimum it gives are ``_line_rate``'s, whether a resource runs on Azure is
``_azure``'s. This module only re-exports their public names, so ``from wirespeed.rules.tuning import ...`` keeps
working for the callers that still use it.
"""

from __future__ import annotations

from wirespeed.rules._azure import AZURE_PARENT_TYPES
from wirespeed.rules._line_rate import LINE_RATE_READ, LINE_RATE_SETTING, POOL_LINE_RATE_READS, Minimum, config_map_rate
from wirespeed.rules.mtu_jumbo_path import GATEWAYS, MTU_JUMBO_PATH, check_mtu_path
from wirespeed.rules.netdev_backlog_minimum import (
    AKS_BACKLOG_FIELD,
    AKS_BACKLOG_READ,
    AKS_SYSCTL_DOC,
    BACKLOG_EVIDENCE,
    BACKLOG_FLOOR,
    BACKLOG_MINIMUM,
    BACKLOG_SYSCTL,
    BACKLOG_WHY,
    DEFAULT_BACKLOG_FLOOR,
    EC2_NODE_CLASS_READS,
    EC2_NODE_CLASS_TYPES,
    ELASTIC_BACKLOG,
    LAUNCH_CONFIGURATION,
    LAUNCH_TEMPLATE,
    backlog_minimum,
    check_backlog,
    ec2_node_class_rate,
    node_class_rate,
    remediate_backlog,
)
from wirespeed.rules.nic_ring_minimum import (
    DEFAULT_RING_FLOOR,
    DIRECTIONS,
    ELASTIC_RINGS,
    RING_EVIDENCE,
    RING_FLOORS,
    RING_MINIMUM,
    RING_WHY,
    RingVerdict,
    check_rings,
    remediate_rings,
)

__all__ = [
    "AKS_BACKLOG_FIELD",
    "AKS_BACKLOG_READ",
    "AKS_SYSCTL_DOC",
    "AZURE_PARENT_TYPES",
    "BACKLOG_EVIDENCE",
    "BACKLOG_FLOOR",
    "BACKLOG_MINIMUM",
    "BACKLOG_SYSCTL",
    "BACKLOG_WHY",
    "DEFAULT_BACKLOG_FLOOR",
    "DEFAULT_RING_FLOOR",
    "DIRECTIONS",
    "EC2_NODE_CLASS_READS",
    "EC2_NODE_CLASS_TYPES",
    "ELASTIC_BACKLOG",
    "ELASTIC_RINGS",
    "GATEWAYS",
    "LAUNCH_CONFIGURATION",
    "LAUNCH_TEMPLATE",
    "LINE_RATE_READ",
    "LINE_RATE_SETTING",
    "MTU_JUMBO_PATH",
    "POOL_LINE_RATE_READS",
    "RING_EVIDENCE",
    "RING_FLOORS",
    "RING_MINIMUM",
    "RING_WHY",
    "Minimum",
    "RingVerdict",
    "backlog_minimum",
    "check_backlog",
    "check_mtu_path",
    "check_rings",
    "config_map_rate",
    "ec2_node_class_rate",
    "node_class_rate",
    "remediate_backlog",
    "remediate_rings",
]

"""The NAT gateway rules under their old home: each rule is its own module now, named by its rule ID (see
docs/architecture.md). This module only re-exports the names it used to hold, so ``from wirespeed.rules.natgw import
...`` keeps working."""

from __future__ import annotations

from wirespeed.rules._natgw import NAT_DOC, NAT_GATEWAY, PEAK, QUOTA_DOC, REGIONAL_READS, ZONAL_READS
from wirespeed.rules.aks_natgw_zone_redundant import NAT_GATEWAY_ZONE_REDUNDANT, check_nat_zone_redundancy
from wirespeed.rules.aws_natgw_capacity import NAT_GATEWAY_CAPACITY, check_nat_gateway
from wirespeed.rules.aws_natgw_eip_quota import NAT_GATEWAY_EIP_QUOTA, check_eip_quota

__all__ = [
    "NAT_DOC",
    "NAT_GATEWAY",
    "NAT_GATEWAY_CAPACITY",
    "NAT_GATEWAY_EIP_QUOTA",
    "NAT_GATEWAY_ZONE_REDUNDANT",
    "PEAK",
    "QUOTA_DOC",
    "REGIONAL_READS",
    "ZONAL_READS",
    "check_eip_quota",
    "check_nat_gateway",
    "check_nat_zone_redundancy",
]

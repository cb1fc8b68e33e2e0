# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""AWS NAT gateways: enough IPs for the configured peak to one destination (``aws-natgw-capacity``, both availability
modes), and the Elastic IP quota a zonal gateway's planned IPs need raised first (``aws-natgw-eip-quota``).

A zonal gateway's IPs are its ``allocationId`` plus ``secondaryAllocationIds`` (at most 8). A regional gateway
(``availabilityMode: regional``) has them per AZ in ``availabilityZoneAddresses`` (manual, at most 32 per AZ), or
none given at all (automatic: AWS adds IPs per AZ up to 32, so only a peak beyond 32 IPs fails). The quota is a
separate rule because a level belongs to a rule, not a finding: a gateway above the default quota is not wrong, it
needs a quota increase before it can be created, so that rule is advisory by default while capacity is mandatory.
"""

from __future__ import annotations

from typing import Any

from wirespeed.sizing.nat_gateway import REGIONAL
from wirespeed.values import elements, get, text

NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
NAT_DOC = "https://docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-basics.html"
QUOTA_DOC = "https://docs.aws.amazon.com/vpc/latest/userguide/amazon-vpc-limits.html#vpc-limits-eips"
PEAK = "peakConnectionsPerDestination"
# What both rules read to count a gateway's IPs; the capacity rule also reads a regional gateway's per-AZ addresses.
ZONAL_READS = ("connectivityType", "availabilityMode", "secondaryAllocationIds[]")
REGIONAL_READS = tuple(
    f"availabilityZoneAddresses[].{path}" for path in ("availabilityZone", "availabilityZoneId", "allocationIds[]")
)


def _public(props: Any) -> bool:
    return (text(get(props, "connectivityType")) or "public") == "public"


def _regional(props: Any) -> bool:
    return text(get(props, "availabilityMode")) == REGIONAL


def _zonal_ips(props: Any) -> tuple[int, int]:
    """(IPs, secondary IPs) of a zonal gateway: allocationId plus secondaryAllocationIds."""
    secondary = len(list(elements(get(props, "secondaryAllocationIds"), "secondaryAllocationIds")))
    return 1 + secondary, secondary

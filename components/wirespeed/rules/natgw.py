"""AWS NAT gateways: enough IPs for the configured peak to one destination (``aws-natgw-capacity``, both availability
modes), and the Elastic IP quota a zonal gateway's planned IPs need raised first (``aws-natgw-eip-quota``).

A zonal gateway's IPs are its ``allocationId`` plus ``secondaryAllocationIds`` (at most 8). A regional gateway
(``availabilityMode: regional``) has them per AZ in ``availabilityZoneAddresses`` (manual, at most 32 per AZ), or
none given at all (automatic: AWS adds IPs per AZ up to 32, so only a peak beyond 32 IPs fails). The quota is a
separate rule because a level belongs to a rule, not a finding: a gateway above the default quota is not wrong, it
needs a quota increase before it can be created, so that rule is advisory by default while capacity is mandatory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings
from wirespeed.sizing import plan_aws_nat_gateway
from wirespeed.sizing.errors import InfeasibleError
from wirespeed.sizing.nat_gateway import (
    AWS_CONNECTIONS_PER_IP,
    AWS_REGIONAL_MAX_IPS_PER_AZ,
    AWS_ZONAL_MAX_IPS,
    NAT_GATEWAY_EIPS,
    REGIONAL,
)
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


def _zone_ips(props: Any) -> list[tuple[str, int, int]] | None:
    """(AZ, IPs, index) per entry of a regional gateway's availabilityZoneAddresses; None in automatic mode."""
    addresses = list(elements(get(props, "availabilityZoneAddresses"), "availabilityZoneAddresses"))
    if not addresses:
        return None
    out = []
    for index, address in enumerate(addresses):
        where = f"availabilityZoneAddresses[{index}]"
        az = text(get(address, "availabilityZone")) or text(get(address, "availabilityZoneId")) or where
        out.append((az, len(list(elements(get(address, "allocationIds"), f"{where}.allocationIds"))), index))
    return out


def _shortfall(ips: int, demand: int, where: str) -> str:
    return (
        f"{ips} IP(s) ({where}) carry {ips * AWS_CONNECTIONS_PER_IP:,} simultaneous connections to one destination "
        f"(IP, port, protocol) at {AWS_CONNECTIONS_PER_IP:,} per IP, below the configured peak {demand:,} (policy "
        f"setting {PEAK})"
    )


def _check_regional(resource: Resource, demand: int) -> Iterator[Finding]:
    try:
        plan = plan_aws_nat_gateway(demand, REGIONAL)
    except InfeasibleError as exc:
        yield Finding(
            resource,
            f"No AZ of a regional NAT gateway carries the configured peak {demand:,} (policy setting {PEAK}): {exc}.",
        )
        return
    zones = _zone_ips(resource.props)  # read after the infeasibility check: an unknown list cannot hide that
    if zones is None:
        return  # automatic mode: AWS adds IPs in each AZ up to 32, which carry this peak
    short = [(az, ips, index) for az, ips, index in zones if ips < plan.ips]
    if not short:
        return
    parts = [
        f"{az}: {_shortfall(ips, demand, f'availabilityZoneAddresses[{index}].allocationIds')}; add "
        f"{plan.ips - ips} Elastic IP(s) ({plan.ips} in all)"
        for az, ips, index in short
    ]
    yield Finding(
        resource,
        "Regional NAT gateway, per AZ: " + "; ".join(parts) + ". New connections from those AZs fail with "
        f"ErrorPortAllocation (`wirespeed size aws-natgw --connections {demand} --mode regional`).",
    )


def check_nat_gateway(resource: Resource, settings: Settings) -> Iterator[Finding]:
    demand = int(settings[PEAK])
    props = resource.props
    if demand <= 0 or not _public(props):
        return  # no demand configured, or a private NAT gateway (no Elastic IPs to count)
    if _regional(props):
        yield from _check_regional(resource, demand)
        return
    ips, secondary = _zonal_ips(props)
    if demand <= ips * AWS_CONNECTIONS_PER_IP:
        return
    head = (
        _shortfall(ips, demand, f"allocationId + {secondary} secondaryAllocationIds")
        + ": new connections fail with ErrorPortAllocation."
    )
    try:
        plan = plan_aws_nat_gateway(demand)
    except InfeasibleError as exc:
        yield Finding(resource, f"{head} No zonal NAT gateway carries it: {exc}.")
        return
    warning = f" {plan.warnings[0]}" if plan.warnings else ""
    yield Finding(
        resource,
        f"{head} Add {plan.ips - ips} Elastic IP(s) to secondaryAllocationIds ({plan.ips} in all; "
        f"`wirespeed size aws-natgw --connections {demand}`).{warning}",
    )


NAT_GATEWAY_CAPACITY = Rule(
    id="aws-natgw-capacity",
    description="AWS NAT gateways (zonal, or each AZ of a regional one) have enough IPs for the configured peak "
    "connections to one destination.",
    severity="high",
    default_enforcement="mandatory",
    remediation=f"Add Elastic IPs: to a zonal gateway's secondaryAllocationIds (up to {AWS_ZONAL_MAX_IPS} IPs in "
    "all), or to the short AZ's availabilityZoneAddresses on a regional one (up to "
    f"{AWS_REGIONAL_MAX_IPS_PER_AZ} per AZ); or spread the calls over more destinations; "
    "`wirespeed size aws-natgw --connections N [--mode regional]`.",
    source=NAT_DOC,
    scope="resource",
    types=(NAT_GATEWAY,),
    config_schema={
        PEAK: {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Peak simultaneous connections through one zonal NAT gateway, or from one AZ through a "
            "regional one, to the busiest destination (IP, port, protocol); 0 turns the rule off.",
        }
    },
    reads=(Reads(NAT_GATEWAY, ZONAL_READS + REGIONAL_READS),),
    check=check_nat_gateway,
)


def check_eip_quota(resource: Resource, settings: Settings) -> Iterator[Finding]:
    quota = int(settings["accountQuota"])
    props = resource.props
    if not _public(props) or _regional(props):
        return  # the per-gateway quota is documented for zonal public gateways; a regional AZ takes up to 32
    ips, secondary = _zonal_ips(props)
    if ips <= quota:
        return
    default = " (AWS's default)" if quota == NAT_GATEWAY_EIPS.default else ""
    yield Finding(
        resource,
        f"{ips} Elastic IPs (allocationId + {secondary} secondaryAllocationIds) exceed the account's quota of "
        f"{quota}{default} per NAT gateway (policy setting accountQuota): creating it fails until "
        f"{NAT_GATEWAY_EIPS.label} is raised to {ips} (at most {NAT_GATEWAY_EIPS.ceiling}). Raise it first, then "
        "set accountQuota to the new value.",
    )


NAT_GATEWAY_EIP_QUOTA = Rule(
    id="aws-natgw-eip-quota",
    description="A zonal NAT gateway's Elastic IPs fit the account's 'Elastic IP addresses per public NAT gateway' "
    "quota.",
    severity="medium",
    default_enforcement="advisory",
    remediation=f"Request {NAT_GATEWAY_EIPS.label} (Service Quotas console or `aws service-quotas "
    f"request-service-quota-increase --service-code {NAT_GATEWAY_EIPS.service_code} --quota-code "
    f"{NAT_GATEWAY_EIPS.quota_code} --desired-value N`) before applying, then set accountQuota to the granted value.",
    source=QUOTA_DOC,
    scope="resource",
    types=(NAT_GATEWAY,),
    config_schema={
        "accountQuota": {
            "type": "integer",
            "minimum": 1,
            "maximum": AWS_ZONAL_MAX_IPS,
            "default": NAT_GATEWAY_EIPS.default,
            "description": "The account's 'Elastic IP addresses per public NAT gateway' quota (AWS's default is "
            f"{NAT_GATEWAY_EIPS.default}; Service Quotas {NAT_GATEWAY_EIPS.service_code} "
            f"{NAT_GATEWAY_EIPS.quota_code}).",
        }
    },
    reads=(Reads(NAT_GATEWAY, ZONAL_READS),),
    check=check_eip_quota,
)

"""aws-natgw-capacity: an AWS NAT gateway (zonal, or each AZ of a regional one) has enough IPs for the configured
peak connections to one destination."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings
from wirespeed.rules._natgw import (
    NAT_DOC,
    NAT_GATEWAY,
    PEAK,
    REGIONAL_READS,
    ZONAL_READS,
    _public,
    _regional,
    _zonal_ips,
)
from wirespeed.sizing import plan_aws_nat_gateway
from wirespeed.sizing.errors import InfeasibleError
from wirespeed.sizing.nat_gateway import (
    AWS_CONNECTIONS_PER_IP,
    AWS_REGIONAL_MAX_IPS_PER_AZ,
    AWS_ZONAL_MAX_IPS,
    REGIONAL,
)
from wirespeed.values import elements, get, text


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
    order=90,
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

RULE = NAT_GATEWAY_CAPACITY

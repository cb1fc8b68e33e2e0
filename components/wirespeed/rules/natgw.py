"""aws-natgw-capacity: an AWS NAT gateway has enough IPs for the configured peak connections to one destination."""

from __future__ import annotations

from collections.abc import Iterator

from wirespeed.rules._model import Finding, Resource, Rule, Settings
from wirespeed.sizing import plan_aws_nat_gateway
from wirespeed.sizing.errors import InfeasibleError
from wirespeed.sizing.nat_gateway import AWS_CONNECTIONS_PER_IP
from wirespeed.values import elements, get, text

NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
NAT_DOC = "https://docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-basics.html"


def check_nat_gateway(resource: Resource, settings: Settings) -> Iterator[Finding]:
    demand = int(settings["peakConnectionsPerDestination"])
    props = resource.props
    if demand <= 0 or (text(get(props, "connectivityType")) or "public") != "public":
        return  # no demand configured, or a private NAT gateway (no Elastic IPs to count)
    secondary = list(elements(get(props, "secondaryAllocationIds"), "secondaryAllocationIds"))
    ips = 1 + len(secondary)
    capacity = ips * AWS_CONNECTIONS_PER_IP
    if demand <= capacity:
        return
    head = (
        f"{ips} IP(s) (allocationId + {len(secondary)} secondaryAllocationIds) carry {capacity:,} simultaneous "
        f"connections to one destination (IP, port, protocol) at {AWS_CONNECTIONS_PER_IP:,} per IP, below the "
        f"configured peak {demand:,} (policy setting peakConnectionsPerDestination): new connections fail with "
        "ErrorPortAllocation."
    )
    try:
        plan = plan_aws_nat_gateway(demand)
    except InfeasibleError as exc:
        yield Finding(resource, f"{head} No single NAT gateway carries it: {exc}.")
        return
    warning = f" {plan.warnings[0]}" if plan.warnings else ""
    yield Finding(
        resource,
        f"{head} Add {plan.ips - ips} Elastic IP(s) to secondaryAllocationIds ({plan.ips} in all; "
        f"`wirespeed size aws-natgw --connections {demand}`).{warning}",
    )


NAT_GATEWAY_CAPACITY = Rule(
    id="aws-natgw-capacity",
    description="AWS NAT gateways have enough IPs for the configured peak connections to one destination.",
    severity="high",
    default_enforcement="mandatory",
    remediation="Add Elastic IPs to the NAT gateway's secondaryAllocationIds (up to 8 IPs in all), or spread the "
    "calls over more destinations or NAT gateways; `wirespeed size aws-natgw --connections N`.",
    source=NAT_DOC,
    scope="resource",
    types=(NAT_GATEWAY,),
    config_schema={
        "peakConnectionsPerDestination": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Peak simultaneous connections through one NAT gateway to its busiest destination "
            "(IP, port, protocol); 0 turns the rule off.",
        }
    },
    check=check_nat_gateway,
)

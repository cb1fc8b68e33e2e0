"""NAT gateway IP counts: Azure (AKS managedNATGateway) and AWS (per-AZ public NAT gateway)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wirespeed.sizing.errors import InfeasibleError, SizingError, check_whole

# learn.microsoft.com/azure/nat-gateway/nat-gateway-resource#scalability: 64,512 SNAT ports per public IP,
# up to 16 public IPs; ports are allocated on demand, not per node.
AZURE_PORTS_PER_IP = 64_512
AZURE_MAX_IPS = 16
# Same page, "Performance": up to 50,000 concurrent connections per public IP to the same destination endpoint
# (TCP and UDP), whatever the 64,512 ports per IP: the ceiling one busy destination reaches first.
AZURE_CONNECTIONS_PER_DESTINATION_PER_IP = 50_000
# AKS's NAT gateway profile (ManagedClusterNATGatewayProfile in the Microsoft.ContainerService API, 2025-09-01):
# idleTimeoutInMinutes "default": 4, within the same schema's "minimum" and "maximum"
# (azure_lb.OUTBOUND_IDLE_TIMEOUT_RANGE). That is the TCP idle timeout; the gateway's UDP timer is fixed (snat_limits).
AZURE_DEFAULT_IDLE_TIMEOUT = 4
# docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-basics.html: "Each IPv4 address can support up to 55,000
# simultaneous connections to each unique destination" (destination IP, port and protocol), and a NAT gateway takes
# "up to 8 IPv4 addresses ... (1 primary IPv4 address and 7 secondary IPv4 addresses)": the zonal gateway's limit.
AWS_CONNECTIONS_PER_IP = 55_000
AWS_ZONAL_MAX_IPS = 8
# docs.aws.amazon.com/vpc/latest/userguide/nat-gateways-regional.html ("Higher port and IP limits"): a regional NAT
# gateway supports "up to 32 IP addresses per Availability Zone", each adding 55,000 connections to one destination.
AWS_REGIONAL_MAX_IPS_PER_AZ = 32
# The EC2 API's AvailabilityMode enum (CreateNatGateway, NatGateway; botocore's EC2 service model): zonal is the
# default when the parameter is absent.
ZONAL = "zonal"
REGIONAL = "regional"
AVAILABILITY_MODES = (ZONAL, REGIONAL)


@dataclass(frozen=True)
class Quota:
    """An AWS account quota: its name in the VPC User Guide, its Service Quotas service and quota code (what a
    request for more names), the default and, where AWS documents one, the most an increase can grant."""

    name: str
    service_code: str
    quota_code: str
    default: int
    ceiling: int | None = None

    @property
    def label(self) -> str:
        return f"'{self.name}' (Service Quotas: {self.service_code} {self.quota_code})"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "service_code": self.service_code,
            "quota_code": self.quota_code,
            "default": self.default,
        }


# docs.aws.amazon.com/vpc/latest/userguide/amazon-vpc-limits.html ("Elastic IP addresses"): "Elastic IP addresses per
# public NAT gateway", default 2, adjustable ("You can request a quota increase up to 8"), Service Quotas vpc
# L-5F53652F (the table links console.aws.amazon.com/servicequotas/home/services/vpc/quotas/L-5F53652F); the EC2 API
# reference (AssociateNatGatewayAddress) says the same: "By default, you can associate up to 2 Elastic IP addresses
# per public NAT gateway".
NAT_GATEWAY_EIPS = Quota("Elastic IP addresses per public NAT gateway", "vpc", "L-5F53652F", 2, 8)
# Same page: "Elastic IP addresses per Region", default 5, adjustable, Service Quotas ec2 L-0263D0A3 (the console
# names it "EC2-VPC Elastic IPs"). Every Elastic IP a plan allocates counts against it.
REGION_EIPS = Quota("Elastic IP addresses per Region", "ec2", "L-0263D0A3", 5)
AWS_DEFAULT_EIP_QUOTA = NAT_GATEWAY_EIPS.default
# wirespeed's bound, not a cloud's: demand above a billion flows is a unit mistake.
MAX_DEMAND = 10**9


@dataclass(frozen=True)
class NatGatewayPlan:
    cloud: str
    demand: int
    ips: int
    capacity: int
    per_ip: int
    warnings: tuple[str, ...] = ()

    @property
    def headroom(self) -> int:
        return self.capacity - self.demand

    def to_json(self) -> dict[str, Any]:
        return {
            "cloud": self.cloud,
            "ips": self.ips,
            "demand": self.demand,
            "capacity": self.capacity,
            "per_ip": self.per_ip,
            "headroom": self.headroom,
            "warnings": list(self.warnings),
            # Set by `--from-prometheus` (wirespeed.sizing.measured): how the demand was measured.
            "measured": None,
        }

    def explain(self) -> str:
        unit = "concurrent flows" if self.cloud == "azure" else "connections to the busiest destination"
        lines = [
            f"{self.demand:,} {unit} / {self.per_ip:,} per IP -> {self.ips} IP(s), "
            f"{self.capacity:,} capacity ({self.headroom:,} spare)."
        ]
        lines.extend(self.warnings)
        return "\n".join(lines)


def _ips(demand: int, per_ip: int) -> int:
    return max(1, -(-demand // per_ip))


def plan_azure_nat_gateway(flows: int) -> NatGatewayPlan:
    """Public IPs an Azure NAT gateway needs for ``flows`` concurrent outbound flows (all nodes together)."""
    flows = check_whole("flows", flows, 1, MAX_DEMAND)
    ips = _ips(flows, AZURE_PORTS_PER_IP)
    if ips > AZURE_MAX_IPS:
        raise InfeasibleError(
            f"flows: {flows:,} required but {AZURE_MAX_IPS} IPs give at most {AZURE_MAX_IPS * AZURE_PORTS_PER_IP:,}",
            required=flows,
            available=AZURE_MAX_IPS * AZURE_PORTS_PER_IP,
            suggestion="split egress across subnets with their own NAT gateways, or reuse connections",
        )
    return NatGatewayPlan("azure", flows, ips, ips * AZURE_PORTS_PER_IP, AZURE_PORTS_PER_IP)


def check_mode(mode: object, field: str = "mode") -> str:
    if mode not in AVAILABILITY_MODES:
        raise SizingError(field, mode, " or ".join(repr(m) for m in AVAILABILITY_MODES))
    return str(mode)


def aws_max_ips(mode: str) -> int:
    """IPs one AZ's address translation can have: a zonal gateway's 8, or a regional gateway's 32 per AZ."""
    return AWS_ZONAL_MAX_IPS if mode == ZONAL else AWS_REGIONAL_MAX_IPS_PER_AZ


def quota_warning(ips: int) -> str:
    """What a zonal gateway with ``ips`` Elastic IPs needs first when that is above the per-gateway default."""
    return (
        f"Warning: {ips} IPs exceed the default quota of {NAT_GATEWAY_EIPS.default} Elastic IPs per NAT gateway; "
        f"raise {NAT_GATEWAY_EIPS.label} to {ips} first."
    )


def plan_aws_nat_gateway(connections: int, mode: str = ZONAL) -> NatGatewayPlan:
    """IPs one AZ needs for its peak concurrent connections to its busiest destination: a zonal gateway (at most 8
    IPs, a warning above the default quota of 2) or one AZ of a regional gateway (at most 32)."""
    mode = check_mode(mode)
    connections = check_whole("connections", connections, 1, MAX_DEMAND)
    ips = _ips(connections, AWS_CONNECTIONS_PER_IP)
    most = aws_max_ips(mode)
    if ips > most:
        where = f"{most} IPs" if mode == ZONAL else f"{most} IPs per AZ of a regional gateway"
        raise InfeasibleError(
            f"connections: {connections:,} required but {where} give at most {most * AWS_CONNECTIONS_PER_IP:,} to "
            "one destination",
            required=connections,
            available=most * AWS_CONNECTIONS_PER_IP,
            suggestion=(
                f"use a regional NAT gateway (up to {AWS_REGIONAL_MAX_IPS_PER_AZ} IPs per AZ) or spread calls over "
                "more destination IPs"
                if mode == ZONAL
                else "spread calls over more destination IPs (each IP, port and protocol counts on its own)"
            ),
        )
    warnings = (quota_warning(ips),) if mode == ZONAL and ips > NAT_GATEWAY_EIPS.default else ()
    return NatGatewayPlan("aws", connections, ips, ips * AWS_CONNECTIONS_PER_IP, AWS_CONNECTIONS_PER_IP, warnings)

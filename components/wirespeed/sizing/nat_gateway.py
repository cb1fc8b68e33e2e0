"""NAT gateway IP counts: Azure (AKS managedNATGateway) and AWS (per-AZ public NAT gateway)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wirespeed.sizing.errors import InfeasibleError, SizingError, check_whole

# learn.microsoft.com/azure/nat-gateway/nat-gateway-resource#snat-ports: "Each public IP address for a NAT gateway
# provides 64,512 SNAT ports", for both SKUs (the page describes StandardV2 and Standard together; read in
# MicrosoftDocs/azure-docs articles/nat-gateway/nat-gateway-resource.md, ms.date 11/04/2025). Up to 16 IPv4 public IPs
# per gateway for either SKU: learn.microsoft.com/azure/nat-gateway/nat-sku ("Public IP addresses | 16 IPv4 addresses
# | 16 IPv4 addresses, 16 IPv6 addresses"; MicrosoftDocs/azure-docs articles/nat-gateway/nat-sku.md at commit
# 0b8729eaf7eb0aabc6390cb17348d19761285f12, ms.date 07/27/2026). Ports are allocated on demand, not per node.
AZURE_PORTS_PER_IP = 64_512
AZURE_MAX_IPS = 16
# nat-gateway-resource#performance: "Standard and StandardV2 NAT gateways each support up to 50,000 concurrent
# connections per public IP address to the same destination endpoint" (TCP and UDP), whatever the 64,512 ports per
# IP: the ceiling one busy destination reaches first (nat-sku's table: "Connections per IP per destination | 50,000 |
# 50,000").
AZURE_CONNECTIONS_PER_DESTINATION_PER_IP = 50_000
# AKS's NAT gateway profile (ManagedClusterNATGatewayProfile in the Microsoft.ContainerService API, 2025-09-01):
# idleTimeoutInMinutes "default": 4, within the same schema's "minimum" and "maximum"
# (azure_lb.OUTBOUND_IDLE_TIMEOUT_RANGE). That is the TCP idle timeout; the gateway's UDP timer is fixed (snat_limits).
AZURE_DEFAULT_IDLE_TIMEOUT = 4
# The SKU names of Microsoft.Network natGateways' sku.name and of AKS's networkProfile.natGatewayProfile.sku
# (ManagedClusterNATGatewaySku: "Standard", "StandardV2"; Azure/azure-rest-api-specs
# specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable/2026-06-01/managedClusters.json
# at commit 079dcbac5a6ec3c3585067160dc21e2a0baf6824).
AZURE_STANDARD = "Standard"
AZURE_STANDARD_V2 = "StandardV2"


@dataclass(frozen=True)
class AzureNatSku:
    """What one Azure NAT gateway SKU gives, each field from Microsoft's documentation (cited where built)."""

    name: str
    ports_per_ip: int
    max_ipv4: int
    connections_per_destination_per_ip: int
    zone_redundant: bool  # True: spans the region's zones; False: one zone (zonal or Azure-picked "no zone")
    gbps: int  # per gateway
    packets_per_second: int  # per gateway
    public_ip_sku: str  # the only public IP / prefix SKU the gateway takes

    def facts(self) -> str:
        """One line: zones, throughput and public IPs, for ``size azure-natgw`` and plan output."""
        zones = "zone-redundant" if self.zone_redundant else "zonal (one availability zone)"
        return (
            f"{self.name} NAT gateway: {zones}, up to {self.gbps} Gbps and {self.packets_per_second:,} packets/s; "
            f"{self.public_ip_sku} public IPs or prefixes only."
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "zone_redundant": self.zone_redundant,
            "gbps": self.gbps,
            "packets_per_second": self.packets_per_second,
            "public_ip_sku": self.public_ip_sku,
        }


AZURE_NAT_SKUS: dict[str, AzureNatSku] = {
    # nat-sku.md (commit above), "Standard SKU features": "The Standard SKU is a zonal resource. It's deployed into a
    # specific availability zone and is resilient within that zone"; table: "Bandwidth | 50 Gbps per NAT gateway",
    # "Packets per second | 5 million packets per second". nat-gateway-resource#limitations: "Basic public IPs aren't
    # compatible with Standard NAT gateways. Use Standard public IPs instead."
    AZURE_STANDARD: AzureNatSku(
        AZURE_STANDARD,
        AZURE_PORTS_PER_IP,
        AZURE_MAX_IPS,
        AZURE_CONNECTIONS_PER_DESTINATION_PER_IP,
        zone_redundant=False,
        gbps=50,
        packets_per_second=5_000_000,
        public_ip_sku="Standard",
    ),
    # nat-sku.md, "Zone redundancy": "A StandardV2 NAT gateway is zone redundant by default. It automatically spans
    # multiple availability zones in a region"; "Performance": "up to 100 Gbps of bandwidth and can process up to 10
    # million packets per second" (1 Gbps and 100,000 packets/s per connection); "Known limitations": "The StandardV2
    # SKU requires StandardV2 public IP addresses and prefixes. Standard public IPs aren't supported." Microsoft's
    # reliability guide (learn.microsoft.com/azure/reliability/reliability-nat-gateway) recommends it for production.
    AZURE_STANDARD_V2: AzureNatSku(
        AZURE_STANDARD_V2,
        AZURE_PORTS_PER_IP,
        AZURE_MAX_IPS,
        AZURE_CONNECTIONS_PER_DESTINATION_PER_IP,
        zone_redundant=True,
        gbps=100,
        packets_per_second=10_000_000,
        public_ip_sku="StandardV2",
    ),
}
AZURE_NAT_SKU_NAMES = tuple(AZURE_NAT_SKUS)


def azure_nat_sku(name: object, field: str = "sku") -> AzureNatSku:
    """The SKU called ``name``; SizingError naming the field, the value and the SKUs there are otherwise."""
    if not isinstance(name, str) or name not in AZURE_NAT_SKUS:
        raise SizingError(field, name, " or ".join(repr(n) for n in AZURE_NAT_SKU_NAMES))
    return AZURE_NAT_SKUS[name]


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
    sku: AzureNatSku | None = None  # Azure's; None for AWS

    @property
    def headroom(self) -> int:
        return self.capacity - self.demand

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
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
        if self.sku is not None:  # Azure's gateway: the SKU's zones, throughput and public IP SKU
            out["sku"] = self.sku.to_json()
        return out

    def explain(self) -> str:
        unit = "concurrent flows" if self.cloud == "azure" else "connections to the busiest destination"
        lines = [
            f"{self.demand:,} {unit} / {self.per_ip:,} per IP -> {self.ips} IP(s), "
            f"{self.capacity:,} capacity ({self.headroom:,} spare)."
        ]
        if self.sku is not None:
            lines.append(self.sku.facts())
        lines.extend(self.warnings)
        return "\n".join(lines)


def _ips(demand: int, per_ip: int) -> int:
    return max(1, -(-demand // per_ip))


def plan_azure_nat_gateway(flows: int, sku: str = AZURE_STANDARD) -> NatGatewayPlan:
    """Public IPs an Azure NAT gateway of ``sku`` needs for ``flows`` concurrent outbound flows (all nodes together)."""
    chosen = azure_nat_sku(sku)
    flows = check_whole("flows", flows, 1, MAX_DEMAND)
    ips = _ips(flows, chosen.ports_per_ip)
    most = chosen.max_ipv4
    if ips > most:
        raise InfeasibleError(
            f"flows: {flows:,} required but {most} IPs give at most {most * chosen.ports_per_ip:,}",
            required=flows,
            available=most * chosen.ports_per_ip,
            suggestion="split egress across subnets with their own NAT gateways, or reuse connections",
        )
    return NatGatewayPlan("azure", flows, ips, ips * chosen.ports_per_ip, chosen.ports_per_ip, sku=chosen)


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

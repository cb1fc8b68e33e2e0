"""NAT gateway IP counts: Azure (AKS managedNATGateway) and AWS (per-AZ public NAT gateway)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wirespeed.sizing.errors import InfeasibleError, check_whole

# learn.microsoft.com/azure/nat-gateway/nat-gateway-resource#scalability: 64,512 SNAT ports per public IP,
# up to 16 public IPs; ports are allocated on demand, not per node.
AZURE_PORTS_PER_IP = 64_512
AZURE_MAX_IPS = 16
# Same page, "Performance": up to 50,000 concurrent connections per public IP to the same destination endpoint
# (TCP and UDP), whatever the 64,512 ports per IP: the ceiling one busy destination reaches first.
AZURE_CONNECTIONS_PER_DESTINATION_PER_IP = 50_000
# docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-basics.html: 55,000 simultaneous connections to each
# unique destination (IP, port, protocol) per IP; 1 primary + up to 7 secondary IPs.
AWS_CONNECTIONS_PER_IP = 55_000
AWS_MAX_IPS = 8
# docs.aws.amazon.com/vpc/latest/userguide/amazon-vpc-limits.html: "Elastic IP addresses per public NAT
# gateway" quota defaults to 2 (adjustable up to 8).
AWS_DEFAULT_EIP_QUOTA = 2
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


def plan_aws_nat_gateway(connections: int) -> NatGatewayPlan:
    """IPs one AWS NAT gateway (one AZ) needs for peak concurrent connections to its busiest destination."""
    connections = check_whole("connections", connections, 1, MAX_DEMAND)
    ips = _ips(connections, AWS_CONNECTIONS_PER_IP)
    if ips > AWS_MAX_IPS:
        raise InfeasibleError(
            f"connections: {connections:,} required but {AWS_MAX_IPS} IPs give at most "
            f"{AWS_MAX_IPS * AWS_CONNECTIONS_PER_IP:,} to one destination",
            required=connections,
            available=AWS_MAX_IPS * AWS_CONNECTIONS_PER_IP,
            suggestion="add NAT gateways (one per AZ) or spread calls over more destination IPs",
        )
    warnings: tuple[str, ...] = ()
    if ips > AWS_DEFAULT_EIP_QUOTA:
        warnings = (
            f"Warning: {ips} IPs exceed the default quota of {AWS_DEFAULT_EIP_QUOTA} Elastic IPs per NAT gateway; "
            "request an increase (Service Quotas, 'Elastic IP addresses per public NAT gateway') first.",
        )
    return NatGatewayPlan("aws", connections, ips, ips * AWS_CONNECTIONS_PER_IP, AWS_CONNECTIONS_PER_IP, warnings)

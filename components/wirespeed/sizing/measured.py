"""NAT gateways sized from what the fleet did: peaks of ports in use the node agents counted, summed over the nodes
behind one gateway (``wirespeed size azure-natgw --from-prometheus URL``, and aws-natgw). Pure.

An Azure NAT gateway serves a whole subnet: every node's flows share its IPs. Two limits apply per public IP
(wirespeed.sizing.nat_gateway): AZURE_PORTS_PER_IP SNAT ports, and AZURE_CONNECTIONS_PER_DESTINATION_PER_IP
concurrent connections to one destination endpoint.
The measured peaks give both demands (all flows through the gateway, and the busiest single destination), each
with headroom on top; the IP count is the larger of the two needs.

An AWS NAT gateway serves one AZ, and its one limit is AWS_CONNECTIONS_PER_IP concurrent connections per IP to one
destination (IP, port, protocol). So each AZ is sized on its own, from its busiest destination summed over the AZ's
nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from wirespeed.sizing import nat_gateway
from wirespeed.sizing.azure_lb import DEFAULT_HEADROOM, HEADROOM_RANGE, check_source
from wirespeed.sizing.errors import InfeasibleError, SizingError, check_whole
from wirespeed.sizing.exact import Number, ceil_div, check_decimal, decimal_text, exact
from wirespeed.sizing.nat_gateway import NatGatewayPlan, plan_aws_nat_gateway

# wirespeed's bound, as for every other demand: above a billion flows is a unit mistake.
MAX_DEMAND = nat_gateway.MAX_DEMAND


def headroom_text(headroom: Number) -> str:
    """``1.25`` as ``25%``: how the plans word headroom."""
    return f"{decimal_text((exact(headroom) - 1) * 100)}%"


def _plain(value: Fraction) -> int | float:
    return int(value) if value.denominator == 1 else float(value)


def with_headroom(value: int, headroom: Number) -> int:
    """``value`` x ``headroom``, rounded up to a whole flow."""
    scaled = value * exact(headroom)
    return ceil_div(scaled.numerator, scaled.denominator)


@dataclass(frozen=True)
class AzureNatDemand:
    """Measured peaks through one Azure NAT gateway: every flow, and the flows to the busiest destination."""

    flows: int
    destination_flows: int
    busiest_destination: str
    source: str
    headroom: Number = DEFAULT_HEADROOM

    def __post_init__(self) -> None:
        object.__setattr__(self, "flows", check_whole("flows", self.flows, 1, MAX_DEMAND))
        object.__setattr__(
            self, "destination_flows", check_whole("destination_flows", self.destination_flows, 1, self.flows)
        )
        object.__setattr__(self, "source", check_source("measured_from", self.source))
        check_decimal("headroom", self.headroom, *HEADROOM_RANGE)


@dataclass(frozen=True)
class AzureNatMeasuredPlan:
    demand: AzureNatDemand
    ips_for_ports: int
    ips_for_destination: int
    sku: nat_gateway.AzureNatSku = nat_gateway.AZURE_NAT_SKUS[nat_gateway.AZURE_STANDARD]

    @property
    def ips(self) -> int:
        return max(self.ips_for_ports, self.ips_for_destination)

    @property
    def binding(self) -> str:
        """Which limit decides the IP count: ``ports`` (per IP, nat_gateway.AZURE_PORTS_PER_IP) or ``destination``
        (per IP, nat_gateway.AZURE_CONNECTIONS_PER_DESTINATION_PER_IP)."""
        return "destination" if self.ips_for_destination > self.ips_for_ports else "ports"

    @property
    def per_ip(self) -> int:
        if self.binding == "destination":
            return self.sku.connections_per_destination_per_ip
        return self.sku.ports_per_ip

    @property
    def demand_with_headroom(self) -> int:
        d = self.demand
        return with_headroom(d.destination_flows if self.binding == "destination" else d.flows, d.headroom)

    def to_json(self) -> dict[str, Any]:
        """The keys of ``size azure-natgw --json`` (the binding limit's demand and capacity), and ``measured``."""
        d = self.demand
        capacity = self.ips * self.per_ip
        return {
            "cloud": "azure",
            "ips": self.ips,
            "demand": self.demand_with_headroom,
            "capacity": capacity,
            "per_ip": self.per_ip,
            "headroom": capacity - self.demand_with_headroom,
            "warnings": [],
            "measured": {
                "binding": self.binding,
                "flows": d.flows,
                "ips_for_flows": self.ips_for_ports,
                "busiest_destination": d.busiest_destination,
                "destination_flows": d.destination_flows,
                "ips_for_destination": self.ips_for_destination,
                "headroom_percent": _plain((exact(d.headroom) - 1) * 100),
                "source": d.source,
            },
            "sku": self.sku.to_json(),
        }

    def explain(self) -> str:
        d = self.demand
        room = headroom_text(d.headroom)
        flows = with_headroom(d.flows, d.headroom)
        to_one = with_headroom(d.destination_flows, d.headroom)
        per_dest = self.sku.connections_per_destination_per_ip
        decided = "the busiest destination decides" if self.binding == "destination" else "the port total decides"
        return "\n".join(
            [
                f"All flows: a measured peak of {d.flows:,} + {room} headroom = {flows:,} / "
                f"{self.sku.ports_per_ip:,} ports per IP -> {self.ips_for_ports} IP(s).",
                f"Busiest destination {d.busiest_destination}: a measured peak of {d.destination_flows:,} + {room} "
                f"headroom = {to_one:,} / {per_dest:,} connections per IP to one destination -> "
                f"{self.ips_for_destination} IP(s).",
                f"NAT gateway IPs: {self.ips} ({decided}; measured: {d.source}).",
                self.sku.facts(),
            ]
        )


def plan_azure_nat_measured(demand: AzureNatDemand, sku: str = nat_gateway.AZURE_STANDARD) -> AzureNatMeasuredPlan:
    """Public IPs an Azure NAT gateway of ``sku`` needs for the measured peaks plus headroom; :class:`InfeasibleError`
    when even its most IPs (the SKU's ``max_ipv4``) cannot carry them."""
    chosen = nat_gateway.azure_nat_sku(sku)
    flows = with_headroom(demand.flows, demand.headroom)
    to_one = with_headroom(demand.destination_flows, demand.headroom)
    per_dest = chosen.connections_per_destination_per_ip
    plan = AzureNatMeasuredPlan(
        demand,
        max(1, ceil_div(flows, chosen.ports_per_ip)),
        max(1, ceil_div(to_one, per_dest)),
        chosen,
    )
    most = chosen.max_ipv4
    if plan.ips > most:
        if plan.binding == "destination":
            raise InfeasibleError(
                f"destination flows: {to_one:,} to {demand.busiest_destination} required but {most} IPs give at most "
                f"{most * per_dest:,} to one destination",
                required=to_one,
                available=most * per_dest,
                suggestion="spread the calls over more destination IPs, or split egress across subnets with their own "
                "NAT gateways",
            )
        raise InfeasibleError(
            f"flows: {flows:,} required but {most} IPs give at most {most * chosen.ports_per_ip:,}",
            required=flows,
            available=most * chosen.ports_per_ip,
            suggestion="split egress across subnets with their own NAT gateways, or reuse connections",
        )
    return plan


# ---------------------------------------------------------------------- AWS: one gateway per AZ
@dataclass(frozen=True)
class AwsZoneDemand:
    """One AZ's measured peak: connections to its busiest destination, summed over the AZ's nodes.

    ``destination`` is None when the figure is the conservative fallback (every node's own peak, each to its own
    busiest destination at its own moment, summed): never below the real per-destination sum.
    """

    zone: str
    connections: int
    destination: str | None
    source: str
    headroom: Number = DEFAULT_HEADROOM

    def __post_init__(self) -> None:
        object.__setattr__(self, "connections", check_whole("connections", self.connections, 1, MAX_DEMAND))
        object.__setattr__(self, "source", check_source("measured_from", self.source))
        check_decimal("headroom", self.headroom, *HEADROOM_RANGE)


@dataclass(frozen=True)
class AwsZoneMeasuredPlan:
    demand: AwsZoneDemand
    plan: NatGatewayPlan

    def to_json(self) -> dict[str, Any]:
        """The keys of one zone of ``NatEgress.plan`` (as ``size aws-natgw --json`` gives them), ``measured`` set."""
        d = self.demand
        data = {"availability_zone": d.zone} | self.plan.to_json()
        data["measured"] = {
            "connections": d.connections,
            "busiest_destination": d.destination,
            "fallback": d.destination is None,
            "headroom_percent": _plain((exact(d.headroom) - 1) * 100),
            "source": d.source,
        }
        return data

    def explain(self) -> str:
        d, plan = self.demand, self.plan
        to = f"to {d.destination}" if d.destination else "to each node's busiest destination (fallback, summed)"
        lines = [
            f"{d.zone or '(no zone label)'}: a measured peak of {d.connections:,} connections {to} + "
            f"{headroom_text(d.headroom)} headroom = {plan.demand:,} / {plan.per_ip:,} per IP to one destination -> "
            f"{plan.ips} IP(s), {plan.capacity:,} capacity ({plan.headroom:,} spare)."
        ]
        lines += [f"  {w}" for w in plan.warnings]
        return "\n".join(lines)


def plan_aws_nat_measured(demands: list[AwsZoneDemand], mode: str = nat_gateway.ZONAL) -> list[AwsZoneMeasuredPlan]:
    """Elastic IPs per AZ for its measured peak plus headroom (``mode``: a zonal gateway per AZ, or one regional
    gateway's addresses in each AZ); one :class:`InfeasibleError` naming every AZ the mode's IPs cannot carry."""
    mode = nat_gateway.check_mode(mode)
    plans, short = [], []
    for demand in demands:
        needed = with_headroom(demand.connections, demand.headroom)
        try:
            plans.append(AwsZoneMeasuredPlan(demand, plan_aws_nat_gateway(needed, mode)))
        except (InfeasibleError, SizingError):  # SizingError: the headroom took the figure past MAX_DEMAND
            short.append((demand, needed))
    if short:
        ips = nat_gateway.aws_max_ips(mode)
        where = f"{ips} IPs" if mode == nat_gateway.ZONAL else f"{ips} IPs per AZ of a regional gateway"
        most = ips * nat_gateway.AWS_CONNECTIONS_PER_IP
        zones = "; ".join(
            f"{d.zone or '(no zone label)'} {needed:,}{f' to {d.destination}' if d.destination else ''}"
            for d, needed in short
        )
        raise InfeasibleError(
            f"connections: {zones} required but {where} give at most {most:,} to one destination",
            required=max(needed for _, needed in short),
            available=most,
            suggestion="spread the calls over more destination IPs"
            + (
                f", or use a regional NAT gateway (up to {nat_gateway.AWS_REGIONAL_MAX_IPS_PER_AZ} IPs per AZ)"
                if mode == nat_gateway.ZONAL
                else ""
            ),
        )
    return plans

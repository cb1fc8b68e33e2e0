"""Azure Standard Load Balancer outbound SNAT for AKS (``networkProfile.loadBalancerProfile``).

AKS rejects a profile unless ``allocatedOutboundPorts x (sum of maxCount + maxSurge nodes) <= 64,000 x outbound
IPs`` (learn.microsoft.com/azure/aks/configure-load-balancer-standard, "Configure the allocated outbound ports").
Leaving ``allocatedOutboundPorts`` at 0 lets Azure pick ports by backend pool size, which silently halves every
node's ports when the pool crosses 50, 100, 200... nodes. This module picks an explicit value instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wirespeed.sizing.errors import InfeasibleError, SizingError, check_range, check_whole

# learn.microsoft.com/azure/load-balancer/outbound-rules#scale: 64,000 SNAT ports per frontend public IP.
PORTS_PER_IP = 64_000
# learn.microsoft.com/azure/aks/configure-load-balancer-standard: managedOutboundIPs.count 1..100.
MAX_OUTBOUND_IPS = 100
# Same page: allocatedOutboundPorts 0..64,000 in multiples of 8.
MAX_PORTS_PER_NODE = 64_000
PORT_GRANULARITY = 8
# learn.microsoft.com/azure/aks/quotas-skus-regions: at most 1,000 nodes per node pool.
MAX_POOL_NODES = 1_000
# learn.microsoft.com/azure/aks/upgrade-aks-cluster#customize-node-surge-upgrade: API default maxSurge 10%,
# a percentage is of the pool's node count and rounds up to a whole node.
DEFAULT_SURGE_PERCENT = 10.0
# Seed 004 (ASOS) and the load balancer docs: a SNAT port to the same destination is reusable only after the
# connection closes plus a 4-minute cooldown, so by default a port is held ~240 s per new connection.
DEFAULT_HOLD_SECONDS = 240.0
# Our choice: Little's law gives the mean ports in use at the peak rate; 25% covers rate bursts inside the
# hold window without doubling IP spend.
DEFAULT_HEADROOM = 1.25

# learn.microsoft.com/azure/load-balancer/load-balancer-outbound-connections, "Default port allocation":
# (largest backend pool size of the bracket, ports per instance when allocatedOutboundPorts is 0).
DYNAMIC_DEFAULT_TABLE: tuple[tuple[int, int], ...] = (
    (50, 1_024),
    (100, 512),
    (200, 256),
    (400, 128),
    (800, 64),
    (1_000, 32),
)


def dynamic_default_ports(nodes: int) -> int:
    """Ports per node Azure allocates when ``allocatedOutboundPorts`` is 0, for a backend pool of ``nodes``."""
    check_whole("nodes", nodes, 1, DYNAMIC_DEFAULT_TABLE[-1][0])
    for upper, ports in DYNAMIC_DEFAULT_TABLE:
        if nodes <= upper:
            return ports
    raise AssertionError("unreachable: the table covers 1..1,000")


def next_halving_node_count(nodes: int) -> int | None:
    """The backend pool size at which the dynamic default next drops (e.g. 51 for 1..50), or None."""
    for upper, _ in DYNAMIC_DEFAULT_TABLE:
        if nodes <= upper:
            return upper + 1 if upper < DYNAMIC_DEFAULT_TABLE[-1][0] else None
    return None


@dataclass(frozen=True)
class Pool:
    """One node pool as the capacity rule counts it.

    ``max_surge`` is a node count, or a percent of ``max_count`` when ``surge_is_percent`` (AKS rounds up).
    """

    max_count: int
    max_surge: float = DEFAULT_SURGE_PERCENT
    surge_is_percent: bool = True
    name: str = ""

    def __post_init__(self) -> None:
        label = f"pool {self.name!r}" if self.name else "pool"
        object.__setattr__(self, "max_count", check_whole(f"{label}.max_count", self.max_count, 1, MAX_POOL_NODES))
        if self.surge_is_percent:
            check_range(f"{label}.max_surge", self.max_surge, 0, 100)
        else:
            object.__setattr__(self, "max_surge", check_whole(f"{label}.max_surge", self.max_surge, 0, MAX_POOL_NODES))

    @property
    def surge_nodes(self) -> int:
        if self.surge_is_percent:
            return math.ceil(self.max_count * self.max_surge / 100)
        return int(self.max_surge)

    @property
    def nodes_at_max(self) -> int:
        return self.max_count + self.surge_nodes

    def describe(self) -> str:
        surge = f"{self.max_surge:g}% = {self.surge_nodes}" if self.surge_is_percent else f"{self.surge_nodes}"
        return f"{self.max_count} max + {surge} surge"

    @classmethod
    def parse(cls, spec: str, name: str = "") -> Pool:
        """Parse ``MAX[:SURGE]`` where SURGE is a node count or a percent (``100:2``, ``100:10%``)."""
        text = spec.strip()
        max_text, _, surge_text = text.partition(":")
        try:
            max_count = int(max_text)
        except ValueError:
            raise SizingError("--pool", spec, "MAX[:SURGE], e.g. 100, 100:2 or 100:10%") from None
        if not surge_text:
            return cls(max_count, name=name)
        percent = surge_text.endswith("%")
        try:
            surge = float(surge_text[:-1]) if percent else int(surge_text)
        except ValueError:
            raise SizingError("--pool", spec, "SURGE must be a node count or a percent, e.g. 2 or 10%") from None
        return cls(max_count, surge, surge_is_percent=percent, name=name)


@dataclass(frozen=True)
class Workload:
    """Outbound demand per node towards its busiest single destination (IP, port, protocol)."""

    connections_per_second: float
    hold_seconds: float = DEFAULT_HOLD_SECONDS
    headroom: float = DEFAULT_HEADROOM

    def __post_init__(self) -> None:
        check_range("connections_per_second", self.connections_per_second, 0.001, 1_000_000)
        check_range("hold_seconds", self.hold_seconds, 1, 3_600)
        check_range("headroom", self.headroom, 1, 10)

    @property
    def ports_needed(self) -> int:
        """Ports in use at the peak rate (Little's law: rate x hold time), with headroom, before rounding."""
        return math.ceil(self.connections_per_second * self.hold_seconds * self.headroom)


@dataclass(frozen=True)
class LoadBalancerPlan:
    """The outcome of :func:`plan_load_balancer`; ``feasible`` is False only with fixed ``outbound_ips``."""

    pools: tuple[Pool, ...]
    allocated_outbound_ports: int
    outbound_ips: int
    nodes_at_max: int
    ports_required: int
    ports_available: int
    dynamic_default_ports: int
    dynamic_default_halves_at: int | None
    ports_from: str
    workload: Workload | None = None
    ips_fixed: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def feasible(self) -> bool:
        return self.ports_required <= self.ports_available

    @property
    def headroom_ports(self) -> int:
        return self.ports_available - self.ports_required

    @property
    def max_nodes_supported(self) -> int:
        """Nodes (maxCount + surge, all pools) this port and IP setting can hold before AKS rejects it."""
        return self.ports_available // self.allocated_outbound_ports

    def to_json(self) -> dict[str, Any]:
        """Stable keys, documented in docs/cli-json.md."""
        return {
            "allocated_outbound_ports": self.allocated_outbound_ports,
            "outbound_ips": self.outbound_ips,
            "outbound_ips_fixed": self.ips_fixed,
            "nodes_at_max": self.nodes_at_max,
            "ports_required": self.ports_required,
            "ports_available": self.ports_available,
            "headroom_ports": self.headroom_ports,
            "max_nodes_supported": self.max_nodes_supported,
            "feasible": self.feasible,
            "dynamic_default_ports": self.dynamic_default_ports,
            "dynamic_default_halves_at_nodes": self.dynamic_default_halves_at,
            "ports_from": self.ports_from,
            "pools": [
                {"max_count": p.max_count, "surge_nodes": p.surge_nodes, "nodes_at_max": p.nodes_at_max}
                for p in self.pools
            ],
        }

    def explain(self) -> str:
        lines = []
        pools = "; ".join(p.describe() for p in self.pools)
        lines.append(
            f"Nodes at peak: {self.nodes_at_max:,} ({pools}). AKS counts maxCount plus upgrade surge of every pool."
        )
        lines.append(f"Ports per node: {self.allocated_outbound_ports:,} ({self.ports_from}).")
        lines.append(
            f"Capacity rule: {self.allocated_outbound_ports:,} ports x {self.nodes_at_max:,} nodes = "
            f"{self.ports_required:,} required; {self.outbound_ips} IP(s) x {PORTS_PER_IP:,} = "
            f"{self.ports_available:,} available."
        )
        if self.feasible:
            lines.append(
                f"Fits with {self.headroom_ports:,} ports spare: room for {self.max_nodes_supported:,} nodes "
                f"before AKS rejects the profile (InvalidLoadBalancerProfileAllocatedOutboundPorts)."
            )
        else:
            lines.append(
                f"Does NOT fit: short by {-self.headroom_ports:,} ports. AKS will reject it with "
                "InvalidLoadBalancerProfileAllocatedOutboundPorts."
            )
        halves = (
            f", and halves again when the backend pool reaches {self.dynamic_default_halves_at:,} nodes"
            if self.dynamic_default_halves_at
            else ""
        )
        lines.append(
            f"Leaving allocatedOutboundPorts at 0 would give {self.dynamic_default_ports:,} ports per node at "
            f"{self.nodes_at_max:,} nodes{halves}; an explicit value never shrinks as the pool grows."
        )
        lines.extend(self.notes)
        return "\n".join(lines)


def _round_up_to_granularity(ports: int) -> int:
    return -(-ports // PORT_GRANULARITY) * PORT_GRANULARITY


def plan_load_balancer(
    pools: Sequence[Pool],
    *,
    ports: int | None = None,
    workload: Workload | None = None,
    outbound_ips: int | None = None,
) -> LoadBalancerPlan:
    """Choose ``allocatedOutboundPorts`` and the managed outbound IP count for AKS pools.

    Give exactly one of ``ports`` (an explicit per-node count) or ``workload``. With ``outbound_ips`` the IP
    count is checked rather than minimised: the plan then reports ``feasible``. Without it the minimal
    sufficient IP count is returned, or :class:`InfeasibleError` when even 100 IPs cannot carry the ports.
    """
    if not pools:
        raise SizingError("pools", [], "at least one pool (MAX[:SURGE])")
    if (ports is None) == (workload is None):
        raise SizingError("ports", ports, "give exactly one of an explicit port count or a workload")
    pools = tuple(pools)
    nodes = sum(p.nodes_at_max for p in pools)
    if nodes > MAX_POOL_NODES:
        # Dynamic defaults stop at 1,000 backend instances; beyond that only explicit ports make sense.
        dyn = DYNAMIC_DEFAULT_TABLE[-1][1]
        halves: int | None = None
    else:
        dyn = dynamic_default_ports(nodes)
        halves = next_halving_node_count(nodes)
    notes: list[str] = []

    if ports is not None:
        ports = check_whole("ports", ports, PORT_GRANULARITY, MAX_PORTS_PER_NODE)
        if ports % PORT_GRANULARITY:
            raise SizingError("ports", ports, f"must be a multiple of {PORT_GRANULARITY} between 8 and 64,000")
        allocated = ports
        ports_from = "given explicitly"
        if ports < dyn:
            notes.append(f"Warning: {ports:,} is below the {dyn:,} Azure would allocate by default at this size.")
    else:
        assert workload is not None
        needed = workload.ports_needed
        by_workload = _round_up_to_granularity(needed)
        allocated = max(by_workload, dyn)
        ports_from = (
            f"{workload.connections_per_second:g} new connections/s x {workload.hold_seconds:g} s held x "
            f"{workload.headroom:g} headroom = {needed:,}, rounded up to a multiple of 8"
        )
        if allocated == dyn and by_workload < dyn:
            ports_from += f", raised to the {dyn:,} Azure's default would give so nothing regresses"
        if allocated > MAX_PORTS_PER_NODE:
            raise InfeasibleError(
                f"ports per node: {allocated:,} required but at most {MAX_PORTS_PER_NODE:,} are allowed",
                required=allocated,
                available=MAX_PORTS_PER_NODE,
                suggestion="spread the calls over more destinations or connection-pool them, or use a NAT "
                "gateway (outboundType managedNATGateway: ports are allocated on demand, 64,512 per IP)",
            )

    required = allocated * nodes
    if outbound_ips is not None:
        ips = check_whole("outbound_ips", outbound_ips, 1, MAX_OUTBOUND_IPS)
        fixed = True
    else:
        ips = max(1, -(-required // PORTS_PER_IP))
        fixed = False
        if ips > MAX_OUTBOUND_IPS:
            raise InfeasibleError(
                f"outbound IPs: {required:,} ports required but {MAX_OUTBOUND_IPS} IPs give at most "
                f"{MAX_OUTBOUND_IPS * PORTS_PER_IP:,}",
                required=required,
                available=MAX_OUTBOUND_IPS * PORTS_PER_IP,
                suggestion="use a NAT gateway (outboundType managedNATGateway) or fewer ports per node",
            )
        if ips > 1:
            # MicrosoftDocs/azure-docs#81893: extra IPs are used only once the first is exhausted, so the
            # per-node port count (not the IP count) is what protects a busy node.
            notes.append(f"{ips} IPs are needed for capacity; per-node ports are what protect a busy node.")
    return LoadBalancerPlan(
        pools=pools,
        allocated_outbound_ports=allocated,
        outbound_ips=ips,
        nodes_at_max=nodes,
        ports_required=required,
        ports_available=ips * PORTS_PER_IP,
        dynamic_default_ports=dyn,
        dynamic_default_halves_at=halves,
        ports_from=ports_from,
        workload=workload,
        ips_fixed=fixed,
        notes=tuple(notes),
    )

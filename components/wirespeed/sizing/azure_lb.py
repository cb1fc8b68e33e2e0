"""Azure Standard Load Balancer outbound SNAT for AKS (``networkProfile.loadBalancerProfile``).

AKS rejects a profile unless ``allocatedOutboundPorts x (sum of maxCount + maxSurge nodes) <= 64,000 x outbound
IPs`` (learn.microsoft.com/azure/aks/configure-load-balancer-standard, "Configure the allocated outbound ports").
Leaving ``allocatedOutboundPorts`` at 0 lets Azure pick ports by backend pool size, which silently halves every
node's ports when the pool crosses 50, 100, 200... nodes. This module picks an explicit value instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, cast

from wirespeed.sizing.errors import InfeasibleError, SizingError, check_whole
from wirespeed.sizing.exact import Number, ceil_div, check_decimal, decimal_text, exact, round_up_to_multiple
from wirespeed.sizing.nat_gateway import AZURE_PORTS_PER_IP as AZURE_NAT_PORTS_PER_IP

# learn.microsoft.com/azure/load-balancer/outbound-rules#scale: 64,000 SNAT ports per frontend public IP.
PORTS_PER_IP = 64_000
# learn.microsoft.com/azure/aks/configure-load-balancer-standard: managedOutboundIPs.count 1..100.
MAX_OUTBOUND_IPS = 100
# Same page: allocatedOutboundPorts 0..64,000 in multiples of 8.
MAX_PORTS_PER_NODE = 64_000
PORT_GRANULARITY = 8
# learn.microsoft.com/azure/aks/quotas-skus-regions, "Service quotas and limits": at most 1,000 nodes per node
# pool (Virtual Machine Scale Sets node pools) and 5,000 nodes per cluster across all node pools (Virtual
# Machine Scale Sets with the Standard Load Balancer SKU). Some versions of the page add that more than 1,000
# nodes per cluster needs a quota increase from support.
MAX_POOL_NODES = 1_000
MAX_CLUSTER_NODES = 5_000
# learn.microsoft.com/azure/aks/configure-load-balancer-standard and the
# 2025-09-01 Microsoft.ContainerService API: loadBalancerProfile.idleTimeoutInMinutes and
# ManagedClusterNATGatewayProfile's ("minimum": 4, "maximum": 120) are 4..120 minutes; AKS's load balancer default is
# 30 (the NAT gateway's is nat_gateway.AZURE_DEFAULT_IDLE_TIMEOUT).
OUTBOUND_IDLE_TIMEOUT_RANGE = (4, 120)
AKS_LB_DEFAULT_IDLE_TIMEOUT = 30
# AKS API, AgentPoolUpgradeSettings.maxSurge (the Microsoft.ContainerService REST spec, as rendered in the SDK
# references, e.g. learn.microsoft.com/javascript/api/@azure-rest/arm-containerservice/agentpoolupgradesettings):
# "If a percentage is specified, it is the percentage of the total agent pool size at the time of the upgrade.
# For percentages, fractional nodes are rounded up." Current API versions default to 10% (older ones to 1).
DEFAULT_SURGE_PERCENT = 10.0
# wirespeed's bound, not Azure's: a surge above 100% would add more nodes than the pool has.
MAX_SURGE_PERCENT = 100
# ASOS's AKS sizing report ([asos-aks-sizing], docs/references.md) and the load balancer docs: a SNAT port to the
# same destination is reusable only after the connection closes plus a 4-minute cooldown. The docs' release rules
# (learn.microsoft.com/azure/load-balancer/load-balancer-outbound-connections, "SNAT port release behavior"): a TCP
# port 4 minutes after a FIN/ACK, 15 s after a RST, and at the idle timeout for an idle TCP flow or any UDP flow.
# This is the one home of that figure (tests/repo/test_numbers_one_home.py): everything else derives from it.
AZURE_LB_TCP_RELEASE_SECONDS = 4 * 60
# Two uses of it, two names. The workload sizing's default hold (ports = rate x hold x headroom; a float, 1..3,600
# below) and the agent's (snat_limits.DEFAULT_AGENT_HOLD_SECONDS: how long an ended flow is still counted, whole
# seconds 0..3,600).
DEFAULT_WORKLOAD_HOLD_SECONDS = float(AZURE_LB_TCP_RELEASE_SECONDS)
# Our choice: Little's law gives the mean ports in use at the peak rate; 25% covers rate bursts inside the
# hold window without doubling IP spend.
DEFAULT_HEADROOM = 1.25
# Workload bounds (wirespeed's, to catch unit mistakes): new connections/s per node, hold seconds, headroom.
CONNECTIONS_PER_SECOND_RANGE = (Fraction(1, 1000), 1_000_000)
WORKLOAD_HOLD_SECONDS_RANGE = (1, 3_600)
HEADROOM_RANGE = (1, 10)

# learn.microsoft.com/azure/load-balancer/load-balancer-outbound-connections, "Default port allocation":
# (largest backend pool size of the bracket, ports per instance when allocatedOutboundPorts is 0). The table
# stops at 1,000 instances: Azure documents no default beyond it, so wirespeed never extrapolates one.
DYNAMIC_DEFAULT_TABLE: tuple[tuple[int, int], ...] = (
    (50, 1_024),
    (100, 512),
    (200, 256),
    (400, 128),
    (800, 64),
    (1_000, 32),
)
DOCUMENTED_DEFAULT_MAX_NODES = DYNAMIC_DEFAULT_TABLE[-1][0]

# maxSurge as AKS accepts it: digits, or a plain decimal then '%' (no exponent, sign, underscore, nan or inf;
# the same pattern as modules/aks-node-pool's validation).
_WHOLE = re.compile(r"[0-9]+")
_PERCENT = re.compile(r"(?P<value>[0-9]+(?:\.[0-9]+)?)%")


def surge_value(text: str) -> tuple[Fraction, bool] | None:
    """A maxSurge string as (value, is_percent), or None when AKS would refuse its form (``1e1%``, ``nan%``)."""
    percent = _PERCENT.fullmatch(text)
    if percent:
        return Fraction(percent["value"]), True
    if _WHOLE.fullmatch(text):
        return Fraction(int(text)), False
    return None


_POOL_SYNTAX = "MAX[:SURGE], e.g. 100, 100:2 or 100:10%"


# The stack config's pool string (Pulumi.yaml's wirespeed:pools and wirespeed:systemPool, read by
# wirespeed.azure.stack_config): named here, below both, so a --pool given one can say which format it is.
STACK_POOL_FORMAT = "NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]], e.g. apps:Standard_D16s_v6:3:20:10%:throughput"
STACK_POOL_KEYS = "the wirespeed:pools and wirespeed:systemPool keys of Pulumi.yaml or a Pulumi.<stack>.yaml"


def _extra_fields(fields: Sequence[str]) -> str:
    """What is wrong with a --pool of more than two fields: the stack config's pool string, or a third field."""
    if 4 <= len(fields) <= 6 and not _WHOLE.fullmatch(fields[0]) and _WHOLE.fullmatch(fields[3]):
        sizing = ":".join(fields[3:5]) if len(fields) > 4 and fields[4] else fields[3]
        return (
            f"this is the stack config's pool format {STACK_POOL_FORMAT.partition(',')[0]} ({STACK_POOL_KEYS}, which "
            f"`wirespeed plan DIR` reads); --pool takes only its MAX[:SURGE]: --pool {sizing}"
        )
    extra = ":".join(fields[2:])
    return f"a third field, {extra!r}: --pool has only two, {_POOL_SYNTAX}"


def dynamic_default_ports(nodes: int) -> int:
    """Ports per node Azure allocates when ``allocatedOutboundPorts`` is 0, for a backend pool of ``nodes``.

    Only the documented range (1..1,000 nodes) is answered; beyond it Azure documents no value.
    """
    check_whole("nodes", nodes, 1, DOCUMENTED_DEFAULT_MAX_NODES)
    for upper, ports in DYNAMIC_DEFAULT_TABLE:
        if nodes <= upper:
            return ports
    raise AssertionError("unreachable: the table covers 1..1,000")


def next_halving_node_count(nodes: int) -> int | None:
    """The backend pool size at which the dynamic default next drops (e.g. 51 for 1..50), or None."""
    for upper, _ in DYNAMIC_DEFAULT_TABLE:
        if nodes <= upper:
            return upper + 1 if upper < DOCUMENTED_DEFAULT_MAX_NODES else None
    return None


def _percent_text(value: object) -> object:
    """How a surge percent is shown in an error: ``200%``, not ``200.0``."""
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction | Decimal):
        return value
    try:
        return f"{decimal_text(exact(value))}%"
    except (ValueError, ArithmeticError):  # NaN or infinity
        return value


def _check_surge_percent(where: str, value: object) -> Fraction:
    try:
        return check_decimal(where, value, 0, MAX_SURGE_PERCENT, "%")
    except SizingError as exc:
        raise SizingError(where, _percent_text(value), exc.allowed) from None


@dataclass(frozen=True)
class Pool:
    """One node pool as the capacity rule counts it.

    ``max_surge`` is a node count, or a percent of ``max_count`` when ``surge_is_percent``; AKS rounds the
    percent up to whole nodes. A percent is kept as the exact decimal given (``64.4`` is 644/10), so the
    rounding is exact: 250 nodes x 64.4% = 161 surge nodes, not the 162 float arithmetic gives.
    """

    max_count: int
    max_surge: Number = DEFAULT_SURGE_PERCENT
    surge_is_percent: bool = True
    name: str = ""

    def __post_init__(self) -> None:
        label = f"pool {self.name!r}" if self.name else "pool"
        object.__setattr__(self, "max_count", check_whole(f"{label}.max_count", self.max_count, 1, MAX_POOL_NODES))
        if self.surge_is_percent:
            object.__setattr__(self, "max_surge", _check_surge_percent(f"{label}.max_surge", self.max_surge))
        else:
            # check_whole refuses anything but an int or an integral float, which is all a node count may be.
            surge = cast(float, self.max_surge)
            object.__setattr__(self, "max_surge", check_whole(f"{label}.max_surge", surge, 0, MAX_POOL_NODES))

    @property
    def surge_nodes(self) -> int:
        if self.surge_is_percent:
            percent = Fraction(self.max_surge)
            return ceil_div(self.max_count * percent.numerator, 100 * percent.denominator)
        return int(self.max_surge)

    @property
    def nodes_at_max(self) -> int:
        return self.max_count + self.surge_nodes

    def surge_text(self) -> str:
        """The surge as AKS's maxSurge string: ``10%`` or ``2``."""
        if self.surge_is_percent:
            return f"{decimal_text(Fraction(self.max_surge))}%"
        return str(self.max_surge)

    def describe(self) -> str:
        surge = f"{self.surge_text()} = {self.surge_nodes:,}" if self.surge_is_percent else f"{self.surge_nodes:,}"
        named = f"{self.name}: " if self.name else ""
        return f"{named}{self.max_count:,} max + {surge} surge"

    @classmethod
    def parse(cls, spec: str, name: str = "") -> Pool:
        """Parse ``MAX[:SURGE]`` where SURGE is a node count or a percent (``100:2``, ``100:10%``).

        Every error names the pool: by ``name`` when given (a workload file's pool), else by the spec itself
        (one of several ``--pool`` flags).
        """
        # A workload file's pool is named and has max_count/max_surge fields; a --pool flag has MAX[:SURGE].
        where, count_word, surge_word = (
            (f"pool {name!r}", "max_count", "max_surge") if name else ("--pool", "MAX", "SURGE")
        )
        fields = [part.strip() for part in spec.split(":")]
        if not name and len(fields) > 2:
            raise SizingError(where, spec, _extra_fields(fields))
        max_text, colon, surge_text = (part.strip() for part in spec.partition(":"))
        if not _WHOLE.fullmatch(max_text):
            raise SizingError(
                where,
                spec,
                f"{count_word} {max_text!r} must be a whole number between 1 and {MAX_POOL_NODES:,} (AKS nodes per "
                f"pool): {_POOL_SYNTAX}",
            )
        max_count = int(max_text)
        if not 1 <= max_count <= MAX_POOL_NODES:
            raise SizingError(
                where,
                spec,
                f"{count_word} must be a whole number between 1 and {MAX_POOL_NODES:,} (AKS nodes per pool)",
            )
        if not colon:
            return cls(max_count, name=name)
        if not surge_text:
            raise SizingError(
                where, spec, f"{surge_word} after ':' is empty: give a node count or a percent, e.g. 2 or 10%"
            )
        percent = _PERCENT.fullmatch(surge_text)
        if percent:
            value = Fraction(percent["value"])
            if value > MAX_SURGE_PERCENT:
                raise SizingError(where, spec, f"{surge_word} {surge_text} must be between 0% and {MAX_SURGE_PERCENT}%")
            return cls(max_count, value, surge_is_percent=True, name=name)
        if not _WHOLE.fullmatch(surge_text):
            raise SizingError(
                where, spec, f"{surge_word} {surge_text!r} must be a node count or a percent, e.g. 2 or 10%"
            )
        surge = int(surge_text)
        if surge > MAX_POOL_NODES:
            raise SizingError(where, spec, f"{surge_word} must be between 0 and {MAX_POOL_NODES:,} nodes")
        return cls(max_count, surge, surge_is_percent=False, name=name)


@dataclass(frozen=True)
class Workload:
    """Outbound demand per node towards its busiest single destination (IP, port, protocol).

    Numbers are taken as the decimals they were written as (a float through ``str()``), so ``1.36`` new
    connections/s held 240 s with 1.25 headroom needs exactly 408 ports, not the 409 float arithmetic gives.
    """

    connections_per_second: Number
    hold_seconds: Number = DEFAULT_WORKLOAD_HOLD_SECONDS
    headroom: Number = DEFAULT_HEADROOM

    def __post_init__(self) -> None:
        check_decimal("connections_per_second", self.connections_per_second, *CONNECTIONS_PER_SECOND_RANGE)
        check_decimal("hold_seconds", self.hold_seconds, *WORKLOAD_HOLD_SECONDS_RANGE)
        check_decimal("headroom", self.headroom, *HEADROOM_RANGE)

    @property
    def ports_in_use(self) -> Fraction:
        """Ports in use at the peak rate (Little's law: rate x hold time) times headroom, exactly."""
        return exact(self.connections_per_second) * exact(self.hold_seconds) * exact(self.headroom)

    @property
    def ports_needed(self) -> int:
        """:attr:`ports_in_use` rounded up to a whole port."""
        value = self.ports_in_use
        return ceil_div(value.numerator, value.denominator)

    def describe(self) -> str:
        return (
            f"{decimal_text(exact(self.connections_per_second))} new connections/s x "
            f"{decimal_text(exact(self.hold_seconds))} s held x {decimal_text(exact(self.headroom))} headroom"
        )


# A measured peak's provenance ends up in plans, stack config and pull requests: one line of printable text.
MAX_SOURCE_LENGTH = 512


def check_source(field: str, value: object) -> str:
    """Where a measured figure came from: non-empty printable text on one line, at most 512 characters."""
    if not isinstance(value, str) or not value.strip() or not value.isprintable() or len(value) > MAX_SOURCE_LENGTH:
        raise SizingError(
            field,
            value,
            f"where the peak was measured, one line of at most {MAX_SOURCE_LENGTH} characters (the source line "
            "`wirespeed size ... --from-prometheus` prints)",
        )
    return value.strip()


@dataclass(frozen=True)
class MeasuredPeak:
    """The most ports one node held to one destination (IP, port, protocol), as the node agent counted them
    (``wirespeed_agent_snat_ports_in_use``: open flows plus flows closed within the port's hold time), with where and
    over what window it was measured. Sizing adds ``headroom`` on top: the measured week is not the worst week."""

    ports_in_use: int
    source: str
    headroom: Number = DEFAULT_HEADROOM

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "ports_in_use", check_whole("measured_peak_ports_per_node", self.ports_in_use, 1, 10**9)
        )
        object.__setattr__(self, "source", check_source("measured_from", self.source))
        check_decimal("headroom", self.headroom, *HEADROOM_RANGE)

    @property
    def ports_with_headroom(self) -> Fraction:
        return self.ports_in_use * exact(self.headroom)

    @property
    def ports_needed(self) -> int:
        value = self.ports_with_headroom
        return ceil_div(value.numerator, value.denominator)

    @property
    def headroom_percent(self) -> int | float:
        percent = (exact(self.headroom) - 1) * 100
        return int(percent) if percent.denominator == 1 else float(percent)

    def describe(self) -> str:
        percent = decimal_text((exact(self.headroom) - 1) * 100)
        return f"from a measured peak of {self.ports_in_use:,} ({self.source}) + {percent}% headroom"


@dataclass(frozen=True)
class CapacityFix:
    """What makes ``ports x nodes <= ips x 64,000`` hold when it does not: the one decision of "enough" that both
    `wirespeed check` (aks-snat-capacity) and `wirespeed size azure-lb` word, each with its own field names.

    ``ips_needed`` is None when even AKS's 100 IPs cannot carry the ports; ``fit_ports`` None when not even 8 ports
    per node fit the IPs; ``fit_nodes`` is the most nodes (maxCount plus surge, all pools) these ports and IPs hold.
    """

    ips_needed: int | None
    fit_ports: int | None
    fit_nodes: int

    def phrases(self, ips_where: str, ports_name: str, nodes_where: str | None = None) -> list[str]:
        """Each fix as a clause, fewest changes first; a NAT gateway when neither IPs nor ports can do it."""
        fixes = []
        if self.ips_needed is not None:
            fixes.append(f"give it at least {self.ips_needed} outbound IPs ({ips_where})")
        if self.fit_ports is not None:
            fixes.append(f"lower {ports_name} to at most {self.fit_ports:,}")
        if nodes_where is not None and self.fit_nodes >= 1:
            fixes.append(
                f"keep {nodes_where} to at most {self.fit_nodes:,} nodes at maxCount plus surge in all (it stops "
                f"fitting at {self.fit_nodes + 1:,})"
            )
        return fixes or ["use a NAT gateway (outboundType managedNATGateway)"]

    def aks_text(self) -> str:
        """:meth:`text` in the AKS API's names, as `plan` and `size` print a plan that does not fit."""
        return self.text("managedOutboundIPs.count", "allocatedOutboundPorts", "the pools")

    def text(self, ips_where: str, ports_name: str, nodes_where: str | None = None) -> str:
        """:meth:`phrases` joined, without a capital or a full stop: ``give it at least 7 ... or lower ...``."""
        fixes = self.phrases(ips_where, ports_name, nodes_where)
        return fixes[0] if len(fixes) == 1 else f"{', '.join(fixes[:-1])} or {fixes[-1]}"


def capacity_fix(ports: int, nodes: int, ips: int) -> CapacityFix | None:
    """None when ``ports`` per node on ``nodes`` nodes fit ``ips`` outbound IPs, else what would make them fit."""
    required, available = ports * nodes, ips * PORTS_PER_IP
    if required <= available:
        return None
    needed_ips = ceil_div(required, PORTS_PER_IP)
    fit_ports = available // nodes // PORT_GRANULARITY * PORT_GRANULARITY
    return CapacityFix(
        ips_needed=needed_ips if needed_ips <= MAX_OUTBOUND_IPS else None,
        fit_ports=fit_ports if fit_ports >= PORT_GRANULARITY else None,
        fit_nodes=available // ports if ports else 0,
    )


@dataclass(frozen=True)
class LoadBalancerPlan:
    """The outcome of :func:`plan_load_balancer`; ``feasible`` is False only with fixed ``outbound_ips``."""

    pools: tuple[Pool, ...]
    allocated_outbound_ports: int
    outbound_ips: int
    nodes_at_max: int
    ports_required: int
    ports_available: int
    dynamic_default_ports: int | None
    dynamic_default_halves_at: int | None
    ports_from: str
    workload: Workload | None = None
    measured: MeasuredPeak | None = None
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

    def fix(self) -> CapacityFix | None:
        """What would make this plan fit (None when it does): :func:`capacity_fix`, as aks-snat-capacity uses it."""
        return capacity_fix(self.allocated_outbound_ports, self.nodes_at_max, self.outbound_ips)

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
            "measured_peak": None
            if self.measured is None
            else {
                "ports_in_use": self.measured.ports_in_use,
                "source": self.measured.source,
                "headroom_percent": self.measured.headroom_percent,
            },
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
            fix = self.fix()
            assert fix is not None, "does not fit, so there is a fix"
            lines.append(
                f"Does NOT fit: short by {-self.headroom_ports:,} ports. AKS will reject it with "
                f"InvalidLoadBalancerProfileAllocatedOutboundPorts. To fit, "
                f"{fix.aks_text()}."
            )
        if self.dynamic_default_ports is None:
            lines.append(
                f"Leaving allocatedOutboundPorts at 0: Azure documents its default only up to "
                f"{DOCUMENTED_DEFAULT_MAX_NODES:,} backend instances, so at {self.nodes_at_max:,} nodes it is "
                "undocumented; an explicit value is the only predictable choice."
            )
        else:
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


def _check_cluster_size(pools: tuple[Pool, ...]) -> None:
    max_total = sum(p.max_count for p in pools)
    if max_total > MAX_CLUSTER_NODES:
        counts = " + ".join(f"{p.max_count:,}" for p in pools)
        raise SizingError(
            "pools",
            f"{counts} = {max_total:,} nodes at maxCount",
            f"AKS allows at most {MAX_CLUSTER_NODES:,} nodes per cluster across all node pools",
        )


def _explicit_ports(ports: int, dyn: int | None, notes: list[str]) -> tuple[int, str]:
    """The ports a user gave, checked; noted when below what Azure's default would give."""
    ports = check_whole("ports", ports, PORT_GRANULARITY, MAX_PORTS_PER_NODE)
    if ports % PORT_GRANULARITY:
        raise SizingError(
            "ports",
            ports,
            f"must be a multiple of {PORT_GRANULARITY} between {PORT_GRANULARITY} and {MAX_PORTS_PER_NODE:,}",
        )
    if dyn is not None and ports < dyn:
        notes.append(f"Warning: {ports:,} is below the {dyn:,} Azure would allocate by default at this size.")
    return ports, "given explicitly"


def _workload_ports(workload: Workload | MeasuredPeak, dyn: int | None) -> tuple[int, str]:
    """The ports a workload (or a measured peak) needs per node, a multiple of 8 and never below Azure's default; and
    how."""
    needed = workload.ports_needed
    by_workload = round_up_to_multiple(needed, PORT_GRANULARITY)
    allocated = by_workload if dyn is None else max(by_workload, dyn)
    ports_from = f"{workload.describe()} = {needed:,}"
    exact_value = workload.ports_in_use if isinstance(workload, Workload) else workload.ports_with_headroom
    if exact_value != needed:
        ports_from += " (rounded up to a whole port)"
    ports_from += ", a multiple of 8" if by_workload == needed else f", rounded up to {by_workload:,}, a multiple of 8"
    if dyn is not None and by_workload < dyn:
        ports_from += f", raised to the {dyn:,} Azure's default would give so nothing regresses"
    if allocated > MAX_PORTS_PER_NODE:
        raise InfeasibleError(
            f"ports per node: {allocated:,} required but at most {MAX_PORTS_PER_NODE:,} are allowed",
            required=allocated,
            available=MAX_PORTS_PER_NODE,
            suggestion="spread the calls over more destinations or connection-pool them, or use a NAT gateway "
            f"(outboundType managedNATGateway: ports are allocated on demand, {AZURE_NAT_PORTS_PER_IP:,} per IP)",
        )
    return allocated, ports_from


def _outbound_ips(required: int, outbound_ips: int | None, notes: list[str]) -> tuple[int, bool]:
    """The given IP count, checked (fixed), or the fewest IPs that carry ``required`` ports."""
    if outbound_ips is not None:
        return check_whole("outbound_ips", outbound_ips, 1, MAX_OUTBOUND_IPS), True
    ips = max(1, ceil_div(required, PORTS_PER_IP))
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
    return ips, False


def plan_load_balancer(
    pools: Sequence[Pool],
    *,
    ports: int | None = None,
    workload: Workload | None = None,
    outbound_ips: int | None = None,
    measured: MeasuredPeak | None = None,
) -> LoadBalancerPlan:
    """Choose ``allocatedOutboundPorts`` and the managed outbound IP count for AKS pools.

    Give exactly one of ``ports`` (an explicit per-node count), ``workload`` (a connection rate) or ``measured`` (the
    node agent's measured peak of ports in use). With ``outbound_ips`` the IP
    count is checked rather than minimised: the plan then reports ``feasible``. Without it the minimal
    sufficient IP count is returned, or :class:`InfeasibleError` when even 100 IPs cannot carry the ports.
    Pools whose maxCounts add up to more than AKS's 5,000 nodes per cluster are refused.
    """
    if not pools:
        raise SizingError("pools", [], "at least one pool (MAX[:SURGE])")
    if (ports is not None) + (workload is not None) + (measured is not None) != 1:
        raise SizingError("ports", ports, "give exactly one of an explicit port count, a workload or a measured peak")
    pools = tuple(pools)
    _check_cluster_size(pools)
    nodes = sum(p.nodes_at_max for p in pools)
    notes: list[str] = []
    dyn: int | None = None
    halves: int | None = None
    if nodes <= DOCUMENTED_DEFAULT_MAX_NODES:
        dyn = dynamic_default_ports(nodes)
        halves = next_halving_node_count(nodes)
    if nodes > MAX_CLUSTER_NODES:
        notes.append(
            f"Warning: {nodes:,} nodes with upgrade surge exceed AKS's {MAX_CLUSTER_NODES:,} nodes per cluster: "
            "an upgrade at full scale cannot surge every pool at once."
        )

    if ports is not None:
        allocated, ports_from = _explicit_ports(ports, dyn, notes)
    else:
        demand = workload or measured
        assert demand is not None
        allocated, ports_from = _workload_ports(demand, dyn)
    required = allocated * nodes
    ips, fixed = _outbound_ips(required, outbound_ips, notes)
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
        measured=measured,
        ips_fixed=fixed,
        notes=tuple(notes),
    )

"""Typed records of the catalog: instance types and NIC driver facts.

Plain frozen dataclasses rather than pydantic models: the catalog is read on every CLI start and by the
policy pack, and pydantic's import alone costs more than loading both data files.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Literal

from wirespeed.errors import UserError

# Validation bounds (wirespeed's): a line rate in Gb/s. Here, below the sizing engine that validates against it,
# because the catalog's generators also keep sizes faster than it out (wirespeed.sizing.packets re-exports it).
LINE_RATE_GBPS_RANGE = (Fraction(1, 1000), 800)

Cloud = Literal["azure", "aws"]
CLOUDS: tuple[Cloud, ...] = ("azure", "aws")

# The kinds of NIC an instance type presents. A Literal so mypy checks every use; NIC_KINDS below declares each
# (tests/catalog/test_catalog_nic.py fails when the two differ).
Nic = Literal["mana", "mellanox-or-mana", "ena"]
Architecture = Literal["x86_64", "arm64"]
Direction = Literal["rx", "tx"]
Rounding = Literal["up_power_of_two", "down_power_of_two", "multiple_of_8", "none"]
ROUNDINGS: tuple[Rounding, ...] = ("up_power_of_two", "down_power_of_two", "multiple_of_8", "none")


@dataclass(frozen=True, slots=True)
class NicKind:
    """A kind of NIC the catalog's instance types present: the cloud that has it and the Linux drivers a node
    with it may bind (each with its ring facts in nic_drivers.json). Every kind is a VF the host passes through
    (Azure accelerated networking, AWS ENA)."""

    cloud: Cloud
    drivers: tuple[str, ...]


# The one declaration of the NIC kinds; the catalog's data files, the AKS accelerated-networking check, the jumbo
# MTU choice and the built-in profiles' ring table are derived from it.
# learn.microsoft.com/azure/virtual-network/accelerated-networking-overview: Azure Boost (v6) sizes have MANA;
# older sizes land on Mellanox ConnectX-3 (mlx4_en) or ConnectX-4/5 (mlx5_core) hosts, or MANA ones, so the
# agent detects the driver on the node (azure_sizes.json's comment). docs.aws.amazon.com/AWSEC2/latest/UserGuide/
# enhanced-networking-ena.html: current AWS types use ENA (the ena driver).
NIC_KINDS: dict[Nic, NicKind] = {
    "mana": NicKind("azure", ("mana",)),
    "mellanox-or-mana": NicKind("azure", ("mana", "mlx5_core", "mlx4_en")),
    "ena": NicKind("aws", ("ena",)),
}


def nic_kinds(cloud: Cloud) -> tuple[Nic, ...]:
    """The NIC kinds of one cloud, in declaration order."""
    return tuple(name for name, kind in NIC_KINDS.items() if kind.cloud == cloud)


def cloud_drivers(cloud: Cloud | None = None) -> tuple[str, ...]:
    """The drivers of the NICs cloud nodes present (of one cloud, or of both), each once, in declaration order;
    lab drivers (e1000e, igbvf, virtio_net) and the synthetic hv_netvsc are not among them."""
    drivers = (d for kind in NIC_KINDS.values() if cloud in (None, kind.cloud) for d in kind.drivers)
    return tuple(dict.fromkeys(drivers))


# The names are the public API the CLI and components catch; "Unknown..." reads better than "...Error".
class UnknownInstanceType(UserError, LookupError):  # noqa: N818
    """No instance type matches the name; ``suggestions`` holds the nearest canonical names."""

    field = "name"

    def __init__(self, name: str, suggestions: list[str]) -> None:
        self.name = name
        self.suggestions = suggestions
        if suggestions:
            hint = "did you mean " + ", ".join(suggestions) + "?"
        else:
            hint = "no similar name; `wirespeed catalog list` shows every known type"
        super().__init__(f"unknown instance type {name!r}: {hint}")


class UnknownDriver(UserError, LookupError):  # noqa: N818
    """No NIC driver of that name in nic_drivers.json; ``known`` lists the ones there are."""

    field = "driver"

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        guesses = driver_guesses(name, known)
        hint = f"did you mean {' or '.join(guesses)}? " if guesses else ""
        super().__init__(f"unknown NIC driver {name!r}: {hint}known drivers are {', '.join(known)}")


def driver_guesses(name: str, known: Sequence[str]) -> list[str]:
    """The drivers ``name`` most likely means: those it is a prefix of (mlx5 for mlx5_core, as the kernel module is
    often called), then near spellings (mnaa)."""
    lowered = name.strip().lower()
    prefixed = [d for d in known if lowered and d.startswith(lowered)]
    close = difflib.get_close_matches(lowered, list(known), n=2, cutoff=0.6)
    return list(dict.fromkeys([*prefixed, *close]))


@dataclass(frozen=True, slots=True)
class InstanceType:
    """One VM size (Azure) or instance type (AWS) with the network figures sizing needs.

    Bandwidth is the instance's aggregate over all NICs in Gbit/s. ``baseline_gbps`` is what the instance
    can sustain; ``burst_gbps`` what it reaches for a while ("Up to N Gigabit" on AWS). They are equal when
    the figure is fixed, and on Azure, whose docs give a single upper limit per size.

    ``preview``: the size's series page titles it "(Preview)" (Azure's Dnsv6, Ensv6...): its figures are judged like
    any other's, but it is never offered as an alternative to move production to.
    """

    cloud: Cloud
    name: str
    family: str
    vcpu: int
    memory_gib: float
    baseline_gbps: float
    burst_gbps: float
    max_nics: int
    network_optimised: bool
    nic: Nic
    ena_express: bool
    efa: bool
    architecture: Architecture
    source: str
    preview: bool = False

    @property
    def max_bandwidth_mbps(self) -> int:
        """The upper bandwidth figure in Mbit/s, the unit Azure's size tables use."""
        return round(self.burst_gbps * 1000)

    @property
    def burstable(self) -> bool:
        return self.burst_gbps > self.baseline_gbps

    def to_json(self) -> dict[str, object]:
        """Every field plus ``max_bandwidth_mbps``: the stable keys of ``wirespeed catalog ... --json``; ``preview``
        only on a preview series' sizes (``true``), so the keys of every other size stay as they were."""
        out: dict[str, object] = asdict(self)
        if not self.preview:
            del out["preview"]
        out["max_bandwidth_mbps"] = self.max_bandwidth_mbps
        return out


@dataclass(frozen=True, slots=True)
class KernelDefault:
    """A ring default that changed upstream: ``default`` from Linux ``kernel`` on, by commit ``change``.

    Distributions backport such commits, so an older kernel version does not prove the older default.
    """

    kernel: str
    default: int
    change: str


@dataclass(frozen=True, slots=True)
class RingLimits:
    """Descriptor counts one ring direction accepts: what `ethtool -g` shows as current default and max.

    ``default`` is the value explanations assume. When the driver's default changed upstream,
    ``default_since`` holds the newer one and the kernel it arrived in; ``default`` stays the older
    value (a node's actual default depends on its kernel; the agent reads the device's size).
    """

    default: int
    min: int
    max: int
    default_since: KernelDefault | None = None


CounterCause = Literal["rx_ring_overflow", "instance_allowance", "not_a_node_setting"]
"""What a rising driver counter reveals, and so which kind of fix applies.

``rx_ring_overflow``: the RX ring was full (a larger ring in the profile); ``instance_allowance``: the cloud's
per-instance bandwidth, PPS or connection allowance (a larger or network-optimised size); ``not_a_node_setting``:
a limit no node setting changes.
"""

COUNTER_CAUSES: tuple[CounterCause, ...] = ("rx_ring_overflow", "instance_allowance", "not_a_node_setting")


@dataclass(frozen=True, slots=True)
class DriverCounter:
    """One drop or allowance counter of a driver, named as `ethtool -S` (ETHTOOL_GSTATS) names it."""

    name: str
    cause: CounterCause
    meaning: str
    source: str


@dataclass(frozen=True, slots=True)
class NicDriver:
    """Ring, MTU and counter facts for one Linux NIC driver, as read from ``data/nic_drivers.json``."""

    name: str
    description: str
    rx: RingLimits | None
    tx: RingLimits | None
    rounding: Rounding
    mtu_max: int
    rx_buffer_bytes: int
    counters: tuple[DriverCounter, ...]
    sources: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def drop_counters(self) -> tuple[str, ...]:
        """The names of the driver's drop and allowance counters, in the file's order."""
        return tuple(c.name for c in self.counters)

    @property
    def has_rings(self) -> bool:
        return self.rx is not None and self.tx is not None

    def to_json(self) -> dict[str, object]:
        """The driver as plain JSON types, in the shape of its nic_drivers.json entry plus ``name``.

        Optional facts (``notes``, a ring's ``default_since``) appear only when the entry has them.
        """
        out: dict[str, object] = asdict(self)
        out["counters"] = [asdict(c) for c in self.counters]
        out["sources"] = list(self.sources)
        if self.notes:
            out["notes"] = list(self.notes)
        else:
            del out["notes"]
        for direction in ("rx", "tx"):
            ring = out[direction]
            if isinstance(ring, dict) and ring["default_since"] is None:
                del ring["default_since"]
        return out

    def limits(self, direction: Direction) -> RingLimits:
        """The limits for ``direction``; ValueError when the driver has no rings to tune (hv_netvsc)."""
        if direction not in ("rx", "tx"):
            raise ValueError(f"direction: {direction!r} is not one of 'rx', 'tx'")
        limits = self.rx if direction == "rx" else self.tx
        if limits is None:
            raise ValueError(f"driver {self.name!r} has no {direction} ring to size: {self.description}")
        return limits

    def round_ring(self, entries: int, direction: Direction) -> int:
        """The ring size the driver would end up with when asked for ``entries``.

        Applies the driver's rounding rule, then clamps to its [min, max]. Pure; never fails for a
        positive count on a driver with rings.
        """
        if isinstance(entries, bool) or not isinstance(entries, int):
            raise TypeError(f"entries: expected an int, got {type(entries).__name__}")
        if entries < 1:
            raise ValueError(f"entries: {entries} is below the allowed minimum of 1")
        limits = self.limits(direction)
        rounded = apply_rounding(entries, self.rounding)
        return max(limits.min, min(limits.max, rounded))

    def ring_holding(self, entries: int, direction: Direction) -> int:
        """The smallest ring the driver keeps unchanged that holds ``entries``, clamped to its [min, max].

        What sizing asks for: a down-rounding driver (ENA) asked for 8,128 would keep 4,096, so the request
        is first raised to the next size the rule produces.
        """
        rule: Rounding = "up_power_of_two" if self.rounding == "down_power_of_two" else self.rounding
        return self.round_ring(apply_rounding(entries, rule), direction)


def apply_rounding(entries: int, rounding: Rounding) -> int:
    """Round a positive descriptor count the way drivers with this rule do."""
    if rounding == "up_power_of_two":
        return 1 << (entries - 1).bit_length()
    if rounding == "down_power_of_two":
        return 1 << (entries.bit_length() - 1)
    if rounding == "multiple_of_8":
        return (entries + 7) // 8 * 8
    return entries


def conforms(entries: int, rounding: Rounding) -> bool:
    """Whether ``entries`` is already a value the rule produces (so rounding leaves it unchanged)."""
    return entries >= 1 and apply_rounding(entries, rounding) == entries

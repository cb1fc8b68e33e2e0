"""The smallest RX/TX rings and netdev backlog a node of a given line rate needs: the policy gates' minimums.

One derivation for both the built-in profiles (wirespeed.profiles sizes each for its assumed line rate) and the
gates (wirespeed.rules.tuning holds each pool to what its own line rate needs): rings hold
``rings.DEFAULT_STALL_MS`` and the backlog ``backlog.DEFAULT_STALL_MS`` of ``DEFAULT_PACKET_BYTES`` packets at
line rate. Whether a value is enough is :class:`wirespeed.sizing.queues.Need`'s one decision: a value that holds the
stall passes, an unset one is judged as the kernel's or driver's default.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wirespeed.sizing import backlog, queues, rings
from wirespeed.sizing.exact import Number
from wirespeed.sizing.packets import DEFAULT_PACKET_BYTES, next_power_of_two, packets_during

if TYPE_CHECKING:
    from wirespeed.catalog import Direction

# What a gate assumes when nothing it can read says which nodes run a setting (a tuning ConfigMap on its own, an
# AKSNodeClass, a launch template without an instance type): the line rate the `balanced` profile is sized for,
# 25 Gb/s, which covers most network-optimised sizes in the catalog (Azure v6 up to 32 vCPU: 12.5..24 Gb/s;
# AWS "up to 25 Gigabit" types). The gates say when they assumed it; policy setting defaultLineRateGbps changes it.
DEFAULT_LINE_RATE_GBPS = 25.0
# The line rate each built-in profile is sized for (wirespeed.profiles.ASSUMPTIONS reads it): the VF on a 100 Gb/s
# host NIC of the Elastic report ([elastic-aks], docs/references.md) for `throughput`;
# general-purpose nodes up to 25 Gb/s for `balanced`.
BUILTIN_LINE_RATES: dict[str, float] = {"throughput": 100, "balanced": 25}


@dataclass(frozen=True)
class LineRate:
    """A node's line rate and, for messages, where the gate got it (``known`` False: a default was assumed)."""

    gbps: float
    phrase: str
    known: bool

    def describe(self) -> str:
        return self.phrase


def of_size(name: str) -> LineRate | None:
    """A catalog size's line rate (its burst bandwidth: bursts arrive at the NIC's peak), or None if unknown."""
    from wirespeed import catalog

    try:
        size = catalog.lookup(name)
    except catalog.UnknownInstanceType:
        return None
    return LineRate(size.burst_gbps, f"{size.name}'s line rate {size.burst_gbps:g} Gb/s (catalog)", known=True)


def declared(gbps: float, where: str) -> LineRate:
    return LineRate(float(gbps), f"the line rate {gbps:g} Gb/s {where} declares", known=True)


def assumed(gbps: float, why: str) -> LineRate:
    return LineRate(float(gbps), f"an assumed line rate of {gbps:g} Gb/s ({why})", known=False)


def builtin_for(gbps: float) -> str | None:
    """The smallest built-in profile sized for at least this line rate, or None when none is."""
    fitting = [(rate, name) for name, rate in BUILTIN_LINE_RATES.items() if rate >= gbps]
    return min(fitting)[1] if fitting else None


def backlog_need(line_rate_gbps: Number, *, floor: int = 0) -> queues.Need:
    """What the backlog of a node at this line rate must hold (4 ms of 1,500-byte packets), with a policy floor."""
    packets = packets_during(line_rate_gbps, DEFAULT_PACKET_BYTES, backlog.DEFAULT_STALL_MS)
    return backlog.backlog_need(packets, floor=floor)


@functools.lru_cache(maxsize=256)
def backlog_for(
    line_rate_gbps: Number,
    *,
    stall_ms: Number = backlog.DEFAULT_STALL_MS,
    packet_bytes: int = DEFAULT_PACKET_BYTES,
) -> int:
    """net.core.netdev_max_backlog for this line rate (``wirespeed size backlog``'s answer)."""
    return backlog.plan_backlog(line_rate_gbps, stall_ms=stall_ms, packet_bytes=packet_bytes).netdev_max_backlog


@functools.lru_cache(maxsize=256)
def backlog_required(line_rate_gbps: Number) -> int:
    """The smallest net.core.netdev_max_backlog that holds the stall at this line rate: what the gates (the policy
    rule and the Terraform modules' catalog.tf.json) hold a node to. ``backlog_for`` is at least this."""
    return backlog_need(line_rate_gbps).required


def ring_need(driver: str, direction: Direction, line_rate_gbps: Number, *, floor: int = 0) -> queues.Need | None:
    """What one ring of ``driver`` on a node at this line rate must hold (1 ms of 1,500-byte packets), with a policy
    floor; None for a driver with no NIC rings. A driver the catalog does not know is taken as written, with no
    default or maximum known (nothing unset is judged for it)."""
    from wirespeed import catalog

    packets = packets_during(line_rate_gbps, DEFAULT_PACKET_BYTES, rings.DEFAULT_STALL_MS)
    try:
        nic = catalog.nic_driver(driver)
    except catalog.UnknownDriver:
        return queues.Need(direction, packets, default=0, maximum=backlog.KERNEL_INT_MAX, floor=floor)
    if not nic.has_rings:
        return None
    return rings.ring_need(nic, direction, packets, floor=floor)


@functools.lru_cache(maxsize=1024)
def rings_for(
    driver: str,
    line_rate_gbps: Number,
    *,
    stall_ms: Number = rings.DEFAULT_STALL_MS,
    packet_bytes: int = DEFAULT_PACKET_BYTES,
) -> tuple[int, int] | None:
    """(RX, TX) ring sizes for ``driver`` at this line rate (``wirespeed size rings``' answer: never below the
    driver's defaults, held to its maxima); None for a driver with no NIC rings. A driver the catalog does not know
    gets the packet count rounded up to a power of two for both."""
    from wirespeed import catalog

    try:
        nic = catalog.nic_driver(driver)
    except catalog.UnknownDriver:
        wanted = next_power_of_two(packets_during(line_rate_gbps, packet_bytes, stall_ms))
        return wanted, wanted
    if not nic.has_rings:
        return None
    plan = rings.plan_rings(driver, line_rate_gbps, stall_ms=stall_ms, packet_bytes=packet_bytes)
    return plan.rx, plan.tx


def derivation(queue: str) -> str:
    """How the minimum of ``queue`` ("backlog", "rx", "tx") is derived, for messages."""
    stall = backlog.DEFAULT_STALL_MS if queue == "backlog" else rings.DEFAULT_STALL_MS
    what = "the backlog" if queue == "backlog" else f"{'an' if queue == 'rx' else 'a'} {queue.upper()} ring"
    return f"{what} must hold {stall:g} ms of {DEFAULT_PACKET_BYTES:,}-byte packets at that rate"

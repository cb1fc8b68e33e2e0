"""NIC ring sizing: descriptors enough to ride out a receive stall at line rate, within the driver's rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wirespeed.sizing.errors import SizingError, check_whole
from wirespeed.sizing.exact import Number
from wirespeed.sizing.packets import DEFAULT_PACKET_BYTES, packets_during
from wirespeed.sizing.queues import Need

if TYPE_CHECKING:
    from wirespeed import catalog
    from wirespeed.catalog import Direction

# A ring must cover the time NAPI is not polling: interrupt moderation plus a softirq round (~hundreds of us)
# and scheduling jitter. 1 ms at 100 Gb/s is exactly what the Elastic field report set ([elastic-aks]: RX 8,192;
# docs/references.md).
DEFAULT_STALL_MS = 1.0
# Queue pairs assumed for the memory estimate; pass the node's own `ethtool -l` combined count.
DEFAULT_QUEUES = 8
# ENA Express (SRD): AWS recommends an RX ring of 8,192 on the interface (with MTU 8,900, sizing.mtu)
# (docs.aws.amazon.com/AWSEC2/latest/UserGuide/ena-express.html, "Prerequisites" and "Tune performance").
ENA_EXPRESS_RX_RING = 8_192
# Queue counts accepted (wirespeed's bound, read by modules/sizing's facts too): beyond any cloud NIC's channels.
QUEUES_RANGE = (1, 512)


@dataclass(frozen=True)
class RingPlan:
    driver: str
    line_rate_gbps: float
    stall_ms: float
    packet_bytes: int
    queues: int
    packets_in_stall: int
    rx: int
    tx: int
    rx_capped: bool
    tx_capped: bool
    rx_default: int
    tx_default: int
    memory_bytes: int
    default_memory_bytes: int
    # Set when the driver's RX default changed upstream: which default this plan assumes, and the other.
    default_note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "driver": self.driver,
            "rx": self.rx,
            "tx": self.tx,
            "rx_default": self.rx_default,
            "tx_default": self.tx_default,
            "packets_in_stall": self.packets_in_stall,
            "rx_capped_at_driver_max": self.rx_capped,
            "tx_capped_at_driver_max": self.tx_capped,
            "queues": self.queues,
            "memory_bytes": self.memory_bytes,
            "extra_memory_bytes": self.memory_bytes - self.default_memory_bytes,
        }

    def explain(self) -> str:
        if (self.rx, self.tx) == (self.rx_default, self.tx_default):
            chosen = "the driver's defaults, which already hold them"
        else:
            chosen = "the smallest sizes the driver accepts that hold them, never below its defaults"
        lines = [
            f"At {self.line_rate_gbps:g} Gb/s with {self.packet_bytes:,}-byte packets, {self.packets_in_stall:,} "
            f"packets arrive during a {self.stall_ms:g} ms receive stall.",
            f"{self.driver}: RX {self.rx:,} (default {self.rx_default:,}), TX {self.tx:,} "
            f"(default {self.tx_default:,}): {chosen}.",
        ]
        for direction, capped, value in (("RX", self.rx_capped, self.rx), ("TX", self.tx_capped, self.tx)):
            if capped:
                lines.append(
                    f"{direction} is capped at the driver max {value:,}: it rides out only "
                    f"{self.stall_ms * value / self.packets_in_stall:.2g} ms at this rate."
                )
        lines.append(
            f"Kernel memory for RX buffers on {self.queues} queue(s): {_mib(self.memory_bytes)} "
            f"({_signed_mib(self.memory_bytes - self.default_memory_bytes)} over the defaults)."
        )
        if self.default_note:
            lines.append(self.default_note)
        return "\n".join(lines)


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def _signed_mib(n: int) -> str:
    """A memory delta with its sign: ``+8.0 MiB``, ``-8.0 MiB``, ``0.0 MiB``."""
    sign = "+" if n > 0 else "-" if n < 0 else ""
    return sign + _mib(abs(n))


def ring_need(driver: catalog.NicDriver, direction: Direction, packets: int, *, floor: int = 0) -> Need:
    """What one ring of ``driver`` must hold for ``packets`` arriving in the stall (and a policy ``floor``): unset,
    the driver runs its default (the older one where it changed upstream: the conservative reading)."""
    if not driver.has_rings:
        raise SizingError("driver", driver.name, "a driver with NIC rings (hv_netvsc has none: tune its VF)")
    limits = driver.limits(direction)
    return Need(direction, packets, limits.default, limits.max, floor=floor, driver=driver)


def smallest_accepted(driver: catalog.NicDriver, direction: Direction, entries: int) -> tuple[int, bool]:
    """The ring to ask for so that ``entries`` fit (``Need.recommended``: the driver's default when that holds
    them, else the smallest ring the driver keeps that does), and whether its max was too small to hold them."""
    size = ring_need(driver, direction, entries).recommended
    return size, size < entries


def plan_rings(
    driver: str,
    line_rate_gbps: Number,
    *,
    stall_ms: Number = DEFAULT_STALL_MS,
    packet_bytes: int = DEFAULT_PACKET_BYTES,
    queues: int = DEFAULT_QUEUES,
) -> RingPlan:
    """RX/TX ring sizes for ``driver`` that absorb ``stall_ms`` of traffic at ``line_rate_gbps``."""
    from wirespeed import catalog  # the NIC facts live in the catalog; loaded on first use

    nic = catalog.nic_driver(driver)
    queues = check_whole("queues", queues, *QUEUES_RANGE)
    packets = packets_during(line_rate_gbps, packet_bytes, stall_ms)  # validates rate, size and stall
    rx, rx_capped = smallest_accepted(nic, "rx", packets)
    tx, tx_capped = smallest_accepted(nic, "tx", packets)
    # smallest_accepted raised for ring-less drivers, so both limits exist here.
    assert nic.rx is not None
    assert nic.tx is not None
    per_buffer = nic.rx_buffer_bytes
    note = ""
    if nic.rx.default_since is not None:
        newer = nic.rx.default_since
        note = (
            f"{nic.name}'s RX default is {nic.rx.default:,} before Linux {newer.kernel} and {newer.default:,} since "
            f"(also on distribution kernels that backported {newer.change.split()[0]}); this plan assumes "
            f"{nic.rx.default:,}. `ethtool -g` on the node shows which one it runs."
        )
    return RingPlan(
        driver=nic.name,
        line_rate_gbps=float(line_rate_gbps),
        stall_ms=float(stall_ms),
        packet_bytes=int(packet_bytes),
        queues=queues,
        packets_in_stall=packets,
        rx=rx,
        tx=tx,
        rx_capped=rx_capped,
        tx_capped=tx_capped,
        rx_default=nic.rx.default,
        tx_default=nic.tx.default,
        memory_bytes=rx * per_buffer * queues,
        default_memory_bytes=nic.rx.default * per_buffer * queues,
        default_note=note,
    )

"""Packet-rate arithmetic shared by ring and backlog sizing."""

from __future__ import annotations

from fractions import Fraction

from wirespeed.catalog._model import LINE_RATE_GBPS_RANGE as LINE_RATE_GBPS_RANGE  # re-exported: sizing speaks of it
from wirespeed.sizing.errors import check_whole
from wirespeed.sizing.exact import Number, ceil_div, check_decimal

# IEEE 802.3: each frame also occupies 14 B header + 4 B FCS + 8 B preamble/SFD + 12 B inter-frame gap on the
# wire, so a 1,500-byte IP packet takes 1,538 bytes of line time.
ETHERNET_OVERHEAD_BYTES = 38
DEFAULT_PACKET_BYTES = 1_500  # the common MTU-sized IP packet: the bulk-transfer case the field reports hit


# Validation bounds (wirespeed's): an IP packet size in bytes, a stall in milliseconds; the line rate's lives in the
# catalog, which its generators read.
PACKET_BYTES_RANGE = (64, 9_216)
STALL_MS_RANGE = (Fraction(1, 1000), 1_000)


def exact_packets_per_second(line_rate_gbps: Number, packet_bytes: int) -> Fraction:
    """Packets per second at line rate with packets of ``packet_bytes`` (IP length), as an exact fraction."""
    rate = check_decimal("line_rate_gbps", line_rate_gbps, *LINE_RATE_GBPS_RANGE)
    size = check_whole("packet_bytes", packet_bytes, *PACKET_BYTES_RANGE)
    return rate * 10**9 / ((size + ETHERNET_OVERHEAD_BYTES) * 8)


def packets_per_second(line_rate_gbps: Number, packet_bytes: int) -> float:
    """Packets per second a link delivers at line rate with packets of ``packet_bytes`` (for display)."""
    return float(exact_packets_per_second(line_rate_gbps, packet_bytes))


def packets_during(line_rate_gbps: Number, packet_bytes: int, stall_ms: Number) -> int:
    """Packets that arrive while the consumer stalls for ``stall_ms``: what a queue must hold to drop none.

    Exact: the rate and stall are read as the decimals they were written as, and the count is rounded up once.
    """
    stall = check_decimal("stall_ms", stall_ms, *STALL_MS_RANGE)
    packets = exact_packets_per_second(line_rate_gbps, packet_bytes) * stall / 1_000
    return max(1, ceil_div(packets.numerator, packets.denominator))


def next_power_of_two(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())

"""Packet-rate arithmetic shared by ring and backlog sizing."""

from __future__ import annotations

import math

from wirespeed.sizing.errors import check_range, check_whole

# IEEE 802.3: each frame also occupies 14 B header + 4 B FCS + 8 B preamble/SFD + 12 B inter-frame gap on the
# wire, so a 1,500-byte IP packet takes 1,538 bytes of line time.
ETHERNET_OVERHEAD_BYTES = 38
DEFAULT_PACKET_BYTES = 1_500  # the common MTU-sized IP packet: the bulk-transfer case the field reports hit


def packets_per_second(line_rate_gbps: float, packet_bytes: int) -> float:
    """Packets per second a link delivers at line rate with packets of ``packet_bytes`` (IP length)."""
    check_range("line_rate_gbps", line_rate_gbps, 0.001, 800)
    check_whole("packet_bytes", packet_bytes, 64, 9_216)
    return line_rate_gbps * 1e9 / ((packet_bytes + ETHERNET_OVERHEAD_BYTES) * 8)


def packets_during(line_rate_gbps: float, packet_bytes: int, stall_ms: float) -> int:
    """Packets that arrive while the consumer stalls for ``stall_ms``: what a queue must hold to drop none."""
    check_range("stall_ms", stall_ms, 0.001, 1_000)
    return max(1, math.ceil(packets_per_second(line_rate_gbps, packet_bytes) * stall_ms / 1_000))


def next_power_of_two(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())

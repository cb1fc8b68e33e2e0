"""How the plan prints a registered number or address."""

from __future__ import annotations

import ipaddress


def fmt(n: int | None) -> str:
    """A count with thousands separators, or "?" when it is unknown (unset, [secret], not a whole number)."""
    return "?" if n is None else f"{n:,}"


def address_order(address: str) -> tuple[int, int, str]:
    """Sort key for IP addresses: IPv4 before IPv6, each numerically (192.0.2.9 before 192.0.2.10); text last."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return (7, 0, address)
    return (ip.version, int(ip), address)

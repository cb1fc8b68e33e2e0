"""How the plan prints a registered number."""

from __future__ import annotations


def fmt(n: int | None) -> str:
    """A count with thousands separators, or "?" when it is unknown (unset, [secret], not a whole number)."""
    return "?" if n is None else f"{n:,}"

"""Errors the sizing engine raises. Every message names the field, the value and what is allowed."""

from __future__ import annotations


class SizingError(ValueError):
    """An input is outside what the cloud or kernel accepts."""

    def __init__(self, field: str, value: object, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field}: {value!r} is not allowed: {allowed}")


class InfeasibleError(ValueError):
    """The demand cannot be met with the resource; ``required`` and ``available`` are in the same unit."""

    def __init__(self, message: str, *, required: int, available: int, suggestion: str = ""):
        self.required = required
        self.available = available
        self.suggestion = suggestion
        super().__init__(message + (f"; {suggestion}" if suggestion else ""))


def check_whole(field: str, value: float, low: int, high: int) -> int:
    """A whole number in range (integral floats, as Pulumi sends them, are accepted)."""
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or not low <= value <= high:
        raise SizingError(field, value, f"must be a whole number between {low:,} and {high:,}")
    return int(value)

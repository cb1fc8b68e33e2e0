"""Errors the sizing engine raises. Every message names the field, the value and what is allowed."""

from __future__ import annotations

from wirespeed.errors import FieldError, UserError
from wirespeed.values import whole


class SizingError(FieldError):
    """An input is outside what the cloud or kernel accepts (``field``, ``value``, ``allowed``)."""


class InfeasibleError(UserError, ValueError):
    """The demand cannot be met with the resource; ``required`` and ``available`` are in the same unit.

    ``field`` is the quantity that falls short (``flows``, ``outbound IPs``): the message's leading label
    unless given, so front ends can name their own input for it.
    """

    def __init__(self, message: str, *, required: int, available: int, suggestion: str = "", field: str = ""):
        self.required = required
        self.available = available
        self.suggestion = suggestion
        self.field = field or (message.partition(": ")[0] if ": " in message else "")
        super().__init__(message + (f"; {suggestion}" if suggestion else ""))


def check_whole(field: str, value: float, low: int, high: int) -> int:
    """A whole number in range (integral floats, as Pulumi sends them, are accepted)."""
    number = whole(value)
    if number is None or not low <= number <= high:
        raise SizingError(field, value, f"must be a whole number between {low:,} and {high:,}")
    return number

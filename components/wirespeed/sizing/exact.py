"""Exact decimal arithmetic for sizing inputs.

A user who types ``1.36`` means 136/100, not the binary float nearest to it (1.3600000000000000977...).
Multiplying floats and rounding up then lands one step too high whenever the exact product is a whole
number or a multiple of 8 (``1.36 x 240 x 1.25`` is exactly 408, in floats 408.00000000000006). So every
input that feeds a rounding is turned into a :class:`~fractions.Fraction` of the decimal the user wrote,
and every comparison and rounding is done on fractions or integers.

A float is read through ``str()``: Python prints the shortest decimal that round-trips, which is what the
user typed unless they typed more than 17 significant digits.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from wirespeed.sizing.errors import SizingError

Number = int | float | Fraction | Decimal


def exact(value: Number) -> Fraction:
    """The exact value of ``value`` as the decimal it was written as; ValueError for NaN or infinity."""
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction | Decimal):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not a finite number")
        return Fraction(str(value))
    return Fraction(value)


def decimal_text(value: Fraction) -> str:
    """``value`` written as a decimal without a trailing ``.0`` (``64.4``, ``200``, ``1,000``); exact when
    the decimal terminates, otherwise 6 significant digits."""
    for digits in range(16):
        scaled = value * 10**digits
        if scaled.denominator == 1:
            whole, frac = divmod(abs(scaled.numerator), 10**digits)
            sign = "-" if value < 0 else ""
            return f"{sign}{whole:,}" + (f".{frac:0{digits}d}" if digits else "")
    return f"{float(value):,.6g}"


def check_decimal(field: str, value: object, low: Number, high: Number, unit: str = "") -> Fraction:
    """``value`` as an exact fraction, or :class:`SizingError` unless it is a finite number in [low, high]."""
    lo, hi = exact(low), exact(high)
    allowed = f"must be between {decimal_text(lo)}{unit} and {decimal_text(hi)}{unit}"
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction | Decimal):
        raise SizingError(field, value, allowed)
    try:
        x = exact(value)
    except (ValueError, ArithmeticError):  # NaN or infinity (Decimal raises InvalidOperation, an ArithmeticError)
        raise SizingError(field, value, allowed) from None
    if not lo <= x <= hi:
        raise SizingError(field, value, allowed)
    return x


def ceil_div(numerator: int, denominator: int) -> int:
    """Integer ceiling of ``numerator / denominator`` for a positive denominator."""
    return -(-numerator // denominator)


def round_up_to_multiple(value: int, step: int) -> int:
    return ceil_div(value, step) * step

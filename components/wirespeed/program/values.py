"""Reading registered values: Pulumi sends every number as a float and nests optional objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def num(value: object) -> int | None:
    """Pulumi sends every number as a float: whole ones back to int; anything else (unset, [secret]) None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def get(data: Mapping[str, Any] | None, *path: str) -> Any:
    node: Any = data
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def plain_numbers(value: Any) -> Any:
    """Integral floats as ints, recursively, so JSON and text show 4000 rather than 4000.0."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: plain_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_numbers(v) for v in value]
    return value


def fmt(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"

"""Terraform values as the rules read them: planned values with their unknowns marked, and nested blocks.

Values Representation (``JSON_FORMAT_DOC``): attribute values as JSON, nested blocks as arrays of objects
(``default_node_pool: [{...}]``); a value known only after apply is ``true`` at its place in ``after_unknown``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wirespeed.values import UNKNOWN

Props = dict[str, Any]


def planned(after: Any, unknown: Any) -> Any:
    """``change.after`` with every value ``after_unknown`` marks replaced by the unknown sentinel."""
    if unknown is True:
        return UNKNOWN
    if isinstance(after, dict):
        marks = unknown if isinstance(unknown, dict) else {}
        merged = {key: planned(value, marks.get(key)) for key, value in after.items()}
        for key, mark in marks.items():
            if key not in merged and mark is not False:
                merged[key] = planned(None, mark)
        return merged
    if isinstance(after, list):
        items = unknown if isinstance(unknown, list) else []
        return [planned(value, items[i] if i < len(items) else None) for i, value in enumerate(after)]
    if after is None and isinstance(unknown, dict | list) and unknown:
        return planned({} if isinstance(unknown, dict) else [None] * len(unknown), unknown)
    return after


def known_text(value: Any) -> str | None:
    return value if isinstance(value, str) and value != UNKNOWN else None


def clean(props: Props) -> Props:
    """Absent attributes left out, as a Pulumi resource omits inputs it was not given."""
    cleaned: Props = {}
    for key, value in props.items():
        if isinstance(value, dict):
            value = clean(value)
            if not value:
                continue
        if value is not None:
            cleaned[key] = value
    return cleaned


def ids(value: Any) -> Any:
    """A list of resource ids as the ARM shape's ``[{"id": ...}]``."""
    if value == UNKNOWN or not isinstance(value, list):
        return value if value == UNKNOWN else None
    return [{"id": item} for item in value]


def blocks(value: Any, convert: Callable[[Any], Any]) -> Any:
    """A repeated nested block (``container``, ``volume``) converted item by item; unknown stays unknown."""
    if value == UNKNOWN:
        return UNKNOWN
    return [convert(item) for item in value] if isinstance(value, list) and value else None


def repeated(block: Any, key: str) -> Any:
    """A repeated nested block inside a single one, whole (``at`` would give its first item)."""
    if block == UNKNOWN:
        return UNKNOWN
    if isinstance(block, list):
        block = block[0] if block else None
    return block.get(key) if isinstance(block, dict) else None

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


def has_unknown(value: Any) -> bool:
    """Whether the unknown sentinel is anywhere in ``value`` (a planned resource's values)."""
    if value == UNKNOWN:
        return True
    if isinstance(value, dict):
        return any(has_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(has_unknown(v) for v in value)
    return False


# The keys of one attribute's expression (Configuration Representation: ``constant_value`` or ``references``);
# a nested block's expressions are keyed by its attribute names instead.
_EXPRESSION_KEYS = frozenset({"constant_value", "references"})


def _is_attribute(expression: Any) -> bool:
    return isinstance(expression, dict) and set(expression) <= _EXPRESSION_KEYS


def settle(values: Any, expressions: Any) -> Any:
    """Planned values with the unknowns the configuration never wrote replaced by None (absent).

    ``expressions`` is the resource's (or a block's) ``expressions`` from the plan's ``configuration``: an
    Optional+Computed attribute or block nobody wrote (azurerm's ``network_profile.load_balancer_profile``) is
    ``true`` in ``after_unknown`` yet absent there, so the provider picks it: the rules read it as unset and judge
    the provider's default, as they judge a Pulumi resource that omits the input. An unknown the configuration
    writes (an expression with ``references``) stays unknown. ``expressions`` None (no configuration, or not this
    resource's, or a block written by a ``dynamic`` block, which the Configuration Representation leaves out):
    every unknown stays unknown, since nothing says who wrote it.

    One case reads as not written though it was: a ``dynamic`` block whose ``for_each`` is itself unknown makes
    the whole block unknown and is absent from ``configuration`` (terraform internal/command/jsonconfig
    expression.go ``marshalExpressions`` ignores ``dynamic``). It is judged as the provider's default, so the
    error is a finding the apply might not need, never a pass.
    """
    if not isinstance(expressions, dict) or not isinstance(values, dict):
        return values
    settled: dict[str, Any] = {}
    for key, value in values.items():
        written = expressions.get(key)
        if written is None:
            # Not written here: an unknown is the provider's own value; a known block came from a dynamic block
            # (left out of configuration), whose own unknowns stay unknown.
            settled[key] = None if value == UNKNOWN else value
        elif _is_attribute(written) or value == UNKNOWN:
            settled[key] = value  # written: its unknowns are the configuration's, known only after apply
        elif isinstance(value, list) and isinstance(written, list):
            settled[key] = [settle(item, written[i] if i < len(written) else None) for i, item in enumerate(value)]
        elif isinstance(value, dict) and isinstance(written, dict):
            settled[key] = settle(value, written)  # a NestingSingle block
        else:
            settled[key] = value
    return settled


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

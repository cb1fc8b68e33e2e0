"""The words of a refused input, worded once in ``data/message_table.json`` and read by both languages.

The Python side (the profile model's problems, every JSON input's "did you mean" and quoted-number fix) and the node
agent (``agent/internal/profile``, which embeds a byte-equal copy ``make regen`` writes) fill the same templates, so
the agent refuses a profile in the words ``wirespeed profile validate`` uses without a hand-ported copy of them.
``tests/vectors/profiles.json`` holds the exact messages both must give.

A template names its fields in braces (``{value} is not allowed: {allowed}``); :func:`say` fills every one and
refuses a template or field it does not know, so a renamed field fails loudly on both sides.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

TABLE_FILE = "message_table.json"
_FIELD = re.compile(r"\{([a-z_]+)\}")


def _load() -> dict[str, Any]:
    table: dict[str, Any] = json.loads(resources.files("wirespeed").joinpath("data", TABLE_FILE).read_text())
    return table


TABLE = _load()
TEMPLATES: Mapping[str, str] = TABLE["templates"]
TYPE_WORDS: Mapping[str, str] = TABLE["type_words"]
"""A JSON type in words, for "must be ...": ``integer`` is "a whole number"."""
TYPE_SEPARATOR: str = TABLE["type_separator"]
LIST_SEPARATOR: str = TABLE["list_separator"]
SUGGEST_WITHIN_EDITS: int = TABLE["suggest_within_edits"]
"""A name this many edits or fewer from a known one is suggested as the one meant (both languages' bound)."""


def say(template: str, **fields: object) -> str:
    """``template`` (a key of the table's templates) with each ``{field}`` filled from ``fields``, all of them."""
    text = TEMPLATES[template]
    wanted = set(_FIELD.findall(text))
    if wanted != set(fields):
        raise KeyError(f"message {template!r} takes {sorted(wanted)}, given {sorted(fields)}")
    return _FIELD.sub(lambda match: str(fields[match[1]]), text)


def plural(count: int, noun: str) -> str:
    """``1 item``, ``2 items``: a count with its noun from the table."""
    one, many = TABLE["nouns"][noun]
    return f"{count} {one if count == 1 else many}"


def must_be_types(*json_types: str) -> str:
    """JSON types in words: ``must be a whole number``, ``must be a string or null``."""
    return say("must_be", what=TYPE_SEPARATOR.join(TYPE_WORDS.get(t, t) for t in json_types))


NUMBER_WORDS = (must_be_types("integer"), must_be_types("number"))
"""What a number field says it must be; a string there gets quoted_number's fix (write it without quotes)."""

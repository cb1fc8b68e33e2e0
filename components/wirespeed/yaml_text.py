"""YAML that every reader reads back as it was written: the one emitter wirespeed writes YAML with.

kubectl reads manifests with sigs.k8s.io/yaml, which resolves plain scalars as go-yaml v2 does (YAML 1.1 and more:
``1e3`` is a float there, ``0o7`` and ``1_000`` ints, ``y`` a boolean); other tools read YAML 1.2's core schema
(``0o7`` an int, ``1e3`` a float), and PyYAML reads YAML 1.1 without either. PyYAML's SafeDumper quotes a string
only when PyYAML itself would read it as something else, so a profile named ``1e3`` was written as the plain
scalar ``wirespeed.io/profile: 1e3``: a number to kubectl, and its apply failed.

So a string is left to the emitter's choice (plain where the syntax allows) only when no YAML 1.1 or 1.2 reader can
read it as anything but a string, and quoted otherwise. The rule is the conservative one, not a list of the number
and date forms each reader knows: every implicit non-string type in YAML 1.1 (yaml.org/type: bool, float, int,
merge, null, timestamp, value), in YAML 1.2's core and JSON schemas (yaml.org/spec/1.2.2, 10.2 and 10.3) and in
go-yaml v2 (its resolve table and strconv parsing) begins with a digit, a sign, ``.``, ``~``, ``<`` or ``=``, except
the boolean and null words below, and none begins with two signs. A string that starts with an ASCII letter, ``/``
(a path) or ``--`` (a command-line flag) and is not one of those words is a string to all of them; any other string
is quoted, whether or not some reader would have needed it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

# The words a YAML reader reads as a boolean or null though they start with a letter, compared in lower case (so
# odd spellings such as "yEs" are quoted too): YAML 1.1's bool (yaml.org/type/bool.html: y, n, yes, no, true, false,
# on, off) and null (yaml.org/type/null.html), which YAML 1.2's core schema narrows to true, false and null. inf and
# nan (no leading dot) are no YAML type, but a reader that hands a plain scalar to a float parser (Go's
# strconv.ParseFloat, Python's float) reads them as numbers.
LETTER_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null", "inf", "infinity", "nan"})


def plain_is_a_string(value: str) -> bool:
    """True when every YAML 1.1 and 1.2 reader reads ``value``, written as a plain scalar, as this string."""
    first = value[:1]
    safe_start = (first.isascii() and first.isalpha()) or first == "/" or value.startswith("--")
    return safe_start and value.lower() not in LETTER_WORDS


class Dumper(yaml.SafeDumper):
    """SafeDumper that quotes every string some YAML reader would read as another type, and writes multi-line
    strings as ``|`` blocks (a block scalar is a string to every reader), so a profile reads as JSON in a review."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        style: str | None = "|"
    elif plain_is_a_string(value):
        style = None  # the emitter's choice: plain unless the syntax needs quotes
    else:
        style = "'"  # the emitter still switches to double quotes for characters single quotes cannot carry
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


Dumper.add_representer(str, _str)


def dump(document: Any, **options: Any) -> str:
    """One document, with :class:`Dumper`."""
    text: str = yaml.dump(document, Dumper=Dumper, **options)
    return text


def dump_all(documents: Sequence[Any], **options: Any) -> str:
    """Documents separated by ``---``, with :class:`Dumper`."""
    text: str = yaml.dump_all(documents, Dumper=Dumper, **options)
    return text

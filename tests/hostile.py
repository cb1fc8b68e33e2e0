"""Hypothesis strategies for near-valid hostile input, and the CLI's exit-code contract, for the test_props_*.py
property tests.

Random junk stops at the first parser; a valid document with one to four mutations reaches the code behind it.
:func:`mutated` takes a valid document and, at random depths, changes a value's type (a number to a string, a
list, an object), drops a key, adds an unknown one, or puts in an edge value: huge integers, floats past 1e308,
NaN and infinities (written as the non-standard tokens Python's json.dumps emits, which a strict reader must
refuse), an empty container, or a value nested thousands deep.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Bounded and reproducible: the same examples in every run (CI, a developer's machine), no per-example deadline
# (speed is measured in bench/, never asserted: a loaded 2-core machine would fail it at random).
BOUNDED = settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


def bounded(max_examples: int) -> settings:
    return settings(BOUNDED, max_examples=max_examples)


DEEP = 5_000  # deeper than Python's default recursion limit (1,000): a recursive walk would overflow

edge_numbers = st.sampled_from(
    [0, -1, 1, 7, 8, 999, 1_000, 1_001, 1_024, 16_383, 16_384, 64_000, 64_001, 3_240_000, 3_240_001, 2**31, 2**63,
     10**30, -(10**30), 0.5, 1.5, -0.0, 1e308, 1e-308, math.nan, math.inf, -math.inf]
)  # fmt: skip
edge_strings = st.sampled_from(
    ["", " ", "1000", "1e1", "1e1%", "10%", "nan", "NaN", "inf", "-1", "0x10", "1_000", "\u0661\u0660",  # Arabic 10
     "[", "*", "../etc/passwd", "\x00", "\ufeff", "é", "a" * 300, "true", "null", "{}", "[secret]"]
)  # fmt: skip
scalars = st.one_of(
    st.none(),
    st.booleans(),
    edge_numbers,
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    edge_strings,
    st.text(max_size=10),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def nested(depth: int, leaf: Any = 1) -> Any:
    value: Any = leaf
    for _ in range(depth):
        value = [value]
    return value


def _retyped(value: Any) -> st.SearchStrategy[Any]:
    """The same value as another JSON type: what a hand-written file or an odd provider puts there."""
    options: list[Any] = [str(value), [value], {"value": value}, None]
    if isinstance(value, bool | int | float) and not isinstance(value, bool):
        options += [float(value) if isinstance(value, int) else value, -value, value * 1000, f"{value}%"]
    if isinstance(value, str):
        options += [value.upper(), value + "x", value[:-1], 1]
    return st.sampled_from(options)


@st.composite
def mutated(draw: st.DrawFn, document: Any, max_mutations: int = 4) -> Any:
    """``document`` (left untouched) with 1..``max_mutations`` changes at random depths."""
    doc = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, max_mutations))):
        doc = _mutate_once(draw, doc)
    return doc


def _mutate_once(draw: st.DrawFn, doc: Any) -> Any:
    holder: Any = None
    key: Any = None
    node = doc
    # Walk down: each step continues into a child with probability 3/4, so deep fields are reached often.
    while isinstance(node, dict | list) and node and draw(st.integers(0, 3)) > 0:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        holder, key = node, draw(st.sampled_from(keys))
        node = node[key]
    kind = draw(st.sampled_from(["retype", "edge", "edge", "drop", "add", "deep", "any"]))
    if kind == "retype":
        replacement = draw(_retyped(node))
    elif kind == "edge":
        replacement = draw(st.one_of(edge_numbers, edge_strings))
    elif kind == "deep":
        replacement = nested(100, node)  # deeper nesting is spliced into the encoded bytes (deep_inside)
    elif kind == "any":
        replacement = draw(json_values)
    elif kind == "add" and isinstance(node, dict):
        node[draw(st.sampled_from(["", "extra", "name", "type", "items", "\u0000"]))] = draw(json_values)
        return doc
    elif kind == "drop" and isinstance(holder, dict):
        del holder[key]
        return doc
    else:
        replacement = draw(json_values)
    if holder is None:
        return replacement
    holder[key] = replacement
    return doc


def encode(document: Any) -> bytes:
    """JSON as a file holds it; NaN and infinities as the non-standard tokens Python's encoder writes."""
    try:
        return json.dumps(document).encode()
    except RecursionError:  # nested past the encoder's own limit: build the text by hand
        return b"[" * DEEP + b"1" + b"]" * DEEP


@st.composite
def deep_inside(draw: st.DrawFn, data: bytes) -> bytes:
    """``"key": VALUE`` somewhere in the encoded document made ``"key": [[[...1]]], "zz": VALUE``: still valid JSON,
    nested :data:`DEEP` levels at a real field (Python objects that deep cannot even be printed by hypothesis)."""
    starts = [i for i in range(len(data) - 1) if data[i : i + 2] == b'":']
    if not starts:
        return b"[" * DEEP + data + b"]" * DEEP
    at = draw(st.sampled_from(starts)) + 2
    return data[:at] + b" " + b"[" * DEEP + b"1" + b"]" * DEEP + b', "zz":' + data[at:]


def file_bytes(valid: list[Any]) -> st.SearchStrategy[bytes]:
    """Bytes of a file a command reads: mostly mutated valid documents, some broken encodings and plain junk."""
    as_json = st.sampled_from(valid).flatmap(mutated).map(encode)
    return st.one_of(
        as_json,
        as_json,
        as_json,
        st.sampled_from(valid).map(encode),
        st.sampled_from(valid).map(encode).flatmap(deep_inside),
        as_json.map(lambda data: b"\xff\xfe" + data),  # not UTF-8 (a UTF-16 byte-order mark)
        as_json.map(lambda data: data[: len(data) // 2]),  # cut off mid-document
        st.binary(max_size=64),
        st.just(b"[" * 100_000),
        st.just(b"9" * 5_000),  # past Python's int-string digit limit
        json_values.map(encode),
    )


# --- the exit-code contract ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    returncode: int
    stdout: str
    stderr: str


def assert_exit_contract(
    argv: list[str], out: Outcome, *, verdict_exit_1: bool = False, lists_every_problem: bool = False
) -> None:
    """docs/sizing.md's promise: exit 0, 1 (only a command whose verdict it is: ``check``) or 2; never a traceback;
    on exit 2 stderr is exactly one ``error:`` line, or for a validator (``profile validate``) one ``error:`` header
    and an indented line per problem, and nothing else."""
    allowed = {0, 1, 2} if verdict_exit_1 else {0, 2}
    assert out.returncode in allowed, (argv, out.returncode, out.stderr[-2000:])
    assert "Traceback" not in out.stdout + out.stderr, (argv, out.stderr[-2000:])
    if out.returncode == 1:
        assert out.stdout, argv  # the verdict is printed
    if out.returncode != 2:
        return
    lines = out.stderr.splitlines()
    assert lines, (argv, "exit 2 without an error line")
    assert out.stderr.endswith("\n"), (argv, out.stderr)
    headers = [line for line in lines if line.startswith("error: ")]
    # One `error:` header; a command that lists problems puts one indented line under it for each.
    assert len(headers) == 1, (argv, out.stderr)
    assert lines[0] == headers[0], (argv, out.stderr)
    assert all(line.startswith("  ") and line.strip() for line in lines[1:]), (argv, out.stderr)
    if not lists_every_problem:
        assert lines == headers, (argv, out.stderr)
    assert len(lines[0]) > len("error: "), (argv, out.stderr)


def as_outcome(result: Mapping[str, Any] | Any) -> Outcome:
    return Outcome(result.returncode, result.stdout, result.stderr)

"""Walk a large JSON document member by member, decoding only the values asked for, one at a time.

``json.loads`` on a 200,000-resource stack export builds every resource as Python objects at once (several
times the file's size); a check needs one resource at a time. The stdlib decoder's ``raw_decode`` decodes one
value at a given position in C, so this walker steps through the outer objects and arrays by hand and hands
each value it is asked for to the decoder. Syntax errors are ``json.JSONDecodeError`` with the stdlib's
wording and position, wherever they are found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from json.decoder import scanstring  # type: ignore[attr-defined]  # public since 2.6, not in typeshed
from typing import Any

_WHITESPACE = re.compile(r"[ \t\n\r]*")  # RFC 8259 section 2: the only insignificant whitespace

# Every number a float: the policy engine hands rules numbers as floats (the engine marshals properties into a
# google.protobuf.Struct, whose numbers are doubles: pulumi/pulumi v3.276.0 sdk/go/common/resource/plugin/
# analyzer_plugin.go; pulumi-policy's Python SDK reads it with json_format.MessageToDict, pulumi_policy/policy.py),
# and parse_int=float also turns a 5,000-digit integer into inf instead of failing on Python's digit limit.
_DECODER = json.JSONDecoder(parse_int=float)


class JsonCursor:
    """A position in a JSON text. Iterate ``members()`` or ``items()``; for each one, consume its value with
    ``value()`` or a nested ``members()``/``items()`` before asking for the next."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = _WHITESPACE.match(text, 0).end()  # type: ignore[union-attr]  # [..]* always matches

    def peek(self) -> str:
        """The first character of the next value ("" at the end of the text)."""
        return self.text[self.pos : self.pos + 1]

    def value(self) -> Any:
        """Decode the value at the cursor (numbers as floats) and step past it."""
        result, end = _DECODER.raw_decode(self.text, self.pos)
        self.pos = _WHITESPACE.match(self.text, end).end()  # type: ignore[union-attr]
        return result

    def members(self) -> Iterator[str]:
        """The keys of the object at the cursor, in document order."""
        self._expect("{", "Expecting '{'")
        if self.peek() == "}":
            self._step()
            return
        while True:
            if self.peek() != '"':
                raise self._error("Expecting property name enclosed in double quotes", self.pos)
            key, end = scanstring(self.text, self.pos + 1)
            self.pos = end
            self._skip_whitespace()
            self._expect(":", "Expecting ':' delimiter")
            start = self.pos
            yield key
            if self.pos == start:  # the caller did not consume the value: a bug here, not bad input
                raise AssertionError(f"value of {key!r} at char {start} was not consumed")
            if self.peek() == ",":
                self._step()
                continue
            if self.peek() == "}":
                self._step()
                return
            raise self._error("Expecting ',' delimiter", self.pos)

    def items(self) -> Iterator[int]:
        """The indexes of the array at the cursor."""
        self._expect("[", "Expecting '['")
        if self.peek() == "]":
            self._step()
            return
        index = 0
        while True:
            start = self.pos
            yield index
            if self.pos == start:
                raise AssertionError(f"item {index} at char {start} was not consumed")
            if self.peek() == ",":
                self._step()
                index += 1
                continue
            if self.peek() == "]":
                self._step()
                return
            raise self._error("Expecting ',' delimiter", self.pos)

    def end(self) -> None:
        """Fail unless only whitespace is left, as ``json.loads`` does."""
        if self.pos != len(self.text):
            raise self._error("Extra data", self.pos)

    def _expect(self, char: str, message: str) -> None:
        if self.peek() != char:
            raise self._error(message, self.pos)
        self._step()

    def _step(self) -> None:
        self.pos += 1
        self._skip_whitespace()

    def _skip_whitespace(self) -> None:
        self.pos = _WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def _error(self, message: str, pos: int) -> json.JSONDecodeError:
        return json.JSONDecodeError(message, self.text, pos)

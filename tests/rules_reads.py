"""What a rule reads, recorded: resource props wrapped in read-only views that log every key a rule looks up,
in the path form ``Rule.reads`` declares (``agentPoolProfiles[].vmSize``, ``data["profile.json"]``).

The views stand in front of what the engine hands a rule (the SDK's read-only proxy over wire values, every number
a float: pulumi/pulumi-policy v1.21.0 sdk/python/lib/pulumi_policy/proxy.py and policy.py, which reads the engine's
google.protobuf.Struct with json_format.MessageToDict): they are ``collections.abc`` Mapping and Sequence like the
SDK's, so the rules take the same paths through ``wirespeed.values`` as under the engine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_STEP = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_]*)|\[("(?:[^"\\]|\\.)*")\]|(\[\])|\.(\*)')
ITEMS = "[]"  # every item of an array
ANY_KEY = "*"  # every key of a mapping (a rule that iterates one)


def step(path: str, key: str) -> str:
    """``path`` one key deeper: ``.name`` for a plain name, ``["a.b/c"]`` otherwise."""
    if _NAME.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def steps(path: str) -> list[str]:
    """The keys of a declared path (``ITEMS`` for ``[]``, ``ANY_KEY`` for ``.*``); ValueError if not well formed."""
    found, at = [], 0
    while at < len(path):
        match = _STEP.match(path, at)
        if match is None or (at == 0 and path.startswith(".")):
            raise ValueError(f"{path!r}: not a property path at {path[at:]!r}")
        name, quoted, items, _ = match.groups()
        found.append(name or (json.loads(quoted) if quoted else ITEMS if items else ANY_KEY))
        at = match.end()
    return found


def covers(declared: str, read: str) -> bool:
    """Whether reading ``read`` is part of reading ``declared``: the same path, or a container on its way."""
    return declared == read or (declared.startswith(read) and declared[len(read)] in ".[")


def wrap(value: Any, path: str, log: set[str]) -> Any:
    if isinstance(value, Mapping):
        return Recording(value, path, log)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return RecordingList(value, path, log)
    return value


class Recording(Mapping[str, Any]):
    """A read-only mapping that logs the path of every key looked up (present or not) into ``log``."""

    def __init__(self, target: Mapping[str, Any], path: str, log: set[str]) -> None:
        self._target, self._path, self._log = target, path, log

    def __getitem__(self, key: str) -> Any:
        where = step(self._path, key)
        self._log.add(where)
        return wrap(self._target[key], where, self._log)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self._log.add(step(self._path, key))
        return key in self._target

    def __iter__(self) -> Iterator[str]:
        self._log.add(f"{self._path}.{ANY_KEY}" if self._path else ANY_KEY)
        return iter(self._target)

    def __len__(self) -> int:
        return len(self._target)


class RecordingList(Sequence[Any]):
    """A read-only sequence that logs ``path[]`` when an item is read."""

    def __init__(self, target: Sequence[Any], path: str, log: set[str]) -> None:
        self._target, self._path, self._log = target, path, log

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return RecordingList(self._target[index], self._path, self._log)
        where = f"{self._path}{ITEMS}"
        self._log.add(where)
        return wrap(self._target[index], where, self._log)

    def __len__(self) -> int:
        return len(self._target)


def present(value: Any, keys: Sequence[str]) -> bool:
    """Whether some value (not None) sits at ``keys`` below ``value`` (``ITEMS``: any item; ``ANY_KEY``: any key)."""
    if not keys:
        return value is not None
    head, rest = keys[0], keys[1:]
    if head == ITEMS:
        items = value if isinstance(value, Sequence) and not isinstance(value, str | bytes) else ()
        return any(present(item, rest) for item in items)
    if not isinstance(value, Mapping):
        return False
    if head == ANY_KEY:
        return any(present(value[key], rest) for key in value)
    return head in value and present(value[head], rest)

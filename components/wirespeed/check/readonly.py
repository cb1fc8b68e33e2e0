"""Resource properties as the policy engine hands them to rules: read-only mappings, every number a float.

``pulumi_policy`` wraps what the engine sends in ``_DictProxy``/``_ListProxy`` (read-only
``collections.abc.Mapping``/``Sequence``: pulumi/pulumi-policy v1.21.0 sdk/python/lib/pulumi_policy/proxy.py);
numbers arrive as floats because the engine marshals properties into ``google.protobuf.Struct`` (pulumi/pulumi
v3.276.0 sdk/go/common/resource/plugin/analyzer_plugin.go, ``MarshalProperties``), whose numbers are doubles
(observed: tests/engine/test_engine_differential.py runs the same rules under the real engine and agrees). The readers
decode numbers as floats already (``jsonscan``); these views add the read-only wrapping lazily, one level at a time
as a rule reads deeper, so a 200,000-resource export costs nothing for the properties no rule looks at.

What the engine would have resolved before a policy runs is resolved here too: a secret written with
``--show-secrets`` (``{"4dabf...": "1b47...", "plaintext": "<JSON text>"}``) reads as its value, and so does an
encrypted one (``"ciphertext"``) when the document's :class:`~wirespeed.check.secrets.StackSecrets` can decrypt it
(a passphrase stack with the passphrase given). Otherwise it reads as ``[secret]``, the string the engine hands
policies when it cannot decrypt (:data:`wirespeed.values.BLINDED_SECRET`): a rule that needs it reports that it
could not be checked. Unknown sentinels (``04da6b54-...``) are passed through as the strings they are, as they
are in the documents the engine reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

from wirespeed.values import BLINDED_SECRET, SECRET_SIG, SIG_KEY

if TYPE_CHECKING:
    from wirespeed.check.secrets import StackSecrets

_DECODER = json.JSONDecoder(parse_int=float)


def view(value: Any, secrets: StackSecrets | None = None) -> Any:
    """``value`` (decoded JSON) as a rule may see it: containers wrapped read-only, secrets resolved."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return _secret(value, secrets)
        return ReadOnlyMapping(value, secrets)
    if isinstance(value, list):
        return ReadOnlyList(value, secrets)
    return value


def _secret(value: dict[str, Any], secrets: StackSecrets | None) -> Any:
    """A secret's value. One that is neither plaintext nor ciphertext, or whose plaintext is not JSON, is not what
    Pulumi writes (pkg/resource/stack/deployment.go: "malformed secret value"; the engine refuses such a stack), so
    it is :class:`~wirespeed.check.secrets.SecretsError` (exit 2), never an unknown that makes a rule not apply."""
    from wirespeed.check.secrets import SecretsError

    plaintext = value.get("plaintext")
    if not isinstance(plaintext, str):
        ciphertext = value.get("ciphertext")
        if not isinstance(ciphertext, str):
            raise SecretsError("a secret value: malformed, neither a plaintext nor a ciphertext string")
        plaintext = secrets.decrypt(ciphertext) if secrets is not None else None
        if plaintext is None:
            return BLINDED_SECRET
    try:
        return view(_DECODER.decode(plaintext), secrets)
    except (ValueError, RecursionError):
        raise SecretsError(
            f"a secret value: its plaintext is not JSON, or nested past the parser's limit ({plaintext[:40]!r})"
        ) from None


class ReadOnlyMapping(Mapping[str, Any]):
    """A read-only view of a decoded JSON object; nested objects and arrays come back as views too."""

    __slots__ = ("_secrets", "_target")

    def __init__(self, target: dict[str, Any], secrets: StackSecrets | None = None) -> None:
        self._target = target
        self._secrets = secrets

    def __getitem__(self, key: str) -> Any:
        return view(self._target[key], self._secrets)

    def __iter__(self) -> Iterator[str]:
        return iter(self._target)

    def __len__(self) -> int:
        return len(self._target)

    def __contains__(self, key: object) -> bool:
        return key in self._target

    def __repr__(self) -> str:
        return f"ReadOnlyMapping({self._target!r})"


class ReadOnlyList(Sequence[Any]):
    """A read-only view of a decoded JSON array."""

    __slots__ = ("_secrets", "_target")

    def __init__(self, target: list[Any], secrets: StackSecrets | None = None) -> None:
        self._target = target
        self._secrets = secrets

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return ReadOnlyList(self._target[index], self._secrets)
        return view(self._target[index], self._secrets)

    def __len__(self) -> int:
        return len(self._target)

    def __repr__(self) -> str:
        return f"ReadOnlyList({self._target!r})"


EMPTY: Mapping[str, Any] = ReadOnlyMapping({})

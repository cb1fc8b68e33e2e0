"""Reading nested values the way Pulumi and Terraform hand them over, without ever crashing a reader: the one home
for nested gets, whole numbers and unknowns, used by the rules, `wirespeed check` and `wirespeed plan`.

Property values arrive as read-only Mappings and Sequences (``pulumi_policy.proxy``), every number a float,
and, during preview, some values unknown. The SDK's proxy raises ``UnknownValueError`` when an unknown value is
read; plain documents (a preview file, raw remediation props) hold the sentinel strings themselves. Both become
:class:`NotKnown` here, which the rules engine turns into "not applicable": a rule never guesses at an unknown
value. Terraform's JSON nests a single block as a one-item array and marks unknowns separately; :func:`at` reads
it once :mod:`wirespeed.check.terraform` has put the unknown sentinel in their place. Pure: imports nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

# Pulumi's property-value signatures (pulumi/pulumi sdk/go/common/resource/sig, mirrored in every SDK's rpc
# module, e.g. sdk/python/lib/pulumi/runtime/rpc.py _special_sig_key / _special_secret_sig): a mapping whose
# SIG_KEY holds SECRET_SIG is a secret. Wire-format constants.
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
# The sentinel the SDKs serialise every unknown value as (pulumi sdk/python/lib/pulumi/runtime/rpc.py UNKNOWN) and
# pkg/resource/stack/deployment.go writes for a computed value in an export.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
# The sentinels Pulumi puts in place of values that are unknown during preview (pulumi/pulumi
# sdk/go/common/resource/plugin/rpc.go UnknownBoolValue..UnknownObjectValue; the same strings in
# pulumi_policy/proxy.py UNKNOWN_*_VALUE). Part of Pulumi's wire protocol, so fixed across versions.
UNKNOWN_SENTINELS = frozenset(
    {
        "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",  # boolean
        "3eeb2bf0-c639-47a8-9e75-3b44932eb421",  # number
        UNKNOWN,  # string
        "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",  # array
        "030794c1-ac77-496b-92df-f27374a8bd58",  # asset
        "e48ece36-62e2-4504-bad9-02848725956a",  # archive
        "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",  # object
    }
)


# What the engine hands a policy in place of a secret it cannot decrypt (pulumi/pulumi
# pkg/backend/secrets/providers.go, BlindingProvider; sdk/go/common/resource/config/crypt.go BlindingCrypter), and
# what `pulumi preview --json` prints for every secret (pkg/backend/display/json.go). A rule cannot judge it.
BLINDED_SECRET = "[secret]"
_SIGNALS = UNKNOWN_SENTINELS | {BLINDED_SECRET}


class SecretNotReadable(Exception):  # noqa: N818 - a signal, not an error
    """A value the rule needs is a secret nobody decrypted (``path`` says which): the rule could not be checked.
    Unlike :class:`NotKnown` this is never "not applicable": a gate must not pass what it could not read."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


class NotKnown(Exception):  # noqa: N818 - a signal, not an error
    """A value the rule needs is unknown until the update runs (``path`` says which)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _is_unknown_error(exc: BaseException) -> bool:
    # pulumi_policy.proxy.UnknownValueError carries the sentinel it met; matched by that attribute so the pure
    # core never imports the SDK.
    return getattr(exc, "unknown_type_sentinel", None) in UNKNOWN_SENTINELS


def _known(value: Any, path: str) -> Any:
    if isinstance(value, str) and value in _SIGNALS:
        if value == BLINDED_SECRET:
            raise SecretNotReadable(path)
        raise NotKnown(path)
    return value


def child(container: Any, key: str | int, path: str = "") -> Any:
    """``container[key]``, or None when absent or when ``container`` is not a mapping/sequence of that kind.

    Raises :class:`NotKnown` for an unknown value (or an unknown container), :class:`SecretNotReadable` for a secret
    nobody decrypted.
    """
    if type(container) is dict:  # plain documents (`wirespeed check`): the common case, kept cheap
        value = container.get(key)
        if isinstance(value, str) and value in _SIGNALS:
            return _known(value, f"{path}.{key}" if path else str(key))
        return value
    where = f"{path}.{key}" if path else str(key)
    _known(container, path or "(root)")
    try:
        if isinstance(key, str):
            if not isinstance(container, Mapping):
                return None
            value = container[key]
        else:
            if not is_sequence(container) or not -len(container) <= key < len(container):
                return None
            value = container[key]
    except KeyError:
        return None
    except Exception as exc:
        if _is_unknown_error(exc):
            raise NotKnown(where) from None
        raise
    return _known(value, where)


def get(container: Any, *keys: str | int) -> Any:
    """The value at ``keys`` below ``container`` (e.g. ``get(props, "networkProfile", "loadBalancerProfile")``),
    or None if any step is absent or of the wrong kind. Raises :class:`NotKnown` for an unknown value."""
    path = ""
    value = container
    for key in keys:
        value = child(value, key, path)
        path = f"{path}.{key}" if path else str(key)
        if value is None:
            return None
    return value


def is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def elements(value: Any, path: str = "") -> Iterator[Any]:
    """The items of a sequence (none for anything else); an unknown item raises :class:`NotKnown`."""
    _known(value, path or "(root)")
    if not is_sequence(value):
        return
    for index in range(len(value)):
        yield child(value, index, path)


def keys(value: Any) -> list[str]:
    """The keys of a mapping (iterating a proxy never reads values, so it never raises)."""
    return [k for k in value if isinstance(k, str)] if isinstance(value, Mapping) else []


def whole(value: Any) -> int | None:
    """An integral number (``1024.0`` from the engine) as an int, else None (booleans, fractions, unset, text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _raw(container: Any, key: str | int) -> Any:
    try:
        return container[key]
    except Exception as exc:
        if _is_unknown_error(exc):
            return exc.unknown_type_sentinel  # type: ignore[attr-defined]  # checked by _is_unknown_error
        raise


def plain(value: Any) -> Any:
    """A deep copy as plain dicts and lists for a remediation to edit and return. Unknown values stay the
    sentinels the engine sent, so they flow back to it unchanged (the SDK serialises them as such)."""
    if isinstance(value, Mapping):
        return {k: plain(_raw(value, k)) for k in keys(value)}
    if is_sequence(value):
        return [plain(_raw(value, i)) for i in range(len(value))]
    return value


def plain_numbers(value: Any) -> Any:
    """Integral floats as ints, recursively, so JSON and text show 4000 rather than 4000.0, as the user wrote it."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: plain_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_numbers(v) for v in value]
    return value


def at(value: Any, *path: str) -> Any:
    """The Terraform attribute at ``path``, stepping into nested blocks (arrays of one object in plans): None when
    absent, :data:`UNKNOWN` when the value or a block on the way is unknown."""
    for key in path:
        if value == UNKNOWN:
            return UNKNOWN
        if isinstance(value, list):
            value = value[0] if value else None
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return value[0]  # a nested block asked for whole
    return value

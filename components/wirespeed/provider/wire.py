"""The components' argument dataclasses as Pulumi sees them from other languages, and back.

:func:`wire_type` derives, from an args dataclass, the ``TypedDict`` the SDK's schema inference
(``pulumi.provider.experimental``) reads: the same fields, optional exactly where the dataclass has a default, plain
where the dataclass field is plain and ``Input`` where it is ``pulumi.Input``, nested dataclasses as nested types.
What the inference cannot express becomes ``Any`` (the value is still checked, by :func:`from_wire`): a union
other than ``X | None`` (``str | Profile``, ``int | Mapping[str, int]``) and a pydantic model (a custom
``Profile``, ``Outbound``), whose own schema (``wirespeed profile schema``) is richer than Pulumi's type system.

:func:`from_wire` turns the plain values the engine hands a provider (camelCase keys, every number a float, nested
objects as dicts) into that dataclass, unchanged otherwise, so the component's own checks see what a Python program
would have passed and word their problems as they do for it. It adds problems only where a Python program could
not have got that far: a required input left out, a number with a fraction for a whole-number field, a profile
document that is not a valid profile (the profile's own words), an output of another resource where a plain value
decides which resources exist.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Literal, NotRequired, Required, TypedDict, Union, get_args, get_origin

import pulumi
from pydantic import BaseModel

from wirespeed.aws.capacity import Taint
from wirespeed.problems import Problem
from wirespeed.profile import Outbound, Profile, ProfileError, validate_model

# Names the args modules import only for type checkers (``if TYPE_CHECKING:``), and the forward reference
# ``pulumi.Input[X]`` carries unsubstituted (``"Output[T]"``; its ``Awaitable[X]`` member says what X is): the
# string annotations (``from __future__ import annotations``) resolve with them.
_NAMES: dict[str, Any] = {
    "Profile": Profile,
    "Outbound": Outbound,
    "Taint": Taint,
    "Output": pulumi.Output,
    "T": typing.TypeVar("T"),
}
_PLAIN = (str, int, float, bool)
_SEQUENCES = (list, tuple, Sequence, typing.Sequence)
_MAPPINGS = (dict, Mapping, typing.Mapping)

SOURCES: dict[type, type] = {}
"""Each derived ``TypedDict`` by the dataclass it was derived from (docstrings are read from the dataclass)."""
_DERIVED: dict[type, type] = {}


def camel_case(name: str) -> str:
    """The schema's name for a Python field, as the SDK's inference names it (``pulumi...experimental.util``)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def hints(cls: type) -> dict[str, Any]:
    """``cls``'s field annotations, evaluated."""
    return typing.get_type_hints(cls, localns=_NAMES)


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType)


def input_base(hint: Any) -> Any | None:
    """``T`` of ``pulumi.Input[T]`` (``T | Awaitable[T] | Output[T]``), else None."""
    if not _is_union(hint):
        return None
    for member in get_args(hint):
        if get_origin(member) is Awaitable:
            return get_args(member)[0]
    return None


def optional_base(hint: Any) -> Any | None:
    """``X`` of ``X | None`` (``X`` a union itself if more than one type remains), else None."""
    if not _is_union(hint) or type(None) not in get_args(hint):
        return None
    rest = [member for member in get_args(hint) if member is not type(None)]
    return rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007 - built from a runtime tuple


def _of(generic: Any, *args: Any) -> Any:
    """``generic[args]``, for type arguments known only at run time (a type checker reads subscripts statically)."""
    return generic[args if len(args) > 1 else args[0]]


def wire_type(hint: Any) -> Any:
    """The annotation the schema inference reads for a field annotated ``hint``."""
    base = input_base(hint)
    if base is not None:
        return _of(pulumi.Input, wire_type(base))
    base = optional_base(hint)
    if base is not None:
        return _of(typing.Optional, wire_type(base))
    if hint in _PLAIN or hint is Any:
        return hint
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return type(args[0])
    if _is_union(hint) or (isinstance(hint, type) and issubclass(hint, BaseModel)):
        return Any
    if origin in _SEQUENCES:
        return _of(list, wire_type(args[0]))
    if origin in _MAPPINGS:
        return _of(dict, str, wire_type(args[1]))
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return derived(hint)
    raise TypeError(f"no Pulumi schema type for {hint!r}: give the field a type the schema can express")


def derived(cls: type) -> type:
    """The ``TypedDict`` of args dataclass ``cls``: same name, module and docstring, a key per field."""
    if cls not in _DERIVED:
        annotations = hints(cls)
        fields = {}
        for field in dataclasses.fields(cls):
            required = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
            wrapper = Required if required else NotRequired
            fields[field.name] = _of(wrapper, wire_type(annotations[field.name]))
        typed = TypedDict(cls.__name__, fields)  # type: ignore[misc]  # the functional form, named at run time
        # The SDK finds a type's docstrings with inspect.getsource, by module and qualified name: the dataclass's.
        typed.__module__, typed.__qualname__, typed.__doc__ = cls.__module__, cls.__qualname__, cls.__doc__
        _DERIVED[cls] = typed
        SOURCES[typed] = cls
    return _DERIVED[cls]


def from_wire(cls: type, values: Mapping[str, Any], path: str, problems: list[Problem]) -> Any:
    """``values`` (schema names) as an instance of dataclass ``cls``; None if a problem was found."""
    annotations = hints(cls)
    kwargs: dict[str, Any] = {}
    found = len(problems)
    for field in dataclasses.fields(cls):
        where = f"{path}.{field.name}" if path else field.name
        value = values.get(camel_case(field.name))
        if value is None:
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                problems.append(Problem(where, reason="required, and not given"))
            continue
        kwargs[field.name] = _value(annotations[field.name], value, where, problems)
    return cls(**kwargs) if len(problems) == found else None


def _value(hint: Any, value: Any, where: str, problems: list[Problem]) -> Any:
    """One wire value as the Python API takes it, or unchanged for the component's own checks to judge."""
    if input_base(hint) is not None:
        return value  # an Input takes an Output or a plain value alike
    if isinstance(value, pulumi.Output):
        problems.append(
            Problem(
                where,
                reason="an output of another resource; this input decides which resources the component creates, "
                "so it must be a plain value known before the component is created",
            )
        )
        return value
    base = optional_base(hint)
    if base is not None:
        return _value(base, value, where, problems)
    if _is_union(hint):
        return _union(get_args(hint), value, where, problems)
    return _single(hint, value, where, problems)


def _union(members: tuple[Any, ...], value: Any, where: str, problems: list[Problem]) -> Any:
    """The member ``value`` has the shape of: a mapping for a model or mapping member, a number for ``int``."""
    if isinstance(value, Mapping):
        shaped = [m for m in members if get_origin(m) in _MAPPINGS or _is_model(m)]
        return _single(shaped[0], value, where, problems) if shaped else value
    if isinstance(value, float) and int in members:
        return _single(int, value, where, problems)
    return value


def _is_model(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, BaseModel)


def _single(hint: Any, value: Any, where: str, problems: list[Problem]) -> Any:
    origin, args = get_origin(hint), get_args(hint)
    if hint is int and isinstance(value, float):
        # The engine sends every number as a float (a google.protobuf.Struct's numbers are doubles: pulumi/pulumi
        # v3.276.0 sdk/go/common/resource/plugin/rpc.go, MarshalPropertyValue); a fraction was never whole.
        if value.is_integer():
            return int(value)
        problems.append(Problem.refused(where, value, "a whole number"))
        return value
    if _is_model(hint) and isinstance(value, Mapping):
        try:
            return validate_model(hint, value)
        except ProfileError as exc:
            problems.extend(Problem(where, reason=f"{pointer}: {message}") for pointer, message in exc.problems)
            return value
    if dataclasses.is_dataclass(hint) and isinstance(hint, type) and isinstance(value, Mapping):
        return from_wire(hint, value, where, problems)
    if origin in _SEQUENCES and isinstance(value, list):
        return [_value(args[0], item, f"{where}[{index}]", problems) for index, item in enumerate(value)]
    if origin in _MAPPINGS and isinstance(value, Mapping):
        return {key: _value(args[1], item, f"{where}[{key!r}]", problems) for key, item in value.items()}
    return value

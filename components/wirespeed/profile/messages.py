"""Validating a profile document and wording every problem as the Go agent words it (tests/vectors/profiles.json
holds both's exact text): one :class:`ProfileError` with a JSON pointer and a message per bad field."""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from wirespeed import message_table
from wirespeed.errors import UserError
from wirespeed.problems import did_you_mean, quoted_number
from wirespeed.profile.fields import GLOB_ALLOWED, GLOB_PATTERN
from wirespeed.profile.model import Profile
from wirespeed.profile.sysctls import KNOWN_SYSCTLS, nearest_sysctl


class ProfileError(UserError, ValueError):
    """A profile failed validation. ``problems`` lists (JSON pointer, message), one per bad field."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("invalid profile:\n" + "\n".join(f"  {path}: {msg}" for path, msg in problems))


def _pointer(loc: tuple[int | str, ...]) -> str:
    # A bad dict key is reported by pydantic as <key>/[key]: point at the key itself.
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in loc if p != "[key]"]
    return "/" + "/".join(parts)


def _json(value: object) -> str:
    """A value of the document as JSON, as the Go agent shows it (compact, integral floats as integers)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)


_plural = message_table.plural


def _literal_values(expected: str) -> list[Any] | None:
    """pydantic words a Literal's values as ``'a', 'b' or 'c'`` (their reprs): read them back."""
    head, _, last = expected.rpartition(" or ")
    try:
        parsed = ast.literal_eval(f"[{head}, {last}]" if head else f"[{last}]")
    except (ValueError, SyntaxError):
        return None
    return list(parsed) if isinstance(parsed, list) else None


# pydantic error types for a value of the wrong JSON type, as the JSON type the shared table words (as Go does).
_JSON_TYPE = {
    "string_type": "string",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "list_type": "array",
    "int_type": "integer",
    "bool_type": "boolean",
}


def _allowed(error: Mapping[str, Any]) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    say = message_table.say
    if kind in _JSON_TYPE:
        return message_table.must_be_types(_JSON_TYPE[kind])
    if kind == "string_pattern_mismatch":
        return GLOB_ALLOWED if ctx["pattern"] == GLOB_PATTERN else say("must_match", pattern=ctx["pattern"])
    if kind == "literal_error" and (values := _literal_values(str(ctx.get("expected", "")))):
        if len(values) == 1:
            return say("must_be", what=_json(values[0]))
        return say("must_be_one_of", values=message_table.LIST_SEPARATOR.join(_json(v) for v in values))
    if kind == "too_long":
        return say("at_most_items", count=_plural(ctx["max_length"], "item"))
    if kind == "too_short":
        return say("at_least_items", count=_plural(ctx["min_length"], "item"))
    if kind == "string_too_short":
        return say("at_least_long", count=_plural(ctx["min_length"], "character"))
    if kind == "string_too_long":
        return say("at_most_long", count=_plural(ctx["max_length"], "character"))
    return str(error["msg"]).removeprefix("Value error, ")


def _model_in(annotation: object) -> tuple[type[BaseModel] | None, bool]:
    """The model a field's annotation holds (through Optional, Annotated, list), and whether it is a dict's value."""
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    is_dict = typing.get_origin(annotation) is dict
    for arg in typing.get_args(annotation):
        model, _ = _model_in(arg)
        if model is not None:
            return model, is_dict
    return None, False


def _fields_at(loc: Sequence[object]) -> list[str]:
    """The JSON names of the fields known where ``loc`` points (a profile's object at that path), for a typo's
    suggestion; the Go agent reads the same names from the schema's properties there."""
    model: type[BaseModel] | None = Profile
    skip_key = False
    for part in loc:
        if model is None:
            return []
        if skip_key or isinstance(part, int):
            skip_key = False
            continue
        by_json = {(f.alias or name): f for name, f in model.model_fields.items()}
        if str(part) not in by_json:
            return []
        model, skip_key = _model_in(by_json[str(part)].annotation)
    return [] if model is None else [(f.alias or name) for name, f in model.model_fields.items()]


def unknown_sysctl(name: str) -> str:
    """The refusal of a sysctl outside the allow-list, word for word what the Go agent says."""
    near = nearest_sysctl(name)
    hint = message_table.say("sysctl_hint", near=_json(near)) if near else ""
    names = message_table.LIST_SEPARATOR.join(KNOWN_SYSCTLS)
    return message_table.say("unknown_sysctl", name=_json(name), count=len(KNOWN_SYSCTLS), hint=hint, names=names)


def _describe(error: Mapping[str, Any]) -> str:
    """One problem in the words the Go agent uses too (tests/vectors/profiles.json holds both's exact text):
    "is required", "is not a known field", or "<value as JSON> is not allowed: <what is>"."""
    if error["type"] == "missing":
        return message_table.say("required")
    if error["type"] == "extra_forbidden":
        loc = error["loc"]
        if len(loc) == 2 and loc[0] == "sysctls":
            return unknown_sysctl(str(loc[1]))
        return message_table.say("unknown_field", hint=did_you_mean(str(loc[-1]), _fields_at(loc[:-1])))
    allowed, value = _allowed(error), error.get("input")
    if isinstance(value, str) and allowed in message_table.NUMBER_WORDS:
        allowed = quoted_number(value, allowed)
    return message_table.say("not_allowed", value=_json(value), allowed=allowed)


_Model = TypeVar("_Model", bound=BaseModel)


def validate_profile(data: Mapping[str, Any]) -> Profile:
    """Validate a profile document, collecting every problem before raising one :class:`ProfileError`."""
    return validate_model(Profile, data)


def validate_model(model: type[_Model], data: Mapping[str, Any]) -> _Model:
    """``data`` as ``model`` (a profile, or a part of one such as :class:`Outbound`), every problem in one
    :class:`ProfileError` with its JSON pointer within ``data``: the component provider reads the plain values
    other Pulumi languages send through this, in the words a profile document gets."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
            problems.append((_pointer(loc), _describe(err)))
        raise ProfileError(problems) from None


def _refuse_constant(name: str) -> object:
    # Python's json reads NaN and Infinity; JSON (RFC 8259) and Go's encoding/json, which the agent uses, refuse them.
    raise ValueError(f"{name} is not a JSON value")


def load_profile(text: str) -> Profile:
    """Parse and validate a profile from JSON text: the documents the Go agent refuses are refused here too, in the
    same words where the words are not the JSON parser's own (tests/vectors/profiles.json, ``invalid_text``)."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ProfileError([("/", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")]) from None
    except (ValueError, RecursionError) as exc:
        # json raises these for numbers past int's digit limit and for nesting past the recursion limit.
        raise ProfileError([("/", f"not valid JSON: {exc}")]) from None
    if not isinstance(data, dict):
        not_object = message_table.say("not_allowed", value=_json(data), allowed=message_table.must_be_types("object"))
        raise ProfileError([("/", not_object)])
    return validate_profile(data)

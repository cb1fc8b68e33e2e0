"""The field types every part of a profile is built from: whole numbers (Pulumi's integral floats included), inclusive
ranges whose error names the whole range, driver names and interface-name globs, and the strict base model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StringConstraints,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from wirespeed import message_table

DRIVER_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"
PROFILE_NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
# An interface-name glob as the agent matches it (Go's path.Match): literals, * and ?, a backslash escape, or a
# class [...] (optional ^) of one or more characters or ranges a-z, where ']' and '-' must be escaped. Go reports
# anything else (a lone '[', '[]', '[a-]', a trailing '\\') as ErrBadPattern at match time and the glob then
# silently matches no link; in the schema it is refused before the agent starts, by Python and Go alike. (The
# empty string matches here so that only min_length reports it.)
_GLOB_CHAR = r"(?:[^\]\\\-]|\\.)"
_GLOB_ITEM = rf"{_GLOB_CHAR}(?:-{_GLOB_CHAR})?"
# A '^' right after '[' negates (Go); the class still needs an item after it.
_GLOB_FIRST = r"(?:[^\]\\\-^]|\\.)" + rf"(?:-{_GLOB_CHAR})?"
GLOB_PATTERN = rf"^(?:[^\[\\]|\\.|\[(?:\^{_GLOB_ITEM}|{_GLOB_FIRST})(?:{_GLOB_ITEM})*\])*$"
GLOB_ALLOWED = message_table.say("glob")
# Messages are worded in the shared table (wirespeed.message_table), which the Go agent reads too.
WHOLE_NUMBER = message_table.must_be_types("integer")


def _whole_number(value: object) -> object:
    """Accept ints and integral floats (Pulumi's numbers); refuse bools, strings and fractions."""
    if isinstance(value, bool | str):
        raise ValueError(WHOLE_NUMBER)
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(WHOLE_NUMBER)
        return int(value)
    return value


@dataclass(frozen=True)
class Range:
    """Pydantic metadata: an inclusive integer range (optionally in steps) whose error names the whole range, not
    just the bound that was crossed, and whose JSON Schema carries ``minimum``/``maximum``/``multipleOf`` for the
    Go agent, which words a failure of any of them the same way."""

    low: int
    high: int
    multiple_of: int = 1

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return self.json_schema()

    def json_schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "integer", "minimum": self.low, "maximum": self.high}
        if self.multiple_of > 1:
            out["multipleOf"] = self.multiple_of
        return out

    def _check(self, value: int) -> int:
        if not self.low <= value <= self.high or value % self.multiple_of:
            step = message_table.say("range_step", step=f"{self.multiple_of:,}") if self.multiple_of > 1 else ""
            raise ValueError(message_table.say("range", step=step, low=f"{self.low:,}", high=f"{self.high:,}"))
        return value


WholeNumber = BeforeValidator(_whole_number)

# Ring bounds are deliberately loose: the agent clamps to what the device reports (`ethtool -g` max) and
# rounds by the driver's rule (catalog NIC facts). 65,536 is above every driver's max in the catalog.
RingEntries = Annotated[int, WholeNumber, Range(64, 65_536)]

DriverName = Annotated[str, StringConstraints(pattern=DRIVER_NAME_PATTERN)]
NamePattern = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=GLOB_PATTERN)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)

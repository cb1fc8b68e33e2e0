"""The one base class for errors caused by what a user gave, as opposed to bugs in wirespeed.

Front ends decide by type alone: the CLI prints a :class:`UserError` as one ``error:`` line and exits 2, and lets
anything else surface as a traceback (exit 1), so a ``KeyError`` from a bug is never dressed up as bad input.
Every library error a user can cause subclasses it: sizing's ``SizingError`` and ``InfeasibleError``, the
catalog's ``UnknownInstanceType`` and ``UnknownDriver``, ``profile.ProfileError``, the unknown built-in profile.

``field`` is the library's name for the input at fault (``outbound_ips``, ``min_gbps``), or ``""``. Front ends
speak other names (``--outbound-ips``, a JSON path in a file): :meth:`UserError.message_for` swaps it for theirs.
This module is pure (no imports beyond typing) so every layer can raise these without import cost.
"""

from __future__ import annotations

from collections.abc import Mapping


class UserError(Exception):
    """The input cannot be accepted or the demand cannot be met; the message says what is allowed."""

    field: str = ""

    def message_for(self, names: Mapping[str, str]) -> str:
        """This error's message in the caller's vocabulary: ``field`` replaced by ``names[field]`` if given.

        A message that starts with ``"<field>: "`` has that label replaced; any other gets the caller's name
        put in front, so the result always says which input is at fault when the caller knows it.
        """
        message = str(self)
        name = names.get(self.field) if self.field else None
        if name is None:
            return message
        label = f"{self.field}: "
        if message.startswith(label):
            return f"{name}: {message.removeprefix(label)}"
        return f"{name}: {message}"


class FieldError(UserError, ValueError):
    """One input is outside what is allowed: names the field, the value and the allowed range or choices."""

    def __init__(self, field: str, value: object, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field}: {value!r} is not allowed: {allowed}")

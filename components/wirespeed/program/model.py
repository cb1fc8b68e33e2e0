"""What a planned program registered: plain data, no Pulumi objects, so it can be reviewed and compared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wirespeed.program.project import Project

STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass(frozen=True)
class RegisteredResource:
    """One resource as the engine would record it.

    ``inputs`` use the engine's camelCase names. ``outputs`` are what the (fake) provider returned for a custom
    resource, or what a component passed to ``register_outputs``. Secret values read ``[secret]``.
    """

    urn: str
    type: str
    name: str
    custom: bool
    parent: str | None
    id: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    provider: str | None = None
    read: bool = False


@dataclass(frozen=True)
class Invoke:
    """A provider function the program called (a lookup or a credentials call) and the fake answer."""

    token: str
    args: dict[str, Any]
    result: dict[str, Any]


@dataclass(frozen=True)
class ProgramPlan:
    """Everything one run registered, sorted by URN (the stack first): registration order races between
    independent resources, so it is not kept."""

    project: Project
    resources: tuple[RegisteredResource, ...]
    stack_outputs: dict[str, Any]
    invokes: tuple[Invoke, ...] = ()
    log: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    """(severity, message) of every pulumi.log call the program made."""
    unmocked_invokes: tuple[str, ...] = ()

    def by_urn(self) -> dict[str, RegisteredResource]:
        return {r.urn: r for r in self.resources}

    def children(self, urn: str) -> list[RegisteredResource]:
        return [r for r in self.resources if r.parent == urn]

    def of_type(self, module: str, resource: str) -> list[RegisteredResource]:
        """Resources whose token is ``<pkg>:<module>[/<version>]:<resource>`` (any package version)."""
        return [r for r in self.resources if type_matches(r.type, module, resource)]

    @property
    def stack(self) -> RegisteredResource | None:
        return next((r for r in self.resources if r.type == STACK_TYPE), None)


def type_matches(token: str, module: str, resource: str) -> bool:
    """Match module and resource of a type token, ignoring the package and any API version suffix."""
    parts = token.split(":")
    if len(parts) != 3:
        return False
    return parts[1].split("/")[0] == module and parts[2] == resource

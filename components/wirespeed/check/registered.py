"""The rules over what a planned program registered (``wirespeed plan DIR``), as the policy engine would see it.

``wirespeed.program`` runs a Pulumi program under the SDK's mocks and records each registration as plain data.
The engine marshals properties through ``google.protobuf.Struct`` before a policy sees them, so every number
arrives as a float and every object read-only (pulumi/pulumi v3.276.0 sdk/go/common/resource/plugin/
analyzer_plugin.go; pulumi/pulumi-policy v1.21.0 sdk/python/lib/pulumi_policy/proxy.py): the same conversion happens
here, then the same rules run as for a preview.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from wirespeed.check.readonly import ReadOnlyMapping
from wirespeed.rules import Config, Resource, Violation, evaluate


class Registered(Protocol):
    """What ``wirespeed.program.RegisteredResource`` carries (a Protocol, so this module never imports Pulumi)."""

    @property
    def urn(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def parent(self) -> str | None: ...
    @property
    def id(self) -> str: ...
    @property
    def inputs(self) -> Mapping[str, Any]: ...
    @property
    def outputs(self) -> Mapping[str, Any]: ...


def as_engine_value(value: Any) -> Any:
    """``value`` as it comes out of a protobuf Struct: numbers as floats, tuples as lists, keys as strings."""
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, Mapping):
        return {str(k): as_engine_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_engine_value(v) for v in value]
    return str(value)  # nothing else crosses the wire; the runner records plain data


def resources_of(registered: Iterable[Registered]) -> list[Resource]:
    return [
        Resource(
            type=r.type,
            name=r.name,
            urn=r.urn,
            props=ReadOnlyMapping(as_engine_value(r.inputs)),
            parent=r.parent or None,
            outputs=ReadOnlyMapping(as_engine_value(r.outputs)),
            id=r.id or None,
        )
        for r in registered
    ]


def verdicts(registered: Iterable[Registered], config: Config) -> list[Violation]:
    """Every rule's violations over the registered resources: resource rules on inputs, then stack rules."""
    return evaluate(resources_of(registered), config)

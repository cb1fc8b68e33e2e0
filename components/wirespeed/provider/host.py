"""The Pulumi package ``wirespeed``: every component users construct, served to other Pulumi languages.

The schema is inferred by the SDK (``pulumi.provider.experimental``, as ``component_provider_host`` does) from a
stand-in per component whose ``args`` is the ``TypedDict`` :mod:`wirespeed.provider.wire` derives from the
component's own args dataclass, and whose outputs are the component's ``pulumi.Output`` attributes: one source of
truth, the component. ``component_provider_host`` itself is not used because its ``construct`` hands the component
a dict (ours take dataclasses) and wraps every error the component raises in ``ComponentInitError``, which turns a
``pulumi.InputPropertiesError`` into a stack trace instead of the engine's list of bad inputs.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any, get_origin

import pulumi
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from pulumi.provider.provider import ConstructResult, Provider
from pulumi.provider.server import ComponentInitError, main

from wirespeed import __version__
from wirespeed.aws.karpenter_pool import KarpenterNodePool
from wirespeed.aws.nat_egress import NatEgress
from wirespeed.aws.node_group import NetworkOptimizedNodeGroup
from wirespeed.azure.auto_provisioned import AutoProvisionedPool
from wirespeed.azure.components import NetworkOptimizedCluster, NetworkOptimizedNodePool
from wirespeed.kubernetes.node_tuning import NodeTuning
from wirespeed.problems import InvalidInputError, Problem
from wirespeed.provider import wire
from wirespeed.pulumi_inputs import input_properties_error

PACKAGE = "wirespeed"
# Every ComponentResource in the library (tests/engine/test_provider.py finds them all and fails on one missing here).
COMPONENTS: tuple[type[pulumi.ComponentResource], ...] = (
    NetworkOptimizedCluster,
    NetworkOptimizedNodePool,
    AutoProvisionedPool,
    NodeTuning,
    NetworkOptimizedNodeGroup,
    KarpenterNodePool,
    NatEgress,
)


def args_class(component: type[pulumi.ComponentResource]) -> type:
    """The dataclass ``component``'s ``args`` parameter takes (``NodeTuningArgs | None`` gives NodeTuningArgs)."""
    hint = inspect.signature(component.__init__, eval_str=True).parameters["args"].annotation
    base = wire.optional_base(hint)
    return base if base is not None else hint  # type: ignore[no-any-return]


def _outputs(component: type[pulumi.ComponentResource]) -> dict[str, Any]:
    """The component's ``pulumi.Output`` attributes (children and plans are Python-only)."""
    annotations = inspect.get_annotations(component, eval_str=True)
    output: Any = pulumi.Output
    return {name: hint for name, hint in annotations.items() if get_origin(hint) is output}


def _stand_in(component: type[pulumi.ComponentResource]) -> type[pulumi.ComponentResource]:
    """What the schema inference reads for ``component``: its name, docstring, outputs and derived args."""

    def __init__(self: Any, name: str, args: Any, opts: pulumi.ResourceOptions | None = None) -> None:  # noqa: N807
        raise TypeError(f"{component.__name__} is constructed by WirespeedProvider.construct")

    __init__.__annotations__ = {"name": str, "args": wire.derived(args_class(component)), "return": None}
    namespace = {
        "__init__": __init__,
        "__doc__": component.__doc__,
        "__module__": component.__module__,
        "__qualname__": component.__qualname__,
        "__annotations__": _outputs(component),
    }
    stand_in = type(component.__name__, (pulumi.ComponentResource,), namespace)
    wire.SOURCES[stand_in] = component
    return stand_in


class _Analyzer(Analyzer):
    """The SDK's inference, reading a field's docstring where it is written: on the dataclass (or component) a
    derived type stands for, or on one of its bases (``NetworkOptimizedNodePoolArgs`` inherits ``NodePoolSpec``'s)."""

    def get_docstring(self, typ: type, name: str) -> str | None:
        source = wire.SOURCES.get(typ)
        if source is None:
            return super().get_docstring(typ, name)
        for base in source.__mro__:
            if base not in (object, pulumi.ComponentResource, pulumi.Resource):
                found = super().get_docstring(base, name)
                if found:
                    return found
        return None


class WirespeedProvider(ComponentProvider):
    """The component provider: the SDK's, with construct mapping plain values onto the components' dataclasses."""

    def __init__(self) -> None:
        stand_ins = [_stand_in(component) for component in COMPONENTS]
        self._name = PACKAGE
        self.analyzer = _Analyzer(PACKAGE)
        result = self.analyzer.analyze(stand_ins)
        self._components = {component.__name__: component for component in COMPONENTS}
        self._component_defs = result["component_definitions"]
        self._type_defs = result["type_definitions"]
        self._external_enum_types = result["external_enum_types"]
        self._dependencies = sorted(result["dependencies"], key=lambda d: f"{d.name}{d.version}")
        definitions = (self._component_defs, self._type_defs, self._dependencies)
        inferred = generate_schema(PACKAGE, __version__, None, *definitions)
        self.package = as_the_engine_reads_it(inferred.to_json())
        Provider.__init__(self, __version__, json.dumps(self.package))

    def construct(
        self,
        name: str,
        resource_type: str,
        inputs: Mapping[str, pulumi.Input[Any]],
        options: pulumi.ResourceOptions | None = None,
    ) -> ConstructResult:
        self.validate_resource_type(self._name, resource_type)
        component = self._components[resource_type.rsplit(":", 1)[-1]]
        constructor: Any = component  # every component's __init__ is (name, args, opts)
        args = to_args(component, inputs)
        try:
            instance = constructor(name, args, options)
        except pulumi.InputPropertiesError:
            raise  # the component's own problems, as the engine lists bad inputs
        except Exception as exc:  # the SDK tells the component's errors from its own by this wrapper
            raise ComponentInitError(exc) from exc
        return ConstructResult(instance.urn, self.get_state(instance, self._component_defs[component.__name__]))


def as_the_engine_reads_it(package: dict[str, Any]) -> dict[str, Any]:
    """``package`` as the engine reads and prints it (``pulumi package get-schema`` re-encodes the schema through
    pkg/codegen/schema's PackageSpec): an array's items and a map's values carry no description (TypeSpec has no
    such field; the SDK repeats the property's there), empty lists are left out (``omitempty``), and ``config`` is
    always present. Served this way, the schema the plugin returns, the committed one and the engine's are one."""
    normal: dict[str, Any] = _without_nested_descriptions(package, nested=False)
    normal.setdefault("config", {})
    return normal


def _without_nested_descriptions(value: Any, nested: bool) -> Any:
    if isinstance(value, dict):
        return {
            key: _without_nested_descriptions(item, nested=key in ("items", "additionalProperties"))
            for key, item in value.items()
            if not (nested and key == "description") and item != []
        }
    if isinstance(value, list):
        return [_without_nested_descriptions(item, nested=False) for item in value]
    return value


def to_args(component: type[pulumi.ComponentResource], inputs: Mapping[str, Any]) -> Any:
    """``inputs`` as ``component``'s args dataclass; every problem found on the way in one InputPropertiesError."""
    cls = args_class(component)
    problems: list[Problem] = []
    args = wire.from_wire(cls, inputs, "", problems)
    if problems:
        raise input_properties_error(InvalidInputError(f"invalid {cls.__name__}", problems))
    return args


def schema() -> dict[str, Any]:
    """The package schema the provider serves (``pulumi package get-schema``)."""
    return WirespeedProvider().package


def serve() -> None:
    """Run the provider as a plugin: the engine passes its address as the first argument."""
    main(WirespeedProvider(), [])

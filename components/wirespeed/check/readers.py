"""The documents `wirespeed check` reads, recognised by their shape, streamed one resource at a time.

- ``pulumi stack export``: ``{"version": 3, "deployment": {"manifest": ..., "resources": [ResourceV3...]}}``
  (pulumi/pulumi sdk/go/common/apitype/core.go: ``UntypedDeployment``, ``DeploymentV3``, ``ResourceV3``;
  https://www.pulumi.com/docs/iac/cli/commands/pulumi_stack_export/). Each resource has ``urn``, ``type``,
  ``custom``, ``inputs``, ``outputs``, ``parent``, ``propertyDependencies``; ``delete: true`` marks an old copy
  waiting to be deleted after a replacement, which is not part of the stack any more and is not checked.
- ``pulumi preview --json``: ``{"config": ..., "steps": [PreviewStep...], "diagnostics": ...,
  "changeSummary": ...}`` (pulumi/pulumi sdk/pkg/display/json.go: ``PreviewDigest``, ``PreviewStep`` with
  ``op``, ``urn``, ``oldState``/``newState`` as ``ResourceV3``). The planned stack is every step's
  ``newState``; steps that remove a resource (``delete``, ``delete-replaced``, ``discard``,
  ``discard-replaced``, ``remove-pending-replace``: pkg/resource/deploy/step.go ``StepOp``) are not checked,
  and a replacement's several steps count once. A step without ``outputs`` (a resource not created yet) gives
  stack rules its inputs, the values the provider will be asked for.
- ``terraform show -json``: a plan (``terraform show -json PLANFILE``: ``resource_changes``, ``planned_values``,
  ``configuration`` ...) or a state (``values``), recognised by their top-level keys
  (https://developer.hashicorp.com/terraform/internals/json-format); each Terraform resource wirespeed knows is
  translated into the type token and properties the rules read (``wirespeed.check.terraform``).

Resource rules see a resource's inputs and stack rules its outputs, as the policy engine hands them over
(shared/reference/pulumi-facts.md); both arrive as read-only views with every number a float (``readonly``).
A problem in the document is an :class:`UnreadableInputError` naming the JSON path, found wherever it is.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from wirespeed.check import bridged, terraform
from wirespeed.check.jsonscan import JsonCursor
from wirespeed.check.readonly import EMPTY, ReadOnlyMapping
from wirespeed.check.secrets import SecretsError, StackSecrets
from wirespeed.errors import UserError
from wirespeed.rules import Resource, Violation
from wirespeed.values import plain_numbers


class UnreadableInputError(UserError):
    """The document cannot be checked: not JSON, an unknown shape, or a field of the wrong kind."""


@dataclass(frozen=True)
class Shape:
    name: str  # the command that writes it
    source: str  # where its shape is defined


STACK_EXPORT = Shape(
    "pulumi stack export",
    "pulumi/pulumi sdk/go/common/apitype/core.go (UntypedDeployment, DeploymentV3, ResourceV3)",
)
PREVIEW = Shape("pulumi preview --json", "pulumi/pulumi sdk/pkg/display/json.go (PreviewDigest, PreviewStep)")
TERRAFORM_PLAN = Shape("terraform show -json PLANFILE", f"{terraform.JSON_FORMAT_DOC} (Plan Representation)")
TERRAFORM_STATE = Shape("terraform show -json", f"{terraform.JSON_FORMAT_DOC} (State Representation)")

SUPPORTED = f"`{STACK_EXPORT.name}`, `{PREVIEW.name}` or `terraform show -json` output"

# Steps that take a resource out of the stack (pkg/resource/deploy/step.go).
_REMOVING_OPS = frozenset({"delete", "delete-replaced", "discard", "discard-replaced", "remove-pending-replace"})
# Keys a PreviewDigest may have without any step (an empty stack omits "steps": it is `omitempty`).
_PREVIEW_KEYS = frozenset({"config", "steps", "diagnostics", "duration", "changeSummary", "maybeCorrupt"})
_MISSING = object()
# Top-level keys of a plan the check does not read -> how deep to walk before decoding a piece: each resource
# they repeat is decoded on its own and dropped, so a large plan is never held whole
# (planned_values.root_module.resources[i], prior_state.values.root_module.resources[i], resource_drift[i]).
_TERRAFORM_SKIMMED = {"planned_values": 3, "prior_state": 4, "resource_drift": 1}


def _shown(value: Any) -> str:
    """A JSON value as the user wrote it (integral numbers without ".0"), cut to a readable length."""
    try:
        text = json.dumps(plain_numbers(value), default=repr)
    except RecursionError:  # a value nested almost as deep as the decoder allows
        text = "[...]" if isinstance(value, list) else "{...}"
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _expect(value: Any, wanted: type, kind: str, where: str) -> None:
    if not isinstance(value, wanted):
        raise UnreadableInputError(f"{where}: expected {kind}, got {_kind(value)} ({_shown(value)})")


Located = tuple[Resource, int]  # a resource and the offset in the text where its JSON object starts


class Document:
    """One input document, read once; :attr:`shape` is known as soon as it is seen."""

    def __init__(self, text: str, secrets: StackSecrets | None = None) -> None:
        self._text = text
        self.secrets = secrets if secrets is not None else StackSecrets()
        self.shape: Shape | None = None
        self.terraform: terraform.Reader | None = None  # set by the first Terraform key
        self.bridged: dict[str, str] = {}  # URN -> its bridged provider's type (pulumi-azure), for reports

    def resources(self) -> Iterator[Resource]:
        for resource, _ in self.located():
            yield resource

    def located(self) -> Iterator[Located]:
        cursor = JsonCursor(self._text)
        try:
            if cursor.peek() != "{":
                value = cursor.value()
                raise UnreadableInputError(
                    f"unknown shape: the document is {_kind(value)}, not an object; give {SUPPORTED}"
                )
            keys: list[str] = []
            version: Any = _MISSING
            for key in cursor.members():
                keys.append(key)
                reader = _READERS.get(key)
                if reader is not None:
                    yield from reader(self, cursor)
                elif key == "version":
                    version = cursor.value()
                else:
                    cursor.value()
            cursor.end()
            if self.terraform is not None:
                yield from self.terraform.linked()
        except json.JSONDecodeError as exc:
            raise UnreadableInputError(f"not JSON: {exc}") from None
        except RecursionError:
            raise UnreadableInputError("not readable: JSON nested deeper than Python's recursion limit") from None
        if self.shape is STACK_EXPORT and version != 3:
            found = "missing" if version is _MISSING else f"{_shown(version)} is not supported"
            raise UnreadableInputError(f"version: {found}: `pulumi stack export` writes deployment version 3")
        if self.shape is None and self.terraform is not None:
            self.shape = TERRAFORM_STATE  # `terraform show -json` with no state: {"format_version": "1.0"}
        if self.shape is None:
            if keys and set(keys) <= _PREVIEW_KEYS:
                self.shape = PREVIEW  # a preview of an empty stack: no steps at all
                return
            listed = ", ".join(f'"{k}"' for k in keys[:8]) + (", ..." if len(keys) > 8 else "")
            raise UnreadableInputError(
                f"unknown shape: top-level keys {listed or '(none)'}; give {SUPPORTED} "
                '({"version": 3, "deployment": {"resources": [...]}}, {"steps": [...]} or {"resource_changes": [...]})'
            )

    def adjust(self, violation: Violation) -> Violation:
        """A violation as the document's own tool names things (Terraform addresses, types and attributes; a
        bridged provider's type and property names)."""
        if self.terraform is not None:
            return self.terraform.adjust(violation)
        original = self.bridged.get(violation.resource_urn)
        if original is None:
            return violation
        provider = f"pulumi-{original.split(':')[0]}"  # azure:... is pulumi-azure
        message = bridged.adjusted_message(bridged.BRIDGED[original], violation.message, provider)
        return dataclasses.replace(violation, resource_type=original, message=message)

    def _register(self, resource: Resource, state: Mapping[str, Any]) -> Resource:
        original = state.get("type")
        if isinstance(original, str) and original in bridged.BRIDGED:
            self.bridged[resource.urn] = original
        return resource

    def _claim(self, shape: Shape, key: str) -> None:
        if self.shape is not None and self.shape is not shape:
            raise UnreadableInputError(f'unknown shape: "{key}" ({shape.name}) next to {self.shape.name} content')
        self.shape = shape


def _stack_export(document: Document, cursor: JsonCursor) -> Iterator[Located]:
    document._claim(STACK_EXPORT, "deployment")
    if cursor.peek() != "{":
        value = cursor.value()
        raise UnreadableInputError(f"deployment: expected an object, got {_kind(value)} ({_shown(value)})")
    read_resources = False
    for key in cursor.members():
        if key == "secrets_providers":
            blinded_before = document.secrets.blinded
            try:
                document.secrets.set_provider(cursor.value())
            except SecretsError as exc:
                raise UnreadableInputError(str(exc)) from None
            if read_resources and blinded_before and document.secrets.passphrase is not None:
                # `pulumi stack export` writes the provider first; a document that does not was edited by hand.
                raise UnreadableInputError(
                    "deployment.secrets_providers comes after deployment.resources, whose secrets were already "
                    "read as [secret]: put it first, as `pulumi stack export` writes it"
                )
            continue
        if key != "resources":
            cursor.value()
            continue
        read_resources = True
        if cursor.peek() != "[":
            value = cursor.value()
            raise UnreadableInputError(f"deployment.resources: expected an array, got {_kind(value)} ({_shown(value)})")
        for index in cursor.items():
            offset = cursor.pos
            state = cursor.value()
            resource = _resource(state, f"deployment.resources[{index}]", urn=None, secrets=document.secrets)
            document._register(resource, state)
            if state.get("delete") is not True:
                yield resource, offset


def _preview(document: Document, cursor: JsonCursor) -> Iterator[Located]:
    document._claim(PREVIEW, "steps")
    if cursor.peek() != "[":
        value = cursor.value()
        raise UnreadableInputError(f"steps: expected an array, got {_kind(value)} ({_shown(value)})")
    seen: set[str] = set()
    for index in cursor.items():
        offset = cursor.pos
        step = cursor.value()
        where = f"steps[{index}]"
        _expect(step, dict, "an object", where)
        op, urn = step.get("op"), step.get("urn")
        _expect(op, str, "a string", f"{where}.op")
        _expect(urn, str, "a string", f"{where}.urn")
        new_state = step.get("newState")
        if op in _REMOVING_OPS or new_state is None or urn in seen:
            continue
        seen.add(urn)
        resource = _resource(new_state, f"{where}.newState", urn=urn, secrets=document.secrets)
        yield document._register(resource, new_state), offset


def _terraform_reader(document: Document) -> terraform.Reader:
    if document.terraform is None:
        document.terraform = terraform.Reader()
    return document.terraform


def _format_version(document: Document, cursor: JsonCursor) -> Iterator[Located]:
    value = cursor.value()
    _expect(value, str, "a string", "format_version")
    if not value.startswith("1."):
        raise UnreadableInputError(
            f"format_version: {_shown(value)} is not supported: `terraform show -json` writes format 1.x"
        )
    _terraform_reader(document)
    yield from ()


def _terraform_version(document: Document, cursor: JsonCursor) -> Iterator[Located]:
    _expect(cursor.value(), str, "a string", "terraform_version")
    _terraform_reader(document)
    yield from ()


def _skim(cursor: JsonCursor, depth: int) -> None:
    """Step past a value, decoding only pieces ``depth`` levels down (never the whole value at once)."""
    if depth == 0 or cursor.peek() not in ("{", "["):
        cursor.value()
    elif cursor.peek() == "{":
        for _ in cursor.members():
            _skim(cursor, depth - 1)
    else:
        for _ in cursor.items():
            _skim(cursor, depth - 1)


def _skimmed(key: str, depth: int) -> _Reader:
    def read(document: Document, cursor: JsonCursor) -> Iterator[Located]:
        document._claim(TERRAFORM_PLAN, key)
        _terraform_reader(document)
        _skim(cursor, depth)
        yield from ()

    return read


def _open(cursor: JsonCursor, char: str, kind: str, where: str) -> None:
    if cursor.peek() != char:
        value = cursor.value()
        raise UnreadableInputError(f"{where}: expected {kind}, got {_kind(value)} ({_shown(value)})")


def _module_of(address: str, tf_type: str, name: str) -> str:
    """The module part of a resource address: ``module.a[0].x.y[1]`` -> ``module.a[0]``."""
    at = address.rfind(f"{tf_type}.{name}")
    return address[:at].rstrip(".") if at > 0 else ""


def _resource_changes(document: Document, cursor: JsonCursor) -> Iterator[Located]:
    document._claim(TERRAFORM_PLAN, "resource_changes")
    reader = _terraform_reader(document)
    _open(cursor, "[", "an array", "resource_changes")
    for index in cursor.items():
        offset = cursor.pos
        item = cursor.value()
        where = f"resource_changes[{index}]"
        _expect(item, dict, "an object", where)
        for key in ("address", "type", "name", "mode"):
            _expect(item.get(key), str, "a string", f"{where}.{key}")
        change = item.get("change")
        _expect(change, dict, "an object", f"{where}.change")
        actions = change.get("actions")
        _expect(actions, list, "an array", f"{where}.change.actions")
        for position, action in enumerate(actions):
            _expect(action, str, "a string", f"{where}.change.actions[{position}]")
        if item["mode"] != "managed" or not terraform.KEPT_ACTIONS.intersection(actions):
            continue  # a data source, or a resource the apply deletes or forgets
        after = change.get("after")
        _expect(after, dict, "an object", f"{where}.change.after")
        unknown = change.get("after_unknown")
        if unknown is not None and not isinstance(unknown, dict | bool):
            _expect(unknown, dict, "an object", f"{where}.change.after_unknown")
        module = item.get("module_address", "")
        _expect(module, str, "a string", f"{where}.module_address")
        values = terraform.planned(after, unknown) if terraform.is_read(item["type"]) else after
        located = reader.resource(item["type"], item["address"], module, values, offset)
        if located is not None:
            yield located


def _configuration(document: Document, cursor: JsonCursor) -> Iterator[Located]:
    document._claim(TERRAFORM_PLAN, "configuration")
    configuration = _terraform_reader(document).configuration
    _open(cursor, "{", "an object", "configuration")
    for key in cursor.members():
        if key != "root_module":
            cursor.value()
            continue
        _open(cursor, "{", "an object", "configuration.root_module")
        for part in cursor.members():
            if part != "resources":
                configuration.add_module({part: cursor.value()}, "")
                continue
            _open(cursor, "[", "an array", "configuration.root_module.resources")
            for _ in cursor.items():  # one at a time: a large configuration is never held whole
                configuration.add_module({"resources": [cursor.value()]}, "")
    configuration.seen = True
    yield from ()


def _state(document: Document, cursor: JsonCursor) -> Iterator[Located]:
    document._claim(TERRAFORM_STATE, "values")
    reader = _terraform_reader(document)
    _open(cursor, "{", "an object", "values")
    for key in cursor.members():
        if key == "root_module":
            yield from _state_module(reader, cursor, "values.root_module")
        else:
            cursor.value()


def _state_module(reader: terraform.Reader, cursor: JsonCursor, where: str) -> Iterator[Located]:
    _open(cursor, "{", "an object", where)
    for key in cursor.members():
        if key == "resources":
            _open(cursor, "[", "an array", f"{where}.resources")
            for index in cursor.items():
                offset = cursor.pos
                item = cursor.value()
                at = f"{where}.resources[{index}]"
                _expect(item, dict, "an object", at)
                for field in ("address", "type", "name", "mode"):
                    _expect(item.get(field), str, "a string", f"{at}.{field}")
                if item["mode"] != "managed":
                    continue
                values = item.get("values")
                _expect(values, dict, "an object", f"{at}.values")
                module = _module_of(item["address"], item["type"], item["name"])
                located = reader.resource(item["type"], item["address"], module, values, offset)
                if located is not None:
                    yield located
        elif key == "child_modules":
            _open(cursor, "[", "an array", f"{where}.child_modules")
            for index in cursor.items():
                yield from _state_module(reader, cursor, f"{where}.child_modules[{index}]")
        else:
            cursor.value()


_Reader = Callable[[Document, JsonCursor], Iterator[Located]]

# Top-level key -> the reader of the shape it belongs to (Terraform's keys come in any order).
_READERS: dict[str, _Reader] = {
    "deployment": _stack_export,
    "steps": _preview,
    "format_version": _format_version,
    "terraform_version": _terraform_version,
    "resource_changes": _resource_changes,
    "configuration": _configuration,
    "values": _state,
    **{key: _skimmed(key, depth) for key, depth in _TERRAFORM_SKIMMED.items()},
}


def _resource(state: Any, where: str, urn: str | None, secrets: StackSecrets | None = None) -> Resource:
    """A ResourceV3 object as a rule sees it; ``urn`` is the step's when the state is a preview's newState."""
    _expect(state, dict, "an object", where)
    planned = urn is not None  # a preview step's newState, not a stack export's resource
    if urn is None:
        urn = state.get("urn")
        _expect(urn, str, "a string", f"{where}.urn")
    type_token = state.get("type")
    _expect(type_token, str, "a string", f"{where}.type")
    inputs = _object(state, "inputs", where, secrets)
    # No outputs: a preview step's resource not created yet, whose inputs are the planned state; or, in a stack
    # export, a resource the provider returned no outputs for (ResourceV3 `outputs,omitempty`), which the engine
    # hands stack rules as exactly that: nothing.
    absent = inputs if planned else EMPTY
    outputs = _object(state, "outputs", where, secrets) if "outputs" in state else absent
    parent, provider_id = state.get("parent"), state.get("id")
    if parent is not None:
        _expect(parent, str, "a string", f"{where}.parent")
    if provider_id is not None:
        _expect(provider_id, str, "a string", f"{where}.id")
    raw_dependencies = state.get("propertyDependencies")
    if raw_dependencies is not None:
        _expect(raw_dependencies, dict, "an object", f"{where}.propertyDependencies")
    for name, urns in (raw_dependencies or {}).items():
        _expect(urns, list, "an array", f"{where}.propertyDependencies.{name}")
        for position, dependency in enumerate(urns):
            _expect(dependency, str, "a string", f"{where}.propertyDependencies.{name}[{position}]")
    # URN lists as tuples: read-only, and `urn in ...` runs in C for the stack rules that link pools to clusters.
    dependencies = (
        MappingProxyType({name: tuple(urns) for name, urns in raw_dependencies.items()}) if raw_dependencies else EMPTY
    )
    assert isinstance(urn, str)  # checked above; for the type checker
    assert isinstance(type_token, str)
    via = bridged.BRIDGED.get(type_token)
    if via is not None:
        # Read through the Terraform provider's translation: the rules see the azure-native shape they judge.
        translation = terraform.TRANSLATIONS[via.terraform_type]
        inputs = ReadOnlyMapping(translation.props(bridged.terraform_values(via, state.get("inputs"), secrets)))
        if "outputs" in state:
            outputs = ReadOnlyMapping(translation.props(bridged.terraform_values(via, state.get("outputs"), secrets)))
        else:
            outputs = inputs if planned else EMPTY
        if raw_dependencies:
            dependencies = MappingProxyType(
                {via.dependencies.get(name, name): tuple(urns) for name, urns in raw_dependencies.items()}
            )
        type_token = translation.token
    return Resource(
        type=type_token,
        name=urn.split("::", 3)[-1],  # urn:pulumi:<stack>::<project>::<type>::<name>; a name may hold "::"
        urn=urn,
        props=inputs,
        parent=parent or None,
        outputs=outputs,
        property_dependencies=dependencies,
        id=provider_id or None,
    )


def _object(state: Mapping[str, Any], key: str, where: str, secrets: StackSecrets | None) -> Mapping[str, Any]:
    value = state.get(key)
    if value is None:
        return EMPTY
    _expect(value, dict, "an object", f"{where}.{key}")
    return ReadOnlyMapping(value, secrets)

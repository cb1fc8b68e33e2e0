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
  translated into the type token and properties the rules read (``wirespeed.check.terraform``). Every
  ``format_version`` Terraform has written is read (:data:`TERRAFORM_FORMATS`, what differs between them).
- a raw ``terraform.tfstate`` (state version 4, Terraform 0.12 and later: hashicorp/terraform
  internal/states/statefile/version4.go, ``stateV4``): ``resources[]`` with ``mode``, ``type``, ``name``,
  ``module`` and ``provider``, and per instance ``index_key`` and ``attributes``. ``attributes`` is the same JSON
  object ``terraform show -json`` prints as a state resource's ``values`` (both are the provider schema's JSON
  encoding of the object), so each instance is translated exactly as a shown state's resource is; a ``deposed``
  instance is an old copy waiting to be destroyed and is not checked, as a plan's deletions are not.
- Kubernetes YAML, one or more documents (:mod:`wirespeed.check.manifests`).

Go's encoder writes a nil slice or map as ``null``, and older Pulumi CLIs wrote them so (CLI 3.102 wrote
``"propertyDependencies": {"x": null}``); the engine reads ``null`` there as empty (Go's decoder does), and so do
these readers wherever a stack export or preview holds a list or object: ``deployment.resources``, ``steps``,
``inputs``, ``outputs``, ``propertyDependencies`` and each of its lists. Keys the check does not read
(``dependencies``, ``aliases``, ...) may be ``null`` too.

Before any shape is judged, a text that is not what it claims is named for what it is: an empty file, JSON cut
short or edited by hand (the syntax error wins over anything the readers found before it), the JSON-lines log
stream of ``terraform plan -json``, or YAML that is not Kubernetes objects; each with the command to run instead.

Resource rules see a resource's inputs and stack rules its outputs, as the policy engine hands them over
(pulumi/pulumi v3.276.0 pkg/resource/deploy/step_generator.go: Analyze gets ``inputs``, AnalyzeStack ``v.Outputs``;
observed: tests/engine/test_engine_differential.py); both arrive as read-only views with every number a float
(``readonly``).
A problem in the document is an :class:`UnreadableInputError` naming the JSON path, found wherever it is.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from wirespeed.check import bridged, manifests, terraform
from wirespeed.check.jsonscan import JsonCursor
from wirespeed.check.readonly import EMPTY, ReadOnlyMapping
from wirespeed.check.secrets import SecretsError, StackSecrets
from wirespeed.check.terraform.kubernetes import manifest_type
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
RAW_STATE = Shape(
    "terraform.tfstate",
    "hashicorp/terraform internal/states/statefile/version4.go (stateV4, resourceStateV4, instanceObjectStateV4)",
)
KUBERNETES_YAML = Shape(
    "Kubernetes YAML",
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/#required-fields (apiVersion, kind, metadata)",
)

SUPPORTED = (
    f"`{STACK_EXPORT.name}`, `{PREVIEW.name}` or `terraform show -json` output, a terraform.tfstate, or Kubernetes YAML"
)
WHAT_TO_RUN = (
    "give `pulumi stack export`, `pulumi preview --json`, `terraform show -json PLANFILE` (after `terraform plan "
    "-out PLANFILE`) or `terraform show -json` output, a terraform.tfstate, or Kubernetes YAML"
)
# The `format_version` each Terraform release writes in `terraform show -json` (plans and states alike), and what
# differs for this reader. hashicorp/terraform-exec tfexec/internal/e2etest/show_test.go (commit 330c2d51, TestShow,
# run against every release): "0.1" before Terraform 1.0.1, "0.2" from 1.0.1, "1.0" from 1.1, which is 0.2
# renumbered with no other change (hashicorp/terraform#29502, "json-output: Release format version 1.0"); later
# minors add keys (hashicorp/terraform-json testdata, commit 5a1ca923: 1.2 wrote "1.1", 1.5 "1.2"), and
# terraform-json itself reads ">= 0.1, < 2.0" (plan.go PlanFormatVersionConstraints). Every key this reader reads
# (resource_changes[].address/module_address/mode/type/name/change.actions/after/after_unknown, values.root_module,
# configuration.root_module with expressions[].references and module_calls) is in all of them. What later ones add
# it does not read: before_sensitive/after_sensitive (absent from 0.12's 0.1; a sensitive value is still in
# `after`, they only mark it), sensitive_values (0.2), resource_drift, relevant_attributes (1.1), checks (1.2), and
# the action "forget" (Terraform 1.7), which is not a kept action either way.
TERRAFORM_FORMATS = {
    "0.1": "Terraform 0.12 to 1.0.0",
    "0.2": "Terraform 1.0.1 to 1.0.x",
    "1": "Terraform 1.1 and later",
}
RAW_STATE_VERSION = 4  # stateV4: Terraform 0.12 and later; 0.11 and older wrote version 3 (``modules[]``)

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
        # A UTF-8 byte order mark (what some Windows editors write first) read as the blank it stands for: the same
        # length, so every offset still points where it did in the file.
        self._text = " " + text[1:] if text.startswith("\ufeff") else text
        self.secrets = secrets if secrets is not None else StackSecrets()
        self.shape: Shape | None = None
        self.terraform: terraform.Reader | None = None  # set by the first Terraform key
        self.bridged: dict[str, str] = {}  # URN -> its bridged provider's type (pulumi-azure), for reports
        self.format_version: str | None = None  # Terraform's `format_version`
        self.terraform_version: str | None = None
        self.pulumi_version: str | None = None  # a stack export's deployment.manifest.version

    @property
    def producer(self) -> str | None:
        """Which tool and version wrote the document, as far as it says: ``Terraform 0.12.11, JSON format 0.1``,
        ``Terraform 1.1.0, state version 4``, ``Pulumi CLI v3.102.0``."""
        if self.shape is STACK_EXPORT and self.pulumi_version:
            return f"Pulumi CLI {self.pulumi_version}"
        if self.shape in (TERRAFORM_PLAN, TERRAFORM_STATE):
            version = f"Terraform {self.terraform_version}" if self.terraform_version else "Terraform"
            return f"{version}, JSON format {self.format_version}" if self.format_version else version
        if self.shape is RAW_STATE:
            version = f"Terraform {self.terraform_version}" if self.terraform_version else "Terraform"
            return f"{version}, state version {RAW_STATE_VERSION}"
        return None

    def resources(self) -> Iterator[Resource]:
        for resource, _ in self.located():
            yield resource

    def located(self) -> Iterator[Located]:
        text = self._text
        if not text.strip():
            raise UnreadableInputError(f"the file is empty: {WHAT_TO_RUN}")
        if _looks_like_yaml(text):
            yield from self._yaml()
            return
        try:
            yield from self._json()
        except json.JSONDecodeError as exc:
            raise UnreadableInputError(_not_json(text, exc)) from None
        except RecursionError:
            raise UnreadableInputError("not readable: JSON nested deeper than Python's recursion limit") from None
        except UnreadableInputError:
            # A shape problem found before a syntax error further on: the file is broken JSON (cut short, edited
            # by hand), and saying so is the diagnosis; its format_version or a field was never the problem.
            broken = _syntax_error(text)
            if broken is not None:
                raise UnreadableInputError(_not_json(text, broken)) from None
            raise

    def _json(self) -> Iterator[Located]:
        cursor = JsonCursor(self._text)
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
        if self.shape is STACK_EXPORT and version != 3:
            found = "missing" if version is _MISSING else f"{_shown(version)} is not supported"
            raise UnreadableInputError(f"version: {found}: `pulumi stack export` writes deployment version 3")
        if self.shape is RAW_STATE and version != RAW_STATE_VERSION:
            found = "missing" if version is _MISSING else f"{_shown(version)} is not supported"
            raise UnreadableInputError(
                f"version: {found}: wirespeed reads terraform.tfstate version {RAW_STATE_VERSION} (Terraform 0.12 and "
                "later); or give `terraform show -json` of the state"
            )
        if self.shape is None and ({"lineage", "serial"} & set(keys) or "modules" in keys):
            # A raw state without resources[]: Terraform 0.11's version 3 (modules[]). Never "0 resources".
            raise UnreadableInputError(
                f"a terraform.tfstate of version {_shown(version) if version is not _MISSING else '(none)'}, "
                f"without resources[]: wirespeed reads version {RAW_STATE_VERSION} (Terraform 0.12 and later); "
                "or give `terraform show -json` of the state"
            )
        if self.shape is None and self.terraform is not None:
            self.shape = TERRAFORM_STATE  # `terraform show -json` with no state: {"format_version": "1.0"}
        if self.shape is None:
            if keys and set(keys) <= _PREVIEW_KEYS:
                self.shape = PREVIEW  # a preview of an empty stack: no steps at all
                return
            if "@level" in keys or "@message" in keys:
                raise UnreadableInputError(_STREAM)
            if {"apiVersion", "kind"} <= set(keys):
                # A Kubernetes object (or `kubectl get -o json`'s List) written as JSON, which is YAML too.
                yield from self._yaml()
                return
            listed = ", ".join(f'"{k}"' for k in keys[:8]) + (", ..." if len(keys) > 8 else "")
            raise UnreadableInputError(
                f"unknown shape: top-level keys {listed or '(none)'}; give {SUPPORTED} "
                '({"version": 3, "deployment": {"resources": [...]}}, {"steps": [...]} or {"resource_changes": [...]})'
            )

    def _yaml(self) -> Iterator[Located]:
        """Kubernetes objects from YAML documents, every problem with each at once."""
        self.shape = KUBERNETES_YAML
        try:
            documents = manifests.load_documents(self._text)
        except manifests.YamlError as exc:
            raise UnreadableInputError(f"{exc}{_yaml_hint(self._text)}") from None
        if not documents:
            raise UnreadableInputError(f"the YAML holds no document: {WHAT_TO_RUN}")
        found: list[Located] = []
        problems: list[str] = []
        urns: dict[str, int] = {}
        for document in documents:
            for obj, where in manifests.objects(document):
                token = manifest_type(obj) if isinstance(obj, dict) else None
                if token is None:
                    problems.append(f"{where}: not a Kubernetes object (it needs apiVersion and kind)")
                    continue
                name = manifests.object_name(obj)
                urn = f"{obj['kind']}/{name}"
                urns[urn] = urns.get(urn, 0) + 1
                if urns[urn] > 1:
                    urn = f"{urn}#{urns[urn]}"  # the same object twice: both are judged, each reported apart
                view = ReadOnlyMapping(obj)
                found.append((Resource(type=token, name=name, urn=urn, props=view, outputs=view), document.offset))
        if problems and not found:
            raise UnreadableInputError(
                f"YAML, but not Kubernetes objects ({problems[0]}){_yaml_hint(self._text)}; {WHAT_TO_RUN}"
            )
        if problems:
            shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
            raise UnreadableInputError(f"{shown}: every document must be a Kubernetes object")
        yield from found

    def source_type(self, urn: str, type_token: str) -> str:
        """A resource's type as the document names it (a translated Terraform resource's Terraform type)."""
        if self.terraform is not None:
            return self.terraform.types.get(urn, type_token)
        return type_token

    def adjust(self, violation: Violation) -> Violation:
        """A violation as the document's own tool names things (Terraform addresses, types and attributes; a
        bridged provider's type and property names)."""
        if self.terraform is not None:
            return self.terraform.adjust(violation)
        original = self.bridged.get(violation.resource_urn)
        if original is None:
            return violation
        return dataclasses.replace(
            violation, resource_type=original, message=bridged.reported(original, violation.message)
        )

    def _register(self, resource: Resource, state: Mapping[str, Any]) -> Resource:
        original = state.get("type")
        if isinstance(original, str) and original in bridged.BRIDGED:
            self.bridged[resource.urn] = original
        return resource

    def _claim(self, shape: Shape, key: str) -> None:
        if self.shape is not None and self.shape is not shape:
            raise UnreadableInputError(f'unknown shape: "{key}" ({shape.name}) next to {self.shape.name} content')
        self.shape = shape


_STREAM = (
    "a `terraform plan -json` log stream (one JSON message per line: @level, @message, type), not a plan: save the "
    "plan with `terraform plan -out PLANFILE` and give `terraform show -json PLANFILE`"
)
# What a JSON text can start with (RFC 8259 section 2): anything else is read as YAML.
_JSON_START = re.compile(r'\s*(?:[{\["]|-?\d|true\b|false\b|null\b)')


def _looks_like_yaml(text: str) -> bool:
    return _JSON_START.match(text) is None


def _first_line_object(text: str) -> Any:
    """The first line decoded, when it may be a log message (a large document's one line is never decoded again)."""
    head = text.lstrip()[:4096]
    if '"@level"' not in head and '"@message"' not in head:
        return None
    line = text.lstrip().split("\n", 1)[0]
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _not_json(text: str, exc: json.JSONDecodeError) -> str:
    """What a text that fails as JSON is, and what to give instead."""
    first = _first_line_object(text)
    if isinstance(first, dict) and ("@level" in first or "@message" in first):
        return _STREAM
    if text.lstrip().startswith("[command]"):
        # hashicorp/setup-terraform's wrapper (its input terraform_wrapper, true by default: README) echoes the
        # command before its output.
        return (
            "the output of hashicorp/setup-terraform's wrapper (a `[command]...` line before the JSON): set "
            "`terraform_wrapper: false` on the setup-terraform step, or write the file with "
            "`terraform show -json PLANFILE > plan.json` in a step of its own"
        )
    if exc.pos >= len(text.rstrip()):
        return f"not JSON: {exc}: the file ends before the JSON does (cut short?); {WHAT_TO_RUN}"
    return f"not JSON: {exc}; {WHAT_TO_RUN}"


def _syntax_error(text: str) -> json.JSONDecodeError | None:
    """The first JSON syntax error in ``text``, found piece by piece (never the whole document decoded at once)."""
    cursor = JsonCursor(text)
    try:
        _skim(cursor, 6)
        cursor.end()
    except json.JSONDecodeError as exc:
        return exc
    except RecursionError:
        return None
    return None


def _yaml_hint(text: str) -> str:
    """What a YAML file that is not Kubernetes objects probably is."""
    head = text[:65536]
    if "{{" in head:
        return " (a Helm chart's template? render it first: `helm template`)"
    if re.search(r"^runtime:", head, re.MULTILINE) or re.search(r"^config:", head, re.MULTILINE):
        return " (a Pulumi project or stack file? give the stack's `pulumi preview --json` or `pulumi stack export`)"
    return ""


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
        if key == "manifest":
            manifest = cursor.value()
            version = manifest.get("version") if isinstance(manifest, dict) else None
            document.pulumi_version = version if isinstance(version, str) and version else None
            continue
        if key != "resources":
            cursor.value()
            continue
        read_resources = True
        if cursor.peek() == "n" and cursor.value() is None:
            continue  # a Go nil slice: a stack with no resources
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
    if cursor.peek() == "n" and cursor.value() is None:
        return  # a Go nil slice: no steps
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
    if value not in ("0.1", "0.2") and re.fullmatch(r"1\.\d+", value) is None:
        written = "; ".join(f'"{v}" {who}' if v != "1" else f'"1.x" {who}' for v, who in TERRAFORM_FORMATS.items())
        raise UnreadableInputError(
            f"format_version: {_shown(value)} is not supported: wirespeed reads what `terraform show -json` has "
            f"written ({written})"
        )
    document.format_version = value
    _terraform_reader(document)
    yield from ()


def _terraform_version(document: Document, cursor: JsonCursor) -> Iterator[Located]:
    value = cursor.value()
    _expect(value, str, "a string", "terraform_version")
    document.terraform_version = value
    _terraform_reader(document)
    yield from ()


def _instance_key(key: Any, where: str) -> str:
    """An instance's ``index_key`` as its address writes it: ``[0]`` (count) or ``["a"]`` (for_each)."""
    if key is None:
        return ""
    if isinstance(key, float) and key.is_integer() and key >= 0:
        return f"[{int(key)}]"
    if isinstance(key, str):
        return f"[{json.dumps(key)}]"
    raise UnreadableInputError(f"{where}: expected a whole number or a string, got {_kind(key)} ({_shown(key)})")


def _raw_state(document: Document, cursor: JsonCursor) -> Iterator[Located]:
    """A terraform.tfstate's resources, each instance translated as `terraform show -json` shows its values."""
    document._claim(RAW_STATE, "resources")
    reader = _terraform_reader(document)
    _open(cursor, "[", "an array", "resources")
    for index in cursor.items():
        offset = cursor.pos
        item = cursor.value()
        where = f"resources[{index}]"
        _expect(item, dict, "an object", where)
        for key in ("type", "name", "mode"):
            _expect(item.get(key), str, "a string", f"{where}.{key}")
        module = item.get("module") or ""
        _expect(module, str, "a string", f"{where}.module")
        instances = item.get("instances") or []
        _expect(instances, list, "an array", f"{where}.instances")
        if item["mode"] != "managed":
            continue  # a data source: read at plan time, not part of the infrastructure
        for position, instance in enumerate(instances):
            at = f"{where}.instances[{position}]"
            _expect(instance, dict, "an object", at)
            if instance.get("deposed"):
                continue  # an old copy create_before_destroy left, destroyed at the next apply
            if "attributes" not in instance and "attributes_flat" in instance:
                raise UnreadableInputError(
                    f"{at}: only attributes_flat (Terraform 0.11's flat map, kept by the upgrade to state version "
                    "4): give `terraform show -json` of the state, which decodes it with the provider's schema"
                )
            attributes = instance.get("attributes")
            _expect(attributes, dict, "an object", f"{at}.attributes")
            key = _instance_key(instance.get("index_key"), f"{at}.index_key")
            address = f"{module + '.' if module else ''}{item['type']}.{item['name']}{key}"
            located = reader.resource(item["type"], address, module, attributes, offset)
            if located is not None:
                yield located


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
    "resources": _raw_state,
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
        if urns is None:
            continue  # a Go nil slice (CLI 3.102 wrote them): no dependencies
        _expect(urns, list, "an array", f"{where}.propertyDependencies.{name}")
        for position, dependency in enumerate(urns):
            _expect(dependency, str, "a string", f"{where}.propertyDependencies.{name}[{position}]")
    # URN lists as tuples: read-only, and `urn in ...` runs in C for the stack rules that link pools to clusters.
    dependencies = (
        MappingProxyType({name: tuple(urns) for name, urns in raw_dependencies.items() if urns is not None})
        if raw_dependencies
        else EMPTY
    )
    assert isinstance(urn, str)  # checked above; for the type checker
    assert isinstance(type_token, str)
    via = bridged.BRIDGED.get(type_token)
    if via is not None:
        # Read through the Terraform provider's translation: the rules see the azure-native shape they judge.
        inputs = bridged.native_props(via, state.get("inputs"), secrets)
        if "outputs" in state:
            outputs = bridged.native_props(via, state.get("outputs"), secrets)
        else:
            outputs = inputs if planned else EMPTY
        if raw_dependencies:
            dependencies = MappingProxyType(bridged.native_dependencies(via, dependencies))
        type_token = bridged.native_type(via)
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

"""The records the rules engine deals in: a rule, a resource as the engine hands it over, a violation.

Resources carry their properties as read-only mappings exactly as Pulumi's policy engine passes them
(``pulumi_policy.proxy._DictProxy``: nested Mappings and Sequences, camelCase names, every number a float,
unknown values during preview). Nothing here imports Pulumi.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["low", "medium", "high", "critical"]
SEVERITIES: tuple[Severity, ...] = ("low", "medium", "high", "critical")

# The enforcement levels of Pulumi's policy engine (pulumi/pulumi v3.276.0 sdk/go/common/apitype/policy.go:
# Advisory, Mandatory, Remediate, Disabled): remediate rewrites the resource first and reports what is still wrong
# as mandatory (pkg/resource/deploy/step_generator.go and analyze_snapshot.go "downgrade" remediate to mandatory).
Enforcement = Literal["advisory", "mandatory", "remediate", "disabled"]
ENFORCEMENTS: tuple[Enforcement, ...] = ("advisory", "mandatory", "remediate", "disabled")

Scope = Literal["resource", "stack"]

# A rule's settings after defaults are filled in: {"minimumPorts": 1024, ...}.
Settings = Mapping[str, Any]


@dataclass(frozen=True)
class Resource:
    """One resource as a rule sees it.

    ``props`` are what the engine hands a rule: the resource's inputs for resource rules (``args.props``),
    its outputs for stack rules (``PolicyResource.props``). A ``pulumi stack export`` has both; ``outputs``
    then holds the provider's view, which stack rules read when a key is absent from ``props``.
    ``id`` is the provider's id (an ARM id on Azure) when known: a stack export's ``id``.
    ``property_dependencies`` maps an input name to the URNs it was computed from (how an AgentPool's
    ``resourceName`` points at its cluster when the name itself is unknown during preview).
    """

    type: str
    name: str
    urn: str
    props: Mapping[str, Any]
    parent: str | None = None
    outputs: Mapping[str, Any] | None = None
    property_dependencies: Mapping[str, Sequence[str]] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Violation:
    """One broken rule on one resource; ``message`` says what to set, and why, with this resource's numbers."""

    rule_id: str
    severity: Severity
    enforcement: Enforcement
    resource_urn: str
    resource_name: str
    resource_type: str
    message: str
    # The rule could not judge this resource: a value it needs is a secret nobody decrypted ([secret]).
    unchecked: bool = False
    # Why it could not: a value the plan knows only after apply (True), rather than a secret (False).
    unknown: bool = False
    # An advisory finding its resource keeps with a written reason (tag or annotation wirespeed.io.accept-<rule>):
    # reported as "accepted: <reason>", counted apart, never a violation (wirespeed.rules._accept).
    accepted: str | None = None

    def to_json(self) -> dict[str, str | bool | None]:
        """Stable keys for `wirespeed check --format json`."""
        return {
            "rule": self.rule_id,
            "severity": self.severity,
            "enforcement": self.enforcement,
            "urn": self.resource_urn,
            "name": self.resource_name,
            "type": self.resource_type,
            "message": self.message,
            "unchecked": self.unchecked,
            "accepted": self.accepted,
        }


@dataclass(frozen=True)
class Finding:
    """What a check reports: the resource at fault and the message. The engine adds rule id and level."""

    resource: Resource
    message: str
    # A stack rule that judges resource by resource: this one's ``unknown`` path is known only after apply, so
    # the rule could not judge it (reported as such on a Terraform plan; not applicable in a Pulumi preview).
    unknown: str | None = None


ResourceCheck = Callable[[Resource, Settings], Iterable[Finding]]
StackCheck = Callable[[Sequence[Resource], Settings], Iterable[Finding]]
Remediation = Callable[[Resource, Settings], Mapping[str, Any] | None]


@dataclass(frozen=True)
class Reads:
    """The properties a rule's check reads on resources of one type token (remediations are not counted).

    A path names keys from the props down, as the rule's ``get`` calls walk them: ``networkProfile.outboundType``;
    ``[]`` is every item of an array (``agentPoolProfiles[].vmSize``); a key that is not a plain name is quoted
    (``data["profile.json"]``, ``tags["wirespeed.io.not-network-optimised-reason"]``). A path covers the
    containers above it. Empty ``paths``: the rule looks at the type alone (a gateway exists).

    ``wirespeed check`` translates Terraform resources into these props (``wirespeed.check.terraform``); where it
    cannot give a path, ``not_in_terraform`` says why (path -> reason), and ``no_terraform_type`` says why no
    Terraform resource becomes this type at all. tests/rules/test_rules_reads.py proves both: the rule reads exactly
    these paths, and the translation gives each one that is not excused.
    """

    type: str
    paths: tuple[str, ...] = ()
    not_in_terraform: Mapping[str, str] = field(default_factory=dict)
    no_terraform_type: str = ""


def quoted(key: str) -> str:
    """A key that is not a plain name, as a :class:`Reads` path writes it: ``quoted("profile.json")`` is
    ``["profile.json"]``."""
    return f"[{json.dumps(key)}]"


@dataclass(frozen=True)
class Related:
    """Other resources a resource rule reads to judge some of its own types: an AKSNodeClass (``types``) by the
    NodePools that reference it (``reads``: their types and the paths read on them, as :class:`Reads` declares).

    A resource of ``types`` is judged with every resource of the ``reads`` types in the input in view
    (:func:`in_view`): ``wirespeed check`` judges it once the whole input is read, :func:`evaluate` with the whole
    stack. A Pulumi resource policy sees one resource, so :func:`in_view` is None there and the check says what it
    assumed without them.
    """

    types: tuple[str, ...]
    reads: tuple[Reads, ...]

    def judges(self, type_token: str) -> bool:
        return type_key(type_token) in _keys(self.types)

    def wants(self, type_token: str) -> bool:
        return type_key(type_token) in _keys(tuple(r.type for r in self.reads))


_IN_VIEW: ContextVar[tuple[Resource, ...] | None] = ContextVar("wirespeed_rules_in_view", default=None)


def in_view() -> tuple[Resource, ...] | None:
    """The input's other resources a resource rule's check may read (:class:`Related`), or None when the rule
    judges one resource alone (a Pulumi resource policy)."""
    return _IN_VIEW.get()


@contextlib.contextmanager
def viewing(resources: Iterable[Resource]) -> Iterator[None]:
    """Put ``resources`` in view of the resource checks run inside the block (:func:`in_view`)."""
    token = _IN_VIEW.set(tuple(resources))
    try:
        yield
    finally:
        _IN_VIEW.reset(token)


@dataclass(frozen=True)
class Rule:
    """One policy: its metadata (checked by tests on every rule), where it applies and the check itself.

    ``types`` are Pulumi type tokens; a resource matches by package, module and resource name, so the
    versioned ``azure-native:containerservice/v20240801:AgentPool`` matches
    ``azure-native:containerservice:AgentPool``. A stack rule sees every resource and filters itself.
    ``config_schema`` is the JSON Schema of the rule's settings (``properties``, each with a ``default``),
    as Pulumi's ``PolicyConfigSchema`` takes it. ``reads`` declares the properties the check reads, per type
    (:class:`Reads`). ``remediate`` is set only where rewriting the resource is safe. ``order`` places the rule in
    :data:`wirespeed.rules.RULES` (and so in every output that lists rules): ascending, unique, in steps of 10 so a
    rule can go between two others; the registry refuses a rule without one.
    """

    id: str
    order: int
    description: str
    severity: Severity
    default_enforcement: Enforcement
    remediation: str
    source: str
    scope: Scope
    types: tuple[str, ...]
    config_schema: Mapping[str, Mapping[str, Any]]
    reads: tuple[Reads, ...]
    check: ResourceCheck | StackCheck
    remediate: Remediation | None = None
    related: Related | None = None

    def defers(self, type_token: str) -> bool:
        """Whether this resource rule judges resources of ``type_token`` with others in view (:class:`Related`)."""
        return self.related is not None and self.related.judges(type_token)

    def applies_to(self, type_token: str) -> bool:
        """Whether a resource of ``type_token`` is one this rule checks (always true for stack rules)."""
        return self.scope == "stack" or type_key(type_token) in _keys(self.types)

    def defaults(self) -> dict[str, Any]:
        return {name: prop["default"] for name, prop in self.config_schema.items() if "default" in prop}


# A stack has a handful of distinct type tokens and every rule asks about them for every resource: parse each once.
@functools.lru_cache(maxsize=4096)
def type_key(token: str) -> tuple[str, str, str]:
    """``(package, module, resource)`` of a type token, without the module's version.

    ``azure-native:containerservice/v20240801:AgentPool`` -> ``("azure-native", "containerservice",
    "AgentPool")``; ``kubernetes:apps/v1:DaemonSet`` keeps ``apps/v1`` whole, since Kubernetes versions
    are part of the API group, not a provider's API snapshot; ``aws:eks/nodeGroup:NodeGroup`` keeps its
    module path.
    """
    package, _, rest = token.partition(":")
    module, _, resource = rest.rpartition(":")
    if package == "azure-native":
        head, _, version = module.partition("/")
        if version.startswith("v") and version[1:2].isdigit():
            module = head
    return package, module, resource


@functools.lru_cache(maxsize=256)
def _keys(tokens: tuple[str, ...]) -> frozenset[tuple[str, str, str]]:
    return frozenset(type_key(t) for t in tokens)


def is_type(resource: Resource, *tokens: str) -> bool:
    return type_key(resource.type) in _keys(tokens)

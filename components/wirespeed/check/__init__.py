"""`wirespeed check`: the policy pack's rules, offline, on a stack export, a preview, a Terraform plan or state, or
Kubernetes YAML.

The same ``wirespeed.rules`` the CrossGuard pack runs, over the documents ``readers`` recognises: resource rules
on each resource's inputs as it is read, stack rules once over the resources they look at. Streaming keeps a
200,000-resource export affordable: a resource no rule checks is read, counted and dropped. Every report says
what it judged (:mod:`~wirespeed.check.coverage`): how many resources, how many of a type some rule reads, and the
compute- or egress-looking types it did not read.

    report = check_text(path.read_text(), "export.json", rules.resolve_config(user_config))
    report.blocked  # True when a mandatory violation was found
    report.failed   # blocked, or nothing judged under --require-judged: `wirespeed check` exits 1
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from wirespeed.check import coverage
from wirespeed.check.coverage import Unread
from wirespeed.check.readers import PREVIEW, STACK_EXPORT, Document, Shape, UnreadableInputError
from wirespeed.check.secrets import SecretsError, StackSecrets
from wirespeed.rules import (
    RULES,
    Config,
    Resource,
    Rule,
    Violation,
    check_resource,
    evaluate_stack,
    type_key,
    viewing,
)

__all__ = ["Report", "SecretsError", "StackSecrets", "UnreadableInputError", "check_text", "line_numbers"]


@dataclass(frozen=True)
class Report:
    """What one check found. ``lines`` gives the line in the file where each reported resource starts."""

    file: str
    shape: Shape
    resources: int
    rules: tuple[Rule, ...]
    config: Config
    violations: tuple[Violation, ...]
    lines: Mapping[str, int]
    accepted_unchecked: bool = False  # --accept-unchecked-secrets: unchecked rules were reported as advisory
    judged: int = 0  # resources of a type some enabled rule reads
    unread: tuple[Unread, ...] = ()  # types no enabled rule reads that look like compute or egress
    producer: str | None = None  # the tool and version that wrote the document, when it says
    require_judged: bool = False  # --require-judged or the config's check.requireJudged

    @property
    def nothing_judged(self) -> bool:
        """No resource of a type any enabled rule reads: the check could not have found anything."""
        return self.judged == 0

    @property
    def failed(self) -> bool:
        """What `wirespeed check` exits 1 on: a mandatory violation, or nothing judged when that is required."""
        return self.blocked or not coverage.enough(self.judged, self.require_judged)

    @property
    def unchecked(self) -> list[Violation]:
        """Rules that could not judge a resource: a value they need is a secret nobody decrypted."""
        return [v for v in self.violations if v.unchecked and not v.unknown]

    @property
    def unknown(self) -> list[Violation]:
        """Rules that could not judge a resource: a value they need is known only after apply (a Terraform plan)."""
        return [v for v in self.violations if v.unknown]

    @property
    def mandatory(self) -> list[Violation]:
        return [v for v in self.violations if v.enforcement == "mandatory"]

    @property
    def advisory(self) -> list[Violation]:
        """Advisory findings not accepted with a written reason."""
        return [v for v in self.violations if v.enforcement == "advisory" and not v.accepted]

    @property
    def accepted(self) -> list[Violation]:
        """Advisory findings their resource keeps with a written reason (wirespeed.io.accept-<rule>)."""
        return [v for v in self.violations if v.accepted]

    @property
    def blocked(self) -> bool:
        """A mandatory violation (remediate-level ones are reported as mandatory: nothing rewrites a file)."""
        return bool(self.mandatory)

    @property
    def enabled_rules(self) -> list[Rule]:
        return [r for r in self.rules if self.config.level(r.id) != "disabled"]


class _Selector:
    """Which resources each kind of rule needs, decided once per type token (a stack has few distinct types)."""

    def __init__(self, rules: Sequence[Rule], config: Config) -> None:
        enabled = [r for r in rules if config.level(r.id) != "disabled"]
        self._resource_rules = [r for r in enabled if r.scope == "resource"]
        stack_rules = [r for r in enabled if r.scope == "stack"]
        # A stack rule sees the whole stack but reads only the types it declares; keeping just those is what
        # lets a large export stream. A stack rule that declares no types is given every resource.
        self._keep_all = any(not r.types for r in stack_rules)
        self._stack_keys = {type_key(t) for r in stack_rules for t in r.types}
        self._resource_cache: dict[str, list[Rule]] = {}
        self._stack_cache: dict[str, bool] = {}
        self._related = [r.related for r in self._resource_rules if r.related is not None]

    def resource_rules(self, type_token: str) -> list[Rule]:
        """The resource rules that check this type, in rule order (what ``evaluate_resource`` would run)."""
        found = self._resource_cache.get(type_token)
        if found is None:
            found = self._resource_cache[type_token] = [r for r in self._resource_rules if r.applies_to(type_token)]
        return found

    def reads(self, type_token: str) -> bool:
        """Whether some enabled rule reads resources of this type."""
        return bool(self.resource_rules(type_token)) or self.stack_rules_read(type_token)

    def related(self, type_token: str) -> bool:
        """Whether some enabled resource rule reads this type to judge another (Rule.related): kept in view."""
        return any(related.wants(type_token) for related in self._related)

    def stack_rules_read(self, type_token: str) -> bool:
        if self._keep_all:
            return True
        found = self._stack_cache.get(type_token)
        if found is None:
            found = self._stack_cache[type_token] = type_key(type_token) in self._stack_keys
        return found


def check_text(
    text: str,
    file: str,
    config: Config,
    rules: Sequence[Rule] = RULES,
    secrets: StackSecrets | None = None,
    accept_unchecked_secrets: bool = False,
    require_judged: bool = False,
) -> Report:
    """Run ``rules`` over the document ``text`` (named ``file`` in the report). Raises :class:`UnreadableInputError`,
    or :class:`SecretsError` when ``secrets`` holds a passphrase that does not decrypt the document's secrets.

    A rule that needs a secret nobody decrypted reports that it could not be checked, at its own level (so a
    mandatory rule fails the check), or as advisory when ``accept_unchecked_secrets``. With ``require_judged`` (or
    the config's ``check.requireJudged``), an input of which no resource is of a type some rule reads fails."""
    document = Document(text, secrets)
    select = _Selector(rules, config)
    violations: list[Violation] = []
    kept: list[Resource] = []
    offsets: dict[str, int] = {}
    count = judged = 0
    root = _RootStack()
    not_read: Counter[str] = Counter()  # resources no rule reads, by type as the document names it

    def judge(resource: Resource, offset: int, applicable: Sequence[Rule]) -> None:
        # A Terraform plan is judged once, before apply: what it cannot know is "could not be checked" (the
        # document knows it is a plan once reading has begun).
        judged_once = document.terraform is not None
        found = [v for rule in applicable for v in check_resource(rule, resource, config, judged_once)]
        if found:
            violations.extend(found)
            offsets[resource.urn] = offset

    # Resources a rule judges by others (an AKSNodeClass by its NodePools, Rule.related) wait for the whole input.
    deferred: list[tuple[Resource, int, list[Rule]]] = []
    related: list[Resource] = []
    for resource, offset in document.located():
        count += 1
        root.see(resource, offset)
        if select.reads(resource.type):
            judged += 1
        else:
            not_read[document.source_type(resource.urn, resource.type)] += 1
        applicable = select.resource_rules(resource.type)
        judge(resource, offset, [r for r in applicable if not r.defers(resource.type)])
        later = [r for r in applicable if r.defers(resource.type)]
        if later:
            deferred.append((resource, offset, later))
        if select.related(resource.type):
            related.append(resource)
        if select.stack_rules_read(resource.type):
            kept.append(resource)
            offsets.setdefault(resource.urn, offset)
    with viewing(related):
        for resource, offset, later in deferred:
            judge(resource, offset, later)
    violations.extend(evaluate_stack(kept, config, rules, unknown_unchecked=document.terraform is not None))
    violations = _as_reported(document, violations, root, offsets, accept_unchecked_secrets)
    assert document.shape is not None  # located() raises before finishing without one
    reported = {v.resource_urn: offsets[v.resource_urn] for v in violations if v.resource_urn in offsets}
    return Report(
        file=file,
        shape=document.shape,
        resources=count,
        rules=tuple(rules),
        config=config,
        violations=tuple(violations),
        lines=line_numbers(text, reported),
        accepted_unchecked=accept_unchecked_secrets,
        judged=judged,
        unread=coverage.unread(not_read),
        producer=document.producer,
        require_judged=require_judged or config.require_judged,
    )


def _as_reported(
    document: Document,
    violations: Sequence[Violation],
    root: _RootStack,
    offsets: dict[str, int],
    accept_unchecked_secrets: bool,
) -> list[Violation]:
    """The violations as the report gives them: secrets nobody decrypted said so, and a stack-level finding of a
    stack export or preview on its root stack (whose offset joins ``offsets``)."""
    why = (
        f"`{PREVIEW.name}` prints every secret as [secret]; check a `pulumi stack export` of the stack instead"
        if document.shape is PREVIEW
        else document.secrets.why_unreadable()
    )
    found = [_unchecked(document.adjust(v), why, accept_unchecked_secrets) for v in violations]
    if document.shape in (STACK_EXPORT, PREVIEW) and root.urn:
        found = [_on_the_stack(v, root.urn) for v in found]
        if root.offset is not None:
            offsets.setdefault(root.urn, root.offset)
    return found


STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass
class _RootStack:
    """The stack's own URN, where the engine reports a stack policy's violation that names no resource of the
    stack (pkg/resource/deploy/analyze_snapshot.go: snapshotRootStackURN, resolveStackPolicyViolationURN): the
    unparented `pulumi:pulumi:Stack` resource, else the URN Pulumi gives a project's root stack
    (resource.DefaultRootStackURN) from the first resource's stack and project."""

    urn: str = ""
    offset: int | None = None

    def see(self, resource: Resource, offset: int) -> None:
        if self.offset is not None:
            return
        if resource.type == STACK_TYPE and not resource.parent:
            self.urn, self.offset = resource.urn, offset
            return
        parts = resource.urn.split("::")
        if not self.urn and resource.urn.startswith("urn:pulumi:") and len(parts) >= 4:
            stack, project = parts[0].removeprefix("urn:pulumi:"), parts[1]
            self.urn = f"urn:pulumi:{stack}::{project}::{STACK_TYPE}::{project}-{stack}"


def _on_the_stack(violation: Violation, root: str) -> Violation:
    """A stack rule's violation that names no resource, on the stack's URN as the engine reports it."""
    if violation.resource_urn or violation.resource_type != STACK_TYPE:
        return violation
    return dataclasses.replace(violation, resource_urn=root)


def _unchecked(violation: Violation, why: str, accepted: bool) -> Violation:
    """An unchecked rule's violation with why the secret was not read here, advisory when the user accepted that."""
    if not violation.unchecked or violation.unknown:
        return violation
    message = f"{violation.message} Here: {why}"
    if accepted:
        message += " (accepted with --accept-unchecked-secrets: reported, not enforced)"
        return dataclasses.replace(violation, message=message, enforcement="advisory")
    return dataclasses.replace(violation, message=message + ", or pass --accept-unchecked-secrets.")


def line_numbers(text: str, offsets: Mapping[str, int]) -> dict[str, int]:
    """The 1-based line of each offset, counting newlines once through the text however many are asked for."""
    lines: dict[str, int] = {}
    line, at = 1, 0
    for key, offset in sorted(offsets.items(), key=lambda item: item[1]):
        line += text.count("\n", at, offset)
        at = offset
        lines[key] = line
    return lines


def sorted_violations(violations: Iterable[Violation], lines: Mapping[str, int]) -> list[Violation]:
    """Mandatory first, then by position in the file and rule id: the order every format prints."""
    return sorted(
        violations,
        key=lambda v: (v.enforcement != "mandatory", lines.get(v.resource_urn, 0), v.rule_id, v.resource_urn),
    )

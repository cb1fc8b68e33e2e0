"""Running rules: the one place that applies enforcement levels, config and "unknown means not applicable"."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from wirespeed.rules._accept import accepted_reason, not_applied
from wirespeed.rules._config import Config, resolve_config
from wirespeed.rules._model import (
    Enforcement,
    Finding,
    Resource,
    ResourceCheck,
    Rule,
    StackCheck,
    Violation,
    viewing,
)
from wirespeed.rules._registry import RULES
from wirespeed.values import BLINDED_SECRET, NotKnown, SecretNotReadable

# Where a stack rule that could not be checked is reported: the stack itself (the engine's stack-level diagnostic).
STACK_TYPE = "pulumi:pulumi:Stack"


def reported_level(level: Enforcement) -> Enforcement:
    """The level a violation is reported at: what remediation could not fix is mandatory (Pulumi does the same)."""
    return "mandatory" if level == "remediate" else level


def unchecked_message(rule: Rule, path: str) -> str:
    return (
        f"{rule.id} could not be checked: {path} is a secret that was not decrypted (it reads {BLINDED_SECRET}), "
        "so this rule cannot say whether the value is safe. Run the check where the stack's secrets can be "
        "decrypted, or accept unchecked secrets explicitly."
    )


def unknown_message(rule: Rule, path: str) -> str:
    return (
        f"{rule.id} could not be checked: {path} is known only after apply (the configuration writes it from "
        "another resource's value), so this rule cannot say whether the value is safe. Write the value in the "
        "configuration, or check the state after apply (`terraform show -json`)."
    )


def _could_not_check(
    rule: Rule, subject: Resource | None, level: Enforcement, message: str, *, unknown: bool
) -> Violation:
    """The one verdict a rule gives when it could not read what it needs (a secret, or a value only apply knows):
    at its own level on its subject (the stack when it has none), never a silent pass."""
    return Violation(
        rule_id=rule.id,
        severity=rule.severity,
        enforcement=reported_level(level),
        resource_urn=subject.urn if subject else "",
        resource_name=subject.name if subject else "(stack)",
        resource_type=subject.type if subject else STACK_TYPE,
        message=message,
        unchecked=True,
        unknown=unknown,
    )


def _violations(
    rule: Rule,
    level: Enforcement,
    run: Callable[[], Iterable[Finding]],
    subject: Resource | None,
    unknown_unchecked: bool = False,
) -> list[Violation]:
    try:
        findings = list(run())
    except NotKnown as exc:
        if not unknown_unchecked:
            return []  # a value the rule needs is unknown during preview: not applicable, never a guess
        # A Terraform plan is judged once, before apply: no later run sees the value, so an unknown the
        # configuration did write is "could not be checked" at the rule's level, never a silent pass.
        return [_could_not_check(rule, subject, level, unknown_message(rule, exc.path), unknown=True)]
    except SecretNotReadable as exc:
        # Never "not applicable": a gate that cannot read a value must not pass it silently.
        return [_could_not_check(rule, subject, level, unchecked_message(rule, exc.path), unknown=False)]
    return [_finding(rule, level, f) for f in findings if f.unknown is None or unknown_unchecked]


def _finding(rule: Rule, level: Enforcement, found: Finding) -> Violation:
    """One finding as reported: accepted when the rule is advisory and its resource says why it keeps it; a
    mandatory finding keeps standing and says the reason was not applied."""
    reported = reported_level(level)
    reason = accepted_reason(found.resource.props, rule.id) if found.unknown is None else None
    message = found.message if found.unknown is None else unknown_message(rule, found.unknown)
    if reason and reported != "advisory":
        message, reason = message + not_applied(rule.id), None
    return Violation(
        rule_id=rule.id,
        severity=rule.severity,
        enforcement=reported,
        resource_urn=found.resource.urn,
        resource_name=found.resource.name,
        resource_type=found.resource.type,
        message=message,
        unchecked=found.unknown is not None,
        unknown=found.unknown is not None,
        accepted=reason,
    )


def check_resource(rule: Rule, resource: Resource, config: Config, unknown_unchecked: bool = False) -> list[Violation]:
    """One resource rule on one resource, at its configured level (nothing when disabled or not its type).
    ``unknown_unchecked``: a value unknown until apply makes the rule "could not be checked" (a Terraform plan,
    judged once) instead of not applicable (a Pulumi preview, judged again at update)."""
    level = config.level(rule.id)
    if rule.scope != "resource" or level == "disabled" or not rule.applies_to(resource.type):
        return []
    check = cast(ResourceCheck, rule.check)
    settings = config.settings_for(rule.id)
    return _violations(rule, level, lambda: check(resource, settings), resource, unknown_unchecked)


def stack_view(resource: Resource) -> Resource:
    """``resource`` as a stack policy sees it: its outputs and nothing else (the engine's ``AnalyzeStack`` hands
    over ``PolicyResource.props`` = outputs). A resource known only by its inputs (a preview step of a resource not
    created yet; a pack's stack resource, already outputs) keeps them."""
    if resource.outputs is None:
        return resource
    return dataclasses.replace(resource, props=resource.outputs, outputs=None)


def check_stack(
    rule: Rule, resources: Sequence[Resource], config: Config, unknown_unchecked: bool = False
) -> list[Violation]:
    """One stack rule over every resource of the stack, each seen by its outputs (:func:`stack_view`)."""
    level = config.level(rule.id)
    if rule.scope != "stack" or level == "disabled":
        return []
    check = cast(StackCheck, rule.check)
    settings = config.settings_for(rule.id)
    viewed = [stack_view(r) for r in resources]
    return _violations(rule, level, lambda: check(viewed, settings), None, unknown_unchecked)


def _rules(rules: Sequence[Rule] | None) -> Sequence[Rule]:
    return RULES if rules is None else rules


def evaluate_resource(
    resource: Resource, config: Config | None = None, rules: Sequence[Rule] | None = None
) -> list[Violation]:
    """Every resource rule that applies to ``resource`` (its inputs in ``props``)."""
    rules = _rules(rules)
    config = config or resolve_config(None, rules)
    return [v for rule in rules for v in check_resource(rule, resource, config)]


def evaluate_stack(
    resources: Sequence[Resource],
    config: Config | None = None,
    rules: Sequence[Rule] | None = None,
    unknown_unchecked: bool = False,
) -> list[Violation]:
    """Every stack rule over the whole stack (what ``AnalyzeStack`` runs)."""
    rules = _rules(rules)
    config = config or resolve_config(None, rules)
    resources = list(resources)
    return [v for rule in rules for v in check_stack(rule, resources, config, unknown_unchecked)]


def evaluate(
    resources: Sequence[Resource], config: Config | None = None, rules: Sequence[Rule] | None = None
) -> list[Violation]:
    """Resource rules on each resource, then the stack rules: what a preview with the pack reports."""
    rules = _rules(rules)
    config = config or resolve_config(None, rules)
    resources = list(resources)
    # Rules per type token, worked out once per distinct token rather than once per resource.
    by_type: dict[str, list[Rule]] = {}
    found: list[Violation] = []
    with viewing(resources):  # a rule judging one type by others (Rule.related) sees the whole stack
        for resource in resources:
            applicable = by_type.get(resource.type)
            if applicable is None:
                applicable = by_type[resource.type] = [
                    r for r in rules if r.scope == "resource" and r.applies_to(resource.type)
                ]
            for rule in applicable:
                found.extend(check_resource(rule, resource, config))
    return found + evaluate_stack(resources, config, rules)


def remediate_with(rule: Rule, resource: Resource, config: Config) -> Mapping[str, Any] | None:
    """The props after ``rule``'s remediation, or None when it has none, does not apply or changes nothing."""
    if rule.remediate is None or rule.scope != "resource" or not rule.applies_to(resource.type):
        return None
    try:
        return rule.remediate(resource, config.settings_for(rule.id))
    except NotKnown:
        return None


def remediate(
    resource: Resource, config: Config | None = None, rules: Sequence[Rule] | None = None
) -> Mapping[str, Any] | None:
    """Apply every rule at ``remediate`` level that can fix ``resource`` safely, in order; the new props, or None
    when nothing changed. Other levels never rewrite a resource."""
    rules = _rules(rules)
    config = config or resolve_config(None, rules)
    current = resource
    changed = False
    for rule in rules:
        if config.level(rule.id) != "remediate":
            continue
        new_props = remediate_with(rule, current, config)
        if new_props is not None:
            current = Resource(
                current.type,
                current.name,
                current.urn,
                new_props,
                current.parent,
                current.outputs,
                current.property_dependencies,
                current.id,
            )
            changed = True
    return current.props if changed else None

"""The CrossGuard adapter: each ``wirespeed.rules`` rule as a ``pulumi_policy`` policy.

``policies/wirespeed/__main__.py`` passes :func:`policies` to ``PolicyPack``, whose constructor starts the gRPC
server and blocks; everything here is testable without it. The rules see ``args.props`` exactly as the engine
hands them over (the SDK's read-only proxy); this module only translates metadata, config and results.

This is the one library module that imports ``pulumi_policy``: the pure core never does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from wirespeed import rules
from wirespeed.check import bridged
from wirespeed.rules import Resource, Rule
from wirespeed.values import plain

PACK_NAME = "wirespeed"
TAGS = ["wirespeed", "networking"]
_URL = re.compile(r"https?://\S+?(?=[;,)]?(?:\s|$))")


def rule_config(rule: Rule, policy_config: Mapping[str, Any] | None) -> rules.Config:
    """The engine's config for one policy (its settings, numbers as floats) resolved against the rule's schema,
    defaults filled in. The engine already applied the enforcement level, so the rule runs at its default here."""
    settings = {k: v for k, v in (policy_config or {}).items() if k != rules.LEVEL_KEY}
    return rules.resolve_config({rule.id: settings} if settings else None)


def resource_of(args: ResourceValidationArgs) -> Resource:
    """The resource a rule judges. A bridged provider's (pulumi-azure) is read through its Terraform provider's
    translation, as `wirespeed check` reads it (``wirespeed.check.bridged``): the azure-native type and shape the
    rules know, on its own URN. Unknown values stay the engine's sentinels, which the rules treat as not
    applicable."""
    via = bridged.BRIDGED.get(args.resource_type)
    if via is None:
        return Resource(args.resource_type, args.name, args.urn, args.props, parent=args.opts.parent)
    props = bridged.native_props(via, plain(args.props), None)
    return Resource(bridged.native_type(via), args.name, args.urn, props, parent=args.opts.parent)


def stack_resource_of(resource: PolicyResource) -> Resource:
    """A stack resource (its outputs as ``props``) with its parent and property dependencies as URNs; a bridged
    provider's read as :func:`resource_of` reads it."""
    dependencies = {k: [d.urn for d in v] for k, v in resource.property_dependencies.items()}
    parent = resource.parent.urn if resource.parent is not None else None
    via = bridged.BRIDGED.get(resource.resource_type)
    if via is None:
        return Resource(
            resource.resource_type,
            resource.name,
            resource.urn,
            resource.props,
            parent=parent,
            property_dependencies=dependencies,
        )
    return Resource(
        bridged.native_type(via),
        resource.name,
        resource.urn,
        bridged.native_props(via, plain(resource.props), None),
        parent=parent,
        property_dependencies=bridged.native_dependencies(via, dependencies),
    )


def _resource_policy(rule: Rule) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        config = rule_config(rule, args.get_config())
        for violation in rules.check_resource(rule, resource_of(args), config):
            if violation.accepted:
                continue  # kept with a written reason on the resource, which the pull request reviewed
            report_violation(bridged.reported(args.resource_type, violation.message), None)

    def remediate(args: ResourceValidationArgs) -> Mapping[str, Any] | None:
        if args.resource_type in bridged.BRIDGED:
            return None  # a rule rewrites the azure-native shape, not the bridged one: validate reports it instead
        config = rule_config(rule, args.get_config())
        new_props = rules.remediate_with(rule, resource_of(args), config)
        if new_props is None:
            return None
        write_back(args.props, new_props)
        return args.props

    return ResourceValidationPolicy(
        name=rule.id,
        description=rule.description,
        validate=validate,
        # The SDK's annotation asks for an awaitable, but its servicer takes a plain mapping as well
        # (_PolicyAnalyzerServicer.Remediate: `elif result is not None: new_props = result`).
        remediate=remediate if rule.remediate is not None else None,  # type: ignore[arg-type]
        **_metadata(rule),
    )


def write_back(target: Any, new: Mapping[str, Any]) -> None:
    """Store what a remediation changed into the engine's own props, key by key, through the SDK proxy's
    ``__setitem__``: a value that was a secret stays one (``_DictSecretsProxy``), and whatever the rule did not
    change is handed back exactly as the engine sent it."""
    present = set(target)
    for key, value in new.items():
        if key not in present:
            target[key] = value
            continue
        try:
            old = target[key]
        except UnknownValueError:
            continue  # unknown until the update runs; the remediation kept its sentinel
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            write_back(old, value)
        elif old != value:
            target[key] = value


def _stack_policy(rule: Rule) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        config = rule_config(rule, args.get_config())
        resources = [stack_resource_of(r) for r in args.resources]
        types = {r.urn: r.resource_type for r in args.resources}  # as the engine names them, for the messages
        for violation in rules.check_stack(rule, resources, config):
            if violation.accepted:
                continue  # kept with a written reason on the resource, which the pull request reviewed
            message = bridged.reported(types.get(violation.resource_urn, ""), violation.message)
            report_violation(message, violation.resource_urn)

    return StackValidationPolicy(name=rule.id, description=rule.description, validate=validate, **_metadata(rule))


def _metadata(rule: Rule) -> dict[str, Any]:
    url = _URL.search(rule.source)
    return {
        "enforcement_level": EnforcementLevel(rule.default_enforcement),
        "config_schema": PolicyConfigSchema(properties={k: dict(v) for k, v in rule.config_schema.items()})
        if rule.config_schema
        else None,
        "severity": Severity(rule.severity),
        "remediation_steps": rule.remediation,
        "url": url.group(0) if url else None,
        "tags": [*TAGS, rule.scope],
    }


def policy(rule: Rule) -> Policy:
    return _stack_policy(rule) if rule.scope == "stack" else _resource_policy(rule)


def policies() -> list[Policy]:
    """Every rule of ``wirespeed.rules.RULES`` as a policy, in the same order."""
    return [policy(rule) for rule in rules.RULES]

"""Written reasons: how a resource says, in review, why it keeps a finding.

One reader for every rule. The engine accepts an advisory finding whose resource carries ``wirespeed.io.accept-
<rule id>`` (a tag on a cloud resource, an annotation on a Kubernetes object) with a non-empty reason: the finding
is then reported as "accepted: <reason>" and counted apart, never as a violation. A mandatory finding is never
accepted this way: its message says the reason was not applied. network-optimised-sku's own tag
(``wirespeed.io.not-network-optimised-reason``, under its setting acceptWrittenReason) is read by the same
:func:`written_reason`.

The key has no "/": Azure tag names cannot contain one (learn.microsoft.com/azure/azure-resource-manager/
management/tag-resources#limitations); without a prefix it is still a valid Kubernetes annotation key of at most 63
characters (kubernetes.io/docs/concepts/overview/working-with-objects/annotations/#syntax-and-character-set).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wirespeed.names import REASON_MAX_LENGTH
from wirespeed.problems import Problem, did_you_mean
from wirespeed.values import NotKnown, SecretNotReadable, get, text

ACCEPT_PREFIX = "wirespeed.io.accept-"
# Where a resource carries its labels: tags on AWS and Azure resources, annotations on Kubernetes objects.
REASON_CONTAINERS = (("tags",), ("metadata", "annotations"))


def accept_key(rule_id: str) -> str:
    """The tag or annotation that carries the written reason for keeping ``rule_id``'s advisory finding."""
    return ACCEPT_PREFIX + rule_id


def written_reason(container: object, *path: str) -> str | None:
    """The non-empty reason at ``path`` (stripped), or None. A value unknown during preview or an undecrypted
    secret is no reason: the finding then stands."""
    try:
        reason = text(get(container, *path))
    except (NotKnown, SecretNotReadable):
        return None
    return reason.strip() if reason and reason.strip() else None


def accepted_reason(props: Mapping[str, Any] | None, rule_id: str) -> str | None:
    """The reason ``props`` gives for keeping ``rule_id``'s finding, from its tags or its annotations."""
    if props is None:
        return None
    key = accept_key(rule_id)
    for where in REASON_CONTAINERS:
        reason = written_reason(props, *where, key)
        if reason:
            return reason
    return None


def not_applied(rule_id: str) -> str:
    """What a mandatory finding's message adds when its resource carries a reason anyway."""
    return (
        f" (the resource's {accept_key(rule_id)} reason is not applied: {rule_id} is mandatory here, and a mandatory "
        "finding cannot be accepted by a written reason; fix what it names, or set the rule to advisory in the "
        "policy config, reviewed like any other change to the gate)"
    )


def accepted_advisories_problems(value: object, field: str = "accepted_advisories") -> list[Problem]:
    """Every way a component's ``accepted_advisories`` ({rule id: reason}) is wrong, all at once: a rule that is
    not wirespeed's, a rule that is mandatory by default (its finding cannot be accepted by a reason), a reason
    that is empty or longer than a tag value holds."""
    from wirespeed.rules._registry import RULES

    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [Problem.refused(field, value, "a mapping of an advisory rule id to the reason its finding is kept")]
    advisory = sorted(r.id for r in RULES if r.default_enforcement == "advisory")
    levels = {r.id: r.default_enforcement for r in RULES}
    problems = []
    for rule_id, reason in value.items():
        where = f"{field}[{rule_id!r}]"
        if rule_id not in levels:
            near = did_you_mean(str(rule_id), list(levels))
            problems.append(Problem.refused(field, rule_id, f"an advisory rule id ({', '.join(advisory)}){near}"))
        elif levels[rule_id] != "advisory":
            problems.append(
                Problem.refused(
                    field,
                    rule_id,
                    f"an advisory rule id ({', '.join(advisory)}): {rule_id} is {levels[rule_id]}, and a mandatory "
                    "finding cannot be accepted by a written reason; fix what it names",
                )
            )
        if not isinstance(reason, str) or not reason.strip():
            problems.append(Problem.refused(where, reason, "a non-empty sentence saying why the finding is kept"))
        elif len(reason.strip()) > REASON_MAX_LENGTH:
            problems.append(
                Problem.refused(
                    where,
                    reason,
                    f"at most {REASON_MAX_LENGTH} characters (it is written as a tag or annotation value; Azure and "
                    f"AWS tag values hold 256); it has {len(reason.strip())}",
                )
            )
    return problems


def accepted_labels(value: Mapping[str, str] | None) -> dict[str, str]:
    """``accepted_advisories`` as the tags or annotations the engine reads (checked first by
    :func:`accepted_advisories_problems`)."""
    return {accept_key(rule_id): reason.strip() for rule_id, reason in (value or {}).items()}

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

"""The components' ``accepted_advisories`` ({rule id: reason}): checked against the registry (only advisory rules)
and written as the tags or annotations the engine reads (:mod:`wirespeed.rules._accept`). Apart from that module
because it needs every rule, and the rules need that one."""

from __future__ import annotations

from collections.abc import Mapping

from wirespeed.names import REASON_MAX_LENGTH
from wirespeed.problems import Problem, did_you_mean
from wirespeed.rules._accept import accept_key
from wirespeed.rules._registry import RULES


def accepted_advisories_problems(value: object, field: str = "accepted_advisories") -> list[Problem]:
    """Every way a component's ``accepted_advisories`` ({rule id: reason}) is wrong, all at once: a rule that is
    not wirespeed's, a rule that is mandatory by default (its finding cannot be accepted by a reason), a reason
    that is empty or longer than a tag value holds."""
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

"""`wirespeed plan --compare PREVIOUS.json`: which pools a change would replace.

A pool is replaced when any of its create-only inputs (:mod:`wirespeed.program.create_only`) differs from the
previous plan of the same project: AKS builds a new pool and drains the old one. Pure (no Pulumi import).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from wirespeed.program.review import JSON_SCHEMA_VERSION, PlanReview
from wirespeed.program.sections import Replacement


class CompareError(ValueError):
    """The previous plan cannot be compared with this one."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


def compare_with(current: PlanReview, previous: Mapping[str, Any]) -> PlanReview:
    """``current`` with ``replacements`` (create-only inputs that changed) and notes on added/removed pools."""
    if previous.get("mode") != "program" or previous.get("schema_version") != JSON_SCHEMA_VERSION:
        raise CompareError(
            f"--compare: not a `wirespeed plan DIR --json` document of schema_version {JSON_SCHEMA_VERSION} "
            f"(mode {previous.get('mode')!r}, schema_version {previous.get('schema_version')!r})"
        )
    project = current.plan.project.name
    if previous.get("project") != project:
        raise CompareError(f"--compare: the previous plan is of project {previous.get('project')!r}, not {project!r}")
    pools = previous.get("pools") or []
    if not isinstance(pools, list) or not all(isinstance(p, Mapping) for p in pools):
        raise CompareError("--compare: `pools` of the previous plan is not a list of pool objects")
    before = {(str(p.get("cluster")), str(p.get("name"))): p for p in pools}
    replacements: list[Replacement] = []
    findings: list[str] = []
    seen = set()
    for pool in current.pools:
        key = (pool.cluster, pool.name)
        seen.add(key)
        old = before.get(key)
        if old is None:
            findings.append(f"pool {pool.name} (cluster {pool.cluster}) is new since the previous plan")
            continue
        now = pool.to_json()["create_only"]
        was = old.get("create_only") or {}
        if not isinstance(was, Mapping):
            raise CompareError(f"--compare: pool {pool.name}: `create_only` of the previous plan is not an object")
        changed = {k: (was.get(k), v) for k, v in now.items() if was.get(k) != v}
        if changed:
            replacements.append(Replacement(pool.name, pool.cluster, changed))
    findings.extend(
        f"pool {name} (cluster {cluster}) was in the previous plan and is gone: it would be deleted"
        for cluster, name in sorted(set(before) - seen)
    )
    return dataclasses.replace(
        current, replacements=tuple(replacements), findings=current.findings + tuple(findings), compared=True
    )

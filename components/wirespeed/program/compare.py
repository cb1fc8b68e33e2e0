"""`wirespeed plan --compare PREVIOUS.json`: what a change does, for the reviewer of its pull request.

A pool is replaced when any of its create-only inputs (:mod:`wirespeed.program.create_only`) differs from the
previous plan of the same project: AKS builds a new pool and drains the old one. Every outbound setting that moved
(allocatedOutboundPorts, the IP count, the outbound type, the idle timeout), every SNAT alert threshold that moved
and every outbound address that appears or goes (partners allowlist them: a new one must be on their lists before
the merge) are listed too. Pure (no Pulumi import).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from wirespeed.program.review import JSON_SCHEMA_VERSION, PlanReview
from wirespeed.program.sections import Change, Replacement
from wirespeed.program.text import address_order

# The outbound settings compared, as the plan's JSON names them and as the text shows them.
_OUTBOUND_FIELDS = {
    "outbound_type": "outboundType",
    "allocated_outbound_ports": "allocatedOutboundPorts",
    "ip_count": "outbound IP count",
    "idle_timeout_minutes": "idle timeout (minutes)",
}
# The resource types whose outputs are outbound addresses, and the output that holds the address.
_ADDRESS_OUTPUTS = {"azure-native:network:PublicIPAddress": "ipAddress", "aws:ec2/eip:Eip": "publicIp"}


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
    now_json = current.to_json()
    changes = (
        _outbound_changes(_list_of_objects(previous, "outbound"), now_json["outbound"])
        + _alert_changes(_list_of_objects(previous, "resources"), now_json["resources"])
        + _address_changes(_list_of_objects(previous, "resources"), now_json["resources"])
    )
    return dataclasses.replace(
        current,
        replacements=tuple(replacements),
        changes=tuple(changes),
        findings=current.findings + tuple(findings),
        compared=True,
    )


def _list_of_objects(previous: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    items = previous.get(key) or []
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise CompareError(f"--compare: `{key}` of the previous plan is not a list of objects")
    return items


def _outbound_changes(before: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]) -> list[Change]:
    was = {str(o.get("cluster")): o for o in before}
    changes = []
    for outbound in now:
        cluster = str(outbound["cluster"])
        old = was.get(cluster)
        if old is None:
            changes.append(Change("outbound", f"cluster {cluster}", "outbound", None, outbound.get("outbound_type")))
            continue
        changes.extend(
            Change("outbound", f"cluster {cluster}", label, old.get(key), outbound.get(key))
            for key, label in _OUTBOUND_FIELDS.items()
            if old.get(key) != outbound.get(key)
        )
    return changes


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _alerts(resources: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each metric alert's criteria by alert name: metric -> (operator, threshold), and its severity."""
    found: dict[str, dict[str, Any]] = {}
    for r in resources:
        if not str(r.get("type", "")).endswith(":MetricAlert"):
            continue
        inputs = _object(r.get("inputs"))
        criteria = _object(inputs.get("criteria"))
        values: dict[str, Any] = {"severity": inputs.get("severity")}
        for c in criteria.get("allOf") or []:
            if isinstance(c, Mapping):
                values[f"{c.get('metricName')} {c.get('operator')}"] = c.get("threshold")
        found[str(r.get("name"))] = values
    return found


def _alert_changes(before: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]) -> list[Change]:
    was, alerts = _alerts(before), _alerts(now)
    changes = []
    for name in sorted(set(was) | set(alerts)):
        old, new = was.get(name), alerts.get(name)
        if old is None or new is None:
            presence = ("present" if old else None, "present" if new else None)
            changes.append(Change("alert", f"alert {name}", "alert", *presence))
            continue
        changes.extend(
            Change("alert", f"alert {name}", key, old.get(key), new.get(key))
            for key in sorted(set(old) | set(new))
            if old.get(key) != new.get(key)
        )
    return changes


def _addresses(resources: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each outbound address of the plan, with the name of the resource that holds it."""
    found = {}
    for r in resources:
        key = _ADDRESS_OUTPUTS.get(str(r.get("type")))
        outputs = _object(r.get("outputs"))
        value = outputs.get(key) if key else None
        if isinstance(value, str) and value:
            found[value] = str(r.get("name"))
    return found


def _address_changes(before: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]) -> list[Change]:
    was, addresses = _addresses(before), _addresses(now)
    added = sorted(set(addresses) - set(was), key=address_order)
    removed = sorted(set(was) - set(addresses), key=address_order)
    return [Change("address", a, "added", None, a, resource=addresses[a]) for a in added] + [
        Change("address", a, "removed", a, None, resource=was[a]) for a in removed
    ]

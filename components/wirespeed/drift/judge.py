"""Is each node still tuned the way its profile says? Pure judging: Node facts and profiles in, verdicts out.

A node's facts are what the agent wrote on it (agent/internal/nodestatus/README.md): the annotation
``wirespeed.io/tuning-status`` (a ``status.Report`` as JSON, agent/internal/status/status.go) and the condition
``NetworkTuningDegraded``. The expected values are the profile the node's ``wirespeed.io/profile`` label names,
as the cluster's tuning ConfigMap holds it (wirespeed.manifests), so a profile edited in the cluster but not yet
rolled out shows as drift too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from wirespeed.manifests.node_tuning import PROFILE_LABEL

ANNOTATION_KEY = "wirespeed.io/tuning-status"  # agent/internal/status/status.go AnnotationKey
CONDITION_TYPE = "NetworkTuningDegraded"  # agent/internal/status/status.go ConditionType
# The agent's SNAT headroom condition (issue 19 contract): True when one destination's ports in use pass the profile's
# outbound.pressure_percent of its capacity; its message names the destination and the numbers.
SNAT_CONDITION_TYPE = "SNATPortPressure"
BACKLOG_SYSCTL = "net.core.netdev_max_backlog"

# The agent rewrites an unchanged report at least every 5 minutes (agent/internal/nodestatus/README.md, its
# heartbeat, like the kubelet's own): three missed heartbeats mean the agent is gone, stuck or cut off.
DEFAULT_STALE_AFTER = timedelta(minutes=15)
# How far ahead of this machine's clock a report may be dated and still count: wirespeed's choice, generous for
# NTP-synchronised nodes (milliseconds apart) and far below any stale limit.
CLOCK_SKEW = timedelta(minutes=2)

# Every kind of drift, in the order a report lists them, with what it means for the node.
KINDS: dict[str, str] = {
    "unknown-profile": "the node's wirespeed.io/profile label names no tuning ConfigMap in the cluster",
    "invalid-profile": "the profile ConfigMap the label names is not a valid profile",
    "agent-missing": "no tuning status on the node: no agent runs there, or it never reached the API server",
    "status-unreadable": "the tuning-status annotation is not the agent's report",
    "stale": "the agent has not reported for longer than the stale limit",
    "other-profile": "the agent applies another profile than the node's label names",
    "dry-run": "the agent runs with --dry-run: it reports, but tunes nothing",
    "degraded": "the agent could not apply the profile (NetworkTuningDegraded is True)",
    "ring-reverted": "a NIC ring is not at the size the agent applies (a re-added VF, ethtool by hand)",
    "mtu-changed": "a link's MTU is not the one the profile sets",
    "backlog-changed": "net.core.netdev_max_backlog is not the profile's value",
    "sysctl-changed": "a sysctl other than the backlog is not the profile's value",
    "snat-unmeasured": "the profile has an outbound section but the agent reports no SNAT accounting",
    "snat-pressure": "one destination uses more of its SNAT ports than the profile's threshold (SNATPortPressure)",
}
# Kinds that say the node is at risk, not that its tuning drifted: a node with only these is "pressure".
PRESSURE_KINDS = frozenset({"snat-pressure"})


@dataclass(frozen=True)
class NodeFacts:
    """What the API server says about one node (only the parts drift reads)."""

    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    condition: Mapping[str, Any] | None  # the NetworkTuningDegraded condition as the API returns it, or None
    snat_condition: Mapping[str, Any] | None = None  # the SNATPortPressure condition, or None


@dataclass(frozen=True)
class ExpectedProfile:
    """A profile as the cluster's ConfigMap holds it: its sysctls, or why it cannot be read. (Rings and MTU are
    judged against what the agent reports as desired: it derives those per device, from the driver's limits.)"""

    name: str
    sysctls: Mapping[str, int] = field(default_factory=dict)
    problem: str | None = None  # set when the ConfigMap's profile is invalid
    snat_capacity: int | None = None  # one destination's capacity from the profile's outbound section, or None
    snat_threshold: int | None = None  # its outbound.pressure_percent


@dataclass(frozen=True)
class Finding:
    kind: str  # a key of KINDS
    message: str


@dataclass(frozen=True)
class Verdict:
    node: str
    profile: str | None  # the label's value; None for a node wirespeed does not manage
    findings: tuple[Finding, ...]
    snat: Mapping[str, Any] | None = None  # the agent's SNAT accounting as its report carries it, or None

    @property
    def state(self) -> str:
        if self.profile is None:
            return "unmanaged"
        if any(f.kind not in PRESSURE_KINDS for f in self.findings):
            return "drifted"
        return "pressure" if self.findings else "tuned"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.node,
            "profile": self.profile,
            "state": self.state,
            "findings": [{"kind": f.kind, "message": f.message} for f in self.findings],
            "snat": None if self.snat is None else dict(self.snat),
        }


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _ring_findings(report: Mapping[str, Any]) -> list[Finding]:
    found = []
    links = report.get("interfaces")
    for link in links if isinstance(links, list) else []:
        if not isinstance(link, dict) or not link.get("selected"):
            continue
        name, driver = link.get("name", "?"), link.get("driver", "?")
        for direction in ("rx", "tx"):
            ring = link.get(direction)
            if not isinstance(ring, dict):
                continue
            desired, current = ring.get("desired", 0), ring.get("current")
            if desired and current != desired:
                refused = " (the device refused the size)" if ring.get("refused") else ""
                found.append(
                    Finding(
                        "ring-reverted",
                        f"{name} ({driver}) {direction} ring is {current}, the profile needs {desired}{refused}",
                    )
                )
        mtu = link.get("mtu")
        if isinstance(mtu, dict) and mtu.get("current") != mtu.get("desired"):
            found.append(
                Finding("mtu-changed", f"{name} ({driver}) MTU is {mtu.get('current')}, not {mtu.get('desired')}")
            )
    return found


def _sysctl_findings(report: Mapping[str, Any], expected: ExpectedProfile) -> list[Finding]:
    reported = report.get("sysctls") or {}
    found = []
    for name, want in sorted(expected.sysctls.items()):
        kind = "backlog-changed" if name == BACKLOG_SYSCTL else "sysctl-changed"
        value = reported.get(name) if isinstance(reported, dict) else None
        current = value.get("current") if isinstance(value, dict) else None
        if current is None:
            found.append(Finding(kind, f"{name} is not in the agent's report; the profile sets {want}"))
        elif current != want:
            found.append(Finding(kind, f"{name} is {current}, the profile sets {want}"))
    return found


def _snat_report(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report's ``snat`` object (issue 19 contract), its known fields with the right types; None when absent or
    not an object."""
    raw = report.get("snat")
    if not isinstance(raw, dict):
        return None
    counts = ("max", "peak", "capacity", "conntrack_entries")
    out: dict[str, Any] = {k: raw[k] for k in counts if _count(raw.get(k)) is not None}
    if isinstance(raw.get("pressure"), bool):
        out["pressure"] = raw["pressure"]
    top = raw.get("top")
    out["top"] = [
        {"destination": t["destination"], "ports_in_use": t["ports_in_use"]}
        for t in (top if isinstance(top, list) else [])
        if isinstance(t, dict) and isinstance(t.get("destination"), str) and _count(t.get("ports_in_use")) is not None
    ]
    workloads = raw.get("workloads")
    if isinstance(workloads, list):
        out["workloads"] = [w for w in workloads if _is_workload(w)]
    return out


_WORKLOAD_TEXT = ("namespace", "workload", "kind", "destination")


def _is_workload(value: object) -> bool:
    """One of the report's ``snat.workloads`` (the busiest destination's top workloads): every field there, the
    right type, and nothing else."""
    return (
        isinstance(value, dict)
        and set(value) == {*_WORKLOAD_TEXT, "ports_in_use"}
        and all(isinstance(value[k], str) for k in _WORKLOAD_TEXT)
        and _count(value["ports_in_use"]) is not None
    )


def workload_name(w: Mapping[str, Any]) -> str:
    """How the agent's messages name a workload: ``checkout/payments-api (Deployment)``, ``aks-pool-1 (node)``
    (agent/internal/snat/workload.go, Workload.String)."""
    if w["kind"] == "unknown":
        return "unknown (no pod on this node held the address)"
    name = f"{w['namespace']}/{w['workload']}" if w["namespace"] else w["workload"]
    return f"{name} ({w['kind']})"


def top_workloads_line(snat: Mapping[str, Any] | None) -> str | None:
    """``top workloads to 52.1.2.3:443/tcp: checkout/payments-api (Deployment) 2,410 ports, batch/export (CronJob)
    900``, from the report's ``snat.workloads``; None when it names none."""
    workloads = (snat or {}).get("workloads") or []
    if not workloads:
        return None
    named = ", ".join(
        f"{workload_name(w)} {w['ports_in_use']:,}" + (" ports" if i == 0 else "") for i, w in enumerate(workloads)
    )
    return f"top workloads to {workloads[0]['destination']}: {named}"


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _snat_findings(
    node: NodeFacts, snat: Mapping[str, Any] | None, expected: ExpectedProfile | None, readable: bool
) -> list[Finding]:
    """SNATPortPressure from the Node condition (the agent's own words), else from the report's ``snat`` object;
    and a profile that asks for SNAT accounting the agent does not report."""
    condition = node.snat_condition or {}
    if condition.get("status") == "True":
        return [Finding("snat-pressure", str(condition.get("message") or condition.get("reason") or "True"))]
    if snat is not None and snat.get("pressure") is True:
        return [Finding("snat-pressure", _pressure_message(snat, expected))]
    if readable and snat is None and expected is not None and expected.snat_capacity is not None:
        return [
            Finding(
                "snat-unmeasured",
                f"the profile's outbound section asks the agent to watch {expected.snat_capacity:,} ports per "
                "destination, but its report has no SNAT accounting (conntrack unreadable, --snat=false, or an agent "
                "older than the profile)",
            )
        ]
    return []


def _pressure_message(snat: Mapping[str, Any], expected: ExpectedProfile | None) -> str:
    """The agent's condition message, rebuilt from its report: ``52.1.2.3:443/tcp uses 3,300 of 4,096 ports (81%,
    threshold 80%)``."""
    top = snat.get("top") or [{}]
    destination = top[0].get("destination", "a destination")
    used, capacity = snat.get("max"), snat.get("capacity")
    if not isinstance(used, int) or not isinstance(capacity, int) or capacity <= 0:
        return f"{destination}: the agent reports SNAT port pressure"
    threshold = f", threshold {expected.snat_threshold}%" if expected and expected.snat_threshold else ""
    return f"{destination} uses {used:,} of {capacity:,} ports ({used * 100 // capacity}%{threshold})"


def judge_node(
    node: NodeFacts, profiles: Mapping[str, ExpectedProfile], now: datetime, stale_after: timedelta
) -> Verdict:
    """The node's drift: every finding at once, in the order of :data:`KINDS`."""
    name = node.labels.get(PROFILE_LABEL)
    if name is None:
        return Verdict(node.name, None, ())
    findings: list[Finding] = []
    expected = profiles.get(name)
    if expected is None:
        findings.append(Finding("unknown-profile", f"label {PROFILE_LABEL}={name} names no profile ConfigMap"))
    elif expected.problem is not None:
        findings.append(Finding("invalid-profile", f"profile {name!r}: {expected.problem}"))

    condition = node.condition or {}
    if condition.get("status") == "True":
        reason = condition.get("message") or condition.get("reason") or "degraded"
        findings.append(Finding("degraded", str(reason)))

    raw = node.annotations.get(ANNOTATION_KEY)
    if raw is None:
        findings.append(Finding("agent-missing", f"no {ANNOTATION_KEY} annotation"))
        findings += _snat_findings(node, None, expected, readable=False)
        return Verdict(node.name, name, _ordered(findings))
    try:
        report = json.loads(raw)
    except (ValueError, TypeError, RecursionError):  # not JSON, not text, nested past the parser's limit
        report = None
    if not isinstance(report, dict) or not isinstance(report.get("state"), str):
        findings.append(Finding("status-unreadable", f"{ANNOTATION_KEY} is not a tuning report: {raw[:80]!r}"))
        findings += _snat_findings(node, None, expected, readable=False)
        return Verdict(node.name, name, _ordered(findings))
    snat = _snat_report(report)
    findings += _snat_findings(node, snat, expected if expected and expected.problem is None else None, readable=True)

    reported_at = _parse_time(report.get("time"))
    if reported_at is None:
        findings.append(Finding("status-unreadable", f"{ANNOTATION_KEY} has no report time"))
    elif reported_at - now > CLOCK_SKEW:
        # A report from the future would count as fresh for ever: a wrong clock on the node, or not the agent's.
        findings.append(Finding("stale", f"last report {reported_at.isoformat()} is dated in the future"))
    elif now - reported_at > stale_after:
        age = int((now - reported_at).total_seconds() // 60)
        findings.append(Finding("stale", f"last report {reported_at.isoformat()} ({age} min ago)"))

    if report.get("profile") != name:
        findings.append(
            Finding("other-profile", f"the agent applies {report.get('profile')!r}, the label says {name!r}")
        )
    state = report["state"]
    if state == "dry-run":
        findings.append(Finding("dry-run", "the agent changes nothing (--dry-run)"))
    elif state == "degraded" and not any(f.kind == "degraded" for f in findings):
        findings.append(Finding("degraded", str(report.get("reason") or "degraded")))
    findings += _ring_findings(report)
    if expected is not None and expected.problem is None:
        findings += _sysctl_findings(report, expected)
    return Verdict(node.name, name, _ordered(findings), snat)


def _ordered(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    order = list(KINDS)
    return tuple(sorted(findings, key=lambda f: order.index(f.kind)))


@dataclass(frozen=True)
class DriftReport:
    verdicts: tuple[Verdict, ...]

    @property
    def drifted(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.state == "drifted"]

    @property
    def under_pressure(self) -> list[Verdict]:
        """Nodes with SNATPortPressure, drifted or not."""
        return [v for v in self.verdicts if any(f.kind in PRESSURE_KINDS for f in v.findings)]

    @property
    def failed(self) -> bool:
        """What `wirespeed drift` exits 1 for: a node drifted or under SNAT port pressure."""
        return bool(self.drifted or self.under_pressure)

    def count(self, state: str) -> int:
        return sum(1 for v in self.verdicts if v.state == state)

    def by_kind(self) -> dict[str, int]:
        """Nodes per kind of drift (a node with two rings reverted counts once)."""
        counts = Counter(kind for v in self.verdicts for kind in {f.kind for f in v.findings})
        return {kind: counts[kind] for kind in KINDS if counts[kind]}

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": [v.to_json() for v in self.verdicts],
            "total": len(self.verdicts),
            "tuned": self.count("tuned"),
            "drifted": self.count("drifted"),
            "pressure": len(self.under_pressure),
            "unmanaged": self.count("unmanaged"),
            "by_kind": self.by_kind(),
        }

    def explain(self) -> str:
        lines = []
        for verdict in self.verdicts:
            if verdict.state not in ("drifted", "pressure"):
                continue
            said = "drifted" if verdict.state == "drifted" else "under SNAT port pressure"
            lines.append(f"{verdict.node} (profile {verdict.profile}): {said}")
            lines += [f"  {f.kind}: {f.message}" for f in verdict.findings]
            pressed = any(f.kind in PRESSURE_KINDS for f in verdict.findings)
            if pressed and (top := top_workloads_line(verdict.snat)):
                lines.append(f"  {top}")
        pressure = len(self.under_pressure)
        summary = (
            f"{len(self.verdicts)} nodes: {self.count('tuned')} tuned, {self.count('drifted')} drifted, "
            + (f"{pressure} under SNAT port pressure, " if pressure else "")
            + f"{self.count('unmanaged')} without a {PROFILE_LABEL} label"
        )
        kinds = self.by_kind()
        if kinds:
            summary += " (" + ", ".join(f"{kind} {n}" for kind, n in kinds.items()) + ")"
        lines.append(summary)
        return "\n".join(lines)


def judge(
    nodes: Iterable[NodeFacts],
    profiles: Mapping[str, ExpectedProfile],
    now: datetime,
    stale_after: timedelta = DEFAULT_STALE_AFTER,
) -> DriftReport:
    """Every node judged, sorted by name."""
    verdicts = [judge_node(n, profiles, now, stale_after) for n in nodes]
    return DriftReport(tuple(sorted(verdicts, key=lambda v: v.node)))

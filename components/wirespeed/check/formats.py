"""The four ways `wirespeed check` prints a :class:`~wirespeed.check.Report`.

- ``table``: for people (rich); ``json``: a stable document for scripts (keys in docs/cli-json.md);
- ``github``: GitHub Actions workflow commands, so findings show as annotations on the pull request
  (https://docs.github.com/actions/reference/workflow-commands-for-github-actions: ``::error file=,line=,
  title=::message``, ``::warning`` likewise; escaping as actions/toolkit packages/core/src/command.ts does);
- ``sarif``: SARIF 2.1.0 (https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html) for
  `github/codeql-action/upload-sarif`, each rule described in ``tool.driver.rules``.

Every format lists violations in one order: mandatory first, then by position in the file, and says what was
checked: the resources read, how many are of a type some rule reads, the compute- or egress-looking types no rule
reads, and "nothing judged" when no resource is of a type any rule reads.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

import wirespeed
from wirespeed.check import Report, sorted_violations
from wirespeed.rules import Rule, Violation
from wirespeed.rules._catalog import SARIF_LEVEL, entry, sarif_rule

FORMATS = ("table", "json", "github", "sarif")

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = SARIF_LEVEL


_UNREAD_SHOWN = 8  # types named in a summary line; the JSON and SARIF list them all


def unread_text(report: Report) -> str:
    """``not read: google_container_node_pool (2), aws_instance (1)``, or "" when every such type was read."""
    if not report.unread:
        return ""
    shown = ", ".join(f"{u.type} ({u.count:,})" for u in report.unread[:_UNREAD_SHOWN])
    more = f", and {len(report.unread) - _UNREAD_SHOWN} more types" if len(report.unread) > _UNREAD_SHOWN else ""
    return f"not read, though they look like compute or egress: {shown}{more}"


def checked_text(report: Report) -> str:
    """What was read and judged: ``12 resources from `...` (Terraform 0.12.11, JSON format 0.1), 3 of a type
    some rule reads, against 9 rules``."""
    producer = f" ({report.producer})" if report.producer else ""
    rules = len(report.enabled_rules)
    return (
        f"{report.resources:,} resource{'s' if report.resources != 1 else ''} from `{report.shape.name}`{producer}, "
        f"{report.judged:,} of a type some rule reads, against {rules} rule{'s' if rules != 1 else ''}"
    )


def nothing_judged_text(report: Report) -> str:
    verdict = (
        "fails (--require-judged)"
        if report.require_judged
        else "passes without having judged anything (--require-judged makes this fail)"
    )
    return f"nothing judged: no resource is of a type any rule reads; the check {verdict}"


def summary(report: Report) -> str:
    mandatory, advisory = len(report.mandatory), len(report.advisory)
    checked = checked_text(report)
    unread = unread_text(report)
    if unread:
        checked += f"; {unread}"
    if report.nothing_judged:
        return f"{report.file}: {nothing_judged_text(report)}; {checked}."
    accepted = len(report.accepted)
    kept = f"; {accepted} advisory finding(s) accepted with a written reason" if accepted else ""
    if not report.mandatory and not report.advisory and not report.unchecked:
        return f"{report.file}: no violations{kept}; {checked}."
    verdict = "fails" if report.blocked else "passes (advisory findings only)"
    unchecked = len(report.unchecked)
    if unchecked:
        how = "accepted" if report.accepted_unchecked else "not accepted"
        checked += f"; {unchecked} rule check(s) could not read a secret ({how})"
    return f"{report.file}: {mandatory} mandatory, {advisory} advisory{kept}; {checked}: the check {verdict}."


def to_json(report: Report) -> dict[str, Any]:
    return {
        "file": report.file,
        "input": report.shape.name,
        "producer": report.producer,
        "resources": report.resources,
        "judged": report.judged,
        "nothing_judged": report.nothing_judged,
        "require_judged": report.require_judged,
        "unread": [u.to_json() for u in report.unread],
        "rules": [r.id for r in report.enabled_rules],
        "passed": not report.failed,
        "mandatory": len(report.mandatory),
        "advisory": len(report.advisory),
        "accepted": len(report.accepted),
        "unchecked": len(report.unchecked),
        "violations": [
            {**v.to_json(), "line": report.lines.get(v.resource_urn)}
            for v in sorted_violations(report.violations, report.lines)
        ],
    }


def render_json(report: Report) -> str:
    return json.dumps(to_json(report), indent=2)


def render_table(report: Report, width: int | None = None) -> str:
    """The violations as a table ``width`` columns wide; where some word (a resource name, a field path) would
    not fit its column whole, as plain text instead: a violation per block, a field per line, never cut."""
    from rich.console import Console
    from rich.table import Table

    from wirespeed.tables import whole

    console = Console(width=width, record=True, file=io.StringIO(), highlight=False, color_system=None)
    rows = [(_level(v), _where(v, report), said(v)) for v in sorted_violations(report.violations, report.lines)]
    if rows:
        table = Table(show_lines=True)
        table.add_column("level", no_wrap=True)
        table.add_column("rule and resource", overflow="fold", max_width=46)
        table.add_column("what to set, and why", overflow="fold", ratio=1)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    console.print(summary(report), soft_wrap=True)
    text = console.export_text()
    if whole(text, [cell for row in rows for cell in row]):
        return text
    blocks = [f"{level}  {where}".replace("\n", "\n  ") + f"\n  {message}\n" for level, where, message in rows]
    return "\n".join([*blocks, summary(report)]) + "\n"


def _level(v: Violation) -> str:
    return "accepted" if v.accepted else v.enforcement


def said(v: Violation) -> str:
    """A finding's message; an accepted one leads with its reason."""
    return f"accepted: {v.accepted} (the finding: {v.message})" if v.accepted else v.message


def _where(v: Violation, report: Report) -> str:
    line = report.lines.get(v.resource_urn)
    return f"{v.rule_id}\n{v.resource_name} ({v.resource_type})" + (f"\nline {line}" if line else "")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    lines = []
    for v in sorted_violations(report.violations, report.lines):
        command = "error" if v.enforcement == "mandatory" else "notice" if v.accepted else "warning"
        properties = [f"file={_escape_property(report.file)}"]
        line = report.lines.get(v.resource_urn)
        if line is not None:
            properties.append(f"line={line}")
        properties.append(f"title={_escape_property(f'{v.rule_id}: {v.resource_name}')}")
        lines.append(f"::{command} {','.join(properties)}::{_escape_data(f'{said(v)} ({v.resource_urn})')}")
    file = f"file={_escape_property(report.file)}"
    if report.nothing_judged:
        command = "error" if report.require_judged else "warning"
        title = _escape_property("wirespeed check: nothing judged")
        message = f"{nothing_judged_text(report)}; {checked_text(report)}"
        lines.append(f"::{command} {file},title={title}::{_escape_data(message)}")
    if report.unread:
        title = _escape_property("wirespeed check: types not read")
        lines.append(f"::notice {file},title={title}::{_escape_data(unread_text(report))}")
    lines.append(summary(report))
    return "\n".join(lines)


def _artifact_uri(file: str) -> str:
    path = PurePath(file)
    return path.as_uri() if path.is_absolute() else quote(path.as_posix())


def _rule_descriptor(rule: Rule, report: Report) -> dict[str, Any]:
    """The rule's catalog entry (components/wirespeed/data/rule-catalog.json) at the level this run reports it."""
    return sarif_rule(entry(rule), report.config.level(rule.id))


def _fingerprint(v: Violation) -> str:
    # Lines move as a stack grows; the rule and the resource's URN identify a finding across runs.
    return hashlib.sha256(f"{v.rule_id}\0{v.resource_urn}".encode()).hexdigest()[:32]


def to_sarif(report: Report) -> dict[str, Any]:
    index = {rule.id: i for i, rule in enumerate(report.rules)}
    uri = _artifact_uri(report.file)
    results = []
    for v in sorted_violations(report.violations, report.lines):
        physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
        line = report.lines.get(v.resource_urn)
        if line is not None:
            physical["region"] = {"startLine": line}
        result: dict[str, Any] = {
            "ruleId": v.rule_id,
            "ruleIndex": index[v.rule_id],
            "level": _SARIF_LEVEL[v.enforcement],
            "message": {"text": v.message},
            "locations": [
                {
                    "physicalLocation": physical,
                    "logicalLocations": [
                        {"name": v.resource_name, "fullyQualifiedName": v.resource_urn, "kind": "resource"}
                    ],
                }
            ],
            "partialFingerprints": {"wirespeedFinding/v1": _fingerprint(v)},
            "properties": {"resourceType": v.resource_type, "enforcement": v.enforcement},
        }
        if v.accepted:
            # SARIF 2.1.0 section 3.35 (suppression): "inSource", since the reason is written on the resource.
            result["suppressions"] = [{"kind": "inSource", "status": "accepted", "justification": v.accepted}]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "wirespeed",
                        "version": wirespeed.__version__,
                        "rules": [_rule_descriptor(rule, report) for rule in report.rules],
                    }
                },
                "artifacts": [{"location": {"uri": uri}, "description": {"text": report.shape.name}}],
                "invocations": [_invocation(report)],
                "results": results,
                "columnKind": "unicodeCodePoints",
                "properties": {
                    "input": report.shape.name,
                    "producer": report.producer,
                    "resources": report.resources,
                    "judged": report.judged,
                    "nothingJudged": report.nothing_judged,
                    "requireJudged": report.require_judged,
                    "unread": [u.to_json() for u in report.unread],
                },
            }
        ],
    }


def _invocation(report: Report) -> dict[str, Any]:
    """The run's invocation: what was checked as a notification (an error when nothing judged fails the check, a
    warning when it passes, a note otherwise), so code scanning shows it beside the results."""
    level = "note"
    if report.nothing_judged:
        level = "error" if report.require_judged else "warning"
    return {
        "executionSuccessful": True,
        "exitCode": 1 if report.failed else 0,
        "toolExecutionNotifications": [{"level": level, "message": {"text": summary(report)}}],
    }


def render_sarif(report: Report) -> str:
    return json.dumps(to_sarif(report), indent=2)


RENDERERS = {"table": render_table, "json": render_json, "github": render_github, "sarif": render_sarif}

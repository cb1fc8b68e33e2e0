#!/usr/bin/env python3
"""Test results of `make test`, across pytest and the Go suites: what was skipped and why, and whether CI allows it.

    testreport.py go EVENTS_JSON [go test flags and packages]   run `go test -json`, print what plain `go test`
                                                                 prints, keep every event in EVENTS_JSON
    testreport.py summary RESULT_FILE...                        every skipped test with its reason, then the totals;
                                                                 exit 1 under CI=true on a skip not allowed

A result file is pytest's JUnit XML (*.xml) or the Go events (*.json); a missing one is a suite that did not run.
Plain `go test` hides skips (and terratest's provider-backed tests skip), so the Go suites run with -json. Under
CI=true only the skips tests/allowed-skips.json names may remain: the tests already fail on any other missing
prerequisite, and this is the backstop for a skip that bypassed those gates. Standard library only: it runs on the
machine's python3 before any virtualenv exists.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = ROOT / "tests" / "allowed-skips.json"
# The words every provider gate uses (tests/conftest.py, tests/terratest/tftest); the address is the allow-list key.
PROVIDER_SKIP = re.compile(r"needs the Terraform provider ([a-z0-9-]+/[a-z0-9-]+(?: >= [0-9]+(?:\.[0-9]+)*)?)")
# `file_test.go:12: ` before what t.Skip was given.
GO_LOCATION = re.compile(r"^\S+\.go:\d+: ")


@dataclass(frozen=True)
class Skip:
    suite: str
    test: str
    reason: str


@dataclass
class Results:
    passed: int = 0
    failed: int = 0
    skipped: list[Skip] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


# --- go test -json -----------------------------------------------------------------------------------------------


def run_go(events_path: Path, args: list[str], out: IO[str] = sys.stdout) -> int:
    """`go test -json ARGS`, printed as plain `go test` would (package lines, failing tests' output), every event
    written to events_path; returns go's exit status."""
    events_path.parent.mkdir(parents=True, exist_ok=True)
    with (
        events_path.open("w") as events,
        subprocess.Popen(["go", "test", "-json", *args], stdout=subprocess.PIPE, text=True) as go,
    ):
        assert go.stdout is not None
        for line in render_plain(tee(go.stdout, events)):
            out.write(line)
            out.flush()
    return go.returncode


def tee(lines: Iterable[str], copy: IO[str]) -> Iterator[str]:
    for line in lines:
        copy.write(line)
        yield line


def render_plain(lines: Iterable[str]) -> Iterator[str]:
    """The text plain `go test` prints, from `go test -json` lines: package results, build errors and the output of
    failing tests (with their failing subtests), not the chatter of passing and skipped ones."""
    own: dict[tuple[str, str], list[str]] = {}  # each test's own output
    failed: dict[tuple[str, str], list[str]] = {}  # per top-level test: the output of its failed tests, in order
    for line in lines:
        event = parse_event(line)
        if event is None:
            yield line  # not an event (go's own messages): as it came
            continue
        action, package, test = event.get("Action"), event.get("Package", ""), event.get("Test")
        if action in ("output", "build-output") and not test:
            if event.get("Output", "") != "PASS\n":
                yield event.get("Output", "")
        elif action == "output" and test:
            own.setdefault((package, test), []).append(event.get("Output", ""))
        elif action in ("pass", "skip", "fail") and test:
            top = (package, test.split("/")[0])
            text = [o for o in own.pop((package, test), []) if not o.startswith("=== ")]
            if action == "fail":
                failed.setdefault(top, []).extend(text)
            if test == top[1] and top in failed:
                yield from failed.pop(top)
        elif action == "fail" and not test:
            # A package that died (a panic, a timeout) leaves tests that never finished: show what they printed.
            for key in [k for k in own if k[0] == package]:
                yield from (o for o in own.pop(key) if not o.startswith("=== "))
            for key in [k for k in failed if k[0] == package]:
                yield from failed.pop(key)


def parse_event(line: str) -> dict[str, Any] | None:
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def read_go_events(path: Path, results: Results) -> None:
    suite = "go " + path.stem.removeprefix("go-")
    own: dict[tuple[str, str], list[str]] = {}
    for line in path.read_text().splitlines(keepends=True):
        event = parse_event(line)
        if event is None or not event.get("Test"):
            continue
        key = (event.get("Package", ""), event["Test"])
        action = event.get("Action")
        if action == "output":
            own.setdefault(key, []).append(event.get("Output", ""))
        elif action == "pass":
            results.passed += 1
        elif action == "fail":
            results.failed += 1
        elif action == "skip":
            results.skipped.append(Skip(suite, f"{key[0]} {key[1]}", go_skip_reason(own.get(key, []))))


def go_skip_reason(output: list[str]) -> str:
    """What t.Skip was given, from a skipped test's own output."""
    text = [o.strip() for o in output if not o.lstrip().startswith(("=== ", "--- SKIP"))]
    text = [t for t in text if t]
    if not text:
        return "(no reason given)"
    return " ".join([GO_LOCATION.sub("", text[0]), *text[1:]])


# --- pytest JUnit XML ----------------------------------------------------------------------------------------------


def read_junit(path: Path, results: Results) -> None:
    for case in ET.parse(path).getroot().iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = {child.tag: child for child in case}
        if "failure" in outcome or "error" in outcome:
            results.failed += 1
        elif "skipped" in outcome and outcome["skipped"].get("type") != "pytest.xfail":
            message = outcome["skipped"].get("message", "") or (outcome["skipped"].text or "")
            results.skipped.append(Skip("pytest", test, message.strip() or "(no reason given)"))
        else:
            results.passed += 1


# --- the summary ---------------------------------------------------------------------------------------------------


def allowed_providers() -> dict[str, str]:
    providers: dict[str, str] = json.loads(ALLOWED.read_text())["terraform_providers"]
    return providers


def allowed_by(skip: Skip, allowed: dict[str, str]) -> str | None:
    """The allow-list entry this skip is for, or None."""
    match = PROVIDER_SKIP.search(skip.reason)
    return match[1] if match and match[1] in allowed else None


def collect(paths: list[Path]) -> Results:
    results = Results()
    for path in paths:
        if not path.is_file():
            results.missing.append(str(path))
        elif path.suffix == ".xml":
            read_junit(path, results)
        else:
            read_go_events(path, results)
    return results


def summary(results: Results, allowed: dict[str, str], ci: bool) -> tuple[list[str], int]:
    """The lines to print and the exit status."""
    lines = []
    by_entry: dict[str, list[Skip]] = {}
    for skip in results.skipped:
        by_entry.setdefault(allowed_by(skip, allowed) or "", []).append(skip)
    not_allowed = by_entry.pop("", [])
    lines.append(f"==> Skipped tests: {len(results.skipped)}")
    for entry, skips in sorted(by_entry.items()):
        lines.append(f"  {len(skips)} need the Terraform provider {entry}, allowed: {allowed[entry]}")
        lines.extend(f"    {s.suite}: {s.test}" for s in skips)
    if not_allowed:
        lines.append(f"  {len(not_allowed)} NOT on the allow-list (tests/allowed-skips.json):")
        for s in not_allowed:
            lines.append(f"    {s.suite}: {s.test}")
            lines.append(f"      {s.reason}")
    if results.skipped:
        lines.append("  How to run them: docs/development.md, 'Skipped tests'.")
    status = 0
    for path in results.missing:
        lines.append(f"No results in {path}: that suite did not run (its error is above).")
        status = 1
    if ci and not_allowed:
        lines.append(
            f"CI=true: {len(not_allowed)} skipped test(s) not on the allow-list: a CI run must install every "
            "prerequisite, so this is a failure"
        )
        status = 1
    # The plain closing line any reader of test logs understands, over every suite.
    lines.append(f"total: {results.passed} passed, {results.failed} failed, {len(results.skipped)} skipped")
    return lines, status


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "go":
        return run_go(Path(argv[1]), argv[2:])
    if len(argv) >= 2 and argv[0] == "summary":
        results = collect([Path(a) for a in argv[1:]])
        lines, status = summary(results, allowed_providers(), os.environ.get("CI") == "true")
        print("\n".join(lines))
        return status
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

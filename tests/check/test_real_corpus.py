"""`wirespeed check` on real files from public repositories (tests/fixtures/real/), verdict by verdict.

Every file there is kept byte for byte from a public repository nobody on this project wrote, with a sidecar
``<file>.provenance.json`` naming its repository, path, commit and license (tests/fixtures/real/README.md). This
file pins, for each of them and for each probe derived from one (tests/real_probes.py: the same file with one
named edit), what `check --format json` decides: the exit code, the error line when the input is refused, the
report's summary (what was read, how much was judged) and every verdict as (rule, level, resource, status). A pin
says what wirespeed does today, not what is right: tests/check/test_real_corpus_expectations.py holds what issue 25 says
is right. After an intended change to the rules or the readers, regenerate and review the diff:

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/check/test_real_corpus.py

It also checks that every real file has a complete provenance and that none holds a credential, and writes the
table of tests/fixtures/real/README.md (each file, what it is, where from, and the verdict issue 25 says is right).
"""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from clirun import invoke
from conftest import ROOT
from real_probes import BY_NAME, PROBES, render
from test_real_corpus_expectations import CASES

REAL = ROOT / "tests" / "fixtures" / "real"
GOLDEN = ROOT / "tests" / "golden" / "real-corpus"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
SIDECAR = ".provenance.json"
NOT_INPUTS = {"README.md"}


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    """Paths in the output are as given on the command line: relative to the repository root here."""
    monkeypatch.chdir(ROOT)


def real_files() -> list[Path]:
    return sorted(
        p for p in REAL.iterdir() if p.is_file() and not p.name.endswith(SIDECAR) and p.name not in NOT_INPUTS
    )


def run_check(argument: str, *extra: str) -> dict[str, Any]:
    """`wirespeed check ARGUMENT --format json` reduced to what a pin compares.

    A refusal keeps its one ``error:`` line without the file name (the path differs between a real file and a
    probe written to a temporary folder); a report keeps every top-level key but the file name, the rule list
    (the same for every input) and the violations, which become sorted (rule, level, resource, status) rows.
    """
    out = invoke("check", argument, "--format", "json", *extra)
    if out.returncode == 2:
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1, f"a refusal is one line, got {out.stderr!r}"
        assert lines[0].startswith("error: "), f"a refusal starts with error:, got {out.stderr!r}"
        return {"exit_code": 2, "error": lines[0].removeprefix("error: ").removeprefix(f"{argument}: ")}
    report = json.loads(out.stdout)
    assert out.returncode == (0 if report["passed"] else 1), (out.returncode, report["passed"])
    rows = sorted(
        [v["rule"], v["enforcement"], v["urn"], "unchecked" if v["unchecked"] else "violation"]
        for v in report["violations"]
    )
    summary = {key: value for key, value in report.items() if key not in ("file", "rules", "violations")}
    return {"exit_code": out.returncode, "summary": summary, "verdicts": rows}


# A verdict row on one line, so a regenerated pin's diff shows one line per verdict gained or lost.
_ROW = re.compile(r'\[\n\s+("[^"\n]*"),\n\s+("[^"\n]*"),\n\s+("[^"\n]*"),\n\s+("[^"\n]*")\n\s+\]')


def compare(golden: Path, pinned: dict[str, Any]) -> None:
    text = _ROW.sub(r"[\1, \2, \3, \4]", json.dumps(pinned, indent=2)) + "\n"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert golden.is_file(), f"{golden.relative_to(ROOT)} is missing: UPDATE_GOLDEN=1 .venv/bin/pytest {__file__}"
    assert golden.read_text() == text, f"{golden.relative_to(ROOT)} differs (UPDATE_GOLDEN=1 regenerates it)"


def provenance(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((path.parent / (path.name + SIDECAR)).read_text())
    return doc


@pytest.mark.parametrize("name", [p.name for p in real_files()])
def test_real_file_verdicts_are_pinned(name):
    pinned = {"fixture": name, "what": provenance(REAL / name)["what"], **run_check(f"tests/fixtures/real/{name}")}
    compare(GOLDEN / f"{name}.json", pinned)


@pytest.mark.parametrize("name", [probe.name for probe in PROBES])
def test_probe_verdicts_are_pinned(name, tmp_path):
    probe = BY_NAME[name]
    path = tmp_path / name
    path.write_bytes(render(probe))
    pinned = {"probe": name, "from": probe.source, "edit": probe.edit, **run_check(str(path))}
    compare(GOLDEN / "probes" / f"{name}.json", pinned)


def test_no_pin_is_left_without_its_input():
    expected = {f"{p.name}.json" for p in real_files()} | {f"probes/{p.name}.json" for p in PROBES}
    found = {p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*.json")}
    assert found == expected, f"stale: {sorted(found - expected)}; missing: {sorted(expected - found)}"


def test_every_probe_edits_a_real_file():
    names = {p.name for p in real_files()}
    for probe in PROBES:
        assert probe.source in names, probe
        assert probe.name.startswith(probe.source.split(".")[0]), f"{probe.name} is named after another file"


# --- provenance --------------------------------------------------------------------------------------------------

# SPDX ids of licenses that let these files be redistributed in this repository's tests.
REDISTRIBUTABLE = {"Apache-2.0", "MIT", "MPL-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC"}
KEYS = {"repository", "path", "commit", "license", "url", "what"}


def test_the_corpus_is_big_enough():
    assert len(real_files()) >= 25, "issue 25 asks for at least 25 real inputs"


@pytest.mark.parametrize("name", [p.name for p in real_files()])
def test_every_real_file_has_a_complete_provenance(name):
    sidecar = REAL / (name + SIDECAR)
    assert sidecar.is_file(), f"{name} has no {sidecar.name}: where does it come from?"
    doc = provenance(REAL / name)
    assert set(doc) == KEYS, f"{sidecar.name}: keys {sorted(doc)}, want {sorted(KEYS)}"
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+", doc["repository"]), doc["repository"]
    assert re.fullmatch(r"[0-9a-f]{40}", doc["commit"]), f"{sidecar.name}: commit {doc['commit']!r} is not 40 hex"
    assert doc["path"], f"{sidecar.name}: no path"
    assert not doc["path"].startswith("/"), doc["path"]
    assert ".." not in doc["path"].split("/"), doc["path"]
    assert doc["license"] in REDISTRIBUTABLE, f"{sidecar.name}: license {doc['license']!r}"
    assert doc["url"] == f"https://github.com/{doc['repository']}/blob/{doc['commit']}/{doc['path']}", doc["url"]
    assert doc["what"].strip(), f"{sidecar.name}: what is empty"
    assert "\n" not in doc["what"], f"{sidecar.name}: what is one line"


def test_no_sidecar_without_its_file_and_nothing_else_in_the_folder():
    for path in REAL.iterdir():
        assert path.is_file(), f"{path.name}: tests/fixtures/real/ holds files only"
        if path.name.endswith(SIDECAR):
            assert (REAL / path.name.removesuffix(SIDECAR)).is_file(), f"{path.name} describes a file that is gone"


# --- credentials -------------------------------------------------------------------------------------------------

CREDENTIAL_PATTERNS = {
    "AWS access key id": re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"),
    "PEM private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}"),
    "Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    "Azure storage key": re.compile(r"AccountKey=[A-Za-z0-9+/=]{20,}"),
    "Azure SAS signature": re.compile(r"[?&]sig=[A-Za-z0-9%+/=]{20,}"),
}
# A value under one of these keys is a credential unless it is empty or a placeholder. IMDS http_tokens
# ("required"/"optional") is a setting, not a token.
SECRET_KEY = re.compile(
    r"(password|passwd|secret|client_key|private_key|access_key|token|kube_config_raw|kube_admin_config_raw"
    r"|connection_string|sas_key|api_key)",
    re.IGNORECASE,
)
NOT_SECRET_KEY = re.compile(r"^(http_?tokens|.*_?token_?(ttl|lifetime|expir\w*|endpoint|url|type|audience))$", re.I)
PLACEHOLDER = re.compile(
    r"^(|REDACTED.*|\*+|<sensitive>|\(sensitive( value)?\)|\$\{[^}]*\}|null|(mock|fake|dummy)[_-]\w*)$", re.IGNORECASE
)
JSON_PAIR = re.compile(r'"([A-Za-z0-9_.-]+)"\s*:\s*"((?:[^"\\]|\\.)*)"')
# Terraform's configuration block writes a literal as {"constant_value": ...} under the attribute's name.
JSON_CONSTANT = re.compile(r'"([A-Za-z0-9_.-]+)"\s*:\s*\{\s*"constant_value"\s*:\s*"((?:[^"\\]|\\.)*)"')
YAML_PAIR = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*:\s*['\"]?([^'\"#\n]*)", re.MULTILINE)
BASE64_PEM = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{8,}={0,2}")


def text_of(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16")
    return data.decode("utf-8", errors="replace")


def credentials_in(text: str) -> list[str]:
    found = [f"{what}: {m.group(0)[:24]}..." for what, rx in CREDENTIAL_PATTERNS.items() for m in rx.finditer(text)]
    for match in BASE64_PEM.finditer(text):
        token = match.group(0)
        decoded = base64.b64decode(token[: len(token) // 4 * 4]).decode("ascii", errors="replace")
        if "PRIVATE KEY" in decoded:
            found.append(f"base64 PEM private key: {token[:24]}...")
    for rx in (JSON_PAIR, JSON_CONSTANT, YAML_PAIR):
        for key, value in rx.findall(text):
            leaf = key.rsplit(".", 1)[-1]
            if SECRET_KEY.search(leaf) and not NOT_SECRET_KEY.match(leaf) and not PLACEHOLDER.match(value.strip()):
                found.append(f"{key} = {value[:12]}...")
    return found


@pytest.mark.parametrize("name", [p.name for p in real_files()])
def test_no_real_file_holds_a_credential(name):
    assert credentials_in(text_of(REAL / name)) == [], f"{name} holds a credential: drop it from the corpus"


@pytest.mark.parametrize(
    "text",
    [
        '{"access_key": "AKIAIOSFODNN7EXAMPLE"}',
        '"password": "Aa1234321Bb"',
        "-----BEGIN RSA PRIVATE KEY-----",
        '"client_key": "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo="',
        "password: hunter22",
        '"secret_key": {"constant_value": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}',
        "https://acct.blob.core.windows.net/c?sv=2021-06-08&sig=abcdefghijklmnopqrstuvwxyz0123%3D",
    ],
)
def test_the_credential_scan_catches_what_it_is_for(text):
    assert credentials_in(text), text


@pytest.mark.parametrize(
    "text",
    [
        '"password": "REDACTED BY PROVIDERTEST"',
        '"http_tokens": "required"',
        '"certificate-authority-data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM="',
        '"client_key": ""',
        '"access_key": {"constant_value": "mock_access_key"}',
    ],
)
def test_the_credential_scan_passes_placeholders_and_public_material(text):
    assert credentials_in(text) == [], text


# --- the README's table --------------------------------------------------------------------------------------------

README = REAL / "README.md"
TABLE_START = "<!-- table: written by UPDATE_GOLDEN=1 .venv/bin/pytest tests/check/test_real_corpus.py"
TABLE_END = "<!-- end of table -->"


def readme_table() -> str:
    """Each real file and probe with what it is, where from, and the right verdicts of the expectation cases."""
    by_input: dict[str, list[str]] = {}
    for case in CASES:
        by_input.setdefault(case.input, []).append(f"`{case.rule}` {case.expect}")

    def right(name: str) -> str:
        return "<br>".join(by_input.get(name, [])) or "not a case of issue 25: pinned only"

    lines = ["| file | what it is | from | right verdict (issue 25) |", "|---|---|---|---|"]
    for path in real_files():
        doc = provenance(path)
        source = f"[{doc['repository']}]({doc['url']}) ({doc['license']})"
        lines.append(f"| `{path.name}` | {doc['what']} | {source} | {right(path.name)} |")
    lines += ["", "| probe | the one edit of a real file | right verdict (issue 25) |", "|---|---|---|"]
    lines += [f"| `{p.name}` | `{p.source}`: {p.edit} | {right(p.name)} |" for p in PROBES]
    return "\n".join(lines) + "\n"


def test_the_readme_table_is_current():
    text = README.read_text()
    head, start, rest = text.partition(TABLE_START)
    assert start, f"{README.relative_to(ROOT)} lost its table marker"
    marker_line, _, rest = rest.partition("\n")
    _, end, tail = rest.partition(TABLE_END)
    assert end, f"{README.relative_to(ROOT)} lost its end-of-table marker"
    current = f"{head}{start}{marker_line}\n{readme_table()}{end}{tail}"
    if UPDATE:
        README.write_text(current)
        text = current
    assert text == current, f"{README.relative_to(ROOT)}'s table is stale: UPDATE_GOLDEN=1 .venv/bin/pytest {__file__}"

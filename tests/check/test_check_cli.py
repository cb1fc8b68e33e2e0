"""`wirespeed check` end to end: exit codes, the four formats (golden files), config overrides, unreadable input.

The fixtures are a stack export and a preview written in the Pulumi CLI's shapes (tests/fixtures/check/README.md);
each pull-request case changes one field of them, as a reviewer would see it in the diff.
Golden files live in tests/golden/check/; after an intended change to the rules or the formats, regenerate with

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/check/test_check_cli.py

and review the diff. The golden files refer to the rule catalog (components/wirespeed/data/rule-catalog.json)
instead of repeating it: tests/fixtures/rule_catalog.py replaces only what equals the catalog.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clirun import invoke, wirespeed
from conftest import ROOT
from fixtures.rule_catalog import golden_form
from test_cli_robustness import Invocation, assert_contract, mutated
from wirespeed.check import Report
from wirespeed.check.formats import render_github
from wirespeed.check.readers import STACK_EXPORT
from wirespeed.rules import RULES, Violation, resolve_config

FIXTURES = ROOT / "tests" / "fixtures" / "check"
GOLDEN = ROOT / "tests" / "golden" / "check"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
EXPORT = FIXTURES / "aks-export.json"
PREVIEW = FIXTURES / "aks-preview.json"
PR = FIXTURES / "pr-preview-violations.json"
SARIF_SCHEMA = json.loads((FIXTURES / "sarif-2.1.0-rtm.5.json").read_text())

CLUSTER = "azure-native:containerservice:ManagedCluster::aks-checkout"
POOL = "azure-native:containerservice:AgentPool::net"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap::wirespeed-profile-throughput"


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    """Paths in the output are as given on the command line: relative to the repository root here."""
    monkeypatch.chdir(ROOT)


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def check(*args: str) -> Any:
    return invoke("check", *args)


# --- documents with one field changed, as a pull request would ---------------------------------------------


def _states(doc: dict[str, Any], suffix: str) -> list[dict[str, Any]]:
    """The resource states ending in ``suffix`` (type::name): every copy a preview's steps carry."""
    if "deployment" in doc:
        return [r for r in doc["deployment"]["resources"] if r["urn"].endswith(suffix)]
    return [s["newState"] for s in doc["steps"] if s["urn"].endswith(suffix) and s.get("newState")]


def _set_ports(doc: dict[str, Any], ports: int) -> None:
    for state in _states(doc, CLUSTER):
        state["inputs"]["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"] = ports


def _set_backlog(doc: dict[str, Any], backlog: int) -> None:
    for state in _states(doc, POOL):
        state["inputs"]["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = backlog


def _set_mana_rx(doc: dict[str, Any], rx: int) -> None:
    for state in _states(doc, CONFIG_MAP):
        profile = json.loads(state["inputs"]["data"]["profile.json"])
        profile["rings"]["mana"]["rx"] = rx
        state["inputs"]["data"]["profile.json"] = json.dumps(profile, indent=2) + "\n"


def _set_max_count(doc: dict[str, Any], max_count: int) -> None:
    for state in _states(doc, POOL):
        state["inputs"]["maxCount"] = max_count
        if "outputs" in state:  # what the provider returns after the update: stack rules read only outputs
            state["outputs"]["maxCount"] = max_count


def variant(tmp_path: Path, source: Path, change: Callable[[dict[str, Any]], None]) -> str:
    doc = json.loads(source.read_text())
    change(doc)
    out = tmp_path / source.name
    out.write_text(json.dumps(doc, indent=2))
    return str(out)


# (change, rule id it breaks, words the message must contain: what to set, and why)
PULL_REQUESTS: dict[str, tuple[Callable[[dict[str, Any]], None], str, list[str]]] = {
    "allocated-outbound-ports-0": (
        lambda d: _set_ports(d, 0),
        "aks-allocated-outbound-ports-default",
        ["allocatedOutboundPorts is 0 or unset", "Set networkProfile.loadBalancerProfile.allocatedOutboundPorts"],
    ),
    "backlog-1000": (
        lambda d: _set_backlog(d, 1000),
        "netdev-backlog-minimum",
        [
            "linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 1,000 (profile 'throughput'), below the minimum 4,064",
            "dropped in enqueue_to_backlog",
            "Set linuxOSConfig.sysctls.netCoreNetdevMaxBacklog to 4,096 (any value from 4,064 passes)",
        ],
    ),
    "mana-rx-ring-1024": (
        lambda d: _set_mana_rx(d, 1024),
        "nic-ring-minimum",
        [
            "rings.mana.rx is 1,024, below the minimum 2,032",
            "overflows during microbursts",
            "Set rings.mana.rx to 2,048 (any value from 2,032 passes)",
        ],
    ),
    "allocated-outbound-ports-512": (
        lambda d: _set_ports(d, 512),
        "aks-snat-ports-minimum",
        ["512", "1,024"],
    ),
    "pool-max-count-120-overflows-snat": (
        lambda d: _set_max_count(d, 120),
        "aks-snat-capacity",
        ["net: 120 max + 2 surge", "448,000 are available", "Give it at least", "or lower allocatedOutboundPorts"],
    ),
}


@pytest.mark.parametrize("source", [EXPORT, PREVIEW], ids=["stack-export", "preview"])
@pytest.mark.parametrize("case", list(PULL_REQUESTS))
def test_a_pull_request_that_breaks_a_rule_fails_with_what_to_set(tmp_path, source, case):
    change, rule_id, words = PULL_REQUESTS[case]
    out = check(variant(tmp_path, source, change), "--format", "json")
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    assert [v["rule"] for v in report["violations"]] == [rule_id]
    violation = report["violations"][0]
    assert violation["enforcement"] == "mandatory"
    for word in words:
        assert word in violation["message"]


@pytest.mark.parametrize("source", [EXPORT, PREVIEW], ids=["stack-export", "preview"])
def test_the_clean_stack_passes(source):
    out = check(rel(source))
    assert out.returncode == 0, out.stderr
    # The export names the CLI that wrote it (deployment.manifest.version); a preview does not.
    kind = "pulumi stack export` (Pulumi CLI v3.259.0)" if source == EXPORT else "pulumi preview --json`"
    count, judged = (9, 4) if source == EXPORT else (10, 5)
    assert out.stdout == (
        f"{rel(source)}: no violations; {count} resources from `{kind}, {judged} of a type some rule reads, against "
        f"{len(RULES)} rules.\n"
    )


# --- formats: golden files --------------------------------------------------------------------------------

FORMATS = {"table": "txt", "json": "json", "github": "github.txt", "sarif": "sarif.json"}


RING_ADVISORY = FIXTURES / "ring-advisory-config.json"
GOLDEN_CASES = {
    "pr-preview-violations": ([rel(PR)], 1),
    "pr-preview-ring-advisory": ([rel(PR), "--config", rel(RING_ADVISORY)], 1),
    "aks-export": ([rel(EXPORT)], 0),
}


@pytest.mark.parametrize("case", list(GOLDEN_CASES))
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_output_matches_the_golden_file(case, fmt):
    args, code = GOLDEN_CASES[case]
    out = check(*args, "--format", fmt)
    assert out.returncode == code, out.stderr
    golden = GOLDEN / f"{case}.{FORMATS[fmt]}"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(golden_form(out.stdout, FORMATS[fmt]))
    assert golden_form(out.stdout, FORMATS[fmt]) == golden.read_text(), (
        f"{golden.name} is stale: UPDATE_GOLDEN=1 pytest {__file__}"
    )


@pytest.mark.parametrize("source", [PR, EXPORT, PREVIEW], ids=["violations", "clean-export", "clean-preview"])
def test_sarif_output_is_valid_sarif_2_1_0(source):
    out = check(rel(source), "--format", "sarif")
    sarif = json.loads(out.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    driver = sarif["runs"][0]["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == [r.id for r in RULES]
    for descriptor, rule in zip(driver["rules"], RULES, strict=True):
        assert descriptor["shortDescription"]["text"] == rule.description
        assert descriptor["help"]["text"] == rule.remediation
        assert rule.source in descriptor["fullDescription"]["text"]
    for result in sarif["runs"][0]["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_sarif_and_github_point_at_the_line_where_the_resource_starts():
    text = PR.read_text()
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.strip() == f'"urn": "{_step_urn(CLUSTER)}",')
    sarif = json.loads(check(rel(PR), "--format", "sarif").stdout)
    result = sarif["runs"][0]["results"][0]
    # The step object opens on the line before its first key.
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == line - 2
    github = check(rel(PR), "--format", "github").stdout.splitlines()[0]
    assert github.startswith(f"::error file={rel(PR)},line={line - 2},title=aks-allocated-outbound-ports-default%3A ")


def _step_urn(suffix: str) -> str:
    return f"urn:pulumi:pr-1234::checkout-infra::{suffix}"


def test_github_commands_escape_what_the_runner_would_misread():
    violation = Violation(
        rule_id="r",
        severity="high",
        enforcement="advisory",
        resource_urn="urn:a",
        resource_name="a,b:c",
        resource_type="t",
        message="100% of\nnodes",
    )
    report = Report(
        file="dir,1/x:y.json",
        shape=STACK_EXPORT,
        resources=1,
        rules=RULES,
        config=resolve_config(None),
        violations=(violation,),
        lines={},
    )
    first = render_github(report).splitlines()[0]
    assert first == "::warning file=dir%2C1/x%3Ay.json,title=r%3A a%2Cb%3Ac::100%25 of%0Anodes (urn:a)"


# --- config: enforcement levels and settings ---------------------------------------------------------------


def _config(tmp_path: Path, document: Any) -> str:
    path = tmp_path / "policy-config.json"
    path.write_text(json.dumps(document))
    return str(path)


@pytest.mark.parametrize(
    ("config", "code", "command"),
    [
        pytest.param(None, 1, "::error", id="default-mandatory"),
        pytest.param({"aks-allocated-outbound-ports-default": "advisory"}, 0, "::warning", id="rule-advisory"),
        pytest.param(
            {"aks-allocated-outbound-ports-default": {"enforcementLevel": "advisory"}}, 0, "::warning", id="object-form"
        ),
        pytest.param({"all": "advisory"}, 0, "::warning", id="all-advisory"),
        pytest.param({"all": "disabled"}, 0, None, id="all-disabled"),
        pytest.param(
            {"all": "advisory", "aks-allocated-outbound-ports-default": "mandatory"},
            1,
            "::error",
            id="rule-wins-over-all",
        ),
        pytest.param({"all": "remediate"}, 1, "::error", id="remediate-reported-as-mandatory"),
    ],
)
def test_config_enforcement_levels_decide_the_exit_code(tmp_path, config, code, command):
    source = variant(tmp_path, EXPORT, lambda d: _set_ports(d, 0))
    args = [source, "--format", "github"] + (["--config", _config(tmp_path, config)] if config is not None else [])
    out = check(*args)
    assert out.returncode == code, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("::")]
    annotations = [line for line in lines if "title=wirespeed check%3A" not in line]
    if command is None:
        assert annotations == []
        # Every rule disabled: nothing was judged, and the run says so (it still passes without --require-judged).
        # ... and names what it left unread that looks like compute: the cluster and its pool.
        assert [line.split(" ", 1)[0] for line in lines] == ["::warning", "::notice"]
        assert "title=wirespeed check%3A nothing judged::nothing judged" in lines[0]
        assert "azure-native:containerservice:ManagedCluster (1)" in lines[1]
    else:
        assert len(annotations) == 1
        assert annotations[0].startswith(f"{command} ")
        assert "title=aks-allocated-outbound-ports-default%3A aks-checkout" in annotations[0]


def test_config_settings_raise_a_threshold_the_clean_stack_then_breaks(tmp_path):
    config = _config(tmp_path, {"aks-snat-ports-minimum": {"minimumPorts": 8000}})
    out = check(rel(EXPORT), "--config", config, "--format", "json")
    assert out.returncode == 1, out.stderr
    violations = json.loads(out.stdout)["violations"]
    assert [v["rule"] for v in violations] == ["aks-snat-ports-minimum"]
    assert "8,000" in violations[0]["message"]


# --- unreadable input: exit 2, one line naming the file -----------------------------------------------------


def _bad_config_cases() -> dict[str, tuple[bytes, str]]:
    return {
        "not-json": (
            b"{all: mandatory}",
            "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        "not-utf8": (b'{"all": "mandatory\xff"}', "byte 18 (0xff) is not UTF-8; give a UTF-8 JSON file"),
        "unknown-rule": (b'{"aks-snat-port-minimum": "advisory"}', "aks-snat-port-minimum: is not a wirespeed rule"),
        "bad-level": (
            b'{"all": "warn"}',
            'all: "warn" is not allowed: must be one of advisory, mandatory, remediate, disabled',
        ),
        "bad-setting": (
            b'{"aks-snat-ports-minimum": {"minimumPorts": 4}}',
            "aks-snat-ports-minimum.minimumPorts: 4 is not allowed: must be a whole number between 8",
        ),
    }


@pytest.mark.parametrize("case", list(_bad_config_cases()))
def test_a_bad_config_is_one_line_naming_the_flag_file_and_field(tmp_path, case):
    content, expected = _bad_config_cases()[case]
    config = tmp_path / "cfg.json"
    config.write_bytes(content)
    out = check(rel(EXPORT), "--config", str(config))
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1, out.stderr
    prefix = f"error: --config {config}: "
    assert out.stderr.startswith(prefix), out.stderr
    assert expected in out.stderr


UNREADABLE: dict[str, tuple[bytes | None, str]] = {
    "not-json": (b'{"steps": [}', "not JSON: Expecting value: line 1 column 12 (char 11); give `pulumi stack export`"),
    "not-utf8": (b'{"steps": ["\xc3\x28"]}', "byte 12 (0xc3) is not UTF-8; give a UTF-8 JSON or YAML file"),
    "empty": (b"", "the file is empty: give `pulumi stack export`"),
    "plan-json-stream": (
        b'{"@level":"info","@message":"Terraform 1.9.8","@module":"terraform.ui","type":"version"}\n',
        "not a plan: save the plan with `terraform plan -out PLANFILE` and give `terraform show -json PLANFILE`",
    ),
    "yaml-not-kubernetes": (b"services:\n  web: {image: nginx}\n", "YAML, but not Kubernetes objects"),
    "unknown-shape": (
        b'{"workload": "checkout"}',
        'unknown shape: top-level keys "workload"; give `pulumi stack export`',
    ),
    "terraform-format-2": (
        b'{"format_version": "2.0", "resource_changes": []}',
        'format_version: "2.0" is not supported: wirespeed reads what `terraform show -json` has written',
    ),
    "missing-file": (None, "cannot be read: No such file or directory; give a readable JSON or YAML file"),
}


@pytest.mark.parametrize("case", list(UNREADABLE))
def test_unreadable_input_is_one_line_naming_the_file(tmp_path, case):
    content, expected = UNREADABLE[case]
    path = tmp_path / "input.json"
    if content is not None:
        path.write_bytes(content)
    out = check(str(path))
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith(f"error: {path}: "), out.stderr
    assert expected in out.stderr


def test_exit_codes_through_the_console_script(tmp_path):
    """As CI runs it: a fresh process, real exit status and streams."""
    clean = wirespeed("check", str(EXPORT))
    failing = wirespeed("check", str(PR), "--format", "github")
    unreadable = wirespeed("check", str(tmp_path))
    assert (clean.returncode, failing.returncode, unreadable.returncode) == (0, 1, 2)
    assert failing.stdout.startswith("::error file=")
    assert unreadable.stderr.startswith(f"error: {tmp_path}: ")
    assert "Traceback" not in clean.stderr + failing.stderr + unreadable.stderr


def test_streaming_keeps_only_what_the_stack_rules_read_yet_finds_the_same_as_the_whole_stack():
    """The check drops resources no stack rule declares; on the fixture that changes nothing."""
    from wirespeed.check.readers import Document
    from wirespeed.rules import evaluate

    for source in (PR, EXPORT, PREVIEW):
        doc = copy.deepcopy(json.loads(source.read_text()))
        text = json.dumps(doc)
        from wirespeed.check import check_text

        streamed = check_text(text, "x", resolve_config(None)).violations
        whole = evaluate(list(Document(text).resources()), resolve_config(None))
        assert sorted(streamed, key=repr) == sorted(whole, key=repr)


DOCUMENTS = [json.loads(p.read_text()) for p in (EXPORT, PREVIEW, PR)]


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), fmt=st.sampled_from(list(FORMATS)))
def test_mutated_documents_never_crash_a_rule_or_the_cli(tmp_path, data, fmt):
    """Any value anywhere replaced or deleted (a number as a string, a list as null...): a verdict or one line."""
    document = copy.deepcopy(data.draw(st.sampled_from(DOCUMENTS)))
    if data.draw(st.booleans()):
        document = data.draw(mutated(document))
    else:  # aim at what the rules read: one resource's inputs or outputs
        state = data.draw(
            st.sampled_from(_states(document, CLUSTER) + _states(document, POOL) + _states(document, CONFIG_MAP))
        )
        key = data.draw(st.sampled_from(["inputs", "outputs"]))
        if key in state:
            state[key] = data.draw(mutated(state[key]))
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document))
    out = check(str(path), "--format", fmt)
    invocation = Invocation(("check",), ["check", str(path), "--format", fmt], (str(path),))
    assert_contract(invocation, out.returncode, out.stdout, out.stderr)


def test_checking_an_export_loads_no_pulumi_and_pydantic_only_for_a_profile():
    """`wirespeed check` stays a light process: no SDK, and the profile model's pydantic (~160 ms) only when the
    document carries a tuning profile to validate (tuning-profile-valid): a Terraform plan without one never pays."""
    code = (
        "import sys, json; from wirespeed.cli import main; sys.argv = ['wirespeed', 'check', sys.argv[1]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(PR)], capture_output=True, text=True, check=True)
    loaded = {m.split(".")[0] for m in json.loads(out.stderr.splitlines()[-1])}
    assert loaded & {"pulumi", "pulumi_policy", "pulumi_azure_native", "pulumi_kubernetes"} == set()
    plan = ROOT / "tests" / "fixtures" / "terraform" / "azure-bad" / "plan.json"
    out = subprocess.run([sys.executable, "-c", code, str(plan)], capture_output=True, text=True, check=True)
    loaded = {m.split(".")[0] for m in json.loads(out.stderr.splitlines()[-1])}
    assert loaded & {"pulumi", "pulumi_policy", "pulumi_azure_native", "pulumi_kubernetes", "pydantic"} == set()


def _accept_rings(doc: dict[str, Any]) -> None:
    for state in _states(doc, CONFIG_MAP):
        annotations = state["inputs"].setdefault("metadata", {}).setdefault("annotations", {})
        annotations["wirespeed.io.accept-nic-ring-minimum"] = "bench nodes: rings measured at 2,048 without drops"


def test_an_advisory_kept_with_a_written_reason_is_accepted_in_every_format(tmp_path):
    source = variant(tmp_path, PR, _accept_rings)
    config = rel(RING_ADVISORY)
    report = json.loads(check(source, "--config", config, "--format", "json").stdout)
    assert (report["advisory"], report["accepted"]) == (0, 1)
    (kept,) = [v for v in report["violations"] if v["accepted"]]
    assert (kept["rule"], kept["accepted"]) == (
        "nic-ring-minimum",
        "bench nodes: rings measured at 2,048 without drops",
    )
    sarif = json.loads(check(source, "--config", config, "--format", "sarif").stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    (suppressed,) = [r for r in sarif["runs"][0]["results"] if "suppressions" in r]
    assert suppressed["suppressions"] == [{"kind": "inSource", "status": "accepted", "justification": kept["accepted"]}]
    table = check(source, "--config", config, "--format", "table").stdout
    assert "accepted: bench nodes: rings measured at 2,048 without drops" in " ".join(table.split())
    assert "1 advisory finding(s) accepted with a written reason" in " ".join(table.split())
    github = check(source, "--config", config, "--format", "github").stdout
    assert "::notice " in github
    assert "accepted: bench nodes" in github


def test_a_mandatory_finding_with_a_written_reason_still_fails_and_says_why(tmp_path):
    source = variant(tmp_path, PR, _accept_rings)
    out = check(source, "--format", "json")  # nic-ring-minimum at its default level: mandatory
    (ring,) = [v for v in json.loads(out.stdout)["violations"] if v["rule"] == "nic-ring-minimum"]
    assert (ring["enforcement"], ring["accepted"]) == ("mandatory", None)
    assert "a mandatory finding cannot be accepted by a written reason" in ring["message"]

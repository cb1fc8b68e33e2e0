"""docs/inputs.md's two rules, one case per input kind: a misspelt key names the key meant (one suggestion
function, wirespeed.problems.nearest), and a number written as a JSON string is refused with "write N without
quotes" (profiles, workload files, policy config); stack config, which Pulumi keeps as strings, is the exception.
The profile's words are also in tests/vectors/profiles.json, which the Go agent is held to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import invoke
from conftest import ROOT
from wirespeed.problems import nearest
from wirespeed.profile import ProfileError, load_profile
from wirespeed.rules import ConfigError, resolve_config

WORKLOAD = ROOT / "examples" / "workloads" / "checkout-api.json"


@pytest.mark.parametrize(
    ("name", "known", "meant"),
    [
        ("sysctl", ["sysctls", "rings", "mtu"], "sysctls"),
        ("/sysctls", ["sysctls", "rings"], "sysctls"),  # a JSON pointer typed as a key
        ("ringz", ["rings", "name"], "rings"),
        ("//", ["mtu", "name"], None),  # as many edits as the name is long: no suggestion
        ("totallyOther", ["pools", "holdSeconds"], None),
        ("rings", ["rings"], None),  # a known key is not a typo
    ],
)
def test_one_function_decides_the_suggestion(name, known, meant):
    assert nearest(name, known) == meant


def test_a_profile_names_the_misspelt_field_and_refuses_a_quoted_number():
    with pytest.raises(ProfileError) as caught:
        load_profile(json.dumps({"name": "x", "sysctl": {}, "rings": {"ena": {"rx": "8192"}}}))
    assert sorted(caught.value.problems) == [
        ("/rings/ena/rx", '"8192" is not allowed: must be a whole number, not a string: write 8192 without quotes'),
        ("/sysctl", 'is not a known field (did you mean "sysctls"?)'),
    ]


def test_a_workload_file_names_the_misspelt_field_and_refuses_a_quoted_number(tmp_path: Path):
    workload = json.loads(WORKLOAD.read_text())
    workload["outbound"]["connections_per_second"] = "12"
    workload["outbound"]["hold_secnds"] = 240
    workload["nics"] = workload["nic"]
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(workload))
    out = invoke("plan", "--workload", str(path))
    assert out.returncode == 2
    assert out.stderr == (
        f"error: {path}: not a valid workload: 3 problems:\n"
        "  outbound.connections_per_second: '12' is not allowed: must be a number, not a string: write 12 without "
        "quotes\n"
        '  outbound.hold_secnds: not a workload field (did you mean "hold_seconds"?)\n'
        '  nics: not a workload field (did you mean "nic"?)\n'
    )


def test_the_shipped_workloads_still_plan():
    for path in sorted((ROOT / "examples" / "workloads").glob("*.json")):
        assert invoke("plan", "--workload", str(path)).returncode == 0, path


def test_a_policy_config_names_the_misspelt_rule_and_setting_and_refuses_a_quoted_number():
    with pytest.raises(ConfigError) as caught:
        resolve_config(
            {
                "mtu-jumbo-pat": "disabled",
                "aks-snat-ports-minimum": {"minimumPort": 2048},
                "netdev-backlog-minimum": {"minimumBacklog": "4096"},
                "check": {"requireJudge": True},
            }
        )
    said = dict(caught.value.problems)
    assert said["mtu-jumbo-pat"].startswith('is not a wirespeed rule (did you mean "mtu-jumbo-path"?) (known: all,')
    assert said["aks-snat-ports-minimum.minimumPort"].startswith(
        'is not a setting of this rule (did you mean "minimumPorts"?) (known: enforcementLevel, minimumPorts'
    )
    assert said["netdev-backlog-minimum.minimumBacklog"].startswith('"4096" is not allowed: must be a whole number')
    assert said["netdev-backlog-minimum.minimumBacklog"].endswith(", not a string: write 4096 without quotes")
    assert said["check.requireJudge"] == (
        "is not allowed (did you mean \"requireJudged\"?): 'check' takes only requireJudged"
    )

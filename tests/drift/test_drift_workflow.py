"""examples/ci/drift.yml: every `wirespeed` command it runs exists with the flags it passes, and the preview step
tells drift (exit 7) from failure. (GitHub Actions itself cannot run here; the commands can be checked.)"""

from __future__ import annotations

import copy
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import typer.main
import yaml

from clirun import wirespeed
from conftest import ROOT
from wirespeed.cli import app

WORKFLOW = ROOT / "examples" / "ci" / "drift.yml"


def run_scripts() -> list[str]:
    doc = yaml.safe_load(WORKFLOW.read_text())
    return [step["run"] for job in doc["jobs"].values() for step in job["steps"] if "run" in step]


def wirespeed_invocations() -> list[list[str]]:
    found = []
    for script in run_scripts():
        for line in script.splitlines():
            line = line.split(" #")[0].split("||")[0].split(">")[0].strip()
            if line.startswith("wirespeed "):
                found.append(shlex.split(line)[1:])
    return found


def command_for(argv: list[str]) -> tuple[tuple[str, ...], Any, list[str]]:
    command: Any = typer.main.get_command(app)
    path: tuple[str, ...] = ()
    while getattr(command, "commands", None) and argv and argv[0] in command.commands:
        command = command.commands[argv[0]]
        path, argv = (*path, argv[0]), argv[1:]
    return path, command, argv


def test_the_workflow_runs_drift_and_check():
    assert [argv[0] for argv in wirespeed_invocations()] == ["check", "drift", "drift"]


def test_every_wirespeed_flag_in_the_workflow_exists():
    for argv in wirespeed_invocations():
        path, command, rest = command_for(argv)
        assert path, f"the workflow runs a wirespeed command that does not exist: {argv}"
        options = {opt for p in command.params for opt in p.opts}
        assert {a for a in rest if a.startswith("--")} <= options, (argv, sorted(options))


def test_preview_treats_exit_7_as_drift_and_other_codes_as_failure():
    (script,) = [s for s in run_scripts() if "pulumi preview" in s]
    assert "--refresh --expect-no-changes" in script
    assert "7) echo" in script
    assert "*) echo" in script


def test_check_catches_ports_set_back_to_0_outside_the_code_in_refreshed_state(tmp_path):
    """Someone set allocatedOutboundPorts back to 0 in the portal. `pulumi refresh` writes what the provider reads
    into the state's outputs AND inputs (engine: pulumi/pulumi#2531 "Refresh inputs"; azure-native computes inputs
    from what it read: pulumi/pulumi-azure-native#280), so the export the workflow checks carries the 0."""
    clean = json.loads((ROOT / "tests" / "fixtures" / "check" / "aks-export.json").read_text())
    assert wirespeed_check(tmp_path, clean).returncode == 0
    drifted = copy.deepcopy(clean)
    [cluster] = [r for r in drifted["deployment"]["resources"] if r["type"].endswith(":ManagedCluster")]
    for side in ("inputs", "outputs"):
        cluster[side]["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"] = 0
    out = wirespeed_check(tmp_path, drifted)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "aks-allocated-outbound-ports-default" in out.stdout


def wirespeed_check(tmp_path: Path, export: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "stack-export.json"
    path.write_text(json.dumps(export))
    return wirespeed("check", str(path), "--format", "github")

"""`wirespeed plan` of every example and of the root project, kept as golden files so reviews show changes.

Each project runs under the Pulumi SDK's mocks (no engine, no cloud). The text plan is what `wirespeed plan
DIR [--stack S]` prints; the JSON what `--json` prints. Regenerate after an intended change with

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_plan_program_golden.py

and review the diff of tests/golden/plan/ like any other change.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from wirespeed.program import run_program
from wirespeed.program.review import review

GOLDEN = ROOT / "tests" / "golden" / "plan"
REGEN = os.environ.get("UPDATE_GOLDEN") == "1"

# (golden name, project directory relative to the repository, stack or None for Pulumi.yaml defaults)
PROJECTS = [
    ("root", ".", None),
    ("root-dev", ".", "dev"),
    ("root-measured", ".", "measured"),
    ("fixture-aks-basic", "tests/fixtures/programs/aks-basic", None),
    ("aks-dsv6", "examples/aks-dsv6", None),
    ("aks-natgw", "examples/aks-natgw", None),
    ("aks-nap", "examples/aks-nap", None),
    ("aks-nap-dev", "examples/aks-nap", "dev"),
    ("root-aws", ".", "aws"),
    ("eks-c6in", "examples/eks-c6in", None),
    ("eks-karpenter", "examples/eks-karpenter", None),
    ("eks-regional-nat", "examples/eks-regional-nat", None),
    ("eks-regional-nat-dev", "examples/eks-regional-nat", "dev"),
    ("aks-existing-cluster", "examples/aks-existing-cluster", "dev"),
]


def rendered(directory: str, stack: str | None) -> tuple[str, str]:
    result = review(run_program(ROOT / directory, stack))
    return result.explain(directory) + "\n", json.dumps(result.to_json(), indent=2) + "\n"


@pytest.mark.parametrize(("name", "directory", "stack"), PROJECTS, ids=[p[0] for p in PROJECTS])
def test_plan_matches_the_golden_files_under_pulumi_mocks(name, directory, stack):
    text, as_json = rendered(directory, stack)
    if REGEN:
        (GOLDEN / f"{name}.txt").write_text(text)
        (GOLDEN / f"{name}.json").write_text(as_json)
    assert text == (GOLDEN / f"{name}.txt").read_text()
    assert as_json == (GOLDEN / f"{name}.json").read_text()


def test_every_project_in_the_repository_has_a_golden_plan():
    projects = {str(p.parent.relative_to(ROOT)) for p in ROOT.glob("examples/*/Pulumi.yaml")}
    if (ROOT / "Pulumi.yaml").is_file():
        projects.add(".")
    assert projects <= {p[1] for p in PROJECTS}


def test_the_cli_prints_exactly_the_golden_plan_under_pulumi_mocks():
    name, directory, stack = PROJECTS[-1]
    wirespeed = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or "wirespeed"
    args = [wirespeed, "plan", directory] + (["--stack", stack] if stack else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    # The CLI ends with the policy rules' verdicts (tests/test_check_plan_cli.py); the golden file is the plan.
    verdicts = "Policy (wirespeed's rules, as the policy pack runs them): no violations.\n"
    assert out.stdout == (GOLDEN / f"{name}.txt").read_text() + verdicts


@pytest.mark.parametrize("stack", [None, "dev"], ids=["root-defaults", "root-dev"])
def test_the_root_project_passes_wirespeeds_own_policy(stack):
    """docs/aks.md's path (`pulumi stack init dev`, or no stack file): its built-in profiles on its own pools pass
    every rule at the default levels, so `wirespeed plan` exits 0 (the balanced batch pool of Pulumi.dev.yaml is a
    12.5 Gb/s Standard_D8as_v6, under the 25 Gb/s balanced is sized for)."""
    wirespeed = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or "wirespeed"
    args = [wirespeed, "plan", "."] + (["--stack", stack] if stack else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr
    assert out.stdout.endswith("Policy (wirespeed's rules, as the policy pack runs them): no violations.\n")

"""`wirespeed plan` of every example and of the root project, kept as golden files so reviews show changes.

Each project runs under the Pulumi SDK's mocks (no engine, no cloud). The text plan is what `wirespeed plan
DIR [--stack S]` prints; the JSON what `--json` prints. Regenerate after an intended change with

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/program/test_plan_program_golden.py

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

from conftest import ROOT, python_examples
from wirespeed.check.registered import verdicts
from wirespeed.program import run_program
from wirespeed.program.review import review
from wirespeed.program.text import PLAIN_WIDTH
from wirespeed.rules import resolve_config

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
    """The text `wirespeed plan` prints off a terminal (the summary with the policy verdicts at the default levels,
    wrapped to 100 columns), and the review's JSON."""
    planned = run_program(ROOT / directory, stack)
    result = review(planned)
    text = result.explain(directory, verdicts(planned.resources, resolve_config(None)), width=PLAIN_WIDTH)
    return text + "\n", json.dumps(result.to_json(), indent=2) + "\n"


@pytest.mark.parametrize(("name", "directory", "stack"), PROJECTS, ids=[p[0] for p in PROJECTS])
def test_plan_matches_the_golden_files_under_pulumi_mocks(name, directory, stack):
    text, as_json = rendered(directory, stack)
    if REGEN:
        (GOLDEN / f"{name}.txt").write_text(text)
        (GOLDEN / f"{name}.json").write_text(as_json)
    assert text == (GOLDEN / f"{name}.txt").read_text()
    assert as_json == (GOLDEN / f"{name}.json").read_text()


def test_every_project_in_the_repository_has_a_golden_plan():
    # Python projects only: `wirespeed plan` runs Python programs; tests/engine/test_sdks.py compiles the others.
    projects = {str(p.relative_to(ROOT)) for p in python_examples()}
    if (ROOT / "Pulumi.yaml").is_file():
        projects.add(".")
    assert projects <= {p[1] for p in PROJECTS}


def test_the_cli_prints_exactly_the_golden_plan_under_pulumi_mocks():
    name, directory, stack = PROJECTS[-1]
    wirespeed = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or "wirespeed"
    args = [wirespeed, "plan", directory] + (["--stack", stack] if stack else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (GOLDEN / f"{name}.txt").read_text()


@pytest.mark.parametrize("stack", [None, "dev"], ids=["root-defaults", "root-dev"])
def test_the_root_project_passes_wirespeeds_own_policy(stack):
    """docs/aks.md's path (`pulumi stack init dev`, or no stack file): its built-in profiles on its own pools pass
    every rule at the default levels, so `wirespeed plan` exits 0 (the balanced batch pool of Pulumi.dev.yaml is a
    12.5 Gb/s Standard_D8as_v6, under the 25 Gb/s balanced is sized for)."""
    wirespeed = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or "wirespeed"
    args = [wirespeed, "plan", "."] + (["--stack", stack] if stack else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr
    assert out.stdout.endswith("## Policy\nPolicy (wirespeed's rules, as the policy pack runs them): no violations.\n")


@pytest.mark.parametrize("name", [p[0] for p in PROJECTS])
def test_no_prose_line_of_a_golden_plan_is_wider_than_100_columns(name):
    """Off a terminal `plan` wraps to 100 columns; only a word longer than that (an ID, a URL) may stick out."""
    fenced = False
    for number, line in enumerate((GOLDEN / f"{name}.txt").read_text().splitlines(), start=1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced and len(line) > PLAIN_WIDTH:
            assert " " not in line.strip(), f"{name}.txt:{number} is {len(line)} columns"


def test_the_summary_comes_first_and_details_add_user_data_and_tuning_paths_under_pulumi_mocks():
    text = (GOLDEN / "eks-c6in.txt").read_text()
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections[0] == "## Summary"
    assert sections[-1] == "## Policy"
    assert "## EKS user data" not in sections
    assert "## Tuning paths" not in sections
    assert "Not shown: the launch templates' user data (" in text
    wirespeed = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or "wirespeed"
    args = [wirespeed, "plan", "examples/eks-c6in", "--details"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    detailed = [line for line in out.stdout.splitlines() if line.startswith("## ")]
    assert "## EKS user data" in detailed
    assert "## Tuning paths" in detailed
    assert detailed[0] == "## Summary"
    assert "Not shown:" not in out.stdout

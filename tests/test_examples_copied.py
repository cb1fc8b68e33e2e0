"""Every example works copied out of the repository, as a team uses it: the folder alone in a temporary directory,
its requirements.txt installed unchanged into a fresh virtualenv, and `wirespeed plan` run there.

The wheel scripts/build-wheel.sh builds from this checkout stands in for the released wirespeed: it is the only source
besides PyPI (`--find-links`), so the test proves the requirements resolve from a package index, with no path back
into the repository. uv installs (its cache, warm from `make test`'s own install, keeps this to seconds); examples
whose requirements are identical share one virtualenv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import ROOT, require
from test_plan_program_golden import GOLDEN, PROJECTS

EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/Pulumi.yaml"))
# The golden plan of each example and the stack it is planned with (tests/test_plan_program_golden.py).
GOLDEN_PLANS = {directory.removeprefix("examples/"): (name, stack) for name, directory, stack in PROJECTS}


def clean_env() -> dict[str, str]:
    """The environment of a shell in the copied folder: nothing pointing back at this checkout or its virtualenv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "UV_PYTHON_DOWNLOADS": "never"}


@pytest.fixture(scope="module")
def uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    require(None if found else "needs uv on PATH (make test passes the uv it installed as UV)")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory, uv: str) -> Path:
    """A folder holding only the wheel of this checkout."""
    out = tmp_path_factory.mktemp("wheels")
    built = subprocess.run(
        [str(ROOT / "scripts" / "build-wheel.sh"), str(out)],
        env={**clean_env(), "UV": uv},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    return out


@pytest.fixture(scope="module")
def venv_for(tmp_path_factory: pytest.TempPathFactory, uv: str, wheels: Path) -> Callable[[Path], Path]:
    """A fresh virtualenv with ``requirements`` installed, one per distinct requirements file."""
    made: dict[str, Path] = {}

    def make(requirements: Path) -> Path:
        key = requirements.read_text()
        if key not in made:
            venv = tmp_path_factory.mktemp("venv") / "venv"
            run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], cwd=requirements.parent)
            install = [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python")]
            run([*install, "--find-links", str(wheels), "-r", requirements.name], cwd=requirements.parent)
            made[key] = venv
        return made[key]

    return make


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"{' '.join(args)} in {cwd}:\n{done.stdout}{done.stderr}"
    return done


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_example_plans_from_a_copy_outside_the_repository(tmp_path, venv_for, example):
    copy = tmp_path / example
    shutil.copytree(ROOT / "examples" / example, copy, ignore=shutil.ignore_patterns("venv", "__pycache__"))
    venv = venv_for(copy / "requirements.txt")

    # The library comes from the wheel, installed in the virtualenv: not from this checkout.
    where = run([str(venv / "bin" / "python"), "-c", "import wirespeed; print(wirespeed.__file__)"], cwd=copy)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout

    name, stack = GOLDEN_PLANS[example]
    stack_args = ["--stack", stack] if stack else []
    planned = run([str(venv / "bin" / "wirespeed"), "plan", ".", "--json", *stack_args], cwd=copy)
    plan = json.loads(planned.stdout)
    golden = json.loads((GOLDEN / f"{name}.json").read_text())
    assert {key: plan[key] for key in golden} == golden, "the copy plans differently from the example in the repository"

"""Every example works copied out of the repository, as a team uses it: the folder alone in a temporary directory,
its README's own install and plan lines run there as written (a fresh virtualenv, requirements.txt unchanged).

The wheel scripts/build-wheel.sh builds from this checkout stands in for the released wirespeed: it is the only source
besides PyPI (`--find-links`), so the test proves the requirements resolve from a package index, with no path back
into the repository. The README installs with pip from PyPI, which takes minutes the first time (pip's cache is
cold where uv's is warm); examples whose install lines and requirements are identical share one virtualenv.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import ROOT, python_examples, require
from test_plan_program_golden import GOLDEN, PROJECTS

EXAMPLES = [p.name for p in python_examples()]
# The golden plan of each example and the stack it is planned with (tests/program/test_plan_program_golden.py).
GOLDEN_PLANS = {directory.removeprefix("examples/"): (name, stack) for name, directory, stack in PROJECTS}


def clean_env() -> dict[str, str]:
    """The environment of a shell in the copied folder: nothing pointing back at this checkout or its virtualenv."""
    # PIP_FIND_LINKS and the index variables too: the wheel folder the README names is the only source besides PyPI.
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
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


def readme_lines(example: str) -> list[str]:
    """The example README's fenced ``sh`` lines up to its first ``pulumi`` command (those need a Pulumi account and
    a cloud): what a newcomer types in the copied folder to install the example and plan it."""
    text = (ROOT / "examples" / example / "README.md").read_text()
    lines: list[str] = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            if line.startswith("pulumi "):
                return lines
            if line.strip():
                lines.append(line)
    return lines


@pytest.fixture(scope="module")
def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """One folder per distinct (install lines, requirements.txt), where each example is copied in turn over the
    last one's files, its ./venv kept: the README's own lines make the virtualenv for the first and find it made
    for the next (``python3 -m venv`` and ``pip install`` are idempotent; a virtualenv cannot move or be reached
    through a symlink), so seven identical installs from PyPI cost one."""
    made: dict[str, Path] = {}

    def get(key: str) -> Path:
        if key not in made:
            made[key] = tmp_path_factory.mktemp("copy") / "project"
            made[key].mkdir()
        return made[key]

    return get


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"{' '.join(args)} in {cwd}:\n{done.stdout}{done.stderr}"
    return done


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_example_readmes_commands_install_and_plan_a_copy_outside_the_repository(wheels, shared_folder, example):
    lines = readme_lines(example)
    assert any(" -m venv venv" in line for line in lines), f"{example}/README.md: no line makes ./venv: {lines}"
    assert any("pip install" in line for line in lines), f"{example}/README.md: no install line: {lines}"
    assert any(line.startswith("wirespeed plan") for line in lines), f"{example}/README.md: no plan line: {lines}"
    requirements = (ROOT / "examples" / example / "requirements.txt").read_text()
    install_lines = [line for line in lines if not line.startswith("wirespeed ")]
    copy = shared_folder("\n".join(install_lines) + requirements)
    for stale in copy.iterdir():  # the previous example's files; its virtualenv stays
        if stale.name != "venv":
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    ignore = shutil.ignore_patterns("venv", "__pycache__")
    shutil.copytree(ROOT / "examples" / example, copy, ignore=ignore, dirs_exist_ok=True)

    # The README's lines as written, one bash script, in the copy, with the wheel folder the README asks for.
    script = "set -euo pipefail\n" + "\n".join(lines) + "\n"
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=copy,
        env={**clean_env(), "WIRESPEED_WHEELS": str(wheels)},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, f"{example}/README.md's commands in {copy}:\n{script}\n{done.stdout}{done.stderr}"
    venv = copy / "venv"
    assert (venv / "bin" / "python").exists(), (
        f"{example}/README.md's commands made no ./venv:\n{done.stdout}{done.stderr}"
    )

    # The library comes from the wheel, installed in the virtualenv: not from this checkout.
    where = run([str(venv / "bin" / "python"), "-c", "import wirespeed; print(wirespeed.__file__)"], cwd=copy)
    assert Path(where.stdout.strip()).resolve().is_relative_to(venv.resolve()), where.stdout

    name, stack = GOLDEN_PLANS[example]
    stack_args = ["--stack", stack] if stack else []
    planned = run([str(venv / "bin" / "wirespeed"), "plan", ".", "--json", *stack_args], cwd=copy)
    plan = json.loads(planned.stdout)
    golden = json.loads((GOLDEN / f"{name}.json").read_text())
    assert {key: plan[key] for key in golden} == golden, "the copy plans differently from the example in the repository"


@pytest.mark.parametrize("seed_pip", [False, True], ids=["uv-made-venv-without-pip", "venv-with-pip"])
def test_plot_without_matplotlib_prints_the_sizing_and_a_command_that_adds_it_here(tmp_path, uv, wheels, seed_pip):
    """A real environment without the plot extra (wirespeed from the wheel, no matplotlib), not a simulated one:
    the hint --plot prints is run as written, and then --plot draws."""
    venv = tmp_path / "venv"
    run([uv, "venv", "--quiet", *(["--seed"] if seed_pip else []), "--python", sys.executable, str(venv)], tmp_path)
    python = str(venv / "bin" / "python")
    run([uv, "pip", "install", "--quiet", "--python", python, "--find-links", str(wheels), "wirespeed"], tmp_path)
    png = tmp_path / "p.png"
    size = [str(venv / "bin" / "wirespeed"), "size", "azure-lb", "--pool", "10", "--ports", "1024", "--plot", str(png)]
    # uv on PATH as it is where uv made the environment: the hint names the uv it finds.
    env = {**clean_env(), "PATH": f"{Path(uv).parent}:{os.environ.get('PATH', '')}"}
    first = subprocess.run(size, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert first.returncode == 0, first.stderr
    assert "Capacity rule: 1,024 ports x 11 nodes" in first.stdout  # the sizing, though the plot could not be drawn
    warning, _, hint = first.stderr.strip().partition(" add it with: ")
    assert warning.startswith(f"warning: --plot {png}: not written: matplotlib is not installed"), first.stderr
    expected = f"{python} -m pip install" if seed_pip else f"{Path(uv)} pip install --python {python}"
    assert hint == f"{expected} 'matplotlib>=3.8'", first.stderr
    assert not png.exists()

    added = subprocess.run(["bash", "-c", hint], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert added.returncode == 0, f"{hint}:\n{added.stdout}{added.stderr}"
    second = subprocess.run(size, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert (second.returncode, second.stderr) == (0, ""), second.stderr
    assert png.read_bytes().startswith(b"\x89PNG")

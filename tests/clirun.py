"""Two ways into the real `wirespeed` entry point, shared by the tests/cli/test_cli_*.py files.

``wirespeed(...)`` runs the installed console script as users do (a fresh process: start-up, exit code, streams);
``invoke(...)`` drives the same typer app in-process through typer's CliRunner, fast enough for hypothesis.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from wirespeed.cli import app

WIRESPEED = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or shutil.which("wirespeed")
_RUNNER = CliRunner()


@dataclass(frozen=True)
class Outcome:
    returncode: int
    stdout: str
    stderr: str


def wirespeed(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``env`` adds to (or overrides) this process's environment."""
    assert WIRESPEED, "the wirespeed console script is not installed (pip install -e .)"
    full_env = None if env is None else {**os.environ, **env}
    return subprocess.run(
        [WIRESPEED, *args], capture_output=True, text=True, timeout=60, check=False, cwd=cwd, env=full_env
    )


def invoke(*args: str) -> Outcome:
    """Run the CLI in-process. An exception escaping the app (a bug) is re-raised so the test shows it."""
    result = _RUNNER.invoke(app, list(args), catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Outcome(result.exit_code, result.stdout, result.stderr)


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process, for tests that a command leaves no child behind.

    A zombie left for a PID 1 that does not reap is not live.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"

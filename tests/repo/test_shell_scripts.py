"""Every shell script the repository runs (set-up, CI, builds, benchmarks) passes shellcheck."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import ROOT, require

SCRIPTS = sorted(
    str(path.relative_to(ROOT))
    for path in [
        ROOT / ".ci" / "run",
        *ROOT.glob("scripts/*.sh"),
        *ROOT.glob("builders/*/build.sh"),
        *ROOT.glob("bench/*/run"),
        ROOT / "tests" / "fixtures" / "terraform" / "regen.sh",
        ROOT / "agent" / "test" / "qemu" / "fetch-kernel.sh",
    ]
)


def test_the_list_holds_the_set_up_scripts():
    assert {".ci/run", "scripts/install-system-deps.sh", "scripts/apt-lock.sh", "scripts/build-wheel.sh"} <= set(
        SCRIPTS
    )


@pytest.mark.parametrize("script", SCRIPTS)
def test_shellcheck_finds_nothing(script):
    # Debian package shellcheck (scripts/install-system-deps.sh installs it); CI=true fails without it.
    require(None if shutil.which("shellcheck") else "shellcheck not found: install the Debian package shellcheck")
    # -x follows `source`d files; paths in `# shellcheck source=` comments are relative to the repository root.
    done = subprocess.run(["shellcheck", "-x", script], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr

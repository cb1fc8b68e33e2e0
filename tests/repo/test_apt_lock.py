"""scripts/apt-lock.sh (used by scripts/install-system-deps.sh) waits for another package manager instead of failing.

The real apt-get runs, on an apt tree of its own in a temporary folder (APT_CONFIG: no sources, an empty dpkg
status), so nothing of the host's apt state is read or changed; another process holds apt's real lock files there
with fcntl, as unattended-upgrades holds /var/lib/dpkg/lock-frontend on a fresh VM.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import ROOT, require

LIBRARY = ROOT / "scripts" / "apt-lock.sh"
# Holds an fcntl write lock on argv[1] (as apt and dpkg lock) until its stdin closes, after saying so.
HOLDER = (
    "import fcntl, sys\n"
    "f = open(sys.argv[1], 'w'); fcntl.lockf(f, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()\n"
)


@pytest.fixture
def apt_tree(tmp_path: Path) -> dict[str, str]:
    """Environment for an apt-get whose every directory is under tmp_path."""
    require(None if shutil.which("apt-get") else "needs apt-get (Debian's apt): install-system-deps.sh is for Debian")
    for folder in ("lists/partial", "cache/archives/partial", "parts", "dpkg", "log"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "dpkg" / "status").touch()
    config = tmp_path / "apt.conf"
    config.write_text(
        f'Dir::State::Lists "{tmp_path}/lists";\n'
        f'Dir::State::status "{tmp_path}/dpkg/status";\n'
        f'Dir::Cache "{tmp_path}/cache";\n'
        'Dir::Etc::SourceList "/dev/null";\n'
        f'Dir::Etc::SourceParts "{tmp_path}/parts";\n'
        'Dir::Etc::Preferences "/dev/null";\n'
        f'Dir::Etc::PreferencesParts "{tmp_path}/parts";\n'
        f'Dir::Log "{tmp_path}/log";\n'
    )
    return {**os.environ, "APT_CONFIG": str(config)}


@contextmanager
def held(lock: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``lock`` until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "locked\n"
        yield holder
    finally:
        if holder.stdin:
            holder.stdin.close()
        holder.wait(timeout=10)


def apt_get(env: dict[str, str], *args: str, timeout: int = 900) -> subprocess.Popen[str]:
    # The shell options install-system-deps.sh runs under: a variable the library reads unset fails here too.
    script = f'set -euo pipefail; source "{LIBRARY}"; apt_get "$@"'
    return subprocess.Popen(
        ["bash", "-c", script, "apt_get", *args],
        env={**env, "WIRESPEED_APT_LOCK_TIMEOUT": str(timeout)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def waiting_message(process: subprocess.Popen[str]) -> str:
    """The first line the waiting apt_get writes to stderr."""
    assert process.stderr is not None
    return process.stderr.readline()


@pytest.mark.parametrize(
    ("command", "lock"),
    [
        # apt-get update fails at once on a held lists lock even with DPkg::Lock::Timeout (apt 2.6): waited here.
        (["update"], "lists/lock"),
        (["install", "-y"], "dpkg/lock-frontend"),
        (["install", "-y"], "dpkg/lock"),
    ],
)
def test_apt_get_waits_for_the_process_holding_the_lock_then_runs(apt_tree, tmp_path, command, lock):
    with held(tmp_path / lock) as holder:
        process = apt_get(apt_tree, *command)
        message = waiting_message(process)
        assert process.poll() is None, "apt_get gave up instead of waiting"
    assert message.startswith(f"install-system-deps: waiting for process {holder.pid} (python"), message
    assert f"to release {tmp_path / lock} (another package manager" in message
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "Reading package lists" in out


def test_apt_get_gives_up_past_the_timeout_naming_the_holder(apt_tree, tmp_path):
    lock = tmp_path / "lists" / "lock"
    with held(lock) as holder:
        process = apt_get(apt_tree, "update", timeout=2)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert f"gave up waiting for {lock}, still held by process {holder.pid} (python" in err
    assert "WIRESPEED_APT_LOCK_TIMEOUT=2 s" in err
    assert "Reading package lists" not in out, "apt-get ran without its lock"


def test_apt_get_without_contention_passes_apt_get_status_through(apt_tree):
    process = apt_get(apt_tree, "install", "-y", "no-such-package-wirespeed")
    _, err = process.communicate(timeout=60)
    assert process.returncode == 100
    assert "Unable to locate package no-such-package-wirespeed" in err
    assert "waiting" not in err

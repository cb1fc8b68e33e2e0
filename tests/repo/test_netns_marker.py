"""The `netns` marker's gate (tests/conftest.py): skip with the reason without privilege, fail under CI=true."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, missing_netns_privilege, prerequisite_gate

ROOT_STATUS = "Name:\tpython\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n"
NOBODY_STATUS = "Name:\tpython\nCapEff:\t0000000000000000\n"
NET_ADMIN_ONLY = "CapEff:\t0000000000001000\n"


@pytest.mark.parametrize(
    ("status", "euid", "reason"),
    [
        pytest.param(ROOT_STATUS, 0, None, id="root"),
        pytest.param(
            NOBODY_STATUS,
            65534,
            "needs root to create network namespaces (missing CAP_SYS_ADMIN, CAP_NET_ADMIN; euid 65534): "
            "run the tests as root",
            id="unprivileged-user",
        ),
        pytest.param(
            NET_ADMIN_ONLY,
            0,
            "needs root to create network namespaces (missing CAP_SYS_ADMIN; euid 0): run the tests as root",
            id="root-without-sys-admin",
        ),
    ],
)
def test_missing_netns_privilege(status: str, euid: int, reason: str | None) -> None:
    assert missing_netns_privilege(status, euid) == reason


@pytest.mark.parametrize(
    ("reason", "ci", "decision"),
    [
        pytest.param(None, "true", None, id="privileged-runs-in-ci"),
        pytest.param(None, None, None, id="privileged-runs-locally"),
        pytest.param("needs root", None, ("skip", "needs root"), id="unprivileged-skips-locally"),
        pytest.param("needs root", "1", ("skip", "needs root"), id="only-CI=true-means-ci"),
        pytest.param(
            "needs root",
            "true",
            ("fail", "needs root; CI=true, so this is a failure, not a skip"),
            id="unprivileged-fails-in-ci",
        ),
    ],
)
def test_prerequisite_gate(reason: str | None, ci: str | None, decision: tuple[str, str] | None) -> None:
    assert prerequisite_gate(reason, ci) == decision


@pytest.mark.netns
def test_the_gate_runs_a_netns_test_when_privileged() -> None:
    # Reaching this line means the gate let a `netns` test run; a netns is then creatable for real.
    name = "wst-gate-check"
    subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["ip", "netns", "del", name], check=True)


def test_the_gate_is_wired_to_the_marker(tmp_path: Path) -> None:
    """An unprivileged run of a `netns` test is skipped with the reason, or failed under CI=true."""
    test = tmp_path / "test_inner.py"
    test.write_text(
        textwrap.dedent(
            """
            import pytest

            @pytest.mark.netns
            def test_needs_netns():
                raise AssertionError("ran without privilege")
            """
        )
    )
    # The repository's conftest and its hook, reading a /proc/self/status with no capabilities.
    status = tmp_path / "status"
    status.write_text(NOBODY_STATUS)
    plugin = tmp_path / "gate_plugin.py"
    plugin.write_text(
        textwrap.dedent(
            f"""
            import sys
            from pathlib import Path

            sys.path.insert(0, {str(ROOT / "tests")!r})
            import conftest

            conftest.PROC_SELF_STATUS = Path({str(status)!r})
            pytest_runtest_setup = conftest.pytest_runtest_setup
            """
        )
    )
    # pytest.fail in setup is reported as an error: the run fails either way.
    for ci, expect in ((None, "1 skipped"), ("true", "1 error")):
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)}
        if ci:
            env["CI"] = ci
        args = ["-p", "gate_plugin", "-p", "no:cacheprovider", "-rsE", "-o", "markers=netns: needs root", str(test)]
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", *args], capture_output=True, text=True, cwd=tmp_path, env=env, check=False
        )
        assert expect in proc.stdout, proc.stdout
        assert proc.returncode == (1 if ci else 0), proc.stdout
        assert "needs root to create network namespaces (missing CAP_SYS_ADMIN, CAP_NET_ADMIN" in proc.stdout
        assert "ran without privilege" not in proc.stdout

"""tests/apiserver.py itself: what it says when a prerequisite is missing, and that it leaves nothing running."""

from __future__ import annotations

import subprocess

import pytest

import apiserver
from conftest import prerequisite_gate


def test_a_missing_binary_is_named_with_how_to_build_it(monkeypatch):
    monkeypatch.setattr(apiserver, "KUBE_APISERVER", apiserver.ROOT / "builders" / "apiserver" / "bin" / "absent")
    assert apiserver.missing_prerequisite() == (
        "the real API server needs builders/apiserver/bin/absent (build it: builders/apiserver/build.sh)"
    )
    decision = prerequisite_gate(apiserver.missing_prerequisite(), "true")
    assert decision is not None
    assert decision[0] == "fail"


def test_a_missing_etcd_is_named_with_its_package(monkeypatch):
    monkeypatch.setattr(apiserver.shutil, "which", lambda name: None if name == "etcd" else f"/usr/bin/{name}")
    reason = apiserver.missing_prerequisite()
    assert reason is not None
    assert reason.startswith(
        "the real API server needs etcd (Debian package etcd-server: scripts/install-system-deps.sh)"
    )


@pytest.mark.usefixtures("apiserver")  # the session's server: its prerequisite gate (skip locally, fail in CI)
def test_stopping_leaves_no_process_behind():
    """A second server started and stopped here leaves neither etcd nor kube-apiserver, nor its directory."""
    with apiserver.running() as server:
        pids = [server.etcd.pid, server.apiserver.pid]  # type: ignore[union-attr]
        workdir = server.workdir
    for pid in pids:
        assert subprocess.run(["kill", "-0", str(pid)], capture_output=True).returncode != 0, pid
    assert not workdir.exists()

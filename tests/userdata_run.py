"""Run a rendered boot script for real (sh, busybox sh) against a temporary /proc/sys tree: shared by the tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SHELLS = {"dash": ["/bin/sh"], "busybox": ["/bin/busybox", "sh"]}
IP = shutil.which("ip") or "/usr/sbin/ip"


@pytest.fixture
def netns() -> Iterator[str]:
    """A network namespace of the test's own with a veth pair ws0/ws1 in it, deleted afterwards (needs root: the
    tests that take it carry the ``netns`` marker). Import it into the test module."""
    name = f"wst-ud-{uuid.uuid4().hex[:8]}"
    subprocess.run([IP, "netns", "add", name], check=True)
    try:
        subprocess.run([IP, "-n", name, "link", "add", "ws0", "type", "veth", "peer", "name", "ws1"], check=True)
        yield name
    finally:
        subprocess.run([IP, "netns", "del", name], check=True)


@dataclass
class Roots:
    """The script's test seams: a /proc/sys-shaped tree and a sysctl.d directory, under one temp dir."""

    proc_sys: Path
    sysctl_d: Path
    class_net: Path | None = None

    @classmethod
    def make(cls, tmp: Path, sysctls: dict[str, str]) -> Roots:
        proc_sys = tmp / "proc-sys"
        for name, value in sysctls.items():
            path = proc_sys / name.replace(".", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(value + "\n")
        return cls(proc_sys, tmp / "etc-sysctl.d")

    def env(self, path: str) -> dict[str, str]:
        env = {"PATH": path, "WIRESPEED_PROC_SYS": str(self.proc_sys), "WIRESPEED_SYSCTL_D": str(self.sysctl_d)}
        if self.class_net is not None:
            env["WIRESPEED_SYS_CLASS_NET"] = str(self.class_net)
        return env

    def sysctl(self, name: str) -> str:
        return (self.proc_sys / name.replace(".", "/")).read_text().strip()


def run_script(
    script: str, roots: Roots, *, shell: str = "dash", path: str | None = None, netns: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the script; ``netns``: inside `ip netns exec` (which mounts that namespace's own /sys)."""
    command = [*SHELLS[shell], "-c", script, "wirespeed-tuning"]
    if netns is not None:
        command = ["ip", "netns", "exec", netns, *command]
    return subprocess.run(
        command,
        env=roots.env(path if path is not None else os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

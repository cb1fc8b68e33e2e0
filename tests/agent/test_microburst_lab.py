"""Smoke test of bench/microburst-lab: the backlog drop mechanism, and the agent's profile removing it.

Counts only (drops, delivered packets), never times: how fast this machine is decides how many packets the
default backlog loses, not whether it loses some. Needs root, ip, nft, taskset and Go (it builds burstgen
and wirespeed-agent, or takes WIRESPEED_AGENT_BIN / WIRESPEED_BURSTGEN_BIN). Without root the `netns` marker
skips it with the reason, and fails it under CI=true (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from builtin_profiles import THROUGHPUT_BACKLOG

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "bench" / "microburst-lab" / "run"
BACKLOG = Path("/proc/sys/net/core/netdev_max_backlog")


@pytest.mark.netns
def test_quick_lab_shows_backlog_drops_and_the_throughput_profile_removing_them(tmp_path: Path) -> None:
    out = tmp_path / "lab.json"
    args = [str(LAB), "--quick", "--json", str(out)]
    for env, flag in (("WIRESPEED_AGENT_BIN", "--agent"), ("WIRESPEED_BURSTGEN_BIN", "--burstgen")):
        if os.environ.get(env):
            args += [flag, os.environ[env]]
    host_before = BACKLOG.read_text()

    proc = subprocess.run(args, capture_output=True, text=True, timeout=900, check=False)

    assert proc.returncode == 0, proc.stderr
    assert BACKLOG.read_text() == host_before, "the lab must restore the host's netdev_max_backlog"
    result = json.loads(out.read_text())
    default, profile = result["arms"]["kernel-default"], result["arms"]["profile"]
    assert default["netdev_max_backlog"] == 1000
    assert default["softnet_dropped"] > 0, default
    assert default["delivered"] < default["sent"], default
    assert profile["netdev_max_backlog"] == THROUGHPUT_BACKLOG
    assert result["agent"]["report"]["sysctls"]["net.core.netdev_max_backlog"]["current"] == THROUGHPUT_BACKLOG
    assert profile["softnet_dropped"] == 0, profile
    assert profile["delivered"] == profile["sent"], profile
    # `wirespeed-agent diagnose`, run across each arm, names the backlog and its sysctl, then nothing.
    during_default = default["diagnose"]
    assert during_default["exit_code"] == 1, during_default
    backlog = during_default["findings"][0]
    assert backlog["cause"] == "backlog_drops", during_default
    assert backlog["counter"] == "softnet_stat dropped"
    assert backlog["fix"]["setting"] == 'sysctls."net.core.netdev_max_backlog"'
    assert backlog["fix"]["current"] == "1000"
    assert profile["diagnose"]["exit_code"] == 0, profile["diagnose"]
    assert profile["diagnose"]["findings"] == []

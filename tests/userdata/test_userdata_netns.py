# ruff: noqa: F811  (the `netns` fixture is imported from tests/userdata_run.py and taken as a parameter)
"""The rendered boot script run for real in a fresh network namespace: real links, real `ip`/`ethtool`, and the
namespace's own /proc/sys for per-namespace sysctls (global ones go to a temporary /proc/sys-shaped tree, so the
host is never changed). Real NIC drivers: agent/test/qemu (bootscript_test.go)."""

from __future__ import annotations

import subprocess

import pytest

from userdata_run import (
    IP,
    SHELLS,
    Roots,
    netns,  # noqa: F401 (the pytest fixture)
    run_script,
)
from wirespeed.profile import validate_profile
from wirespeed.userdata import render_script

pytestmark = pytest.mark.netns

PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


VETH_PROFILE = validate_profile(
    {
        "name": "veth-lab",
        "interfaces": {"roles": ["virtual"], "include": ["ws*"]},
        "rings": {"veth": {"rx": 512, "tx": 512}},
        "mtu": {"value": 9000, "drivers": ["veth"]},
        "sysctls": {"net.core.netdev_max_backlog": 4096},
    }
)


def out_lines(out: subprocess.CompletedProcess[str]) -> list[str]:
    return [line.removeprefix("wirespeed-tuning: ") for line in out.stdout.splitlines()]


def mtu(netns: str, link: str) -> str:
    return subprocess.run(
        [IP, "netns", "exec", netns, "cat", f"/sys/class/net/{link}/mtu"], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize("shell", SHELLS)
def test_veth_links_get_the_mtu_and_a_ring_read_the_driver_refuses_is_logged(tmp_path, netns, shell):
    roots = Roots.make(tmp_path, {"net.core.netdev_max_backlog": "1000"})
    script = render_script(VETH_PROFILE)
    first = run_script(script, roots, shell=shell, path=PATH, netns=netns)
    assert (first.returncode, first.stderr) == (0, "")
    assert out_lines(first) == [
        "applying profile veth-lab",
        "sysctl net.core.netdev_max_backlog: 1000 -> 4096",
        f"sysctl: wrote {roots.sysctl_d}/99-wirespeed-tuning.conf",
        "lo: skipped, name matches no include glob",
        # veth has no ethtool ring parameters (`ethtool -g` says "Operation not supported"): an unknown NIC.
        "ws0 (veth): ethtool -g failed, rings left alone",
        "ws0 (veth): mtu 1500 -> 9000",
        "ws1 (veth): ethtool -g failed, rings left alone",
        "ws1 (veth): mtu 1500 -> 9000",
        "done",
    ]
    assert (mtu(netns, "ws0"), mtu(netns, "ws1"), roots.sysctl("net.core.netdev_max_backlog")) == (
        "9000",
        "9000",
        "4096",
    )

    again = run_script(script, roots, shell=shell, path=PATH, netns=netns)
    assert again.returncode == 0
    assert out_lines(again) == [
        "applying profile veth-lab",
        "sysctl net.core.netdev_max_backlog: already 4096",
        f"sysctl: {roots.sysctl_d}/99-wirespeed-tuning.conf already up to date",
        "lo: skipped, name matches no include glob",
        "ws0 (veth): ethtool -g failed, rings left alone",
        "ws0 (veth): mtu already 9000",
        "ws1 (veth): ethtool -g failed, rings left alone",
        "ws1 (veth): mtu already 9000",
        "done",
    ]


def test_the_namespaces_own_sysctls_are_written_and_a_value_the_kernel_refuses_is_logged(tmp_path, netns):
    """Against the namespace's real /proc/sys: net.core.somaxconn is per namespace (the host keeps its own);
    net.netfilter.nf_conntrack_max is global, read-only in any namespace but the host's (the kernel's
    nf_conntrack_standalone.c makes it 0444 there), so the write is refused."""
    profile = validate_profile(
        {
            "name": "per-netns",
            "interfaces": {"roles": ["virtual"], "include": ["nothing-matches"]},
            "sysctls": {"net.core.somaxconn": 8192, "net.netfilter.nf_conntrack_max": 300_000},
        }
    )
    conntrack_max = subprocess.run(
        [IP, "netns", "exec", netns, "cat", "/proc/sys/net/netfilter/nf_conntrack_max"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    roots = Roots(proc_sys=tmp_path / "unused", sysctl_d=tmp_path / "etc-sysctl.d")
    env = {"PATH": PATH, "WIRESPEED_SYSCTL_D": str(roots.sysctl_d)}  # /proc/sys: the namespace's own
    command = [IP, "netns", "exec", netns, "/bin/sh", "-c", render_script(profile), "x"]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert (out.returncode, out.stderr) == (0, "")
    assert out_lines(out)[:4] == [
        "applying profile per-netns",
        "sysctl net.core.somaxconn: 4096 -> 8192",
        f"sysctl net.netfilter.nf_conntrack_max: writing 300000 refused, left at {conntrack_max}",
        f"sysctl: wrote {roots.sysctl_d}/99-wirespeed-tuning.conf",
    ]
    read = subprocess.run(
        [IP, "netns", "exec", netns, "cat", "/proc/sys/net/core/somaxconn"], capture_output=True, text=True, check=True
    )
    assert read.stdout.strip() == "8192"

"""`wirespeed-agent diagnose` against real kernel objects: causes produced here, in fresh network namespaces.

UDP receive-buffer errors (a receiver with a tiny socket buffer that never reads) and a full conntrack table
(a tiny nf_conntrack_max and many UDP flows). The counters read are the namespace's own (/proc/net/snmp,
/proc/net/stat/nf_conntrack and nf_conntrack_count are per network namespace), so other work on the machine
does not move them. nf_conntrack_max is global (read-only outside the host namespace on this kernel): the
conntrack test sets the host's value and restores it. Needs root: the `netns` marker skips without it (fails
under CI=true). The binary is built once, or taken from WIRESPEED_AGENT_BIN.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONNTRACK_MAX = Path("/proc/sys/net/netfilter/nf_conntrack_max")

# A receiver that never reads, with the smallest receive buffer the kernel allows, and a sender that keeps
# sending to it: every datagram past the first few is a Udp RcvbufErrors.
UDP_FLOOD = """
import socket, time
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
rx.bind(("127.0.0.1", 0))
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.monotonic() + {seconds}
while time.monotonic() < end:
    for _ in range(50):
        tx.sendto(b"x" * 512, rx.getsockname())
    time.sleep(0.01)
"""

# New UDP flows (one per destination port) for a while: each needs a conntrack entry. Once the table is
# full the kernel drops the packet and sendto fails with EPERM, which is the point.
NEW_FLOWS = """
import socket, time
end = time.monotonic() + {seconds}
port = 20000
while time.monotonic() < end:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"x", ("127.0.0.1", port))
    except PermissionError:
        pass
    s.close()
    port = 20000 + (port - 19999) % 30000
    time.sleep(0.002)
"""


@pytest.fixture(scope="session")
def agent_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("WIRESPEED_AGENT_BIN"):
        return Path(os.environ["WIRESPEED_AGENT_BIN"])
    out = tmp_path_factory.mktemp("bin") / "wirespeed-agent"
    subprocess.run(
        ["go", "build", "-o", str(out), "./cmd/wirespeed-agent"],
        cwd=ROOT / "agent",
        check=True,
        env={**os.environ, "CGO_ENABLED": "0"},
        timeout=600,
    )
    return out


@pytest.fixture
def netns(request: pytest.FixtureRequest) -> Iterator[str]:
    name = f"wsd-{os.getpid()}-{request.node.name[-20:]}".replace("[", "-").replace("]", "")
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def diagnose_during(agent: Path, ns: str, load: str, seconds: float, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run `diagnose` in ns over an interval that spans the load (python code run in ns)."""
    diag = subprocess.Popen(
        ["ip", "netns", "exec", ns, str(agent), "diagnose", "--interval", f"{seconds + 1:.0f}s", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)  # the first sample is taken before the load starts
    subprocess.run(
        ["ip", "netns", "exec", ns, sys.executable, "-c", load.format(seconds=seconds)], check=True, timeout=60
    )
    out, err = diag.communicate(timeout=60)
    return subprocess.CompletedProcess(diag.args, diag.returncode, out, err)


def findings(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return json.loads(proc.stdout)["findings"]  # type: ignore[no-any-return]


@pytest.mark.netns
def test_quiet_namespace_has_no_findings(agent_bin: Path, netns: str) -> None:
    proc = subprocess.run(
        ["ip", "netns", "exec", netns, str(agent_bin), "diagnose", "--interval", "1s"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("no known cause of packet loss seen in 1s\n")


@pytest.mark.netns
def test_tiny_socket_buffer_is_diagnosed_as_not_a_node_setting(agent_bin: Path, netns: str) -> None:
    proc = diagnose_during(agent_bin, netns, UDP_FLOOD, 2, "--json")

    assert proc.returncode == 1, proc.stderr
    found = findings(proc)
    assert [f["cause"] for f in found] == ["udp_receive_buffer"], found
    udp = found[0]
    assert udp["counter"] == "Udp RcvbufErrors"
    assert udp["delta"] > 0
    assert udp["drops"] is True
    assert udp["fix"]["kind"] == "not_a_node_setting"
    assert udp["fix"]["advice"].startswith("not a node setting: the application's socket buffer (SO_RCVBUF")


@pytest.fixture
def tiny_conntrack_max() -> Iterator[int]:
    """The host's nf_conntrack_max lowered to 32 for the test (the setting is global), then restored."""
    before = CONNTRACK_MAX.read_text()
    CONNTRACK_MAX.write_text("32\n")
    try:
        yield 32
    finally:
        CONNTRACK_MAX.write_text(before)


@pytest.mark.netns
def test_full_conntrack_table_names_nf_conntrack_max(agent_bin: Path, netns: str, tiny_conntrack_max: int) -> None:
    # Any conntrack expression makes the namespace track its flows.
    subprocess.run(
        ["ip", "netns", "exec", netns, "nft", "-f", "-"],
        input="table inet wsd {\n chain out {\n  type filter hook output priority 0;\n  ct state new accept\n }\n}\n",
        text=True,
        check=True,
    )

    proc = diagnose_during(agent_bin, netns, NEW_FLOWS, 2, "--json")

    assert proc.returncode == 1, proc.stderr
    found = findings(proc)
    assert [f["cause"] for f in found] == ["conntrack_full"], found
    ct = found[0]
    assert ct["counter"] == "nf_conntrack drop+early_drop"
    assert ct["delta"] > 0
    assert ct["fix"] == {
        "kind": "profile",
        "setting": 'sysctls."net.netfilter.nf_conntrack_max"',
        "current": str(tiny_conntrack_max),
        "advice": "raise net.netfilter.nf_conntrack_max in the profile (global: set in the host namespace), "
        "or stop tracking flows that need no NAT",
    }


@pytest.mark.netns
def test_text_output_names_counter_cause_and_fix(agent_bin: Path, netns: str) -> None:
    proc = diagnose_during(agent_bin, netns, UDP_FLOOD, 1)

    assert proc.returncode == 1, proc.stderr
    assert "1. udp_receive_buffer: Udp RcvbufErrors +" in proc.stdout
    assert "   fix (not_a_node_setting): not a node setting: the application's socket buffer" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--interval", "0s"], "diagnose: --interval 0s: must be positive\n", id="zero-interval"),
        pytest.param(["extra"], "diagnose: unexpected arguments: [extra]\n", id="extra-argument"),
    ],
)
def test_bad_flags_exit_2(agent_bin: Path, args: list[str], message: str) -> None:
    proc = subprocess.run([str(agent_bin), "diagnose", *args], capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 2
    assert proc.stderr == message


def test_unreadable_proc_exits_2(agent_bin: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(agent_bin), "diagnose", "--interval", "1s", "--proc-root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2
    missing = f"open {tmp_path}/net/softnet_stat: no such file or directory"
    assert proc.stderr == f"diagnose: cannot read softnet_stat: {missing}\n"

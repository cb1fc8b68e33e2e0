"""The boot-time tuning script: golden renders, shellcheck, and real runs of the rendered script.

Runs are real: dash (the /bin/sh of Debian and, as bash's POSIX mode's stand-in, close to AL2023's) and
busybox sh execute the rendered text against a temporary /proc/sys-shaped tree. NICs that cannot exist on this
machine (an ENA device, a Hyper-V NIC) are a fake sysfs tree plus ``fake_ethtool`` below, which keeps ring state
in files; real drivers are exercised in a network namespace (tests/userdata/test_userdata_netns.py) and in the QEMU
guest
(agent/test/qemu, bootscript_test.go).

Regenerate the golden renders after an intended change, and review the diff:

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/userdata/test_userdata_script.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builtin_profiles import THROUGHPUT_BACKLOG, THROUGHPUT_RX, THROUGHPUT_TX
from conftest import ROOT, require
from userdata_run import SHELLS, Roots
from wirespeed import catalog
from wirespeed.profile import load_profile, validate_profile
from wirespeed.profiles import builtin_profile
from wirespeed.userdata import ScriptError, render_script

GOLDEN = ROOT / "tests" / "golden" / "userdata"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
SHELLCHECK = shutil.which("shellcheck")

GOLDEN_PROFILES = {
    "throughput": lambda: builtin_profile("throughput"),
    "balanced": lambda: builtin_profile("balanced"),
    "qemu-real-drivers": lambda: load_profile((GOLDEN / "qemu-real-drivers.json").read_text()),
}


@pytest.mark.parametrize("case", GOLDEN_PROFILES)
def test_golden_script(case):
    rendered = render_script(GOLDEN_PROFILES[case]())
    golden = GOLDEN / f"{case}.sh"
    if UPDATE:
        golden.write_text(rendered)
    assert rendered == golden.read_text(), f"{golden.name} is stale: UPDATE_GOLDEN=1 pytest {__file__}"


def test_every_golden_script_has_a_case():
    assert sorted(p.stem for p in GOLDEN.glob("*.sh")) == sorted(GOLDEN_PROFILES)


@pytest.mark.parametrize("case", GOLDEN_PROFILES)
def test_shellcheck_finds_nothing(case):
    # Debian package shellcheck (scripts/install-system-deps.sh installs it); CI=true fails without it.
    require(None if SHELLCHECK else "shellcheck not found: install the Debian package shellcheck")
    out = subprocess.run(
        [SHELLCHECK, "--shell=sh", "-"],
        input=(GOLDEN / f"{case}.sh").read_text(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert (out.returncode, out.stdout) == (0, "")


def test_globs_that_would_break_the_script_are_refused_all_at_once():
    profile = validate_profile(
        {"name": "bad", "interfaces": {"include": ["eth$(reboot)"], "exclude": ["lo", "a b", "x|y"]}}
    )
    with pytest.raises(ScriptError) as caught:
        render_script(profile)
    allowed = "letters, digits, _ . : @ % + = , - and the glob characters * ? [ ] ^ !"
    assert str(caught.value) == (
        "profile cannot be rendered as a boot script:\n"
        f"  /interfaces/include/0: 'eth$(reboot)' is not allowed: {allowed}\n"
        f"  /interfaces/exclude/1: 'a b' is not allowed: {allowed}\n"
        f"  /interfaces/exclude/2: 'x|y' is not allowed: {allowed}"
    )


# --- runs against a fake sysfs: NICs that cannot exist here --------------------------------------------------

FAKE_ETHTOOL = r"""#!/bin/sh
# fake_ethtool: `ethtool -g/-G/-i` for devices described by files under $FAKE_NICS/<iface>/
# (driver, max_rx, max_tx, rx, tx; "refuse" present: -G fails like a driver that rejects the change).
dir="$FAKE_NICS/$2"
[ -d "$dir" ] || { echo "netlink error: no device matches name ($2)" >&2; exit 1; }
case $1 in
-i) echo "driver: $(cat "$dir/driver")" ;;
-g)
	printf 'Ring parameters for %s:\nPre-set maximums:\nRX:\t\t%s\nRX Mini:\t\tn/a\nTX:\t\t%s\n' \
		"$2" "$(cat "$dir/max_rx")" "$(cat "$dir/max_tx")"
	printf 'Current hardware settings:\nRX:\t\t%s\nRX Mini:\t\tn/a\nTX:\t\t%s\n' \
		"$(cat "$dir/rx")" "$(cat "$dir/tx")" ;;
-G)
	[ -e "$dir/refuse" ] && { echo "netlink error: Invalid argument" >&2; exit 1; }
	iface=$2; shift 2
	while [ $# -gt 1 ]; do echo "$2" >"$dir/$1"; shift 2; done
	echo "$iface" >>"$FAKE_NICS/writes" ;;
esac
"""


class FakeHost:
    """A sysfs class/net tree (device/driver symlinks, role files) and fake_ethtool's NIC state."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.class_net = tmp / "class-net"
        self.nics = tmp / "nics"
        self.bin = tmp / "bin"
        for d in (self.class_net, self.nics, self.bin):
            d.mkdir()

    def add(self, name: str, driver: str | None, rings: tuple[int, int, int, int] | None, *, vf: bool = False) -> None:
        link = self.class_net / name
        link.mkdir()
        (link / "mtu").write_text("1500\n")
        if driver is None:
            return
        device = link / "device"
        device.mkdir()
        drivers = self.tmp / "bus" / "drivers" / driver
        drivers.mkdir(parents=True, exist_ok=True)
        (device / "driver").symlink_to(drivers)
        if vf:
            (device / "physfn").mkdir()
        if rings is not None:
            state = self.nics / name
            state.mkdir()
            (state / "driver").write_text(driver)
            for key, value in zip(("max_rx", "max_tx", "rx", "tx"), rings, strict=True):
                (state / key).write_text(f"{value}\n")

    def with_ethtool(self) -> None:
        tool = self.bin / "ethtool"
        tool.write_text(FAKE_ETHTOOL)
        tool.chmod(0o755)

    def rings(self, name: str) -> tuple[int, int]:
        return int((self.nics / name / "rx").read_text()), int((self.nics / name / "tx").read_text())

    def writes(self) -> int:
        path = self.nics / "writes"
        return len(path.read_text().splitlines()) if path.exists() else 0

    def path(self) -> str:
        # The fake first; awk, sed, cat and readlink from the system.
        return f"{self.bin}:/usr/bin:/bin"


def run_fake(
    tmp_path: Path,
    host: FakeHost,
    profile_name: str = "throughput",
    shell: str = "dash",
    sysctls: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], Roots]:
    roots = Roots.make(tmp_path, {"net.core.netdev_max_backlog": "1000"} if sysctls is None else sysctls)
    roots.class_net = host.class_net
    env = roots.env(host.path()) | {"FAKE_NICS": str(host.nics)}
    script = render_script(builtin_profile(profile_name))
    out = subprocess.run(
        [*SHELLS[shell], "-c", script, "wirespeed-tuning"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return out, roots


def lines(out: subprocess.CompletedProcess[str]) -> list[str]:
    return [line.removeprefix("wirespeed-tuning: ") for line in out.stdout.splitlines()]


@pytest.mark.parametrize("shell", SHELLS)
def test_ena_rings_are_clamped_to_the_device_max_and_every_change_logged(tmp_path, shell):
    host = FakeHost(tmp_path)
    host.with_ethtool()
    # An ENA device whose max RX is below the profile's (the max depends on the instance type: read at boot, not
    # assumed).
    device_max = THROUGHPUT_RX["ena"] // 2
    host.add("ens5", "ena", (device_max, 1024, 1024, 1024))
    host.add("lo", None, None)
    out, roots = run_fake(tmp_path, host, shell=shell)
    assert (out.returncode, out.stderr) == (0, "")
    assert lines(out) == [
        "applying profile throughput",
        f"sysctl net.core.netdev_max_backlog: 1000 -> {THROUGHPUT_BACKLOG}",
        f"sysctl: wrote {roots.sysctl_d}/99-wirespeed-tuning.conf",
        f"ens5 (ena): rx ring 1024 -> {device_max} (asked {device_max}, max {device_max})",
        "lo: skipped, name matches an exclude glob",
        "done",
    ]
    assert host.rings("ens5") == (device_max, 1024)
    assert roots.sysctl("net.core.netdev_max_backlog") == str(THROUGHPUT_BACKLOG)
    assert (roots.sysctl_d / "99-wirespeed-tuning.conf").read_text() == (
        "# wirespeed profile throughput: written at first boot by the wirespeed tuning script\n"
        f"net.core.netdev_max_backlog = {THROUGHPUT_BACKLOG}\n"
    )


def test_a_second_run_changes_nothing(tmp_path):
    host = FakeHost(tmp_path)
    host.with_ethtool()
    # ENA's largest max (16,384; catalog) and a TX max of 1,024: the profile's rings fit as asked.
    host.add("ens5", "ena", (16384, 1024, 1024, 1024))
    run_fake(tmp_path, host)
    rx, tx = THROUGHPUT_RX["ena"], min(THROUGHPUT_TX["ena"], 1024)
    assert (host.rings("ens5"), host.writes()) == ((rx, tx), 1)
    out, roots = _rerun(tmp_path, host)
    assert out.returncode == 0
    assert lines(out) == [
        "applying profile throughput",
        f"sysctl net.core.netdev_max_backlog: already {THROUGHPUT_BACKLOG}",
        f"sysctl: {roots.sysctl_d}/99-wirespeed-tuning.conf already up to date",
        f"ens5 (ena): rings already rx {rx} tx {tx} (max rx 16384 tx 1024)",
        "done",
    ]
    assert host.writes() == 1


def _rerun(tmp_path: Path, host: FakeHost) -> tuple[subprocess.CompletedProcess[str], Roots]:
    """Run again on the same trees (the first run's /proc/sys and sysctl.d are kept)."""
    roots = Roots(tmp_path / "proc-sys", tmp_path / "etc-sysctl.d", host.class_net)
    env = roots.env(host.path()) | {"FAKE_NICS": str(host.nics)}
    script = render_script(builtin_profile("throughput"))
    out = subprocess.run(
        ["/bin/sh", "-c", script, "x"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    return out, roots


@pytest.mark.parametrize(
    ("case", "setup", "expected"),
    [
        pytest.param(
            "no-ethtool",
            lambda h: h.add("ens5", "ena", (8192, 1024, 1024, 1024)),
            ["ens5 (ena): ethtool not found, rings left to the node agent"],
            id="ethtool-missing",
        ),
        pytest.param(
            "refused",
            lambda h: (
                h.with_ethtool(),
                h.add("ens5", "ena", (THROUGHPUT_RX["ena"], 1024, 1024, 1024)),
                (h.nics / "ens5" / "refuse").touch(),
            ),
            [
                f"ens5 (ena): ethtool -G ens5 rx {THROUGHPUT_RX['ena']} refused, rings left at rx 1024 tx 1024: "
                "netlink error: Invalid argument"
            ],
            id="set-refused",
        ),
        pytest.param(
            "unknown-nic",
            lambda h: (h.with_ethtool(), h.add("eth0", "ixgbevf", (4096, 4096, 512, 512), vf=True)),
            ["eth0 (ixgbevf): no ring sizes for this driver in the profile, left alone"],
            id="driver-not-in-profile",
        ),
        pytest.param(
            "no-ring-read",
            lambda h: (h.with_ethtool(), h.add("eth1", "ena", None)),
            ["eth1 (ena): ethtool -g failed, rings left alone"],
            id="ethtool-g-fails",
        ),
        pytest.param(
            "virtual",
            lambda h: (h.with_ethtool(), h.add("bond0", None, None)),
            ["bond0: skipped, role virtual not selected"],
            id="virtual-link",
        ),
    ],
)
def test_nothing_it_cannot_do_fails_the_boot(tmp_path, case, setup, expected):
    host = FakeHost(tmp_path)
    setup(host)
    out, _ = run_fake(tmp_path, host)
    assert (out.returncode, out.stderr) == (0, "")
    assert lines(out)[3:-1] == expected


def test_hv_netvsc_rings_in_a_profile_are_never_applied(tmp_path):
    profile = validate_profile({"name": "azure", "rings": {"hv_netvsc": {"rx": 4096}, "mlx5_core": {"rx": 5000}}})
    host = FakeHost(tmp_path)
    host.with_ethtool()
    host.add("eth0", "hv_netvsc", (1, 1, 1, 1))
    host.add("enP1s1", "mlx5_core", (8192, 8192, 1024, 1024), vf=True)
    roots = Roots.make(tmp_path, {})
    roots.class_net = host.class_net
    out = subprocess.run(
        ["/bin/sh", "-c", render_script(profile), "x"],
        env=roots.env(host.path()) | {"FAKE_NICS": str(host.nics)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0
    assert lines(out) == [
        "applying profile azure",
        "enP1s1 (mlx5_core): rx ring 1024 -> 8192 (asked 8192, max 8192)",
        "eth0 (hv_netvsc): the driver has no NIC rings to set, left alone",
        "done",
    ]
    assert host.rings("eth0") == (1, 1)


def test_an_absent_sysctl_is_skipped(tmp_path):
    host = FakeHost(tmp_path)
    out, roots = run_fake(tmp_path, host, sysctls={})
    assert out.returncode == 0
    assert lines(out)[:3] == [
        "applying profile throughput",
        "sysctl net.core.netdev_max_backlog: not present, skipped",
        f"sysctl: wrote {roots.sysctl_d}/99-wirespeed-tuning.conf",
    ]


# --- the script's ring arithmetic is the agent's (agent/internal/rings.Size) -------------------------------


def agent_size(want: int, device_max: int, low: int | None, rule: str) -> int:
    """agent/internal/rings/drivers.go Size, transcribed."""
    n = max(want, low) if low is not None else want
    if rule == "up_power_of_two":
        n = 1 << (n - 1).bit_length() if n > 1 else 1
    elif rule == "down_power_of_two":
        n = 1 << (n.bit_length() - 1) if n > 1 else n
    elif rule == "multiple_of_8":
        n = (n + 7) // 8 * 8
    if n > device_max:
        n = device_max
        if rule in ("up_power_of_two", "down_power_of_two"):
            n = 1 << (n.bit_length() - 1)
        elif rule == "multiple_of_8":
            n = n // 8 * 8
    return n


SIZE_FUNCTION = render_script(builtin_profile("throughput")).split("ws_size() {", 1)[1].split("\n}\n", 1)[0]
SH_RULES = {"up_power_of_two": "up", "down_power_of_two": "down", "multiple_of_8": "mult8", "none": "none"}


@given(
    cases=st.lists(
        st.tuples(
            st.integers(64, 65_536),
            st.integers(64, 16_384),
            st.sampled_from(sorted(d for d, f in catalog.nic_drivers().items() if f.has_rings)),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_ring_sizes_match_the_agents_rule(cases):
    calls = "\n".join(
        f"ws_size {want} {dev_max} {catalog.nic_driver(d).rx.min} {SH_RULES[catalog.nic_driver(d).rounding]}"
        for want, dev_max, d in cases
    )
    script = f"ws_size() {{{SIZE_FUNCTION}\n}}\n{calls}\n"
    out = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, check=True, timeout=60)
    expected = [
        agent_size(want, dev_max, catalog.nic_driver(d).rx.min, catalog.nic_driver(d).rounding)
        for want, dev_max, d in cases
    ]
    assert [int(x) for x in out.stdout.split()] == expected

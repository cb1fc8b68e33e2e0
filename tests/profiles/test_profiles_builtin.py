"""Built-in profiles are derived from sizing; the committed JSON the DaemonSet ships must match."""

from __future__ import annotations

import pytest

from conftest import ROOT
from wirespeed.profiles import ASSUMPTIONS, CLOUD_DRIVERS, build_profile, builtin_profile, render_builtin
from wirespeed.sizing.rings import plan_rings


@pytest.mark.parametrize("name", sorted(ASSUMPTIONS))
def test_committed_profile_matches_derivation(name):
    committed = (ROOT / "components" / "wirespeed" / "data" / "profiles" / f"{name}.json").read_text()
    assert committed == render_builtin(name), "run: python -m wirespeed.profiles"


# The two field reports the built-in profiles are meant to reproduce: the one place tests write their numbers down
# (every other test reads them from tests/builtin_profiles.py). Changing ASSUMPTIONS so a profile leaves its report
# is a change of what the README promises, so it fails here on purpose.


def test_throughput_lands_where_the_field_report_landed():
    # [elastic-aks] (docs/references.md; Elastic on AKS, 100 Gb/s host NIC): RX ring 1,024 -> 8,192;
    # netdev_max_backlog 1,000 -> 32,768.
    profile = builtin_profile("throughput")
    assert profile.rings["mlx5_core"].rx == 8_192
    assert profile.sysctls.as_dict() == {"net.core.netdev_max_backlog": 32_768}


def test_balanced_matches_the_aks_teams_dsv3_advice_and_costs_a_quarter():
    # [aks-net-tuning] (docs/references.md; the AKS team): RX ring 1,024 -> 2,048 on Dsv3.
    balanced, throughput = builtin_profile("balanced"), builtin_profile("throughput")
    assert balanced.rings["mlx5_core"].rx == 2_048
    assert balanced.sysctls.as_dict() == {"net.core.netdev_max_backlog": 8_192}
    assert throughput.rings["mlx5_core"].rx == 4 * balanced.rings["mlx5_core"].rx


@pytest.mark.parametrize("name", sorted(ASSUMPTIONS))
def test_profiles_cover_every_cloud_nic_and_leave_mtu_alone(name):
    profile = build_profile(name)
    assert sorted(profile.rings) == sorted(CLOUD_DRIVERS)
    assert profile.mtu is None  # jumbo MTU is opt-in only


@pytest.mark.parametrize("name", sorted(ASSUMPTIONS))
def test_ena_ring_is_a_size_the_driver_keeps(name):
    # ENA rounds a request DOWN to a power of two, so asking for exactly the packets in the stall (8,128 at 100 Gb/s
    # for 1 ms) would give 4,096: the profile asks for a power of two that holds them.
    assumed = ASSUMPTIONS[name]
    stall = plan_rings("ena", assumed.line_rate_gbps, stall_ms=assumed.ring_stall_ms, packet_bytes=assumed.packet_bytes)
    rx = build_profile(name).rings["ena"].rx
    assert rx is not None
    assert rx & (rx - 1) == 0
    assert rx >= stall.packets_in_stall


def test_unknown_profile_names_the_choices():
    with pytest.raises(LookupError, match=r"profile: 'fast' is not a built-in profile: balanced, throughput"):
        builtin_profile("fast")

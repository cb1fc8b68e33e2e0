"""Ring, backlog and MTU sizing: the field report's numbers, driver rules, and invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirespeed import catalog
from wirespeed.sizing import SizingError, plan_backlog, plan_mtu, plan_rings
from wirespeed.sizing.backlog import BACKLOG_MAX, BACKLOG_MIN
from wirespeed.sizing.packets import packets_per_second

RING_DRIVERS = sorted(name for name, d in catalog.nic_drivers().items() if d.rx is not None)


def test_100g_1500b_lands_on_the_field_report():
    # [elastic-aks] (docs/references.md): VF on a 100 Gb/s host NIC; RX ring 8,192 and netdev_max_backlog 32,768.
    assert plan_rings("mlx5_core", 100).rx == 8_192
    assert plan_backlog(100).netdev_max_backlog == 32_768


def test_wire_overhead_is_counted():
    # 100 Gb/s / ((1,500 + 38) B x 8) = 8,127,438 packets/s
    assert int(packets_per_second(100, 1_500)) == 8_127_438


@pytest.mark.parametrize(
    ("driver", "gbps", "rx", "tx"),
    [
        pytest.param("mlx5_core", 25, 2_048, 2_048, id="mlx5-25g"),
        pytest.param("mana", 100, 8_192, 8_192, id="mana-100g"),
        pytest.param("mana", 400, 8_192, 16_384, id="mana-rx-capped-tx-higher-max"),
        pytest.param("ena", 100, 8_192, 1_024, id="ena-tx-max-1024"),
        # 82 packets at 1 Gb/s fit in every default: the plan never asks for less than the driver starts with
        # (issue 25: RX 256 below ENA's default 1,024 was advice to shrink a ring that already fits).
        pytest.param("ena", 1, 1_024, 1_024, id="ena-default-holds"),
        pytest.param("e1000e", 1, 256, 256, id="e1000e-default-holds"),
        pytest.param("e1000e", 4, 328, 328, id="e1000e-multiple-of-8"),
    ],
)
def test_ring_sizes_by_driver(driver, gbps, rx, tx):
    plan = plan_rings(driver, gbps)
    assert plan.rx == rx
    assert plan.tx == tx
    assert plan.to_json()["rx"] == rx
    assert plan.to_json()["tx"] == tx


def test_capped_ring_is_reported():
    plan = plan_rings("mlx5_core", 400)
    assert plan.rx == 8_192
    assert plan.rx_capped
    assert "RX is capped at the driver max 8,192" in plan.explain()


def test_capped_tx_ring_is_reported_on_its_own():
    # 100 Gb/s for 1 ms is 8,128 packets: ENA's RX holds them (8,192), its TX stops at 1,024.
    plan = plan_rings("ena", 100)
    assert plan.packets_in_stall == 8_128
    assert (plan.rx, plan.rx_capped) == (8_192, False)
    assert (plan.tx, plan.tx_capped) == (1_024, True)
    assert "TX is capped at the driver max 1,024: it rides out only 0.13 ms at this rate." in plan.explain()
    assert "RX is capped" not in plan.explain()
    assert plan.to_json()["tx_capped_at_driver_max"] is True
    assert plan.to_json()["rx_capped_at_driver_max"] is False


def test_memory_cost_counts_queues_and_buffers():
    plan = plan_rings("mlx5_core", 100, queues=4)
    nic = catalog.nic_driver("mlx5_core")
    assert plan.memory_bytes == 8_192 * nic.rx_buffer_bytes * 4
    assert plan.to_json()["extra_memory_bytes"] == (8_192 - 1_024) * nic.rx_buffer_bytes * 4


def test_mana_plan_says_which_rx_default_it_assumes():
    plan = plan_rings("mana", 100)
    assert plan.rx_default == 512
    assert plan.explain().splitlines()[-1] == (
        "mana's RX default is 512 before Linux 6.13 and 1,024 since (also on distribution kernels that "
        "backported e26a0c5d828b); this plan assumes 512. `ethtool -g` on the node shows which one it runs."
    )
    assert "RX default is" not in plan_rings("mlx5_core", 100).explain()


def test_synthetic_nic_has_no_rings():
    with pytest.raises(SizingError, match=r"^driver: 'hv_netvsc' is not allowed: a driver with NIC rings"):
        plan_rings("hv_netvsc", 10)


def test_unknown_driver_lists_known():
    with pytest.raises(LookupError, match="mlx5_core"):
        plan_rings("mlx5", 10)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param(
            {"line_rate_gbps": 0}, "line_rate_gbps: 0 is not allowed: must be between 0.001 and 800", id="rate"
        ),
        pytest.param(
            {"line_rate_gbps": 10, "packet_bytes": 10},
            "packet_bytes: 10 is not allowed: must be a whole number between 64 and 9,216",
            id="packet",
        ),
        pytest.param(
            {"line_rate_gbps": 10, "stall_ms": 0},
            "stall_ms: 0 is not allowed: must be between 0.001 and 1,000",
            id="stall",
        ),
    ],
)
def test_backlog_bad_input(kwargs, message):
    with pytest.raises(SizingError) as info:
        plan_backlog(**kwargs)
    assert str(info.value) == message


def test_backlog_caps_at_aks_max_and_says_so():
    plan = plan_backlog(800, stall_ms=1_000, packet_bytes=64, cloud="azure")
    assert plan.netdev_max_backlog == BACKLOG_MAX
    assert plan.capped
    assert (
        "net.core.netdev_max_backlog = 3,240,000 (kernel default 1,000; capped at AKS's maximum 3,240,000, below "
        "the 980,392,157 the stall needs: it holds only 3.3 ms at this rate)." in plan.explain()
    )
    assert "power of two" not in plan.explain()


def test_backlog_on_aws_obeys_only_the_kernels_int_range():
    plan = plan_backlog(800, stall_ms=1_000, packet_bytes=64, cloud="aws")
    assert plan.netdev_max_backlog == 2**30  # 980,392,157 rounded up: far above AKS's 3,240,000
    assert not plan.capped
    assert plan.to_json()["capped_at_kernel_max"] is False
    assert "capped_at_aks_max" not in plan.to_json()
    assert "AKS" not in plan.explain()


@pytest.mark.parametrize(
    ("gbps", "cloud", "line"),
    [
        pytest.param(
            100,
            "azure",
            "net.core.netdev_max_backlog = 32,768 (kernel default 1,000; 32,510 rounded up to a power of two, "
            "within AKS's 1,000..3,240,000).",
            id="rounded-up-azure",
        ),
        pytest.param(
            100,
            "aws",
            "net.core.netdev_max_backlog = 32,768 (kernel default 1,000; 32,510 rounded up to a power of two, "
            "within 1,000..2,147,483,647, the kernel's int range, which EKS does not narrow).",
            id="rounded-up-aws",
        ),
        pytest.param(
            100,
            None,
            "net.core.netdev_max_backlog = 32,768 (kernel default 1,000; 32,510 rounded up to a power of two, "
            "within 1,000..3,240,000, the range AKS accepts; on AWS the kernel's int range applies).",
            id="rounded-up-any-cloud",
        ),
        pytest.param(
            1,
            "azure",
            "net.core.netdev_max_backlog = 1,000 (kernel default 1,000; the stall fits in the kernel default, "
            "AKS's minimum 1,000).",
            id="kernel-default-azure",
        ),
        pytest.param(
            1,
            "aws",
            "net.core.netdev_max_backlog = 1,000 (kernel default 1,000; the stall fits in the kernel default).",
            id="kernel-default-aws",
        ),
    ],
)
def test_backlog_explains_how_the_value_was_chosen(gbps, cloud, line):
    assert line in plan_backlog(gbps, cloud=cloud).explain().splitlines()


@given(
    driver=st.sampled_from(RING_DRIVERS),
    gbps=st.floats(0.01, 400),
    stall=st.floats(0.01, 10),
    packet=st.integers(64, 9_000),
)
def test_rings_obey_driver_rules(driver, gbps, stall, packet):
    nic = catalog.nic_driver(driver)
    plan = plan_rings(driver, gbps, stall_ms=stall, packet_bytes=packet)
    sizes = {"rx": plan.rx, "tx": plan.tx}
    for direction, size in sizes.items():
        limits = nic.limits(direction)
        assert limits.min <= size <= limits.max, direction
        if nic.rounding in ("up_power_of_two", "down_power_of_two") and size not in (limits.min, limits.max):
            assert size & (size - 1) == 0, direction
        if nic.rounding == "multiple_of_8" and size not in (limits.min, limits.max):
            assert size % 8 == 0, direction
        # what we ask for is what the driver keeps: its own rounding leaves the value unchanged
        assert nic.round_ring(size, direction) == size, direction


@given(driver=st.sampled_from(RING_DRIVERS), low=st.floats(0.01, 200), extra=st.floats(0, 200))
def test_rings_monotone_in_line_rate(driver, low, extra):
    a, b = plan_rings(driver, low), plan_rings(driver, low + extra)
    assert b.rx >= a.rx
    assert b.tx >= a.tx


@given(gbps=st.floats(0.01, 800), stall=st.floats(0.01, 100), extra=st.floats(0, 100))
def test_backlog_within_aks_range_and_monotone(gbps, stall, extra):
    a, b = plan_backlog(gbps, stall_ms=stall), plan_backlog(gbps, stall_ms=min(1_000, stall + extra))
    assert BACKLOG_MIN <= a.netdev_max_backlog <= b.netdev_max_backlog <= BACKLOG_MAX


@pytest.mark.parametrize(
    ("driver", "kwargs", "mtu"),
    [
        pytest.param("mana", {}, 9_000, id="mana"),
        pytest.param("mlx5_core", {}, 3_900, id="mellanox"),
        pytest.param("ena", {}, 9_001, id="ena"),
        pytest.param("ena", {"ena_express": True}, 8_900, id="ena-express"),
        pytest.param("mana", {"path": "gateway"}, 1_500, id="through-gateway"),
    ],
)
def test_jumbo_mtu(driver, kwargs, mtu):
    assert plan_mtu(driver, **kwargs).mtu == mtu


@pytest.mark.parametrize("driver", ["mana", "mlx5_core", "mlx4_en", "ena"])
def test_jumbo_mtu_is_the_catalog_mtu_max(driver):
    # One home for the number: plan_mtu reads nic_drivers.json instead of keeping its own table.
    assert plan_mtu(driver).mtu == catalog.nic_driver(driver).mtu_max


@pytest.mark.parametrize("driver", ["mana", "mlx5_core", "mlx4_en"])
@pytest.mark.parametrize("path", ["local", "gateway"])
def test_ena_express_for_a_driver_without_it_is_refused_not_ignored(driver, path):
    from wirespeed.sizing.mtu import MtuFlagError, ena_express_drivers

    assert ena_express_drivers() == ("ena",)  # from the catalog's ENA Express instance types
    with pytest.raises(MtuFlagError) as info:
        plan_mtu(driver, path=path, ena_express=True)
    assert info.value.field == "ena_express"
    assert str(info.value) == (
        f"ena_express: does not apply to driver {driver!r} (an Azure NIC): ENA Express (SRD) is an AWS feature of the "
        "ena driver; leave it out, or give driver ena"
    )


def test_an_unknown_driver_is_refused_through_a_gateway_too():
    with pytest.raises(SizingError) as info:
        plan_mtu("e1000e", path="gateway")
    assert info.value.field == "driver"


def test_jumbo_mtu_unknown_driver_lists_the_cloud_drivers():
    with pytest.raises(SizingError) as info:
        plan_mtu("e1000e")
    assert str(info.value) == "driver: 'e1000e' is not allowed: one of ena, mana, mlx4_en, mlx5_core"


# The whole plan each branch of plan_mtu returns (what `size mtu --json` and its prose carry), in process.
@pytest.mark.parametrize(
    ("driver", "kwargs", "expected"),
    [
        pytest.param(
            "mana",
            {},
            {
                "driver": "mana",
                "path": "local",
                "mtu": 9_000,
                "reason": "largest MTU Azure carries inside a VNet for this NIC",
            },
            id="azure",
        ),
        pytest.param(
            "ena",
            {},
            {"driver": "ena", "path": "local", "mtu": 9_001, "reason": "jumbo frames inside a VPC"},
            id="aws",
        ),
        pytest.param(
            "ena",
            {"ena_express": True},
            {"driver": "ena", "path": "local", "mtu": 8_900, "reason": "ENA Express (SRD) carries at most 8,900"},
            id="ena-express",
        ),
        pytest.param(
            "mlx5_core",
            {"path": "gateway"},
            {
                "driver": "mlx5_core",
                "path": "gateway",
                "mtu": 1_500,
                "reason": "traffic crosses a gateway, peering or the internet: 1,500",
            },
            id="gateway",
        ),
    ],
)
def test_mtu_plan_json_and_explain_in_full(driver, kwargs, expected):
    plan = plan_mtu(driver, **kwargs)
    assert plan.to_json() == expected
    assert plan.explain() == f"MTU {expected['mtu']:,} for {driver}: {expected['reason']}"


def test_jumbo_mtu_unknown_driver_suggests_the_near_name():
    with pytest.raises(SizingError) as info:
        plan_mtu("ena0")
    assert str(info.value) == "driver: 'ena0' is not allowed: one of ena, mana, mlx4_en, mlx5_core (did you mean ena?)"


def test_jumbo_mtu_unknown_driver_with_two_near_names_offers_both():
    with pytest.raises(SizingError) as info:
        plan_mtu("mlx")
    assert str(info.value) == (
        "driver: 'mlx' is not allowed: one of ena, mana, mlx4_en, mlx5_core (did you mean mlx4_en or mlx5_core?)"
    )

"""NIC driver facts and ring rounding: catalog.nic_driver, NicDriver.round_ring."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirespeed import catalog

DATA = Path(catalog.__file__).resolve().parent.parent / "data" / "nic_drivers.json"
RING_DRIVERS = sorted(name for name, d in catalog.nic_drivers().items() if d.has_rings)
POWER_OF_TWO_RULES = ("up_power_of_two", "down_power_of_two")

entries = st.integers(min_value=1, max_value=1 << 20)
directions = st.sampled_from(["rx", "tx"])
drivers = st.sampled_from(RING_DRIVERS)


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def test_every_issue_driver_is_there() -> None:
    assert {"mana", "mlx5_core", "mlx4_en", "ena"} <= set(catalog.nic_drivers())


def test_loaded_table_matches_the_json_the_go_agent_reads() -> None:
    raw = json.loads(DATA.read_text())["drivers"]
    loaded = {name: d.to_json() for name, d in catalog.nic_drivers().items()}
    assert set(loaded) == set(raw)
    for name, entry in raw.items():
        assert loaded[name] == {"name": name, **entry}, name


# (driver, direction, default, min, max): upstream constants cited in nic_drivers.json's sources.
LIMITS = [
    ("mlx5_core", "rx", 1024, 16, 8192),
    ("mlx5_core", "tx", 1024, 64, 8192),
    ("mlx4_en", "rx", 1024, 256, 8192),
    ("mlx4_en", "tx", 1024, 64, 8192),
    ("mana", "rx", 512, 128, 8192),
    ("mana", "tx", 256, 128, 16384),
    ("ena", "rx", 1024, 256, 16384),
    ("ena", "tx", 1024, 256, 1024),
    ("e1000e", "rx", 256, 64, 4096),
    ("igb", "tx", 256, 64, 4096),
    ("igbvf", "rx", 1024, 64, 4096),
]


@pytest.mark.parametrize(
    ("driver", "direction", "default", "minimum", "maximum"),
    [pytest.param(*row, id=f"{row[0]}-{row[1]}") for row in LIMITS],
)
def test_ring_limits(driver: str, direction: catalog.Direction, default: int, minimum: int, maximum: int) -> None:
    limits = catalog.nic_driver(driver).limits(direction)
    assert (limits.default, limits.min, limits.max) == (default, minimum, maximum)


def test_mana_rx_default_changed_in_linux_6_13() -> None:
    # e26a0c5d828b "net: mana: Increase the DEF_RX_BUFFERS_PER_QUEUE to 1024": 512 before, 1,024 since.
    rx = catalog.nic_driver("mana").limits("rx")
    assert rx.default == 512  # what explanations assume
    assert rx.default_since == catalog.KernelDefault(
        kernel="6.13", default=1024, change="e26a0c5d828b net: mana: Increase the DEF_RX_BUFFERS_PER_QUEUE to 1024"
    )
    assert catalog.nic_driver("mana").limits("tx").default_since is None


def test_only_mana_has_a_kernel_dependent_default() -> None:
    changed = {
        name
        for name, d in catalog.nic_drivers().items()
        if d.has_rings and any(d.limits(direction).default_since for direction in ("rx", "tx"))
    }
    assert changed == {"mana"}


def test_mlx5_notes_say_rx_missed_errors_needs_the_may_2024_fix() -> None:
    notes = " ".join(catalog.nic_driver("mlx5_core").notes)
    assert "rx_missed_errors includes rx_out_of_buffer" in notes
    assert "May 2024" in notes
    assert "net/mlx5e: Use rx_missed_errors instead of rx_dropped for reporting buffer exhaustion" in notes
    assert "older kernels count those drops in rx_dropped" in notes


@pytest.mark.parametrize(
    ("driver", "mtu"),
    [("mana", 9000), ("mlx5_core", 3900), ("mlx4_en", 3900), ("ena", 9001), ("e1000e", 9212), ("igb", 9216)],
)
def test_mtu_max(driver: str, mtu: int) -> None:
    assert catalog.nic_driver(driver).mtu_max == mtu


@pytest.mark.parametrize(
    ("driver", "counter", "cause"),
    [
        pytest.param("mana", "hc_rx_discards_no_wqe", "rx_ring_overflow", id="mana-ring"),
        pytest.param("mlx5_core", "rx_out_of_buffer", "rx_ring_overflow", id="mlx5-ring"),
        pytest.param("e1000e", "rx_no_buffer_count", "rx_ring_overflow", id="e1000e-ring"),
        pytest.param("ena", "bw_in_allowance_exceeded", "instance_allowance", id="ena-bw-in"),
        pytest.param("ena", "bw_out_allowance_exceeded", "instance_allowance", id="ena-bw-out"),
        pytest.param("ena", "pps_allowance_exceeded", "instance_allowance", id="ena-pps"),
        pytest.param("ena", "conntrack_allowance_exceeded", "instance_allowance", id="ena-conntrack"),
        pytest.param("ena", "linklocal_allowance_exceeded", "not_a_node_setting", id="ena-linklocal"),
    ],
)
def test_driver_counters_name_their_cause(driver: str, counter: str, cause: str) -> None:
    by_name = {c.name: c for c in catalog.nic_driver(driver).counters}
    assert by_name[counter].cause == cause
    assert counter in catalog.nic_driver(driver).drop_counters


@pytest.mark.parametrize("driver", ["igbvf", "virtio_net", "mlx4_en", "hv_netvsc"])
def test_drivers_without_a_ring_counter_say_where_drops_show(driver: str) -> None:
    d = catalog.nic_driver(driver)
    assert d.counters == ()
    assert d.notes, f"{driver}: a driver with no curated counter explains why in its notes"


def test_every_counter_cites_a_source_file_or_document() -> None:
    for d in catalog.nic_drivers().values():
        for c in d.counters:
            assert ("drivers/net/" in c.source) or ("docs." in c.source), (d.name, c.name)


def test_bad_counter_cause_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    from wirespeed.catalog import _load

    doc = json.loads(DATA.read_text())
    doc["drivers"]["mana"]["counters"][0]["cause"] = "gremlins"
    monkeypatch.setattr(_load, "read_data", lambda name: doc)
    _load.drivers.cache_clear()
    try:
        with pytest.raises(catalog.CatalogDataError) as err:
            _load.drivers()
    finally:
        _load.drivers.cache_clear()
    assert str(err.value) == (
        "nic_drivers.json:drivers.mana.counters[0].cause: 'gremlins' is not one of "
        "rx_ring_overflow, instance_allowance, not_a_node_setting"
    )


@pytest.mark.parametrize(
    ("driver", "direction", "asked", "expected"),
    [
        pytest.param("mlx5_core", "rx", 5000, 8192, id="mlx5-rounds-up"),
        pytest.param("mlx5_core", "rx", 8192, 8192, id="mlx5-field-report-8192"),
        pytest.param("mlx5_core", "rx", 100_000, 8192, id="mlx5-clamped-to-max"),
        pytest.param("mlx5_core", "tx", 1, 64, id="mlx5-clamped-to-min"),
        pytest.param("mana", "rx", 1500, 2048, id="mana-rounds-up"),
        pytest.param("mana", "tx", 16384, 16384, id="mana-tx-max"),
        pytest.param("ena", "rx", 5000, 4096, id="ena-rounds-down"),
        pytest.param("ena", "rx", 100, 256, id="ena-clamped-to-min"),
        pytest.param("ena", "tx", 4096, 1024, id="ena-tx-max"),
        pytest.param("e1000e", "rx", 1001, 1008, id="e1000e-aligns-to-8"),
        pytest.param("igb", "rx", 5000, 4096, id="igb-clamped"),
    ],
)
def test_round_ring_examples(driver: str, direction: catalog.Direction, asked: int, expected: int) -> None:
    assert catalog.nic_driver(driver).round_ring(asked, direction) == expected


@given(name=drivers, direction=directions, n=entries)
def test_round_ring_within_limits(name: str, direction: catalog.Direction, n: int) -> None:
    driver = catalog.nic_driver(name)
    limits = driver.limits(direction)
    assert limits.min <= driver.round_ring(n, direction) <= limits.max


@given(name=drivers, direction=directions, n=entries)
def test_round_ring_follows_the_rule(name: str, direction: catalog.Direction, n: int) -> None:
    driver = catalog.nic_driver(name)
    result = driver.round_ring(n, direction)
    if driver.rounding in POWER_OF_TWO_RULES:
        assert is_power_of_two(result)
    elif driver.rounding == "multiple_of_8":
        assert result % 8 == 0


@given(name=drivers, direction=directions, n=entries)
def test_round_ring_idempotent(name: str, direction: catalog.Direction, n: int) -> None:
    driver = catalog.nic_driver(name)
    once = driver.round_ring(n, direction)
    assert driver.round_ring(once, direction) == once


@given(name=drivers, direction=directions, a=entries, b=entries)
def test_round_ring_monotone(name: str, direction: catalog.Direction, a: int, b: int) -> None:
    driver = catalog.nic_driver(name)
    lo, hi = sorted((a, b))
    assert driver.round_ring(lo, direction) <= driver.round_ring(hi, direction)


@given(name=drivers, direction=directions, n=entries)
def test_round_ring_goes_the_rule_s_way(name: str, direction: catalog.Direction, n: int) -> None:
    # Inside [min, max] an up-rounding driver never gives fewer entries than asked, a down-rounding
    # one never more.
    driver = catalog.nic_driver(name)
    limits = driver.limits(direction)
    result = driver.round_ring(n, direction)
    if limits.min <= n <= limits.max:
        if driver.rounding == "down_power_of_two":
            assert result <= n
        else:
            assert result >= n


def test_hv_netvsc_has_no_rings() -> None:
    netvsc = catalog.nic_driver("hv_netvsc")
    assert not netvsc.has_rings
    with pytest.raises(ValueError, match="driver 'hv_netvsc' has no rx ring to size"):
        netvsc.round_ring(1024, "rx")


@pytest.mark.parametrize(
    ("entries", "direction", "error", "message"),
    [
        pytest.param(0, "rx", ValueError, "entries: 0 is below the allowed minimum of 1", id="zero"),
        pytest.param(-5, "tx", ValueError, "entries: -5 is below the allowed minimum of 1", id="negative"),
        pytest.param(1024.0, "rx", TypeError, "entries: expected an int, got float", id="float"),
        pytest.param(True, "rx", TypeError, "entries: expected an int, got bool", id="bool"),
        pytest.param(1024, "both", ValueError, "direction: 'both' is not one of 'rx', 'tx'", id="direction"),
    ],
)
def test_round_ring_rejects_bad_input(entries: object, direction: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        catalog.nic_driver("mana").round_ring(entries, direction)  # type: ignore[arg-type]


def test_unknown_driver_lists_known_ones() -> None:
    with pytest.raises(catalog.UnknownDriver) as info:
        catalog.nic_driver("ixgbevf")
    assert isinstance(info.value, LookupError)
    assert str(info.value) == (
        "unknown NIC driver 'ixgbevf': did you mean igbvf or igb? known drivers are e1000e, ena, hv_netvsc, igb, "
        "igbvf, mana, mlx4_en, mlx5_core, virtio_net"
    )


@pytest.mark.parametrize(("typed", "meant"), [("mlx5", "mlx5_core"), ("mlx4", "mlx4_en"), ("mna", "mana or ena")])
def test_an_unknown_driver_suggests_the_one_meant(typed, meant):
    with pytest.raises(catalog.UnknownDriver) as info:
        catalog.nic_driver(typed)
    assert f"did you mean {meant}?" in str(info.value)


def test_driver_lookup_ignores_case_and_space() -> None:
    assert catalog.nic_driver(" MLX5_CORE ").name == "mlx5_core"


@pytest.mark.parametrize(
    ("driver", "entries", "expected"),
    [
        pytest.param("ena", 8_128, 8_192, id="down-rounding-driver-asked-for-the-next-power"),
        pytest.param("mlx5_core", 8_128, 8_192, id="up-rounding"),
        pytest.param("mlx5_core", 9_000, 8_192, id="clamped-to-max"),
        pytest.param("e1000e", 1_001, 1_008, id="multiple-of-8"),
        pytest.param("ena", 10, 256, id="raised-to-min"),
    ],
)
def test_ring_holding_is_the_smallest_size_the_driver_keeps(driver, entries, expected):
    nic = catalog.nic_driver(driver)
    assert nic.ring_holding(entries, "rx") == expected
    assert nic.round_ring(expected, "rx") == expected


def test_nic_kinds_are_declared_once_and_the_literal_type_matches() -> None:
    """``catalog.Nic`` must stay a Literal for mypy; NIC_KINDS is the declaration everything else derives from."""
    assert get_args(catalog.Nic) == tuple(catalog.NIC_KINDS)


def test_every_nic_kind_is_presented_by_its_cloud_and_nothing_else_is() -> None:
    for cloud in catalog.CLOUDS:
        presented = {it.nic for it in catalog.instance_types(cloud=cloud)}
        assert presented == set(catalog.nic_kinds(cloud)), cloud


def test_every_driver_of_a_cloud_nic_has_ring_facts_in_nic_drivers_json() -> None:
    with_rings = {name for name, driver in catalog.nic_drivers().items() if driver.has_rings}
    for name, kind in catalog.NIC_KINDS.items():
        assert set(kind.drivers) <= with_rings, name
    assert catalog.cloud_drivers() == ("mana", "mlx5_core", "mlx4_en", "ena")
    assert catalog.cloud_drivers("aws") == ("ena",)

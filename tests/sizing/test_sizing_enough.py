"""One decision of "enough" (wirespeed.sizing.queues.Need): `wirespeed size`'s recommendation always passes the policy
rule for the same line rate, a value that holds the stall is never flagged, an unset value is judged as the kernel's
or driver's default, and a recommendation is never below the default nor below a value that already fits (issue 25,
item 6; issue 31, item 6).

The rules run through the real policy pack (tests/fixtures/rules/engine.py), on the ConfigMap wirespeed.manifests
renders, so the property is the one `wirespeed check` and the pack enforce."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures.rules.engine import config_map_with, fixture, remediate, validate
from wirespeed import catalog
from wirespeed.sizing import line_rate, plan_backlog, plan_rings
from wirespeed.sizing.backlog import BACKLOG_MAX, KERNEL_DEFAULT
from wirespeed.sizing.packets import packets_during
from wirespeed.sizing.queues import Need

BACKLOG = "netdev-backlog-minimum"
RINGS = "nic-ring-minimum"
RING_DRIVERS = sorted(name for name, d in catalog.nic_drivers().items() if d.has_rings)

# Line rates as the CLI takes them: decimals of up to three places across the whole accepted range.
rates = st.decimals(min_value=Decimal("0.001"), max_value=Decimal(800), places=3)


def annotated(gbps: Decimal, edit) -> dict:
    config_map = config_map_with(edit)
    config_map["metadata"]["annotations"] = {"wirespeed.io/line-rate-gbps": str(gbps)}
    return config_map


def set_backlog(value):
    def edit(document):
        if value is None:
            document["sysctls"].pop("net.core.netdev_max_backlog")
        else:
            document["sysctls"]["net.core.netdev_max_backlog"] = value

    return edit


def only_rings(driver, rx, tx):
    """A profile whose rings are ``driver``'s alone (None: unset), and that tunes only ``driver``'s interfaces, so the
    other drivers' defaults are not judged beside it."""

    def edit(document):
        ring = {k: v for k, v in (("rx", rx), ("tx", tx)) if v is not None}
        document["rings"] = {driver: ring} if ring else {}
        document["interfaces"]["drivers"] = [driver]

    return edit


# --- size's answer passes the rule, for every line rate ---------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(gbps=rates)
def test_the_backlog_size_recommends_passes_the_rule_for_the_same_line_rate(gbps):
    plan = plan_backlog(gbps)
    assert plan.netdev_max_backlog >= KERNEL_DEFAULT
    assert validate(BACKLOG, "config_map", annotated(gbps, set_backlog(plan.netdev_max_backlog))) == []


@settings(max_examples=60, deadline=None)
@given(gbps=rates, driver=st.sampled_from(RING_DRIVERS))
def test_the_rings_size_recommends_pass_the_rule_for_the_same_line_rate(gbps, driver):
    plan = plan_rings(driver, gbps)
    nic = catalog.nic_driver(driver)
    assert plan.rx >= nic.limits("rx").default
    assert plan.tx >= nic.limits("tx").default
    assert validate(RINGS, "config_map", annotated(gbps, only_rings(driver, plan.rx, plan.tx))) == []


# --- a value that holds the stall is never flagged; one that does not always is -----------------------------------


@settings(max_examples=80, deadline=None)
@given(gbps=rates, value=st.integers(min_value=1, max_value=BACKLOG_MAX))
def test_a_backlog_is_flagged_exactly_when_it_does_not_hold_the_stall(gbps, value):
    packets = packets_during(gbps, 1_500, 4)
    holds = value >= max(packets, KERNEL_DEFAULT)  # the policy's default floor is the kernel default
    messages = validate(BACKLOG, "config_map", annotated(gbps, set_backlog(value)))
    assert (messages == []) == holds, messages


@settings(max_examples=80, deadline=None)
@given(gbps=rates, driver=st.sampled_from(RING_DRIVERS), value=st.integers(min_value=1, max_value=16_384))
def test_a_ring_is_flagged_exactly_when_what_the_driver_runs_does_not_hold_the_stall(gbps, driver, value):
    nic = catalog.nic_driver(driver)
    packets = packets_during(gbps, 1_500, 1)
    limits = nic.limits("rx")
    runs = nic.round_ring(value, "rx")
    holds = runs >= min(packets, limits.max)
    messages = validate(RINGS, "config_map", annotated(gbps, only_rings(driver, value, None)))
    rx = [m for m in messages if f"rings.{driver}.rx " in m]
    if holds and value <= limits.max:
        assert rx == []
    elif not holds:
        assert len(rx) == 1
        assert "below the minimum" in rx[0]


@settings(max_examples=60, deadline=None)
@given(gbps=rates, driver=st.sampled_from(RING_DRIVERS), floor=st.integers(min_value=1, max_value=40_000))
def test_a_recommendation_holds_and_is_never_below_the_default(gbps, driver, floor):
    need = line_rate.ring_need(driver, "rx", gbps, floor=floor)
    assert need is not None
    assert need.holds(need.recommended)
    assert need.recommended >= need.default
    assert need.recommended == need.effective(need.recommended)  # a value the driver keeps as written
    backlog = line_rate.backlog_need(gbps, floor=floor)
    assert backlog.holds(backlog.recommended)
    assert backlog.recommended >= KERNEL_DEFAULT


@given(packets=st.integers(min_value=1, max_value=10**7), value=st.integers(min_value=1, max_value=10**7))
def test_advice_never_talks_a_value_that_fits_down(packets, value):
    need = Need("backlog", packets, KERNEL_DEFAULT, BACKLOG_MAX)
    advised = need.advice(value)
    assert need.holds(advised)
    if need.holds(value):
        assert advised == value
    assert need.advice(None) == need.recommended


# --- the cases issue 25 named, exactly ------------------------------------------------------------------------------


def test_a_backlog_of_1000_holds_the_651_packets_of_2_gbps_and_passes():
    plan = plan_backlog(2)
    assert (plan.packets_in_stall, plan.netdev_max_backlog) == (651, 1_000)
    assert validate(BACKLOG, "config_map", annotated(Decimal(2), set_backlog(1_000))) == []


def test_an_unset_backlog_is_never_below_a_minimum_it_equals():
    # "netCoreNetdevMaxBacklog is unset (the kernel default 1,000), below the minimum 1,000": a 1 Gb/s pool (1 Gb/s
    # for 4 ms is 326 packets) with no backlog runs the kernel default, which holds them.
    props = fixture("aks_agent_pool")
    del props["linuxOSConfig"]
    props["vmSize"] = "Standard_D2s_v3"
    assert line_rate.of_size("Standard_D2s_v3") is not None
    gbps = line_rate.of_size("Standard_D2s_v3").gbps
    assert packets_during(Decimal(str(gbps)), 1_500, 4) <= KERNEL_DEFAULT
    assert validate(BACKLOG, "pool", props) == []


def test_rings_at_5_gbps_are_mlx5s_defaults_and_pass():
    plan = plan_rings("mlx5_core", 5)
    assert (plan.rx, plan.tx) == (1_024, 1_024)
    assert "+-" not in plan.explain()
    assert validate(RINGS, "config_map", annotated(Decimal(5), only_rings("mlx5_core", None, None))) == []


# --- issue 31, item 6: a profile that sets nothing is judged as the defaults it leaves --------------------------


def bare_profile(document):
    for key in list(document):
        if key not in ("name", "schema_version"):
            del document[key]


def test_a_profile_that_sets_no_rings_and_no_sysctls_is_judged_as_the_defaults():
    bare = config_map_with(bare_profile)
    assert json.loads(bare["data"]["profile.json"]) == {"schema_version": 1, "name": "throughput"}
    [backlog] = validate(BACKLOG, "config_map", bare)
    assert backlog.startswith(
        "profile 'throughput' (data['profile.json']): sysctls['net.core.netdev_max_backlog'] is unset (the kernel "
        "default 1,000), below the minimum 8,128 for an assumed line rate of 25 Gb/s"
    )
    rings = validate(RINGS, "config_map", bare)
    # RX and TX of every cloud driver at its default, but ENA's TX: its max, 1,024, is its default.
    unset = sorted(m.split(": ")[1].split(" is unset")[0] for m in rings)
    assert unset == [
        "rings.ena.rx",
        "rings.mana.rx",
        "rings.mana.tx",
        "rings.mlx4_en.rx",
        "rings.mlx4_en.tx",
        "rings.mlx5_core.rx",
        "rings.mlx5_core.tx",
    ]
    mana_rx = next(m for m in rings if "rings.mana.rx" in m)
    assert "rings.mana.rx is unset (the driver default 512), below the minimum 2,032 for" in mana_rx
    assert "Set rings.mana.rx to 2,048 (any value from 2,032 passes)" in mana_rx


def test_an_absent_ring_is_judged_as_the_same_ring_written_as_its_default():
    for driver in ("mlx5_core", "ena", "mana"):
        nic = catalog.nic_driver(driver)
        default, tx = nic.limits("rx").default, nic.limits("tx").max  # TX at its max: only RX is judged
        absent = validate(RINGS, "config_map", annotated(Decimal(25), only_rings(driver, None, tx)))
        explicit = validate(RINGS, "config_map", annotated(Decimal(25), only_rings(driver, default, tx)))
        assert len(absent) == len(explicit) == 1
        assert absent[0].replace(f"is unset (the driver default {default:,})", f"is {default:,}") == explicit[0]


def test_remediation_writes_the_rings_and_backlog_a_bare_profile_leaves_unset():
    fixed_backlog = remediate(BACKLOG, "config_map", config_map_with(bare_profile))
    assert json.loads(fixed_backlog["data"]["profile.json"])["sysctls"] == {"net.core.netdev_max_backlog": 8192}
    fixed_rings = remediate(RINGS, "config_map", config_map_with(bare_profile))
    document = json.loads(fixed_rings["data"]["profile.json"])
    assert document["rings"]["mlx5_core"] == {"rx": 2048, "tx": 2048}
    assert document["rings"]["ena"] == {"rx": 2048}  # ENA's TX default is already its max
    assert validate(RINGS, "config_map", fixed_rings) == []


@pytest.mark.parametrize("driver", ["ena", "mlx5_core"])
def test_a_profile_limited_to_one_driver_is_judged_for_that_driver_only(driver):
    messages = validate(RINGS, "config_map", annotated(Decimal(25), only_rings(driver, None, None)))
    assert messages
    assert all(f"rings.{driver}." in m for m in messages)

"""The NodePool ceiling arithmetic of wirespeed.sizing.nap in process: limits.cpu as Kubernetes writes it, the
disruption budget's rounding, the capacity's JSON and prose, and the limits of the pool the SNAT rule sizes."""

from __future__ import annotations

from fractions import Fraction

import pytest

from wirespeed.sizing import SizingError
from wirespeed.sizing.nap import NapCapacity, budget_nodes, cpu_quantity

SIZES = ("Standard_D4s_v5", "Standard_D4as_v5", "Standard_F4s_v2", "Standard_D4ds_v5")


@pytest.mark.parametrize(
    ("value", "vcpus"),
    [
        pytest.param(640, Fraction(640), id="int"),
        pytest.param(1.5, Fraction(3, 2), id="float"),
        pytest.param(0, Fraction(0), id="zero-int"),
        pytest.param(0.5, Fraction(1, 2), id="half-a-cpu"),
        pytest.param("640000m", Fraction(640), id="milli"),
        pytest.param(" 1.5k ", Fraction(1500), id="kilo-with-spaces"),
        pytest.param("2M", Fraction(2_000_000), id="mega"),
        pytest.param(-1, None, id="negative"),
        pytest.param(True, None, id="bool"),
        pytest.param(float("nan"), None, id="nan"),
        # A YAML `.inf`: not a limit wirespeed can size (it used to escape as OverflowError).
        pytest.param(float("inf"), None, id="infinity"),
        pytest.param("1Ki", None, id="binary-suffix"),
        pytest.param("-2", None, id="negative-text"),
        pytest.param([640], None, id="list"),
    ],
)
def test_cpu_quantity(value, vcpus):
    assert cpu_quantity(value) == vcpus


@pytest.mark.parametrize(
    ("budget", "nodes", "disrupted"),
    [
        pytest.param("10%", 160, 16, id="ten-percent"),
        pytest.param("10%", 161, 17, id="percent-rounds-up"),
        # 160 x 100% = 160 exactly: a divisor a little off (101) would give 159.
        pytest.param("100%", 160, 160, id="all"),
        pytest.param("0%", 160, 0, id="none"),
        pytest.param("5", 3, 3, id="count-capped-at-the-nodes"),
        pytest.param("5", 160, 5, id="count"),
    ],
)
def test_budget_nodes(budget, nodes, disrupted):
    assert budget_nodes(budget, nodes) == disrupted


def test_capacity_json_and_explain_in_full():
    # 640 vCPUs / 4 = 160 nodes; 10% of 160 = 16 replacements; 176 at peak. Four sizes: the prose names three.
    capacity = NapCapacity("burst", Fraction(640), 4, SIZES)
    assert capacity.to_json() == {
        "name": "burst",
        "cpu_limit": "640",
        "smallest_vcpu": 4,
        "smallest_sizes": list(SIZES),
        "max_nodes": 160,
        "disruption_budget": "10%",
        "surge_nodes": 16,
        "nodes_at_max": 176,
    }
    assert capacity.explain() == (
        "NodePool burst: limits.cpu 640 / 4 vCPU (the smallest size its requirements admit: Standard_D4s_v5, "
        "Standard_D4as_v5, Standard_F4s_v2 ...) = 160 node(s) at most, + disruption budget 10% = 16 replacement "
        "node(s) launched before the nodes they replace are gone: 176 node(s) at peak."
    )


def test_capacity_explain_with_three_sizes_has_no_ellipsis_and_a_fractional_limit():
    # 10.5 vCPUs / 2 = 5 nodes (floor); budget 2 nodes; 7 at peak.
    capacity = NapCapacity("small", Fraction(21, 2), 2, SIZES[:3], budget="2")
    assert capacity.explain() == (
        "NodePool small: limits.cpu 10.5 / 2 vCPU (the smallest size its requirements admit: Standard_D4s_v5, "
        "Standard_D4as_v5, Standard_F4s_v2) = 5 node(s) at most, + disruption budget 2 = 2 replacement node(s) "
        "launched before the nodes they replace are gone: 7 node(s) at peak."
    )
    assert capacity.to_json()["cpu_limit"] == "10.5"


def test_sizing_pool_at_one_node_and_at_the_per_pool_limit():
    one = NapCapacity("one", Fraction(4), 4, SIZES).sizing_pool()
    assert (one.max_count, one.max_surge, one.surge_is_percent, one.name) == (1, 1, False, "one")
    # 1,000 nodes exactly (azure_lb.MAX_POOL_NODES) is still sized; 10% of it = 100.
    most = NapCapacity("most", Fraction(4_000), 4, SIZES).sizing_pool()
    assert (most.max_count, most.surge_nodes, most.nodes_at_max, most.name) == (1_000, 100, 1_100, "most")


def test_sizing_pool_refuses_a_limit_below_one_node_naming_the_field_and_value():
    with pytest.raises(SizingError) as info:
        NapCapacity("tiny", Fraction(7, 2), 4, SIZES).sizing_pool()
    assert str(info.value) == (
        "NodePool 'tiny'.limits.cpu: '3.5' is not allowed: at least 4 (the smallest admitted size, "
        "Standard_D4s_v5): below it the pool can launch no node"
    )


def test_sizing_pool_refuses_more_than_1000_nodes_with_the_limit_as_written():
    # "1M" CPUs: written back as 1000000, not 1e+06.
    with pytest.raises(SizingError) as info:
        NapCapacity("huge", Fraction(10**6), 4, SIZES).sizing_pool()
    assert str(info.value) == (
        "NodePool 'huge'.limits.cpu: '1000000' is not allowed: at most 4,000 (1,000 nodes of the smallest "
        "admitted size, 4 vCPU): 250,000 nodes is more than wirespeed sizes per pool; lower limits.cpu or admit "
        "only larger sizes"
    )
    with pytest.raises(SizingError, match=r"^NodePool 'over'.limits.cpu: '4004' is not allowed: at most 4,000 "):
        NapCapacity("over", Fraction(4_004), 4, SIZES).sizing_pool()

"""Azure Load Balancer SNAT sizing: the AKS docs' examples, every dynamic-default boundary, and invariants."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirespeed.sizing import InfeasibleError, Pool, SizingError, Workload, plan_load_balancer
from wirespeed.sizing.azure_lb import (
    DYNAMIC_DEFAULT_TABLE,
    PORTS_PER_IP,
    MeasuredPeak,
    dynamic_default_ports,
    next_halving_node_count,
    surge_value,
)


def test_aks_docs_worked_example_fits():
    # learn.microsoft.com/azure/aks/configure-load-balancer-standard: 4,000 ports, max 100 nodes + 2 surge, 7 IPs.
    plan = plan_load_balancer([Pool(100, 2, surge_is_percent=False)], ports=4_000, outbound_ips=7)
    assert (plan.ports_required, plan.ports_available, plan.feasible) == (408_000, 448_000, True)
    assert plan.nodes_at_max == 102
    assert plan.max_nodes_supported == 112


def test_aks_docs_failure_example_reports_required_and_available():
    # "Total node count 9 requires 72000 ports but only 64000 ... given 1 outbound public IPs"
    plan = plan_load_balancer([Pool(9, 0, surge_is_percent=False)], ports=8_000, outbound_ips=1)
    assert (plan.ports_required, plan.ports_available, plan.feasible) == (72_000, 64_000, False)
    assert "short by 8,000 ports" in plan.explain()


def test_minimum_ips_for_the_failure_example_is_two():
    plan = plan_load_balancer([Pool(9, 0, surge_is_percent=False)], ports=8_000)
    assert plan.outbound_ips == 2


@pytest.mark.parametrize(
    ("nodes", "ports", "halves_at"),
    [
        pytest.param(1, 1_024, 51, id="1-smallest"),
        pytest.param(50, 1_024, 51, id="50-last-of-1024"),
        pytest.param(51, 512, 101, id="51-first-of-512"),
        pytest.param(100, 512, 101, id="100-last-of-512"),
        pytest.param(101, 256, 201, id="101-first-of-256"),
        pytest.param(200, 256, 201, id="200-last-of-256"),
        pytest.param(201, 128, 401, id="201-first-of-128"),
        pytest.param(400, 128, 401, id="400-last-of-128"),
        pytest.param(401, 64, 801, id="401-first-of-64"),
        pytest.param(800, 64, 801, id="800-last-of-64"),
        pytest.param(801, 32, None, id="801-first-of-32"),
        pytest.param(1_000, 32, None, id="1000-largest"),
    ],
)
def test_dynamic_default_boundaries(nodes, ports, halves_at):
    assert dynamic_default_ports(nodes) == ports
    assert next_halving_node_count(nodes) == halves_at


def test_dynamic_default_rejects_pool_size_outside_table():
    with pytest.raises(SizingError, match=r"^nodes: 1001 is not allowed: must be a whole number between 1 and 1,000$"):
        dynamic_default_ports(1_001)


@pytest.mark.parametrize(
    ("spec", "max_count", "surge_nodes"),
    [
        pytest.param("100", 100, 10, id="default-10-percent"),
        pytest.param("100:2", 100, 2, id="count"),
        pytest.param("100:10%", 100, 10, id="percent"),
        pytest.param("3:10%", 3, 1, id="percent-rounds-up"),
        pytest.param("5:0", 5, 0, id="no-surge"),
        pytest.param(" 20:33% ", 20, 7, id="whitespace-and-fraction"),
    ],
)
def test_pool_spec(spec, max_count, surge_nodes):
    pool = Pool.parse(spec)
    assert (pool.max_count, pool.surge_nodes) == (max_count, surge_nodes)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            "abc",
            "--pool: 'abc' is not allowed: MAX 'abc' must be a whole number between 1 and 1,000 (AKS nodes per pool): "
            "MAX[:SURGE], e.g. 100, 100:2 or 100:10%",
            id="not-a-number",
        ),
        pytest.param(
            "10:x",
            "--pool: '10:x' is not allowed: SURGE 'x' must be a node count or a percent, e.g. 2 or 10%",
            id="bad-surge",
        ),
        pytest.param(
            "0",
            "--pool: '0' is not allowed: MAX must be a whole number between 1 and 1,000 (AKS nodes per pool)",
            id="zero",
        ),
        pytest.param(
            "1001",
            "--pool: '1001' is not allowed: MAX must be a whole number between 1 and 1,000 (AKS nodes per pool)",
            id="too-many",
        ),
        pytest.param(
            "10:150%", "--pool: '10:150%' is not allowed: SURGE 150% must be between 0% and 100%", id="percent>100"
        ),
        pytest.param(
            "10:200%", "--pool: '10:200%' is not allowed: SURGE 200% must be between 0% and 100%", id="200-percent"
        ),
        pytest.param(
            "10:",
            "--pool: '10:' is not allowed: SURGE after ':' is empty: give a node count or a percent, e.g. 2 or 10%",
            id="empty-surge",
        ),
        pytest.param(
            "10:1001", "--pool: '10:1001' is not allowed: SURGE must be between 0 and 1,000 nodes", id="surge>1000"
        ),
        pytest.param(
            "10:1/3%",
            "--pool: '10:1/3%' is not allowed: SURGE '1/3%' must be a node count or a percent, e.g. 2 or 10%",
            id="fraction-percent",
        ),
        pytest.param(
            "10:nan%",
            "--pool: '10:nan%' is not allowed: SURGE 'nan%' must be a node count or a percent, e.g. 2 or 10%",
            id="nan-percent",
        ),
        pytest.param(
            "60:2:throughput",
            "--pool: '60:2:throughput' is not allowed: a third field, 'throughput': --pool has only two, MAX[:SURGE], "
            "e.g. 100, 100:2 or 100:10%",
            id="third-field",
        ),
        pytest.param(
            "apps:Standard_D16s_v6:3:60",
            "--pool: 'apps:Standard_D16s_v6:3:60' is not allowed: this is the stack config's pool format "
            "NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]] (the wirespeed:pools and wirespeed:systemPool keys of Pulumi.yaml "
            "or a Pulumi.<stack>.yaml, which `wirespeed plan DIR` reads); --pool takes only its MAX[:SURGE]: --pool 60",
            id="stack-config-format",
        ),
        pytest.param(
            "apps:Standard_D16s_v6:3:60:10%:throughput",
            "--pool: 'apps:Standard_D16s_v6:3:60:10%:throughput' is not allowed: this is the stack config's pool "
            "format "
            "NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]] (the wirespeed:pools and wirespeed:systemPool keys of Pulumi.yaml "
            "or a Pulumi.<stack>.yaml, which `wirespeed plan DIR` reads); --pool takes only its MAX[:SURGE]: "
            "--pool 60:10%",
            id="stack-config-format-with-surge",
        ),
        pytest.param(
            "-5",
            "--pool: '-5' is not allowed: MAX '-5' must be a whole number between 1 and 1,000 (AKS nodes per pool): "
            "MAX[:SURGE], e.g. 100, 100:2 or 100:10%",
            id="negative",
        ),
    ],
)
def test_pool_spec_errors_name_field_value_and_range(spec, message):
    with pytest.raises(SizingError) as info:
        Pool.parse(spec)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("spec", "name", "message"),
    [
        pytest.param(
            "10:150%",
            "system",
            "pool 'system': '10:150%' is not allowed: max_surge 150% must be between 0% and 100%",
            id="named-pool",
        ),
        pytest.param(
            "10:x",
            "user",
            "pool 'user': '10:x' is not allowed: max_surge 'x' must be a node count or a percent, e.g. 2 or 10%",
            id="named-bad-surge",
        ),
    ],
)
def test_pool_spec_errors_name_the_named_pool(spec, name, message):
    with pytest.raises(SizingError) as info:
        Pool.parse(spec, name=name)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param(
            {"max_count": 10, "max_surge": 200.0},
            "pool.max_surge: '200%' is not allowed: must be between 0% and 100%",
            id="percent-shown-as-percent",
        ),
        pytest.param(
            {"max_count": 10, "max_surge": float("nan"), "name": "gpu"},
            "pool 'gpu'.max_surge: nan is not allowed: must be between 0% and 100%",
            id="nan-percent",
        ),
        pytest.param(
            {"max_count": 0},
            "pool.max_count: 0 is not allowed: must be a whole number between 1 and 1,000",
            id="zero-nodes",
        ),
    ],
)
def test_pool_constructor_errors(kwargs, message):
    with pytest.raises(SizingError) as info:
        Pool(**kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("spec", "surge_nodes", "shown"),
    [
        pytest.param("250:64.4%", 161, "250 max + 64.4% = 161 surge", id="decimal-percent-exact"),
        pytest.param("1000:0.1%", 1, "1,000 max + 0.1% = 1 surge", id="exactly-one-node"),
        pytest.param("30:10%", 3, "30 max + 10% = 3 surge", id="exactly-three-nodes"),
        pytest.param("7:100%", 7, "7 max + 100% = 7 surge", id="hundred-percent"),
    ],
)
def test_percent_surge_is_exact_and_shown_as_written(spec, surge_nodes, shown):
    pool = Pool.parse(spec)
    assert pool.surge_nodes == surge_nodes
    assert pool.describe() == shown


def test_workload_ports_are_exact_for_decimal_rates():
    # 1.36 x 240 x 1.25 is exactly 408 (a multiple of 8); float arithmetic gives 408.00000000000006 -> 416.
    workload = Workload(1.36)
    assert workload.ports_needed == 408
    plan = plan_load_balancer(
        [Pool(100, 0, surge_is_percent=False), Pool(1_000, 0, surge_is_percent=False)], workload=workload
    )
    assert plan.allocated_outbound_ports == 408
    assert plan.ports_from == "1.36 new connections/s x 240 s held x 1.25 headroom = 408, a multiple of 8"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param(
            {"connections_per_second": float("nan")},
            "connections_per_second: nan is not allowed: must be between 0.001 and 1,000,000",
            id="nan-rate",
        ),
        pytest.param(
            {"connections_per_second": 1, "hold_seconds": float("inf")},
            "hold_seconds: inf is not allowed: must be between 1 and 3,600",
            id="inf-hold",
        ),
        pytest.param(
            {"connections_per_second": 1, "headroom": 0.5},
            "headroom: 0.5 is not allowed: must be between 1 and 10",
            id="low-headroom",
        ),
    ],
)
def test_workload_bad_input(kwargs, message):
    with pytest.raises(SizingError) as info:
        Workload(**kwargs)
    assert str(info.value) == message


def test_above_1000_nodes_the_dynamic_default_is_undocumented_not_extrapolated():
    plan = plan_load_balancer([Pool(1_000, 0, surge_is_percent=False), Pool(900)], ports=64)
    assert plan.nodes_at_max == 1_990
    assert plan.dynamic_default_ports is None
    assert plan.to_json()["dynamic_default_ports"] is None
    assert plan.to_json()["dynamic_default_halves_at_nodes"] is None
    assert (
        "Azure documents its default only up to 1,000 backend instances, so at 1,990 nodes it is undocumented"
        in plan.explain()
    )
    assert "below the" not in plan.explain()  # no comparison against an invented default


def test_above_1000_nodes_a_workload_is_not_floored_by_an_invented_default():
    pools = [Pool(1_000, 0, surge_is_percent=False), Pool(100, 0, surge_is_percent=False)]
    plan = plan_load_balancer(pools, workload=Workload(0.1, headroom=1))
    assert plan.allocated_outbound_ports == 24  # 0.1 x 240 = 24, already a multiple of 8
    assert "raised to" not in plan.ports_from


def test_more_than_5000_nodes_per_cluster_is_refused():
    pools = [Pool(1_000, 0, surge_is_percent=False)] * 5 + [Pool(1, 0, surge_is_percent=False)]
    with pytest.raises(SizingError) as info:
        plan_load_balancer(pools, ports=8)
    assert str(info.value) == (
        "pools: '1,000 + 1,000 + 1,000 + 1,000 + 1,000 + 1 = 5,001 nodes at maxCount' is not allowed: "
        "AKS allows at most 5,000 nodes per cluster across all node pools"
    )


def test_surge_beyond_5000_nodes_is_a_warning():
    plan = plan_load_balancer([Pool(1_000, 1, surge_is_percent=False)] * 5, ports=8)
    assert plan.nodes_at_max == 5_005
    assert (
        "Warning: 5,005 nodes with upgrade surge exceed AKS's 5,000 nodes per cluster: an upgrade at full scale "
        "cannot surge every pool at once." in plan.notes
    )


def test_explicit_ports_below_the_default_warn():
    plan = plan_load_balancer([Pool(10)], ports=512)
    assert plan.allocated_outbound_ports == 512
    assert plan.dynamic_default_ports == 1_024
    assert "Warning: 512 is below the 1,024 Azure would allocate by default at this size." in plan.notes


def test_workload_ports_from_littles_law_with_headroom():
    # 20 new conns/s held 240 s = 4,800 in use; x1.25 = 6,000 (already a multiple of 8).
    plan = plan_load_balancer([Pool(40)], workload=Workload(20))
    assert plan.allocated_outbound_ports == 6_000
    assert plan.nodes_at_max == 44
    assert plan.outbound_ips == math.ceil(6_000 * 44 / PORTS_PER_IP) == 5


def test_workload_never_goes_below_the_dynamic_default():
    plan = plan_load_balancer([Pool(10)], workload=Workload(0.5))
    assert plan.allocated_outbound_ports == 1_024
    assert "raised to the 1,024 Azure's default would give" in plan.ports_from


def test_ports_round_up_to_multiple_of_eight():
    plan = plan_load_balancer([Pool(10)], workload=Workload(5, hold_seconds=241, headroom=1))
    assert plan.allocated_outbound_ports == 1_208  # 1,205 -> 1,208
    assert (
        plan.ports_from == "5 new connections/s x 241 s held x 1 headroom = 1,205, rounded up to 1,208, a multiple of 8"
    )


def test_explicit_ports_must_be_multiple_of_eight():
    with pytest.raises(SizingError) as info:
        plan_load_balancer([Pool(10)], ports=1_001)
    assert str(info.value) == "ports: 1001 is not allowed: must be a multiple of 8 between 8 and 64,000"


def test_more_than_100_ips_is_infeasible_and_points_to_nat_gateway():
    with pytest.raises(InfeasibleError) as info:
        plan_load_balancer([Pool(1_000, 0, surge_is_percent=False)], ports=8_000)
    assert info.value.required == 8_000_000
    assert info.value.available == 6_400_000
    assert "NAT gateway" in str(info.value)


def test_more_than_64000_ports_per_node_is_infeasible():
    with pytest.raises(InfeasibleError, match=r"ports per node: 120,000 required but at most 64,000"):
        plan_load_balancer([Pool(2)], workload=Workload(400, headroom=1.25))


def test_exactly_one_of_ports_or_workload():
    with pytest.raises(SizingError, match="exactly one"):
        plan_load_balancer([Pool(2)], ports=1_024, workload=Workload(1))
    with pytest.raises(SizingError, match="exactly one"):
        plan_load_balancer([Pool(2)])


def test_surge_of_every_pool_counts():
    plan = plan_load_balancer([Pool(100, 2, surge_is_percent=False), Pool(50)], ports=1_024)
    assert plan.nodes_at_max == 102 + 55


pools_strategy = st.lists(
    st.builds(Pool, st.integers(1, 300), st.integers(0, 20), st.just(False)), min_size=1, max_size=4
)


@given(pools=pools_strategy, cps=st.floats(0.01, 50))
def test_ip_count_is_minimal_and_sufficient(pools, cps):
    try:
        plan = plan_load_balancer(pools, workload=Workload(cps))
    except InfeasibleError:
        return
    assert plan.ports_required <= plan.outbound_ips * PORTS_PER_IP
    assert plan.outbound_ips == 1 or plan.ports_required > (plan.outbound_ips - 1) * PORTS_PER_IP
    assert plan.allocated_outbound_ports % 8 == 0
    assert plan.allocated_outbound_ports > 0
    nodes = plan.nodes_at_max
    if nodes <= DYNAMIC_DEFAULT_TABLE[-1][0]:
        assert plan.allocated_outbound_ports >= dynamic_default_ports(nodes)


@given(pools=pools_strategy, low=st.floats(0.01, 20), extra=st.floats(0, 20))
def test_more_load_never_needs_fewer_ports_or_ips(pools, low, extra):
    try:
        a = plan_load_balancer(pools, workload=Workload(low))
        b = plan_load_balancer(pools, workload=Workload(low + extra))
    except InfeasibleError:
        return
    assert b.allocated_outbound_ports >= a.allocated_outbound_ports
    assert b.outbound_ips >= a.outbound_ips


@given(max_count=st.integers(1, 900), more=st.integers(0, 99))
def test_more_nodes_never_need_fewer_ips(max_count, more):
    a = plan_load_balancer([Pool(max_count, 0, surge_is_percent=False)], ports=1_024)
    b = plan_load_balancer([Pool(max_count + more, 0, surge_is_percent=False)], ports=1_024)
    assert b.outbound_ips >= a.outbound_ips


# --- what `size azure-lb` prints, exactly: the JSON contract (docs/cli-json.md) and the explanation ---------------


def test_json_of_an_explicit_plan_is_the_documented_contract():
    """The AKS docs' worked example with the IPs fixed: every key of docs/cli-json.md, whole numbers as JSON ints
    even when the pools came in as floats (as Pulumi sends numbers)."""
    from test_cli_json_keys import DOCUMENTED

    plan = plan_load_balancer([Pool(100.0, 2.0, surge_is_percent=False)], ports=4000, outbound_ips=7)
    assert plan.to_json() == {
        "allocated_outbound_ports": 4000,
        "outbound_ips": 7,
        "outbound_ips_fixed": True,
        "nodes_at_max": 102,
        "ports_required": 408_000,
        "ports_available": 448_000,
        "headroom_ports": 40_000,
        "max_nodes_supported": 112,
        "feasible": True,
        "dynamic_default_ports": 256,
        "dynamic_default_halves_at_nodes": 201,
        "ports_from": "given explicitly",
        "measured_peak": None,
        "pools": [{"max_count": 100, "surge_nodes": 2, "nodes_at_max": 102}],
    }
    assert set(plan.to_json()) == DOCUMENTED["size azure-lb"][0]
    assert '"pools": [{"max_count": 100, "surge_nodes": 2, "nodes_at_max": 102}]' in json.dumps(plan.to_json())


def test_json_of_a_measured_plan_says_where_the_peak_came_from_and_that_the_ips_were_chosen():
    plan = plan_load_balancer([Pool.parse("100:2")], measured=MeasuredPeak(1000, "prometheus prod, 7d", 1.25))
    data = plan.to_json()
    assert data["measured_peak"] == {"ports_in_use": 1000, "source": "prometheus prod, 7d", "headroom_percent": 25}
    assert (data["outbound_ips"], data["outbound_ips_fixed"]) == (3, False)
    assert data["ports_from"] == (
        "from a measured peak of 1,000 (prometheus prod, 7d) + 25% headroom = 1,250, rounded up to 1,256, a multiple "
        "of 8"
    )


def test_explanation_of_a_plan_that_fits():
    plan = plan_load_balancer([Pool.parse("60:10%"), Pool.parse("5:1")], workload=Workload(12))
    assert plan.explain() == (
        "Nodes at peak: 72 (60 max + 10% = 6 surge; 5 max + 1 surge). AKS counts maxCount plus upgrade surge of "
        "every pool.\n"
        "Ports per node: 3,600 (12 new connections/s x 240 s held x 1.25 headroom = 3,600, a multiple of 8).\n"
        "Capacity rule: 3,600 ports x 72 nodes = 259,200 required; 5 IP(s) x 64,000 = 320,000 available.\n"
        "Fits with 60,800 ports spare: room for 88 nodes before AKS rejects the profile "
        "(InvalidLoadBalancerProfileAllocatedOutboundPorts).\n"
        "Leaving allocatedOutboundPorts at 0 would give 512 ports per node at 72 nodes, and halves again when the "
        "backend pool reaches 101 nodes; an explicit value never shrinks as the pool grows.\n"
        "5 IPs are needed for capacity; per-node ports are what protect a busy node."
    )


def test_explanation_of_a_plan_that_does_not_fit_in_the_tables_last_bracket():
    plan = plan_load_balancer([Pool.parse("900:0")], ports=80, outbound_ips=1)
    assert plan.explain() == (
        "Nodes at peak: 900 (900 max + 0 surge). AKS counts maxCount plus upgrade surge of every pool.\n"
        "Ports per node: 80 (given explicitly).\n"
        "Capacity rule: 80 ports x 900 nodes = 72,000 required; 1 IP(s) x 64,000 = 64,000 available.\n"
        "Does NOT fit: short by 8,000 ports. AKS will reject it with "
        "InvalidLoadBalancerProfileAllocatedOutboundPorts. To fit, give it at least 2 outbound IPs "
        "(managedOutboundIPs.count), lower allocatedOutboundPorts to at most 64 or keep the pools to at most 800 nodes "
        "at maxCount plus surge in all (it stops fitting at 801).\n"
        "Leaving allocatedOutboundPorts at 0 would give 32 ports per node at 900 nodes; an explicit value never "
        "shrinks as the pool grows."
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param(
            lambda: plan_load_balancer([], ports=8),
            "pools: [] is not allowed: at least one pool (MAX[:SURGE])",
            id="no-pools",
        ),
        pytest.param(
            lambda: plan_load_balancer([Pool(10)]),
            "ports: None is not allowed: give exactly one of an explicit port count, a workload or a measured peak",
            id="neither",
        ),
        pytest.param(
            lambda: plan_load_balancer([Pool(10)], ports=8, workload=Workload(1)),
            "ports: 8 is not allowed: give exactly one of an explicit port count, a workload or a measured peak",
            id="both",
        ),
        pytest.param(
            lambda: plan_load_balancer([Pool(10)], ports=4),
            "ports: 4 is not allowed: must be a whole number between 8 and 64,000",
            id="ports-below-8",
        ),
        pytest.param(
            lambda: plan_load_balancer([Pool(10)], ports=8, outbound_ips=0),
            "outbound_ips: 0 is not allowed: must be a whole number between 1 and 100",
            id="no-ips",
        ),
        pytest.param(lambda: Pool(10, 250), "pool.max_surge: '250%' is not allowed: must be between 0% and 100%"),
        pytest.param(lambda: Pool(10, "abc"), "pool.max_surge: 'abc' is not allowed: must be between 0% and 100%"),
        pytest.param(lambda: Pool(10, True), "pool.max_surge: True is not allowed: must be between 0% and 100%"),
        pytest.param(
            lambda: Pool(10, 2.5, surge_is_percent=False, name="web"),
            "pool 'web'.max_surge: 2.5 is not allowed: must be a whole number between 0 and 1,000",
        ),
        pytest.param(
            lambda: Pool.parse("0", name="web"),
            "pool 'web': '0' is not allowed: max_count must be a whole number between 1 and 1,000 (AKS nodes per pool)",
        ),
    ],
)
def test_errors_name_the_field_the_value_and_what_is_allowed(call, message):
    with pytest.raises(SizingError) as error:
        call()
    assert str(error.value) == message


def test_a_workload_needing_more_than_64000_ports_per_node_is_infeasible_and_says_what_to_do():
    with pytest.raises(InfeasibleError) as error:
        plan_load_balancer([Pool(10)], workload=Workload(300))
    assert (error.value.required, error.value.available) == (90_000, 64_000)
    assert str(error.value) == (
        "ports per node: 90,000 required but at most 64,000 are allowed; spread the calls over more destinations or "
        "connection-pool them, or use a NAT gateway (outboundType managedNATGateway: ports are allocated on demand, "
        "64,512 per IP)"
    )
    # Exactly 64,000 is allowed: 200 connections/s x 256 s held x 1.25 headroom.
    plan = plan_load_balancer([Pool(1)], workload=Workload(200, hold_seconds=256))
    assert plan.allocated_outbound_ports == 64_000


def test_more_ips_than_azure_allows_is_infeasible_with_the_numbers():
    with pytest.raises(InfeasibleError) as error:
        plan_load_balancer([Pool(1000)] * 5, ports=64_000)
    assert (error.value.required, error.value.available) == (352_000_000, 6_400_000)
    assert str(error.value) == (
        "outbound IPs: 352,000,000 ports required but 100 IPs give at most 6,400,000; use a NAT gateway "
        "(outboundType managedNATGateway) or fewer ports per node"
    )


def test_workload_ports_say_how_they_were_rounded():
    # 1.3 x 240 x 1.25 = 390 exactly: rounded up to 392 (a multiple of 8), then raised to Azure's 1,024 for 6 nodes.
    plan = plan_load_balancer([Pool.parse("5:1")], workload=Workload(Decimal("1.3")))
    assert plan.ports_from == (
        "1.3 new connections/s x 240 s held x 1.25 headroom = 390, rounded up to 392, a multiple of 8, raised to the "
        "1,024 Azure's default would give so nothing regresses"
    )
    # 1.001 x 240 x 1.25 = 300.3: a whole port more, then a multiple of 8; beyond 1,000 nodes no default to raise to.
    plan = plan_load_balancer([Pool.parse("1000:1")], workload=Workload(Decimal("1.001")))
    assert plan.ports_from == (
        "1.001 new connections/s x 240 s held x 1.25 headroom = 301 (rounded up to a whole port), rounded up to 304, "
        "a multiple of 8"
    )
    # Exactly Azure's default: nothing to raise.
    plan = plan_load_balancer([Pool.parse("5:1")], workload=Workload(4, hold_seconds=256, headroom=1))
    assert plan.allocated_outbound_ports == 1024
    assert not plan.ports_from.endswith("so nothing regresses")


def test_a_parsed_pool_is_the_pool_its_fields_describe():
    assert Pool.parse("100:2") == Pool(100, 2, surge_is_percent=False)
    assert Pool.parse("100:10%", name="web") == Pool(100, 10, surge_is_percent=True, name="web")
    assert Pool.parse("100", name="web") == Pool(100, name="web")


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("10%", (Fraction(10), True)),
        ("33.3%", (Fraction(333, 10), True)),
        ("2", (Fraction(2), False)),
        ("0", (Fraction(0), False)),
        *((refused, None) for refused in ("1e1%", "nan%", "-1", "1_0", "%", "10.%", ".5%", "10%%", "", "2 ")),
    ],
)
def test_surge_values_are_read_only_in_the_forms_aks_accepts(text, parsed):
    assert surge_value(text) == parsed


SOURCE_ALLOWED = (
    "where the peak was measured, one line of at most 512 characters (the source line `wirespeed size ... "
    "--from-prometheus` prints)"
)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (0, "x"),
            "measured_peak_ports_per_node: 0 is not allowed: must be a whole number between 1 and 1,000,000,000",
        ),
        (
            (10**9 + 1, "x"),
            "measured_peak_ports_per_node: 1000000001 is not allowed: must be a whole number between 1 and "
            "1,000,000,000",
        ),
        ((10, ""), f"measured_from: '' is not allowed: {SOURCE_ALLOWED}"),
        ((10, " "), f"measured_from: ' ' is not allowed: {SOURCE_ALLOWED}"),
        ((10, "a\nb"), f"measured_from: 'a\\nb' is not allowed: {SOURCE_ALLOWED}"),
        ((10, 5), f"measured_from: 5 is not allowed: {SOURCE_ALLOWED}"),
        ((10, "x" * 513), f"measured_from: '{'x' * 513}' is not allowed: {SOURCE_ALLOWED}"),
        ((10, "x", 0.5), "headroom: 0.5 is not allowed: must be between 1 and 10"),
        ((10, "x", 11), "headroom: 11 is not allowed: must be between 1 and 10"),
    ],
)
def test_a_measured_peak_names_the_field_it_refuses(args, message):
    with pytest.raises(SizingError) as error:
        MeasuredPeak(*args)
    assert str(error.value) == message


def test_a_measured_peak_keeps_its_source_trimmed_and_its_count_whole():
    peak = MeasuredPeak(1000.0, "  prometheus prod, 7d  ", 1)
    assert (peak.ports_in_use, type(peak.ports_in_use), peak.source) == (1000, int, "prometheus prod, 7d")
    assert MeasuredPeak(10**9, "x" * 512).source == "x" * 512


def test_a_plan_carries_the_workload_it_was_sized_from():
    """The cluster plan's JSON shows (and rechecks) the derivation from it (wirespeed.azure.outbound)."""
    workload = Workload(12)
    assert plan_load_balancer([Pool(10)], workload=workload).workload is workload
    assert plan_load_balancer([Pool(10)], ports=1024).workload is None


def test_a_node_count_surge_sent_as_a_float_is_shown_as_a_whole_number():
    """Pulumi sends every number as a float: maxSurge 2.0 is AKS's "2", in the hint a rule prints too."""
    pool = Pool(100.0, 2.0, surge_is_percent=False)
    assert (pool.max_surge, type(pool.max_surge), pool.surge_text()) == (2, int, "2")

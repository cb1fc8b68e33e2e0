"""Sizing results equal an independent exact computation, for inputs written as decimals.

The CLI hands the sizing engine floats parsed from what the user typed (``--connections-per-second 1.36``).
Each property below generates that text as an integer and a number of decimal places, computes the expected
result here with integers only (no float, no code from wirespeed.sizing), and compares it with what the
engine returns for ``float(text)``. Any float rounding in the engine shows up as an off-by-one-step result.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from wirespeed import catalog
from wirespeed.sizing import (
    InfeasibleError,
    Pool,
    Workload,
    plan_aws_nat_gateway,
    plan_azure_nat_gateway,
    plan_backlog,
    plan_load_balancer,
    plan_rings,
)

# Re-typed from learn.microsoft.com/azure/load-balancer/load-balancer-outbound-connections ("Default port
# allocation") so the test does not read the table it checks.
DOCUMENTED_DEFAULTS = ((50, 1_024), (100, 512), (200, 256), (400, 128), (800, 64), (1_000, 32))


def ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b


def decimal(scaled: int, places: int) -> str:
    """The decimal text for ``scaled / 10**places`` (e.g. 644, 1 -> '64.4')."""
    if places == 0:
        return str(scaled)
    whole, frac = divmod(scaled, 10**places)
    return f"{whole}.{frac:0{places}d}"


def decimals(low_scaled_per_place: int, high: int, max_places: int = 3) -> st.SearchStrategy[tuple[int, int]]:
    """(scaled, places) with ``low <= scaled / 10**places <= high``; low is given in units of 10**-3."""

    def for_places(places: int) -> st.SearchStrategy[tuple[int, int]]:
        low = ceil_div(low_scaled_per_place * 10**places, 1_000)
        return st.tuples(st.integers(low, high * 10**places), st.just(places))

    return st.integers(0, max_places).flatmap(for_places)


def next_power_of_two(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


# --- surge -------------------------------------------------------------------------------------------------


@given(max_count=st.integers(1, 1_000), percent=decimals(0, 100))
@example(max_count=250, percent=(644, 1))  # 161.00000000000003 in floats
def test_percent_surge_rounds_up_exactly(max_count, percent):
    scaled, places = percent
    text = decimal(scaled, places)
    expected = ceil_div(max_count * scaled, 100 * 10**places)  # AKS: fractional nodes are rounded up
    assert Pool.parse(f"{max_count}:{text}%").surge_nodes == expected
    assert Pool(max_count, float(text)).surge_nodes == expected


# --- ports from a workload and the IP count ----------------------------------------------------------------

pools = st.lists(st.tuples(st.integers(1, 1_000), st.integers(0, 30)), min_size=1, max_size=5).filter(
    lambda ps: sum(m for m, _ in ps) <= 5_000
)


@given(
    pool_specs=pools,
    rate=decimals(1, 2_000),
    hold=decimals(1_000, 3_600),
    headroom=decimals(1_000, 10),
)
@example(pool_specs=[(1_000, 0), (100, 0)], rate=(136, 2), hold=(240, 0), headroom=(125, 2))  # 408 exactly
def test_ports_and_ips_from_a_workload_are_exact_and_minimal(pool_specs, rate, hold, headroom):
    texts = [decimal(*rate), decimal(*hold), decimal(*headroom)]
    numerator = rate[0] * hold[0] * headroom[0]
    denominator = 10 ** (rate[1] + hold[1] + headroom[1])
    needed = ceil_div(numerator, denominator)
    by_workload = ceil_div(needed, 8) * 8
    nodes = sum(m + s for m, s in pool_specs)
    default = next((ports for upper, ports in DOCUMENTED_DEFAULTS if nodes <= upper), None)
    allocated = by_workload if default is None else max(by_workload, default)
    required = allocated * nodes
    ips = max(1, ceil_div(required, 64_000))

    workload = Workload(*(float(t) for t in texts))
    assert workload.ports_needed == needed
    pool_objects = [Pool(m, s, surge_is_percent=False) for m, s in pool_specs]
    if allocated > 64_000 or ips > 100:
        with pytest.raises(InfeasibleError):
            plan_load_balancer(pool_objects, workload=workload)
        return
    plan = plan_load_balancer(pool_objects, workload=workload)
    assert plan.allocated_outbound_ports == allocated
    assert plan.nodes_at_max == nodes
    assert plan.ports_required == required
    assert plan.outbound_ips == ips
    assert plan.dynamic_default_ports == default


@given(pool_specs=pools, ports_eighths=st.integers(1, 8_000))
def test_ip_count_is_the_least_that_holds_explicit_ports(pool_specs, ports_eighths):
    ports = ports_eighths * 8
    nodes = sum(m + s for m, s in pool_specs)
    required = ports * nodes
    pool_objects = [Pool(m, s, surge_is_percent=False) for m, s in pool_specs]
    try:
        plan = plan_load_balancer(pool_objects, ports=ports)
    except InfeasibleError:
        assert required > 100 * 64_000
        return
    assert plan.ports_required == required
    assert plan.outbound_ips * 64_000 >= required
    assert plan.outbound_ips == 1 or (plan.outbound_ips - 1) * 64_000 < required
    assert plan.max_nodes_supported == plan.outbound_ips * 64_000 // ports


# --- NAT gateways ------------------------------------------------------------------------------------------


@given(flows=st.integers(1, 2_000_000))
def test_azure_nat_gateway_ips(flows):
    ips = ceil_div(flows, 64_512)
    if ips > 16:
        with pytest.raises(InfeasibleError):
            plan_azure_nat_gateway(flows)
        return
    plan = plan_azure_nat_gateway(flows)
    assert (plan.ips, plan.capacity) == (ips, ips * 64_512)


@given(connections=st.integers(1, 600_000))
def test_aws_nat_gateway_ips(connections):
    ips = ceil_div(connections, 55_000)
    if ips > 8:
        with pytest.raises(InfeasibleError):
            plan_aws_nat_gateway(connections)
        return
    plan = plan_aws_nat_gateway(connections)
    assert (plan.ips, plan.capacity) == (ips, ips * 55_000)
    assert bool(plan.warnings) == (ips > 2)


# --- packets in a stall: rings and backlog -----------------------------------------------------------------


def packets_in_stall(rate: tuple[int, int], stall: tuple[int, int], packet_bytes: int) -> int:
    # rate Gb/s x 1e9 bits/s x stall ms / 1,000 / ((bytes + 38 wire overhead) x 8 bits)
    numerator = rate[0] * 10**9 * stall[0]
    denominator = 10 ** (rate[1] + stall[1]) * 1_000 * (packet_bytes + 38) * 8
    return max(1, ceil_div(numerator, denominator))


@given(rate=decimals(1, 800), stall=decimals(1, 100), packet_bytes=st.integers(64, 9_216))
@example(rate=(171, 1), stall=(4, 0), packet_bytes=1_462)  # exactly 5,700 packets; 5,701 in floats
def test_backlog_is_exact(rate, stall, packet_bytes):
    packets = packets_in_stall(rate, stall, packet_bytes)
    wanted = next_power_of_two(packets)
    plan = plan_backlog(float(decimal(*rate)), stall_ms=float(decimal(*stall)), packet_bytes=packet_bytes)
    assert plan.packets_in_stall == packets
    # The kernel default (1,000) when it holds the stall; else the next power of two, held to AKS's maximum; capped
    # only when even the maximum cannot hold the packets (sizing.queues.Need, the one decision of enough).
    assert plan.netdev_max_backlog == (1_000 if packets <= 1_000 else min(wanted, 3_240_000))
    assert plan.capped == (packets > 3_240_000)


RING_DRIVERS = sorted(name for name, d in catalog.nic_drivers().items() if d.has_rings)


def expected_ring(packets: int, rounding: str, low: int, high: int) -> int:
    # The smallest size the driver keeps unchanged that holds the packets: a down-rounding driver (ENA)
    # must be asked for a power of two, so both power-of-two rules need the next power of two.
    size = ceil_div(packets, 8) * 8 if rounding == "multiple_of_8" else next_power_of_two(packets)
    return min(max(size, low), high)


@given(
    driver=st.sampled_from(RING_DRIVERS),
    rate=decimals(1, 400),
    stall=decimals(1, 10),
    packet_bytes=st.integers(64, 9_216),
)
@example(driver="mlx5_core", rate=(166, 1), stall=(3, 1), packet_bytes=1_462)  # exactly 415; 416 in floats
def test_rings_are_exact(driver, rate, stall, packet_bytes):
    nic = catalog.nic_driver(driver)
    assert nic.rx is not None
    assert nic.tx is not None
    packets = packets_in_stall(rate, stall, packet_bytes)
    plan = plan_rings(driver, float(decimal(*rate)), stall_ms=float(decimal(*stall)), packet_bytes=packet_bytes)
    assert plan.packets_in_stall == packets
    # The driver's default when it holds the stall (never recommend below it), else the smallest size that holds.
    rx = nic.rx.default if packets <= nic.rx.default else expected_ring(packets, nic.rounding, nic.rx.min, nic.rx.max)
    tx = nic.tx.default if packets <= nic.tx.default else expected_ring(packets, nic.rounding, nic.tx.min, nic.tx.max)
    assert plan.rx == rx
    assert plan.tx == tx
    assert plan.rx_capped == (rx < packets)
    assert plan.tx_capped == (tx < packets)

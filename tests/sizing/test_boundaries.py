"""Every limit at its exact edge: the value on the line and the first one past it, each side asserted.

A hand mutation run over sizing/azure_lb.py, rules/aks_outbound.py and rules/tuning.py left mutants alive only
at equalities (``<=`` turned into ``<``, ``min`` into ``max``): no test sat exactly on a limit. Each case here
does, through the same entry points users reach (the sizing functions ``wirespeed size`` calls, and the pack's
own policy objects with props marshalled as the engine marshals them). bench/mutation/ measures what is left.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from fixtures.rules.engine import (
    USER_DATA_BACKLOG,
    config_map_with,
    fixture,
    launch_template,
    stack_resource,
    user_data_text,
    validate,
    validate_stack,
)
from wirespeed.sizing import InfeasibleError, Pool, SizingError, dynamic_default_ports, plan_load_balancer
from wirespeed.sizing.azure_lb import (
    MAX_CLUSTER_NODES,
    MAX_OUTBOUND_IPS,
    MAX_POOL_NODES,
    PORTS_PER_IP,
    next_halving_node_count,
)
from wirespeed.sizing.backlog import BACKLOG_MAX, BACKLOG_MIN

CAPACITY = "aks-snat-capacity"
MINIMUM_PORTS = "aks-snat-ports-minimum"
DEFAULT_PORTS = "aks-allocated-outbound-ports-default"
BACKLOG = "netdev-backlog-minimum"
# The line-rate minimums (sizing.queues.Need: the 4 ms of 1,500-byte packets a backlog must hold), written out so a
# changed derivation is noticed: the EKS fixture's c6in.8xlarge (50 Gb/s), the AKS fixture's Standard_D16s_v6
# (12.5 Gb/s), and a ConfigMap without the line-rate annotation (the assumed 25 Gb/s).
MINIMUM_BACKLOG = 16_255
AKS_POOL_MINIMUM_BACKLOG = 4_064
CONFIG_MAP_MINIMUM_BACKLOG = 8_128


def pools_of(nodes: int) -> list[Pool]:
    """Pools whose maxCount plus surge adds up to exactly ``nodes`` (no surge, 1,000 per pool at most)."""
    sizes = [MAX_POOL_NODES] * (nodes // MAX_POOL_NODES) + ([nodes % MAX_POOL_NODES] if nodes % MAX_POOL_NODES else [])
    return [Pool(size, 0, surge_is_percent=False) for size in sizes]


# --- required == available SNAT capacity ------------------------------------------------------------------------


def test_sizing_required_equal_to_available_fits_with_no_port_spare():
    plan = plan_load_balancer(pools_of(100), ports=640, outbound_ips=1)  # 640 x 100 = 64,000 = 1 x 64,000
    assert (plan.ports_required, plan.ports_available) == (PORTS_PER_IP, PORTS_PER_IP)
    assert plan.feasible
    assert plan.headroom_ports == 0
    assert plan.max_nodes_supported == 100
    assert "Fits with 0 ports spare: room for 100 nodes" in plan.explain()


def test_sizing_one_port_step_past_available_does_not_fit():
    plan = plan_load_balancer(pools_of(100), ports=648, outbound_ips=1)  # 64,800 > 64,000
    assert not plan.feasible
    assert "Does NOT fit: short by 800 ports." in plan.explain()


def test_sizing_picks_exactly_enough_ips_when_required_is_a_multiple_of_an_ip():
    assert plan_load_balancer(pools_of(100), ports=640).outbound_ips == 1
    assert plan_load_balancer(pools_of(200), ports=640).outbound_ips == 2  # 128,000 = 2 x 64,000
    assert plan_load_balancer(pools_of(201), ports=640).outbound_ips == 3


def capacity_stack(system_max: int, ips: int) -> list[object]:
    """The compliant cluster (system pool maxCount ``system_max`` + 1 surge, 4,000 ports, ``ips`` managed IPs)
    and the compliant agent pool (95 + 2 surge)."""
    cluster = fixture("aks_cluster")
    cluster["agentPoolProfiles"][0]["maxCount"] = system_max
    cluster["networkProfile"]["loadBalancerProfile"]["managedOutboundIPs"] = {"count": ips}
    return [stack_resource("cluster", "aks", cluster), stack_resource("pool", "user", fixture("aks_agent_pool"))]


def test_rule_passes_when_required_equals_available():
    # 4,000 ports x (30 + 1 + 95 + 2 = 128 nodes) = 512,000 = 8 IPs x 64,000.
    assert validate_stack(CAPACITY, capacity_stack(30, 8)) == []


def test_rule_fails_one_ip_short_of_equal():
    [(message, _)] = validate_stack(CAPACITY, capacity_stack(30, 7))
    assert message.startswith(
        "allocatedOutboundPorts 4,000 x 128 nodes at maxCount plus surge (system: 30 max + 1 surge; user: 95 max + 2 "
        "surge) = 512,000 SNAT ports required, but 7 managed outbound IP(s) x 64,000 = 448,000 are available"
    )
    # 448,000 // 128 = 3,500, rounded down to a multiple of 8.
    assert message.endswith(
        "Give it at least 8 outbound IPs (managedOutboundIPs.count) or lower allocatedOutboundPorts to at most 3,496."
    )


def test_rule_fails_one_node_past_equal():
    [(message, _)] = validate_stack(CAPACITY, capacity_stack(31, 8))  # 129 nodes x 4,000 = 516,000 > 512,000
    assert "516,000 SNAT ports required" in message


# --- 1,000 nodes: the largest pool, and the end of Azure's documented default table ---------------------------------


def test_the_default_table_answers_exactly_1000_nodes_and_nothing_past_it():
    assert dynamic_default_ports(1_000) == 32
    assert dynamic_default_ports(800) == 64
    assert dynamic_default_ports(801) == 32
    assert next_halving_node_count(800) == 801
    assert next_halving_node_count(1_000) is None
    assert next_halving_node_count(1_001) is None
    with pytest.raises(SizingError):
        dynamic_default_ports(1_001)


def test_a_plan_at_exactly_1000_nodes_still_compares_with_the_default():
    at = plan_load_balancer(pools_of(1_000), ports=64)
    assert at.dynamic_default_ports == 32
    assert at.dynamic_default_halves_at is None
    past = plan_load_balancer(pools_of(1_001), ports=64)
    assert past.dynamic_default_ports is None
    assert "Azure documents its default only up to 1,000 backend instances" in past.explain()


def test_explicit_ports_below_the_default_warn_only_when_below():
    assert not plan_load_balancer(pools_of(50), ports=1_024).notes  # equal to the 1-50 default
    assert plan_load_balancer(pools_of(50), ports=1_016).notes == (
        "Warning: 1,016 is below the 1,024 Azure would allocate by default at this size.",
    )


def test_the_default_ports_rule_at_exactly_1000_and_1001_nodes():
    def cluster_of(max_count: int) -> dict[str, object]:
        props = fixture("aks_cluster")
        props["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"] = 0
        props["agentPoolProfiles"][0].update(maxCount=max_count, upgradeSettings={"maxSurge": "0"})
        return props

    [at] = validate(DEFAULT_PORTS, "cluster", cluster_of(1_000))
    assert "reach 1,000 nodes at maxCount plus surge (system: 1,000 max + 0 surge): 32 ports per node, " in at
    assert "the table's last bracket." in at
    props = cluster_of(1_000)
    props["agentPoolProfiles"][0]["upgradeSettings"] = {"maxSurge": "1"}
    [past] = validate(DEFAULT_PORTS, "cluster", props)
    assert "reach 1,001 nodes, beyond the table: Azure documents no default there." in past


def test_surge_past_5000_nodes_is_noted_and_at_5000_is_not():
    at = plan_load_balancer([*pools_of(4_998), Pool(1, 1, surge_is_percent=False)], ports=8)
    assert at.nodes_at_max == 5_000
    assert not any("per cluster" in note for note in at.notes)
    past = plan_load_balancer([*pools_of(4_998), Pool(1, 2, surge_is_percent=False)], ports=8)
    assert past.nodes_at_max == 5_001
    assert any("5,001 nodes with upgrade surge exceed AKS's 5,000" in note for note in past.notes)


# --- the counts Azure and AKS allow: the last one accepted, the first one past it refused ---------------------------


@dataclass(frozen=True)
class Limit:
    """A limit users reach through ``wirespeed size``: each ``accepted`` call on the line gives its value, each
    ``refused`` call past it raises SizingError whose message matches."""

    accepted: tuple[tuple[Callable[[], object], object], ...]
    refused: tuple[tuple[Callable[[], object], str], ...]


LIMITS = {
    "pool-of-1000-nodes": Limit(
        accepted=(
            (lambda: Pool(MAX_POOL_NODES).max_count, 1_000),
            (lambda: Pool.parse("1000").max_count, 1_000),
            (lambda: Pool.parse("1000:1000").surge_nodes, 1_000),
        ),
        refused=(
            (lambda: Pool(MAX_POOL_NODES + 1), "between 1 and 1,000"),
            (lambda: Pool.parse("1001"), "between 1 and 1,000"),
            (lambda: Pool.parse("10:1001"), "between 0 and 1,000 nodes"),
            (lambda: Pool(10, 1_001, surge_is_percent=False), "between 0 and 1,000"),
        ),
    ),
    "cluster-of-5000-nodes": Limit(
        accepted=((lambda: plan_load_balancer(pools_of(MAX_CLUSTER_NODES), ports=8).nodes_at_max, 5_000),),
        refused=(
            (lambda: plan_load_balancer(pools_of(MAX_CLUSTER_NODES + 1), ports=8), "at most 5,000 nodes per cluster"),
        ),
    ),
    "100-fixed-ips": Limit(
        accepted=((lambda: plan_load_balancer(pools_of(10), ports=1_024, outbound_ips=100).outbound_ips, 100),),
        refused=((lambda: plan_load_balancer(pools_of(10), ports=1_024, outbound_ips=101), "between 1 and 100"),),
    ),
}


@pytest.mark.parametrize("limit", LIMITS.values(), ids=LIMITS.keys())
def test_a_count_on_the_limit_is_accepted_and_one_past_it_refused(limit: Limit):
    for call, value in limit.accepted:
        assert call() == value
    for call, says in limit.refused:
        with pytest.raises(SizingError, match=says):
            call()


# --- 100 outbound IPs ----------------------------------------------------------------------------------------------


def test_exactly_100_ips_are_chosen_and_one_port_more_is_infeasible():
    plan = plan_load_balancer(pools_of(100), ports=64_000)  # 6,400,000 = 100 x 64,000
    assert plan.outbound_ips == MAX_OUTBOUND_IPS
    assert plan.feasible
    with pytest.raises(InfeasibleError) as info:
        plan_load_balancer(pools_of(101), ports=64_000)
    assert (info.value.required, info.value.available) == (6_464_000, 6_400_000)


def ports_stack(system_max: int, ports: int, ips: int = 7) -> list[object]:
    cluster = fixture("aks_cluster")
    cluster["agentPoolProfiles"][0].update(maxCount=system_max, upgradeSettings={"maxSurge": "1"})
    cluster["networkProfile"]["loadBalancerProfile"].update(
        allocatedOutboundPorts=ports, managedOutboundIPs={"count": ips}
    )
    return [stack_resource("cluster", "aks", cluster)]


def test_the_capacity_rule_offers_100_ips_but_not_101():
    [(at, _)] = validate_stack(CAPACITY, ports_stack(99, 64_000))  # 100 nodes x 64,000 = 100 IPs' worth
    assert "Give it at least 100 outbound IPs" in at
    [(past, _)] = validate_stack(CAPACITY, ports_stack(100, 64_000))  # 101 nodes: 101 IPs, past Azure's 100
    assert "outbound IPs (" not in past
    assert past.endswith("Lower allocatedOutboundPorts to at most 4,432.")


def test_the_capacity_rule_offers_the_largest_multiple_of_8_that_fits():
    # 1 IP over 1,000 nodes: 64,000 // 1,000 = 64 exactly, offered as it is.
    [(message, _)] = validate_stack(CAPACITY, ports_stack(999, 4_000, ips=1))
    assert message.endswith(
        "Give it at least 63 outbound IPs (managedOutboundIPs.count) or lower allocatedOutboundPorts to at most 64."
    )


# --- the netdev backlog minimum: at the minimum passes, one below fails ------------------------------------------


def aks_pool(backlog: int) -> dict[str, object]:
    props = fixture("aks_agent_pool")
    props["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = backlog
    return props


def test_aks_backlog_at_the_edges_of_what_aks_accepts():
    """1,000 and 3,240,000 are accepted by AKS (1,000 is below wirespeed's minimum: that finding, not a refusal);
    999 and 3,240,001 are refused."""
    [low] = validate(BACKLOG, "pool", aks_pool(BACKLOG_MIN))
    assert "is 1,000 (profile 'throughput'), below the minimum 4,064" in low
    assert validate(BACKLOG, "pool", aks_pool(BACKLOG_MAX)) == []
    for refused in (BACKLOG_MIN - 1, BACKLOG_MAX + 1):
        [message] = validate(BACKLOG, "pool", aks_pool(refused))
        assert f"is {refused:,}, which AKS refuses" in message


def tuning_profile(value: int) -> dict[str, object]:
    return config_map_with(lambda d: d["sysctls"].update({"net.core.netdev_max_backlog": value}))


def user_data(*values: int) -> dict[str, object]:
    """The compliant EKS node user data with its backlog writes replaced by one ``sysctl -w`` per value."""
    text = user_data_text()
    text = text.replace(f"net.core.netdev_max_backlog = {USER_DATA_BACKLOG}", "vm.swappiness = 1")
    writes = "\n".join(f"sysctl -w net.core.netdev_max_backlog={value}" for value in values)
    text = text.replace(f"sysctl -w net.core.netdev_max_backlog={USER_DATA_BACKLOG}", writes)
    return launch_template(text)


@pytest.mark.parametrize("order", [(32_768, 1_000), (1_000, 32_768)], ids=["low-last", "low-first"])
def test_user_data_writing_the_backlog_twice_is_judged_by_the_smallest(order):
    [message] = validate(BACKLOG, "launch_template", user_data(*order))
    assert "sets net.core.netdev_max_backlog to 1,000, below the minimum 16,255" in message


def test_user_data_writing_the_minimum_and_more_passes():
    assert validate(BACKLOG, "launch_template", user_data(65_536, MINIMUM_BACKLOG)) == []


# --- allocated ports minimum ---------------------------------------------------------------------------------------


def ports_cluster(ports: float) -> dict[str, object]:
    props = fixture("aks_cluster")
    props["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"] = ports
    return props


# --- each rule minimum: on the line passes, one step past it is one finding --------------------------------------


@dataclass(frozen=True)
class Minimum:
    """A rule's edge: ``rule`` on ``kind`` props passes at ``on_line()`` and reports exactly one finding at
    ``past()``, which starts with ``starts`` and contains each of ``contains`` (empty: the finding alone is the
    assertion)."""

    rule: str
    kind: str
    on_line: Callable[[], dict[str, object]]
    past: Callable[[], dict[str, object]]
    starts: str = ""
    contains: tuple[str, ...] = ()
    config: dict[str, object] | None = None


MINIMUMS = {
    "aks-pool-backlog": Minimum(
        BACKLOG,
        "pool",
        lambda: aks_pool(AKS_POOL_MINIMUM_BACKLOG),
        lambda: aks_pool(AKS_POOL_MINIMUM_BACKLOG - 1),
        starts="agent pool 'subject': linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 4,063",
        contains=("below the minimum 4,064 for Standard_D16s_v6's line rate 12.5 Gb/s",),
    ),
    "aks-pool-backlog-configured": Minimum(
        BACKLOG, "pool", lambda: aks_pool(20_000), lambda: aks_pool(19_999), config={"minimumBacklog": 20_000}
    ),
    "tuning-profile-backlog": Minimum(
        BACKLOG,
        "config_map",
        lambda: tuning_profile(CONFIG_MAP_MINIMUM_BACKLOG),
        lambda: tuning_profile(CONFIG_MAP_MINIMUM_BACKLOG - 1),
        contains=("sysctls['net.core.netdev_max_backlog'] is 8,127, below the minimum 8,128",),
    ),
    "eks-user-data-backlog": Minimum(
        BACKLOG,
        "launch_template",
        lambda: user_data(MINIMUM_BACKLOG),
        lambda: user_data(MINIMUM_BACKLOG - 1),
        starts="userData (EKS node) sets net.core.netdev_max_backlog to 16,254, below the minimum",
    ),
    "allocated-ports-minimum": Minimum(
        MINIMUM_PORTS,
        "cluster",
        lambda: ports_cluster(1_024),
        lambda: ports_cluster(1_016),
        starts="networkProfile.loadBalancerProfile.allocatedOutboundPorts is 1,016, below the minimum of 1,024",
    ),
    "allocated-ports-azure-maximum": Minimum(
        MINIMUM_PORTS,
        "cluster",
        lambda: ports_cluster(64_000),
        lambda: ports_cluster(64_008),
        contains=("is 64,008, which Azure refuses",),
    ),
}


@pytest.mark.parametrize("edge", MINIMUMS.values(), ids=MINIMUMS.keys())
def test_a_rule_passes_on_its_line_and_finds_one_step_past_it(edge: Minimum):
    assert validate(edge.rule, edge.kind, edge.on_line(), edge.config) == []
    [message] = validate(edge.rule, edge.kind, edge.past(), edge.config)
    assert message.startswith(edge.starts)
    for text in edge.contains:
        assert text in message


# --- the note about several IPs: from 2, not at 1 ------------------------------------------------------------------


def test_the_several_ips_note_appears_from_2_ips_and_not_at_1():
    one = plan_load_balancer(pools_of(100), ports=640)  # 64,000: 1 IP
    assert one.outbound_ips == 1
    assert not any("IPs are needed" in note for note in one.notes)
    two = plan_load_balancer(pools_of(100), ports=648)  # 64,800: 2 IPs
    assert two.outbound_ips == 2
    assert "2 IPs are needed for capacity; per-node ports are what protect a busy node." in two.notes


def test_fixed_ips_never_carry_the_note():
    assert not plan_load_balancer(pools_of(100), ports=648, outbound_ips=2).notes

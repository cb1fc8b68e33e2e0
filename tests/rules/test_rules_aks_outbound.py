"""AKS outbound SNAT rules through the pack's own policies, with props as the engine marshals them (floats, proxies).

One compliant fixture (tests/fixtures/rules/aks_cluster.json, aks_agent_pool.json); each failing case changes one
field and asserts the exact message.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE

from fixtures.rules.engine import fixture, nap_objects, stack_resource, urn, validate, validate_stack
from wirespeed.sizing import Pool, plan_load_balancer

DEFAULT_PORTS = "aks-allocated-outbound-ports-default"
MINIMUM = "aks-snat-ports-minimum"
CAPACITY = "aks-snat-capacity"
PREFIX_ID = "/subscriptions/s/resourceGroups/rg-checkout/providers/Microsoft.Network/publicIPPrefixes/egress"

DYNAMIC = (
    "networkProfile.loadBalancerProfile.allocatedOutboundPorts is 0 or unset, so Azure picks SNAT ports per node by "
    "backend pool size (1-50 nodes: 1,024; 51-100: 512; 101-200: 256; 201-400: 128; 401-800: 64; 801-1,000: 32 "
    "ports per node; https://learn.microsoft.com/azure/load-balancer/load-balancer-outbound-connections)."
)
SEPARATE = " Separate AgentPool resources add to that count."
SET_IT = (
    " Set networkProfile.loadBalancerProfile.allocatedOutboundPorts explicitly (a multiple of 8, with the outbound "
    "IPs it needs: `wirespeed size azure-lb {pools} --connections-per-second N` picks both) so ports never shrink "
    "as the cluster grows."
)


def cluster(**lb):
    """The compliant cluster with loadBalancerProfile fields replaced (None deletes one)."""
    props = fixture("aks_cluster")
    profile = props["networkProfile"]["loadBalancerProfile"]
    for key, value in lb.items():
        if value is None:
            profile.pop(key, None)
        else:
            profile[key] = value
    return props


def system_pool(props, **fields):
    props["agentPoolProfiles"][0].update(fields)
    return props


def stack(cluster_props, pool_props=None, *extra):
    resources = [stack_resource("cluster", "aks", cluster_props)]
    resources.append(stack_resource("pool", "user", pool_props or fixture("aks_agent_pool")))
    return [*resources, *extra]


def test_compliant_cluster_and_pool_pass_every_outbound_rule():
    assert validate(DEFAULT_PORTS, "cluster", fixture("aks_cluster")) == []
    assert validate(MINIMUM, "cluster", fixture("aks_cluster")) == []
    assert validate_stack(CAPACITY, stack(fixture("aks_cluster"))) == []


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        pytest.param(
            cluster(allocatedOutboundPorts=0),
            DYNAMIC + " Its agentPoolProfiles reach 6 nodes at maxCount plus surge (system: 5 max + 1 surge): 1,024 "
            "ports per node, cut to 512 on every node the moment the backend pool reaches 51 nodes."
            + SEPARATE
            + SET_IT.format(pools="--pool 5:1"),
            id="ports-0",
        ),
        pytest.param(
            cluster(allocatedOutboundPorts=None),
            DYNAMIC + " Its agentPoolProfiles reach 6 nodes at maxCount plus surge (system: 5 max + 1 surge): 1,024 "
            "ports per node, cut to 512 on every node the moment the backend pool reaches 51 nodes."
            + SEPARATE
            + SET_IT.format(pools="--pool 5:1"),
            id="ports-absent",
        ),
        pytest.param(
            system_pool(cluster(allocatedOutboundPorts=0), maxCount=49),
            DYNAMIC + " Its agentPoolProfiles reach 50 nodes at maxCount plus surge (system: 49 max + 1 surge): "
            "1,024 ports per node, cut to 512 on every node the moment the backend pool reaches 51 nodes."
            + SEPARATE
            + SET_IT.format(pools="--pool 49:1"),
            id="50-nodes-collapse-at-51",
        ),
        pytest.param(
            system_pool(cluster(allocatedOutboundPorts=0), maxCount=60, upgradeSettings={"maxSurge": "10%"}),
            DYNAMIC + " Its agentPoolProfiles reach 66 nodes at maxCount plus surge (system: 60 max + 10% = 6 "
            "surge): 512 ports per node, cut to 256 on every node the moment the backend pool reaches 101 nodes."
            + SEPARATE
            + SET_IT.format(pools="--pool 60:10%"),
            id="66-nodes-percent-surge",
        ),
        pytest.param(
            system_pool(cluster(allocatedOutboundPorts=0), maxCount=1000, upgradeSettings={"maxSurge": "10%"}),
            DYNAMIC
            + " Its agentPoolProfiles reach 1,100 nodes, beyond the table: Azure documents no default there."
            + SET_IT.format(pools="--pool 1000:10%"),
            id="beyond-the-table",
        ),
    ],
)
def test_dynamic_ports_are_refused_with_this_clusters_numbers(props, expected):
    assert validate(DEFAULT_PORTS, "cluster", props) == [expected]


def test_dynamic_ports_without_inline_pools_explain_the_table():
    props = cluster(allocatedOutboundPorts=0)
    del props["agentPoolProfiles"]
    assert validate(DEFAULT_PORTS, "cluster", props) == [
        DYNAMIC + " Its pools are separate AgentPool resources: up to 50 nodes each gets 1,024 ports, halved on every "
        "node at 51." + SET_IT.format(pools="--pool MAX:SURGE ...")
    ]


@pytest.mark.parametrize(
    "network",
    [
        pytest.param({"outboundType": "managedNATGateway"}, id="nat-gateway"),
        pytest.param({"outboundType": "userDefinedRouting"}, id="udr"),
        pytest.param({"loadBalancerSku": "basic"}, id="basic-lb"),
    ],
)
def test_outbound_rules_skip_clusters_not_on_the_standard_load_balancer(network):
    props = cluster(allocatedOutboundPorts=0)
    props["networkProfile"].update(network)
    assert validate(DEFAULT_PORTS, "cluster", props) == []


def test_no_network_profile_means_azure_defaults_which_use_dynamic_ports():
    props = fixture("aks_cluster")
    del props["networkProfile"]
    assert len(validate(DEFAULT_PORTS, "cluster", props)) == 1


def test_ports_below_the_minimum():
    assert validate(MINIMUM, "cluster", cluster(allocatedOutboundPorts=512)) == [
        "networkProfile.loadBalancerProfile.allocatedOutboundPorts is 512, below the minimum of 1,024 (policy setting "
        "minimumPorts): each node can hold at most 512 connections to one destination (IP, port, protocol) at a time, "
        "and a port stays reserved about 240 s after its connection closes, so 512 ports sustain only ~2.1 new "
        "connections/s per node to a busy destination before SNAT exhaustion. Set allocatedOutboundPorts to at least "
        "1,024 and add the outbound IPs it needs (`wirespeed size azure-lb`)."
    ]


@pytest.mark.parametrize(
    ("ports", "config", "violations"),
    [
        pytest.param(512, {"minimumPorts": 512}, 0, id="lowered-minimum-allows-512"),
        pytest.param(4000, {"minimumPorts": 8000}, 1, id="raised-minimum-refuses-4000"),
        pytest.param(1024, None, 0, id="default-minimum-is-inclusive"),
        pytest.param(0, None, 0, id="zero-is-the-dynamic-rule's"),
    ],
)
def test_ports_minimum_reads_its_config(ports, config, violations):
    assert len(validate(MINIMUM, "cluster", cluster(allocatedOutboundPorts=ports), config)) == violations


CAPACITY_HEAD = (
    "allocatedOutboundPorts 4,000 x 103 nodes at maxCount plus surge (system: 5 max + 1 surge; user: 95 max + 2 "
    "surge) = 412,000 SNAT ports required, but "
)
REJECTED = " are available: AKS rejects the profile (InvalidLoadBalancerProfileAllocatedOutboundPorts) when a pool "


def test_capacity_counts_inline_and_separate_pools_against_managed_ips():
    reported = validate_stack(CAPACITY, stack(cluster(managedOutboundIPs={"count": 6})))
    assert reported == [
        (
            CAPACITY_HEAD + "6 managed outbound IP(s) x 64,000 = 384,000" + REJECTED + "scales or upgrades. Give it "
            "at least 7 outbound IPs (managedOutboundIPs.count) or lower allocatedOutboundPorts to at most 3,728.",
            urn("cluster", "aks"),
        )
    ]


def test_capacity_counts_surge_one_more_pool_node_tips_it():
    pool = fixture("aks_agent_pool")
    pool["maxCount"] = 110  # 5 + 1 + 110 + 2 = 118 nodes x 4,000 = 472,000 > 448,000
    ((message, _),) = validate_stack(CAPACITY, stack(fixture("aks_cluster"), pool))
    assert message.startswith(
        "allocatedOutboundPorts 4,000 x 118 nodes at maxCount plus surge (system: 5 max + 1 "
        "surge; user: 110 max + 2 surge) = 472,000 SNAT ports required, but 7 managed outbound "
        "IP(s) x 64,000 = 448,000 are available"
    )


def test_capacity_counts_prefix_ips_as_two_to_the_host_bits():
    props = cluster(managedOutboundIPs=None, outboundIPPrefixes={"publicIPPrefixes": [{"id": PREFIX_ID}]})
    prefix = stack_resource("prefix", "egress", {"id": PREFIX_ID, "prefixLength": 30})
    assert validate_stack(CAPACITY, stack(props, None, prefix)) == [
        (
            CAPACITY_HEAD + "4 IP(s) from prefix(es) /30 x 64,000 = 256,000" + REJECTED + "scales or upgrades. Give "
            "it at least 7 outbound IPs (outboundIPPrefixes: a shorter prefix) or lower allocatedOutboundPorts to at "
            "most 2,480.",
            urn("cluster", "aks"),
        )
    ]
    wide = stack_resource("prefix", "egress", {"id": PREFIX_ID, "prefixLength": 29})  # 8 IPs: 512,000
    assert validate_stack(CAPACITY, stack(props, None, wide)) == []


def test_capacity_counts_listed_ips():
    props = cluster(managedOutboundIPs=None, outboundIPs={"publicIPs": [{"id": f"ip-{i}"} for i in range(6)]})
    ((message, _),) = validate_stack(CAPACITY, stack(props))
    assert "but 6 listed public IP(s) x 64,000 = 384,000 are available" in message
    assert "Give it at least 7 outbound IPs (outboundIPs.publicIPs)" in message


def test_capacity_links_a_pool_by_property_dependency_when_its_cluster_name_is_unknown():
    pool = fixture("aks_agent_pool")
    pool["resourceName"] = UNKNOWN_STRING_VALUE  # cluster.name during preview
    resources = [
        stack_resource("cluster", "aks", cluster(managedOutboundIPs={"count": 6})),
        stack_resource("pool", "user", pool, {"resourceName": [urn("cluster", "aks")]}),
    ]
    ((message, _),) = validate_stack(CAPACITY, resources)
    assert message.startswith(CAPACITY_HEAD)


def test_capacity_ignores_pools_of_other_clusters():
    pool = fixture("aks_agent_pool")
    pool["resourceName"] = "aks-other"
    assert validate_stack(CAPACITY, stack(cluster(managedOutboundIPs={"count": 1}), pool)) == []


def test_capacity_matches_versioned_azure_native_tokens():
    resources = [
        stack_resource(
            "azure-native:containerservice/v20240801:ManagedCluster", "aks", cluster(managedOutboundIPs={"count": 6})
        ),
        stack_resource("azure-native:containerservice/v20240801:AgentPool", "user", fixture("aks_agent_pool")),
    ]
    ((message, _),) = validate_stack(CAPACITY, resources)
    assert message.startswith(CAPACITY_HEAD)


@pytest.mark.parametrize(
    "unknown",
    [
        pytest.param({"allocatedOutboundPorts": UNKNOWN_NUMBER_VALUE}, id="ports"),
        pytest.param({"managedOutboundIPs": {"count": UNKNOWN_NUMBER_VALUE}}, id="ip-count"),
    ],
)
def test_unknown_values_during_preview_make_outbound_rules_not_applicable(unknown):
    props = cluster(managedOutboundIPs={"count": 1})  # would overflow if the value were known
    props["networkProfile"]["loadBalancerProfile"].update(unknown)
    assert validate(DEFAULT_PORTS, "cluster", props) == []
    assert validate(MINIMUM, "cluster", props) == []
    assert validate_stack(CAPACITY, stack(props)) == []


def test_an_unknown_cluster_does_not_hide_another_clusters_overflow():
    unknown = cluster(allocatedOutboundPorts=UNKNOWN_NUMBER_VALUE)
    unknown["resourceName"] = "aks-preview"
    resources = [
        stack_resource("cluster", "aks-preview", unknown),
        *stack(cluster(managedOutboundIPs={"count": 6})),
    ]
    assert [u for _, u in validate_stack(CAPACITY, resources)] == [urn("cluster", "aks")]


@given(
    ports=st.integers(1, 8000).map(lambda p: p * 8),
    ips=st.integers(1, 100),
    pools=st.lists(st.tuples(st.integers(1, 1000), st.integers(0, 20)), min_size=1, max_size=4),
)
def test_capacity_verdict_matches_the_sizing_engine(ports, ips, pools):
    """The rule flags a cluster exactly when wirespeed.sizing says the profile does not fit, and its message shows
    whole numbers only, although every number reached it as a float."""
    props = cluster(allocatedOutboundPorts=ports, managedOutboundIPs={"count": ips})
    props["agentPoolProfiles"] = [
        {"name": f"p{i}", "enableAutoScaling": True, "maxCount": m, "upgradeSettings": {"maxSurge": str(s)}}
        for i, (m, s) in enumerate(pools)
    ]
    sized = [Pool(m, s, surge_is_percent=False) for m, s in pools]
    assume(sum(p.max_count for p in sized) <= 5_000)  # beyond AKS's cluster limit the sizing engine refuses
    plan = plan_load_balancer(sized, ports=ports, outbound_ips=ips)
    reported = validate_stack(CAPACITY, [stack_resource("cluster", "aks", props)])
    assert (reported == []) == plan.feasible
    for message, _ in reported:
        assert f"{plan.ports_required:,} SNAT ports required" in message
        assert f"= {plan.ports_available:,} are available" in message
        assert not re.search(r"\d\.0\b", message)


# --- node auto-provisioning NodePools: counted at node ceiling + disruption budget, as `wirespeed plan` counts them --

COMPONENT = "wirespeed:azure:NetworkOptimizedCluster"
NAP_HEAD = (
    "allocatedOutboundPorts 4,000 x 147 nodes at maxCount plus surge and NodePool ceilings plus disruption budgets "
    "(system: 5 max + 1 surge; user: 95 max + 2 surge; NodePool net: limits.cpu 640 / 16 vCPU = 40 max + budget 10% "
    "= 4 replacing{shared}) = 588,000 SNAT ports required, but 7 managed outbound IP(s) x 64,000 = 448,000"
    + REJECTED
    + "scales or upgrades. Give it at least 10 outbound IPs (managedOutboundIPs.count) or lower "
    "allocatedOutboundPorts to at most 3,040."
)


def nap_pool(**spec):
    """The NodePool `wirespeed render aks-nap` writes (640 vCPUs of 16-vCPU-and-up v6 sizes unless changed)."""
    return nap_objects(**spec)["NodePool"]


def test_a_nap_node_pool_is_counted_at_its_ceiling_plus_budget_and_tips_the_cluster():
    # 103 agent pool nodes fit in 7 IPs; 40 + 4 NAP nodes more do not.
    assert validate_stack(CAPACITY, stack(fixture("aks_cluster"))) == []
    reported = validate_stack(
        CAPACITY, stack(fixture("aks_cluster"), None, stack_resource("node_pool", "net", nap_pool()))
    )
    assert reported == [(NAP_HEAD.format(shared=""), urn("cluster", "aks"))]


@pytest.mark.parametrize(
    ("written", "spec", "budgets"),
    [
        pytest.param("64", {"cpu_limit": 64}, None, id="small"),
        pytest.param("1000", {"cpu_limit": 1_000, "min_vcpu": 2}, None, id="small-sizes"),
        pytest.param("3000", {"cpu_limit": 3_000, "disruption_budget": "50%"}, None, id="half-budget"),
        pytest.param(
            "512",
            {"cpu_limit": 512, "disruption_budget": "25%"},
            [{"nodes": "1"}, {"nodes": "25%"}],
            id="largest-budget",
        ),
        pytest.param("640000m", {"cpu_limit": 640}, None, id="millicores"),
    ],
)
def test_the_rule_counts_a_node_pool_exactly_as_plan_does(written, spec, budgets):
    """The node count behind the verdict is the ceiling the plan (wirespeed.azure.nap, `wirespeed plan`) computes."""
    from wirespeed.azure.nap import plan_nap
    from wirespeed.azure.spec import AutoProvisionedPoolSpec

    spec = {"name": "net", "min_vcpu": 16} | spec
    pool = nap_pool(**spec)
    pool["spec"]["limits"]["cpu"] = written
    if budgets:
        pool["spec"]["disruption"]["budgets"] = budgets
    planned = plan_nap(AutoProvisionedPoolSpec(**spec)).capacity
    # 64,000 ports per node on one IP: any second node overflows, so the message always shows the count.
    props = cluster(allocatedOutboundPorts=64_000, managedOutboundIPs={"count": 1})
    ((message, _),) = validate_stack(
        CAPACITY, [stack_resource("cluster", "aks", props), stack_resource("node_pool", "net", pool)]
    )
    agent_nodes = 6  # the system pool: 5 max + 1 surge
    assert f"x {agent_nodes + planned.nodes_at_max:,} nodes" in message
    assert f"= {planned.max_nodes:,} max + budget {planned.budget} = {planned.surge_nodes:,} replacing" in message


def test_a_node_pool_belongs_to_the_cluster_its_resource_tree_shares():
    """NetworkOptimizedCluster parents the cluster and its NodePools: a second cluster of the stack does not count
    them (it would overflow if it did: 1 IP, 6 nodes + 44)."""
    other = cluster(managedOutboundIPs={"count": 1})
    other["resourceName"] = "aks-other"
    resources = [
        stack_resource(COMPONENT, "checkout", {}),
        stack_resource(COMPONENT, "other", {}),
        *stack(fixture("aks_cluster")),
        stack_resource("cluster", "aks-other", other),
        stack_resource("node_pool", "net", nap_pool()),
    ]
    parents = {
        urn("cluster", "aks"): urn(COMPONENT, "checkout"),
        urn("node_pool", "net"): urn(COMPONENT, "checkout"),
        urn("cluster", "aks-other"): urn(COMPONENT, "other"),
    }
    assert validate_stack(CAPACITY, resources, parents=parents) == [(NAP_HEAD.format(shared=""), urn("cluster", "aks"))]


def test_a_node_pool_no_single_cluster_owns_counts_for_each_and_says_so():
    other = cluster(managedOutboundIPs={"count": 1})
    other["resourceName"] = "aks-other"
    resources = [
        *stack(fixture("aks_cluster")),
        stack_resource("cluster", "aks-other", other),
        stack_resource("node_pool", "net", nap_pool()),
    ]
    reported = validate_stack(CAPACITY, resources)
    assert [u for _, u in reported] == [urn("cluster", "aks"), urn("cluster", "aks-other")]
    assert reported[0][0] == NAP_HEAD.format(shared=", linked to no single cluster so counted for each")


def test_a_node_pool_without_limits_is_unbounded_and_refused():
    pool = nap_pool()
    del pool["spec"]["limits"]
    reported = validate_stack(CAPACITY, stack(fixture("aks_cluster"), None, stack_resource("node_pool", "net", pool)))
    assert reported == [
        (
            "allocatedOutboundPorts 4,000 is reserved on every node behind the load balancer, but NodePool net: no "
            "limits.cpu a node ceiling can be read from, so node auto-provisioning may launch nodes without bound "
            "and outbound cannot count them; set spec.limits.cpu (wirespeed derives the node ceiling from it). AKS "
            "rejects the profile (InvalidLoadBalancerProfileAllocatedOutboundPorts) once the nodes outgrow the "
            "outbound IPs; set the NodePool's spec.limits.cpu (`wirespeed render aks-nap` writes it) and size the "
            "outbound IPs for its ceiling.",
            urn("cluster", "aks"),
        )
    ]
    # Azure's dynamic default allocation shrinks ports instead of refusing: nothing for this rule to count.
    assert (
        validate_stack(
            CAPACITY, stack(cluster(allocatedOutboundPorts=0), None, stack_resource("node_pool", "net", pool))
        )
        == []
    )


UNBOUNDED_WHY = (
    "NodePool {name}: no limits.cpu a node ceiling can be read from, so node auto-provisioning may launch nodes "
    "without bound and outbound cannot count them; set spec.limits.cpu (wirespeed derives the node ceiling from it)"
)


def test_every_unbounded_node_pool_is_named_and_a_shared_one_says_so():
    """Two NodePools without limits: one under the cluster's component, one linked to no single cluster (counted for
    each). The message lists both, in stack order, and says which is shared."""
    other = cluster(managedOutboundIPs={"count": 1})
    other["resourceName"] = "aks-other"
    owned, shared = nap_pool(name="net"), nap_pool(name="spare")
    del owned["spec"]["limits"], shared["spec"]["limits"]
    resources = [
        stack_resource(COMPONENT, "checkout", {}),
        stack_resource(COMPONENT, "other", {}),
        *stack(fixture("aks_cluster")),
        stack_resource("cluster", "aks-other", other),
        stack_resource("node_pool", "net", owned),
        stack_resource("node_pool", "spare", shared),
    ]
    parents = {
        urn("cluster", "aks"): urn(COMPONENT, "checkout"),
        urn("node_pool", "net"): urn(COMPONENT, "checkout"),
        urn("cluster", "aks-other"): urn(COMPONENT, "other"),
    }
    reported = dict((u, m) for m, u in validate_stack(CAPACITY, resources, parents=parents))
    whys = (
        UNBOUNDED_WHY.format(name="net") + "; " + UNBOUNDED_WHY.format(name="spare") + " (linked to no single cluster)"
    )
    assert reported[urn("cluster", "aks")].startswith(
        f"allocatedOutboundPorts 4,000 is reserved on every node behind the load balancer, but {whys}. AKS rejects"
    )
    # The other cluster counts only the shared NodePool.
    shared_only = UNBOUNDED_WHY.format(name="spare") + " (linked to no single cluster)"
    assert f"load balancer, but {shared_only}. AKS rejects" in reported[urn("cluster", "aks-other")]


def test_a_node_pool_after_one_that_is_not_azures_is_still_counted():
    """An EKS NodePool in the stack before the AKS one is skipped, not the end of the NodePools."""
    eks = stack_resource("node_pool", "eks", fixture("karpenter_node_pool"))
    reported = validate_stack(
        CAPACITY, [*stack(fixture("aks_cluster")), eks, stack_resource("node_pool", "net", nap_pool())]
    )
    assert reported == [(NAP_HEAD.format(shared=""), urn("cluster", "aks"))]


def test_a_node_pool_whose_limit_is_unknown_during_preview_leaves_its_cluster_unjudged():
    pool = nap_pool()
    pool["spec"]["limits"]["cpu"] = UNKNOWN_STRING_VALUE
    overflowing = cluster(managedOutboundIPs={"count": 1})
    assert validate_stack(CAPACITY, stack(overflowing, None, stack_resource("node_pool", "net", pool))) == []


def test_eks_node_pools_are_not_counted_on_aks():
    eks = stack_resource("node_pool", "eks", fixture("karpenter_node_pool"))
    assert validate_stack(CAPACITY, stack(fixture("aks_cluster"), None, eks)) == []


# --- the edges of each branch ----------------------------------------------------------------------------------


def pools_of(*max_counts, surge="0"):
    """Inline agentPoolProfiles of these maxCounts (no surge unless given), named p0, p1, ..."""
    profile = fixture("aks_cluster")["agentPoolProfiles"][0]
    return [
        {**profile, "name": f"p{i}", "maxCount": n, "minCount": 1, "upgradeSettings": {"maxSurge": surge}}
        for i, n in enumerate(max_counts)
    ]


def test_dynamic_ports_of_a_one_node_cluster_use_the_first_bracket():
    props = cluster(allocatedOutboundPorts=0)
    props["agentPoolProfiles"] = pools_of(1)
    assert validate(DEFAULT_PORTS, "cluster", props) == [
        DYNAMIC + " Its agentPoolProfiles reach 1 nodes at maxCount plus surge (p0: 1 max + 0 surge): 1,024 ports per "
        "node, cut to 512 on every node the moment the backend pool reaches 51 nodes."
        + SEPARATE
        + SET_IT.format(pools="--pool 1:0")
    ]


def test_dynamic_ports_at_exactly_the_tables_last_node_count_use_its_last_bracket():
    props = cluster(allocatedOutboundPorts=0)
    props["agentPoolProfiles"] = pools_of(600, 400)
    assert validate(DEFAULT_PORTS, "cluster", props) == [
        DYNAMIC + " Its agentPoolProfiles reach 1,000 nodes at maxCount plus surge (p0: 600 max + 0 surge; p1: 400 "
        "max + 0 surge): 32 ports per node, the table's last bracket."
        + SEPARATE
        + SET_IT.format(pools="--pool 600:0 --pool 400:0")
    ]
    props["agentPoolProfiles"] = pools_of(600, 401)
    assert validate(DEFAULT_PORTS, "cluster", props) == [
        DYNAMIC
        + " Its agentPoolProfiles reach 1,001 nodes, beyond the table: Azure documents no default there."
        + SET_IT.format(pools="--pool 600:0 --pool 401:0")
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [pytest.param("1024", "'1024'", id="a-string"), pytest.param(1000.5, "1,000.5", id="a-fraction")],
)
def test_ports_azure_refuses_are_quoted_as_given(value, shown):
    [message] = validate(MINIMUM, "cluster", cluster(allocatedOutboundPorts=value))
    assert message.startswith(
        f"networkProfile.loadBalancerProfile.allocatedOutboundPorts is {shown}, which Azure refuses: it must be a "
        "whole multiple of 8 between 0 and 64,000"
    )


@pytest.mark.parametrize("outbound", ["managedNATGateway", "userDefinedRouting"])
def test_ports_and_capacity_do_not_apply_when_egress_is_not_the_load_balancer(outbound):
    for ports in (7, 512, 64_000):  # refused, below the minimum, far beyond one IP's capacity
        props = cluster(allocatedOutboundPorts=ports, managedOutboundIPs={"count": 1})
        props["networkProfile"]["outboundType"] = outbound
        assert validate(MINIMUM, "cluster", props) == []
        assert validate_stack(CAPACITY, stack(props)) == []


def test_capacity_offers_the_smallest_port_count_azure_accepts():
    props = cluster(allocatedOutboundPorts=16, managedOutboundIPs={"count": 1})
    props["agentPoolProfiles"] = pools_of(1000, 1000, 1000, 1000, 1000)  # 5,000 nodes: 64,000 / 5,000 = 12.8
    ((message, _),) = validate_stack(CAPACITY, [stack_resource("cluster", "aks", props)])
    assert message.endswith(
        "Give it at least 2 outbound IPs (managedOutboundIPs.count) or lower allocatedOutboundPorts to at most 8."
    )


def test_capacity_beyond_any_load_balancer_points_to_a_nat_gateway():
    props = cluster(allocatedOutboundPorts=800, managedOutboundIPs={"count": 1})
    props["agentPoolProfiles"] = pools_of(*[1000] * 9)  # 9,000 nodes x 800 = 7,200,000 > 100 IPs x 64,000
    ((message, _),) = validate_stack(CAPACITY, [stack_resource("cluster", "aks", props)])
    assert message.endswith("when a pool scales or upgrades. Use a NAT gateway (outboundType managedNATGateway).")


def test_an_unreadable_prefix_on_one_cluster_does_not_hide_another_clusters_overflow():
    unread = cluster(managedOutboundIPs=None, outboundIPPrefixes={"publicIPPrefixes": [{"id": PREFIX_ID}]})
    unread["resourceName"] = "aks-prefix"  # its prefix is not in the stack: its IP count is not known
    resources = [
        stack_resource("cluster", "aks-prefix", unread),
        *stack(cluster(managedOutboundIPs={"count": 6})),
    ]
    assert [u for _, u in validate_stack(CAPACITY, resources)] == [urn("cluster", "aks")]


# --- aks-basic-load-balancer (issue 25) -----------------------------------------------------------------------------

BASIC = "aks-basic-load-balancer"


def with_sku(sku):
    props = fixture("aks_cluster")
    props["networkProfile"]["loadBalancerSku"] = sku
    return props


@pytest.mark.parametrize("sku", ["basic", "Basic", "BASIC"])
def test_a_cluster_on_the_retired_basic_load_balancer_is_flagged_whatever_the_case(sku):
    [message] = validate(BASIC, "cluster", with_sku(sku))
    assert message.startswith(
        "networkProfile.loadBalancerSku is basic: Azure retired the Basic Load Balancer on September 30, 2025 "
        "(https://learn.microsoft.com/azure/load-balancer/load-balancer-basic-upgrade-guidance), and it has no "
        "outbound rules"
    )
    # The SNAT rules size only the Standard Load Balancer: without this rule a Basic cluster would pass them all.
    assert validate(DEFAULT_PORTS, "cluster", with_sku(sku)) == []
    assert validate(MINIMUM, "cluster", with_sku(sku)) == []


@pytest.mark.parametrize("sku", ["standard", "Standard", None])
def test_standard_or_unset_sku_passes_the_basic_rule(sku):
    props = with_sku(sku)
    if sku is None:
        del props["networkProfile"]["loadBalancerSku"]
    assert validate(BASIC, "cluster", props) == []


def test_basic_sku_unknown_during_preview_is_not_applicable():
    assert validate(BASIC, "cluster", with_sku(UNKNOWN_STRING_VALUE)) == []

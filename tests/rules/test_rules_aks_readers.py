"""How the AKS rules read clusters and pools, at each reader's edge: which field wins, what a default is, how a
pool finds its cluster (dependency, name, resource group, ARM id), and the path a secret or unknown is reported at
(it is what an unchecked violation's message names)."""

from __future__ import annotations

from typing import Any

import pytest

from wirespeed.rules import Resource
from wirespeed.rules._aks import (
    AGENT_POOL,
    CLUSTER,
    PUBLIC_IP_PREFIX,
    PoolIndex,
    allocated_ports,
    arm_segment,
    cluster_name,
    inline_pool_profiles,
    inline_pools,
    outbound_ips,
    pool_cluster_name,
    pool_of,
    pools_of_cluster,
    prefix_lengths,
    uses_load_balancer,
)
from wirespeed.values import BLINDED_SECRET, UNKNOWN, NotKnown, SecretNotReadable

RG = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService"


def res(type_: str, name: str, props: dict[str, Any], **kw: Any) -> Resource:
    return Resource(type_, name, f"urn:pulumi:dev::p::{type_}::{name}", props, **kw)


def profile(**lb: Any) -> dict[str, Any]:
    return {"networkProfile": {"loadBalancerProfile": lb}}


# --- outbound settings ---------------------------------------------------------------------------------------------


def test_allocated_ports_read_zero_for_a_value_azure_refuses():
    assert allocated_ports(profile(allocatedOutboundPorts=1024.0)) == 1024
    assert allocated_ports(profile(allocatedOutboundPorts=1020)) == 0  # not a multiple of 8
    assert allocated_ports({}) == 0


def test_the_load_balancer_is_the_default_way_out():
    assert uses_load_balancer({})
    assert uses_load_balancer({"networkProfile": {}})
    assert uses_load_balancer({"networkProfile": {"outboundType": "loadBalancer", "loadBalancerSku": "Standard"}})
    assert not uses_load_balancer({"networkProfile": {"outboundType": "userDefinedRouting"}})
    assert not uses_load_balancer({"networkProfile": {"loadBalancerSku": "basic"}})


def test_outbound_ips_one_managed_ip_by_default():
    assert outbound_ips(profile(), {}) == (1, "1 managed outbound IP(s)", "managedOutboundIPs.count")
    assert outbound_ips(profile(managedOutboundIPs={"count": 3.0}), {}) == (
        3,
        "3 managed outbound IP(s)",
        "managedOutboundIPs.count",
    )


def test_outbound_ips_add_up_every_prefix():
    ips = profile(outboundIPPrefixes={"publicIPPrefixes": [{"id": "/P/A"}, {"id": "/p/b"}]})
    assert outbound_ips(ips, {"/p/a": 31, "/p/b": 30}) == (
        6,
        "6 IP(s) from prefix(es) /31, /30",
        "outboundIPPrefixes: a shorter prefix",
    )


def test_a_prefix_whose_length_is_not_known_or_that_has_no_id_is_not_known():
    for prefix in ({"id": "/p/elsewhere"}, {}):
        with pytest.raises(NotKnown) as info:
            outbound_ips(profile(outboundIPPrefixes={"publicIPPrefixes": [prefix]}), {"/p/a": 31})
        assert info.value.path == "outboundIPPrefixes.publicIPPrefixes.id"


def test_a_secret_in_a_list_is_reported_at_its_field_and_index():
    cases = [
        (lambda: outbound_ips(profile(outboundIPs={"publicIPs": [BLINDED_SECRET]}), {}), "outboundIPs.publicIPs.0"),
        (
            lambda: outbound_ips(profile(outboundIPPrefixes={"publicIPPrefixes": [BLINDED_SECRET]}), {}),
            "outboundIPPrefixes.0",
        ),
        (lambda: inline_pools({"agentPoolProfiles": [BLINDED_SECRET]}), "agentPoolProfiles.0"),
        (lambda: list(inline_pool_profiles({"agentPoolProfiles": [{}, BLINDED_SECRET]})), "agentPoolProfiles.1"),
    ]
    for read, path in cases:
        with pytest.raises(SecretNotReadable) as info:
            read()
        assert info.value.path == path


def test_prefix_lengths_keep_every_valid_ipv4_length_by_lower_cased_id():
    prefixes = [
        res(PUBLIC_IP_PREFIX, "all", {"id": "/P/All", "prefixLength": 0.0}),
        res(PUBLIC_IP_PREFIX, "one", {"prefixLength": 32}, id="/p/one"),
        res(PUBLIC_IP_PREFIX, "too-long", {"id": "/p/x", "prefixLength": 33}),
        res(PUBLIC_IP_PREFIX, "negative", {"id": "/p/y", "prefixLength": -1}),
        res(PUBLIC_IP_PREFIX, "no-id", {"prefixLength": 31}),
        res(CLUSTER, "not-a-prefix", {"id": "/p/z", "prefixLength": 31}),
    ]
    assert prefix_lengths(prefixes) == {"/p/all": 0, "/p/one": 32}


# --- pools -----------------------------------------------------------------------------------------------------------


def test_a_pool_counts_max_count_only_when_autoscaling():
    fixed = pool_of({"enableAutoScaling": False, "maxCount": 10, "count": 3, "name": "p"}, "x")
    assert fixed is not None
    assert (fixed.max_count, fixed.name) == (3, "p")
    scaling = pool_of({"enableAutoScaling": True, "maxCount": 10, "count": 3}, "x")
    assert scaling is not None
    assert (scaling.max_count, scaling.name) == (10, "x")


def test_inline_pools_are_named_by_their_place_when_they_have_no_name():
    pools = inline_pools({"agentPoolProfiles": [{"name": "sys", "count": 2}, {"count": 0}, {"count": 4}]})
    assert [(p.name, p.max_count) for p in pools] == [("sys", 2), ("agentPoolProfiles[2]", 4)]
    labels = [label for _, label in inline_pool_profiles({"agentPoolProfiles": [{"name": "sys"}, {}]})]
    assert labels == ["agentPoolProfiles[0] (sys)", "agentPoolProfiles[1]"]


def test_a_cluster_is_named_by_its_input_else_its_output():
    assert cluster_name(res(CLUSTER, "c", {"resourceName": "in", "name": "out"})) == "in"
    assert cluster_name(res(CLUSTER, "c", {"name": "out"})) == "out"
    assert cluster_name(res(CLUSTER, "c", {})) is None


def test_a_pool_names_its_cluster_by_input_else_by_its_arm_id():
    pool_id = f"{RG}/managedClusters/aks/agentPools/p"
    assert pool_cluster_name(res(AGENT_POOL, "p", {"resourceName": "in", "id": pool_id})) == "in"
    assert pool_cluster_name(res(AGENT_POOL, "p", {"id": pool_id})) == "aks"
    assert pool_cluster_name(res(AGENT_POOL, "p", {}, id=f"{RG}/ManagedClusters/Other/agentPools/p")) == "Other"
    assert pool_cluster_name(res(AGENT_POOL, "p", {})) is None


def test_arm_segment_reads_keys_not_names():
    assert arm_segment(f"{RG}/managedClusters/aks", "managedClusters") == "aks"
    assert arm_segment(f"{RG}/MANAGEDCLUSTERS/aks/agentPools/p", "managedClusters") == "aks"
    assert arm_segment(f"{RG}/managedClusters/aks", "resourceGroups") == "rg"
    assert arm_segment(f"{RG}/managedClusters", "managedClusters") is None
    assert arm_segment(f"{RG}/managedClusters/", "managedClusters") is None
    assert arm_segment("/managedClusters/aks/agentPools/p", "managedClusters") == "aks"
    # A resource group, or a cluster, named like a key is a name.
    tricky_rg = "/subscriptions/s/resourceGroups/managedClusters/providers/Microsoft.ContainerService"
    assert arm_segment(f"{tricky_rg}/managedClusters/aks/agentPools/p", "managedClusters") == "aks"
    assert arm_segment(f"{RG}/managedClusters/managedClusters/agentPools/p", "managedClusters") == "managedClusters"
    assert arm_segment(f"{RG}/managedClusters/aks", "agentPools") is None
    assert arm_segment(f"{RG}/managedClusters/aksX", "managedClusters") == "aksX"


# --- which separate AgentPools belong to a cluster ---------------------------------------------------------------


def pool(name: str, props: dict[str, Any], depends_on: tuple[str, ...] = ()) -> Resource:
    return res(AGENT_POOL, name, props, property_dependencies={"resourceName": list(depends_on)} if depends_on else {})


def names(found: Any) -> list[str]:
    return [r.name for r in found]


def test_pools_linked_by_dependency_belong_even_when_the_cluster_has_no_name_yet():
    cluster = res(CLUSTER, "c", {})
    first = pool("a", {"resourceName": UNKNOWN}, (cluster.urn,))
    second = pool("b", {}, (cluster.urn,))
    stranger = pool("z", {}, ("urn:other",))
    assert names(PoolIndex([first, second, stranger]).pools_of(cluster)) == ["a", "b"]
    assert names(pools_of_cluster(cluster, [stranger, second])) == ["b"]


def test_a_pool_whose_cluster_is_unknown_makes_the_clusters_pools_unknown():
    cluster = res(CLUSTER, "c", {"resourceName": "aks"})
    unknown = pool("u", {"resourceName": UNKNOWN})
    named = pool("n", {"resourceName": "aks"})
    with pytest.raises(NotKnown):
        list(PoolIndex([unknown, named]).pools_of(cluster))
    # An unknown name does not stop the pools after it being indexed.
    linked = pool("l", {"resourceName": UNKNOWN}, (cluster.urn,))
    assert names(PoolIndex([linked, named]).pools_of(cluster)) == ["l", "n"]


def test_pools_match_by_cluster_name_and_resource_group_when_both_are_known():
    cluster = res(CLUSTER, "c", {"resourceName": "AKS", "resourceGroupName": "RG-A"})
    pools = [
        pool("other-group", {"resourceName": "aks", "resourceGroupName": "rg-b"}),
        pool("same-group", {"resourceName": "aks", "resourceGroupName": "rg-a"}),
        pool("no-group", {"resourceName": "Aks"}),
        pool("other-cluster", {"resourceName": "aks2", "resourceGroupName": "rg-a"}),
        pool("no-cluster", {"resourceGroupName": "rg-a"}),
    ]
    assert names(PoolIndex(pools).pools_of(cluster)) == ["same-group", "no-group"]
    ungrouped = res(CLUSTER, "c", {"resourceName": "aks"})
    assert names(PoolIndex(pools).pools_of(ungrouped)) == ["other-group", "same-group", "no-group"]


def test_a_pool_that_names_no_cluster_belongs_to_no_cluster_by_name():
    orphan = pool("orphan", {})
    for cluster_props in ({"resourceName": "aks"}, {"resourceName": "", "name": ""}):
        assert names(PoolIndex([orphan]).pools_of(res(CLUSTER, "c", cluster_props))) == []

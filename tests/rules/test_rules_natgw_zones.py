"""aks-natgw-zone-redundant: an AKS-managed Standard NAT gateway (zonal) serving pools in several zones gets an
advisory naming StandardV2, through the CrossGuard policy pack as the engine runs it."""

from __future__ import annotations

import copy

import pytest
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE

from fixtures.rules.engine import fixture, stack_resource, validate_stack
from wirespeed.rules._registry import rule

ZONES = "aks-natgw-zone-redundant"


def nat_cluster(sku=None, zones=("1", "2", "3"), outbound="managedNATGateway"):
    props = copy.deepcopy(fixture("aks_cluster"))
    profile = {"managedOutboundIPProfile": {"count": 2}, "idleTimeoutInMinutes": 4}
    if sku is not None:
        profile["sku"] = sku
    props["networkProfile"] = {"outboundType": outbound, "natGatewayProfile": profile}
    if zones is not None:
        props["agentPoolProfiles"][0]["availabilityZones"] = list(zones)
    return props


def pool(zones=None):
    props = copy.deepcopy(fixture("aks_agent_pool"))
    if zones is not None:
        props["availabilityZones"] = zones
    return props


def run(cluster_props, pool_props=None):
    resources = [stack_resource("cluster", "aks", cluster_props), stack_resource("pool", "user", pool_props or pool())]
    return [message for message, _ in validate_stack(ZONES, resources)]


V2_ADVICE = (
    "Set networkProfile.natGatewayProfile.sku to StandardV2 (zone-redundant, up to 100 Gbps, the same 64,512 SNAT "
    "ports per IP and 16 IPs; API 2026-06-01; AKS replaces the gateway and its StandardV2 public IPs change the "
    "egress addresses), or accept the zone risk with a reason."
)


def test_a_standard_gateway_for_a_pool_in_three_zones_is_advised_to_be_standard_v2():
    assert run(nat_cluster(sku="Standard")) == [
        "The AKS-managed NAT gateway is Standard, a zonal resource in one availability zone, but the pools run in "
        "zones 1, 2, 3 (agentPoolProfiles[0] (system): 1, 2, 3): when the gateway's zone fails, outbound connections "
        f"fail in every zone. {V2_ADVICE}"
    ]


def test_no_sku_is_standard_and_a_separate_pool_s_zones_count():
    # The inline pool in zone 1, the separate AgentPool in zone 2: two zones behind one zonal gateway.
    assert run(nat_cluster(zones=["1"]), pool(["2"])) == [
        "The AKS-managed NAT gateway is Standard (no sku: Standard), a zonal resource in one availability zone, but "
        "the pools run in zones 1, 2 (agentPoolProfiles[0] (system): 1; user: 2): when the gateway's zone fails, "
        f"outbound connections fail in every zone. {V2_ADVICE}"
    ]


@pytest.mark.parametrize(
    ("cluster_props", "pool_props"),
    [
        pytest.param(nat_cluster(sku="StandardV2"), None, id="standard-v2-spans-the-zones"),
        pytest.param(nat_cluster(zones=["2"]), pool(["2"]), id="every-pool-in-one-zone"),
        pytest.param(nat_cluster(zones=None), None, id="no-zones-pinned"),
        pytest.param(nat_cluster(outbound="loadBalancer"), None, id="load-balancer-egress"),
        pytest.param(nat_cluster(outbound="userAssignedNATGateway"), None, id="a-gateway-aks-does-not-manage"),
    ],
)
def test_no_advisory_where_the_gateway_shares_no_zone_risk_the_rule_knows(cluster_props, pool_props):
    assert run(cluster_props, pool_props) == []


def test_zones_unknown_until_apply_are_not_a_verdict():
    props = nat_cluster()
    props["agentPoolProfiles"][0]["availabilityZones"] = UNKNOWN_ARRAY_VALUE
    assert run(props) == []


def test_the_rule_is_advisory_and_cites_microsoft():
    declared = rule(ZONES)
    assert (declared.default_enforcement, declared.scope) == ("advisory", "stack")
    assert "learn.microsoft.com/azure/nat-gateway/nat-sku" in declared.source
    assert "StandardV2" in declared.remediation

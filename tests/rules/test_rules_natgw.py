"""aws-natgw-capacity: IPs on an AWS NAT gateway (zonal, or each AZ of a regional one) against the configured peak
connections to one destination; aws-natgw-eip-quota: a zonal gateway's Elastic IPs against the account's quota."""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE

from fixtures.rules.engine import fixture, validate

NAT = "aws-natgw-capacity"
QUOTA = "aws-natgw-eip-quota"
DEMAND = {"peakConnectionsPerDestination": 120000}


def gateway(**fields):
    props = fixture("nat_gateway")
    props.update(fields)
    return props


def test_enough_ips_pass():
    assert validate(NAT, "nat_gateway", fixture("nat_gateway"), DEMAND) == []


def test_too_few_ips_for_the_configured_peak():
    assert validate(NAT, "nat_gateway", gateway(secondaryAllocationIds=["eipalloc-0b"]), DEMAND) == [
        "2 IP(s) (allocationId + 1 secondaryAllocationIds) carry 110,000 simultaneous connections to one destination "
        "(IP, port, protocol) at 55,000 per IP, below the configured peak 120,000 (policy setting "
        "peakConnectionsPerDestination): new connections fail with ErrorPortAllocation. Add 1 Elastic IP(s) to "
        "secondaryAllocationIds (3 in all; `wirespeed size aws-natgw --connections 120000`). Warning: 3 IPs exceed the "
        "default quota of 2 Elastic IPs per NAT gateway; raise 'Elastic IP addresses per public NAT gateway' (Service "
        "Quotas: vpc L-5F53652F) to 3 first."
    ]


def test_a_peak_no_single_gateway_can_carry():
    assert validate(NAT, "nat_gateway", gateway(), {"peakConnectionsPerDestination": 500000}) == [
        "3 IP(s) (allocationId + 2 secondaryAllocationIds) carry 165,000 simultaneous connections to one destination "
        "(IP, port, protocol) at 55,000 per IP, below the configured peak 500,000 (policy setting "
        "peakConnectionsPerDestination): new connections fail with ErrorPortAllocation. No zonal NAT gateway carries "
        "it: connections: 500,000 required but 8 IPs give at most 440,000 to one destination; use a regional NAT "
        "gateway (up to 32 IPs per AZ) or spread calls over more destination IPs."
    ]


@pytest.mark.parametrize(
    ("props", "config"),
    [
        pytest.param(gateway(secondaryAllocationIds=[]), None, id="no-demand-configured-rule-is-off"),
        pytest.param(gateway(connectivityType="private", secondaryAllocationIds=[]), DEMAND, id="private-gateway"),
        pytest.param(gateway(secondaryAllocationIds=UNKNOWN_ARRAY_VALUE), DEMAND, id="unknown-during-preview"),
    ],
)
def test_not_applicable(props, config):
    assert validate(NAT, "nat_gateway", props, config) == []


def regional(*addresses):
    """A regional gateway's inputs: availabilityZoneAddresses per AZ (manual), or none (automatic)."""
    props = {"availabilityMode": "regional", "connectivityType": "public", "vpcId": "vpc-0a"}
    if addresses:
        props["availabilityZoneAddresses"] = [
            {"availabilityZone": az, "allocationIds": [f"eipalloc-{az}-{i}" for i in range(ips)]}
            for az, ips in addresses
        ]
    return props


def test_regional_manual_names_each_short_az():
    props = regional(("eu-west-1a", 3), ("eu-west-1b", 2), ("eu-west-1c", 1))
    assert validate(NAT, "nat_gateway", props, DEMAND) == [
        "Regional NAT gateway, per AZ: eu-west-1b: 2 IP(s) (availabilityZoneAddresses[1].allocationIds) carry 110,000 "
        "simultaneous connections to one destination (IP, port, protocol) at 55,000 per IP, below the configured peak "
        "120,000 (policy setting peakConnectionsPerDestination); add 1 Elastic IP(s) (3 in all); eu-west-1c: 1 IP(s) "
        "(availabilityZoneAddresses[2].allocationIds) carry 55,000 simultaneous connections to one destination (IP, "
        "port, protocol) at 55,000 per IP, below the configured peak 120,000 (policy setting "
        "peakConnectionsPerDestination); add 2 Elastic IP(s) (3 in all). New connections from those AZs fail with "
        "ErrorPortAllocation (`wirespeed size aws-natgw --connections 120000 --mode regional`)."
    ]


def test_regional_carries_what_no_zonal_gateway_can():
    peak = {"peakConnectionsPerDestination": 600_000}
    assert validate(NAT, "nat_gateway", regional(("eu-west-1a", 11), ("euw1-az2", 11)), peak) == []
    assert validate(NAT, "nat_gateway", regional(), peak) == [], "automatic mode adds IPs up to 32 per AZ"


def test_regional_automatic_fails_only_beyond_32_ips_per_az():
    assert validate(NAT, "nat_gateway", regional(), {"peakConnectionsPerDestination": 1_760_001}) == [
        "No AZ of a regional NAT gateway carries the configured peak 1,760,001 (policy setting "
        "peakConnectionsPerDestination): connections: 1,760,001 required but 32 IPs per AZ of a regional gateway give "
        "at most 1,760,000 to one destination; spread calls over more destination IPs (each IP, port and protocol "
        "counts on its own)."
    ]


def test_regional_az_id_names_the_az():
    props = regional(("x", 1))
    props["availabilityZoneAddresses"][0] = {"availabilityZoneId": "euw1-az3", "allocationIds": ["eipalloc-1"]}
    (message,) = validate(NAT, "nat_gateway", props, DEMAND)
    assert message.startswith("Regional NAT gateway, per AZ: euw1-az3: 1 IP(s)")


def test_regional_unknown_addresses_during_preview_are_not_judged():
    props = regional(("eu-west-1a", 1))
    props["availabilityZoneAddresses"][0]["allocationIds"] = UNKNOWN_ARRAY_VALUE
    assert validate(NAT, "nat_gateway", props, DEMAND) == []


def test_quota_is_advisory_and_names_the_quota_code():
    assert validate(QUOTA, "nat_gateway", fixture("nat_gateway")) == [
        "3 Elastic IPs (allocationId + 2 secondaryAllocationIds) exceed the account's quota of 2 (AWS's default) per "
        "NAT gateway (policy setting accountQuota): creating it fails until 'Elastic IP addresses per public NAT "
        "gateway' (Service Quotas: vpc L-5F53652F) is raised to 3 (at most 8). Raise it first, then set accountQuota "
        "to the new value."
    ]
    from wirespeed.rules import rule

    assert rule(QUOTA).default_enforcement == "advisory"
    assert rule(NAT).default_enforcement == "mandatory"


@pytest.mark.parametrize(
    ("props", "config"),
    [
        pytest.param(gateway(secondaryAllocationIds=["eipalloc-0b"]), None, id="two-ips-within-the-default"),
        pytest.param(fixture("nat_gateway"), {"accountQuota": 3}, id="quota-raised-to-3"),
        pytest.param(regional(("eu-west-1a", 20)), None, id="regional-az-takes-up-to-32"),
        pytest.param(gateway(connectivityType="private"), None, id="private-gateway-has-no-eips"),
        pytest.param(gateway(secondaryAllocationIds=UNKNOWN_ARRAY_VALUE), None, id="unknown-during-preview"),
    ],
)
def test_quota_not_applicable(props, config):
    assert validate(QUOTA, "nat_gateway", props, config) == []

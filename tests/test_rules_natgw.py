"""aws-natgw-capacity: IPs on an AWS NAT gateway against the configured peak connections to one destination."""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE

from fixtures.rules.engine import fixture, validate

NAT = "aws-natgw-capacity"
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
        "default quota of 2 Elastic IPs per NAT gateway; request an increase (Service Quotas, 'Elastic IP addresses "
        "per public NAT gateway') first."
    ]


def test_a_peak_no_single_gateway_can_carry():
    assert validate(NAT, "nat_gateway", gateway(), {"peakConnectionsPerDestination": 500000}) == [
        "3 IP(s) (allocationId + 2 secondaryAllocationIds) carry 165,000 simultaneous connections to one destination "
        "(IP, port, protocol) at 55,000 per IP, below the configured peak 500,000 (policy setting "
        "peakConnectionsPerDestination): new connections fail with ErrorPortAllocation. No single NAT gateway carries "
        "it: connections: 500,000 required but 8 IPs give at most 440,000 to one destination; add NAT gateways (one "
        "per AZ) or spread calls over more destination IPs."
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

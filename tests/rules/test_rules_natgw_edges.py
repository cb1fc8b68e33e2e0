"""The AWS NAT gateway rules at their edges, in process: a gateway with no connectivityType is public, a peak exactly
at what the IPs carry passes, a peak of 0 turns the capacity rule off, a regional AZ entry without a zone is named by
its index, and the quota rule names AWS's default only when the setting is that default. tests/rules/test_rules_natgw.py
runs both rules through the policy engine."""

from __future__ import annotations

import pytest

from wirespeed.rules._model import Resource
from wirespeed.rules._natgw import NAT_GATEWAY
from wirespeed.rules.aws_natgw_capacity import check_nat_gateway
from wirespeed.rules.aws_natgw_eip_quota import check_eip_quota
from wirespeed.values import UNKNOWN, NotKnown

PEAK = "peakConnectionsPerDestination"


def gateway(**props):
    return Resource(NAT_GATEWAY, "gw", "urn:gw", props)


def capacity(resource, demand):
    return [f.message for f in check_nat_gateway(resource, {PEAK: demand})]


def quota(resource, accounts):
    return [f.message for f in check_eip_quota(resource, {"accountQuota": accounts})]


def test_a_gateway_without_connectivity_type_is_public_and_told_exactly_what_to_add():
    # 1 IP carries 55,000 connections to one destination; 100,000 needs 2 (ceil(100,000 / 55,000)), so add 1.
    assert capacity(gateway(), 100_000) == [
        "1 IP(s) (allocationId + 0 secondaryAllocationIds) carry 55,000 simultaneous connections to one destination "
        "(IP, port, protocol) at 55,000 per IP, below the configured peak 100,000 (policy setting "
        "peakConnectionsPerDestination): new connections fail with ErrorPortAllocation. Add 1 Elastic IP(s) to "
        "secondaryAllocationIds (2 in all; `wirespeed size aws-natgw --connections 100000`)."
    ]
    assert capacity(gateway(connectivityType="private"), 100_000) == []


def test_a_peak_exactly_what_the_ips_carry_passes():
    assert capacity(gateway(secondaryAllocationIds=["eipalloc-2"]), 110_000) == []
    assert len(capacity(gateway(secondaryAllocationIds=["eipalloc-2"]), 110_001)) == 1


def test_a_peak_of_zero_turns_the_rule_off_even_on_a_regional_gateway():
    assert capacity(gateway(availabilityMode="regional", availabilityZoneAddresses=[{"allocationIds": []}]), 0) == []


def test_a_regional_entry_without_a_zone_is_named_by_its_index_even_for_a_peak_of_one():
    regional = gateway(availabilityMode="regional", availabilityZoneAddresses=[{"allocationIds": []}])
    assert capacity(regional, 1) == [
        "Regional NAT gateway, per AZ: availabilityZoneAddresses[0]: 0 IP(s) (availabilityZoneAddresses[0]."
        "allocationIds) carry 0 simultaneous connections to one destination (IP, port, protocol) at 55,000 per IP, "
        "below the configured peak 1 (policy setting peakConnectionsPerDestination); add 1 Elastic IP(s) (1 in all). "
        "New connections from those AZs fail with ErrorPortAllocation "
        "(`wirespeed size aws-natgw --connections 1 --mode regional`)."
    ]


def test_an_unknown_regional_entry_names_where_it_is():
    with pytest.raises(NotKnown) as info:
        capacity(gateway(availabilityMode="regional", availabilityZoneAddresses=[UNKNOWN]), 1)
    assert info.value.path == "availabilityZoneAddresses.0"


def test_the_quota_rule_names_awss_default_only_when_the_setting_is_it():
    six = gateway(secondaryAllocationIds=["a", "b", "c", "d", "e"])
    tail = (
        "per NAT gateway (policy setting accountQuota): creating it fails until 'Elastic IP addresses per public NAT "
        "gateway' (Service Quotas: vpc L-5F53652F) is raised to 6 (at most 8). Raise it first, then set accountQuota "
        "to the new value."
    )
    head = "6 Elastic IPs (allocationId + 5 secondaryAllocationIds) exceed the account's quota of"
    assert quota(six, 4) == [f"{head} 4 {tail}"]
    assert quota(six, 2) == [f"{head} 2 (AWS's default) {tail}"]


def test_a_regional_gateway_is_not_held_to_the_per_gateway_quota():
    regional = gateway(availabilityMode="regional", secondaryAllocationIds=["a", "b", "c", "d", "e"])
    assert quota(regional, 2) == []

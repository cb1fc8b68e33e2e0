"""NAT gateway IP counts for Azure and AWS."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirespeed.sizing import InfeasibleError, SizingError, plan_aws_nat_gateway, plan_azure_nat_gateway


@pytest.mark.parametrize(
    ("flows", "ips"),
    [
        pytest.param(1, 1, id="one"),
        pytest.param(64_512, 1, id="exactly-one-ip"),
        pytest.param(64_513, 2, id="one-over"),
        pytest.param(16 * 64_512, 16, id="max"),
    ],
)
def test_azure_ips(flows, ips):
    assert plan_azure_nat_gateway(flows).ips == ips


def test_azure_over_16_ips_is_infeasible():
    with pytest.raises(InfeasibleError) as info:
        plan_azure_nat_gateway(16 * 64_512 + 1)
    assert (info.value.required, info.value.available) == (1_032_193, 1_032_192)


@pytest.mark.parametrize(
    ("connections", "ips", "warned"),
    [
        pytest.param(55_000, 1, False, id="one"),
        pytest.param(110_000, 2, False, id="two-within-quota"),
        pytest.param(110_001, 3, True, id="three-needs-quota"),
        pytest.param(440_000, 8, True, id="max"),
    ],
)
def test_aws_ips_and_quota_warning(connections, ips, warned):
    plan = plan_aws_nat_gateway(connections)
    assert plan.ips == ips
    assert bool(plan.warnings) is warned


def test_aws_over_8_ips_is_infeasible_for_a_zonal_gateway_and_names_regional():
    with pytest.raises(InfeasibleError, match=r"440,001 required but 8 IPs give at most 440,000") as info:
        plan_aws_nat_gateway(440_001)
    assert info.value.suggestion.startswith("use a regional NAT gateway (up to 32 IPs per AZ)")


def test_aws_regional_takes_32_ips_per_az_and_no_per_gateway_quota_warning():
    plan = plan_aws_nat_gateway(32 * 55_000, mode="regional")
    assert (plan.ips, plan.warnings) == (32, ())
    with pytest.raises(InfeasibleError, match=r"32 IPs per AZ of a regional gateway give at most 1,760,000"):
        plan_aws_nat_gateway(32 * 55_000 + 1, mode="regional")


def test_unknown_mode_names_the_field():
    with pytest.raises(SizingError, match=r"^mode: 'global' is not allowed: 'zonal' or 'regional'$"):
        plan_aws_nat_gateway(1, mode="global")


def test_bad_input_names_field():
    with pytest.raises(SizingError) as info:
        plan_aws_nat_gateway(0)
    assert str(info.value) == "connections: 0 is not allowed: must be a whole number between 1 and 1,000,000,000"


@given(st.integers(1, 16 * 64_512))
def test_azure_minimal_and_sufficient(flows):
    plan = plan_azure_nat_gateway(flows)
    assert plan.capacity >= flows > (plan.ips - 1) * 64_512


# What `size nat-gateway --json` and its prose say, asserted in process (the console-script tests cannot see a
# slip in to_json or explain). Numbers by hand: 64,513 flows need ceil(64,513 / 64,512) = 2 IPs, 2 x 64,512 =
# 129,024 ports, 64,511 spare; 110,001 connections need ceil(110,001 / 55,000) = 3 IPs, 165,000, 54,999 spare.
QUOTA_WARNING_3 = (
    "Warning: 3 IPs exceed the default quota of 2 Elastic IPs per NAT gateway; raise 'Elastic IP addresses per "
    "public NAT gateway' (Service Quotas: vpc L-5F53652F) to 3 first."
)


def test_azure_plan_json_and_explain_in_full():
    plan = plan_azure_nat_gateway(64_513)
    assert plan.to_json() == {
        "cloud": "azure",
        "ips": 2,
        "demand": 64_513,
        "capacity": 129_024,
        "per_ip": 64_512,
        "headroom": 64_511,
        "warnings": [],
        "measured": None,
        "sku": {
            "name": "Standard",
            "zone_redundant": False,
            "gbps": 50,
            "packets_per_second": 5_000_000,
            "public_ip_sku": "Standard",
        },
    }
    assert plan.explain() == (
        "64,513 concurrent flows / 64,512 per IP -> 2 IP(s), 129,024 capacity (64,511 spare).\n"
        "Standard NAT gateway: zonal (one availability zone), up to 50 Gbps and 5,000,000 packets/s; Standard public "
        "IPs or prefixes only."
    )


def test_standard_v2_plan_is_zone_redundant_takes_only_standard_v2_ips_and_sizes_the_same_ports():
    # nat-sku: both SKUs give 64,512 SNAT ports per IP and 16 IPv4 IPs; StandardV2 spans zones, 100 Gbps, 10M pps.
    v1, v2 = plan_azure_nat_gateway(64_513), plan_azure_nat_gateway(64_513, "StandardV2")
    assert (v2.ips, v2.capacity, v2.per_ip) == (v1.ips, v1.capacity, v1.per_ip) == (2, 129_024, 64_512)
    assert v2.to_json()["sku"] == {
        "name": "StandardV2",
        "zone_redundant": True,
        "gbps": 100,
        "packets_per_second": 10_000_000,
        "public_ip_sku": "StandardV2",
    }
    assert v2.explain().splitlines()[1] == (
        "StandardV2 NAT gateway: zone-redundant, up to 100 Gbps and 10,000,000 packets/s; StandardV2 public IPs or "
        "prefixes only."
    )
    with pytest.raises(InfeasibleError, match="16 IPs give at most 1,032,192"):
        plan_azure_nat_gateway(16 * 64_512 + 1, "StandardV2")


@pytest.mark.parametrize("sku", ["Basic", "standardv2", "", None, 2])
def test_an_unknown_azure_sku_names_the_field_the_value_and_the_skus(sku):
    with pytest.raises(SizingError) as caught:
        plan_azure_nat_gateway(1, sku)
    assert caught.value.field == "sku"
    assert caught.value.value == sku
    assert caught.value.allowed == "'Standard' or 'StandardV2'"


def test_aws_plan_json_and_explain_in_full_with_the_quota_warning():
    plan = plan_aws_nat_gateway(110_001)
    assert plan.to_json() == {
        "cloud": "aws",
        "ips": 3,
        "demand": 110_001,
        "capacity": 165_000,
        "per_ip": 55_000,
        "headroom": 54_999,
        "warnings": [QUOTA_WARNING_3],
        "measured": None,
    }
    assert plan.explain() == (
        "110,001 connections to the busiest destination / 55,000 per IP -> 3 IP(s), 165,000 capacity "
        "(54,999 spare).\n" + QUOTA_WARNING_3
    )


def test_aws_plan_within_the_default_quota_has_no_warning_line():
    plan = plan_aws_nat_gateway(55_000)
    assert (
        plan.explain()
        == "55,000 connections to the busiest destination / 55,000 per IP -> 1 IP(s), 55,000 capacity (0 spare)."
    )
    assert plan.to_json()["warnings"] == []


def test_infeasible_messages_in_full():
    with pytest.raises(InfeasibleError) as azure:
        plan_azure_nat_gateway(16 * 64_512 + 1)
    assert str(azure.value) == (
        "flows: 1,032,193 required but 16 IPs give at most 1,032,192; "
        "split egress across subnets with their own NAT gateways, or reuse connections"
    )
    assert azure.value.field == "flows"
    with pytest.raises(InfeasibleError) as zonal:
        plan_aws_nat_gateway(440_001)
    assert (zonal.value.required, zonal.value.available) == (440_001, 440_000)
    assert str(zonal.value) == (
        "connections: 440,001 required but 8 IPs give at most 440,000 to one destination; "
        "use a regional NAT gateway (up to 32 IPs per AZ) or spread calls over more destination IPs"
    )
    with pytest.raises(InfeasibleError) as regional:
        plan_aws_nat_gateway(32 * 55_000 + 1, mode="regional")
    assert (regional.value.required, regional.value.available) == (1_760_001, 1_760_000)
    assert str(regional.value) == (
        "connections: 1,760,001 required but 32 IPs per AZ of a regional gateway give at most 1,760,000 to one "
        "destination; spread calls over more destination IPs (each IP, port and protocol counts on its own)"
    )


def test_azure_bad_flows_names_the_field():
    with pytest.raises(SizingError) as info:
        plan_azure_nat_gateway(0)
    assert str(info.value) == "flows: 0 is not allowed: must be a whole number between 1 and 1,000,000,000"

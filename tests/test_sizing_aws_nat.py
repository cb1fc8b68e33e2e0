"""AWS NAT egress across AZs (wirespeed.sizing.aws_nat): IPs per AZ from the busiest destination, gateways per
mode, and whether the account's default quotas suffice, each named with its Service Quotas code."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirespeed.sizing.aws_nat import AwsNatInputError, check_aws_nat, plan_aws_nat, uniform_demand
from wirespeed.sizing.nat_gateway import NAT_GATEWAY_EIPS, REGION_EIPS


def test_zonal_one_gateway_per_az_and_both_quotas_checked():
    plan = plan_aws_nat({"eu-west-1a": 110_000, "eu-west-1b": 120_000})
    assert (plan.gateways, plan.total_ips, [z.plan.ips for z in plan.zones]) == (2, 5, [2, 3])
    assert plan.to_json()["quotas"] == [
        {
            "name": "Elastic IP addresses per public NAT gateway",
            "service_code": "vpc",
            "quota_code": "L-5F53652F",
            "default": 2,
            "required": 3,
            "default_suffices": False,
        },
        {
            "name": "Elastic IP addresses per Region",
            "service_code": "ec2",
            "quota_code": "L-0263D0A3",
            "default": 5,
            "required": 5,
            "default_suffices": True,
        },
    ]
    assert plan.default_quotas_suffice is False
    assert plan.warnings == [
        "eu-west-1b: Warning: 3 IPs exceed the default quota of 2 Elastic IPs per NAT gateway; raise 'Elastic IP "
        "addresses per public NAT gateway' (Service Quotas: vpc L-5F53652F) to 3 first."
    ]


def test_regional_manual_is_one_gateway_checked_against_the_regions_elastic_ips_only():
    plan = plan_aws_nat(uniform_demand(600_000, 3), mode="regional")
    assert (plan.gateways, plan.max_ips_per_az, plan.total_ips) == (1, 32, 33)
    assert [q.quota for q in plan.quotas] == [REGION_EIPS]
    assert plan.warnings == [
        "Warning: 33 Elastic IPs in all exceed the default quota of 5 Elastic IPs per Region; raise 'Elastic IP "
        "addresses per Region' (Service Quotas: ec2 L-0263D0A3) to at least 33 (plus the Elastic IPs the Region "
        "already holds) first."
    ]


def test_regional_automatic_plans_a_floor_and_uses_no_quota_of_yours():
    plan = plan_aws_nat({"az1": 1_000_000}, mode="regional", ip_mode="automatic")
    assert (plan.zones[0].plan.ips, plan.quotas, plan.warnings, plan.default_quotas_suffice) == (19, (), [], True)
    assert "the floor AWS must reach" in plan.explain()
    assert "names no account quota" in plan.explain()


def test_measured_demand_per_destination_sizes_each_az_by_its_busiest():
    plan = plan_aws_nat(
        {
            "eu-west-1a": {"api.stripe.com:443/tcp": 70_000, "s3:443/tcp": 20_000},
            "eu-west-1b": {"api.stripe.com:443/tcp": 10_000, "db.example:5432/tcp": 130_000},
        }
    )
    assert [(z.busiest_destination, z.plan.demand, z.plan.ips) for z in plan.zones] == [
        ("api.stripe.com:443/tcp", 70_000, 2),
        ("db.example:5432/tcp", 130_000, 3),
    ]
    assert plan.to_json()["zones"][1] == {
        "availability_zone": "eu-west-1b",
        "busiest_destination": "db.example:5432/tcp",
        "ips": 3,
        "demand": 130_000,
        "capacity": 165_000,
        "headroom": 35_000,
    }


def test_every_problem_at_once_each_named_where_it_is():
    plan, problems = check_aws_nat(
        {"EU West": 1, "eu-west-1a": 440_001, "eu-west-1b": {"x": 0}, "eu-west-1c": {}},
        mode="zonal",
        ip_mode="automatic",
    )
    assert plan is None
    assert [str(p) for p in problems] == [
        "ip_mode: 'automatic' is not allowed; allowed: 'manual' with mode 'zonal' (only regional gateways add IPs)",
        "demand['EU West']: 'EU West' is not allowed; allowed: an AZ name such as 'eu-west-1a'",
        "demand['eu-west-1a']: 440001 is not allowed; allowed: 440,001 required but 8 IPs give at most 440,000 to "
        "one destination; use a regional NAT gateway (up to 32 IPs per AZ) or spread calls over more destination IPs",
        "demand['eu-west-1b']['x']: 0 is not allowed; allowed: must be a whole number between 1 and 1,000,000,000",
        "demand['eu-west-1c']: {} is not allowed; allowed: at least one destination's peak connections",
    ]
    with pytest.raises(AwsNatInputError) as info:
        plan_aws_nat({"eu-west-1a": 0}, mode="regional")
    assert str(info.value) == (
        "demand['eu-west-1a']: 0 is not allowed; allowed: must be a whole number between 1 and 1,000,000,000"
    )


def test_quota_facts_carry_their_codes_and_defaults():
    assert (NAT_GATEWAY_EIPS.service_code, NAT_GATEWAY_EIPS.quota_code, NAT_GATEWAY_EIPS.default) == (
        "vpc",
        "L-5F53652F",
        2,
    )
    assert NAT_GATEWAY_EIPS.ceiling == 8
    assert (REGION_EIPS.service_code, REGION_EIPS.quota_code, REGION_EIPS.default) == ("ec2", "L-0263D0A3", 5)


@given(
    st.dictionaries(st.sampled_from(["az1", "az2", "az3", "az4"]), st.integers(1, 32 * 55_000), min_size=1),
    st.sampled_from([("zonal", "manual"), ("regional", "manual"), ("regional", "automatic")]),
)
def test_each_az_gets_the_fewest_ips_that_carry_its_peak(demand, modes):
    plan, problems = check_aws_nat(demand, *modes)
    if modes[0] == "zonal" and max(demand.values()) > 8 * 55_000:
        assert plan is None
        assert problems
        return
    assert plan is not None
    for zone in plan.zones:
        assert zone.plan.capacity >= zone.plan.demand > (zone.plan.ips - 1) * 55_000
    assert plan.gateways == (len(demand) if modes[0] == "zonal" else 1)

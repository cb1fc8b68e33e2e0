"""AWS NAT egress across AZs (wirespeed.sizing.aws_nat): IPs per AZ from the busiest destination, gateways per
mode, and whether the account's default quotas suffice, each named with its Service Quotas code."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirespeed.sizing.aws_nat import (
    AwsNatInputError,
    AzNat,
    check_aws_nat,
    measured_plan,
    plan_aws_nat,
    uniform_demand,
)
from wirespeed.sizing.nat_gateway import NAT_GATEWAY_EIPS, REGION_EIPS, plan_aws_nat_gateway


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


# The whole plan and prose of each mode, in process (the console-script tests cannot see a slip in to_json or
# explain). Numbers by hand: 110,000 / 55,000 = 2 IPs exactly (0 spare); 120,000 needs 3 (165,000, 45,000 spare);
# 60,000 needs 2 (110,000, 50,000 spare); 1,000,000 needs ceil(18.2) = 19 (1,045,000, 45,000 spare).
GATEWAY_QUOTA = "'Elastic IP addresses per public NAT gateway' (Service Quotas: vpc L-5F53652F)"
REGION_QUOTA = "'Elastic IP addresses per Region' (Service Quotas: ec2 L-0263D0A3)"


def test_zonal_plan_json_and_explain_in_full():
    plan = plan_aws_nat({"eu-west-1a": 110_000, "eu-west-1b": 120_000})
    warning = (
        "eu-west-1b: Warning: 3 IPs exceed the default quota of 2 Elastic IPs per NAT gateway; "
        f"raise {GATEWAY_QUOTA} to 3 first."
    )
    assert plan.to_json() == {
        "cloud": "aws",
        "mode": "zonal",
        "ip_mode": "manual",
        "gateways": 2,
        "per_ip": 55_000,
        "max_ips_per_az": 8,
        "zones": [
            {
                "availability_zone": "eu-west-1a",
                "busiest_destination": None,
                "ips": 2,
                "demand": 110_000,
                "capacity": 110_000,
                "headroom": 0,
            },
            {
                "availability_zone": "eu-west-1b",
                "busiest_destination": None,
                "ips": 3,
                "demand": 120_000,
                "capacity": 165_000,
                "headroom": 45_000,
            },
        ],
        "total_ips": 5,
        "quotas": [q.to_json() for q in plan.quotas],
        "default_quotas_suffice": False,
        "warnings": [warning],
    }
    assert plan.explain() == "\n".join(
        [
            "Zonal: 2 NAT gateway(s), one per AZ, each with 1 primary + up to 7 secondary IPs.",
            "  eu-west-1a: 110,000 connections to the busiest destination / 55,000 per IP -> 2 IP(s), 110,000 "
            "capacity (0 spare).",
            "  eu-west-1b: 120,000 connections to the busiest destination / 55,000 per IP -> 3 IP(s), 165,000 "
            "capacity (45,000 spare).",
            f"Quota {GATEWAY_QUOTA}: 3 needed, default 2: raise it first.",
            f"Quota {REGION_QUOTA}: 5 needed, default 5: the default suffices.",
            warning,
        ]
    )


def test_regional_manual_explain_names_the_busiest_destination():
    plan = plan_aws_nat({"use1-az1": {"s3:443/tcp": 1, "api:443/tcp": 60_000}}, mode="regional")
    assert plan.explain() == "\n".join(
        [
            "Regional: 1 NAT gateway across 1 AZ(s), Elastic IPs you give each AZ, up to 32 per AZ.",
            "  use1-az1: 60,000 connections to api:443/tcp / 55,000 per IP -> 2 IP(s), 110,000 capacity "
            "(50,000 spare).",
            f"Quota {REGION_QUOTA}: 2 needed, default 5: the default suffices.",
        ]
    )
    assert plan.to_json()["zones"][0]["busiest_destination"] == "api:443/tcp"


def test_regional_automatic_plan_json_and_explain_in_full():
    plan = plan_aws_nat({"az1": 1_000_000}, mode="regional", ip_mode="automatic")
    assert plan.to_json() == {
        "cloud": "aws",
        "mode": "regional",
        "ip_mode": "automatic",
        "gateways": 1,
        "per_ip": 55_000,
        "max_ips_per_az": 32,
        "zones": [
            {
                "availability_zone": "az1",
                "busiest_destination": None,
                "ips": 19,
                "demand": 1_000_000,
                "capacity": 1_045_000,
                "headroom": 45_000,
            }
        ],
        "total_ips": 19,
        "quotas": [],
        "default_quotas_suffice": True,
        "warnings": [],
    }
    assert plan.explain() == "\n".join(
        [
            "Regional: 1 NAT gateway across 1 AZ(s), IPs AWS adds as an AZ needs them, up to 32 per AZ.",
            "  az1: 1,000,000 connections to the busiest destination / 55,000 per IP -> 19 IP(s) (the floor AWS must "
            "reach), 1,045,000 capacity (45,000 spare).",
            "Quotas: AWS allocates automatic mode's IPs itself; its documentation names no account quota for them.",
        ]
    )


def test_unknown_modes_are_both_named_and_the_azs_still_checked_as_zonal():
    plan, problems = check_aws_nat({"az1": 1, "az2": 0}, mode="global", ip_mode="auto")
    assert plan is None
    assert [str(p) for p in problems] == [
        "mode: 'global' is not allowed; allowed: 'zonal' or 'regional'",
        "ip_mode: 'auto' is not allowed; allowed: 'manual' or 'automatic'",
        "demand['az2']: 0 is not allowed; allowed: must be a whole number between 1 and 1,000,000,000",
    ]


@pytest.mark.parametrize("demand", [{}, [], None, 5], ids=["empty", "list", "none", "number"])
def test_demand_that_is_no_mapping_of_azs(demand):
    plan, problems = check_aws_nat(demand, field="natPeakConnections")
    assert plan is None
    assert [str(p) for p in problems] == [
        f"natPeakConnections: {demand!r} is not allowed; allowed: a mapping of AZ name to peak connections"
    ]


def test_every_destinations_figure_is_checked_not_only_the_busiests():
    # The busiest (a, 5) sizes the AZ; each other bad figure is named where it is, after a bad AZ name.
    plan, problems = check_aws_nat({"Bad AZ": 1, "az1": {"a": 5, "b": -3, "c": 0.5, "d": True, "e": "many"}})
    assert plan is None
    whole = "must be a whole number between 1 and 1,000,000,000"
    assert [str(p) for p in problems] == [
        "demand['Bad AZ']: 'Bad AZ' is not allowed; allowed: an AZ name such as 'eu-west-1a'",
        f"demand['az1']['b']: -3 is not allowed; allowed: {whole}",
        f"demand['az1']['c']: 0.5 is not allowed; allowed: {whole}",
        f"demand['az1']['d']: True is not allowed; allowed: {whole}",
        f"demand['az1']['e']: 'many' is not allowed; allowed: {whole}",
    ]


def test_a_bad_az_name_does_not_stop_the_check_of_the_next():
    _, problems = check_aws_nat({"Bad AZ": 1, "az1": 0})
    assert [p.field for p in problems] == ["demand['Bad AZ']", "demand['az1']"]


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_equal_peaks_pick_the_last_destination_by_name_whatever_the_order(order):
    plan = plan_aws_nat({"az1": dict.fromkeys(order, 5)})
    assert plan.zones[0].busiest_destination == "b"


def test_a_non_number_loses_to_every_number_when_choosing_the_busiest():
    _, problems = check_aws_nat({"az1": {"x": True, "y": 3}})
    # y (3) is the busiest; True (a bool, not a count) is named as bad.
    assert [str(p) for p in problems] == [
        "demand['az1']['x']: True is not allowed; allowed: must be a whole number between 1 and 1,000,000,000"
    ]


def test_input_error_names_the_top_field_and_lists_every_problem():
    with pytest.raises(AwsNatInputError) as info:
        plan_aws_nat({"az1": {"x": 5, "y": "many"}, "az2": 0})
    assert info.value.field == "demand"
    assert [p.field for p in info.value.problems] == ["demand['az1']['y']", "demand['az2']"]
    assert str(info.value) == (
        "demand['az1']['y']: 'many' is not allowed; allowed: must be a whole number between 1 and 1,000,000,000; "
        "demand['az2']: 0 is not allowed; allowed: must be a whole number between 1 and 1,000,000,000"
    )


def test_bad_figures_beside_a_good_busiest_are_named_in_the_order_given():
    # y (3) is the busiest: a non-number never outranks a number, so x and z are named in their own order.
    _, problems = check_aws_nat({"az1": {"x": "many", "y": 3, "z": 0}})
    assert [p.field for p in problems] == ["demand['az1']['x']", "demand['az1']['z']"]


def test_an_az_without_destinations_does_not_stop_the_check_of_the_next():
    _, problems = check_aws_nat({"az1": {}, "az2": 0})
    assert [str(p) for p in problems] == [
        "demand['az1']: {} is not allowed; allowed: at least one destination's peak connections",
        "demand['az2']: 0 is not allowed; allowed: must be a whole number between 1 and 1,000,000,000",
    ]


def test_measured_plan_gathers_sized_zones_and_checks_the_modes():
    zones = [AzNat("use1-az1", plan_aws_nat_gateway(60_000, "regional"), "api:443/tcp")]
    plan = measured_plan("regional", "automatic", zones)
    assert (plan.mode, plan.ip_mode, plan.zones, plan.gateways, plan.quotas) == (
        "regional",
        "automatic",
        tuple(zones),
        1,
        (),
    )
    with pytest.raises(AwsNatInputError) as info:
        measured_plan("zonal", "automatic", zones)
    assert str(info.value) == (
        "ip_mode: 'automatic' is not allowed; allowed: 'manual' with mode 'zonal' (only regional gateways add IPs)"
    )
    with pytest.raises(AwsNatInputError) as both:
        measured_plan("global", "auto", zones)
    assert [p.field for p in both.value.problems] == ["mode", "ip_mode"]

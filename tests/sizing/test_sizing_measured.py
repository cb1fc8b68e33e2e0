"""NAT gateways sized from measured peaks (wirespeed.sizing.measured), in process: the whole `--json` of each plan,
its prose, the input checks and the infeasible messages, with every number worked by hand in the comments.

Azure: 64,512 SNAT ports per IP and 50,000 connections per IP to one destination, at most 16 IPs; AWS: 55,000
connections per IP to one destination, at most 8 IPs (zonal) or 32 per AZ (regional). Headroom multiplies the
peak and rounds up to a whole flow.
"""

from __future__ import annotations

import json

import pytest

from wirespeed.sizing import InfeasibleError, SizingError
from wirespeed.sizing.measured import (
    AwsZoneDemand,
    AzureNatDemand,
    headroom_text,
    plan_aws_nat_measured,
    plan_azure_nat_measured,
)

SOURCE = "max_over_time(...[7d]) at http://prometheus:9090"
# The default SKU's facts (wirespeed.sizing.nat_gateway.AZURE_NAT_SKUS cites each), in --json and the last line.
STANDARD_SKU = {
    "name": "Standard",
    "zone_redundant": False,
    "gbps": 50,
    "packets_per_second": 5_000_000,
    "public_ip_sku": "Standard",
}
STANDARD_SKU_LINE = (
    "Standard NAT gateway: zonal (one availability zone), up to 50 Gbps and 5,000,000 packets/s; Standard public "
    "IPs or prefixes only."
)
QUOTA_WARNING_3 = (
    "Warning: 3 IPs exceed the default quota of 2 Elastic IPs per NAT gateway; raise 'Elastic IP addresses per "
    "public NAT gateway' (Service Quotas: vpc L-5F53652F) to 3 first."
)


@pytest.mark.parametrize(
    ("headroom", "text"),
    [(1.25, "25%"), (1.5, "50%"), (1, "0%"), (1.125, "12.5%"), (10, "900%")],
)
def test_headroom_text(headroom, text):
    assert headroom_text(headroom) == text


def test_azure_port_total_decides_json_and_explain_in_full():
    # 100,000 x 1.25 = 125,000 flows / 64,512 -> 2 IPs (129,024, 4,024 spare); 30,000 x 1.25 = 37,500 to one
    # destination / 50,000 -> 1 IP. The source is stored stripped.
    plan = plan_azure_nat_measured(AzureNatDemand(100_000, 30_000, "10.0.0.5:443/tcp", f"  {SOURCE} "))
    assert plan.to_json() == {
        "cloud": "azure",
        "ips": 2,
        "demand": 125_000,
        "capacity": 129_024,
        "per_ip": 64_512,
        "headroom": 4_024,
        "warnings": [],
        "measured": {
            "binding": "ports",
            "flows": 100_000,
            "ips_for_flows": 2,
            "busiest_destination": "10.0.0.5:443/tcp",
            "destination_flows": 30_000,
            "ips_for_destination": 1,
            "headroom_percent": 25,
            "source": SOURCE,
        },
        "sku": STANDARD_SKU,
    }
    # A whole percent is a JSON integer, not 25.0.
    assert json.dumps(plan.to_json()["measured"]["headroom_percent"]) == "25"
    assert plan.explain() == "\n".join(
        [
            "All flows: a measured peak of 100,000 + 25% headroom = 125,000 / 64,512 ports per IP -> 2 IP(s).",
            "Busiest destination 10.0.0.5:443/tcp: a measured peak of 30,000 + 25% headroom = 37,500 / 50,000 "
            "connections per IP to one destination -> 1 IP(s).",
            f"NAT gateway IPs: 2 (the port total decides; measured: {SOURCE}).",
            STANDARD_SKU_LINE,
        ]
    )


def test_azure_busiest_destination_decides_json_and_explain_in_full():
    # Integral floats, as Pulumi sends them, are kept as whole numbers. 100,000 x 1.25 = 125,000: 2 IPs by ports,
    # 3 by the 50,000 to one destination -> 3 IPs of 50,000 = 150,000 (25,000 spare).
    plan = plan_azure_nat_measured(AzureNatDemand(100_000.0, 100_000.0, "db:5432/tcp", SOURCE))  # type: ignore[arg-type]
    assert plan.to_json() == {
        "cloud": "azure",
        "ips": 3,
        "demand": 125_000,
        "capacity": 150_000,
        "per_ip": 50_000,
        "headroom": 25_000,
        "warnings": [],
        "measured": {
            "binding": "destination",
            "flows": 100_000,
            "ips_for_flows": 2,
            "busiest_destination": "db:5432/tcp",
            "destination_flows": 100_000,
            "ips_for_destination": 3,
            "headroom_percent": 25,
            "source": SOURCE,
        },
        "sku": STANDARD_SKU,
    }
    assert plan.explain() == "\n".join(
        [
            "All flows: a measured peak of 100,000 + 25% headroom = 125,000 / 64,512 ports per IP -> 2 IP(s).",
            "Busiest destination db:5432/tcp: a measured peak of 100,000 + 25% headroom = 125,000 / 50,000 "
            "connections per IP to one destination -> 3 IP(s).",
            f"NAT gateway IPs: 3 (the busiest destination decides; measured: {SOURCE}).",
            STANDARD_SKU_LINE,
        ]
    )


def test_azure_a_fractional_headroom_percent_and_the_one_ip_floor():
    # 1 flow x 1.125 = 1.125 -> 2 flows (rounded up): 1 IP each way, never 0. 12.5% stays a fraction in JSON.
    plan = plan_azure_nat_measured(AzureNatDemand(1, 1, "x:1/udp", SOURCE, headroom=1.125))
    measured = plan.to_json()["measured"]
    assert (plan.ips_for_ports, plan.ips_for_destination, plan.ips) == (1, 1, 1)
    assert (measured["ips_for_flows"], measured["ips_for_destination"]) == (1, 1)
    assert json.dumps(measured["headroom_percent"]) == "12.5"
    assert plan.to_json()["demand"] == 2
    assert "+ 12.5% headroom = 2 / 64,512" in plan.explain()


def test_azure_exactly_16_ips_is_sized_and_one_flow_more_is_infeasible():
    assert plan_azure_nat_measured(AzureNatDemand(16 * 64_512, 1, "x:1/tcp", SOURCE, headroom=1)).ips == 16
    with pytest.raises(InfeasibleError) as info:
        plan_azure_nat_measured(AzureNatDemand(16 * 64_512 + 1, 1, "x:1/tcp", SOURCE, headroom=1))
    assert (info.value.required, info.value.available) == (1_032_193, 1_032_192)
    assert str(info.value) == (
        "flows: 1,032,193 required but 16 IPs give at most 1,032,192; "
        "split egress across subnets with their own NAT gateways, or reuse connections"
    )


def test_azure_one_destination_beyond_16_ips_is_infeasible_naming_it():
    # 800,001 to one destination / 50,000 -> 17 IPs (ports alone would need 13).
    with pytest.raises(InfeasibleError) as info:
        plan_azure_nat_measured(AzureNatDemand(800_001, 800_001, "db:5432/tcp", SOURCE, headroom=1))
    assert (info.value.required, info.value.available) == (800_001, 800_000)
    assert str(info.value) == (
        "destination flows: 800,001 to db:5432/tcp required but 16 IPs give at most 800,000 to one destination; "
        "spread the calls over more destination IPs, or split egress across subnets with their own NAT gateways"
    )


SOURCE_ALLOWED = (
    "where the peak was measured, one line of at most 512 characters (the source line "
    "`wirespeed size ... --from-prometheus` prints)"
)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param(
            {"flows": 0}, "flows: 0 is not allowed: must be a whole number between 1 and 1,000,000,000", id="flows"
        ),
        pytest.param(
            {"flows": 5, "destination_flows": 6},
            "destination_flows: 6 is not allowed: must be a whole number between 1 and 5",
            id="destination-above-all-flows",
        ),
        pytest.param({"source": " "}, f"measured_from: ' ' is not allowed: {SOURCE_ALLOWED}", id="source"),
        pytest.param({"headroom": 11}, "headroom: 11 is not allowed: must be between 1 and 10", id="headroom"),
    ],
)
def test_azure_demand_refuses_each_bad_field_by_name(kwargs, message):
    given = {"flows": 10, "destination_flows": 1, "busiest_destination": "x", "source": SOURCE} | kwargs
    with pytest.raises(SizingError) as info:
        AzureNatDemand(**given)
    assert str(info.value) == message


def test_azure_demand_of_one_flow_is_allowed():
    assert (AzureNatDemand(1, 1, "x", SOURCE).flows, AzureNatDemand(1, 1, "x", SOURCE).destination_flows) == (1, 1)


def test_aws_zone_json_and_explain_in_full_with_the_quota_warning():
    # 100,000 x 1.25 = 125,000 / 55,000 -> 3 IPs (165,000, 40,000 spare), above the default 2 per gateway.
    (plan,) = plan_aws_nat_measured([AwsZoneDemand("eu-west-1a", 100_000, "api:443/tcp", f" {SOURCE}")])
    assert plan.to_json() == {
        "availability_zone": "eu-west-1a",
        "cloud": "aws",
        "ips": 3,
        "demand": 125_000,
        "capacity": 165_000,
        "per_ip": 55_000,
        "headroom": 40_000,
        "warnings": [QUOTA_WARNING_3],
        "measured": {
            "connections": 100_000,
            "busiest_destination": "api:443/tcp",
            "fallback": False,
            "headroom_percent": 25,
            "source": SOURCE,
        },
    }
    assert plan.explain() == (
        "eu-west-1a: a measured peak of 100,000 connections to api:443/tcp + 25% headroom = 125,000 / 55,000 per IP "
        "to one destination -> 3 IP(s), 165,000 capacity (40,000 spare).\n  " + QUOTA_WARNING_3
    )


def test_aws_zone_fallback_without_a_zone_label_json_and_explain():
    # 40,000 (an integral float) x 1 = 40,000 / 55,000 -> 1 IP (55,000, 15,000 spare); no destination: the fallback.
    (plan,) = plan_aws_nat_measured([AwsZoneDemand("", 40_000.0, None, SOURCE, headroom=1)])  # type: ignore[arg-type]
    assert plan.to_json()["measured"] == {
        "connections": 40_000,
        "busiest_destination": None,
        "fallback": True,
        "headroom_percent": 0,
        "source": SOURCE,
    }
    assert plan.explain() == (
        "(no zone label): a measured peak of 40,000 connections to each node's busiest destination (fallback, "
        "summed) + 0% headroom = 40,000 / 55,000 per IP to one destination -> 1 IP(s), 55,000 capacity "
        "(15,000 spare)."
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param(
            {"connections": 0},
            "connections: 0 is not allowed: must be a whole number between 1 and 1,000,000,000",
            id="connections",
        ),
        pytest.param({"source": ""}, f"measured_from: '' is not allowed: {SOURCE_ALLOWED}", id="source"),
        pytest.param({"headroom": 0.5}, "headroom: 0.5 is not allowed: must be between 1 and 10", id="headroom"),
    ],
)
def test_aws_zone_demand_refuses_each_bad_field_by_name(kwargs, message):
    given = {"zone": "az1", "connections": 1, "destination": None, "source": SOURCE} | kwargs
    with pytest.raises(SizingError) as info:
        AwsZoneDemand(**given)
    assert str(info.value) == message


def test_aws_zone_of_one_connection_is_allowed():
    assert AwsZoneDemand("az1", 1, None, SOURCE).connections == 1


def test_aws_every_zone_beyond_a_zonal_gateway_in_one_error():
    # 400,000 x 1.25 = 500,000 and 450,000 x 1: both above 8 x 55,000 = 440,000; the fitting AZ is not named.
    demands = [
        AwsZoneDemand("a", 400_000, "x:443/tcp", SOURCE),
        AwsZoneDemand("b", 1_000, None, SOURCE),
        AwsZoneDemand("", 450_000, None, SOURCE, headroom=1),
    ]
    with pytest.raises(InfeasibleError) as info:
        plan_aws_nat_measured(demands)
    assert (info.value.required, info.value.available) == (500_000, 440_000)
    assert str(info.value) == (
        "connections: a 500,000 to x:443/tcp; (no zone label) 450,000 required but 8 IPs give at most 440,000 to "
        "one destination; spread the calls over more destination IPs, or use a regional NAT gateway (up to 32 IPs "
        "per AZ)"
    )


def test_aws_beyond_a_regional_gateways_32_ips_per_az_and_beyond_the_demand_bound():
    # 1,760,001 > 32 x 55,000 = 1,760,000; 10^9 x 1.25 passes the billion bound wirespeed sizes at all.
    demands = [AwsZoneDemand("b", 1_760_001, None, SOURCE, headroom=1), AwsZoneDemand("c", 10**9, None, SOURCE)]
    with pytest.raises(InfeasibleError) as info:
        plan_aws_nat_measured(demands, mode="regional")
    assert (info.value.required, info.value.available) == (1_250_000_000, 1_760_000)
    assert str(info.value) == (
        "connections: b 1,760,001; c 1,250,000,000 required but 32 IPs per AZ of a regional gateway give at most "
        "1,760,000 to one destination; spread the calls over more destination IPs"
    )
    (plan,) = plan_aws_nat_measured([AwsZoneDemand("b", 1_760_000, None, SOURCE, headroom=1)], mode="regional")
    assert (plan.plan.ips, plan.plan.warnings) == (32, ())

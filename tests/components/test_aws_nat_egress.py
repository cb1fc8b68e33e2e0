# ruff: noqa: F811  (the `engine` fixture is imported from tests/pulumi_engine.py and taken as a parameter)
"""``wirespeed.aws.NatEgress`` under Pulumi's mocks (tests/pulumi_engine.py): gateways, Elastic IPs, routes and
alarms exactly as registered, zonal and regional; IPs sized from the busiest destination; bad args rejected all at
once. A regional gateway's inputs are checked as the EC2 request they become against botocore's service model
(moto 5.2.1 cannot create one: see the test)."""

from __future__ import annotations

import logging

import boto3
import botocore.exceptions
import pulumi
import pytest
from botocore.stub import Stubber

from moto_aws import Moto, moto  # noqa: F401 (moto: the pytest fixture)
from pulumi_engine import engine, resolve  # noqa: F401 (engine: the pytest fixture)
from wirespeed.aws import NatEgress, NatEgressArgs
from wirespeed.aws.egress import plan_egress

COMPONENT = "wirespeed:index:NatEgress"
EIP = "aws:ec2/eip:Eip"
NAT = "aws:ec2/natGateway:NatGateway"
ROUTE = "aws:ec2/route:Route"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
SUBNETS = {"eu-west-1a": "subnet-pub-a", "eu-west-1b": "subnet-pub-b"}


def test_two_azs_three_ips_each_with_routes_and_alarms_under_pulumi_mocks(engine, caplog):
    caplog.set_level(logging.WARNING)
    egress = NatEgress(
        "egress",
        NatEgressArgs(
            public_subnet_ids=SUBNETS,
            peak_connections=120_000,
            private_route_table_ids={"eu-west-1a": "rtb-a", "eu-west-1b": "rtb-b"},
            alarm_actions=["arn:aws:sns:eu-west-1:123456789012:oncall"],
            tags={"team": "platform"},
        ),
    )
    assert resolve(egress.public_ips) == {
        "eu-west-1a": [f"ip-of-egress-eu-west-1a-eip-{i}" for i in range(3)],
        "eu-west-1b": [f"ip-of-egress-eu-west-1b-eip-{i}" for i in range(3)],
    }
    assert resolve(egress.nat_gateway_ids) == {
        "eu-west-1a": "egress-eu-west-1a-id",
        "eu-west-1b": "egress-eu-west-1b-id",
    }
    component = engine.one(COMPONENT)
    assert {r.parent for r in engine.registered if r.type != COMPONENT} == {component.urn}
    assert sorted(r.name for r in engine.of_type(EIP)) == [
        f"egress-eu-west-1{z}-eip-{i}" for z in "ab" for i in range(3)
    ]
    # Registration order races between independent resources: pick the first AZ's first IP by name.
    (first_eip,) = [r for r in engine.of_type(EIP) if r.name == "egress-eu-west-1a-eip-0"]
    assert first_eip.inputs == {
        "domain": "vpc",
        "tags": {"team": "platform", "Name": "egress-eu-west-1a-0"},
    }
    gateways = {r.name: r.inputs for r in engine.of_type(NAT)}
    assert gateways["egress-eu-west-1a"] == {
        "connectivityType": "public",
        "subnetId": "subnet-pub-a",
        "allocationId": "eipalloc-egress-eu-west-1a-eip-0",
        "secondaryAllocationIds": ["eipalloc-egress-eu-west-1a-eip-1", "eipalloc-egress-eu-west-1a-eip-2"],
        "tags": {"team": "platform", "Name": "egress-eu-west-1a"},
    }
    routes = {r.name: r.inputs for r in engine.of_type(ROUTE)}
    assert routes == {
        f"egress-eu-west-1{z}-default-route": {
            "routeTableId": f"rtb-{z}",
            "destinationCidrBlock": "0.0.0.0/0",
            "natGatewayId": f"egress-eu-west-1{z}-id",
        }
        for z in "ab"
    }
    alarms = {r.name: r.inputs for r in engine.of_type(ALARM)}
    assert alarms["egress-eu-west-1b-port-allocation"] == {
        "alarmDescription": "NAT gateway egress in eu-west-1b failed to allocate source ports: connections are "
        "failing. Sized for 120,000 connections to one destination (3 IP(s)); add IPs (up to 8) or spread calls "
        "over more destination IPs.",
        "namespace": "AWS/NATGateway",
        "metricName": "ErrorPortAllocation",
        "dimensions": {"NatGatewayId": "egress-eu-west-1b-id"},
        "statistic": "Sum",
        "period": 60,
        "evaluationPeriods": 1,
        "threshold": 0,
        "comparisonOperator": "GreaterThanThreshold",
        "treatMissingData": "notBreaching",
        "alarmActions": ["arn:aws:sns:eu-west-1:123456789012:oncall"],
        "tags": {"team": "platform"},
    }
    assert len(alarms) == 2
    quota = (
        "Warning: 3 IPs exceed the default quota of 2 Elastic IPs per NAT gateway; raise 'Elastic IP addresses per "
        "public NAT gateway' (Service Quotas: vpc L-5F53652F) to 3 first."
    )
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f"eu-west-1a: {quota}",
        f"eu-west-1b: {quota}",
        "Warning: 6 Elastic IPs in all exceed the default quota of 5 Elastic IPs per Region; raise 'Elastic IP "
        "addresses per Region' (Service Quotas: ec2 L-0263D0A3) to at least 6 (plus the Elastic IPs the Region "
        "already holds) first.",
    ]


def test_one_ip_no_routes_no_alarms_under_pulumi_mocks(engine):
    egress = NatEgress(
        "small", NatEgressArgs(public_subnet_ids={"us-east-1a": "subnet-1"}, peak_connections=40_000, alarms=False)
    )
    resolve(egress.public_ips)
    (gateway,) = engine.of_type(NAT)
    assert "secondaryAllocationIds" not in gateway.inputs
    assert engine.of_type(ROUTE) == []
    assert engine.of_type(ALARM) == []
    assert len(engine.of_type(EIP)) == 1


def test_per_az_demand_sizes_each_gateway():
    plan, problems = plan_egress(SUBNETS, {"eu-west-1a": 55_000, "eu-west-1b": 55_001})
    assert problems == []
    assert plan is not None
    assert [(z.availability_zone, z.plan.ips) for z in plan.zones] == [("eu-west-1a", 1), ("eu-west-1b", 2)]
    assert plan.to_json()["total_ips"] == 3
    assert plan.gateways == 2


def test_every_problem_is_listed_and_nothing_registers_under_pulumi_mocks(engine):
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        NatEgress(
            "bad",
            NatEgressArgs(
                public_subnet_ids={"eu-west-1a": "s1", "EU WEST": "s2"},
                peak_connections=500_000,
                private_route_table_ids={"eu-west-1c": "rtb-c"},
                alarms=False,
                alarm_actions=["arn:aws:sns:eu-west-1:1:x"],
                measured_from="two\nlines",
            ),
        )
    assert str(caught.value) == (
        "invalid NatEgressArgs:\n"
        "  public_subnet_ids['EU WEST']: 'EU WEST' is not allowed; allowed: an AZ name such as 'eu-west-1a'\n"
        "  peak_connections: 500000 is not allowed; allowed: 500,000 required but 8 IPs give at most 440,000 to one "
        "destination; use a regional NAT gateway (up to 32 IPs per AZ) or spread calls over more destination IPs\n"
        "  private_route_table_ids: ['eu-west-1c'] is not allowed; allowed: AZs of public_subnet_ids\n"
        "  alarm_actions: 'given' is not allowed; allowed: only with alarms=True\n"
        "  measured_from: 'two\\nlines' is not allowed; allowed: where the peak was measured, one line of at most 512 "
        "characters (the source line `wirespeed size ... --from-prometheus` prints)"
    )
    assert engine.registered == []


ZONES = ["eu-west-1a", "eu-west-1b"]


def test_regional_manual_one_gateway_with_each_azs_elastic_ips_under_pulumi_mocks(engine, caplog):
    caplog.set_level(logging.WARNING)
    egress = NatEgress(
        "egress",
        NatEgressArgs(
            mode="regional",
            vpc_id="vpc-0abc",
            availability_zones=ZONES,
            # 600,000 to one destination: more than a zonal gateway's 8 IPs carry, 11 of a regional AZ's 32.
            peak_connections={"eu-west-1a": 120_000, "eu-west-1b": 600_000},
            private_route_table_ids={"eu-west-1a": "rtb-a", "eu-west-1b": "rtb-b"},
            tags={"team": "platform"},
        ),
    )
    assert resolve(egress.nat_gateway_ids) == {"eu-west-1a": "egress-id", "eu-west-1b": "egress-id"}
    assert resolve(egress.public_ips) == {
        "eu-west-1a": [f"ip-of-egress-eu-west-1a-eip-{i}" for i in range(3)],
        "eu-west-1b": [f"ip-of-egress-eu-west-1b-eip-{i}" for i in range(11)],
    }
    (gateway,) = engine.of_type(NAT)
    assert gateway.name == "egress"
    assert gateway.inputs == {
        "availabilityMode": "regional",
        "connectivityType": "public",
        "vpcId": "vpc-0abc",
        "availabilityZoneAddresses": [
            {
                "availabilityZone": "eu-west-1a",
                "allocationIds": [f"eipalloc-egress-eu-west-1a-eip-{i}" for i in range(3)],
            },
            {
                "availabilityZone": "eu-west-1b",
                "allocationIds": [f"eipalloc-egress-eu-west-1b-eip-{i}" for i in range(11)],
            },
        ],
        "tags": {"team": "platform", "Name": "egress"},
    }
    assert len(engine.of_type(EIP)) == 14
    routes = {r.name: r.inputs["natGatewayId"] for r in engine.of_type(ROUTE)}
    assert routes == {"egress-eu-west-1a-default-route": "egress-id", "egress-eu-west-1b-default-route": "egress-id"}
    (alarm,) = engine.of_type(ALARM)
    assert alarm.name == "egress-port-allocation"
    assert alarm.inputs["dimensions"] == {"NatGatewayId": "egress-id"}
    assert alarm.inputs["alarmDescription"] == (
        "Regional NAT gateway egress failed to allocate source ports: connections are failing. Sized per AZ for "
        "connections to one destination: eu-west-1a 120,000 (3 IP(s)), eu-west-1b 600,000 (11 IP(s)); add Elastic "
        "IPs in the AZ that ran out (up to 32 per AZ), or spread calls over more destination IPs."
    )
    # No per-gateway quota warning (that quota is documented for zonal gateways); the Region's Elastic IPs are short.
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "Warning: 14 Elastic IPs in all exceed the default quota of 5 Elastic IPs per Region; raise 'Elastic IP "
        "addresses per Region' (Service Quotas: ec2 L-0263D0A3) to at least 14 (plus the Elastic IPs the Region "
        "already holds) first."
    ]
    assert egress.plan.to_json()["gateways"] == 1


def test_regional_automatic_creates_no_elastic_ips_and_reads_what_aws_assigned_under_pulumi_mocks(engine, caplog):
    caplog.set_level(logging.WARNING)
    engine.regional_nat_addresses = [
        {"availabilityZone": "eu-west-1a", "publicIp": "198.51.100.7", "allocationId": "eipalloc-aws-1"},
        {"availabilityZone": "eu-west-1b", "publicIp": "198.51.100.8", "allocationId": "eipalloc-aws-2"},
        {"availabilityZone": "eu-west-1b", "publicIp": "198.51.100.9", "allocationId": "eipalloc-aws-3"},
    ]
    egress = NatEgress(
        "auto",
        NatEgressArgs(
            mode="regional", ip_mode="automatic", vpc_id="vpc-0abc", availability_zones=ZONES, peak_connections=900_000
        ),
    )
    assert resolve(egress.public_ips) == {
        "eu-west-1a": ["198.51.100.7"],
        "eu-west-1b": ["198.51.100.8", "198.51.100.9"],
    }
    (gateway,) = engine.of_type(NAT)
    assert gateway.inputs == {
        "availabilityMode": "regional",
        "connectivityType": "public",
        "vpcId": "vpc-0abc",
        "tags": {"Name": "auto"},
    }
    assert engine.of_type(EIP) == []
    # The floor AWS must reach in each AZ at the peak: 900,000 / 55,000 -> 17 IPs; no quota of yours is used.
    plan = egress.plan.to_json()
    assert [(z["availability_zone"], z["ips"]) for z in plan["zones"]] == [("eu-west-1a", 17), ("eu-west-1b", 17)]
    assert (plan["ip_mode"], plan["quotas"], plan["warnings"]) == ("automatic", [], [])
    assert [r for r in caplog.records if r.levelno == logging.WARNING] == []


def test_regional_takes_az_ids_as_availability_zone_id_under_pulumi_mocks(engine):
    egress = NatEgress(
        "ids",
        NatEgressArgs(
            mode="regional", vpc_id="vpc-1", availability_zones=["euw1-az1"], peak_connections=1, alarms=False
        ),
    )
    resolve(egress.public_ips)
    (gateway,) = engine.of_type(NAT)
    assert gateway.inputs["availabilityZoneAddresses"] == [
        {"availabilityZoneId": "euw1-az1", "allocationIds": ["eipalloc-ids-euw1-az1-eip-0"]}
    ]


@pytest.mark.parametrize(
    ("args", "problems"),
    [
        pytest.param(
            NatEgressArgs(mode="regional", peak_connections=1000, public_subnet_ids=SUBNETS),
            [
                "public_subnet_ids: 'given' is not allowed; allowed: only with mode 'zonal' (a regional gateway has "
                "none)",
                "availability_zones: None is not allowed; allowed: the AZ names the gateway serves",
                "vpc_id: None is not allowed; allowed: the VPC's ID: a regional gateway is created in a VPC",
            ],
            id="regional-needs-vpc-and-zones-not-subnets",
        ),
        pytest.param(
            NatEgressArgs(mode="zonal", ip_mode="automatic", peak_connections=1000, public_subnet_ids=SUBNETS),
            [
                "ip_mode: 'automatic' is not allowed; allowed: 'manual' with mode 'zonal' (only a regional gateway "
                "adds IPs)"
            ],
            id="zonal-has-no-automatic-ips",
        ),
        pytest.param(
            NatEgressArgs(mode="global", ip_mode="auto", peak_connections=1000, public_subnet_ids=SUBNETS),
            [
                "mode: 'global' is not allowed; allowed: 'zonal' or 'regional'",
                "ip_mode: 'auto' is not allowed; allowed: 'manual' or 'automatic'",
            ],
            id="unknown-modes",
        ),
        pytest.param(
            NatEgressArgs(
                mode="regional",
                vpc_id="vpc-1",
                availability_zones=ZONES,
                peak_connections={"eu-west-1a": 1_760_001, "eu-west-1b": 0},
            ),
            [
                "peak_connections['eu-west-1a']: 1760001 is not allowed; allowed: 1,760,001 required but 32 IPs per AZ "
                "of a regional gateway give at most 1,760,000 to one destination; spread calls over more destination "
                "IPs (each IP, port and protocol counts on its own)",
                "peak_connections['eu-west-1b']: 0 is not allowed; allowed: must be a whole number between 1 and "
                "1,000,000,000",
            ],
            id="regional-beyond-32-ips-per-az",
        ),
    ],
)
def test_mode_specific_inputs_are_refused_all_at_once_under_pulumi_mocks(engine, args, problems):
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        NatEgress("bad", args)
    assert str(caught.value).splitlines() == ["invalid NatEgressArgs:", *[f"  {p}" for p in problems]]
    assert engine.registered == []


def test_a_peak_beyond_a_zonal_gateway_fits_a_regional_one():
    zonal, problems = plan_egress(SUBNETS, 600_000)
    assert zonal is None
    assert "use a regional NAT gateway (up to 32 IPs per AZ)" in problems[0].allowed
    regional, problems = plan_egress(None, 600_000, mode="regional", availability_zones=list(SUBNETS))
    assert problems == []
    assert regional is not None
    assert [z.plan.ips for z in regional.zones] == [11, 11]


def create_nat_gateway_request(inputs: dict) -> dict:
    """The CreateNatGateway parameters the AWS provider sends for a regional gateway's registered inputs: each
    engine property under its EC2 API name (the provider's nat_gateway create: AvailabilityMode, VpcId,
    ConnectivityType, AvailabilityZoneAddresses, and the tags as TagSpecifications of ResourceType natgateway)."""
    params = {
        "AvailabilityMode": inputs["availabilityMode"],
        "ConnectivityType": inputs["connectivityType"],
        "VpcId": inputs["vpcId"],
        "TagSpecifications": [
            {"ResourceType": "natgateway", "Tags": [{"Key": k, "Value": v} for k, v in inputs["tags"].items()]}
        ],
    }
    if "availabilityZoneAddresses" in inputs:
        params["AvailabilityZoneAddresses"] = [
            {key[0].upper() + key[1:]: value for key, value in address.items()}
            for address in inputs["availabilityZoneAddresses"]
        ]
    return params


# What DescribeNatGateways/CreateNatGateway answer for a regional gateway in manual mode, in the EC2 model's shape
# (NatGateway: AvailabilityMode, AutoScalingIps, AutoProvisionZones, RouteTableId, per-address AvailabilityZone).
REGIONAL_RESPONSE = {
    "NatGateway": {
        "NatGatewayId": "nat-0regional",
        "VpcId": "vpc-0abc",
        "State": "pending",
        "ConnectivityType": "public",
        "AvailabilityMode": "regional",
        "AutoScalingIps": "disabled",
        "AutoProvisionZones": "disabled",
        "RouteTableId": "rtb-0nat",
        "NatGatewayAddresses": [
            {"AllocationId": "eipalloc-1", "AvailabilityZone": "eu-west-1a", "IsPrimary": True, "Status": "associating"}
        ],
    }
}


def test_regional_inputs_are_a_create_nat_gateway_request_botocore_validates_and_moto_cannot_serve(engine, moto):
    for ip_mode in ("manual", "automatic"):
        egress = NatEgress(
            f"shape-{ip_mode}",
            NatEgressArgs(
                mode="regional",
                ip_mode=ip_mode,
                vpc_id="vpc-0abc",
                availability_zones=["eu-west-1a", "euw1-az2"],
                peak_connections=120_000,
                alarms=False,
            ),
        )
        resolve(egress.public_ips)
    requests = [create_nat_gateway_request(r.inputs) for r in engine.of_type(NAT)]
    assert [len(r.get("AvailabilityZoneAddresses", [])) for r in requests] == [2, 0]
    assert requests[0]["AvailabilityZoneAddresses"][1] == {
        "AvailabilityZoneId": "euw1-az2",
        "AllocationIds": [f"eipalloc-shape-manual-euw1-az2-eip-{i}" for i in range(3)],
    }
    ec2 = boto3.client("ec2", region_name="eu-west-1", aws_access_key_id="testing", aws_secret_access_key="testing")
    with Stubber(ec2) as stub:
        for request in requests:
            # botocore validates the parameters against its EC2 model before the stub answers, and the answer against
            # the model's output shape.
            stub.add_response("create_nat_gateway", REGIONAL_RESPONSE, request)
            assert ec2.create_nat_gateway(**request)["NatGateway"]["AvailabilityMode"] == "regional"
        stub.add_response("create_nat_gateway", REGIONAL_RESPONSE)
        with pytest.raises(botocore.exceptions.ParamValidationError, match="AvailabilityZones"):
            ec2.create_nat_gateway(**requests[0], AvailabilityZones=["eu-west-1a"])  # the model's names, no others
    # moto 5.2.1's CreateNatGateway reads only SubnetId, AllocationId, ConnectivityType and TagSpecifications
    # (moto/ec2/responses/nat_gateways.py): the regional request has no subnet, so moto refuses it. When moto learns
    # regional gateways this fails, and the test should create them there instead.
    with pytest.raises(botocore.exceptions.ClientError, match=r"InvalidSubnetID\.NotFound"):
        moto.client("ec2").create_nat_gateway(**requests[0])

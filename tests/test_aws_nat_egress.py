# ruff: noqa: F811  (the `engine` fixture is imported from tests/pulumi_engine.py and taken as a parameter)
"""``wirespeed.aws.NatEgress`` under Pulumi's mocks (tests/pulumi_engine.py): gateways, Elastic IPs, routes and
alarms exactly as registered; IPs sized from the busiest destination; bad args rejected all at once."""

from __future__ import annotations

import logging

import pulumi
import pytest

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
        "Warning: 3 IPs exceed the default quota of 2 Elastic IPs per NAT gateway; request an increase "
        "(Service Quotas, 'Elastic IP addresses per public NAT gateway') first."
    )
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f"eu-west-1a: {quota}",
        f"eu-west-1b: {quota}",
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
            ),
        )
    assert str(caught.value) == (
        "invalid NatEgressArgs:\n"
        "  public_subnet_ids['EU WEST']: 'EU WEST' is not allowed; allowed: an AZ name such as 'eu-west-1a'\n"
        "  peak_connections: 500000 is not allowed; allowed: 500,000 required but 8 IPs give at most 440,000 to one "
        "destination; add NAT gateways (one per AZ) or spread calls over more destination IPs\n"
        "  private_route_table_ids: ['eu-west-1c'] is not allowed; allowed: AZs that have a public subnet in "
        "public_subnet_ids\n"
        "  alarm_actions: 'given' is not allowed; allowed: only with alarms=True"
    )
    assert engine.registered == []

# ruff: noqa: F811  (the moto fixtures are imported from tests/moto_aws.py and taken as parameters)
"""`wirespeed audit aws` against moto's real server (tests/moto_aws.py): the console script as users run it, boto3
over HTTP to 127.0.0.1, resources and CloudWatch data created through the API beforehand.

What moto 5.2.1 cannot serve is answered in-process instead, and only that call: regional NAT gateways
(moto's CreateNatGateway reads no AvailabilityMode, VpcId or AvailabilityZoneAddresses and its DescribeNatGateways
returns no AvailabilityMode, AutoScalingIps or per-address AvailabilityZone) and the two Elastic IP quotas
(moto's Service Quotas serves GetServiceQuota for its own table of VPC quotas, which lacks L-5F53652F, and no EC2
quota such as L-0263D0A3). Those answers are validated against botocore's service model before they are returned;
CloudWatch, EC2's other calls and EKS stay moto over HTTP."""

from __future__ import annotations

import base64
import copy
import gzip
import itertools
import json
import os
import subprocess
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from pathlib import Path
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.validate import ParamValidator

from clirun import WIRESPEED
from moto_aws import TUNED_USER_DATA, UNTUNED_USER_DATA, Account, Moto, account, moto  # noqa: F401
from wirespeed.audit.aws import (
    Inventory,
    KarpenterInstance,
    NatGateway,
    NatZone,
    NodeGroup,
    QuotaReading,
    analyse,
    has_tuning,
    tuning_gap,
)
from wirespeed.audit.aws_collect import AwsUnreachable, Target, collect
from wirespeed.install_hint import install_command
from wirespeed.sizing.nat_gateway import NAT_GATEWAY_EIPS, REGION_EIPS
from wirespeed.userdata import SCRIPT_MARKER


def audit(moto: Moto, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | moto.env()
    return subprocess.run(
        [WIRESPEED, "audit", "aws", "--endpoint-url", moto.url, "--region", "eu-west-1", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def audit_json(moto: Moto, *args: str) -> tuple[int, dict]:
    out = audit(moto, *args, "--json")
    assert out.stderr == ""
    return out.returncode, json.loads(out.stdout)


def test_a_clean_account_exits_0(account, moto):
    account.nat_gateway()
    account.node_group("prod", "network", ["c6in.8xlarge", "c6in.16xlarge"], TUNED_USER_DATA)
    account.karpenter_instances("c7gn.4xlarge", 2)
    code, report = audit_json(moto)
    assert code == 0
    assert report["findings"] == []
    assert [g["instance_types"] for g in report["node_groups"]] == [["c6in.8xlarge", "c6in.16xlarge"]]
    assert report["node_groups"][0]["tuned"] is True
    assert sorted(i["instance_type"] for i in report["karpenter_instances"]) == ["c7gn.4xlarge", "c7gn.4xlarge"]
    prose = audit(moto)
    assert (prose.returncode, prose.stdout.splitlines()[-1]) == (0, "No findings.")


def test_finds_the_nat_gateway_that_drops_connections(account, moto):
    quiet = account.nat_gateway()
    dropping = account.nat_gateway()
    account.metric(dropping, "ErrorPortAllocation", 120, hours_ago=30)
    account.metric(dropping, "ErrorPortAllocation", 3, hours_ago=2)
    account.metric(dropping, "PacketsDropCount", 40, hours_ago=2)
    account.metric(quiet, "PacketsDropCount", 0, hours_ago=2)
    code, report = audit_json(moto, "--days", "3")
    assert code == 1
    gateways = {g["id"]: g for g in report["nat_gateways"]}
    assert gateways[dropping] == {
        "id": dropping,
        "subnet_id": account.subnet,
        "ips": 1,
        "error_port_allocation": 123.0,
        "packets_dropped": 40.0,
        "availability_mode": "zonal",
        "auto_scaling_ips": None,
        "zones": [],
    }
    assert gateways[quiet]["error_port_allocation"] == 0
    assert report["findings"] == [
        {
            "kind": "nat-port-allocation-errors",
            "resource": dropping,
            "message": "123 port allocation error(s) in 3 day(s): connections failed. 1 IP(s) carry 55,000 "
            "connections to one destination; add Elastic IPs (secondaryAllocationIds, up to 8) "
            "(`wirespeed size aws-natgw --connections N`)",
        },
        {
            "kind": "nat-packets-dropped",
            "resource": dropping,
            "message": "40 packet(s) dropped in 3 day(s) (PacketsDropCount)",
        },
    ]
    # The window matters: 30 hours ago is outside one day.
    _, one_day = audit_json(moto, "--days", "1")
    assert {g["id"]: g["error_port_allocation"] for g in one_day["nat_gateways"]}[dropping] == 3.0


def test_flags_general_purpose_types_and_untuned_launch_templates(account, moto):
    account.node_group("prod", "general", ["m7i.large"], UNTUNED_USER_DATA)
    account.node_group("prod", "bare", ["c6in.xlarge"], None)
    account.karpenter_instances("c5.large", 1, pool="batch")
    code, report = audit_json(moto)
    assert code == 1
    kinds = sorted((f["kind"], f["resource"].split(" ")[0]) for f in report["findings"])
    (instance,) = report["karpenter_instances"]
    assert kinds == sorted(
        [
            ("not-network-optimised", "prod/general"),
            ("user-data-without-tuning", "prod/general"),
            ("user-data-without-tuning", "prod/bare"),
            ("not-network-optimised", instance["id"]),
        ]
    )
    messages = {(f["kind"], f["resource"]): f["message"] for f in report["findings"]}
    assert messages[("not-network-optimised", "prod/general")] == (
        "m7i.large is not network-optimised: instances over their bandwidth allowance drop packets (ethtool -S "
        "bw_in/out_allowance_exceeded); use a network-optimised type, e.g. c6in.large (3.125 Gb/s sustained)"
    )
    assert messages[("user-data-without-tuning", "prod/bare")] == (
        "no launch template: no boot tuning (rings and backlog stay at driver defaults until the node agent runs); "
        "build the group with wirespeed.aws.NetworkOptimizedNodeGroup"
    )
    assert messages[("not-network-optimised", f"{instance['id']} (NodePool batch)")].endswith(
        "use a network-optimised type, e.g. c6in.large (3.125 Gb/s sustained)"
    )


def test_cluster_option_limits_node_groups_and_karpenter_instances(account, moto):
    account.node_group("prod", "network", ["c6in.8xlarge"], TUNED_USER_DATA)
    account.node_group("staging", "general", ["m7i.large"], UNTUNED_USER_DATA)
    account.karpenter_instances("c6in.8xlarge", 1, cluster="prod")
    account.karpenter_instances("c5.large", 1, cluster="staging")
    code, report = audit_json(moto, "--cluster", "prod")
    assert (code, report["clusters"], report["findings"]) == (0, ["prod"], [])
    assert [i["instance_type"] for i in report["karpenter_instances"]] == ["c6in.8xlarge"]


def test_list_calls_are_paginated_and_only_node_groups_are_described_one_by_one(account, moto):
    for _ in range(3):
        account.nat_gateway()
    for index in range(4):
        account.node_group("prod", f"ng{index}", ["c6in.8xlarge"], TUNED_USER_DATA)
    account.karpenter_instances("c6in.8xlarge", 5)
    _, report = audit_json(moto)
    assert report["api_calls"] == {
        "cloudwatch:GetMetricData": 1,
        "ec2:DescribeAddresses": 1,
        "ec2:DescribeInstances": 1,
        "ec2:DescribeLaunchTemplateVersions": 1,
        "ec2:DescribeNatGateways": 1,
        "eks:DescribeNodegroup": 4,
        "eks:ListClusters": 1,
        "eks:ListNodegroups": 1,
        "service-quotas:GetServiceQuota": 2,
    }


@pytest.mark.parametrize(
    ("args", "error"),
    [
        pytest.param(
            ["--endpoint-url", "http://127.0.0.1:9", "--region", "eu-west-1"],
            'error: audit aws: cannot reach AWS: Could not connect to the endpoint URL: "http://127.0.0.1:9/clusters"',
            id="nothing-listening",
        ),
        pytest.param(
            ["--endpoint-url", "ftp://x"],
            "error: --endpoint-url: 'ftp://x' is not allowed: a URL starting with http:// or https://",
            id="bad-endpoint",
        ),
        pytest.param(
            ["--days", "0"],
            "error: --days: 0 is not allowed: a whole number of days from 1 to 455 (CloudWatch retention)",
            id="days-zero",
        ),
    ],
)
def test_unreachable_or_bad_flags_exit_2_with_one_line(args, error):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | {
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "y",
    }
    out = subprocess.run(
        [WIRESPEED, "audit", "aws", *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert (out.returncode, out.stdout, out.stderr) == (2, "", error + "\n")


def test_no_credentials_and_no_region_are_one_line_each():
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | {
        "AWS_CONFIG_FILE": "/nonexistent",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        "AWS_EC2_METADATA_DISABLED": "true",
    }

    def run(*a):
        return subprocess.run(
            [WIRESPEED, "audit", "aws", *a],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    assert run().stderr == "error: --region: no region given and none configured (AWS_REGION or ~/.aws/config)\n"
    assert run("--region", "eu-west-1").stderr == (
        "error: audit aws: cannot reach AWS: no credentials found (environment, ~/.aws, or instance role)\n"
    )


def test_analysis_of_an_inventory_without_aws():
    inventory = Inventory(
        region="eu-west-1",
        clusters=["prod"],
        days=7,
        nat_gateways=[NatGateway("nat-1", "subnet-1", ips=8, error_port_allocation=5)],
        node_groups=[NodeGroup("prod", "arm", ("c7g.2xlarge",), "lt-1", TUNED_USER_DATA)],
        karpenter_instances=[KarpenterInstance("i-1", "r6in.large", "default")],
    )
    report = analyse(inventory)
    assert [(f.kind, f.resource) for f in report.findings] == [
        ("nat-port-allocation-errors", "nat-1"),
        ("not-network-optimised", "prod/arm"),
    ]
    assert "it has the maximum 8 IPs" in report.findings[0].message
    # c7g is not in the catalog: the suggestion keeps the size and the Graviton architecture.
    assert report.findings[1].message.endswith("e.g. c7gn.2xlarge (25 Gb/s sustained)")
    assert has_tuning(TUNED_USER_DATA)
    assert not has_tuning(UNTUNED_USER_DATA)
    assert not has_tuning("not base64 at all!")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_user_data_is_parsed_not_matched_by_a_marker():
    """Tuned user data gzip-compressed (cloud-init and nodeadm accept it) is tuned; wirespeed's marker comment
    followed by a backlog of 1,000 is not; a gzip part inside MIME multipart is read too."""
    tuned_text = base64.b64decode(TUNED_USER_DATA)
    assert has_tuning(_b64(gzip.compress(tuned_text)))
    marker_then_1000 = f"#!/bin/sh\n{SCRIPT_MARKER} profile x\nsysctl -w net.core.netdev_max_backlog=1000\n"
    assert not has_tuning(_b64(marker_then_1000.encode()))
    assert tuning_gap(_b64(marker_then_1000.encode()), ["c6in.8xlarge"]) == (
        "sets net.core.netdev_max_backlog to 1,000, below the minimum 16,255 for c6in.8xlarge's line rate 50 Gb/s "
        "(catalog)"
    )
    part = MIMEApplication(gzip.compress(b"#!/bin/sh\nsysctl -w net.core.netdev_max_backlog=32768\n"), "x-gzip")
    mime = MIMEMultipart()
    mime.attach(part)
    assert has_tuning(_b64(mime.as_bytes()))
    # Written twice, the smaller value is what a node may end up with.
    twice = (
        b"#!/bin/sh\nsysctl -w net.core.netdev_max_backlog=32768\necho 1000 > /proc/sys/net/core/netdev_max_backlog\n"
    )
    assert not has_tuning(_b64(twice))
    # The minimum follows the node group's fastest instance type, as the policy's does; unknown types: 25 Gb/s.
    balanced = b"#!/bin/sh\nsysctl -w net.core.netdev_max_backlog=8192\n"
    assert has_tuning(_b64(balanced), ["m6i.xlarge"]) == (tuning_gap(_b64(balanced)) is None)
    assert not has_tuning(_b64(balanced), ["c6in.32xlarge", "m6i.xlarge"])
    # A gzip bomb is read only up to the cap, and never crashes.
    assert tuning_gap(_b64(gzip.compress(b"#" * (64 << 20)))) == UNSET_AT_25_GBPS
    # Tuning commented out is not run: untuned, however it reads.
    commented = b"#!/bin/sh\n# sysctl -w net.core.netdev_max_backlog=32768\n"
    assert tuning_gap(_b64(commented)) == UNSET_AT_25_GBPS


# Unset, nodes keep the kernel default, judged as that value written out (sizing.queues.Need).
UNSET_AT_25_GBPS = (
    "does not set net.core.netdev_max_backlog, so nodes keep the kernel default 1,000, below the minimum 8,128 for "
    "an assumed line rate of 25 Gb/s (no instance type in wirespeed's catalog)"
)


def test_gzip_tuned_and_marker_only_node_groups_through_moto(account, moto):
    tuned_text = base64.b64decode(TUNED_USER_DATA)
    account.node_group("prod", "gzipped", ["c6in.8xlarge"], _b64(gzip.compress(tuned_text)))
    marker = f"#!/bin/sh\n{SCRIPT_MARKER} profile x\nsysctl -w net.core.netdev_max_backlog=1000\n".encode()
    account.node_group("prod", "marker", ["c6in.8xlarge"], _b64(marker))
    code, report = audit_json(moto)
    assert code == 1
    tuned = {g["name"]: g["tuned"] for g in report["node_groups"]}
    assert tuned == {"gzipped": True, "marker": False}
    assert [(f["kind"], f["resource"]) for f in report["findings"]] == [("user-data-without-tuning", "prod/marker")]


def test_a_botocore_that_cannot_describe_regional_gateways_is_refused(moto, tmp_path):
    """botocore parses only what its EC2 model names: with a model from before regional NAT gateways (here the
    installed one without those members, put first on AWS_DATA_PATH as botocore's loader allows) a regional gateway
    would be read as zonal. The audit refuses in one line instead of reporting what it could not read."""
    import botocore

    source = Path(botocore.__file__).parent / "data" / "ec2" / "2016-11-15" / "service-2.json.gz"
    model = json.loads(gzip.decompress(source.read_bytes()))
    del model["shapes"]["NatGateway"]["members"]["AvailabilityMode"]
    del model["shapes"]["NatGatewayAddress"]["members"]["AvailabilityZone"]
    older = tmp_path / "ec2" / "2016-11-15"
    older.mkdir(parents=True)
    (older / "service-2.json").write_text(json.dumps(model))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | moto.env()
    out = subprocess.run(
        [WIRESPEED, "audit", "aws", "--endpoint-url", moto.url, "--region", "eu-west-1"],
        capture_output=True, text=True, env=env | {"AWS_DATA_PATH": str(tmp_path)}, timeout=120, check=False,
    )  # fmt: skip
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == (
        f"error: botocore: {botocore.__version__} is not allowed: its EC2 model has no NatGateway.AvailabilityMode, "
        "NatGatewayAddress.AvailabilityZone, so regional NAT gateways would be read as zonal ones; allowed: a "
        f"botocore whose EC2 model describes them ({install_command(['-U', 'boto3'])})\n"
    )


def test_quotas_moto_does_not_serve_are_reported_unreadable_and_the_default_stands(account, moto):
    account.nat_gateway(ips=2)
    code, report = audit_json(moto)
    assert code == 0
    assert report["elastic_ips"] == 2
    unreadable = (
        "GetServiceQuota refused: NoSuchResourceException: This service is not available in the current Region. "
        "Choose a different Region or a different service."
    )
    assert report["quotas"] == [
        {
            "name": "Elastic IP addresses per public NAT gateway",
            "service_code": "vpc",
            "quota_code": "L-5F53652F",
            "default": 2,
            "value": None,
            "unreadable": unreadable,
        },
        {
            "name": "Elastic IP addresses per Region",
            "service_code": "ec2",
            "quota_code": "L-0263D0A3",
            "default": 5,
            "value": None,
            "unreadable": unreadable,
        },
    ]
    prose = audit(moto).stdout
    assert (
        "Quota 'Elastic IP addresses per public NAT gateway' (Service Quotas: vpc L-5F53652F): AWS's default 2 (the "
        f"account's value could not be read) ({unreadable})."
    ) in prose


def answer(client: Any, operation: str, body: Any) -> None:
    """Answer ``operation`` on ``client`` with ``body`` (or ``body(params)``, the request's parameters) instead of
    sending it, once botocore has validated the answer against the operation's output shape in its service model
    (as botocore's Stubber does)."""
    model = client.meta.service_model.operation_model(operation)

    def respond(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        out = copy.deepcopy(body(params["body"]) if callable(body) else body)
        report = ParamValidator().validate(out, model.output_shape)
        assert not report.has_errors(), report.generate_report()
        return AWSResponse("", 200, {}, None), out

    client.meta.events.register(f"before-call.{client.meta.service_model.service_id.hyphenize()}.{operation}", respond)


def quota_record(request: str | bytes, values: dict[str, float]) -> dict[str, Any]:
    """GetServiceQuota's Quota for the requested code (Service Quotas API reference: ServiceQuota)."""
    asked = json.loads(request)
    return {
        "ServiceCode": asked["ServiceCode"],
        "QuotaCode": asked["QuotaCode"],
        "Value": values[asked["QuotaCode"]],
        "Unit": "None",
        "Adjustable": True,
        "GlobalQuota": False,
    }


def regional_gateway(gateway_id: str, auto_scaling: str, ips: dict[str, int]) -> dict[str, Any]:
    """A regional NAT gateway as DescribeNatGateways returns it (EC2 API reference: NatGateway, NatGatewayAddress)."""
    addresses = [
        {
            "AllocationId": f"eipalloc-{gateway_id}-{az}-{i}",
            "PublicIp": f"198.51.100.{10 * n + i}",
            "AvailabilityZone": az,
            "IsPrimary": i == 0,
            "Status": "succeeded",
        }
        for n, (az, count) in enumerate(ips.items())
        for i in range(count)
    ]
    return {
        "NatGatewayId": gateway_id,
        "VpcId": "vpc-0abc",
        "State": "available",
        "ConnectivityType": "public",
        "AvailabilityMode": "regional",
        "AutoScalingIps": auto_scaling,
        "AutoProvisionZones": auto_scaling,
        "RouteTableId": "rtb-0nat",
        "NatGatewayAddresses": addresses,
    }


def test_regional_gateways_per_az_ips_and_errors_with_the_accounts_quota(account, moto):
    """DescribeNatGateways and GetServiceQuota answered from the service model (moto lacks both here); the per-AZ
    ErrorPortAllocation series live in moto's CloudWatch and are found through ListMetrics."""
    zonal = account.nat_gateway(ips=2)
    account.metric(zonal, "ErrorPortAllocation", 4, hours_ago=2)
    manual = regional_gateway("nat-0manual", "disabled", {"eu-west-1a": 2, "eu-west-1b": 1})
    automatic = regional_gateway("nat-0auto", "enabled", {"eu-west-1a": 32})
    for az, errors in (("eu-west-1a", 0), ("eu-west-1b", 17)):
        account.metric("nat-0manual", "ErrorPortAllocation", errors, hours_ago=3, az=az)
    account.metric("nat-0manual", "ErrorPortAllocation", 17, hours_ago=3)
    account.metric("nat-0auto", "ErrorPortAllocation", 9, hours_ago=3, az="eu-west-1a")
    account.metric("nat-0auto", "ErrorPortAllocation", 9, hours_ago=3)
    zonal_json = account.ec2.describe_nat_gateways(NatGatewayIds=[zonal])["NatGateways"][0]
    zonal_json["CreateTime"] = zonal_json["CreateTime"].isoformat()

    def hook(service: str, client: Any) -> None:
        if service == "ec2":
            answer(client, "DescribeNatGateways", {"NatGateways": [zonal_json, manual, automatic]})
        if service == "service-quotas":
            # The applied values: the per-gateway quota at AWS's default 2, the Region's Elastic IPs raised to 20.
            values = {"L-5F53652F": 2.0, "L-0263D0A3": 20.0}
            answer(client, "GetServiceQuota", lambda request: {"Quota": quota_record(request, values)})

    with pytest.MonkeyPatch.context() as env:
        for key, value in moto.env().items():
            env.setenv(key, value)
        inventory = collect(Target("eu-west-1", None, 7, moto.url), hook)
    gateways = {g.id: g for g in inventory.nat_gateways}
    assert gateways["nat-0manual"].zones == (NatZone("eu-west-1a", 2, 0.0), NatZone("eu-west-1b", 1, 17.0))
    assert gateways["nat-0auto"].zones == (NatZone("eu-west-1a", 32, 9.0),)
    assert (gateways["nat-0manual"].auto_scaling_ips, gateways[zonal].availability_mode) == ("disabled", "zonal")
    assert inventory.api_calls["cloudwatch:ListMetrics"] == 1
    assert inventory.api_calls["cloudwatch:GetMetricData"] == 1
    assert (inventory.quota(NAT_GATEWAY_EIPS).value, inventory.quota(REGION_EIPS).value) == (2.0, 20.0)
    report = analyse(inventory)
    messages = {f.resource: f.message for f in report.findings}
    assert messages == {
        # moto keeps a zonal gateway's primary address only (it ignores SecondaryAllocationIds).
        zonal: "4 port allocation error(s) in 7 day(s): connections failed. 1 IP(s) carry 55,000 connections to "
        "one destination; add Elastic IPs (secondaryAllocationIds, up to 8) (`wirespeed size aws-natgw --connections "
        "N`)",
        "nat-0manual (eu-west-1b)": "17 port allocation error(s) in 7 day(s) in eu-west-1b: connections failed. 1 "
        "IP(s) carry 55,000 connections to one destination from that AZ; associate more Elastic IPs in eu-west-1b "
        "(AssociateNatGatewayAddress --availability-zone eu-west-1b, up to 32) (`wirespeed size aws-natgw --az "
        "eu-west-1b=N --mode regional`)",
        "nat-0auto (eu-west-1a)": "9 port allocation error(s) in 7 day(s) in eu-west-1a: connections failed. 32 "
        "IP(s) carry 1,760,000 connections to one destination from that AZ; the AZ has the maximum 32 IPs: spread "
        "egress over more destination IPs (`wirespeed size aws-natgw --az eu-west-1a=N --mode regional`)",
    }
    prose = report.explain()
    assert "NAT gateway nat-0manual: regional (manual IPs); IPs per AZ: eu-west-1a 2, eu-west-1b 1." in prose
    assert "NAT gateway nat-0auto: regional (AWS adds IPs); IPs per AZ: eu-west-1a 32." in prose


def test_a_zonal_gateway_at_the_accounts_per_gateway_quota_names_the_quota_to_raise():
    inventory = Inventory(
        region="eu-west-1",
        clusters=[],
        days=1,
        quotas=[QuotaReading(NAT_GATEWAY_EIPS, 2.0)],
        nat_gateways=[NatGateway("nat-z", "subnet-1", ips=2, error_port_allocation=1)],
    )
    (finding,) = analyse(inventory).findings
    assert finding.message == (
        "1 port allocation error(s) in 1 day(s): connections failed. 2 IP(s) carry 110,000 connections to one "
        "destination; add Elastic IPs (secondaryAllocationIds, up to 8); raise 'Elastic IP addresses per public NAT "
        "gateway' (Service Quotas: vpc L-5F53652F) (now 2 in this account) to 3 first (`wirespeed size aws-natgw "
        "--connections N`)"
    )


def test_regional_errors_without_az_series_are_reported_on_the_gateway():
    inventory = Inventory(
        region="eu-west-1",
        clusters=[],
        days=1,
        nat_gateways=[
            NatGateway(
                "nat-r",
                "",
                ips=3,
                error_port_allocation=6,
                availability_mode="regional",
                auto_scaling_ips="enabled",
                zones=(NatZone("eu-west-1a", 2), NatZone("eu-west-1b", 1)),
            )
        ],
    )
    (finding,) = analyse(inventory).findings
    assert finding.resource == "nat-r"
    assert "CloudWatch holds no per-AZ series for this regional gateway" in finding.message
    assert "IPs per AZ: eu-west-1a 2, eu-west-1b 1" in finding.message


def test_automatic_mode_errors_say_aws_had_not_caught_up_and_a_full_region_blocks_manual_ips():
    inventory = Inventory(
        region="eu-west-1",
        clusters=[],
        days=1,
        elastic_ips=5,
        quotas=[QuotaReading(REGION_EIPS, unreadable="AccessDeniedException")],
        nat_gateways=[
            NatGateway(
                "nat-a",
                "",
                ips=3,
                availability_mode="regional",
                auto_scaling_ips="enabled",
                zones=(NatZone("eu-west-1a", 3, 2.0),),
            ),
            NatGateway(
                "nat-m",
                "",
                ips=3,
                availability_mode="regional",
                auto_scaling_ips="disabled",
                zones=(NatZone("eu-west-1a", 3, 2.0),),
            ),
        ],
    )
    messages = {f.resource: f.message for f in analyse(inventory).findings}
    assert "automatic mode adds IPs up to 32 per AZ by itself" in messages["nat-a (eu-west-1a)"]
    assert messages["nat-m (eu-west-1a)"].endswith(
        "up to 32); the Region holds 5 Elastic IPs of AWS's default 5 (the account's value could not be read): "
        "raise 'Elastic IP addresses per Region' (Service Quotas: ec2 L-0263D0A3) first (`wirespeed size aws-natgw "
        "--az eu-west-1a=N --mode regional`)"
    )


def _collect_with(moto: Moto, hook: Any) -> Any:
    with pytest.MonkeyPatch.context() as env:
        for key, value in moto.env().items():
            env.setenv(key, value)
        return collect(Target("eu-west-1", None, 7, moto.url), hook)


def test_a_repeated_next_token_is_refused(moto):
    """An endpoint whose DescribeNatGateways hands back the token it was given: botocore's paginator refuses it,
    reported as AWS that cannot be read (exit 2), not a hang until --timeout."""

    def hook(service: str, client: Any) -> None:
        if service == "ec2":
            answer(client, "DescribeNatGateways", {"NatGateways": [], "NextToken": "same"})

    repeated = "cannot reach AWS: Error during pagination: The same next token was received twice"
    with pytest.raises(AwsUnreachable, match=repeated):
        _collect_with(moto, hook)


def test_endless_new_next_tokens_are_capped(moto, monkeypatch):
    from wirespeed.audit import aws_collect

    tokens = (f"t{n}" for n in itertools.count())

    def hook(service: str, client: Any) -> None:
        if service == "ec2":
            answer(client, "DescribeNatGateways", lambda _: {"NatGateways": [], "NextToken": next(tokens)})

    monkeypatch.setattr(aws_collect, "MAX_PAGES", 20)  # the cap itself, without 10,000 round trips
    with pytest.raises(AwsUnreachable, match="ec2:DescribeNatGateways sent more than 20 pages; not a usable list"):
        _collect_with(moto, hook)


def test_a_response_past_the_body_cap_is_refused_naming_the_call_with_the_cap_lowered(moto: Moto, account: Account):
    """moto over HTTP answers DescribeInstances for 30 instances (tens of KiB); with the cap lowered to 8 KiB (the
    real one, 64 MiB, would take a million-instance moto account to pass) the audit stops at that call, names it
    and the cap, and reads no further call."""
    account.karpenter_instances("c6in.8xlarge", 30)
    with pytest.MonkeyPatch.context() as env:
        for key, value in moto.env().items():
            env.setenv(key, value)
        env.setattr("wirespeed.audit.aws_collect.MAX_RESPONSE_BYTES", 8 << 10)
        with pytest.raises(AwsUnreachable) as caught:
            collect(Target("eu-west-1", None, 7, moto.url))
        assert str(caught.value) == (
            "cannot reach AWS: ec2:DescribeInstances answered more than 8,192 bytes (MAX_RESPONSE_BYTES), far "
            "past any AWS API response the audit reads; check --endpoint-url and any proxy"
        )
        # The same account under the cap: every call read, the instances among them.
        env.setattr("wirespeed.audit.aws_collect.MAX_RESPONSE_BYTES", 16 << 20)
        inventory = collect(Target("eu-west-1", None, 7, moto.url))
    assert len(inventory.karpenter_instances) == 30

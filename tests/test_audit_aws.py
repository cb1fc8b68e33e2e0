# ruff: noqa: F811  (the moto fixtures are imported from tests/moto_aws.py and taken as parameters)
"""`wirespeed audit aws` against moto's real server (tests/moto_aws.py): the console script as users run it, boto3
over HTTP to 127.0.0.1, resources and CloudWatch data created through the API beforehand."""

from __future__ import annotations

import base64
import gzip
import json
import os
import subprocess
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart

import pytest

from clirun import WIRESPEED
from moto_aws import TUNED_USER_DATA, UNTUNED_USER_DATA, Account, Moto, account, moto  # noqa: F401
from wirespeed.audit.aws import Inventory, KarpenterInstance, NatGateway, NodeGroup, analyse, has_tuning, tuning_gap
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
        "ec2:DescribeInstances": 1,
        "ec2:DescribeLaunchTemplateVersions": 1,
        "ec2:DescribeNatGateways": 1,
        "eks:DescribeNodegroup": 4,
        "eks:ListClusters": 1,
        "eks:ListNodegroups": 1,
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
    assert tuning_gap(_b64(marker_then_1000.encode())) == "sets net.core.netdev_max_backlog to 1,000, below 16,384"
    part = MIMEApplication(gzip.compress(b"#!/bin/sh\nsysctl -w net.core.netdev_max_backlog=32768\n"), "x-gzip")
    mime = MIMEMultipart()
    mime.attach(part)
    assert has_tuning(_b64(mime.as_bytes()))
    # Written twice, the smaller value is what a node may end up with.
    twice = (
        b"#!/bin/sh\nsysctl -w net.core.netdev_max_backlog=32768\necho 1000 > /proc/sys/net/core/netdev_max_backlog\n"
    )
    assert not has_tuning(_b64(twice))
    # A gzip bomb is read only up to the cap, and never crashes.
    assert tuning_gap(_b64(gzip.compress(b"#" * (64 << 20)))) == "does not set net.core.netdev_max_backlog"


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

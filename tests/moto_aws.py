"""moto's real server for the `wirespeed audit aws` tests: ``ThreadedMotoServer`` on 127.0.0.1 (an ephemeral
port), reached by boto3 over HTTP exactly as AWS would be. Resources and metric data are created through the API;
nothing is patched in-process. Used by tests/audit/test_audit_aws.py and tests/cli/test_cli_json_keys.py."""

from __future__ import annotations

import base64
import datetime as dt
import logging
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from wirespeed.profiles import builtin_profile
from wirespeed.userdata import render_al2023_user_data

REGION = "eu-west-1"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing"}
ACCOUNT_ROLE = "arn:aws:iam::123456789012:role/eks"
# A public AMI id moto's EC2 backend ships (moto/ec2/resources/amis.json).
AMI = "ami-12c6146b"
TUNED_USER_DATA = base64.b64encode(render_al2023_user_data(builtin_profile("throughput")).encode()).decode()
UNTUNED_USER_DATA = base64.b64encode(b"#!/bin/sh\n/etc/eks/bootstrap.sh prod\n").decode()


@dataclass
class Moto:
    url: str

    def client(self, service: str) -> Any:
        return boto3.client(
            service,
            region_name=REGION,
            endpoint_url=self.url,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/moto-api/reset", method="POST"), timeout=10)

    def env(self) -> dict[str, str]:
        return CREDENTIALS | {"AWS_DEFAULT_REGION": REGION}


class Account:
    """Builds resources in the moto account through the AWS API."""

    def __init__(self, moto: Moto) -> None:
        self.ec2 = moto.client("ec2")
        self.eks = moto.client("eks")
        self.cloudwatch = moto.client("cloudwatch")
        vpc = self.ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        self.subnet = self.ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/19", AvailabilityZone=f"{REGION}a")[
            "Subnet"
        ]["SubnetId"]
        self.clusters: set[str] = set()

    def nat_gateway(self, ips: int = 1) -> str:
        allocations = [self.ec2.allocate_address(Domain="vpc")["AllocationId"] for _ in range(ips)]
        extra = {"SecondaryAllocationIds": allocations[1:]} if ips > 1 else {}
        gateway = self.ec2.create_nat_gateway(SubnetId=self.subnet, AllocationId=allocations[0], **extra)
        return str(gateway["NatGateway"]["NatGatewayId"])

    def metric(self, gateway: str, name: str, value: float, hours_ago: float = 1, az: str | None = None) -> None:
        """A datapoint on the gateway's series, or on its series for one AZ (NatGatewayId + AvailabilityZone)."""
        when = dt.datetime.now(dt.UTC) - dt.timedelta(hours=hours_ago)
        dimensions = [{"Name": "NatGatewayId", "Value": gateway}]
        if az is not None:
            dimensions.append({"Name": "AvailabilityZone", "Value": az})
        self.cloudwatch.put_metric_data(
            Namespace="AWS/NATGateway",
            MetricData=[
                {
                    "MetricName": name,
                    "Dimensions": dimensions,
                    "Timestamp": when,
                    "Value": value,
                }
            ],
        )

    def node_group(self, cluster: str, name: str, instance_types: list[str], user_data: str | None) -> None:
        if cluster not in self.clusters:
            self.eks.create_cluster(name=cluster, roleArn=ACCOUNT_ROLE, resourcesVpcConfig={"subnetIds": [self.subnet]})
            self.clusters.add(cluster)
        extra: dict[str, Any] = {}
        if user_data is not None:
            template = self.ec2.create_launch_template(
                LaunchTemplateName=f"{cluster}-{name}", LaunchTemplateData={"UserData": user_data}
            )["LaunchTemplate"]
            extra["launchTemplate"] = {"id": template["LaunchTemplateId"], "version": "1"}
        self.eks.create_nodegroup(
            clusterName=cluster,
            nodegroupName=name,
            nodeRole=ACCOUNT_ROLE,
            subnets=[self.subnet],
            instanceTypes=instance_types,
            scalingConfig={"minSize": 1, "maxSize": 3, "desiredSize": 1},
            **extra,
        )

    def karpenter_instances(self, instance_type: str, count: int, cluster: str = "prod", pool: str = "default") -> None:
        tags = [
            {"Key": "karpenter.sh/nodepool", "Value": pool},
            {"Key": "eks:eks-cluster-name", "Value": cluster},
        ]
        self.ec2.run_instances(
            ImageId=AMI,
            MinCount=count,
            MaxCount=count,
            InstanceType=instance_type,
            SubnetId=self.subnet,
            TagSpecifications=[{"ResourceType": "instance", "Tags": tags}],
        )


def start_moto() -> tuple[ThreadedMotoServer, Moto]:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access-log line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, Moto(f"http://{host}:{port}")


@pytest.fixture(scope="module")
def moto() -> Iterator[Moto]:
    server, handle = start_moto()
    try:
        yield handle
    finally:
        server.stop()


@pytest.fixture
def account(moto: Moto) -> Account:
    moto.reset()
    return Account(moto)


@pytest.fixture(scope="module")
def clean_account_env(moto: Moto) -> Iterator[Moto]:
    """A clean, non-empty account (a NAT gateway without errors, a tuned c6in node group, a c6in Karpenter node),
    with AWS_ENDPOINT_URL and fake credentials in the environment so `wirespeed audit aws` reaches it unflagged."""
    moto.reset()
    account = Account(moto)
    account.nat_gateway(ips=2)
    account.node_group("prod", "network", ["c6in.8xlarge"], TUNED_USER_DATA)
    account.karpenter_instances("c6in.8xlarge", 1)
    with pytest.MonkeyPatch.context() as patch:
        for key, value in (moto.env() | {"AWS_ENDPOINT_URL": moto.url}).items():
            patch.setenv(key, value)
        yield moto

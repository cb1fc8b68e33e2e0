"""The EKS examples run as programs under Pulumi's mocks (tests/pulumi_engine.py), with their Pulumi.yaml defaults as
stack config: what each registers, that nothing else is needed, and the plan they export."""

from __future__ import annotations

import asyncio
import base64
import email
import json
import runpy
from pathlib import Path

import pulumi
import pytest
import yaml

from conftest import ROOT
from pulumi_engine import Recorder, RecordingMonitor

EXAMPLES = ROOT / "examples"


def defaults(project: Path) -> dict[str, str]:
    """Stack config from the project's declared defaults, as the engine hands it over (strings, JSON for arrays)."""
    declared = yaml.safe_load((project / "Pulumi.yaml").read_text())["config"]
    return {
        key: value["default"] if isinstance(value["default"], str) else json.dumps(value["default"])
        for key, value in declared.items()
    }


def run_example(name: str, **overrides: str) -> Recorder:
    project = EXAMPLES / name
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    recorder = Recorder()
    try:
        pulumi.runtime.set_mocks(recorder, project=name, stack="dev", preview=False, monitor=RecordingMonitor(recorder))
        pulumi.runtime.set_all_config(defaults(project) | {f"{name}:{k}": v for k, v in overrides.items()})

        @pulumi.runtime.test
        def program() -> None:
            # pulumi.runtime.test waits for every registration the program started.
            runpy.run_path(str(project / "__main__.py"), run_name="__main__")

        program()
    finally:
        pulumi.runtime.set_all_config({})
        loop.close()
        asyncio.set_event_loop(None)
    return recorder


@pytest.fixture(scope="module")
def c6in() -> Recorder:
    return run_example("eks-c6in")


@pytest.fixture(scope="module")
def karpenter() -> Recorder:
    return run_example("eks-karpenter")


def test_eks_c6in_registers_node_groups_nat_egress_and_tuning_under_pulumi_mocks(c6in):
    counts: dict[str, int] = {}
    for r in c6in.registered:
        counts[r.type] = counts.get(r.type, 0) + 1
    assert counts == {
        "wirespeed:index:NatEgress": 1,
        "aws:ec2/eip:Eip": 4,  # 100,000 connections / 55,000 per IP -> 2 per AZ, 2 AZs (the default quota)
        "aws:ec2/natGateway:NatGateway": 2,
        "aws:ec2/route:Route": 2,
        "aws:cloudwatch/metricAlarm:MetricAlarm": 2,
        "wirespeed:index:NetworkOptimizedNodeGroup": 2,
        "aws:ec2/launchTemplate:LaunchTemplate": 2,
        "aws:eks/nodeGroup:NodeGroup": 2,
        "pulumi:providers:kubernetes": 1,
        "wirespeed:index:NodeTuning": 1,
        "kubernetes:core/v1:Namespace": 1,
        "kubernetes:core/v1:ServiceAccount": 1,
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole": 1,
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": 1,
        "kubernetes:rbac.authorization.k8s.io/v1:Role": 1,  # Events, in "default" only
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": 1,
        # The agent confined to its own Node's report.
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy": 1,
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding": 1,
        "kubernetes:core/v1:ConfigMap": 2,
        "kubernetes:apps/v1:DaemonSet": 2,
    }
    groups = {r.name: r.inputs for r in c6in.of_type("aws:eks/nodeGroup:NodeGroup")}
    assert groups["ingest-node-group"]["amiType"] == "AL2023_x86_64_STANDARD"
    assert groups["graviton-node-group"]["amiType"] == "AL2023_ARM_64_STANDARD"
    assert groups["ingest-node-group"]["labels"]["wirespeed.io/profile"] == "throughput-ena-express"
    templates = {r.name: r.inputs for r in c6in.of_type("aws:ec2/launchTemplate:LaunchTemplate")}
    message = email.message_from_bytes(base64.b64decode(templates["ingest-launch-template"]["userData"]))
    assert [p.get_content_type() for p in message.get_payload()] == ["application/node.eks.aws", "text/x-shellscript"]
    daemon_sets = sorted(r.inputs["metadata"]["name"] for r in c6in.of_type("kubernetes:apps/v1:DaemonSet"))
    assert daemon_sets == ["wirespeed-agent-throughput", "wirespeed-agent-throughput-ena-express"]


def test_eks_karpenter_registers_two_pools_and_tuning_under_pulumi_mocks(karpenter):
    pools = {r.name: r.inputs for r in karpenter.of_type("kubernetes:karpenter.sh/v1:NodePool")}
    classes = {r.name: r.inputs for r in karpenter.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")}
    assert sorted(pools) == ["graviton-node-pool", "network-node-pool"]
    assert sorted(classes) == ["graviton-ec2-node-class", "network-ec2-node-class"]
    arch = {
        name: next(
            r["values"] for r in spec["spec"]["template"]["spec"]["requirements"] if r["key"] == "kubernetes.io/arch"
        )
        for name, spec in pools.items()
    }
    assert arch == {"graviton-node-pool": ["arm64"], "network-node-pool": ["amd64"]}
    assert len(karpenter.of_type("kubernetes:apps/v1:DaemonSet")) == 1


def test_eks_regional_nat_is_one_gateway_with_eleven_elastic_ips_per_az_under_pulumi_mocks():
    """600,000 connections to one destination per AZ: beyond a zonal gateway's 8 IPs, 11 of a regional AZ's 32."""
    recorded = run_example("eks-regional-nat")
    (gateway,) = recorded.of_type("aws:ec2/natGateway:NatGateway")
    assert (gateway.inputs["availabilityMode"], gateway.inputs["vpcId"]) == ("regional", "vpc-0aaaaaaaaaaaaaaa0")
    zones = gateway.inputs["availabilityZoneAddresses"]
    assert [(z["availabilityZone"], len(z["allocationIds"])) for z in zones] == [
        ("us-east-1a", 11),
        ("us-east-1b", 11),
        ("us-east-1c", 11),
    ]
    assert len(recorded.of_type("aws:ec2/eip:Eip")) == 33
    assert {r.inputs["natGatewayId"] for r in recorded.of_type("aws:ec2/route:Route")} == {f"{gateway.name}-id"}
    assert len(recorded.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")) == 1
    # The node agent watches each destination against the AZ's 11 IPs (NatEgress.profile_outbound).
    assert _tuned_outbound(recorded) == {"throughput": {"kind": "aws-nat-gateway", "public_ips": 11}}


def test_eks_regional_nat_automatic_mode_takes_no_elastic_ips_under_pulumi_mocks():
    recorded = run_example("eks-regional-nat", ipMode="automatic", peakConnections="900000")
    (gateway,) = recorded.of_type("aws:ec2/natGateway:NatGateway")
    assert "availabilityZoneAddresses" not in gateway.inputs
    assert recorded.of_type("aws:ec2/eip:Eip") == []
    # The floor AWS must reach: 17 IPs per AZ for 900,000 connections (more than an Azure NAT gateway's 16).
    assert _tuned_outbound(recorded) == {"throughput": {"kind": "aws-nat-gateway", "public_ips": 17}}


def _tuned_outbound(recorded: Recorder) -> dict[str, dict[str, object]]:
    """Profile name -> the kind and sizing of the outbound section in the ConfigMap the agent reads."""
    out = {}
    for config_map in recorded.of_type("kubernetes:core/v1:ConfigMap"):
        profile = json.loads(config_map.inputs["data"]["profile.json"])
        out[profile["name"]] = {k: profile["outbound"][k] for k in ("kind", "public_ips")}
    return out

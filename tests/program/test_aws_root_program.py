"""The root project's aws branch (wirespeed:cloud aws) run by the plan runner under Pulumi's mocks: the sample stack
Pulumi.aws.yaml registers node groups, NAT egress sized from the workload and the agent; bad config is refused
with every problem before anything registers."""

from __future__ import annotations

import base64
import email
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from wirespeed.aws.capacity import ena_express_profile
from wirespeed.profiles import builtin_profile
from wirespeed.program import run_program
from wirespeed.program.errors import ProgramError
from wirespeed.userdata import render_script


def test_sample_aws_stack_registers_node_groups_nat_egress_and_tuning_under_pulumi_mocks():
    plan = run_program(ROOT, "aws")
    types = [r.type for r in plan.resources]
    assert types.count("aws:eks/nodeGroup:NodeGroup") == 2
    assert types.count("aws:ec2/launchTemplate:LaunchTemplate") == 2
    # ingest-eks.json: 120,000 connections to the busiest destination -> 3 Elastic IPs in each of 2 AZs.
    assert types.count("aws:ec2/natGateway:NatGateway") == 2
    assert types.count("aws:ec2/eip:Eip") == 6
    assert types.count("kubernetes:apps/v1:DaemonSet") == 2
    assert not any(t.startswith("azure-native:") for t in types)
    outputs = plan.stack_outputs
    assert set(outputs) == {"node_groups", "nat_egress", "nat_public_ips", "tuning_daemon_sets"}
    assert [z["ips"] for z in outputs["nat_egress"]["zones"]] == [3, 3]
    assert {name: len(ips) for name, ips in outputs["nat_public_ips"].items()} == {"us-east-1a": 3, "us-east-1b": 3}
    ingest = outputs["node_groups"]["ingest"]
    assert [(t["name"], t["baseline_gbps"], t["ena_express"]) for t in ingest["instance_types"]] == [
        ("c6in.8xlarge", 50, True),
        ("c6in.16xlarge", 100, True),
    ]
    template = next(r for r in plan.resources if r.name == "wirespeed-ingest-launch-template")
    message = email.message_from_bytes(base64.b64decode(template.inputs["userData"]))
    assert [p.get_content_type() for p in message.get_payload()] == ["application/node.eks.aws", "text/x-shellscript"]
    script = message.get_payload()[1].get_payload(decode=True).decode()
    assert script == render_script(ena_express_profile(builtin_profile("throughput")))
    assert base64.b64decode(template.inputs["userData"]).decode() == ingest["user_data"]


def test_bad_aws_config_lists_every_problem_before_anything_registers_under_pulumi_mocks(tmp_path: Path):
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "Pulumi.test.yaml").write_text(
        "config:\n"
        "  wirespeed:cloud: aws\n"
        "  wirespeed:nodeGroups: ['web:m7i.large:1:3', 'fast:c6in.8xlarge:1:3:throughput:ena-express']\n"
        "  wirespeed:natPublicSubnets: [us-east-1a=subnet-1]\n"
        "  wirespeed:natPeakConnections: 500000\n"
    )
    with pytest.raises(ProgramError) as caught:
        run_program(tmp_path, "test")
    assert [p.split(": ")[0] for p in caught.value.problems] == [
        "wirespeed:clusterName",
        "wirespeed:nodeRoleArn",
        "wirespeed:subnetIds",
        "wirespeed:nodeGroups[0] (TYPE[0])",
        "wirespeed:securityGroupIds",
        "wirespeed:natPeakConnections",
    ]
    # The program checks the whole config (eks_stack) before it creates the first resource.


def test_regional_nat_mode_registers_one_gateway_for_the_route_tables_azs_under_pulumi_mocks(tmp_path: Path):
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    sample = (ROOT / "Pulumi.aws.yaml").read_text().replace("wirespeed:natPublicSubnets", "# natPublicSubnets")
    (tmp_path / "Pulumi.regional.yaml").write_text(
        sample
        + "  wirespeed:natMode: regional\n"
        + "  wirespeed:natVpcId: vpc-0abc\n"
        + "  wirespeed:natPeakConnections: 600000\n"
    )
    plan = run_program(tmp_path, "regional")
    (gateway,) = [r for r in plan.resources if r.type == "aws:ec2/natGateway:NatGateway"]
    assert (gateway.inputs["availabilityMode"], gateway.inputs["vpcId"]) == ("regional", "vpc-0abc")
    # 600,000 to one destination from each AZ of natPrivateRouteTables: 11 Elastic IPs each.
    assert [(z["availabilityZone"], len(z["allocationIds"])) for z in gateway.inputs["availabilityZoneAddresses"]] == [
        ("us-east-1a", 11),
        ("us-east-1b", 11),
    ]
    assert plan.stack_outputs["nat_egress"]["gateways"] == 1


def test_a_pinned_measurement_reaches_the_nat_egress_and_the_plan_under_pulumi_mocks(tmp_path: Path):
    """wirespeed:natPeakConnections with the measuredPeakSource `wirespeed size aws-natgw --from-prometheus` printed:
    the gateways are sized from the figure and the component and the plan both say where it was measured."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    source = "prometheus http://prometheus:9090, max of sum by (zone, destination) over 7d: 96,000 to 52.1.2.3:443/tcp"
    (tmp_path / "Pulumi.measured.yaml").write_text(
        (ROOT / "Pulumi.aws.yaml").read_text()
        + "  wirespeed:natPeakConnections: 96000\n"
        + f"  wirespeed:measuredPeakSource: '{source}'\n"
    )
    plan = run_program(tmp_path, "measured")
    assert plan.stack_outputs["nat_egress"]["measured_from"] == source
    assert [z["ips"] for z in plan.stack_outputs["nat_egress"]["zones"]] == [2, 2]  # 96,000 / 55,000 per IP
    (egress,) = [r for r in plan.resources if r.type == "wirespeed:index:NatEgress"]
    assert egress.outputs["measured_from"] == source


def test_node_group_problems_name_the_parts_of_the_string_not_python_arguments_under_pulumi_mocks(tmp_path: Path):
    """plan_node_group names min_size, instance_types and not_network_optimised_reason; the root program reports
    them as the part of wirespeed:nodeGroups[i] the user wrote, every problem at once."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "Pulumi.bad.yaml").write_text(
        "config:\n"
        "  wirespeed:cloud: aws\n"
        "  wirespeed:clusterName: prod\n"
        "  wirespeed:nodeRoleArn: arn:aws:iam::123456789012:role/eks-node\n"
        "  wirespeed:subnetIds: [subnet-1]\n"
        "  wirespeed:nodeGroups: ['web:c6in.8xlarge:1:3', 'batch:m7i.large+c6in.8xlarge:5:2:nope']\n"
    )
    with pytest.raises(ProgramError) as caught:
        run_program(tmp_path, "bad")
    problems = caught.value.problems
    assert [p.split(": ")[0] for p in problems] == [
        "wirespeed:nodeGroups[1] (TYPE[0])",
        "wirespeed:nodeGroups[1] (TYPE)",
        "wirespeed:nodeGroups[1] (PROFILE)",
        "wirespeed:nodeGroups[1] (MIN)",
    ]
    assert problems[2] == (
        "wirespeed:nodeGroups[1] (PROFILE): 'nope' is not allowed; allowed: a built-in profile name (balanced, "
        "throughput)"
    )
    assert problems[3] == "wirespeed:nodeGroups[1] (MIN): 5 is not allowed; allowed: at most MAX (2)"
    for word in ("min_size", "max_size", "instance_types", "not_network_optimised_reason", "a Profile"):
        assert not any(word in p for p in problems), word

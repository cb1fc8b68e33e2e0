# ruff: noqa: F811  (the `engine` fixture is imported from tests/pulumi_engine.py and taken as a parameter)
"""``wirespeed.aws.NetworkOptimizedNodeGroup`` under Pulumi's mocks (tests/pulumi_engine.py): the exact inputs that
reach the engine, the user data decoded from base64 and parsed as MIME, and bad args rejected all at once."""

from __future__ import annotations

import base64
import email
import tomllib

import pulumi
import pytest
import yaml

from builtin_profiles import THROUGHPUT_BACKLOG
from pulumi_engine import engine, resolve  # noqa: F401 (engine: the pytest fixture)
from wirespeed.aws import NetworkOptimizedNodeGroup, NetworkOptimizedNodeGroupArgs, Taint
from wirespeed.profiles import builtin_profile
from wirespeed.userdata import render_script

COMPONENT = "wirespeed:index:NetworkOptimizedNodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ROLE = "arn:aws:iam::123456789012:role/eks-node"


def args(**overrides) -> NetworkOptimizedNodeGroupArgs:
    base = {"cluster_name": "prod", "node_role_arn": ROLE, "subnet_ids": ["subnet-a", "subnet-b"]}
    return NetworkOptimizedNodeGroupArgs(**(base | overrides))


def user_data_parts(registration) -> list[tuple[str, str]]:
    message = email.message_from_bytes(base64.b64decode(registration.inputs["userData"]))
    assert message.get_content_type() == "multipart/mixed"
    return [(part.get_content_type(), part.get_payload(decode=True).decode()) for part in message.get_payload()]


def test_default_group_registers_template_and_node_group_under_pulumi_mocks(engine):
    group = NetworkOptimizedNodeGroup("ingest", args())
    assert resolve(group.node_group_name) == "ingest-node-group"

    component = engine.one(COMPONENT)
    assert [(r.type, r.name, r.parent) for r in engine.registered if r.type != COMPONENT] == [
        (LAUNCH_TEMPLATE, "ingest-launch-template", component.urn),
        (NODE_GROUP, "ingest-node-group", component.urn),
    ]
    template = engine.one(LAUNCH_TEMPLATE)
    inputs = dict(template.inputs)
    user_data = inputs.pop("userData")
    assert inputs == {
        "description": "wirespeed: throughput tuning at boot",
        "metadataOptions": {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 2},
        "tagSpecifications": [{"resourceType": "instance", "tags": {"wirespeed.io/profile": "throughput"}}],
        # The fastest type's line rate, which the backlog gate reads (the template names no instanceType).
        "tags": {"wirespeed.io/profile": "throughput", "wirespeed.io/line-rate-gbps": "50"},
        "updateDefaultVersion": True,
    }
    config, script = user_data_parts(template)
    assert config[0] == "application/node.eks.aws"
    assert yaml.safe_load(config[1]) == {
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": {"kubelet": {"flags": ["--node-labels=wirespeed.io/profile=throughput"]}},
    }
    assert script == ("text/x-shellscript", render_script(builtin_profile("throughput")))
    assert base64.b64decode(user_data).decode() == group.plan.user_data

    assert engine.one(NODE_GROUP).inputs == {
        "clusterName": "prod",
        "nodeRoleArn": ROLE,
        "subnetIds": ["subnet-a", "subnet-b"],
        "instanceTypes": ["c6in.8xlarge"],
        "amiType": "AL2023_x86_64_STANDARD",
        "capacityType": "ON_DEMAND",
        "scalingConfig": {"minSize": 1, "maxSize": 3, "desiredSize": 1},
        "updateConfig": {"maxUnavailablePercentage": 10},
        "labels": {"wirespeed.io/profile": "throughput"},
        "launchTemplate": {"id": "ingest-launch-template-id", "version": "1"},
    }
    assert engine.outputs[component.urn] == {
        "node_group_name": "ingest-node-group",
        "launch_template_id": "ingest-launch-template-id",
        "profile": "throughput",
        "instance_types": ["c6in.8xlarge"],
    }


def test_ena_express_sets_srd_on_the_interface_and_tunes_rx_8192_mtu_8900_under_pulumi_mocks(engine):
    group = NetworkOptimizedNodeGroup(
        "srd",
        args(
            instance_types=["c6in.8xlarge", "c6in.16xlarge"],
            profile="balanced",
            ena_express=True,
            security_group_ids=["sg-cluster"],
            labels={"team": "ingest"},
            taints=[Taint("dedicated", "NO_SCHEDULE", "ingest")],
            min_size=2,
            max_size=10,
            desired_size=4,
            max_unavailable_percentage=20,
        ),
    )
    resolve(group.node_group_name)
    template = engine.one(LAUNCH_TEMPLATE)
    assert template.inputs["networkInterfaces"] == [
        {
            "deviceIndex": 0,
            "securityGroups": ["sg-cluster"],
            "enaSrdSpecification": {"enaSrdEnabled": True, "enaSrdUdpSpecification": {"enaSrdUdpEnabled": True}},
        }
    ]
    assert "vpcSecurityGroupIds" not in template.inputs
    (_, script) = user_data_parts(template)[1]
    # balanced's ENA RX ring is raised to AWS's ENA Express 8,192, and ENA links get MTU 8,900.
    assert group.profile.name == "balanced-ena-express"
    assert group.profile.rings["ena"].rx == 8192
    assert (group.profile.mtu.value, group.profile.mtu.drivers) == (8900, ["ena"])
    assert script == render_script(group.profile)
    assert '\tena) echo "8192 ' in script
    node_group = engine.one(NODE_GROUP).inputs
    assert node_group["labels"] == {"team": "ingest", "wirespeed.io/profile": "balanced-ena-express"}
    assert node_group["taints"] == [{"key": "dedicated", "value": "ingest", "effect": "NO_SCHEDULE"}]
    assert node_group["scalingConfig"] == {"minSize": 2, "maxSize": 10, "desiredSize": 4}
    assert node_group["updateConfig"] == {"maxUnavailablePercentage": 20}
    assert node_group["instanceTypes"] == ["c6in.8xlarge", "c6in.16xlarge"]


def test_graviton_bottlerocket_gets_sysctls_in_toml_and_the_arm_ami_under_pulumi_mocks(engine):
    group = NetworkOptimizedNodeGroup(
        "arm", args(instance_types=["c7gn.4xlarge"], operating_system="bottlerocket", security_group_ids=["sg-1"])
    )
    resolve(group.node_group_name)
    template = engine.one(LAUNCH_TEMPLATE)
    assert template.inputs["vpcSecurityGroupIds"] == ["sg-1"]
    settings = tomllib.loads(base64.b64decode(template.inputs["userData"]).decode())
    assert settings["settings"]["kernel"]["sysctl"] == {"net.core.netdev_max_backlog": str(THROUGHPUT_BACKLOG)}
    assert engine.one(NODE_GROUP).inputs["amiType"] == "BOTTLEROCKET_ARM_64"
    assert any("NIC rings and MTU by the agent image" in n and "bootstrap container" in n for n in group.plan.notes)
    assert settings["settings"]["bootstrap-containers"]["wirespeed-tuning"]["essential"] is False


def test_a_written_reason_admits_a_general_purpose_type_under_pulumi_mocks(engine):
    group = NetworkOptimizedNodeGroup(
        "gp", args(instance_types=["m7i.large"], not_network_optimised_reason="batch jobs, no network SLO")
    )
    resolve(group.node_group_name)
    assert engine.one(NODE_GROUP).inputs["instanceTypes"] == ["m7i.large"]
    # recorded where network-optimised-sku reads it, on the group and on its launch template (and instances)
    reason = {"wirespeed.io.not-network-optimised-reason": "batch jobs, no network SLO"}
    assert engine.one(NODE_GROUP).inputs["tags"] == reason
    template = engine.one(LAUNCH_TEMPLATE).inputs
    assert template["tagSpecifications"][0]["tags"] == {"wirespeed.io/profile": "throughput"} | reason
    assert template["tags"] == {"wirespeed.io/profile": "throughput", "wirespeed.io/line-rate-gbps": "12.5"} | reason


def test_a_reason_given_for_network_optimised_types_is_not_recorded_under_pulumi_mocks(engine):
    group = NetworkOptimizedNodeGroup("net", args(not_network_optimised_reason="just in case", tags={"team": "a"}))
    resolve(group.node_group_name)
    assert engine.one(NODE_GROUP).inputs["tags"] == {"team": "a"}
    assert engine.one(LAUNCH_TEMPLATE).inputs["tags"] == {
        "team": "a",
        "wirespeed.io/profile": "throughput",
        "wirespeed.io/line-rate-gbps": "50",
    }


def test_every_problem_is_listed_and_nothing_registers_under_pulumi_mocks(engine):
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        NetworkOptimizedNodeGroup(
            "bad",
            args(
                instance_types=["c6in.8xlarge", "m7i.large", "c7gn.4xlarge", "c6in.lrage"],
                profile="fastest",
                ena_express=True,
                min_size=5,
                max_size=2,
                max_unavailable_percentage=0,
                labels={"wirespeed.io/profile": "other"},
                taints=[Taint("dedicated", "NoSchedule")],
            ),
        )
    assert str(caught.value) == (
        "invalid NetworkOptimizedNodeGroupArgs:\n"
        "  instance_types[1]: 'm7i.large' is not allowed; allowed: a network-optimised type (e.g. c6in.large, "
        "c8in.large, c8ine.large), or give not_network_optimised_reason\n"
        "  instance_types[1]: 'm7i.large' is not allowed; allowed: a type that supports ENA Express "
        "(EnaSrdSupported), or ena_express=False\n"
        "  instance_types[3]: 'c6in.lrage' is not allowed; allowed: did you mean c6in.large, c6in.xlarge, "
        "c6i.large, c6in.8xlarge, c6in.4xlarge?\n"
        "  instance_types: ['c6in.8xlarge', 'm7i.large', 'c7gn.4xlarge'] is not allowed; allowed: one architecture "
        "per node pool (one AMI): arm64 or x86_64\n"
        "  instance_types: ['c6in.8xlarge', 'm7i.large', 'c7gn.4xlarge'] is not allowed; allowed: types that share "
        "one ring profile (sustained bandwidth all above or all at most 25 Gb/s); split them into node pools: "
        "balanced: m7i.large; throughput: c6in.8xlarge, c7gn.4xlarge\n"
        "  profile: 'fastest' is not allowed; allowed: a built-in profile name (balanced, throughput) or a Profile\n"
        "  min_size: 5 is not allowed; allowed: at most max_size (2)\n"
        "  max_unavailable_percentage: 0 is not allowed; allowed: a whole number from 1 to 100\n"
        "  labels['wirespeed.io/profile']: 'other' is not allowed; allowed: left out: wirespeed sets it to the "
        "profile's name\n"
        "  taints[0].effect: 'NoSchedule' is not allowed; allowed: one of NO_SCHEDULE, NO_EXECUTE, "
        "PREFER_NO_SCHEDULE\n"
        "  security_group_ids: None is not allowed; allowed: the node security groups (e.g. the cluster security "
        "group): with ena_express the launch template defines the network interface, and EKS then adds none"
    )
    assert [e["property_path"] for e in caught.value.errors] == [
        "instance_types[1]",
        "instance_types[1]",
        "instance_types[3]",
        "instance_types",
        "instance_types",
        "profile",
        "min_size",
        "max_unavailable_percentage",
        "labels['wirespeed.io/profile']",
        "taints[0].effect",
        "security_group_ids",
    ]
    assert engine.registered == []

# ruff: noqa: F811  (the `engine` fixture is imported from tests/pulumi_engine.py and taken as a parameter)
"""The EKS components hand the node agent the NAT gateways' capacity (issue 19): ``NatEgress.profile_outbound``
into ``NetworkOptimizedNodeGroupArgs.outbound`` / ``KarpenterNodePoolArgs.outbound``, then into the profiles
``NodeTuning`` renders, under Pulumi's mocks (tests/pulumi_engine.py; AWS and Kubernetes cannot exist here)."""

from __future__ import annotations

import json

import pulumi
import pytest

from pulumi_engine import engine, resolve  # noqa: F401 (engine: the pytest fixture)
from wirespeed.aws import (
    KarpenterNodePool,
    KarpenterNodePoolArgs,
    NatEgress,
    NatEgressArgs,
    NetworkOptimizedNodeGroup,
    NetworkOptimizedNodeGroupArgs,
)
from wirespeed.aws.snat import nat_gateway_outbound
from wirespeed.kubernetes import NodeTuning, NodeTuningArgs
from wirespeed.profile import Outbound, apply_outbound
from wirespeed.profiles import builtin_profile

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
# AWS NAT gateway times out a connection idle for 350 s (wirespeed.sizing.snat_limits, cited there): a UDP flow
# holds its port that long after its last packet.
UDP = 350
SUBNETS = {"eu-west-1a": "subnet-pub-a", "eu-west-1b": "subnet-pub-b", "eu-west-1c": "subnet-pub-c"}


def test_the_profile_states_the_smallest_az_s_ips() -> None:
    """One profile serves every AZ: the tightest AZ's capacity, so the condition is never late there."""
    assert nat_gateway_outbound({"a": 3, "b": 1, "c": 2}) == Outbound(
        kind="aws-nat-gateway", public_ips=1, udp_hold_seconds=UDP
    )
    # A regional gateway's AZs hold up to 32 IPs, more than an Azure NAT gateway's 16: stated as they are.
    assert nat_gateway_outbound({"a": 32, "b": 20}) == Outbound(
        kind="aws-nat-gateway", public_ips=20, udp_hold_seconds=UDP
    )
    assert nat_gateway_outbound({"a": 32}) == Outbound(kind="aws-nat-gateway", public_ips=32, udp_hold_seconds=UDP)
    # Beyond the kind's bound (no gateway has that many): the bound, so the condition is never late.
    assert nat_gateway_outbound({"a": 40, "b": 33}) == Outbound(
        kind="aws-nat-gateway", public_ips=32, udp_hold_seconds=UDP
    )
    kept = Outbound(kind="aws-nat-gateway", public_ips=8, pressure_percent=60, exclude_cidrs=["10.0.0.0/8"])
    assert nat_gateway_outbound({"a": 3}, kept) == Outbound(
        kind="aws-nat-gateway", public_ips=3, pressure_percent=60, exclude_cidrs=["10.0.0.0/8"], udp_hold_seconds=UDP
    )


def test_a_profile_keeps_its_own_threshold_unless_the_section_states_one() -> None:
    """The sizing is the component's; the threshold, exclusions and hold time are the team's unless stated."""
    own = Outbound(kind="azure-load-balancer", allocated_ports_per_node=1024, pressure_percent=60, hold_seconds=120)
    profile = builtin_profile("throughput").model_copy(update={"outbound": own})
    sized = apply_outbound(profile, Outbound(kind="aws-nat-gateway", public_ips=2))
    assert sized.outbound == Outbound(kind="aws-nat-gateway", public_ips=2, pressure_percent=60, hold_seconds=120)
    stated = apply_outbound(profile, Outbound(kind="aws-nat-gateway", public_ips=2, pressure_percent=90))
    assert stated.outbound is not None
    assert stated.outbound.pressure_percent == 90
    assert stated.outbound.hold_seconds == 120
    assert apply_outbound(profile, None) is profile


def test_nat_egress_sizes_ips_per_az_and_the_profile_takes_the_smallest_under_pulumi_mocks(engine):
    # 120,000 to the busiest destination in a and b (3 IPs each at 55,000), 50,000 in c (1 IP).
    demand = {"eu-west-1a": 120_000, "eu-west-1b": 120_000, "eu-west-1c": 50_000}
    egress = NatEgress("egress", NatEgressArgs(public_subnet_ids=SUBNETS, peak_connections=demand))
    assert {z.availability_zone: z.plan.ips for z in egress.plan.zones} == {
        "eu-west-1a": 3,
        "eu-west-1b": 3,
        "eu-west-1c": 1,
    }
    assert egress.profile_outbound == Outbound(kind="aws-nat-gateway", public_ips=1, udp_hold_seconds=UDP)
    assert len(resolve(egress.public_ips)["eu-west-1a"]) == 3  # let every registration finish before the next test


def test_node_group_and_karpenter_profiles_carry_the_outbound_into_node_tuning_under_pulumi_mocks(engine):
    egress = NatEgress("egress", NatEgressArgs(public_subnet_ids=SUBNETS, peak_connections=120_000))
    group = NetworkOptimizedNodeGroup(
        "ingest",
        NetworkOptimizedNodeGroupArgs(
            cluster_name="prod",
            node_role_arn="arn:aws:iam::123456789012:role/eks-node",
            subnet_ids=["subnet-a"],
            outbound=egress.profile_outbound,
        ),
    )
    pool = KarpenterNodePool(
        "burst",
        KarpenterNodePoolArgs(
            cluster_name="prod",
            node_role="KarpenterNodeRole-prod",
            profile="balanced",
            min_network_bandwidth_gbps=10,
            max_network_bandwidth_gbps=25,
            outbound=egress.profile_outbound,
        ),
    )
    assert (
        group.profile.outbound
        == pool.profile.outbound
        == Outbound(kind="aws-nat-gateway", public_ips=3, udp_hold_seconds=UDP)
    )
    # The boot user data is the profile's tuning only: the launch template is what it was without the section.
    assert group.plan.profile == builtin_profile("throughput")
    tuning = NodeTuning("tuning", NodeTuningArgs(profiles=[group.profile, pool.profile]))
    resolve(tuning.daemon_set_names)  # every registration answered
    sections = {
        json.loads(r.inputs["data"]["profile.json"])["name"]: json.loads(r.inputs["data"]["profile.json"])["outbound"]
        for r in engine.of_type(CONFIG_MAP)
    }
    expected = {"kind": "aws-nat-gateway", "public_ips": 3, "pressure_percent": 80, "exclude_cidrs": [],
                "hold_seconds": 240, "udp_hold_seconds": UDP}  # fmt: skip
    assert sections == {"throughput": expected, "balanced": expected}


def test_an_outbound_that_is_not_a_section_is_refused_before_anything_registers_under_pulumi_mocks(engine):
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        NetworkOptimizedNodeGroup(
            "bad",
            NetworkOptimizedNodeGroupArgs(
                cluster_name="prod",
                node_role_arn="arn",
                subnet_ids=["subnet-a"],
                min_size=5,
                max_size=2,
                outbound={"public_ips": 2},
            ),
        )
    # Every problem at once: the outbound beside the others.
    assert "outbound: {'public_ips': 2} is not allowed; allowed: a wirespeed.profile.Outbound" in str(caught.value)
    assert "min_size: 5" in str(caught.value)
    with pytest.raises(pulumi.InputPropertiesError):
        KarpenterNodePool("bad", KarpenterNodePoolArgs(cluster_name="prod", node_role="r", outbound="aws"))
    assert engine.of_type(LAUNCH_TEMPLATE) == []

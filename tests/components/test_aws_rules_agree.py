# ruff: noqa: F811  (the `engine` fixture is imported from tests/pulumi_engine.py and taken as a parameter)
"""What the AWS components register passes wirespeed's own policy rules (wirespeed.rules, every rule mandatory),
and a node group the rules would flag is one the component refuses: the two never disagree."""

from __future__ import annotations

import pytest

from builtin_profiles import THROUGHPUT_BACKLOG
from pulumi_engine import engine, resolve  # noqa: F401 (engine: the pytest fixture)
from wirespeed import rules
from wirespeed.aws import NatEgress, NatEgressArgs, NetworkOptimizedNodeGroup, NetworkOptimizedNodeGroupArgs
from wirespeed.rules._userdata import read_user_data

# The account's per-gateway Elastic IP quota raised to 8, as NatEgress's warning tells a team to do first.
CONFIG = rules.resolve_config(
    {
        "all": "mandatory",
        "aws-natgw-capacity": {"peakConnectionsPerDestination": 120_000},
        "aws-natgw-eip-quota": {"accountQuota": 8},
    }
)


def as_rules_see_them(engine) -> list[rules.Resource]:
    return [rules.Resource(r.type, r.name, r.urn, r.inputs) for r in engine.registered]


@pytest.mark.parametrize("ena_express", [False, True], ids=["plain", "ena-express"])
def test_node_group_and_nat_egress_pass_every_rule_under_pulumi_mocks(engine, ena_express):
    group = NetworkOptimizedNodeGroup(
        "ng",
        NetworkOptimizedNodeGroupArgs(
            cluster_name="prod",
            node_role_arn="arn:aws:iam::123456789012:role/n",
            subnet_ids=["subnet-a"],
            security_group_ids=["sg-1"],
            instance_types=["c6in.8xlarge"],
            ena_express=ena_express,
        ),
    )
    egress = NatEgress("egress", NatEgressArgs(public_subnet_ids={"us-east-1a": "subnet-p"}, peak_connections=120_000))
    resolve(group.node_group_name)
    resolve(egress.public_ips)
    violations = [v for r in as_rules_see_them(engine) for v in rules.evaluate_resource(r, CONFIG)]
    assert violations == []


@pytest.mark.parametrize("ip_mode", ["manual", "automatic"])
def test_a_regional_nat_egress_passes_every_rule_at_a_peak_no_zonal_gateway_carries_under_pulumi_mocks(engine, ip_mode):
    egress = NatEgress(
        "egress",
        NatEgressArgs(
            mode="regional",
            ip_mode=ip_mode,
            vpc_id="vpc-1",
            availability_zones=["us-east-1a", "us-east-1b"],
            peak_connections=600_000,
        ),
    )
    resolve(egress.public_ips)
    config = rules.resolve_config(
        {"all": "mandatory", "aws-natgw-capacity": {"peakConnectionsPerDestination": 600_000}}
    )
    assert [v for r in as_rules_see_them(engine) for v in rules.evaluate_resource(r, config)] == []


def test_the_quota_rule_advises_exactly_where_nat_egress_warns_under_pulumi_mocks(engine):
    egress = NatEgress(
        "egress",
        NatEgressArgs(public_subnet_ids={"us-east-1a": "subnet-a", "us-east-1b": "subnet-b"}, peak_connections=120_000),
    )
    resolve(egress.public_ips)
    found = [v for r in as_rules_see_them(engine) for v in rules.evaluate_resource(r)]
    assert sorted((v.rule_id, v.enforcement, v.resource_name) for v in found) == [
        ("aws-natgw-eip-quota", "advisory", "egress-us-east-1a"),
        ("aws-natgw-eip-quota", "advisory", "egress-us-east-1b"),
    ]
    assert sorted(w.partition(":")[0] for w in egress.plan.warnings if "per NAT gateway" in w) == [
        "us-east-1a",
        "us-east-1b",
    ]


def test_the_rules_read_the_backlog_from_wirespeeds_user_data(engine):
    group = NetworkOptimizedNodeGroup(
        "ng",
        NetworkOptimizedNodeGroupArgs(
            cluster_name="prod", node_role_arn="arn:aws:iam::123456789012:role/n", subnet_ids=["subnet-a"]
        ),
    )
    resolve(group.node_group_name)
    template = engine.one("aws:ec2/launchTemplate:LaunchTemplate")
    user_data = read_user_data(template.inputs["userData"])
    # The script's write and its /etc/sysctl.d line.
    assert (user_data.eks_node, user_data.backlog_values()) == (True, [THROUGHPUT_BACKLOG, THROUGHPUT_BACKLOG])


@pytest.mark.parametrize(
    ("reason", "accept", "flagged"),
    [
        pytest.param("batch jobs, no network SLO", True, [], id="reason-accepted"),
        pytest.param("batch jobs, no network SLO", False, ["ng-node-group"], id="acceptWrittenReason-false"),
    ],
)
def test_a_group_the_component_admits_with_a_reason_passes_the_sku_rule_under_pulumi_mocks(
    engine, reason, accept, flagged
):
    group = NetworkOptimizedNodeGroup(
        "ng",
        NetworkOptimizedNodeGroupArgs(
            cluster_name="prod",
            node_role_arn="arn:aws:iam::123456789012:role/n",
            subnet_ids=["subnet-a"],
            instance_types=["m7i.large"],
            not_network_optimised_reason=reason,
        ),
    )
    resolve(group.node_group_name)
    config = rules.resolve_config({"network-optimised-sku": {"acceptWrittenReason": accept}})
    found = [v for r in as_rules_see_them(engine) for v in rules.evaluate_resource(r, config)]
    assert [v.resource_name for v in found if v.rule_id == "network-optimised-sku"] == flagged

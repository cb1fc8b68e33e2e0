"""The root project's EKS stack config (wirespeed:cloud aws): parsed into node groups and NAT egress, or every
problem listed under the config key at fault."""

from __future__ import annotations

import pytest

from wirespeed.aws.stack_config import EksStackError, eks_stack

GOOD = {
    "clusterName": "prod",
    "nodeRoleArn": "arn:aws:iam::123456789012:role/eks-node",
    "subnetIds": ["subnet-a", "subnet-b"],
    "securityGroupIds": ["sg-1"],
    "nodeGroups": ["ingest:c6in.8xlarge+c6in.16xlarge:2:20:throughput:ena-express", "arm:c7gn.4xlarge:1:5"],
    "natPublicSubnets": ["us-east-1a=subnet-pa", "us-east-1b=subnet-pb"],
    "natPrivateRouteTables": ["us-east-1a=rtb-a"],
    "natPeakConnections": 120_000,
}


def test_a_full_config_parses():
    stack = eks_stack(GOOD)
    assert [(g.name, [t.name for t in g.plan.instance_types], g.plan.profile.name) for g in stack.node_groups] == [
        ("ingest", ["c6in.8xlarge", "c6in.16xlarge"], "throughput-ena-express"),
        ("arm", ["c7gn.4xlarge"], "throughput"),
    ]
    assert stack.nat_public_subnets == {"us-east-1a": "subnet-pa", "us-east-1b": "subnet-pb"}
    assert stack.nat_route_tables == {"us-east-1a": "rtb-a"}
    plan = stack.plan_json()
    assert plan["nat_egress"]["total_ips"] == 6
    assert plan["node_groups"]["ingest"]["ena_express"] is True
    assert plan["node_groups"]["arm"]["ami_type"] == "AL2023_ARM_64_STANDARD"


SOURCE = (
    "prometheus http://prometheus.monitoring:9090, max of sum by (zone, destination) of "
    "wirespeed_agent_snat_ports_in_use over 7d to 2026-11-20T10:00:00Z: 96,000 to 52.1.2.3:443/tcp in us-east-1a at "
    "2026-11-19T14:02:11Z"
)


def test_a_measured_peak_is_pinned_with_where_it_was_measured():
    stack = eks_stack({**GOOD, "measuredPeakSource": f"  {SOURCE} "})
    assert stack.nat_measured_from == SOURCE
    assert stack.plan_json()["nat_egress"]["measured_from"] == SOURCE
    assert "measured_from" not in eks_stack(GOOD).plan_json()["nat_egress"]  # not measured: nothing claimed


@pytest.mark.parametrize(
    ("settings", "allowed"),
    [
        ({**GOOD, "measuredPeakSource": "two\nlines"}, "where the peak was measured, one line of at most 512"),
        ({**GOOD, "measuredPeakSource": "x" * 513}, "where the peak was measured, one line of at most 512"),
        (
            {**{k: v for k, v in GOOD.items() if not k.startswith("nat")}, "measuredPeakSource": SOURCE},
            "only with the NAT gateways this stack sizes",
        ),
    ],
)
def test_a_bad_measured_peak_source_is_a_problem_under_its_key(settings, allowed):
    with pytest.raises(EksStackError) as caught:
        eks_stack(settings)
    (problem,) = caught.value.problems
    assert problem.field == "wirespeed:measuredPeakSource"
    assert problem.allowed.startswith(allowed)


def test_without_nat_subnets_there_is_no_egress():
    stack = eks_stack({k: v for k, v in GOOD.items() if not k.startswith("nat")})
    assert stack.egress is None


def test_every_problem_is_listed_under_its_key():
    bad = {
        "nodeRoleArn": "arn:aws:iam::123456789012:role/eks-node",
        "subnetIds": [],
        "nodeGroups": ["ingest:m7i.large:2:20", "x:c6in.8xlarge:1", "y:c6in.8xlarge:5:2:throughput:ena-express"],
        "natPublicSubnets": ["us-east-1a"],
        "natPrivateRouteTables": ["us-east-1c=rtb-c"],
        "natPeakConnections": 0,
    }
    with pytest.raises(EksStackError) as caught:
        eks_stack(bad)
    assert [str(p) for p in caught.value.problems] == [
        "wirespeed:clusterName: '' is not allowed; allowed: required when wirespeed:cloud is aws",
        "wirespeed:subnetIds: [] is not allowed; allowed: the private subnets of the node groups, one per AZ",
        "wirespeed:nodeGroups[0] (TYPE[0]): 'm7i.large' is not allowed; allowed: a network-optimised type "
        "(e.g. c6in.large, c8in.large, c8ine.large)",
        "wirespeed:nodeGroups[1]: 'x:c6in.8xlarge:1' is not allowed; allowed: "
        "NAME:TYPE[+TYPE...]:MIN:MAX[:PROFILE[:ena-express]]",
        "wirespeed:nodeGroups[2] (MIN): 5 is not allowed; allowed: at most MAX (2)",
        "wirespeed:securityGroupIds: [] is not allowed; allowed: the node security groups: ena-express needs them "
        "(EKS adds none)",
        "wirespeed:natPublicSubnets[0]: 'us-east-1a' is not allowed; allowed: AZ=ID, e.g. us-east-1a=subnet-0abc...",
        "wirespeed:natPrivateRouteTables: ['us-east-1c'] is not allowed; allowed: only with wirespeed:natPublicSubnets",
    ]


def test_more_than_eight_ips_is_refused_naming_the_demand():
    with pytest.raises(EksStackError) as caught:
        eks_stack(GOOD | {"natPeakConnections": 500_000})
    assert [str(p) for p in caught.value.problems] == [
        "wirespeed:natPeakConnections: 500000 is not allowed; allowed: 500,000 required but 8 IPs give at most "
        "440,000 to one destination; use a regional NAT gateway (up to 32 IPs per AZ) or spread calls over more "
        "destination IPs"
    ]


def test_regional_mode_is_one_gateway_in_the_vpc_for_the_route_tables_azs():
    settings = {k: v for k, v in GOOD.items() if k != "natPublicSubnets"} | {
        "natMode": "regional",
        "natVpcId": "vpc-0abc",
        "natPeakConnections": 500_000,
    }
    stack = eks_stack(settings)
    assert stack.egress is not None
    assert (stack.nat_mode, stack.nat_ip_mode, stack.nat_vpc_id) == ("regional", "manual", "vpc-0abc")
    assert [(z.availability_zone, z.plan.ips) for z in stack.egress.zones] == [
        (az, 10) for az in stack.nat_route_tables
    ]
    assert stack.plan_json()["nat_egress"]["gateways"] == 1


def test_regional_mode_problems_name_the_config_keys():
    settings = GOOD | {"natMode": "regional", "natIpMode": "auto", "natPeakConnections": 2_000_000}
    with pytest.raises(EksStackError) as caught:
        eks_stack(settings)
    assert [str(p) for p in caught.value.problems] == [
        "wirespeed:natIpMode: 'auto' is not allowed; allowed: 'manual' or 'automatic'",
        "wirespeed:natPublicSubnets: 'given' is not allowed; allowed: only with mode 'zonal' (a regional gateway has "
        "none)",
        "wirespeed:natPeakConnections: 2000000 is not allowed; allowed: 2,000,000 required but 32 IPs per AZ of a "
        "regional gateway give at most 1,760,000 to one destination; spread calls over more destination IPs (each IP, "
        "port and protocol counts on its own)",
        "wirespeed:natVpcId: None is not allowed; allowed: the VPC's ID: a regional gateway is created in a VPC",
    ]


@pytest.mark.parametrize(
    ("key", "value"),
    [("subnetIds", 1), ("subnetIds", "subnet-a"), ("nodeGroups", {"a": 1}), ("natPublicSubnets", [1])],
)
def test_a_list_key_of_another_type_is_a_problem_not_a_crash(key, value):
    """`wirespeed:subnetIds: subnet-a` (a string, not a list) must not be read as the list of its characters."""
    with pytest.raises(EksStackError) as info:
        eks_stack(GOOD | {key: value})
    assert (f"wirespeed:{key}", value) in [(p.field, p.value) for p in info.value.problems]


def test_peak_connections_that_are_not_a_whole_number_are_a_problem():
    with pytest.raises(EksStackError) as info:
        eks_stack(GOOD | {"natPeakConnections": "lots"})
    assert "wirespeed:natPeakConnections" in [p.field for p in info.value.problems]


# `x or DEFAULT` once turned a stated "" into the default: natMode "" meant zonal, natIpMode "" manual, and a
# natPeakConnections of "" or false was reported as 0. Only an absent key takes Pulumi.yaml's default.
@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        pytest.param(
            GOOD | {"natMode": ""},
            "wirespeed:natMode: '' is not allowed; allowed: 'zonal' or 'regional'",
            id="empty-natMode-with-gateways",
        ),
        pytest.param(
            {k: v for k, v in GOOD.items() if not k.startswith("nat")} | {"natMode": ""},
            "wirespeed:natMode: '' is not allowed; allowed: 'zonal' or 'regional'",
            id="empty-natMode-without-gateways",
        ),
        pytest.param(
            GOOD | {"natIpMode": ""},
            "wirespeed:natIpMode: '' is not allowed; allowed: 'manual' or 'automatic'",
            id="empty-natIpMode",
        ),
        pytest.param(
            GOOD | {"natPeakConnections": ""},
            "wirespeed:natPeakConnections: '' is not allowed; allowed: a whole number of connections",
            id="empty-natPeakConnections",
        ),
        pytest.param(
            GOOD | {"natPeakConnections": False},
            "wirespeed:natPeakConnections: False is not allowed; allowed: a whole number of connections",
            id="false-natPeakConnections",
        ),
    ],
)
def test_a_stated_empty_nat_value_is_judged_not_defaulted(settings, expected):
    with pytest.raises(EksStackError) as caught:
        eks_stack(settings)
    assert expected in [str(p) for p in caught.value.problems]


def test_absent_nat_modes_take_the_pulumi_yaml_defaults():
    stack = eks_stack({k: v for k, v in GOOD.items() if k not in ("natMode", "natIpMode", "natVpcId")})
    assert (stack.nat_mode, stack.nat_ip_mode, stack.nat_vpc_id) == ("zonal", "manual", None)
    assert eks_stack(GOOD | {"natVpcId": ""}).nat_vpc_id is None  # natVpcId's "" is its documented "not set"

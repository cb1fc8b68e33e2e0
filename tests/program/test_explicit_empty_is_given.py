"""An explicit 0 or "" is an input, not "unset": only an absent value takes a default (the `or DEFAULT` bug that made
wirespeed:holdSeconds 0 into 240). Each case here took the default for a given 0 or "" before."""

from __future__ import annotations

from typing import Any

import pytest

from wirespeed.aws import stack_config as aws_stack_config
from wirespeed.azure import stack_config as azure_stack_config
from wirespeed.problems import Problem
from wirespeed.program import review
from wirespeed.program.model import ProgramPlan
from wirespeed.terraform import node_tuning, sizing


def test_an_empty_aws_nat_mode_is_refused_as_the_module_refuses_it_not_sized_zonal() -> None:
    case = sizing._nat_case("aws_empty_mode", "aws", 1_000, "")
    assert case.get("error") == {"field": "mode", "variable": sizing.NAT_MODE_VARIABLE}, case
    assert sizing._nat_case("aws_absent_mode", "aws", 1_000)["expected"]["feasible"] is True


def test_an_empty_image_or_namespace_is_refused_as_the_module_refuses_it_not_replaced_by_the_default() -> None:
    for field, image, namespace in (("image", "", None), ("namespace", None, "")):
        case = node_tuning._case(f"empty_{field}", None, image, namespace, False, False, True)
        assert case["inputs"][field] == ""
        assert [error["variable"] for error in case.get("errors", [])] == [field], case


def _nat_review(profile: dict[str, Any]) -> review.OutboundReview:
    inputs = {"networkProfile": {"outboundType": "managedNATGateway", "natGatewayProfile": profile}}
    return review._outbound("aks", inputs, [], ProgramPlan(project=None, resources=(), stack_outputs={}))  # type: ignore[arg-type]


def test_a_nat_gateway_count_of_0_is_reviewed_as_0_ips_and_an_absent_one_as_akss_default_1() -> None:
    assert _nat_review({"managedOutboundIPProfile": {"count": 0}}).ip_count == 0
    assert "0 IP(s)" in " ".join(_nat_review({"managedOutboundIPProfile": {"count": 0}}).findings)
    assert _nat_review({}).ip_count == 1


# The stack configs' list keys once read a stated false, 0, "" or {} as the empty list (`settings.get(key) or []`):
# no security groups, no NAT gateways, no zones, silently. Only an absent key is the empty list; a stated value that
# is not a list of strings is refused under its key, with the value as typed.
AWS_STACK = {
    "clusterName": "prod",
    "nodeRoleArn": "arn:aws:iam::123456789012:role/eks-node",
    "subnetIds": ["subnet-a"],
    "nodeGroups": ["arm:c7gn.4xlarge:1:5"],
}
AZURE_STACK = {"location": "westeurope", "systemPool": "system:Standard_D4s_v6:2:3", "connectionsPerSecond": 12}
FALSY = [False, 0, "", {}]


@pytest.mark.parametrize("value", FALSY, ids=repr)
@pytest.mark.parametrize(
    "key", ["subnetIds", "securityGroupIds", "nodeGroups", "natPublicSubnets", "natPrivateRouteTables"]
)
def test_a_stated_falsy_aws_list_key_is_refused_not_read_as_empty(key: str, value: object) -> None:
    with pytest.raises(aws_stack_config.EksStackError) as caught:
        aws_stack_config.eks_stack(AWS_STACK | {key: value})
    assert Problem(f"wirespeed:{key}", value, "a list of strings") in caught.value.problems


@pytest.mark.parametrize("value", FALSY, ids=repr)
@pytest.mark.parametrize("key", ["zones", "pools", "existingIpIds"])
def test_a_stated_falsy_azure_list_key_is_refused_not_read_as_empty(key: str, value: object) -> None:
    with pytest.raises(azure_stack_config.StackConfigError) as caught:
        azure_stack_config.cluster_spec(AZURE_STACK | {key: value})
    assert Problem.refused(f"wirespeed:{key}", value, "a list of strings") in caught.value.problems


def test_absent_list_keys_are_the_empty_list() -> None:
    stack = aws_stack_config.eks_stack(AWS_STACK)
    assert (stack.security_group_ids, stack.nat_public_subnets, stack.egress) == ([], {}, None)
    spec = azure_stack_config.cluster_spec(AZURE_STACK)
    assert (spec.pools, spec.system_pool.zones, spec.outbound.existing_ip_ids) == ((), (), ())


@pytest.mark.parametrize("value", [False, 0, []], ids=repr)
def test_a_stated_falsy_aws_measured_peak_source_is_judged_not_read_as_not_measured(value: object) -> None:
    """measuredPeakSource's "" is its documented "not measured"; false or 0 is no source and is refused."""
    with pytest.raises(aws_stack_config.EksStackError) as caught:
        aws_stack_config.eks_stack(AWS_STACK | {"measuredPeakSource": value})
    assert "wirespeed:measuredPeakSource" in [p.field for p in caught.value.problems]
    assert aws_stack_config.eks_stack(AWS_STACK | {"measuredPeakSource": ""}).nat_measured_from is None


@pytest.mark.parametrize("key", ["allocatedOutboundPorts", "measuredPeakPortsPerNode", "outboundIpCount"])
def test_a_stated_false_azure_count_is_refused_not_read_as_the_documented_0(key: str) -> None:
    """An integer key's 0 is Pulumi.yaml's "not set"; false equals 0 in Python but is no count, and is refused."""
    with pytest.raises(azure_stack_config.StackConfigError) as caught:
        azure_stack_config.cluster_spec(AZURE_STACK | {key: False})
    assert any(p.field.startswith(f"wirespeed:{key}") for p in caught.value.problems), caught.value.problems
    azure_stack_config.cluster_spec(AZURE_STACK | {key: 0})  # 0: not set

"""An explicit 0 or "" is an input, not "unset": only an absent value takes a default (the `or DEFAULT` bug that made
wirespeed:holdSeconds 0 into 240). Each case here took the default for a given 0 or "" before."""

from __future__ import annotations

from typing import Any

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

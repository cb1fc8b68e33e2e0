"""The AKS module vectors say what their names say: a case named invalid_/infeasible_ is refused by the Python layer
and every other case is accepted. Without this, a change in wirespeed.azure that starts refusing a valid case would
only turn its vector into a refusal, which the Go suite would then check Terraform also makes, and pass."""

from __future__ import annotations

from typing import Any

import pytest

from wirespeed.azure import pools
from wirespeed.azure.spec import NodePoolSpec
from wirespeed.terraform import aks_node_pool, aks_outbound

CASES: list[dict[str, Any]] = [
    *aks_node_pool.vectors_document()["cases"],
    *aks_outbound.vectors_document()["cases"],
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: str(c["name"]))
def test_vector_is_refused_exactly_when_named_so(case: dict[str, Any]) -> None:
    refused = str(case["name"]).startswith(("invalid_", "infeasible_"))
    assert ("problems" in case) == refused, case.get("problems") or case.get("expected")
    if refused:
        # One broken input per case, so the Go suite's "only this error" check means one rule.
        assert len(case["problems"]) == 1, case["problems"]
        assert len(case["terraform_messages"]) == 1


def test_every_builtin_profile_has_a_vector() -> None:
    applied = {c["expected"]["profile"] for c in aks_node_pool.vectors_document()["cases"] if "expected" in c}
    assert applied == set(aks_node_pool.profiles_document()["locals"]["wirespeed_profiles"])


def test_system_pool_vectors_are_checked_as_the_system_pool() -> None:
    """A system_pool vector is judged by check_pool(system=True): its refused case is one a user pool may have, and
    only system pools carry the cluster's default_node_pool values."""
    cases = aks_node_pool.vectors_document()["cases"]
    system = [c for c in cases if c["inputs"].get(aks_node_pool.SYSTEM_VARIABLE)]
    assert {c["name"] for c in system} >= {"system_autoscaling", "invalid_system_min_count_zero"}
    refused = next(c for c in system if c["name"] == "invalid_system_min_count_zero")
    assert refused["problems"] == ["min_count: 0 is not allowed: must be a whole number between 1 and 1,000"]
    as_user_pool = {k: v for k, v in refused["inputs"].items() if k != aks_node_pool.SYSTEM_VARIABLE}
    plan, problems = pools.check_pool(NodePoolSpec(**as_user_pool))
    assert problems == []
    assert plan is not None
    for case in cases:
        if "expected" in case:
            assert ("default_node_pool" in case["expected"]) == (case in system), case["name"]

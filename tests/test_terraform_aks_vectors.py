"""The AKS module vectors say what their names say: a case named invalid_/infeasible_ is refused by the Python layer
and every other case is accepted. Without this, a change in wirespeed.azure that starts refusing a valid case would
only turn its vector into a refusal, which the Go suite would then check Terraform also makes, and pass."""

from __future__ import annotations

from typing import Any

import pytest

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

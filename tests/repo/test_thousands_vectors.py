"""Thousands separators are written three times (Python's format spec, the agent's profile.Thousands, the
aks-outbound module's commas local); tests/vectors/thousands.json is Python's answer, which the agent's tests read."""

from __future__ import annotations

import json

from wirespeed import numbers
from wirespeed.terraform import thousands


def test_every_case_is_pythons_grouping() -> None:
    cases = json.loads(thousands.VECTORS_PATH.read_text())["cases"]
    assert cases == [{"n": n, "text": format(n, ",")} for n in thousands._numbers()]
    assert all(numbers._thousands(case["n"]) == case["text"] for case in cases if case["n"] >= 0)


def test_the_cases_straddle_every_group_boundary() -> None:
    asked = {case["n"] for case in json.loads(thousands.VECTORS_PATH.read_text())["cases"]}
    for digits in range(1, 13):
        assert {10**digits - 1, 10**digits, -(10**digits)} <= asked

"""Each sizing result's ``to_json()`` has exactly the keys docs/cli-json.md documents for its command."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from conftest import ROOT
from wirespeed.sizing import (
    Pool,
    plan_aws_nat_gateway,
    plan_azure_nat_gateway,
    plan_backlog,
    plan_load_balancer,
    plan_rings,
)

DOC = (ROOT / "docs" / "cli-json.md").read_text(encoding="utf-8")


def documented_keys(heading: str) -> set[str]:
    """Every backticked key in the first column of the table under ``## heading``."""
    section = DOC.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    keys: set[str] = set()
    for row in re.findall(r"^\| (`[^|]+) \|", section, flags=re.MULTILINE):
        keys.update(re.findall(r"`([a-z_]+)`", row))
    return keys


CASES: list[tuple[str, Callable[[], dict[str, Any]]]] = [
    (
        "`wirespeed size azure-lb --json`",
        lambda: plan_load_balancer([Pool(100, 2, surge_is_percent=False)], ports=4_000, outbound_ips=7).to_json(),
    ),
    ("`wirespeed size azure-natgw --json` / `aws-natgw --json`", lambda: plan_azure_nat_gateway(70_000).to_json()),
    ("`wirespeed size azure-natgw --json` / `aws-natgw --json`", lambda: plan_aws_nat_gateway(120_000).to_json()),
    ("`wirespeed size rings --json`", lambda: plan_rings("mana", 100).to_json()),
    ("`wirespeed size backlog --json`", lambda: plan_backlog(100).to_json()),
]


@pytest.mark.parametrize(("heading", "build"), CASES, ids=["azure-lb", "azure-natgw", "aws-natgw", "rings", "backlog"])
def test_json_keys_are_exactly_the_documented_ones(heading, build):
    keys = documented_keys(heading)
    assert keys, f"no key table under {heading}"
    assert set(build()) == keys

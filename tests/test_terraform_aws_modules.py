"""The two numbers the AWS Terraform modules' main.tf must spell as literals (provider arguments, not facts a
rule reads) are the Pulumi components' own: a change to either side fails here."""

from __future__ import annotations

import re

import pytest

from wirespeed.aws import nat_egress, node_group
from wirespeed.terraform import MODULES


@pytest.mark.parametrize(
    ("module", "argument", "value"),
    [
        ("eks-node-group", "http_put_response_hop_limit", node_group.IMDS_HOP_LIMIT),
        ("aws-nat-egress", "period", nat_egress.ALARM_PERIOD_SECONDS),
    ],
)
def test_main_tf_literal_is_the_components(module: str, argument: str, value: int) -> None:
    text = (MODULES / module / "main.tf").read_text()
    found = re.findall(rf"^\s*{argument}\s*=\s*(\d+)\s*$", text, re.MULTILINE)
    assert found == [str(value)], f"modules/{module}/main.tf {argument}: {found}, the component uses {value}"

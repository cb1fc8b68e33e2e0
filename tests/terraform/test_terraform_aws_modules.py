"""The two provider arguments the AWS Terraform modules share with the Pulumi components (IMDS hop limit, alarm
period) are read from the modules' generated facts, which hold the components' own constants: a change on
either side cannot leave the other behind, and main.tf types neither number."""

from __future__ import annotations

import json
import re

import pytest

from wirespeed.aws import nat_egress, node_group
from wirespeed.terraform import MODULES


@pytest.mark.parametrize(
    ("module", "argument", "facts_file", "facts", "key", "value"),
    [
        (
            "eks-node-group",
            "http_put_response_hop_limit",
            "catalog.tf.json",
            "node_group_facts",
            "imds_hop_limit",
            node_group.IMDS_HOP_LIMIT,
        ),
        *[
            (module, "period", "facts.tf.json", "nat_facts", "alarm_period_seconds", nat_egress.ALARM_PERIOD_SECONDS)
            for module in ("aws-nat-egress-zonal", "aws-nat-egress-regional")
        ],
    ],
)
def test_main_tf_reads_the_components_number_from_the_generated_facts(
    module: str, argument: str, facts_file: str, facts: str, key: str, value: int
) -> None:
    text = (MODULES / module / "main.tf").read_text()
    found = re.findall(rf"^\s*{argument}\s*=\s*(\S+)\s*$", text, re.MULTILINE)
    assert found == [f"local.{facts}.{key}"], f"modules/{module}/main.tf {argument}: {found}"
    generated = json.loads((MODULES / module / facts_file).read_text())["locals"][facts][key]
    assert generated == value, f"modules/{module}/{facts_file} {key}: {generated}, the component uses {value}"

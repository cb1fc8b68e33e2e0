"""Every example workload plans cleanly: docs that are run cannot rot."""

from __future__ import annotations

import pytest

from conftest import ROOT
from wirespeed.workload import load_workload, plan

EXAMPLES = sorted((ROOT / "examples" / "workloads").glob("*.json"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_plans(path):
    result = plan(load_workload(path)).to_json()
    assert result["profile"]["rings"]
    if "feasible" in result["outbound"]:
        assert result["outbound"]["feasible"]


def test_examples_exist():
    assert len(EXAMPLES) >= 2


def test_bad_workload_names_the_field(tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text(
        '{"name": "x", "cloud": "gcp", "instance_type": "D4s_v5", "node_pools": [], '
        '"outbound": {}, "nic": {"driver": "mana", "host_line_rate_gbps": 10}}'
    )
    with pytest.raises(ValueError, match=r"^" + str(bad).replace("/", "/") + r": cloud: 'gcp' is not allowed"):
        load_workload(bad)


def test_plan_says_what_to_set_and_offers_network_optimised_types():
    result = plan(load_workload(None))
    settings = "\n".join(result.settings())
    assert f"allocatedOutboundPorts {result.outbound.to_json()['allocated_outbound_ports']}" in settings
    alternatives = result.alternatives()
    assert alternatives, "the bundled example uses a Dsv5 size, which is not network-optimised"
    assert all(t.network_optimised and t.vcpu == result.instance.vcpu for t in alternatives)
    assert [t.baseline_gbps for t in alternatives] == sorted((t.baseline_gbps for t in alternatives), reverse=True)

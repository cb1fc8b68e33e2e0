"""The shared vectors modules/sizing is tested over cover what they must: feasible, infeasible and invalid load
balancer plans, every NIC driver, the ring rules' edges and every rings validation rule.

They are Python's numbers (python -m wirespeed.terraform writes them; tests/terraform/test_terraform_generated.py fails
when a
committed copy is stale); the Go suite (tests/terratest/sizing_test.go) applies the module over them with the real
terraform binary. Only what needs the Python engine stays here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from wirespeed import catalog
from wirespeed.sizing import rings
from wirespeed.terraform import sizing as terraform_facts


def _cases(path: Any) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(path.read_text())["cases"]
    return cases


VECTORS = _cases(terraform_facts.VECTORS_PATH)
VALID = [c for c in VECTORS if "expected" in c]
INVALID = [c for c in VECTORS if "error" in c]
RINGS = _cases(terraform_facts.RINGS_VECTORS_PATH)
RINGS_VALID = {c["name"]: c for c in RINGS if "expected" in c}
RINGS_INVALID = [c for c in RINGS if "error" in c]


def test_vectors_cover_feasible_infeasible_and_invalid() -> None:
    assert any(c["expected"]["feasible"] for c in VALID)
    assert any(c["expected"]["feasible"] is False and c["expected"]["infeasible"] is None for c in VALID)
    assert {c["expected"]["infeasible"]["field"] for c in VALID if c["expected"]["infeasible"]} == {
        "ports per node",
        "outbound IPs",
    }
    assert {c["error"]["variable"] for c in INVALID} == {
        "allocated_outbound_ports",
        "outbound_ips",
        "pools",
        "workload",
    }


def test_case_names_are_unique_across_vector_files() -> None:
    """The Go suite keys one root's for_each by case name over every sizing_*.json."""
    names = [
        c["name"]
        for path in terraform_facts.ROOT.glob("tests/vectors/sizing_*.json")
        if path != terraform_facts.README_VECTORS_PATH
        for c in _cases(path)
    ]
    assert len(names) == len(set(names))


def test_rings_vectors_cover_every_driver_in_nic_drivers_json() -> None:
    drivers = catalog.nic_drivers()
    covered = {c["inputs"]["rings"]["driver"] for c in RINGS}
    assert set(drivers) <= covered
    refused = {c["inputs"]["rings"]["driver"] for c in RINGS_INVALID if c["error"]["field"] == "driver"}
    assert {name for name, d in drivers.items() if not d.has_rings} <= refused


def test_rings_vectors_cover_every_rounding_rule_and_limit() -> None:
    expected = [c["expected"] for c in RINGS_VALID.values()]
    assert {catalog.nic_driver(e["driver"]).rounding for e in expected} == {
        "up_power_of_two",
        "down_power_of_two",
        "multiple_of_8",
    }
    assert any(e["rx_capped_at_driver_max"] and not e["tx_capped_at_driver_max"] for e in expected)
    assert any(e["tx_capped_at_driver_max"] and not e["rx_capped_at_driver_max"] for e in expected)
    # The driver's default when it holds the stall (issue 25: never a ring below it), and a multiple-of-8 driver's
    # own rounding above its default.
    assert any(e["rx"] == e["rx_default"] > e["packets_in_stall"] for e in expected)
    assert any(
        catalog.nic_driver(e["driver"]).rounding == "multiple_of_8" and e["rx"] > e["rx_default"] and e["rx"] % 8 == 0
        for e in expected
    )


@pytest.mark.parametrize(
    ("name", "rx", "packets"),
    [
        ("ena_8128_asks_8192", 8_192, 8_128),  # ENA rounds a request down: 8,128 would become 4,096
        ("ena_exact_power_of_two_kept", 4_096, 4_096),
        ("ena_one_over_power_of_two", 8_192, 4_097),
    ],
)
def test_rings_vectors_hold_the_ena_round_down_cases(name: str, rx: int, packets: int) -> None:
    expected = RINGS_VALID[name]["expected"]
    assert (expected["rx"], expected["packets_in_stall"]) == (rx, packets)


def test_rings_vectors_exercise_every_rings_validation_rule() -> None:
    fields = {c["error"]["field"] for c in RINGS_INVALID}
    assert fields == {"driver", "line_rate_gbps", "stall_ms", "packet_bytes", "queues"}
    assert {c["inputs"]["rings"]["queues"] for c in RINGS_INVALID if c["error"]["field"] == "queues"} >= {
        rings.QUEUES_RANGE[0] - 1,
        rings.QUEUES_RANGE[1] + 1,
    }

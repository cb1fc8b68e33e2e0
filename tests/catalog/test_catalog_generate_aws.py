"""The AWS catalog generator: committed output is reproducible, and NetworkPerformance parsing."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wirespeed.catalog import generate_aws

COMMITTED = generate_aws.DEFAULT_OUTPUT


def test_committed_catalog_equals_generator_output() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == generate_aws.generate(), (
        "aws_instance_types.json is stale: run python -m wirespeed.catalog.generate_aws"
    )


def test_check_mode_through_the_module_entry_point(tmp_path: Path) -> None:
    run = [sys.executable, "-m", "wirespeed.catalog.generate_aws"]
    ok = subprocess.run([*run, "--check"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    stale = tmp_path / "aws.json"
    stale.write_text("{}\n")
    bad = subprocess.run([*run, "--check", "--output", str(stale)], capture_output=True, text=True)
    assert bad.returncode == 1
    assert "is out of date: run python -m wirespeed.catalog.generate_aws" in bad.stderr
    written = subprocess.run([*run, "--output", str(stale)], capture_output=True, text=True)
    assert written.returncode == 0, written.stderr
    assert stale.read_text() == COMMITTED.read_text()


def test_catalog_runtime_does_not_import_moto() -> None:
    code = "import sys, wirespeed.catalog as c; c.instance_types(); print('moto' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_source_provenance_recorded() -> None:
    doc = json.loads(COMMITTED.read_text())
    assert doc["source"]["package"] == "moto"
    assert doc["source"]["version"] == generate_aws.MOTO_VERSION == "5.2.1"
    assert len(doc["source"]["sha256"]) == 64


def record(performance: str, cards: list[dict[str, Any]] | None = None, **net: Any) -> dict[str, Any]:
    """A minimal DescribeInstanceTypes record (the fields the generator reads)."""
    if cards is None:
        cards = [{"NetworkCardIndex": 0, "BaselineBandwidthInGbps": 1.0, "PeakBandwidthInGbps": 10.0}]
    return {
        "InstanceType": "x9n.large",
        "VCpuInfo": {"DefaultVCpus": 2},
        "MemoryInfo": {"SizeInMiB": 5376},
        "ProcessorInfo": {"SupportedArchitectures": ["x86_64"]},
        "NetworkInfo": {
            "NetworkPerformance": performance,
            "MaximumNetworkInterfaces": 3,
            "DefaultNetworkCardIndex": 0,
            "NetworkCards": cards,
            "EnaSupport": "required",
            **net,
        },
    }


TWO_CARDS = [
    {"NetworkCardIndex": 0, "BaselineBandwidthInGbps": 200.0, "NetworkPerformance": "Up to 170 Gigabit"},
    {"NetworkCardIndex": 1, "BaselineBandwidthInGbps": 200.0, "NetworkPerformance": "Up to 170 Gigabit"},
]


@pytest.mark.parametrize(
    ("rec", "baseline", "burst"),
    [
        pytest.param(record("50 Gigabit"), 50.0, 50.0, id="fixed"),
        pytest.param(record("37.5 Gigabit"), 37.5, 37.5, id="fixed-fraction"),
        pytest.param(record("Up to 12.5 Gigabit"), 1.0, 12.5, id="burstable-uses-card-baseline"),
        pytest.param(record("200 Gigabit", TWO_CARDS), 200.0, 200.0, id="multi-card-not-summed"),
        pytest.param(
            record("Up to 10 Gigabit", [{"NetworkCardIndex": 0, "BaselineBandwidthInGbps": 25.0}]),
            10.0,
            10.0,
            id="baseline-capped-at-ceiling",
        ),
    ],
)
def test_parse_bandwidth(rec: dict[str, Any], baseline: float, burst: float) -> None:
    assert generate_aws.parse_bandwidth(rec) == generate_aws.Bandwidth(baseline, burst)


@pytest.mark.parametrize(
    ("rec", "message"),
    [
        pytest.param(
            record("Moderate"), "x9n.large: NetworkPerformance 'Moderate' is not 'N Gigabit'", id="word-rating"
        ),
        pytest.param(
            record("Up to 25 Gigabit", []),
            "x9n.large: burstable but no BaselineBandwidthInGbps on network card 0",
            id="burstable-without-card",
        ),
    ],
)
def test_parse_bandwidth_errors(rec: dict[str, Any], message: str) -> None:
    with pytest.raises(generate_aws.GeneratorError, match=message):
        generate_aws.parse_bandwidth(rec)


def test_build_catalog_keeps_every_ena_type_and_says_why_a_family_is_left_out() -> None:
    # Issue 25: t3/t4g (EKS's default t3.medium) were left out, so the gates assumed a line rate for them. Every
    # ENA type is in now, the burstable ones with their baseline and burst; a family is left out only with a reason.
    small = record("Up to 25 Gigabit", EnaSrdSupported=True)
    big = copy.deepcopy(record("100 Gigabit", EfaSupported=True))
    big["InstanceType"], big["VCpuInfo"]["DefaultVCpus"] = "x9n.16xlarge", 64
    burstable = copy.deepcopy(small)
    burstable["InstanceType"] = "t3.micro"
    xen = record("Low to Moderate", EnaSupport="unsupported")
    xen["InstanceType"] = "t2.micro"
    doc = generate_aws.build_catalog(
        {"x9n.16xlarge": big, "t3.micro": burstable, "x9n.large": small, "t2.micro": xen},
        source_version="0",
        source_sha256="0" * 64,
        network_optimised=("x9n", "y1n"),
    )
    assert [e["name"] for e in doc["instance_types"]] == ["t3.micro", "x9n.large", "x9n.16xlarge"]
    assert doc["instance_types"][0]["baseline_gbps"] == 1.0
    assert doc["instance_types"][0]["burst_gbps"] == 25.0
    assert doc["families"]["missing_from_source"] == ["y1n"]
    assert doc["families"]["excluded"] == {"t2": "no ENA NIC (the catalog's one AWS NIC kind)"}
    assert doc["families"]["previous_generation"] == ["t3", "x9n"]  # none of these records says CurrentGeneration
    first = doc["instance_types"][1]
    assert first == {
        "name": "x9n.large",
        "family": "x9n",
        "vcpu": 2,
        "memory_gib": 5.25,
        "baseline_gbps": 1.0,
        "burst_gbps": 25.0,
        "max_enis": 3,
        "ena_express": True,
        "efa": False,
        "architecture": "x86_64",
    }
    assert json.loads(generate_aws.render(doc)) == doc


def test_a_multi_card_figure_is_the_instance_total() -> None:
    # p5.48xlarge: "3200 Gigabit"; some GPU types write their cards: "4x 100 Gigabit" is 400.
    bandwidth = generate_aws.parse_bandwidth(record("4x 100 Gigabit"))
    assert (bandwidth.baseline_gbps, bandwidth.burst_gbps) == (400.0, 400.0)


def test_the_pinned_records_give_t3_medium_its_baseline_and_burst() -> None:
    from wirespeed import catalog

    t3 = catalog.lookup("t3.medium")
    assert (t3.baseline_gbps, t3.burst_gbps, t3.burstable) == (0.256, 5.0, True)
    assert catalog.lookup("t4g.medium").architecture == "arm64"
    assert catalog.lookup("m5.large").nic == "ena"

"""catalog.lookup, catalog.instance_types and their errors."""

from __future__ import annotations

import pytest

from wirespeed import catalog


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        pytest.param("Standard_D16s_v6", "Standard_D16s_v6", id="canonical-azure"),
        pytest.param("standard_d16s_v6", "Standard_D16s_v6", id="lower-case"),
        pytest.param("STANDARD_D16S_V6", "Standard_D16s_v6", id="upper-case"),
        pytest.param("D16s_v6", "Standard_D16s_v6", id="no-prefix"),
        pytest.param("d16s_v6", "Standard_D16s_v6", id="no-prefix-lower"),
        pytest.param("  Standard_D16s_v6 ", "Standard_D16s_v6", id="surrounding-space"),
        pytest.param("standard-d16s-v6", "Standard_D16s_v6", id="hyphens"),
        pytest.param("E192is_v6", "Standard_E192is_v6", id="isolated-size"),
        pytest.param("c6in.8xlarge", "c6in.8xlarge", id="canonical-aws"),
        pytest.param("C6IN.8XLARGE", "c6in.8xlarge", id="aws-upper-case"),
        pytest.param("c8gn.metal-48xl", "c8gn.metal-48xl", id="aws-metal-with-hyphen"),
    ],
)
def test_lookup_accepts_forgiving_names(typed: str, canonical: str) -> None:
    assert catalog.lookup(typed).name == canonical


@pytest.mark.parametrize(
    ("typed", "expected_first"),
    [
        pytest.param("D16s_v7", "Standard_D16s_v6", id="wrong-generation"),
        pytest.param("Standard_D16sv6", "Standard_D16s_v6", id="missing-underscore"),
        pytest.param("c6in.8xl", "c6in.8xlarge", id="abbreviated-size"),
        pytest.param("c6n.8xlarge", "c6in.8xlarge", id="misspelt-family"),
    ],
)
def test_unknown_name_suggests_nearest(typed: str, expected_first: str) -> None:
    with pytest.raises(catalog.UnknownInstanceType) as info:
        catalog.lookup(typed)
    err = info.value
    assert err.name == typed
    assert err.suggestions[0] == expected_first
    assert len(err.suggestions) <= 5
    assert str(err) == f"unknown instance type {typed!r}: did you mean {', '.join(err.suggestions)}?"


def test_unknown_name_without_neighbours_points_at_the_list() -> None:
    with pytest.raises(LookupError, match=r"'zzz': no similar name; `wirespeed catalog list`"):
        catalog.lookup("zzz")


def test_unknown_instance_type_is_a_lookup_error() -> None:
    assert issubclass(catalog.UnknownInstanceType, LookupError)


def test_instance_types_sorted_by_cloud_family_vcpu() -> None:
    types = catalog.instance_types()
    keys = [(t.cloud, t.family, t.vcpu) for t in types]
    assert keys == sorted(keys)
    assert len({t.name for t in types}) == len(types)


@pytest.mark.parametrize(
    ("kwargs", "check"),
    [
        pytest.param({"cloud": "azure"}, lambda t: t.cloud == "azure", id="azure"),
        pytest.param({"cloud": "aws"}, lambda t: t.cloud == "aws", id="aws"),
        pytest.param({"network_optimised": True}, lambda t: t.network_optimised, id="network-optimised"),
        pytest.param({"network_optimised": False}, lambda t: not t.network_optimised, id="not-network-optimised"),
        pytest.param({"min_gbps": 50}, lambda t: t.baseline_gbps >= 50, id="min-gbps"),
        pytest.param(
            {"cloud": "aws", "network_optimised": True, "min_gbps": 100},
            lambda t: t.cloud == "aws" and t.network_optimised and t.baseline_gbps >= 100,
            id="all-filters",
        ),
    ],
)
def test_filters_keep_exactly_the_matching_types(kwargs: dict[str, object], check) -> None:  # type: ignore[no-untyped-def]
    selected = catalog.instance_types(**kwargs)  # type: ignore[arg-type]
    assert selected, "filter selected nothing"
    assert all(check(t) for t in selected)
    assert [t for t in catalog.instance_types() if check(t)] == selected


def test_min_gbps_uses_the_sustained_baseline_not_the_burst() -> None:
    names = {t.name for t in catalog.instance_types(cloud="aws", min_gbps=12.5)}
    assert "m7i.large" not in names  # bursts to 12.5, sustains 0.781
    assert "c6in.8xlarge" in names


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"cloud": "gcp"}, "^cloud: 'gcp' is not allowed: one of azure, aws$", id="bad-cloud"),
        pytest.param(
            {"min_gbps": -1}, r"^min_gbps: -1 is not allowed: a finite number >= 0 \(Gb/s\)$", id="negative-gbps"
        ),
        pytest.param({"min_gbps": float("nan")}, r"^min_gbps: nan is not allowed", id="nan-gbps"),
        pytest.param({"min_gbps": float("inf")}, r"^min_gbps: inf is not allowed", id="inf-gbps"),
    ],
)
def test_filter_arguments_are_validated(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        catalog.instance_types(**kwargs)  # type: ignore[arg-type]


def test_to_json_has_stable_keys() -> None:
    doc = catalog.lookup("m7i.large").to_json()
    assert doc == {
        "cloud": "aws",
        "name": "m7i.large",
        "family": "m7i",
        "vcpu": 2,
        "memory_gib": 8.0,
        "baseline_gbps": 0.781,
        "burst_gbps": 12.5,
        "max_nics": 3,
        "network_optimised": False,
        "nic": "ena",
        "ena_express": False,
        "efa": False,
        "architecture": "x86_64",
        "source": doc["source"],
        "max_bandwidth_mbps": 12500,
    }
    assert "moto 5.2.1" in str(doc["source"])


def test_import_reads_no_data_file() -> None:
    import subprocess
    import sys

    code = (
        "import wirespeed.catalog as c, wirespeed.catalog._load as l; "
        "print(l.azure_types.cache_info().currsize, l.aws_types.cache_info().currsize, "
        "l.drivers.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "0", "0"]


def test_no_alternative_is_a_preview_size() -> None:
    # Dnsv6's D2ns_v6 (2 vCPU, 25 Gb/s) would otherwise rank first for a 2-vCPU D size asking for 25 Gb/s.
    assert catalog.lookup("Standard_D2ns_v6").preview
    for size in catalog.instance_types(cloud="azure", network_optimised=False):
        assert not any(t.preview for t in catalog.network_optimised_alternatives(size, min_gbps=25)), size.name
    assert all(not t.preview for t in catalog.network_optimised_alternatives(catalog.lookup("Standard_D2s_v5")))

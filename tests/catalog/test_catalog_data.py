"""The catalog's figures: every promised family is there, and spot values match their cited sources."""

from __future__ import annotations

import re

import pytest

from wirespeed import catalog
from wirespeed.catalog import generate_aws

# Issue 25 item 5: the D, E, F, B and L families v2 to v6 a team on AKS plausibly runs, with the AMD (a), Arm (p),
# local-disk (d) and low-memory (l) variants; every one generated from its series page's tables.
AZURE_FAMILIES = (
    "Dsv2", "Dv2", "Dv3", "Dsv3", "Dv4", "Dsv4", "Ddv4", "Ddsv4", "Dav4", "Dasv4", "Dv5", "Dsv5", "Ddv5", "Ddsv5",
    "Dasv5", "Dadsv5", "Dlsv5", "Dldsv5", "Dpsv5", "Dpdsv5", "Dplsv5", "Dsv6", "Ddsv6", "Dlsv6", "Dldsv6", "Dasv6",
    "Dadsv6", "Dalsv6", "Daldsv6", "Dpsv6", "Dpdsv6", "Dplsv6", "Dpldsv6", "Bsv2", "Basv2", "Bpsv2", "Ev4", "Esv4",
    "Edv4", "Edsv4", "Eav4", "Easv4", "Ev5", "Esv5", "Edv5", "Edsv5", "Easv5", "Eadsv5", "Epsv5", "Epdsv5", "Esv6",
    "Edsv6", "Easv6", "Eadsv6", "Epsv6", "Epdsv6", "Fsv2", "Fasv6", "Falsv6", "Famsv6", "Lsv3", "Lasv3", "Mv2",
    "Dpldsv5", "Ev3", "Esv3", "Ebsv5", "Ebdsv5", "Lsv4", "Lasv4", "Lasv5", "Msv2", "Mdsv2", "Msv3", "Mdsv3", "Mbsv3",
    "Mbdsv3", "Dnsv6", "Dndsv6", "Dnlsv6", "Dnldsv6", "Ensv6", "Endsv6", "Laosv4", "Laosv5", "Ebsv6", "Ebdsv6",
    "Msv4", "Mdsv4", "Mbsv4", "Mbdsv4", "Lsv2", "FXmsv2", "FXmdsv2",
)  # fmt: skip
# The families whose pages title their series "(Preview)" (azure_size_tables.json notes quote each heading).
AZURE_PREVIEW = ("Dnsv6", "Dndsv6", "Dnlsv6", "Dnldsv6", "Ensv6", "Endsv6", "Ebsv6", "Ebdsv6", "Msv4", "Mdsv4", "Mbsv4",
                 "Mbdsv4")  # fmt: skip
# The memory-optimised Dv2/DSv2 sizes (D11-D15) are a second table on their own page, so a family of their own.
AZURE_MEMORY_DV2 = ("Dv2 11-15", "DSv2 11-15")
# AWS lists m8idn and r8idn too (docs.aws.amazon.com/ec2/latest/instancetypes/instance-types.html, "Current
# generation instances"); moto 5.2.1 has no records for them (the generated file says so in
# families.missing_from_source, checked below).
AWS_NETWORK_OPTIMISED_IN_MOTO = (
    "c5n", "m5n", "m5dn", "r5n", "r5dn", "c6gn", "c6in", "m6in", "m6idn", "r6in", "r6idn", "c7gn",
    "c8gn", "m8gn", "r8gn", "c8in", "m8in", "r8in", "c8ine", "m8ine",
)  # fmt: skip
AWS_COMPARISON = ("m7i", "c7i", "m6i")


@pytest.mark.parametrize("family", AZURE_FAMILIES)
def test_every_azure_family_present_with_a_cited_source(family: str) -> None:
    sizes = [t for t in catalog.instance_types(cloud="azure") if t.family == family]
    assert sizes, f"{family} missing"
    # The family's own page (dsv3-series), a page it shares (ev3-esv3-series) or a named one (msv2-mm-series).
    slug = re.compile(re.escape(family.lower()) + r"(-[a-z0-9]+)*-series")
    assert all(slug.search(t.source) and "MicrosoftDocs/azure-compute-docs" in t.source for t in sizes)
    assert all("generate_azure" in t.source for t in sizes)  # one source: the tables file, never a hand-typed row
    assert all(t.nic == ("mana" if family.endswith("v6") else "mellanox-or-mana") for t in sizes)
    assert all(t.network_optimised == family.endswith("v6") for t in sizes)


@pytest.mark.parametrize("family", AWS_NETWORK_OPTIMISED_IN_MOTO + AWS_COMPARISON)
def test_every_aws_family_present(family: str) -> None:
    sizes = [t for t in catalog.instance_types(cloud="aws") if t.family == family]
    assert sizes, f"{family} missing"
    assert all(t.network_optimised == (family in AWS_NETWORK_OPTIMISED_IN_MOTO) for t in sizes)
    assert all(t.nic == "ena" for t in sizes)


def test_generator_lists_the_families_moto_lacks() -> None:
    missing = set(generate_aws.NETWORK_OPTIMISED_FAMILIES) - set(AWS_NETWORK_OPTIMISED_IN_MOTO)
    assert missing == {"m8idn", "r8idn"}
    families = {t.family for t in catalog.instance_types(cloud="aws")}
    assert not missing & families


# (name, vcpu, memory GiB, baseline Gbps, burst Gbps, max NICs, ENA Express, EFA, architecture)
# Azure rows: the series page's Basics and Network tabs (source cited in azure_sizes.json).
# AWS rows: the DescribeInstanceTypes records in moto 5.2.1 (moto/ec2/resources/instance_types.json.gz).
SPOT = [
    ("Standard_D2s_v6", 2, 8, 12.5, 12.5, 2, False, False, "x86_64"),
    ("Standard_D16s_v6", 16, 64, 12.5, 12.5, 8, False, False, "x86_64"),
    ("Standard_D192s_v6", 192, 768, 82, 82, 8, False, False, "x86_64"),
    ("Standard_D128ds_v6", 128, 512, 54, 54, 8, False, False, "x86_64"),
    ("Standard_D192ds_v6", 192, 768, 82, 82, 8, False, False, "x86_64"),
    ("Standard_D96ls_v6", 96, 192, 41, 41, 8, False, False, "x86_64"),
    ("Standard_D16as_v6", 16, 64, 16, 16, 8, False, False, "x86_64"),
    ("Standard_D96ads_v6", 96, 384, 40, 40, 8, False, False, "x86_64"),
    ("Standard_D8ps_v6", 8, 32, 15, 15, 4, False, False, "arm64"),
    ("Standard_D96pls_v6", 96, 192, 60, 60, 8, False, False, "arm64"),
    ("Standard_E20s_v6", 20, 160, 12.5, 12.5, 8, False, False, "x86_64"),
    ("Standard_E192is_v6", 192, 1832, 200, 200, 8, False, False, "x86_64"),
    ("Standard_E96as_v6", 96, 672, 40, 40, 8, False, False, "x86_64"),
    ("Standard_D96s_v5", 96, 384, 35, 35, 8, False, False, "x86_64"),
    ("Standard_D48ds_v5", 48, 192, 24, 24, 8, False, False, "x86_64"),
    ("Standard_D2s_v3", 2, 8, 1, 1, 2, False, False, "x86_64"),
    ("Standard_D16s_v3", 16, 64, 2, 2, 8, False, False, "x86_64"),
    ("Standard_D64s_v3", 64, 256, 30, 30, 8, False, False, "x86_64"),
    ("c6in.8xlarge", 32, 64, 50, 50, 8, True, False, "x86_64"),
    ("c5n.18xlarge", 72, 192, 100, 100, 15, False, True, "x86_64"),
    ("m7i.large", 2, 8, 0.781, 12.5, 3, False, False, "x86_64"),
    ("c6in.32xlarge", 128, 256, 200, 200, 16, True, True, "x86_64"),
    ("c8gn.48xlarge", 192, 384, 600, 600, 24, True, True, "arm64"),
    ("c8ine.8xlarge", 32, 64, 50, 50, 8, False, False, "x86_64"),
    ("m8ine.12xlarge", 48, 192, 75, 75, 12, False, False, "x86_64"),
]


@pytest.mark.parametrize(
    ("name", "vcpu", "memory", "baseline", "burst", "nics", "ena_express", "efa", "arch"),
    [pytest.param(*row, id=row[0]) for row in SPOT],
)
def test_spot_values(
    name: str,
    vcpu: int,
    memory: float,
    baseline: float,
    burst: float,
    nics: int,
    ena_express: bool,
    efa: bool,
    arch: str,
) -> None:
    t = catalog.lookup(name)
    got = (t.vcpu, t.memory_gib, t.baseline_gbps, t.burst_gbps, t.max_nics, t.ena_express, t.efa, t.architecture)
    assert got == (vcpu, memory, baseline, burst, nics, ena_express, efa, arch)


def test_azure_bandwidth_is_the_docs_mbps_figure() -> None:
    assert catalog.lookup("Standard_D16as_v6").max_bandwidth_mbps == 16000
    assert catalog.lookup("Standard_D8ps_v6").max_bandwidth_mbps == 15000


@pytest.mark.parametrize("cloud", ["azure", "aws"])
def test_figures_are_sane(cloud: catalog.Cloud) -> None:
    for t in catalog.instance_types(cloud=cloud):
        assert 0 < t.baseline_gbps <= t.burst_gbps, t.name
        assert t.vcpu >= 1, t.name
        assert t.memory_gib > 0, t.name
        assert t.max_nics >= 1, t.name
        assert t.source, t.name


def test_azure_nic_count_is_the_pages_own_figure() -> None:
    # The rule of thumb NICs 2/2/4/8 for 2/4/8/>=16 vCPU holds on the v3, v5 and v6 families (MicrosoftDocs/
    # azure-compute-docs articles/virtual-machines/sizes/*-series.md, each cited in azure_sizes.json); the catalog keeps
    # each page's own figure where a page differs from it (Standard_DS4_v2: 8 vCPU, 8 NICs; F16s_v2: 16 vCPU, 4 NICs).
    expected = {2: 2, 4: 2, 8: 4}
    for family in ("Dsv3", "Dsv5", "Ddsv5", "Dsv6", "Ddsv6", "Esv6", "Easv6"):
        for t in catalog.instance_types(cloud="azure"):
            if t.family == family:
                assert t.max_nics == expected.get(t.vcpu, 8), t.name
    assert catalog.lookup("Standard_DS4_v2").max_nics == 8
    assert catalog.lookup("Standard_F16s_v2").max_nics == 4
    assert catalog.lookup("Standard_L8s_v3").max_nics == 4
    assert catalog.lookup("Standard_B16s_v2").max_nics == 4


def test_the_generated_azure_families_are_current_and_hold_older_arm_and_compute_optimised_sizes() -> None:
    from wirespeed.catalog import generate_azure

    assert generate_azure.main(["--check"]) == 0
    for name, gbps, arch in [
        ("Standard_DS2_v2", 1.5, "x86_64"),
        ("Standard_D4ps_v5", 12.5, "arm64"),
        ("Standard_F8s_v2", 12.5, "x86_64"),
        ("Standard_D2s_v4", 5.0, "x86_64"),
    ]:
        size = catalog.lookup(name)
        assert (size.burst_gbps, size.architecture, size.nic) == (gbps, arch, "mellanox-or-mana"), name
        assert "learn.microsoft.com/azure/virtual-machines/sizes/" in size.source
    with pytest.raises(catalog.UnknownInstanceType):
        catalog.lookup("Standard_DS1_v2")  # 1 vCPU: AKS runs no node on it, so the generator leaves it out


def test_the_azure_generator_refuses_tables_that_disagree() -> None:
    from wirespeed.catalog import generate_azure

    family = {
        "family": "Xsv9",
        "page": "p",
        "file": "f",
        "commit": "0" * 40,
        "nic": "mellanox-or-mana",
        "architecture": "x86_64",
        "network_optimised": False,
        "accelerated_networking": "Supported",
        "basics": ["| Standard_X2s_v9 | 2 | 8 |"],
        "network": ["| Standard_X4s_v9 | 2 | 12,500 |"],
    }
    with pytest.raises(generate_azure.GeneratorError, match="list different sizes"):
        generate_azure.family_entry(family, 0)
    family["network"] = ["| Standard_X2s_v9 | 2 | 12.5 |"]
    with pytest.raises(generate_azure.GeneratorError, match="is not a whole number"):
        generate_azure.family_entry(family, 0)
    family["network"] = ["| Standard_X2s_v9 | 2 | 12,500 |"]
    assert generate_azure.family_entry(family, 0)["sizes"] == [
        {"name": "Standard_X2s_v9", "vcpu": 2, "memory_gib": 8, "max_nics": 2, "max_bandwidth_mbps": 12500}
    ]


def test_the_azure_generator_refuses_a_size_in_two_families_and_keeps_a_note() -> None:
    from wirespeed.catalog import generate_azure

    family = {
        "family": "Xsv9",
        "page": "p",
        "file": "f",
        "commit": "0" * 40,
        "nic": "mellanox-or-mana",
        "architecture": "x86_64",
        "network_optimised": False,
        "accelerated_networking": "Required",
        "note": "why a figure looks odd",
        "basics": ["| Standard_X2s_v9 | 2 | 8 |", "| Standard_X1s_v9 | 1 | 4 |"],
        "network": ["| Standard_X2s_v9 | 2 | 12500 |", "| Standard_X1s_v9 | 2 | 6250 |"],
    }
    entry = generate_azure.family_entry(family, 0)
    assert entry["note"] == "why a figure looks odd"
    assert entry["left_out"].startswith("Standard_X1s_v9: fewer than 2 vCPUs")
    with pytest.raises(generate_azure.GeneratorError, match="Standard_X2s_v9 is in both Xsv9 and Ysv9"):
        generate_azure.build({"families": [family, family | {"family": "Ysv9"}]})
    with pytest.raises(generate_azure.GeneratorError, match=r"families listed twice: \['Xsv9'\]"):
        generate_azure.build({"families": [family, family]})
    with pytest.raises(generate_azure.GeneratorError, match="accelerated networking 'Not Supported'"):
        generate_azure.family_entry(family | {"accelerated_networking": "Not Supported"}, 0)


@pytest.mark.parametrize(
    ("name", "family", "gbps", "arch"),
    [
        ("Standard_D2_v2", "Dv2", 1.5, "x86_64"),
        ("Standard_D4_v3", "Dv3", 2, "x86_64"),
        ("Standard_D2ds_v4", "Ddsv4", 5, "x86_64"),
        ("Standard_D96ads_v5", "Dadsv5", 40, "x86_64"),
        ("Standard_D64pds_v5", "Dpdsv5", 40, "arm64"),
        ("Standard_D128lds_v6", "Dldsv6", 54, "x86_64"),
        ("Standard_D96pds_v6", "Dpdsv6", 60, "arm64"),
        ("Standard_B2s_v2", "Bsv2", 6.25, "x86_64"),
        ("Standard_B16ps_v2", "Bpsv2", 6.25, "arm64"),
        ("Standard_E20s_v4", "Esv4", 10, "x86_64"),
        ("Standard_E20ds_v4", "Edsv4", 16, "x86_64"),
        ("Standard_E112iads_v5", "Eadsv5", 50, "x86_64"),
        ("Standard_E16pds_v5", "Epdsv5", 12.5, "arm64"),
        ("Standard_E104ids_v5", "Edsv5", 100, "x86_64"),
        ("Standard_E112ias_v5", "Easv5", 50, "x86_64"),
        ("Standard_E32ps_v5", "Epsv5", 16, "arm64"),
        ("Standard_E192ids_v6", "Edsv6", 200, "x86_64"),
        ("Standard_F64als_v6", "Falsv6", 36, "x86_64"),
        ("Standard_L80as_v3", "Lasv3", 32, "x86_64"),
        ("Standard_D64plds_v5", "Dpldsv5", 40, "arm64"),
        ("Standard_E2_v3", "Ev3", 1, "x86_64"),
        ("Standard_E8s_v3", "Esv3", 4, "x86_64"),
        ("Standard_E64is_v3", "Esv3", 30, "x86_64"),
        ("Standard_DS13_v2", "DSv2 11-15", 6, "x86_64"),
        ("Standard_D15_v2", "Dv2 11-15", 25, "x86_64"),
        ("Standard_E112ibds_v5", "Ebdsv5", 40, "x86_64"),
        ("Standard_E16bs_v5", "Ebsv5", 12.5, "x86_64"),
        ("Standard_L96s_v4", "Lsv4", 41, "x86_64"),
        ("Standard_L48as_v4", "Lasv4", 28, "x86_64"),
        ("Standard_L160ias_v5", "Lasv5", 200, "x86_64"),
        ("Standard_M192idms_v2", "Mdsv2", 30, "x86_64"),
        ("Standard_M32ms_v2", "Msv2", 8, "x86_64"),
        ("Standard_M48s_1_v3", "Msv3", 16, "x86_64"),
        ("Standard_M12ds_v3", "Mdsv3", 4, "x86_64"),
        ("Standard_M176bs_v3", "Mbsv3", 50, "x86_64"),
        ("Standard_M64bds_1_v3", "Mbdsv3", 20, "x86_64"),
        ("Standard_D2ns_v6", "Dnsv6", 25, "x86_64"),
        ("Standard_D64nds_v6", "Dndsv6", 100, "x86_64"),
        ("Standard_D4nls_v6", "Dnlsv6", 30, "x86_64"),
        ("Standard_D128nlds_v6", "Dnldsv6", 200, "x86_64"),
        ("Standard_E48ns_v6", "Ensv6", 75, "x86_64"),
        ("Standard_E96nds_v6", "Endsv6", 150, "x86_64"),
        ("Standard_L12aos_v4", "Laosv4", 18.75, "x86_64"),
        ("Standard_L160iaos_v5", "Laosv5", 200, "x86_64"),
        ("Standard_E96bs_v6", "Ebsv6", 41, "x86_64"),
        ("Standard_E192ibds_v6", "Ebdsv6", 200, "x86_64"),
        ("Standard_M48ls_v4", "Msv4", 16, "x86_64"),
        ("Standard_M256lds_v4", "Mdsv4", 50, "x86_64"),
        ("Standard_M128bs_1_v4", "Mbsv4", 80, "x86_64"),
        ("Standard_M304bds_4_v4", "Mbdsv4", 100, "x86_64"),
        ("Standard_L32s_v2", "Lsv2", 12.8, "x86_64"),
        ("Standard_FX96ms_v2", "FXmsv2", 70, "x86_64"),
        ("Standard_FX4mds_v2", "FXmdsv2", 25, "x86_64"),
    ],
)
def test_azure_family_spot_values_match_their_series_pages(name: str, family: str, gbps: float, arch: str) -> None:
    # Each row: the family's series page, Network tab (azure_size_tables.json has the page's row and commit).
    size = catalog.lookup(name)
    assert (size.family, size.burst_gbps, size.architecture) == (family, gbps, arch)
    assert size.nic == ("mana" if family.endswith("v6") else "mellanox-or-mana")


@pytest.mark.parametrize("family", AZURE_MEMORY_DV2)
def test_the_memory_optimised_dv2_sizes_come_from_their_own_table(family: str) -> None:
    sizes = [t for t in catalog.instance_types(cloud="azure") if t.family == family]
    assert [t.vcpu for t in sizes] == [2, 4, 8, 16, 20]
    assert all(
        "dv2-dsv2-series-memory" in t.source and f"'## {family.replace(' ', '-series ')}'" in t.source for t in sizes
    )


def _wide(columns: dict[str, str], header: str, rows: list[str]) -> dict[str, object]:
    return {
        "family": "Xv9",
        "page": "p",
        "file": "f",
        "commit": "0" * 40,
        "nic": "mellanox-or-mana",
        "architecture": "x86_64",
        "network_optimised": False,
        "accelerated_networking": "Supported (required)",
        "table": {"section": "## Xv9-series", "header": header, "columns": columns, "rows": rows},
    }


def test_the_azure_generator_reads_a_one_table_page_with_nics_and_bandwidth_in_one_column() -> None:
    from wirespeed.catalog import generate_azure

    joined = {"vcpu": "vCPU", "memory_gib": "Memory: GiB", "max_nics/max_bandwidth_mbps": "Max NICs/ bandwidth (Mbps)"}
    header = "| **Size** | **vCPU** | Memory: GiB | Disks | Max NICs/  bandwidth  (Mbps) |"
    rows = [
        "| **Standard_X2_v9**<sup>1</sup>  | 2  | 16  | 4/8x500 | 2/1,000  |",
        "| Standard_X1_v9 | 1 | 8 | 2 | 2/500 |",
    ]
    entry = generate_azure.family_entry(_wide(joined, header, rows), 0)
    assert entry["sizes"] == [
        {"name": "Standard_X2_v9", "vcpu": 2, "memory_gib": 16, "max_nics": 2, "max_bandwidth_mbps": 1000}
    ]
    assert "the table under '## Xv9-series': vCPU, Memory: GiB, Max NICs/ bandwidth (Mbps)" in entry["source"]
    assert entry["left_out"].startswith("Standard_X1_v9: fewer than 2 vCPUs")


def test_the_azure_generator_refuses_a_one_table_row_it_cannot_read() -> None:
    from wirespeed.catalog import generate_azure

    apart = {"vcpu": "vCPU", "memory_gib": "Memory: GiB", "max_nics": "Max NICs", "max_bandwidth_mbps": "Bandwidth"}
    header = "| Size | vCPU | Memory: GiB | Max NICs| Bandwidth |"
    ok = "| Standard_X8_v9 | 8 | 64 | 8|16,000 |"
    assert generate_azure.family_entry(_wide(apart, header, [ok]), 0)["sizes"][0]["max_bandwidth_mbps"] == 16000
    with pytest.raises(generate_azure.GeneratorError, match=r"'16,000\+' is not a figure"):
        generate_azure.family_entry(_wide(apart, header, [ok.replace("16,000", "16,000+")]), 0)
    with pytest.raises(generate_azure.GeneratorError, match="4 cells, the header has 5"):
        generate_azure.family_entry(_wide(apart, header, ["| Standard_X8_v9 | 8 | 64 | 8 |"]), 0)
    with pytest.raises(generate_azure.GeneratorError, match="'Bandwidth' is not a header cell"):
        generate_azure.family_entry(_wide(apart, header.replace("Bandwidth", "Mbps"), [ok]), 0)
    with pytest.raises(generate_azure.GeneratorError, match="is not a size name, or is listed twice"):
        generate_azure.family_entry(_wide(apart, header, [ok, ok]), 0)
    with pytest.raises(generate_azure.GeneratorError, match="allowed:"):
        generate_azure.family_entry(_wide({"vcpu": "vCPU"}, header, [ok]), 0)


def test_preview_is_set_on_exactly_the_families_whose_pages_say_preview() -> None:
    azure = catalog.instance_types(cloud="azure")
    assert sorted({t.family for t in azure if t.preview}) == sorted(AZURE_PREVIEW)
    assert not any(t.preview for t in catalog.instance_types(cloud="aws"))
    # --json: the key only where it is true, so every other size keeps the keys it had.
    assert catalog.lookup("Standard_D16ns_v6").to_json()["preview"] is True
    assert "preview" not in catalog.lookup("Standard_D16s_v6").to_json()


def test_the_azure_generator_passes_preview_on_and_refuses_anything_but_true() -> None:
    from wirespeed.catalog import generate_azure

    family = {
        "family": "Xnsv9",
        "page": "p",
        "file": "f",
        "commit": "0" * 40,
        "nic": "mana",
        "architecture": "x86_64",
        "network_optimised": True,
        "accelerated_networking": "Supported",
        "basics": ["| Standard_X2ns_v9 | 2 | 8 |"],
        "network": ["| Standard_X2ns_v9 | 4 | 25000 |"],
    }
    assert "preview" not in generate_azure.family_entry(family, 0)
    assert generate_azure.family_entry(family | {"preview": True}, 0)["preview"] is True
    with pytest.raises(generate_azure.GeneratorError, match="preview False; allowed: true, or no key"):
        generate_azure.family_entry(family | {"preview": False}, 0)


@pytest.mark.parametrize(
    ("name", "family"),
    [
        # Lsv2's Network tab: "16,000+", a lower bound (L80s_v2 written L80s_v26 there and in the Basics tab).
        ("Standard_L48s_v2", "Lsv2"),
        ("Standard_L80s_v2", "Lsv2"),
        ("Standard_L80s_v26", "Lsv2"),
        # Names the page's Basics and Network tabs give differently.
        ("Standard_M304bs_4_v4", "Mbsv4"),
        ("Standard_M304bs_2_v4", "Mbsv4"),
        ("Standard_M48bds_v4", "Mbdsv4"),
        ("Standard_M176bds_4_v4", "Mbdsv4"),
    ],
)
def test_a_skipped_size_is_not_in_the_catalog_and_says_why(name: str, family: str) -> None:
    with pytest.raises(catalog.UnknownInstanceType):
        catalog.lookup(name)
    why = catalog.left_out(name)
    assert why is not None
    assert why.startswith(f"{family}: ")
    assert ("lower bound" in why) == (family == "Lsv2")


def test_a_lower_bound_is_never_a_figure() -> None:
    # The rest of Lsv2 is there; nothing in the catalog came from a "16,000+" row.
    assert [t.name for t in catalog.instance_types(cloud="azure") if t.family == "Lsv2"] == [
        "Standard_L8s_v2",
        "Standard_L16s_v2",
        "Standard_L32s_v2",
    ]
    assert catalog.left_out("Standard_L32s_v2") is None


def test_the_azure_generator_refuses_a_skipped_size_still_in_the_tables() -> None:
    from wirespeed.catalog import generate_azure

    family = {
        "family": "Xsv9",
        "page": "p",
        "file": "f",
        "commit": "0" * 40,
        "nic": "mellanox-or-mana",
        "architecture": "x86_64",
        "network_optimised": False,
        "accelerated_networking": "Supported",
        "basics": ["| Standard_X2s_v9 | 2 | 8 |"],
        "network": ["| Standard_X2s_v9 | 2 | 12500 |"],
    }
    skip = {"names": ["Standard_X4s_v9"], "rows": ["| Standard_X4s_v9 | 2 | 16,000+ |"], "why": "a lower bound"}
    entry = generate_azure.family_entry(family | {"skipped": [skip]}, 0)
    assert entry["skipped"] == [{"names": ["Standard_X4s_v9"], "why": "a lower bound"}]
    with pytest.raises(generate_azure.GeneratorError, match=r"\['Standard_X2s_v9'\] also in the tables"):
        generate_azure.family_entry(family | {"skipped": [skip | {"names": ["Standard_X2s_v9"]}]}, 0)
    with pytest.raises(generate_azure.GeneratorError, match="why: ''; allowed: a sentence"):
        generate_azure.family_entry(family | {"skipped": [skip | {"why": ""}]}, 0)

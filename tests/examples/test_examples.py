"""Every example workload plans to the values worked out by hand: docs that are run cannot rot."""

from __future__ import annotations

import re
from typing import Any

import pytest

from conftest import ROOT
from wirespeed.sizing import SizingError
from wirespeed.workload import load_workload, plan

EXAMPLES = sorted((ROOT / "examples" / "workloads").glob("*.json"))

# What each example must plan to, with the arithmetic that gives it. A new example needs an entry here.
EXPECTED: dict[str, dict[str, Any]] = {
    "checkout-api.json": {
        # pools 5 + 1 surge and 60 + ceil(10% of 60) = 6 surge: 72 nodes; the documented default at 72 is 512.
        # 12 conns/s x 240 s x 1.25 = 3,600 ports (a multiple of 8, above 512); 3,600 x 72 = 259,200 ports
        # need ceil(259,200 / 64,000) = 5 IPs.
        "outbound": {
            "allocated_outbound_ports": 3_600,
            "outbound_ips": 5,
            "nodes_at_max": 72,
            "ports_required": 259_200,
            "ports_available": 320_000,
            "dynamic_default_ports": 512,
            "feasible": True,
            "pools": [
                {"max_count": 5, "surge_nodes": 1, "nodes_at_max": 6},
                {"max_count": 60, "surge_nodes": 6, "nodes_at_max": 66},
            ],
        },
        # 100 Gb/s / (1,538 B x 8) x 1 ms = 8,128 packets -> mlx5 rounds up to 8,192 both ways.
        "rings": {"driver": "mlx5_core", "rx": 8_192, "tx": 8_192, "packets_in_stall": 8_128},
        # x 4 ms = 32,510 packets -> 32,768.
        "backlog": {"netdev_max_backlog": 32_768, "packets_in_stall": 32_510, "capped_at_aks_max": False},
        "profile": {
            "rings": {"mlx5_core": {"rx": 8_192, "tx": 8_192}},
            "sysctls": {"net.core.netdev_max_backlog": 32_768},
        },
    },
    "ingest-eks.json": {
        # 120,000 connections / 55,000 per IP -> 3 IPs per AZ, above the default quota of 2; 3 AZs -> 9 in all.
        "outbound": {"cloud": "aws", "mode": "zonal", "gateways": 3, "total_ips": 9, "default_quotas_suffice": False},
        # 50 Gb/s x 1 ms = 4,064 packets: ENA RX 4,096; TX stops at its max 1,024.
        "rings": {
            "driver": "ena",
            "rx": 4_096,
            "tx": 1_024,
            "packets_in_stall": 4_064,
            "rx_capped_at_driver_max": False,
            "tx_capped_at_driver_max": True,
        },
        # x 4 ms = 16,255 packets -> 16,384.
        "backlog": {"netdev_max_backlog": 16_384, "packets_in_stall": 16_255, "capped_at_kernel_max": False},
        "profile": {
            "rings": {"ena": {"rx": 4_096, "tx": 1_024}},
            "sysctls": {"net.core.netdev_max_backlog": 16_384},
        },
    },
}


def test_every_example_has_expected_values():
    assert sorted(p.name for p in EXAMPLES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_plans_to_the_worked_values(path):
    result = plan(load_workload(path)).to_json()
    for section, expected in EXPECTED[path.name].items():
        actual = result[section]
        if section == "profile":
            assert actual == expected
            continue
        for key, value in expected.items():
            assert actual[key] == value, f"{section}.{key}"


def test_aws_example_warns_about_the_elastic_ip_quota():
    ingest = next(p for p in EXAMPLES if p.name == "ingest-eks.json")
    warnings = plan(load_workload(ingest)).to_json()["outbound"]["warnings"]
    quota = (
        "Warning: 3 IPs exceed the default quota of 2 Elastic IPs per NAT gateway; raise 'Elastic IP addresses per "
        "public NAT gateway' (Service Quotas: vpc L-5F53652F) to 3 first."
    )
    assert warnings == [
        *[f"az{i}: {quota}" for i in (1, 2, 3)],
        "Warning: 9 Elastic IPs in all exceed the default quota of 5 Elastic IPs per Region; raise 'Elastic IP "
        "addresses per Region' (Service Quotas: ec2 L-0263D0A3) to at least 9 (plus the Elastic IPs the Region "
        "already holds) first.",
    ]


def test_bad_workload_names_the_file_and_field(tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text(
        '{"name": "x", "cloud": "gcp", "instance_type": "D4s_v5", "node_pools": [], '
        '"outbound": {}, "nic": {"driver": "mana", "host_line_rate_gbps": 10}}'
    )
    with pytest.raises(ValueError, match="^" + re.escape(f"{bad}: not a valid workload: ")) as caught:
        load_workload(bad)
    assert "\n  cloud: 'gcp' is not allowed" in str(caught.value)


def test_plan_names_the_pool_whose_surge_is_bad(tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text(
        '{"name": "x", "cloud": "azure", "instance_type": "D4s_v5", '
        '"node_pools": [{"name": "system", "max_count": 3}, {"name": "burst", "max_count": 10, "max_surge": "150%"}], '
        '"outbound": {"connections_per_second": 1}, "nic": {"driver": "mana", "host_line_rate_gbps": 10}}'
    )
    with pytest.raises(SizingError) as info:
        plan(load_workload(bad))
    assert str(info.value) == "pool 'burst': '10:150%' is not allowed: max_surge 150% must be between 0% and 100%"


def test_plan_says_what_to_set_and_offers_network_optimised_types():
    result = plan(load_workload(None))
    settings = "\n".join(result.settings())
    assert f"allocatedOutboundPorts {result.outbound.to_json()['allocated_outbound_ports']}" in settings
    alternatives = result.alternatives()
    assert alternatives, "the bundled example uses a Dsv5 size, which is not network-optimised"
    assert all(t.network_optimised and t.vcpu == result.instance.vcpu for t in alternatives)
    assert not any(t.preview for t in alternatives)  # Dnsv6's sizes are faster, but a preview series is never offered
    assert [t.baseline_gbps for t in alternatives] == sorted((t.baseline_gbps for t in alternatives), reverse=True)

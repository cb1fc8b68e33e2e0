"""The pure half of the AWS components: catalog checks, ring classes, ENA Express profile; no Pulumi loaded."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from wirespeed import catalog
from wirespeed.aws.capacity import (
    alternatives,
    check_instance_types,
    ena_express_profile,
    plan_node_group,
    ring_class,
)
from wirespeed.profiles import builtin_profile

HEAVY = ("pulumi", "pulumi_aws", "pulumi_kubernetes", "boto3", "botocore", "moto")


@pytest.mark.parametrize("module", ["wirespeed.userdata", "wirespeed.aws", "wirespeed.aws.capacity"])
def test_pure_modules_load_no_cloud_sdk(module):
    code = f"import sys, json, {module}; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert [m for m in loaded if m.split(".")[0] in HEAVY] == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("c6in.large", "balanced", id="up-to-25-gbps-is-balanced"),
        pytest.param("c6in.4xlarge", "balanced", id="25-gbps-baseline-is-balanced"),
        pytest.param("c6in.8xlarge", "throughput", id="50-gbps-is-throughput"),
        pytest.param("c5n.18xlarge", "throughput", id="100-gbps-is-throughput"),
    ],
)
def test_ring_class_follows_sustained_bandwidth(name, expected):
    assert ring_class(catalog.lookup(name)) == expected


def test_alternatives_keep_vcpu_and_architecture_fastest_first():
    m7i = catalog.lookup("m7i.large")
    found = alternatives(m7i)
    assert found
    assert all(t.network_optimised and t.vcpu == m7i.vcpu and t.architecture == "x86_64" for t in found)
    assert [t.baseline_gbps for t in found] == sorted((t.baseline_gbps for t in found), reverse=True)
    assert alternatives(catalog.lookup("c6in.large")) == []


def test_an_azure_size_is_not_an_ec2_type():
    _, problems = check_instance_types(["D16s_v6"], None)
    assert [str(p) for p in problems] == [
        "instance_types[0]: 'D16s_v6' is not allowed; allowed: an AWS instance type from the catalog "
        "(`wirespeed catalog list --cloud aws`)"
    ]


def test_ena_express_keeps_a_larger_ring_and_adds_the_mtu():
    profile = ena_express_profile(builtin_profile("throughput"))
    assert (profile.name, profile.rings["ena"].rx, profile.rings["ena"].tx) == ("throughput-ena-express", 8192, 1024)
    assert profile.rings["mana"] == builtin_profile("throughput").rings["mana"]
    assert (profile.mtu.value, profile.mtu.drivers) == (8900, ["ena"])


def test_plan_json_shows_bandwidth_and_ena_express():
    plan, problems = plan_node_group(instance_types=["c6in.8xlarge"], ena_express=True)
    assert problems == []
    assert plan is not None
    assert plan.to_json()["instance_types"] == [
        {
            "name": "c6in.8xlarge",
            "baseline_gbps": 50.0,
            "burst_gbps": 50.0,
            "ena_express": True,
            "network_optimised": True,
            "architecture": "x86_64",
        }
    ]


@pytest.mark.parametrize(("length", "problems"), [(256, 0), (257, 1)], ids=["256-fits-a-tag", "257-does-not"])
def test_a_reason_must_fit_the_tag_it_is_recorded_in(length, problems):
    from wirespeed.aws.capacity import plan_node_group

    _, found = plan_node_group(instance_types=["m6i.large"], not_network_optimised_reason="x" * length + "  ")
    assert [str(p) for p in found] == [
        "not_network_optimised_reason: '257 characters' is not allowed; allowed: at most 256 characters (it is "
        "recorded as an AWS tag, whose values hold 256)"
    ][:problems]

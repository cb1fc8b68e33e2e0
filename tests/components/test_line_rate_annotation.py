"""The line rate reaches the gates on the install path: NodeTuning, `wirespeed render node-tuning --line-rate` and the
example and root programs write each profile's ConfigMap annotation wirespeed.io/line-rate-gbps from the sizes its
pools run, and the ring and backlog minimums read it there instead of assuming a line rate."""

from __future__ import annotations

import json

import pytest

from builtin_profiles import BALANCED_BACKLOG
from clirun import invoke
from fixtures.rules.engine import launch_template, user_data_with_backlog, validate
from wirespeed.manifests import NodeTuningError, NodeTuningOptions, fastest_line_rates, node_tuning_objects
from wirespeed.names import LINE_RATE_ANNOTATION
from wirespeed.profiles import builtin_profile

RINGS = "nic-ring-minimum"
BACKLOG = "netdev-backlog-minimum"


def config_maps(profiles: list[str], line_rates: dict[str, float]) -> dict[str, dict]:
    objects = node_tuning_objects([builtin_profile(p) for p in profiles], NodeTuningOptions(line_rates=line_rates))
    return {o["metadata"]["labels"]["wirespeed.io/profile"]: o for o in objects if o["kind"] == "ConfigMap"}


def test_the_fastest_pool_of_each_profile_sets_its_line_rate():
    pairs = [("balanced", 12.5), ("throughput", 100), ("balanced", 25), ("throughput", 50)]
    assert fastest_line_rates(pairs) == {"balanced": 25.0, "throughput": 100.0}


def test_the_config_map_carries_the_annotation_only_where_the_line_rate_is_known():
    maps = config_maps(["throughput", "balanced"], {"throughput": 100})
    assert maps["throughput"]["metadata"]["annotations"] == {LINE_RATE_ANNOTATION: "100"}
    assert "annotations" not in maps["balanced"]["metadata"]
    assert config_maps(["balanced"], {"balanced": 12.5})["balanced"]["metadata"]["annotations"] == {
        LINE_RATE_ANNOTATION: "12.5"
    }


def test_the_gates_hold_a_rendered_profile_to_its_pools_line_rate():
    """balanced is sized for 25 Gb/s: it passes on 25 Gb/s pools and fails on 100 Gb/s ones, saying the line rate
    came from the annotation; without one the gate says it assumed 25 Gb/s."""
    on_25 = config_maps(["balanced"], {"balanced": 25})["balanced"]
    on_100 = config_maps(["balanced"], {"balanced": 100})["balanced"]
    unknown = config_maps(["balanced"], {})["balanced"]
    assert validate(RINGS, "config_map", on_25) == []
    assert validate(BACKLOG, "config_map", on_25) == []
    failed = validate(RINGS, "config_map", on_100) + validate(BACKLOG, "config_map", on_100)
    assert failed, "balanced must fail on a 100 Gb/s pool"
    assert all(f"the line rate 100 Gb/s its annotation {LINE_RATE_ANNOTATION} declares" in m for m in failed)
    assert validate(RINGS, "config_map", unknown) == []  # the assumed default is balanced's own 25 Gb/s


def test_bad_line_rates_are_refused_all_at_once():
    with pytest.raises(NodeTuningError) as caught:
        node_tuning_objects(
            [builtin_profile("throughput")], NodeTuningOptions(line_rates={"fast": 10, "throughput": 0})
        )
    assert [str(p) for p in caught.value.problems] == [
        "line_rates['fast']: 'fast' is not allowed; allowed: a profile of this install (throughput)",
        "line_rates['throughput']: 0 is not allowed; allowed: a line rate in Gb/s between 0.001 and 800",
    ]


def test_render_node_tuning_writes_the_annotation_from_the_flag():
    out = invoke("render", "node-tuning", "--profile", "balanced", "--line-rate", "balanced=25", "--output", "json")
    assert out.returncode == 0, out.stderr
    (config_map,) = [o for o in json.loads(out.stdout) if o["kind"] == "ConfigMap"]
    assert config_map["metadata"]["annotations"] == {LINE_RATE_ANNOTATION: "25"}


def test_render_node_tuning_reports_every_bad_line_rate_flag():
    out = invoke("render", "node-tuning", "--line-rate", "throughput", "--line-rate", "fast=10")
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        "error: node tuning not rendered: 2 problem(s):",
        "  --line-rate[0]: 'throughput' is not allowed; allowed: PROFILE=GBPS, e.g. throughput=100",
        "  --line-rate['fast']: 'fast' is not allowed; allowed: a profile of this install (throughput)",
    ]


def test_a_launch_template_without_instance_type_is_held_to_its_node_groups_fastest_type():
    """NetworkOptimizedNodeGroup's launch template names no instanceType (the node group lists them): its tag carries
    the fastest type's line rate, and the backlog gate reads it instead of assuming 25 Gb/s."""
    props = launch_template(user_data_with_backlog(BALANCED_BACKLOG))  # sized for 25 Gb/s
    props.pop("instanceType", None)
    assert validate(BACKLOG, "launch_template", props) == []  # 8,192 meets the assumed 25 Gb/s: the old blind spot
    props["tags"] = {LINE_RATE_ANNOTATION: "100"}
    (found,) = validate(BACKLOG, "launch_template", props)
    assert (
        f"the line rate 100 Gb/s its tag {LINE_RATE_ANNOTATION} (its node group's fastest instanceType) declares"
        in found
    )
    props["tags"] = {LINE_RATE_ANNOTATION: "fast"}
    props["userData"] = launch_template(user_data_with_backlog(1000))["userData"]
    (bad,) = validate(BACKLOG, "launch_template", props)
    assert f"its tag {LINE_RATE_ANNOTATION} 'fast' is not a line rate in Gb/s" in bad

"""The component provider (issue 26, item 2) without the engine: the schema it serves is the committed one and
covers every component, and plain values from another language reach a component as the dataclass a Python
program would pass, bad ones refused in the Python API's own words, all at once. tests/engine/test_provider_engine.py
runs
the same provider under the real engine."""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pulumi
import pytest

from conftest import ROOT
from wirespeed.aws.capacity import Taint
from wirespeed.azure.components import (
    NetworkOptimizedClusterArgs,
    NetworkOptimizedNodePool,
    NetworkOptimizedNodePoolArgs,
)
from wirespeed.azure.spec import NodePoolSpec, OutboundSpec
from wirespeed.kubernetes.node_tuning import NodeTuning, NodeTuningArgs
from wirespeed.profiles import builtin_profile as builtin
from wirespeed.provider import host

SCHEMA = ROOT / "provider" / "schema.json"
PLUGIN = ROOT / "provider" / "bin" / "pulumi-resource-wirespeed"


def _component_classes() -> set[str]:
    """Every class in the library that subclasses pulumi.ComponentResource, read from the source."""
    found = set()
    for path in (ROOT / "components" / "wirespeed").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(ast.unparse(b) == "pulumi.ComponentResource" for b in node.bases):
                found.add(node.name)
    return found


def test_every_component_of_the_library_is_served():
    assert {c.__name__ for c in host.COMPONENTS} == _component_classes()


def test_the_committed_schema_is_the_one_the_provider_serves():
    assert json.loads(SCHEMA.read_text()) == host.schema(), "provider/schema.json is stale: run `make regen`"


def test_the_schema_is_the_components_own_arguments_and_outputs():
    schema = host.schema()
    pool = schema["resources"]["wirespeed:index:NetworkOptimizedNodePool"]
    # Required exactly where the dataclass has no default; plain where it is plain, an Input where it is one.
    assert sorted(pool["requiredInputs"]) == ["clusterName", "name", "resourceGroupName", "vmSize"]
    assert pool["inputProperties"]["minCount"] == {
        "type": "integer",
        "plain": True,
        "description": pool["inputProperties"]["minCount"]["description"],
    }
    assert "plain" not in pool["inputProperties"]["resourceGroupName"]
    # Docstrings come from where they are written, inherited fields included (NodePoolSpec.max_surge).
    assert pool["inputProperties"]["maxSurge"]["description"].startswith("Extra nodes during an upgrade")
    # A custom profile or a built-in name: a union, which the schema carries as Any and the provider checks.
    assert pool["inputProperties"]["profile"]["$ref"] == "pulumi.json#/Any"
    assert sorted(pool["properties"]) == [
        "leftToAgent",
        "linuxOsConfigSysctls",
        "poolName",
        "profile",
        "replaceOnChange",
        "surgeNodes",
        "vmSize",
    ]
    cluster = schema["resources"]["wirespeed:index:NetworkOptimizedCluster"]
    assert cluster["inputProperties"]["pools"]["items"]["$ref"] == "#/types/wirespeed:index:NodePoolSpec"


def test_the_plugin_runs_the_provider_module():
    assert PLUGIN.stat().st_mode & 0o111
    assert "-m wirespeed.provider" in PLUGIN.read_text()
    assert (ROOT / "provider" / "PulumiPlugin.yaml").read_text().count("runtime: python") == 1


def test_plain_values_become_the_dataclass_a_python_program_passes():
    # As the engine sends them: camelCase names, every number a float, nested objects as dicts.
    wire = {
        "location": "westeurope",
        "resourceGroupName": "rg",
        "pools": [{"name": "apps", "vmSize": "Standard_D16s_v6", "minCount": 3.0, "maxCount": 20.0}],
        "outbound": {"connectionsPerSecond": 200.0, "holdSeconds": 240.0},
    }
    assert host.to_args(host.NetworkOptimizedCluster, wire) == NetworkOptimizedClusterArgs(
        location="westeurope",
        resource_group_name="rg",
        pools=[NodePoolSpec(name="apps", vm_size="Standard_D16s_v6", min_count=3, max_count=20)],
        outbound=OutboundSpec(connections_per_second=200, hold_seconds=240),
    )


def test_a_profile_document_becomes_a_profile_and_taints_become_taints():
    document = builtin("balanced").model_dump(mode="json", by_alias=True, exclude_none=True)
    args = host.to_args(NodeTuning, {"profiles": ["throughput", document], "lineRates": {"throughput": 100.0}})
    assert args == NodeTuningArgs(profiles=["throughput", builtin("balanced")], line_rates={"throughput": 100.0})
    group = host.to_args(
        host.NetworkOptimizedNodeGroup,
        {
            "clusterName": "c",
            "nodeRoleArn": "arn",
            "subnetIds": ["s"],
            "taints": [{"key": "k", "effect": "NO_EXECUTE"}],
        },
    )
    assert group.taints == [Taint(key="k", effect="NO_EXECUTE")]


@pytest.fixture
def event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An Output needs a current event loop, as the provider has while it serves; an earlier test's asyncio.run()
    leaves the main thread with none (asyncio.run sets it to None when it ends)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    asyncio.set_event_loop(None)
    loop.close()


def test_what_no_python_program_could_pass_is_refused_all_at_once(event_loop):
    known = pulumi.Output.from_input(["throughput"])
    with pytest.raises(pulumi.InputPropertiesError) as raised:
        host.to_args(
            host.NetworkOptimizedCluster,
            {
                "location": "westeurope",
                "pools": [{"name": "apps", "minCount": 2.5}],
                "tuning": known,
                "systemPool": {"name": "system", "vmSize": "Standard_D4s_v6", "profile": {"name": "x", "mtu": 1}},
            },
        )
    reasons = {(e["property_path"], e["reason"]) for e in raised.value.errors}
    assert ("resource_group_name", "required, and not given") in reasons
    assert ("pools[0].vm_size", "required, and not given") in reasons
    assert ("pools[0].min_count", "2.5 is not allowed: a whole number") in reasons
    assert any(path == "tuning" and "must be a plain value" in reason for path, reason in reasons)
    assert any(path == "system_pool.profile" and reason.startswith("/") for path, reason in reasons)
    assert str(raised.value).startswith("invalid NetworkOptimizedClusterArgs")


def _python_api_error(component: Any, args: Any) -> pulumi.InputPropertiesError:
    with pytest.raises(pulumi.InputPropertiesError) as raised:
        component("bad", args)
    return raised.value


# Bad inputs as another language sends them (numbers as floats) and as a Python program writes them; several
# problems each (tests/engine/test_provider_engine.py sends the same through the engine).
BAD = [
    pytest.param(
        NodeTuning,
        {"profiles": ["throughput", "nope"], "namespace": "kube-system", "image": "agent"},
        NodeTuningArgs(profiles=["throughput", "nope"], namespace="kube-system", image="agent"),
        id="node-tuning",
    ),
    pytest.param(
        NetworkOptimizedNodePool,
        dict(
            name="Apps", vmSize="Standard_D2s_v3", minCount=5.0, maxCount=2.0, resourceGroupName="rg", clusterName="c"
        ),
        NetworkOptimizedNodePoolArgs(
            name="Apps", vm_size="Standard_D2s_v3", min_count=5, max_count=2, resource_group_name="r", cluster_name="c"
        ),
        id="node-pool",
    ),
]


@pytest.mark.parametrize(("component", "wire", "args"), BAD)
def test_the_component_refuses_bad_plain_values_in_the_python_apis_words(component, wire, args):
    expected = _python_api_error(component, args)
    assert len(expected.errors) > 1  # several problems, reported together
    provider = host.WirespeedProvider()
    with pytest.raises(pulumi.InputPropertiesError) as raised:
        provider.construct("bad", f"wirespeed:index:{component.__name__}", wire)
    assert raised.value.message == expected.message
    assert raised.value.errors == expected.errors


def test_the_schema_file_is_written_as_make_regen_writes_it():
    text = SCHEMA.read_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert "provider/schema.json" in Path(ROOT / "Makefile").read_text()

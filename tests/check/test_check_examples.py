"""Every example planned and checked: the policy rules pass on what each example registers, and fail, with the
expected rule, on variants that break one thing.

Each project runs under the Pulumi SDK's mocks (``wirespeed.program``: no engine, no cloud); the rules see the
registered inputs and outputs converted as the engine marshals them (``wirespeed.check.registered``). A broken
variant changes one registered value, as a hand-written program (or a later edit) could: the components
themselves refuse most of these inputs before anything registers, so the rules are what stops the rest.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, python_examples
from wirespeed.check.registered import verdicts
from wirespeed.program import RegisteredResource, run_program
from wirespeed.program.model import type_matches
from wirespeed.rules import resolve_config

EXAMPLES = python_examples()
Resources = tuple[RegisteredResource, ...]


def _stack(example: Path) -> str | None:
    return "dev" if (example / "Pulumi.dev.yaml").is_file() else None


@pytest.fixture(scope="module")
def plans() -> dict[str, Resources]:
    return {example.name: run_program(example, _stack(example)).resources for example in EXAMPLES}


@pytest.fixture(scope="module")
def default_plans() -> dict[str, Resources]:
    """Each example on its Pulumi.yaml defaults: what `wirespeed plan examples/NAME` shows a newcomer first."""
    return {example.name: run_program(example, None).resources for example in EXAMPLES}


def test_the_examples_are_found():
    assert {"aks-dsv6", "aks-natgw", "aks-existing-cluster"} <= {e.name for e in EXAMPLES}


def unaccepted(found: list[Any]) -> list[tuple[str, str, str, str]]:
    """Every finding but the advisories their resource keeps with a written reason (wirespeed.io.accept-<rule>)."""
    return [(v.enforcement, v.rule_id, v.resource_name, v.message) for v in found if not v.accepted]


@pytest.mark.parametrize("example", [e.name for e in EXAMPLES])
def test_every_example_passes_the_rules_under_pulumi_mocks(plans, example):
    assert unaccepted(verdicts(plans[example], resolve_config(None))) == []


@pytest.mark.parametrize("example", [e.name for e in EXAMPLES])
def test_every_example_on_its_defaults_passes_the_rules_under_pulumi_mocks(default_plans, example):
    """The same on Pulumi.yaml's defaults (no stack file): a shipped example raises no finding against itself, or
    carries a written reason for each advisory it keeps."""
    assert unaccepted(verdicts(default_plans[example], resolve_config(None))) == []


ROOT_STACKS = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("stack", [None, *ROOT_STACKS])
def test_the_root_project_passes_the_rules_on_every_stack(stack):
    """The root project on its defaults and on each shipped stack file (`wirespeed plan . --stack NAME`)."""
    assert unaccepted(verdicts(run_program(ROOT, stack).resources, resolve_config(None))) == []


def test_every_accepted_advisory_is_advisory_and_says_why(plans):
    """What the examples keep is advisory, with its reason on the resource the rule judged."""
    kept = [v for found in plans.values() for v in verdicts(found, resolve_config(None)) if v.accepted]
    assert kept, "eks-c6in keeps mtu-jumbo-path with a reason"
    assert all(v.enforcement == "advisory" and len(v.accepted or "") > 40 for v in kept)


# --- broken variants: one registered value changed each ---------------------------------------------------


def _first(resources: Resources, module: str, kind: str) -> RegisteredResource:
    matches = [r for r in resources if type_matches(r.type, module, kind)]
    assert matches, f"no {module}:{kind} registered"
    return matches[0]


def _with_inputs(
    resources: Resources, target: RegisteredResource, change: Callable[[dict[str, Any]], None]
) -> Resources:
    """``resources`` with ``target``'s inputs changed, and its outputs as a provider plans them for the update (the
    changed inputs over the old outputs): stack rules read only outputs, as the engine hands them over."""
    inputs = copy.deepcopy(target.inputs)
    change(inputs)
    changed = dataclasses.replace(target, inputs=inputs, outputs={**copy.deepcopy(target.outputs), **inputs})
    return tuple(changed if r.urn == target.urn else r for r in resources)


def ports_zero(resources: Resources) -> Resources:
    cluster = _first(resources, "containerservice", "ManagedCluster")
    return _with_inputs(
        resources, cluster, lambda i: i["networkProfile"]["loadBalancerProfile"].update(allocatedOutboundPorts=0)
    )


def pool_backlog_1000(resources: Resources) -> Resources:
    pool = _first(resources, "containerservice", "AgentPool")
    return _with_inputs(
        resources,
        pool,
        lambda i: i.setdefault("linuxOSConfig", {}).setdefault("sysctls", {}).update(netCoreNetdevMaxBacklog=1000),
    )


def profile_rx_256(resources: Resources) -> Resources:
    config_map = next(
        r for r in resources if type_matches(r.type, "core", "ConfigMap") and "profile.json" in r.inputs.get("data", {})
    )

    def change(inputs: dict[str, Any]) -> None:
        profile = json.loads(inputs["data"]["profile.json"])
        for ring in profile["rings"].values():
            ring["rx"] = 256
        inputs["data"]["profile.json"] = json.dumps(profile)

    return _with_inputs(resources, config_map, change)


def privileged_agent(resources: Resources) -> Resources:
    daemon_set = _first(resources, "apps", "DaemonSet")
    return _with_inputs(
        resources,
        daemon_set,
        lambda i: i["spec"]["template"]["spec"]["containers"][0]["securityContext"].update(privileged=True),
    )


def no_tuning_agent(resources: Resources) -> Resources:
    return tuple(
        r for r in resources if not type_matches(r.type, "apps", "DaemonSet") and r.type != "wirespeed:index:NodeTuning"
    )


def old_vm_size(resources: Resources) -> Resources:
    pool = _first(resources, "containerservice", "AgentPool")
    return _with_inputs(resources, pool, lambda i: i.update(vmSize="Standard_D16s_v3"))


def pool_max_count_1000(resources: Resources) -> Resources:
    pool = _first(resources, "containerservice", "AgentPool")
    return _with_inputs(resources, pool, lambda i: i.update(enableAutoScaling=True, maxCount=1000))


BROKEN = [
    ("aks-dsv6", ports_zero, "aks-allocated-outbound-ports-default"),
    ("aks-dsv6", pool_backlog_1000, "netdev-backlog-minimum"),
    ("aks-dsv6", profile_rx_256, "nic-ring-minimum"),
    ("aks-dsv6", privileged_agent, "tuning-agent-least-privilege"),
    ("aks-dsv6", no_tuning_agent, "tuning-agent-present"),
    ("aks-dsv6", old_vm_size, "network-optimised-sku"),
    ("aks-dsv6", pool_max_count_1000, "aks-snat-capacity"),
    ("aks-natgw", pool_backlog_1000, "netdev-backlog-minimum"),
    ("aks-natgw", profile_rx_256, "nic-ring-minimum"),
    ("aks-natgw", no_tuning_agent, "tuning-agent-present"),
    ("aks-existing-cluster", pool_backlog_1000, "netdev-backlog-minimum"),
    ("aks-existing-cluster", privileged_agent, "tuning-agent-least-privilege"),
]


@pytest.mark.parametrize(("example", "breaks", "rule_id"), BROKEN, ids=[f"{e}-{b.__name__}" for e, b, _ in BROKEN])
def test_a_broken_variant_fails_with_the_expected_rule_under_pulumi_mocks(plans, example, breaks, rule_id):
    found = verdicts(breaks(plans[example]), resolve_config(None))
    assert {v.rule_id for v in found if v.enforcement == "mandatory"} == {rule_id}, [
        (v.rule_id, v.message) for v in found
    ]

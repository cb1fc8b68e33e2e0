"""No rule may silently not fire (issue 17): a profile the agent refuses, and values AKS refuses, are violations
reported through the real pulumi_policy types (tests/fixtures/rules/engine.py), not passes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fixtures.rules.engine import config_map_with, fixture, tuning_objects, validate
from wirespeed.profile import ProfileError, load_profile
from wirespeed.sizing.azure_lb import MAX_PORTS_PER_NODE, PORT_GRANULARITY
from wirespeed.sizing.backlog import BACKLOG_MAX

VECTORS = json.loads((Path(__file__).parent.parent / "vectors" / "profiles.json").read_text())


def config_map_text(text: str) -> dict[str, Any]:
    config_map = tuning_objects()["ConfigMap"]
    config_map["data"]["profile.json"] = text
    return config_map


def messages(kind: str, props: dict[str, Any], rule_id: str) -> list[str]:
    return validate(rule_id, kind, props)


# --- tuning-profile-valid ---------------------------------------------------------------------------------------

REFUSED_PROFILE_TEXTS = {
    "not-json": '{"name": "throughput", "rings": ',
    "backlog-string": '{"name": "t", "sysctls": {"net.core.netdev_max_backlog": "1000"}}',
    "backlog-nan": '{"name": "t", "sysctls": {"net.core.netdev_max_backlog": NaN}}',
    "rx-string": '{"name": "t", "rings": {"mlx5_core": {"rx": "1024"}}}',
    "only-a-name": "throughput",
    "only-a-name-quoted": '"throughput"',
}


@pytest.mark.parametrize("text", REFUSED_PROFILE_TEXTS.values(), ids=REFUSED_PROFILE_TEXTS.keys())
def test_a_profile_the_agent_refuses_is_a_mandatory_violation_quoting_the_error(text):
    with pytest.raises(ProfileError) as info:
        load_profile(text)
    (message,) = messages("config_map", config_map_text(text), "tuning-profile-valid")
    assert "is a profile the tuning agent refuses" in message
    for at, problem in info.value.problems:
        assert f"{at}: {problem}" in message  # the validation error, word for word
    assert "keeps driver ring sizes and kernel defaults" in message


@pytest.mark.parametrize("case", VECTORS["invalid"], ids=lambda c: c["name"])
def test_every_shared_invalid_vector_is_refused_by_the_rule(case):
    # The shared vectors are what the Go agent refuses (agent/internal/profile TestSharedVectors).
    (message,) = messages("config_map", config_map_text(json.dumps(case["profile"])), "tuning-profile-valid")
    for error in case["errors"]:
        assert f"{error['at']}: {error['message']}" in message


@pytest.mark.parametrize("case", VECTORS["valid"], ids=lambda c: c["name"])
def test_every_shared_valid_vector_passes_the_rule(case):
    assert messages("config_map", config_map_text(json.dumps(case["profile"])), "tuning-profile-valid") == []


def test_rendered_profiles_and_other_config_maps_pass():
    assert messages("config_map", tuning_objects()["ConfigMap"], "tuning-profile-valid") == []
    assert messages("config_map", {"metadata": {"name": "x"}, "data": {"a": "b"}}, "tuning-profile-valid") == []
    edited = config_map_with(lambda d: d["rings"]["mlx5_core"].update(rx=1024))  # valid, if small: another rule's
    assert messages("config_map", edited, "tuning-profile-valid") == []


# --- values the cloud refuses --------------------------------------------------------------------------------------


def cluster_with_ports(ports: Any) -> dict[str, Any]:
    props = fixture("aks_cluster")
    props["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"] = ports
    return props


@pytest.mark.parametrize("ports", [4001, 4004, 1000.5, MAX_PORTS_PER_NODE + PORT_GRANULARITY, -8, "4000"])
def test_allocated_ports_azure_refuses_are_a_violation(ports):
    (message,) = messages("cluster", cluster_with_ports(ports), "aks-snat-ports-minimum")
    assert "which Azure refuses: it must be a whole multiple of 8 between 0 and 64,000" in message
    # Not misread as "unset" by the default-ports rule, nor sized with by the capacity rule.
    assert messages("cluster", cluster_with_ports(ports), "aks-allocated-outbound-ports-default") == []


@pytest.mark.parametrize("ports", [0, 1024, 4000, MAX_PORTS_PER_NODE])
def test_allocated_ports_azure_accepts_are_not_refused(ports):
    for message in messages("cluster", cluster_with_ports(ports), "aks-snat-ports-minimum"):
        assert "Azure refuses" not in message


@pytest.mark.parametrize("backlog", [BACKLOG_MAX + 1, 999, 32768.5])
def test_a_backlog_aks_refuses_is_a_violation_not_a_pass(backlog):
    pool = fixture("aks_agent_pool")
    pool["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = backlog
    (message,) = messages("pool", pool, "netdev-backlog-minimum")
    assert "which AKS refuses: it accepts a whole number between 1,000 and 3,240,000" in message


def test_the_aks_maximum_itself_is_accepted():
    pool = fixture("aks_agent_pool")
    pool["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = BACKLOG_MAX
    assert messages("pool", pool, "netdev-backlog-minimum") == []


def test_the_profile_rules_findings_name_the_config_map_and_say_everything():
    """The rule's own findings, exactly: a data value that is not text, and a profile with several problems listed
    in order and joined, with what to do about it."""
    from wirespeed.rules import Resource
    from wirespeed.rules.tuning_profile_valid import check_profile_valid

    token = "kubernetes:core/v1:ConfigMap"
    not_text = Resource(token, "tuning", "urn:cm", {"data": {"profile.json": 5}})
    [finding] = check_profile_valid(not_text, {})
    assert finding.resource is not_text
    assert finding.message == (
        "data['profile.json'] is not text: a ConfigMap's data values are strings; put the profile's JSON."
    )
    two = '{"name": "t", "sysctls": {"net.core.netdev_max_backlog": "1000"}, "rings": {"mlx5_core": {"rx": "1"}}}'
    problems = load_problems(two)
    assert len(problems) >= 2
    refused = Resource(token, "tuning", "urn:cm", {"data": {"profile.json": two}})
    [finding] = check_profile_valid(refused, {})
    assert finding.resource is refused
    listed = "; ".join(f"{at}: {message}" for at, message in problems)
    assert finding.message == (
        f"data['profile.json'] is a profile the tuning agent refuses ({listed}): the agent exits without applying "
        "anything, so every node it runs on keeps driver ring sizes and kernel defaults. Fix the profile "
        "(`wirespeed profile validate FILE` reports the same problems) or render it with `wirespeed render "
        "node-tuning --profile`."
    )


def load_problems(text: str) -> list[tuple[str, str]]:
    with pytest.raises(ProfileError) as info:
        load_profile(text)
    return list(info.value.problems)


def test_an_unknown_rule_id_is_a_key_error_naming_every_known_rule():
    from wirespeed import rules

    with pytest.raises(KeyError) as info:
        rules.rule("tuning-profile-vaild")
    known = ", ".join(r.id for r in rules.RULES)
    assert info.value.args == (f"no rule 'tuning-profile-vaild': known rules are {known}",)

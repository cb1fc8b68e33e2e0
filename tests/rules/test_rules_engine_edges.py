"""The rules engine's own edges, in process: what a gate reports when it cannot read a secret (resource and stack
rules alike), that a caller's rule list and config reach every stage, what remediation keeps of a resource, the
exact texts of policy config errors, the generated README rules table, and the Kubernetes readers' corners."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from wirespeed.names import AGENT_NAME, PROFILE_KEY
from wirespeed.rules import RULES, ConfigError, Resource, resolve_config
from wirespeed.rules._docs import markdown_table
from wirespeed.rules._engine import (
    STACK_TYPE,
    evaluate,
    evaluate_resource,
    evaluate_stack,
    remediate,
    remediate_with,
    stack_view,
    unchecked_message,
)
from wirespeed.rules._k8s import DAEMON_SET, NAME_LABEL, container_name, containers, is_tuning_daemon_set, with_profile
from wirespeed.rules._model import Finding, Rule, quoted
from wirespeed.values import SecretNotReadable

THING = "test:index:Thing"
OTHER = "test:index:Other"
SCHEMA = {"floor": {"type": "integer", "minimum": 1, "default": 4}}


def res(name: str = "a", type_: str = THING, **kw: Any) -> Resource:
    return Resource(type_, name, f"urn:pulumi:dev::p::{type_}::{name}", kw.pop("props", {"x": 1}), **kw)


def rule(rule_id: str, scope: str = "resource", check: Any = None, **kw: Any) -> Rule:
    return Rule(
        id=rule_id,
        order=kw.pop("order", 10),
        description="d",
        severity=kw.pop("severity", "high"),
        default_enforcement=kw.pop("default_enforcement", "mandatory"),
        remediation="r",
        source="s",
        scope=scope,  # type: ignore[arg-type]
        types=(THING,),
        config_schema=kw.pop("config_schema", SCHEMA),
        reads=(),
        check=check or (lambda *_: []),
        **kw,
    )


def secret(*_: Any) -> list[Finding]:
    raise SecretNotReadable("props.password")


# --- a secret nobody decrypted --------------------------------------------------------------------------------------


def test_the_unchecked_message_names_the_rule_the_path_and_the_way_out():
    assert unchecked_message(rule("r1"), "spec.key") == (
        "r1 could not be checked: spec.key is a secret that was not decrypted (it reads [secret]), so this rule "
        "cannot say whether the value is safe. Run the check where the stack's secrets can be decrypted, or accept "
        "unchecked secrets explicitly."
    )


def test_a_resource_rule_that_cannot_read_a_secret_reports_the_resource_as_unchecked_at_its_reported_level():
    r = rule("r1", check=secret, severity="critical")
    config = resolve_config({"r1": "remediate"}, [r])
    [violation] = evaluate_resource(res("db"), config, [r])
    assert violation.to_json() == {
        "rule": "r1",
        "severity": "critical",
        "enforcement": "mandatory",  # what remediation could not fix is mandatory
        "urn": f"urn:pulumi:dev::p::{THING}::db",
        "name": "db",
        "type": THING,
        "message": unchecked_message(r, "props.password"),
        "unchecked": True,
        "accepted": None,  # no written reason on it (rules/_accept.py)
    }


def test_a_stack_rule_that_cannot_read_a_secret_reports_the_stack_as_unchecked():
    r = rule("s1", scope="stack", check=secret)
    config = resolve_config({"s1": "advisory"}, [r])
    [violation] = evaluate_stack([res()], config, [r])
    assert violation.to_json() == {
        "rule": "s1",
        "severity": "high",
        "enforcement": "advisory",
        "urn": "",
        "name": "(stack)",
        "type": STACK_TYPE,
        "message": unchecked_message(r, "props.password"),
        "unchecked": True,
        "accepted": None,  # no written reason on it (rules/_accept.py)
    }


def test_a_finding_becomes_a_violation_on_the_resource_it_names():
    other = res("b", OTHER)
    r = rule("r1", check=lambda resource, settings: [Finding(other, f"floor {settings['floor']}")])
    [violation] = evaluate_resource(res(), None, [r])
    assert violation.to_json() == {
        "rule": "r1",
        "severity": "high",
        "enforcement": "mandatory",
        "urn": other.urn,
        "name": "b",
        "type": OTHER,
        "message": "floor 4",
        "unchecked": False,
        "accepted": None,
    }


# --- the caller's rules and config reach every stage --------------------------------------------------------------


def test_evaluate_runs_the_callers_rules_with_the_callers_config_through_resource_and_stack_rules():
    seen: list[Mapping[str, Any]] = []

    def stack_check(resources: Sequence[Resource], settings: Mapping[str, Any]) -> list[Finding]:
        seen.append(settings)
        return [Finding(resources[0], "stack says no")]

    per_resource = rule("r1", check=lambda resource, settings: [Finding(resource, "no")])
    whole = rule("s1", scope="stack", check=stack_check)
    rules_ = [per_resource, whole]
    # No config: each rule's defaults (a built-in config would not know these ids).
    found = evaluate([res("a"), res("b"), res("c", OTHER)], None, rules_)
    assert [(v.rule_id, v.resource_name, v.enforcement) for v in found] == [
        ("r1", "a", "mandatory"),
        ("r1", "b", "mandatory"),
        ("s1", "a", "mandatory"),
    ]
    assert seen == [{"floor": 4}]
    config = resolve_config({"s1": {"enforcementLevel": "advisory", "floor": 9}, "r1": "disabled"}, rules_)
    found = evaluate([res("a")], config, rules_)
    assert [(v.rule_id, v.enforcement) for v in found] == [("s1", "advisory")]
    assert seen[-1] == {"floor": 9}
    assert [v.rule_id for v in evaluate_stack([res("a")], None, rules_)] == ["s1"]
    assert [v.rule_id for v in evaluate_resource(res("a"), None, rules_)] == ["r1"]


def test_stack_rules_see_outputs_and_nothing_else():
    viewed = stack_view(res(props={"in": 1}, outputs={"out": 2}))
    assert (viewed.props, viewed.outputs) == ({"out": 2}, None)
    known_by_inputs = res(props={"in": 1})
    assert stack_view(known_by_inputs) is known_by_inputs


def test_remediation_runs_only_at_remediate_level_and_keeps_the_resource_as_it_was_but_its_props():
    seen: list[Resource] = []

    def bump(resource: Resource, settings: Mapping[str, Any]) -> dict[str, Any]:
        seen.append(resource)
        return {**resource.props, "x": resource.props["x"] + settings["floor"]}

    first, second = rule("r1", remediate=bump), rule("r2", remediate=bump)
    original = res("a", parent="urn:parent", outputs={"o": 1}, property_dependencies={"x": ["urn:d"]}, id="id-1")
    # r1 is not at remediate level (it never rewrites); the rules after it still run.
    config = resolve_config({"r2": "remediate"}, [first, second])
    assert remediate(original, config, [first, second]) == {"x": 5}
    config = resolve_config({"all": "remediate", "r2": {"floor": 10}}, [first, second])
    assert remediate(original, config, [first, second]) == {"x": 15}
    fixed_once = seen[-1]
    assert (fixed_once.type, fixed_once.name, fixed_once.urn, fixed_once.parent, fixed_once.id) == (
        THING,
        "a",
        original.urn,
        "urn:parent",
        "id-1",
    )
    assert (fixed_once.outputs, fixed_once.property_dependencies) == ({"o": 1}, {"x": ["urn:d"]})
    assert remediate(original, resolve_config(None, [first]), [first]) is None  # mandatory: never rewritten
    assert remediate(original, None, [first]) is None  # no config: the given rules' defaults
    # Without a rule list the built-in rules run, none of which knows this type.
    assert remediate(original, None) is None


def test_a_remediation_never_touches_a_resource_of_another_type():
    r = rule("r1", remediate=lambda resource, settings: {"rewritten": True})
    config = resolve_config({"r1": "remediate"}, [r])
    assert remediate_with(r, res(type_=OTHER), config) is None
    assert remediate_with(r, res(), config) == {"rewritten": True}


# --- policy config errors, exactly -------------------------------------------------------------------------------


def problems(user_config: Any, rules_: Sequence[Rule] | None = None) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        resolve_config(user_config, rules_)
    return info.value.problems


LEVELS = "must be one of advisory, mandatory, remediate, disabled"


def test_a_config_that_is_not_an_object_says_what_it_got():
    assert problems(["all"]) == [("(config)", "must be a JSON object, got list")]


def test_bad_levels_name_where_they_sit_and_integral_numbers_read_as_written_in_json():
    assert problems({"all": {"enforcementLevel": "loud", "colour": 1}, "mtu-jumbo-path": 2.0}) == [
        ("all.colour", "is not allowed: 'all' takes only enforcementLevel"),
        ("all.enforcementLevel", f'"loud" is not allowed: {LEVELS}'),
        ("mtu-jumbo-path", f"2 is not allowed: {LEVELS}"),
    ]
    # A value no JSON document could hold (a caller of the Python API) is shown by its repr, never a crash.
    assert problems({"all": b"x"}) == [("all", f"\"b'x'\" is not allowed: {LEVELS}")]


def test_an_all_entry_without_a_level_leaves_every_default():
    config = resolve_config({"all": {}})
    assert dict(config.levels) == {r.id: r.default_enforcement for r in RULES}


def test_each_setting_says_its_allowed_range_once_in_the_settings_order():
    assert problems(
        {
            "nic-ring-minimum": {"minimumTxRing": 0, "minimumRxRing": -0.5, "defaultLineRateGbps": 0},
            "network-optimised-sku": {"minimumBandwidthGbps": -1, "acceptWrittenReason": "yes"},
        }
    ) == [
        ("nic-ring-minimum.defaultLineRateGbps", "0 is not allowed: must be a number between 0.001 and 800"),
        ("nic-ring-minimum.minimumRxRing", "-0.5 is not allowed: must be a whole number >= 1"),
        ("nic-ring-minimum.minimumTxRing", "0 is not allowed: must be a whole number >= 1"),
        ("network-optimised-sku.acceptWrittenReason", '"yes" is not allowed: must be true or false'),
        ("network-optimised-sku.minimumBandwidthGbps", "-1 is not allowed: must be a number >= 0"),
    ]


def test_a_setting_without_a_range_keeps_the_schema_validators_own_words():
    kinds = rule("r1", config_schema={"mode": {"type": "string", "enum": ["fast", "safe"], "default": "safe"}})
    capped = rule("r2", config_schema={"cap": {"type": "integer", "maximum": 8, "default": 2}})
    assert problems({"r1": {"mode": "slow"}, "r2": {"cap": 9}}, [kinds, capped]) == [
        ("r1.mode", "\"slow\" is not allowed: 'slow' is not one of ['fast', 'safe']"),
        ("r2.cap", "9 is not allowed: 9 is greater than the maximum of 8"),
    ]


# --- the README's rules table ----------------------------------------------------------------------------------------


def test_the_rules_table_has_one_row_per_rule_with_its_settings_and_resource_types():
    flags = rule(
        "r1",
        remediate=lambda *_: None,
        config_schema={
            "on": {"type": "boolean", "default": False},
            "rate": {"type": "number", "default": 2.5},
            "mode": {"type": "string", "default": "safe"},
        },
    )
    flags = Rule(**{**flags.__dict__, "types": (THING, "azure-native:containerservice/v20240801:AgentPool", THING)})
    plain = rule("r2", config_schema={})
    assert markdown_table([flags, plain]) == (
        "| rule | what it stops | scope | severity | default level | settings (default) | remediates | resources |\n"
        "|---|---|---|---|---|---|---|---|\n"
        "| `r1` | d | resource | high | mandatory | `on` = false<br>`rate` = 2.5<br>`mode` = safe | yes | "
        "`test:index:Thing`, `azure-native:containerservice:AgentPool` |\n"
        "| `r2` | d | resource | high | mandatory | - | no | `test:index:Thing` |\n"
    )


def test_the_rules_table_shows_json_true_not_a_number():
    sku = next(r for r in RULES if r.id == "network-optimised-sku")
    assert "`minimumBandwidthGbps` = 10<br>`acceptWrittenReason` = true |" in markdown_table([sku])


# --- Kubernetes readers and the model's small helpers ---------------------------------------------------------


def daemon_set(props: Mapping[str, Any]) -> Resource:
    return res("agent", DAEMON_SET, props=props)


def test_the_agent_daemon_set_is_known_by_its_name_label_alone():
    labelled = {"metadata": {"labels": {NAME_LABEL: AGENT_NAME}}, "spec": {"template": {"spec": {}}}}
    assert is_tuning_daemon_set(daemon_set(labelled))
    assert not is_tuning_daemon_set(daemon_set({"metadata": {"labels": {NAME_LABEL: "nginx"}}}))
    assert not is_tuning_daemon_set(daemon_set({"metadata": {"name": AGENT_NAME}}))
    image = {"spec": {"template": {"spec": {"initContainers": [{"image": f"ghcr.io/x/{AGENT_NAME}:1"}]}}}}
    assert is_tuning_daemon_set(daemon_set(image))
    assert not is_tuning_daemon_set(res("agent", props=labelled))


def test_containers_say_where_they_sit_and_are_named_by_name_when_they_have_one():
    spec = {"spec": {"template": {"spec": {"initContainers": [{"name": "init"}], "containers": [{}, {"name": "a"}]}}}}
    found = [(container_name(c, where), where) for c, where in containers(spec)]
    assert found == [
        ("container 'init'", "spec.template.spec.initContainers[0]"),
        ("spec.template.spec.containers[0]", "spec.template.spec.containers[0]"),
        ("container 'a'", "spec.template.spec.containers[1]"),
    ]


def test_with_profile_keeps_the_config_maps_other_data_and_adds_data_when_there_was_none():
    kept = with_profile(res(props={"data": {"other": "1"}}), {"name": "p"})
    assert kept["data"] == {"other": "1", PROFILE_KEY: '{\n  "name": "p"\n}\n'}
    assert with_profile(res(props={"metadata": {}}), {"name": "p"}) == {
        "metadata": {},
        "data": {PROFILE_KEY: '{\n  "name": "p"\n}\n'},
    }


def test_quoted_writes_a_key_as_json_in_brackets():
    assert quoted(PROFILE_KEY) == '["profile.json"]'


def test_a_stack_rule_applies_to_every_type():
    assert rule("s1", scope="stack").applies_to(OTHER)
    assert not rule("r1").applies_to(OTHER)


def test_a_secret_container_is_reported_at_its_field_and_index():
    spec = {"spec": {"template": {"spec": {"containers": [{"name": "a"}, "[secret]"]}}}}
    with pytest.raises(SecretNotReadable) as info:
        list(containers(spec))
    assert info.value.path == "containers.1"

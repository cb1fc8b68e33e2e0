"""The rules engine itself: metadata on every rule, type matching, policy config, enforcement levels, unknown values
and plain documents (the `wirespeed check` path), and that no rule crashes on any property shape."""

from __future__ import annotations

import dataclasses
import json
import pkgutil
import re
import sys
import types
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_OBJECT_VALUE, UNKNOWN_STRING_VALUE

from fixtures.rules.engine import TYPES, config_map_with, engine_props, fixture, launch_template, tuning_objects
from wirespeed import rules
from wirespeed.references import REPORTS
from wirespeed.rules import RULES, ConfigError, Resource, _registry, resolve_config


def resource(kind, props, name="subject", outputs=None):
    type_token = TYPES.get(kind, kind)
    return Resource(type_token, name, f"urn:pulumi:dev::p::{type_token}::{name}", props, outputs=outputs)


# --- metadata -----------------------------------------------------------------------------------------------------


def test_the_registry_finds_every_rule_module_once_in_declared_order():
    """Each public module of wirespeed.rules exporting RULE is one rule, named by its ID; RULES is in ascending,
    unique ``order`` (so a new rule with the next order goes last and reorders no output)."""
    package = Path(rules.__file__).parent
    declaring = sorted(
        p.stem
        for p in package.glob("*.py")
        if not p.stem.startswith("_") and re.search(r"^RULE = ", p.read_text(), re.MULTILINE)
    )
    assert sorted(_registry.module_name(r.id) for r in RULES) == declaring
    assert len({r.id for r in RULES}) == len(RULES)
    orders = [r.order for r in RULES]
    assert orders == sorted(set(orders))
    assert orders[0] > 0


def test_the_registry_refuses_a_rule_without_its_own_place(monkeypatch):
    last = RULES[-1]
    clash = dataclasses.replace(RULES[0], id="zz-clash", order=last.order)
    module = types.ModuleType("wirespeed.rules.zz_clash")
    module.RULE = clash  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "wirespeed.rules.zz_clash", module)
    real = pkgutil.iter_modules
    monkeypatch.setattr(
        pkgutil,
        "iter_modules",
        lambda path: [*real(path), pkgutil.ModuleInfo(None, "zz_clash", False)],  # type: ignore[arg-type]
    )
    with pytest.raises(ValueError, match=rf"'{last.id}' and 'zz-clash' both declare order={last.order}"):
        _registry.discover()
    module.RULE = dataclasses.replace(clash, id="other-name", order=last.order + 10)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"rule 'other-name' belongs in other_name\.py"):
        _registry.discover()


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_every_rule_carries_its_metadata(rule):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", rule.id)
    assert rule.description.endswith(".")
    assert rule.severity in rules.SEVERITIES
    assert rule.default_enforcement in rules.ENFORCEMENTS
    assert len(rule.remediation) > 40
    # A source is a field report (by publisher and title, docs/references.md), a URL or a page of this repository.
    cited = any(report.short in rule.source for report in REPORTS)
    assert cited or "https://" in rule.source or ".md" in rule.source
    assert rule.scope in ("resource", "stack")
    assert rule.types
    assert (rule.remediate is None) or rule.scope == "resource"


@pytest.mark.parametrize("rule", [r for r in RULES if r.config_schema], ids=lambda r: r.id)
def test_every_setting_has_a_type_a_description_and_a_default_its_schema_accepts(rule):
    for name, prop in rule.config_schema.items():
        assert re.fullmatch(r"[a-z][A-Za-z]+", name)
        assert {"type", "default", "description"} <= set(prop)
        jsonschema.validate(prop["default"], prop)


def test_only_tuning_profile_rules_remediate():
    assert [r.id for r in RULES if r.remediate] == ["netdev-backlog-minimum", "nic-ring-minimum"]


def test_mtu_the_nat_eip_quota_and_nat_zones_are_advisory_and_everything_else_mandatory_by_default():
    assert {r.id: r.default_enforcement for r in RULES if r.default_enforcement != "mandatory"} == {
        "aks-natgw-zone-redundant": "advisory",
        "aws-natgw-eip-quota": "advisory",
        "mtu-jumbo-path": "advisory",
    }


# --- type tokens --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "key"),
    [
        ("azure-native:containerservice:AgentPool", ("azure-native", "containerservice", "AgentPool")),
        ("azure-native:containerservice/v20240801:AgentPool", ("azure-native", "containerservice", "AgentPool")),
        (
            "azure-native:containerservice/v20230102preview:ManagedCluster",
            ("azure-native", "containerservice", "ManagedCluster"),
        ),
        ("kubernetes:apps/v1:DaemonSet", ("kubernetes", "apps/v1", "DaemonSet")),
        ("aws:eks/nodeGroup:NodeGroup", ("aws", "eks/nodeGroup", "NodeGroup")),
    ],
)
def test_type_keys_drop_only_azure_native_api_versions(token, key):
    assert rules.type_key(token) == key


def test_rules_apply_by_module_and_resource():
    backlog = rules.rule("netdev-backlog-minimum")
    assert backlog.applies_to("azure-native:containerservice/v20240801:AgentPool")
    assert not backlog.applies_to("azure-native:network:AgentPool")
    assert not backlog.applies_to("kubernetes:apps/v1beta1:DaemonSet")


# --- config -------------------------------------------------------------------------------------------------------


def test_defaults_fill_every_setting():
    config = resolve_config(None)
    assert config.settings_for("aks-snat-ports-minimum") == {"minimumPorts": 1024}
    assert config.settings_for("netdev-backlog-minimum") == {"minimumBacklog": 1000, "defaultLineRateGbps": 25.0}
    assert config.settings_for("nic-ring-minimum") == {
        "minimumRxRing": 1,
        "minimumTxRing": 1,
        "defaultLineRateGbps": 25.0,
    }
    assert config.settings_for("network-optimised-sku") == {"minimumBandwidthGbps": 10.0, "acceptWrittenReason": True}
    assert config.settings_for("aws-natgw-capacity") == {"peakConnectionsPerDestination": 0}
    assert {r.id: config.level(r.id) for r in RULES} == {r.id: r.default_enforcement for r in RULES}


def test_config_file_shape_all_then_per_rule():
    config = resolve_config(
        {
            "all": "advisory",
            "aks-snat-ports-minimum": {"enforcementLevel": "mandatory", "minimumPorts": 2048.0},
            "mtu-jumbo-path": "disabled",
            "nic-ring-minimum": {"minimumRxRing": 8192},
        }
    )
    assert config.level("aks-snat-capacity") == "advisory"
    assert config.level("aks-snat-ports-minimum") == "mandatory"
    assert config.level("mtu-jumbo-path") == "disabled"
    assert config.level("nic-ring-minimum") == "advisory"
    assert config.settings_for("aks-snat-ports-minimum") == {"minimumPorts": 2048.0}
    assert config.settings_for("nic-ring-minimum") == {
        "minimumRxRing": 8192,
        "minimumTxRing": 1,
        "defaultLineRateGbps": 25.0,
    }
    assert resolve_config({"all": {"enforcementLevel": "remediate"}}).level("aks-snat-capacity") == "remediate"


def test_config_errors_are_all_reported_at_once():
    with pytest.raises(ConfigError) as caught:
        resolve_config(
            {
                "all": "strict",
                "aks-snat-port-minimum": {"minimumPorts": 2048},
                "aks-snat-ports-minimum": {"minimumPorts": 3.5, "maxPorts": 1},
                "netdev-backlog-minimum": {"enforcementLevel": "warn", "minimumBacklog": 500},
            }
        )
    known = ", ".join(sorted(r.id for r in RULES))
    assert str(caught.value) == (
        "invalid policy config:\n"
        '  aks-snat-port-minimum: is not a wirespeed rule (did you mean "aks-snat-ports-minimum"?) '
        f"(known: all, check, {known})\n"
        '  all: "strict" is not allowed: must be one of advisory, mandatory, remediate, disabled\n'
        "  aks-snat-ports-minimum.maxPorts: is not a setting of this rule (known: enforcementLevel, minimumPorts)\n"
        "  aks-snat-ports-minimum.minimumPorts: 3.5 is not allowed: must be a whole number between 8 and 64,000\n"
        '  netdev-backlog-minimum.enforcementLevel: "warn" is not allowed: must be one of advisory, mandatory, '
        "remediate, disabled\n"
        "  netdev-backlog-minimum.minimumBacklog: 500 is not allowed: must be a whole number between 1,000 and "
        "3,240,000"
    )
    assert caught.value.field == "config"


# --- enforcement levels -------------------------------------------------------------------------------------------


def low_backlog_pool():
    props = fixture("aks_agent_pool")
    props["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = 1000
    return resource("pool", engine_props(props))


@pytest.mark.parametrize(
    ("level", "reported"),
    [
        ("mandatory", ["mandatory"]),
        ("advisory", ["advisory"]),
        ("remediate", ["mandatory"]),  # what remediation could not fix blocks, as Pulumi reports it
        ("disabled", []),
    ],
)
def test_violations_carry_the_configured_level(level, reported):
    config = resolve_config({"netdev-backlog-minimum": level})
    found = rules.evaluate_resource(low_backlog_pool(), config)
    assert [v.enforcement for v in found] == reported
    assert all(v.rule_id == "netdev-backlog-minimum" and v.severity == "high" for v in found)


def test_violation_json_keys():
    (violation,) = rules.evaluate_resource(low_backlog_pool())
    assert list(violation.to_json()) == [
        "rule",
        "severity",
        "enforcement",
        "urn",
        "name",
        "type",
        "message",
        "unchecked",
        "accepted",
    ]


def test_top_level_remediate_applies_every_remediating_rule_in_order():
    edited = config_map_with(
        lambda d: (d["rings"]["mlx5_core"].update(rx=1024), d["sysctls"].update({"net.core.netdev_max_backlog": 1000}))
    )
    subject = resource("config_map", engine_props(edited))
    assert rules.remediate(subject) is None  # nothing is at the remediate level by default
    fixed = rules.remediate(subject, resolve_config({"all": "remediate"}))
    document = json.loads(fixed["data"]["profile.json"])
    # the minimums for the assumed 25 Gb/s (the ConfigMap carries no line-rate annotation)
    assert document["rings"]["mlx5_core"]["rx"] == 2048
    assert document["sysctls"]["net.core.netdev_max_backlog"] == 8192


# --- plain documents and unknowns (wirespeed check reads exports and preview files as plain JSON) ---------------


def test_plain_dicts_with_integers_work_as_well_as_engine_proxies():
    props = fixture("aks_agent_pool")
    props["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = 1000
    plain = rules.evaluate_resource(resource("pool", props))
    proxied = rules.evaluate_resource(resource("pool", engine_props(props)))
    assert [v.message for v in plain] == [v.message for v in proxied]
    assert len(plain) == 1


@pytest.mark.parametrize("sentinel", [UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE, UNKNOWN_OBJECT_VALUE])
def test_unknown_sentinels_in_plain_documents_are_not_applicable(sentinel):
    props = fixture("aks_agent_pool")
    props["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = sentinel
    assert rules.evaluate_resource(resource("pool", props)) == []
    props["linuxOSConfig"] = sentinel
    assert rules.evaluate_resource(resource("pool", props)) == []


def test_stack_rules_read_outputs_only_as_the_engine_hands_them_over():
    # AnalyzeStack gives stack policies PolicyResource.props = outputs; inputs that differ are never seen.
    small = fixture("aks_cluster")
    small["networkProfile"]["loadBalancerProfile"]["managedOutboundIPs"]["count"] = 10
    large = fixture("aks_cluster")
    large["networkProfile"]["loadBalancerProfile"]["managedOutboundIPs"]["count"] = 1
    large["agentPoolProfiles"][0]["maxCount"] = 95  # 95 + 1 surge = 96 nodes x 4,000 ports > 1 IP x 64,000
    config = resolve_config({"tuning-agent-present": "disabled"})
    (violation,) = rules.evaluate_stack([resource("cluster", small, "aks", outputs=large)], config)
    assert violation.rule_id == "aks-snat-capacity"
    assert "4,000 x 96 nodes" in violation.message
    assert rules.evaluate_stack([resource("cluster", large, "aks", outputs=small)], config) == []
    # Outputs lacking a key are not filled in from the inputs: the engine has no inputs to fill them from.
    network = large.pop("networkProfile")
    assert (
        rules.evaluate_stack([resource("cluster", {**large, "networkProfile": network}, "aks", outputs=large)], config)
        == []
    )


def test_evaluate_runs_resource_then_stack_rules():
    cluster = fixture("aks_cluster")
    cluster["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"] = 0
    found = rules.evaluate([resource("cluster", cluster, "aks")])
    assert [v.rule_id for v in found] == ["aks-allocated-outbound-ports-default", "tuning-agent-present"]


# --- never a crash ------------------------------------------------------------------------------------------------

SENTINELS = st.sampled_from([UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE, UNKNOWN_OBJECT_VALUE])
# Finite numbers only: the engine's Struct cannot carry NaN or infinity (plain documents are run with them below).
SCALARS = st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53), 2**53)
SCALARS |= st.text(max_size=8) | SENTINELS
JSONISH = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
KEYS = [
    "agentPoolProfiles", "networkProfile", "loadBalancerProfile", "allocatedOutboundPorts", "managedOutboundIPs",
    "count", "maxCount", "enableAutoScaling", "upgradeSettings", "maxSurge", "linuxOSConfig", "sysctls",
    "netCoreNetdevMaxBacklog", "vmSize", "instanceTypes", "instanceType", "userData", "launchTemplate", "spec",
    "template", "requirements", "containers", "securityContext", "volumes", "data", "metadata", "labels",
    "secondaryAllocationIds", "outboundIPPrefixes", "resourceName", "id", "prefixLength", "osType",
]  # fmt: skip
SHAPED = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
    max_leaves=25,
)


def mutated(base):
    """Strategy: the compliant fixture with one key's value replaced by anything."""
    return st.sampled_from(sorted(base)).flatmap(lambda key: (JSONISH | SHAPED).map(lambda v: {**base, key: v}))


@given(
    kind=st.sampled_from(sorted(TYPES)),
    props=st.dictionaries(st.sampled_from(KEYS), SHAPED | JSONISH, max_size=6),
)
def test_no_rule_crashes_on_any_property_shape(kind, props):
    for subject in (resource(kind, engine_props(props), "x"), resource(kind, props, "x")):
        rules.evaluate([subject])
        rules.remediate(subject, resolve_config({"all": "remediate"}))


@given(value=st.floats() | st.integers(), kind=st.sampled_from(["cluster", "pool"]))
def test_no_rule_crashes_on_any_number_in_a_plain_document(value, kind):
    props = fixture("aks_cluster" if kind == "cluster" else "aks_agent_pool")
    props["maxCount"] = value
    props.get("networkProfile", {}).get("loadBalancerProfile", {})["allocatedOutboundPorts"] = value
    for pool in props.get("agentPoolProfiles", []):
        pool["maxCount"] = value
    rules.evaluate([resource(kind, props)])


@given(
    props=mutated(fixture("aks_cluster")) | mutated(fixture("aks_agent_pool")) | mutated(launch_template()),
    kind=st.sampled_from(["cluster", "pool", "launch_template"]),
)
def test_no_rule_crashes_on_a_fixture_with_one_field_garbled(props, kind):
    rules.evaluate([resource(kind, engine_props(props))])


@given(key=st.sampled_from(["data", "metadata", "apiVersion", "kind"]), value=JSONISH)
def test_no_rule_crashes_on_a_garbled_config_map(key, value):
    config_map = {**tuning_objects()["ConfigMap"], key: value}
    subject = resource("config_map", engine_props(config_map))
    rules.evaluate([subject])
    rules.remediate(subject, resolve_config({"all": "remediate"}))


# --- written reasons: wirespeed.io.accept-<rule> -------------------------------------------------------------


def _tagged_pool(reason):
    pool = low_backlog_pool()
    props = {**pool.props, "tags": {rules.accept_key("netdev-backlog-minimum"): reason}}
    return resource("pool", props)


def test_an_advisory_finding_with_a_written_reason_is_accepted():
    config = resolve_config({"netdev-backlog-minimum": "advisory"})
    (found,) = rules.evaluate_resource(_tagged_pool("  bench pool: drops measured and accepted  "), config)
    assert (found.enforcement, found.accepted) == ("advisory", "bench pool: drops measured and accepted")
    assert found.to_json()["accepted"] == "bench pool: drops measured and accepted"


@pytest.mark.parametrize("reason", ["", "   "])
def test_an_empty_reason_accepts_nothing(reason):
    config = resolve_config({"netdev-backlog-minimum": "advisory"})
    (found,) = rules.evaluate_resource(_tagged_pool(reason), config)
    assert found.accepted is None


@pytest.mark.parametrize("level", ["mandatory", "remediate"])
def test_a_mandatory_finding_is_never_accepted_and_says_so(level):
    config = resolve_config({"netdev-backlog-minimum": level})
    (found,) = rules.evaluate_resource(_tagged_pool("we like it"), config)
    assert (found.enforcement, found.accepted) == ("mandatory", None)
    assert (
        "wirespeed.io.accept-netdev-backlog-minimum reason is not applied: netdev-backlog-minimum is mandatory here, "
        "and a mandatory finding cannot be accepted by a written reason" in found.message
    )


def test_a_reason_for_another_rule_accepts_nothing():
    config = resolve_config({"netdev-backlog-minimum": "advisory"})
    pool = low_backlog_pool()
    tagged = resource("pool", {**pool.props, "tags": {rules.accept_key("mtu-jumbo-path"): "not this rule"}})
    (found,) = rules.evaluate_resource(tagged, config)
    assert found.accepted is None


def test_components_refuse_reasons_for_mandatory_unknown_rules_and_bad_reasons():
    problems = rules.accepted_advisories_problems(
        {"aws-natgw-capacity": "x", "mtu-jumbo-pth": "y", "mtu-jumbo-path": " ", "aws-natgw-eip-quota": "z" * 257}
    )
    said = [f"{p.field}: {p.reason}" for p in problems]
    assert said[0].startswith("accepted_advisories: 'aws-natgw-capacity' is not allowed: an advisory rule id (")
    assert said[0].endswith(
        "aws-natgw-capacity is mandatory, and a mandatory finding cannot be accepted by a written "
        "reason; fix what it names"
    )
    assert said[1].endswith("mtu-jumbo-path)" + ' (did you mean "mtu-jumbo-path"?)')
    assert (
        said[2] == "accepted_advisories['mtu-jumbo-path']: ' ' is not allowed: a non-empty sentence saying why "
        "the finding is kept"
    )
    assert said[3].endswith(
        "at most 256 characters (it is written as a tag or annotation value; Azure and AWS tag "
        "values hold 256); it has 257"
    )
    assert rules.accepted_labels({"mtu-jumbo-path": " why "}) == {"wirespeed.io.accept-mtu-jumbo-path": "why"}

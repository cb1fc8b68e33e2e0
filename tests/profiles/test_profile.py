"""The tuning profile contract: shared vectors, the committed schema, and error messages users read."""

from __future__ import annotations

import json

import jsonschema
import pytest

from conftest import ROOT
from wirespeed.profile import (
    CIDR_FORMAT,
    DEFAULT_EXCLUDE,
    KNOWN_SYSCTLS,
    ProfileError,
    _cidr,
    committed_schema,
    edit_distance,
    load_profile,
    nearest_sysctl,
    render_schema,
    validate_profile,
)
from wirespeed.sizing import snat_limits

VECTORS = json.loads((ROOT / "tests" / "vectors" / "profiles.json").read_text())


@pytest.mark.parametrize("case", VECTORS["valid"], ids=lambda c: c["name"])
def test_valid_vectors_are_accepted(case):
    profile = validate_profile(case["profile"])
    if "same_as" in case:  # the Go agent's test makes the same comparison
        assert profile == validate_profile(case["same_as"])
        assert profile.to_json_dict() == validate_profile(case["same_as"]).to_json_dict()


@pytest.mark.parametrize("case", VECTORS["invalid"], ids=lambda c: c["name"])
def test_invalid_vectors_report_exactly_the_shared_problems(case):
    # The Go agent's test (agent/internal/profile) asserts the same pointers and messages from the same file.
    with pytest.raises(ProfileError) as info:
        validate_profile(case["profile"])
    want = sorted((e["at"], e["message"]) for e in case["errors"])
    assert want
    assert sorted(info.value.problems) == want


@pytest.mark.parametrize("case", VECTORS["invalid_text"], ids=lambda c: c["name"])
def test_invalid_text_vectors_are_refused_as_the_agent_refuses_them(case):
    # agent/internal/profile TestSharedTextVectors reads the same cases: NaN, a bare name, a cut-off document...
    with pytest.raises(ProfileError) as info:
        load_profile(case["text"])
    assert len(info.value.problems) == len(case["errors"])
    for (at, message), want in zip(info.value.problems, case["errors"], strict=True):
        assert at == want["at"]
        assert message.startswith(want.get("message_prefix", ""))
        assert message == want.get("message", message)


@pytest.mark.parametrize("case", VECTORS["valid"] + VECTORS["invalid"], ids=lambda c: c["name"])
def test_committed_schema_agrees_with_the_model(case):
    # The Go agent validates with the schema alone (asserting the "cidr" format with the same rule as _cidr), so the
    # schema must decide every vector as the model does.
    formats = jsonschema.FormatChecker()
    formats.checks(CIDR_FORMAT, raises=ValueError)(lambda value: not isinstance(value, str) or bool(_cidr(value)))
    validator = jsonschema.Draft202012Validator(committed_schema(), format_checker=formats)
    errors = list(validator.iter_errors(case["profile"]))
    assert bool(errors) is ("errors" in case), [e.message for e in errors]


def test_committed_schema_is_current():
    text = (ROOT / "components" / "wirespeed" / "data" / "profile.schema.json").read_text()
    assert text == render_schema(), "stale schema: run `make regen`"


def test_every_problem_is_reported_at_once_with_value_and_range():
    with pytest.raises(ProfileError) as info:
        validate_profile(
            {
                "name": "x",
                "rings": {"mlx5_core": {"rx": 100_000}},
                "sysctls": {"net.core.netdev_max_backlog": 500},
                "mtu": {"value": 20_000},
            }
        )
    assert info.value.problems == [
        ("/rings/mlx5_core/rx", "100000 is not allowed: must be between 64 and 65,536"),
        ("/sysctls/net.core.netdev_max_backlog", "500 is not allowed: must be between 1,000 and 3,240,000"),
        ("/mtu/value", "20000 is not allowed: must be between 1,280 and 9,216"),
    ]


def test_pulumi_floats_become_ints():
    profile = validate_profile(
        {"name": "f", "rings": {"ena": {"rx": 8192.0}}, "sysctls": {"net.core.netdev_max_backlog": 32768.0}}
    )
    data = profile.to_json_dict()
    assert data["rings"]["ena"] == {"rx": 8192}
    assert data["sysctls"] == {"net.core.netdev_max_backlog": 32768}
    assert isinstance(data["sysctls"]["net.core.netdev_max_backlog"], int)


def test_defaults_select_device_links_and_skip_cni_plumbing():
    profile = validate_profile({"name": "d"})
    assert profile.interfaces.roles == ["sriov-vf", "primary"]
    assert {"veth*", "lxc*", "cilium_*"} <= set(profile.interfaces.exclude) == set(DEFAULT_EXCLUDE)
    assert profile.mtu is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(
            "{",
            ("/", "not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
            id="syntax",
        ),
        pytest.param("[]", ("/", "[] is not allowed: must be an object"), id="not-object"),
    ],
)
def test_load_profile_errors(text, problem):
    with pytest.raises(ProfileError) as info:
        load_profile(text)
    assert info.value.problems == [problem]


def test_round_trip_is_stable(profile_vectors):
    for case in profile_vectors["valid"]:
        once = validate_profile(case["profile"]).to_json_dict()
        assert validate_profile(once).to_json_dict() == once


def test_committed_snat_limits_are_current():
    text = (ROOT / "components" / "wirespeed" / "data" / "snat_limits.json").read_text()
    assert text == snat_limits.render_limits() == snat_limits.committed_limits_text(), "stale: run `make regen`"


@pytest.mark.parametrize(
    ("outbound", "capacity"),
    [
        ({"kind": "azure-load-balancer", "allocated_ports_per_node": 4096}, 4096),
        ({"kind": "azure-nat-gateway", "public_ips": 2}, 100_000),
        ({"kind": "aws-nat-gateway", "public_ips": 3.0}, 165_000),
    ],
)
def test_outbound_capacity_per_destination(outbound, capacity):
    section = validate_profile({"name": "o", "outbound": outbound}).outbound
    assert section is not None
    assert section.capacity() == capacity
    assert (section.pressure_percent, section.hold_seconds, section.exclude_cidrs) == (80, 240, [])


def test_outbound_defaults_reach_the_schema_the_agent_reads():
    # The agent fills pressure_percent and hold_seconds from these "default" keywords, not from its own constants.
    props = committed_schema()["$defs"]["Outbound"]["properties"]
    assert props["pressure_percent"]["default"] == snat_limits.DEFAULT_PRESSURE_PERCENT == 80
    assert props["hold_seconds"]["default"] == snat_limits.DEFAULT_AGENT_HOLD_SECONDS == 240
    assert props["allocated_ports_per_node"]["multipleOf"] == 8


def test_outbound_round_trips_without_the_other_kinds_field():
    data = validate_profile({"name": "o", "outbound": {"kind": "aws-nat-gateway", "public_ips": 2}}).to_json_dict()
    assert data["outbound"] == {
        "kind": "aws-nat-gateway",
        "public_ips": 2,
        "pressure_percent": 80,
        "exclude_cidrs": [],
        "hold_seconds": 240,
    }


def test_known_sysctls_are_integer_net_sysctls_the_agent_can_reach():
    """The agent's only writable /proc/sys is the host's /proc/sys/net (the DaemonSet's mount)."""
    families = {name.split(".")[1] for name in KNOWN_SYSCTLS}
    assert families == {"core", "ipv4", "ipv6", "netfilter"}
    assert all(name.startswith("net.") for name in KNOWN_SYSCTLS)
    assert list(KNOWN_SYSCTLS) == sorted(committed_schema()["$defs"]["Sysctls"]["properties"])
    # Every sysctl wirespeed's own advice tells a user to raise is one a profile can set.
    assert {"net.core.netdev_max_backlog", "net.core.netdev_budget", "net.netfilter.nf_conntrack_max"} <= set(
        KNOWN_SYSCTLS
    )


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("net.core.netdev_max_backlgo", "net.core.netdev_max_backlog"),  # two letters swapped: 2 edits
        ("net.core.somaxcon", "net.core.somaxconn"),
        ("net/core/somaxconn", "net.core.somaxconn"),
        ("net.core.xmem_max", "net.core.rmem_max"),  # a tie (rmem_max, wmem_max): the first alphabetically
        ("net.ipv4.ip_forward", None),  # real, deliberately not settable, and far from every allowed name
        ("kernel.pid_max", None),
    ],
)
def test_a_typo_suggests_the_nearest_known_sysctl(typed, meant):
    assert nearest_sysctl(typed) == meant


def test_edit_distance_counts_insertions_deletions_and_substitutions():
    assert edit_distance("", "") == 0
    assert edit_distance("abc", "") == 3
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("backlog", "backlgo") == 2
    assert edit_distance("é", "e") == 1  # by code point, as the agent counts runes


def test_schema_version_true_is_refused_as_the_schema_refuses_it():
    # Python's True == 1, so a bare Literal[1] took `true`; the shared schema (and the agent) refuses it.
    from wirespeed.profile import ProfileError, validate_profile

    with pytest.raises(ProfileError, match=r"schema_version: true is not allowed: must be 1"):
        validate_profile({"name": "x", "schema_version": True})
    assert validate_profile({"name": "x", "schema_version": 1}).schema_version == 1

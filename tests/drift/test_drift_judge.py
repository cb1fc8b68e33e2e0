"""`wirespeed drift`'s judging, pure: Node facts and profiles in, findings out (no cluster).

The annotation the tests start from is the agent's exact JSON (agent/internal/nodestatus/annotation_test.go,
"selected interfaces only, exact JSON"); tests/drift/test_drift_apiserver.py judges annotations the real agent wrote.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builtin_profiles import BALANCED_BACKLOG, THROUGHPUT_BACKLOG
from wirespeed.drift import (
    ANNOTATION_KEY,
    KINDS,
    ExpectedProfile,
    NodeFacts,
    expected_profile,
    judge,
    judge_node,
    profiles_from_config_maps,
)
from wirespeed.manifests import NodeTuningOptions, node_tuning_objects
from wirespeed.profiles import builtin_profile

NOW = datetime(2026, 11, 22, 13, 5, tzinfo=UTC)
# The agent's exact JSON (annotation_test.go holds the same): a judged report, with its own numbers, not the
# built-in profile's; THROUGHPUT below is the ConfigMap's profile these cases judge it against.
AGENT_JSON = (
    '{"profile":"throughput","state":"applied","reason":"all settings applied",'
    '"interfaces":[{"name":"enP1s1","index":7,"driver":"mlx5_core","role":"sriov-vf","selected":true,'
    '"reason":"enslaved to eth0","rx":{"desired":8192,"current":8192,"max":8192}}],'
    '"sysctls":{"net.core.netdev_max_backlog":{"desired":32768,"current":32768}},'
    '"time":"2026-11-22T13:00:00Z"}'
)
THROUGHPUT = ExpectedProfile("throughput", sysctls={"net.core.netdev_max_backlog": 32768})
PROFILES = {"throughput": THROUGHPUT}


def report(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(AGENT_JSON)
    doc.update(changes)
    return doc


def node(annotation: dict[str, Any] | str | None = None, label: str | None = "throughput", condition=None) -> NodeFacts:
    annotations = {}
    if annotation is not None:
        annotations[ANNOTATION_KEY] = annotation if isinstance(annotation, str) else json.dumps(annotation)
    labels = {} if label is None else {"wirespeed.io/profile": label}
    return NodeFacts("n1", labels, annotations, condition)


def ring(desired: int, current: int, refused: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"desired": desired, "current": current, "max": 8192}
    if refused:
        out["refused"] = True
    return out


def link(name: str = "enP1s1", selected: bool = True, **extra: Any) -> dict[str, Any]:
    return {"name": name, "index": 7, "driver": "mlx5_core", "role": "sriov-vf", "selected": selected, **extra}


CASES = [
    pytest.param(node(report()), [], id="tuned"),
    pytest.param(node(AGENT_JSON), [], id="tuned-agent-json-verbatim"),
    pytest.param(node(None), [("agent-missing", "no wirespeed.io/tuning-status annotation")], id="no-status"),
    pytest.param(
        node(report(time="2026-11-22T12:45:00Z")),
        [("stale", "last report 2026-11-22T12:45:00+00:00 (20 min ago)")],
        id="stale",
    ),
    pytest.param(node(report(time="2026-11-22T12:51:00.123456789Z")), [], id="fresh-with-nanoseconds"),
    pytest.param(
        node(report(interfaces=[link(rx=ring(8192, 1024), tx=ring(8192, 8192))])),
        [("ring-reverted", "enP1s1 (mlx5_core) rx ring is 1024, the profile needs 8192")],
        id="ring-reverted",
    ),
    pytest.param(
        node(report(interfaces=[link(rx=ring(8192, 4096, refused=True))])),
        [("ring-reverted", "enP1s1 (mlx5_core) rx ring is 4096, the profile needs 8192 (the device refused the size)")],
        id="ring-refused",
    ),
    pytest.param(node(report(interfaces=[link(selected=False, rx=ring(8192, 256))])), [], id="unselected-link-ignored"),
    pytest.param(node(report(interfaces=[link(rx=ring(0, 256))])), [], id="unmanaged-ring-ignored"),
    pytest.param(
        node(report(interfaces=[link(mtu={"desired": 3900, "current": 1500})])),
        [("mtu-changed", "enP1s1 (mlx5_core) MTU is 1500, not 3900")],
        id="mtu-changed",
    ),
    pytest.param(
        node(report(sysctls={"net.core.netdev_max_backlog": {"desired": 32768, "current": 1000}})),
        [("backlog-changed", "net.core.netdev_max_backlog is 1000, the profile sets 32768")],
        id="backlog-changed",
    ),
    pytest.param(
        node(report(sysctls={"net.core.netdev_max_backlog": {"desired": 16384, "current": 16384}})),
        [("backlog-changed", "net.core.netdev_max_backlog is 16384, the profile sets 32768")],
        id="agent-runs-an-older-profile-version",
    ),
    pytest.param(
        node(report(sysctls=None)),
        [("backlog-changed", "net.core.netdev_max_backlog is not in the agent's report; the profile sets 32768")],
        id="backlog-not-reported",
    ),
    pytest.param(
        node(report(state="degraded", reason="1 problem(s): eth1: operation not permitted")),
        [("degraded", "1 problem(s): eth1: operation not permitted")],
        id="degraded-by-annotation",
    ),
    pytest.param(
        node(
            report(),
            condition={"type": "NetworkTuningDegraded", "status": "True", "message": 'profile "throughput": x'},
        ),
        [("degraded", 'profile "throughput": x')],
        id="degraded-by-condition",
    ),
    pytest.param(
        node(report(), condition={"type": "NetworkTuningDegraded", "status": "False", "reason": "TuningApplied"}),
        [],
        id="condition-false",
    ),
    pytest.param(node(report(state="dry-run")), [("dry-run", "the agent changes nothing (--dry-run)")], id="dry-run"),
    pytest.param(
        node(report(profile="balanced")),
        [("other-profile", "the agent applies 'balanced', the label says 'throughput'")],
        id="other-profile",
    ),
    pytest.param(
        node(report(profile="latency"), label="latency"),
        [
            ("unknown-profile", "label wirespeed.io/profile=latency names no profile ConfigMap"),
        ],
        id="label-with-no-profile",
    ),
    pytest.param(
        node("not json"),
        [("status-unreadable", "wirespeed.io/tuning-status is not a tuning report: 'not json'")],
        id="garbage-annotation",
    ),
    pytest.param(
        node(report(time="yesterday")),
        [("status-unreadable", "wirespeed.io/tuning-status has no report time")],
        id="bad-time",
    ),
    pytest.param(
        node(
            report(
                time="2026-11-22T10:05:00Z",
                interfaces=[link(rx=ring(8192, 1024))],
                sysctls={"net.core.netdev_max_backlog": {"desired": 32768, "current": 1000}},
            )
        ),
        [
            ("stale", "last report 2026-11-22T10:05:00+00:00 (180 min ago)"),
            ("ring-reverted", "enP1s1 (mlx5_core) rx ring is 1024, the profile needs 8192"),
            ("backlog-changed", "net.core.netdev_max_backlog is 1000, the profile sets 32768"),
        ],
        id="every-finding-at-once-in-kind-order",
    ),
]


@pytest.mark.parametrize(("facts", "expected"), CASES)
def test_judge_node(facts, expected):
    verdict = judge_node(facts, PROFILES, NOW, timedelta(minutes=15))
    assert [(f.kind, f.message) for f in verdict.findings] == expected
    assert verdict.state == ("drifted" if expected else "tuned")


def test_a_node_without_the_label_is_unmanaged_not_drifted():
    verdict = judge_node(node(None, label=None), PROFILES, NOW, timedelta(minutes=15))
    assert (verdict.state, verdict.profile, verdict.findings) == ("unmanaged", None, ())


def test_report_summary_and_json():
    nodes = [
        NodeFacts("b", {"wirespeed.io/profile": "throughput"}, {}, None),
        NodeFacts("a", {"wirespeed.io/profile": "throughput"}, {ANNOTATION_KEY: AGENT_JSON}, None),
        NodeFacts("c", {}, {}, None),
    ]
    result = judge(nodes, PROFILES, NOW)
    assert [v.node for v in result.verdicts] == ["a", "b", "c"]
    assert result.explain() == (
        "b (profile throughput): drifted\n"
        "  agent-missing: no wirespeed.io/tuning-status annotation\n"
        "3 nodes: 1 tuned, 1 drifted, 1 without a wirespeed.io/profile label (agent-missing 1)"
    )
    assert result.to_json() == {
        "nodes": [
            {"name": "a", "profile": "throughput", "state": "tuned", "findings": [], "snat": None},
            {
                "name": "b",
                "profile": "throughput",
                "state": "drifted",
                "findings": [{"kind": "agent-missing", "message": "no wirespeed.io/tuning-status annotation"}],
                "snat": None,
            },
            {"name": "c", "profile": None, "state": "unmanaged", "findings": [], "snat": None},
        ],
        "total": 3,
        "tuned": 1,
        "drifted": 1,
        "pressure": 0,
        "unmanaged": 1,
        "by_kind": {"agent-missing": 1},
    }


def test_expected_profiles_come_from_the_rendered_config_maps():
    objects = node_tuning_objects([builtin_profile("throughput"), builtin_profile("balanced")], NodeTuningOptions())
    found = profiles_from_config_maps([o for o in objects if o["kind"] == "ConfigMap"])
    assert set(found) == {"throughput", "balanced"}
    assert found["throughput"] == ExpectedProfile("throughput", {"net.core.netdev_max_backlog": THROUGHPUT_BACKLOG})
    assert found["balanced"] == ExpectedProfile("balanced", {"net.core.netdev_max_backlog": BALANCED_BACKLOG})


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(None, "the ConfigMap has no profile.json key", id="no-key"),
        pytest.param(
            "{",
            "/: not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2",
            id="not-json",
        ),
        pytest.param(
            json.dumps(builtin_profile("balanced").to_json_dict()),
            "the ConfigMap's profile is named 'balanced'",
            id="other-name",
        ),
    ],
)
def test_an_unusable_config_map_is_a_finding_on_its_nodes(text, problem):
    expected = expected_profile("throughput", text)
    assert expected.problem == problem
    verdict = judge_node(node(report()), {"throughput": expected}, NOW, timedelta(minutes=15))
    assert [f.kind for f in verdict.findings] == ["invalid-profile"]


def test_two_config_maps_that_disagree_make_the_profile_invalid():
    objects = node_tuning_objects([builtin_profile("throughput")], NodeTuningOptions())
    (cm,) = [o for o in objects if o["kind"] == "ConfigMap"]
    other = json.loads(json.dumps(cm))
    other["metadata"]["namespace"] = "other"
    doc = json.loads(other["data"]["profile.json"])
    doc["sysctls"]["net.core.netdev_max_backlog"] = 4096
    other["data"]["profile.json"] = json.dumps(doc)
    found = profiles_from_config_maps([cm, other])
    assert (
        found["throughput"].problem
        == "ConfigMaps disagree on this profile (one of them: other/wirespeed-profile-throughput)"
    )


SNAT_KEYS = ("top", "max", "peak", "capacity", "pressure", "conntrack_entries")
WATCHED = {"throughput": ExpectedProfile("throughput", THROUGHPUT.sysctls, snat_capacity=4096, snat_threshold=80)}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@given(
    annotation=st.one_of(
        st.text(max_size=40),
        json_values.map(json.dumps),
        st.dictionaries(st.sampled_from([*json.loads(AGENT_JSON), "snat"]), json_values).map(
            lambda changes: json.dumps(report(**changes))
        ),
        st.dictionaries(st.sampled_from(list(SNAT_KEYS)), json_values).map(lambda snat: json.dumps(report(snat=snat))),
    ),
    condition=st.one_of(st.none(), st.dictionaries(st.sampled_from(["type", "status", "message"]), json_values)),
    snat_condition=st.one_of(st.none(), st.dictionaries(st.sampled_from(["status", "reason", "message"]), json_values)),
)
def test_any_annotation_is_judged_without_crashing(annotation, condition, snat_condition):
    facts = node(annotation, condition=condition)
    facts = NodeFacts(facts.name, facts.labels, facts.annotations, condition, snat_condition)
    for profiles in (PROFILES, WATCHED):
        verdict = judge_node(facts, profiles, NOW, timedelta(minutes=15))
        assert all(f.kind in KINDS for f in verdict.findings)
        json.dumps(verdict.to_json())


@pytest.mark.parametrize("module", ["wirespeed.cli", "wirespeed.drift"])
def test_the_kubernetes_client_is_not_loaded_until_drift_runs(module):
    """Other commands stay fast: the client (and urllib3, google-auth...) loads only inside `wirespeed drift`."""
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.split('.')[0] == 'kubernetes'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# The report's `snat` object and the SNATPortPressure condition as the agent writes them (issue 19 contract).
SNAT = {
    "top": [{"destination": "52.1.2.3:443/tcp", "ports_in_use": 3300}, {"destination": "other", "ports_in_use": 12}],
    "max": 3300,
    "peak": 3400,
    "capacity": 4096,
    "pressure": True,
    "conntrack_entries": 5120,
}
PRESSURE_CONDITION = {
    "type": "SNATPortPressure",
    "status": "True",
    "reason": "PortsNearCapacity",
    "message": "52.1.2.3:443/tcp uses 3,300 of 4,096 ports (81%, threshold 80%)",
}


def test_snat_pressure_from_the_condition_is_reported_in_the_agent_s_words():
    facts = NodeFacts("n1", {"wirespeed.io/profile": "throughput"}, {ANNOTATION_KEY: json.dumps(report(snat=SNAT))},
                      None, PRESSURE_CONDITION)  # fmt: skip
    verdict = judge_node(facts, WATCHED, NOW, timedelta(minutes=15))
    assert [(f.kind, f.message) for f in verdict.findings] == [
        ("snat-pressure", "52.1.2.3:443/tcp uses 3,300 of 4,096 ports (81%, threshold 80%)")
    ]
    assert verdict.state == "pressure"
    assert verdict.to_json()["snat"] == SNAT


def test_snat_pressure_from_the_report_alone_names_destination_and_numbers():
    verdict = judge_node(node(report(snat=SNAT)), WATCHED, NOW, timedelta(minutes=15))
    assert [(f.kind, f.message) for f in verdict.findings] == [
        ("snat-pressure", "52.1.2.3:443/tcp uses 3,300 of 4,096 ports (80%, threshold 80%)")
    ]


def test_a_relieved_condition_and_a_calm_report_are_no_finding():
    calm = SNAT | {"pressure": False, "max": 1200}
    relieved = PRESSURE_CONDITION | {"status": "False", "reason": "PortsWithinCapacity"}
    facts = NodeFacts("n1", {"wirespeed.io/profile": "throughput"}, {ANNOTATION_KEY: json.dumps(report(snat=calm))},
                      None, relieved)  # fmt: skip
    verdict = judge_node(facts, WATCHED, NOW, timedelta(minutes=15))
    assert (verdict.state, verdict.findings) == ("tuned", ())


def test_a_profile_watching_snat_without_the_agent_s_accounting_is_drift():
    verdict = judge_node(node(report()), WATCHED, NOW, timedelta(minutes=15))
    assert [f.kind for f in verdict.findings] == ["snat-unmeasured"]
    assert verdict.findings[0].message.startswith("the profile's outbound section asks the agent to watch 4,096 ports")
    assert verdict.state == "drifted"
    # Without an outbound section in the profile, no accounting is expected.
    assert judge_node(node(report()), PROFILES, NOW, timedelta(minutes=15)).findings == ()


def test_a_drifted_node_under_pressure_is_drifted_and_counted_under_pressure():
    drifted = report(snat=SNAT, sysctls={"net.core.netdev_max_backlog": {"desired": 32768, "current": 1000}})
    nodes = [
        NodeFacts("a", {"wirespeed.io/profile": "throughput"}, {ANNOTATION_KEY: json.dumps(drifted)}, None),
        NodeFacts("b", {"wirespeed.io/profile": "throughput"}, {ANNOTATION_KEY: json.dumps(report(snat=SNAT))}, None),
    ]
    result = judge(nodes, WATCHED, NOW)
    assert [v.state for v in result.verdicts] == ["drifted", "pressure"]
    assert (result.to_json()["drifted"], result.to_json()["pressure"], result.failed) == (1, 2, True)
    assert result.explain().splitlines()[-1] == (
        "2 nodes: 0 tuned, 1 drifted, 2 under SNAT port pressure, 0 without a wirespeed.io/profile label "
        "(backlog-changed 1, snat-pressure 2)"
    )
    assert "b (profile throughput): under SNAT port pressure" in result.explain().splitlines()


def test_the_profile_s_outbound_section_is_what_drift_expects():
    from wirespeed.profile import sized_outbound, with_outbound

    profile = with_outbound(builtin_profile("throughput"), sized_outbound("aws-nat-gateway", 2))
    expected = expected_profile("throughput", json.dumps(profile.to_json_dict()))
    assert (expected.snat_capacity, expected.snat_threshold) == (110_000, 80)


# The agent's annotation names the pressed destination's top workloads (status.SNATWorkload): drift carries them
# in its JSON and says them under the node in its prose.
WORKLOADS = [
    {"namespace": "checkout", "workload": "payments-api", "kind": "Deployment", "destination": "52.1.2.3:443/tcp",
     "ports_in_use": 2410},
    {"namespace": "batch", "workload": "export", "kind": "CronJob", "destination": "52.1.2.3:443/tcp",
     "ports_in_use": 900},
    {"namespace": "", "workload": "aks-pool-1", "kind": "node", "destination": "52.1.2.3:443/tcp", "ports_in_use": 7},
]  # fmt: skip


def test_a_pressed_node_s_top_workloads_are_in_the_json_and_the_prose():
    facts = NodeFacts("n1", {"wirespeed.io/profile": "throughput"},
                      {ANNOTATION_KEY: json.dumps(report(snat=SNAT | {"workloads": WORKLOADS}))}, None,
                      PRESSURE_CONDITION)  # fmt: skip
    result = judge([facts], WATCHED, NOW)
    assert result.to_json()["nodes"][0]["snat"]["workloads"] == WORKLOADS
    assert result.explain().splitlines()[:3] == [
        "n1 (profile throughput): under SNAT port pressure",
        "  snat-pressure: 52.1.2.3:443/tcp uses 3,300 of 4,096 ports (81%, threshold 80%)",
        "  top workloads to 52.1.2.3:443/tcp: checkout/payments-api (Deployment) 2,410 ports, batch/export (CronJob) "
        "900, aks-pool-1 (node) 7",
    ]


def test_a_calm_node_s_workloads_are_not_said_and_malformed_ones_are_dropped():
    calm = SNAT | {"pressure": False, "max": 1200, "workloads": WORKLOADS}
    facts = NodeFacts("n1", {"wirespeed.io/profile": "throughput"}, {ANNOTATION_KEY: json.dumps(report(snat=calm))},
                      None)  # fmt: skip
    assert "top workloads" not in judge([facts], WATCHED, NOW).explain()
    bad = [WORKLOADS[0] | {"ports_in_use": -1}, WORKLOADS[1] | {"extra": 1}, {"workload": "x"}, "x", WORKLOADS[2]]
    verdict = judge_node(node(report(snat=SNAT | {"workloads": bad})), WATCHED, NOW, timedelta(minutes=15))
    assert verdict.snat is not None
    assert verdict.snat["workloads"] == [WORKLOADS[2]]

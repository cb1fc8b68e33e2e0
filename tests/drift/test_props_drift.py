"""Property test of the drift judge on Node objects as a broken or hostile API server might send them: labels,
annotations and conditions of any JSON type, tuning-status annotations that are reports with odd fields or not
reports at all. A node whose metadata, labels or annotations are not of the API's types is refused (drift exits 2);
every other node gets a verdict, every finding has a known kind, a node whose label names no profile is unmanaged
(never tuned or drifted), and the report renders as JSON and as a summary.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from hostile import bounded, json_values, mutated
from wirespeed.drift import judge
from wirespeed.drift.cluster import NodeUnreadableError, node_facts
from wirespeed.drift.judge import ANNOTATION_KEY, CONDITION_TYPE, KINDS, ExpectedProfile

# --- the drift judge on odd Node objects -----------------------------------------------------------------------

NOW = datetime(2026, 11, 22, 13, 5, tzinfo=UTC)
PROFILES = {
    "throughput": ExpectedProfile("throughput", sysctls={"net.core.netdev_max_backlog": 32768}),
    "broken": ExpectedProfile("broken", problem="/: not JSON"),
}
REPORT = {
    "profile": "throughput",
    "state": "applied",
    "interfaces": [
        {"name": "eth1", "driver": "mlx5_core", "selected": True, "rx": {"desired": 8192, "current": 8192},
         "mtu": {"desired": 1500, "current": 1500}}
    ],
    "sysctls": {"net.core.netdev_max_backlog": {"desired": 32768, "current": 32768}},
    "time": "2026-11-22T13:00:00Z",
}  # fmt: skip
NODE = {
    "metadata": {
        "name": "n1",
        "labels": {"wirespeed.io/profile": "throughput"},
        "annotations": {ANNOTATION_KEY: json.dumps(REPORT)},
    },
    "status": {"conditions": [{"type": CONDITION_TYPE, "status": "False", "message": "ok"}]},
}
odd_report_annotation = mutated(REPORT).map(json.dumps)


@st.composite
def nodes(draw: st.DrawFn) -> dict[str, Any]:
    node = json.loads(json.dumps(NODE))
    if draw(st.booleans()):
        node["metadata"]["annotations"][ANNOTATION_KEY] = draw(odd_report_annotation)
    return draw(mutated(node, max_mutations=3)) if draw(st.integers(0, 3)) else node


def readable(item: dict[str, Any]) -> bool:
    """Whether the Node's metadata, labels and annotations are of the types the API defines."""
    meta = item.get("metadata")
    if not isinstance(meta, dict):
        return False
    for field in ("labels", "annotations"):
        value = meta.get(field)
        if value is not None and not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
            return False
    return True


@bounded(200)
@given(items=st.lists(nodes(), min_size=1, max_size=3), stale=st.sampled_from([timedelta(minutes=15), timedelta(0)]))
def test_every_node_object_gets_a_verdict_with_known_kinds(items, stale):
    assume(all(isinstance(item, dict) for item in items))
    for item in items:
        if not readable(item):  # refused (drift exits 2), never judged as a node without a profile
            with pytest.raises(NodeUnreadableError):
                node_facts(item)
    items = [item for item in items if readable(item)]
    report = judge([node_facts(item) for item in items], PROFILES, NOW, stale)
    assert len(report.verdicts) == len(items)
    for verdict in report.verdicts:
        assert all(f.kind in KINDS for f in verdict.findings)
        assert (verdict.profile is None) is (verdict.state == "unmanaged")
    json.dumps(report.to_json())
    assert report.explain()


@bounded(100)
@given(annotation=st.one_of(odd_report_annotation, json_values.map(json.dumps), st.text(max_size=40)))
def test_a_labelled_node_with_any_annotation_is_judged(annotation):
    node = json.loads(json.dumps(NODE))
    node["metadata"]["annotations"][ANNOTATION_KEY] = annotation
    [verdict] = judge([node_facts(node)], PROFILES, NOW).verdicts
    assert verdict.profile == "throughput"
    if annotation != json.dumps(REPORT):
        assert verdict.state in ("tuned", "drifted")

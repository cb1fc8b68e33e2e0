"""``wirespeed.kubernetes.NodeTuning``'s objects, as pulumi-kubernetes serialises them, admitted by a real API server.

pulumi-kubernetes' own rendering (``Provider(render_yaml_to_directory=...)``) runs inside the provider plugin,
which needs the Pulumi engine and CLI; neither exists here. What can be real is taken: the component runs under the
SDK's mocks (the engine is mocked, tests/test_node_tuning_component.py), every child's inputs are recorded exactly
as the SDK sent them to the engine, and those objects are server-side applied, in the dependency order the
component declares, to the real kube-apiserver (tests/apiserver.py).
"""

from __future__ import annotations

import json

import yaml

from pulumi_engine import engine, resolve  # noqa: F401  (engine is a fixture)
from test_node_tuning_component import children
from wirespeed.kubernetes import NodeTuning, NodeTuningArgs


def test_node_tuning_registered_objects_are_admitted_under_pulumi_mocks(engine, apiserver):  # noqa: F811
    tuning = NodeTuning("nt", NodeTuningArgs(profiles=["throughput", "balanced"], namespace="ws-pulumi"))
    assert resolve(tuning.daemon_set_names) == ["wirespeed-agent-throughput", "wirespeed-agent-balanced"]
    registered = children(engine)
    by_urn = {r.urn: r for r in registered}
    # The order the engine would create them in: each after the children it depends on.
    ordered, done = [], set()
    while len(ordered) < len(registered):
        for r in registered:
            if r.urn not in done and all(d in done or d not in by_urn for d in r.dependencies):
                ordered.append(r)
                done.add(r.urn)
    kinds = [r.inputs["kind"] for r in ordered]
    # Objects in the agent's namespace wait for it; the Events Role and RoleBinding live in `default`, which exists.
    in_agent_namespace = [i for i, r in enumerate(ordered) if r.inputs["metadata"].get("namespace") == "ws-pulumi"]
    assert kinds.index("Namespace") < min(in_agent_namespace)

    out = apiserver.apply(yaml.safe_dump_all([r.inputs for r in ordered]), field_manager="pulumi-kubernetes")
    assert out.stderr == ""
    assert len(out.stdout.splitlines()) == len(registered)
    for r in registered:
        meta = r.inputs["metadata"]
        ns = ["-n", meta["namespace"]] if "namespace" in meta else []
        live = json.loads(
            apiserver.kubectl("get", r.inputs["kind"], meta["name"], *ns, "-o", "json", "--show-managed-fields").stdout
        )
        assert live["metadata"]["name"] == meta["name"]
        managers = {m["manager"] for m in live["metadata"]["managedFields"]}
        assert "pulumi-kubernetes" in managers

"""``wirespeed.kubernetes.NodeTuning``'s objects, as pulumi-kubernetes serialises them, admitted by a real API server.

pulumi-kubernetes' own rendering (``Provider(render_yaml_to_directory=...)``) runs inside the provider plugin,
which needs the Pulumi engine and CLI; neither exists here. What can be real is taken: the component runs under the
SDK's mocks (the engine is mocked, tests/components/test_node_tuning_component.py), every child's inputs are recorded
exactly
as the SDK sent them to the engine, and those objects are server-side applied, in the dependency order the
component declares, to the real kube-apiserver (tests/apiserver.py).
"""

from __future__ import annotations

import json

import yaml

from pulumi_engine import engine, resolve  # noqa: F401  (engine is a fixture)
from test_node_tuning_component import children
from wirespeed.kubernetes import NodeTuning, NodeTuningArgs
from wirespeed.names import PROFILE_LABEL
from wirespeed.profiles import builtin_profile


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


def test_a_profile_named_like_a_number_is_a_string_label_under_pulumi_mocks(engine, apiserver):  # noqa: F811
    """A custom profile named 1e3 (kubectl's YAML reader takes the plain 1e3 for 1000): the component hands
    pulumi-kubernetes the label and the nodeSelector as strings, which reach the API server typed (as JSON, the way
    the provider sends them), and the server keeps them as the string."""
    profile = builtin_profile("throughput").model_copy(update={"name": "1e3"})
    tuning = NodeTuning("nt-numeric", NodeTuningArgs(profiles=[profile], namespace="ws-pulumi-numeric"))
    assert resolve(tuning.daemon_set_names) == ["wirespeed-agent-1e3"]
    registered = [r for r in children(engine) if r.inputs["metadata"].get("namespace") in (None, "ws-pulumi-numeric")]
    (daemon_set,) = [r.inputs for r in registered if r.inputs["kind"] == "DaemonSet"]
    assert daemon_set["spec"]["template"]["spec"]["nodeSelector"][PROFILE_LABEL] == "1e3"
    assert daemon_set["metadata"]["labels"][PROFILE_LABEL] == "1e3"
    namespace = [r.inputs for r in registered if r.inputs["kind"] == "Namespace"]
    rest = [r.inputs for r in registered if r.inputs["kind"] != "Namespace"]
    for step in (namespace, rest):
        out = apiserver.apply(json.dumps({"apiVersion": "v1", "kind": "List", "items": step}), "pulumi-kubernetes")
        assert out.stderr == "", out.stderr
    live = json.loads(apiserver.kubectl("get", "daemonset", "wirespeed-agent-1e3", "-n", "ws-pulumi-numeric", "-o",
                                        "json").stdout)  # fmt: skip
    assert live["spec"]["template"]["spec"]["nodeSelector"][PROFILE_LABEL] == "1e3"

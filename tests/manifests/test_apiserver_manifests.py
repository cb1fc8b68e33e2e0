"""The tuning manifests against a real kube-apiserver (tests/apiserver.py): server-side applied and admitted,
and Pod Security doing what the Namespace's "privileged" label is there for.

Pod Security warns on workload objects (a DaemonSet) and enforces on Pods, so both are proven: the DaemonSet in a
``baseline`` namespace is admitted with the warning, a Pod built from its template is rejected there with the
Pod Security message, and the same Pod is admitted in the namespace the manifests create.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
import yaml

from clirun import WIRESPEED
from wirespeed.manifests import NodeTuningOptions, node_tuning_objects
from wirespeed.profiles import builtin_profile

# What Pod Security "baseline" says about the agent's pod template (k8s.io/pod-security-admission/policy:
# check_hostNamespaces.go, check_hostPathVolumes.go, check_capabilities_baseline.go), in the order it reports.
BASELINE_VIOLATIONS = (
    'non-default capabilities (container "agent" must not include "NET_ADMIN" in securityContext.capabilities.add), '
    "host namespaces (hostNetwork=true), "
    'hostPath volumes (volumes "host-proc-sys-net", "host-sys")'
)
# A Pod with hostNetwork gets each containerPort's hostPort defaulted to it (k8s.io/kubernetes
# pkg/apis/core/v1/defaults.go, SetDefaults_Pod), a DaemonSet's template does not: the Pod shows one more.
POD_VIOLATIONS = BASELINE_VIOLATIONS + ', hostPort (container "agent" uses hostPort 9808)'


def render(*args: str) -> str:
    assert WIRESPEED
    out = subprocess.run([WIRESPEED, "render", "node-tuning", *args], capture_output=True, text=True, check=True)
    return out.stdout


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def get(apiserver, *args: str) -> dict[str, Any]:
    return json.loads(apiserver.kubectl("get", *args, "-o", "json").stdout)


def pod_from_template(daemon_set: dict[str, Any], namespace: str, name: str, node: str) -> dict[str, Any]:
    """The Pod the DaemonSet controller would create (there is no controller-manager here): its template, bound
    to a node, so admission sees exactly what a node would run."""
    template = daemon_set["spec"]["template"]
    spec = dict(template["spec"], nodeName=node)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": template["metadata"]["labels"]},
        "spec": spec,
    }


def test_rendered_manifests_are_server_side_applied_and_admitted(apiserver):
    text = render("--profile", "throughput", "--profile", "balanced", "--namespace", "ws-render")
    out = apiserver.apply(text)
    assert "Warning" not in out.stderr, out.stderr
    applied = {tuple(line.split(" ", 1)[0].split("/", 1)) for line in out.stdout.splitlines()}
    expected = {(d["kind"].lower(), d["metadata"]["name"]) for d in documents(text)}
    assert {(kind.split(".")[0], name) for kind, name in applied} == expected
    # What the server stored is what was rendered (server-side apply kept every field the manifests set).
    for doc in documents(text):
        ns = ["-n", doc["metadata"]["namespace"]] if "namespace" in doc["metadata"] else []
        live = get(apiserver, doc["kind"].lower(), doc["metadata"]["name"], *ns)
        labels = dict(doc["metadata"]["labels"])
        if doc["kind"] == "Namespace":  # set by the API server on every Namespace
            labels["kubernetes.io/metadata.name"] = doc["metadata"]["name"]
        assert live["metadata"]["labels"] == labels
        for key in ("data", "rules", "roleRef", "subjects"):
            assert live.get(key) == doc.get(key), (doc["kind"], key)
    ds = get(apiserver, "daemonset", "wirespeed-agent-throughput", "-n", "ws-render")
    rendered = next(d for d in documents(text) if d["metadata"]["name"] == "wirespeed-agent-throughput")
    assert (
        ds["spec"]["template"]["spec"]["containers"][0]["securityContext"]
        == (rendered["spec"]["template"]["spec"]["containers"][0]["securityContext"])
    )
    # A second apply of the same text changes nothing (server-side apply is idempotent for one field manager).
    again = apiserver.apply(text)
    assert all(line.endswith("serverside-applied") for line in again.stdout.splitlines()), again.stdout
    assert get(apiserver, "daemonset", "wirespeed-agent-throughput", "-n", "ws-render")["metadata"]["generation"] == 1


def test_daemon_set_in_a_baseline_namespace_is_admitted_with_the_pod_security_warning(apiserver):
    namespace = "ws-baseline"
    apiserver.kubectl("create", "namespace", namespace)
    apiserver.kubectl(
        "label",
        "namespace",
        namespace,
        "pod-security.kubernetes.io/enforce=baseline",
        "pod-security.kubernetes.io/warn=baseline",
    )
    docs = [d for d in documents(render("--namespace", namespace)) if d["kind"] != "Namespace"]
    out = apiserver.apply(yaml.safe_dump_all(docs))
    assert out.stderr == f'Warning: would violate PodSecurity "baseline:latest": {BASELINE_VIOLATIONS}\n'

    assert get(apiserver, "daemonset", "wirespeed-agent-throughput", "-n", namespace)["kind"] == "DaemonSet"


@pytest.mark.parametrize(
    ("namespace", "admitted"),
    [pytest.param("ws-baseline-pods", False, id="baseline-rejects"), pytest.param("ws-privileged", True, id="own")],
)
def test_a_pod_from_the_template_is_enforced_by_pod_security(apiserver, namespace, admitted):
    objects = node_tuning_objects([builtin_profile("throughput")], NodeTuningOptions(namespace=namespace))
    if not admitted:
        # The same objects in a namespace labelled baseline instead of the privileged label the manifests set.
        ns = objects[0]
        for mode in ("enforce", "audit", "warn"):
            ns["metadata"]["labels"][f"pod-security.kubernetes.io/{mode}"] = "baseline"
    apiserver.apply(yaml.safe_dump_all(objects))
    daemon_set = next(o for o in objects if o["kind"] == "DaemonSet")
    pod = pod_from_template(daemon_set, namespace, "agent-on-node-a", "node-a")
    out = apiserver.kubectl("create", "-f", "-", stdin=json.dumps(pod), check=False)
    if admitted:
        assert out.returncode == 0, out.stderr
        live = get(apiserver, "pod", "agent-on-node-a", "-n", namespace)
        assert live["spec"]["hostNetwork"] is True
        assert live["spec"]["priorityClassName"] == "system-node-critical"
        assert live["spec"]["priority"] == 2000001000  # resolved by the Priority admission plugin
    else:
        assert out.returncode == 1
        assert out.stderr.strip() == (
            'Error from server (Forbidden): error when creating "STDIN": pods "agent-on-node-a" is forbidden: '
            f'violates PodSecurity "baseline:latest": {POD_VIOLATIONS}'
        )

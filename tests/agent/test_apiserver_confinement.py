"""The agent's confinement on a real kube-apiserver (tests/apiserver.py): what its ServiceAccount may do once the
whole install `wirespeed render node-tuning` prints is applied.

The agent's token is the one the kubelet mounts into its pod: from the TokenRequest API, bound to a Pod of the
agent's ServiceAccount on node confine-a, so the API server puts confine-a into its claims. With it, the agent's own
annotation and conditions on confine-a are allowed, by every way of writing (merge, strategic merge and JSON patch,
server-side apply); everything else on confine-a, and anything on confine-b, is refused with the admission policy's
message, and the refused request changes nothing. Events may be written in "default" only. A token without a node
(not bound to a Pod) is refused, and users other than the agent are not affected.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from typing import Any

import pytest

from apiserver import ApiServer
from clirun import WIRESPEED

NAMESPACE = "ws-confine"
AGENT = "wirespeed-agent"
OWN, OTHER = "confine-a", "confine-b"
POLICY = "wirespeed-agent-own-node"
ANNOTATION = "wirespeed.io/tuning-status"
USER = f"system:serviceaccount:{NAMESPACE}:{AGENT}"

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"

ALLOWED = (
    "it may change only the wirespeed.io/tuning-status annotation and its conditions NetworkTuningDegraded, "
    "SNATPortPressure on the Node its pod runs on"
)
LABELS = (
    f"the wirespeed agent may not change a Node's labels (they steer scheduling and pick its tuning profile); {ALLOWED}"
)
ANNOTATIONS = (
    "the wirespeed agent may not change annotations other than wirespeed.io/tuning-status "
    f"(they belong to other controllers); {ALLOWED}"
)
METADATA = f"the wirespeed agent may not change a Node's finalizers, owner references or other metadata; {ALLOWED}"
SPEC = (
    "the wirespeed agent may not change a Node's spec (taints, unschedulable, podCIDR and providerID decide what "
    f"runs there); {ALLOWED}"
)
CONDITIONS = (
    "the wirespeed agent may not change conditions it does not own (Ready and the pressure conditions decide "
    f"scheduling and eviction); {ALLOWED}"
)
STATUS = (
    "the wirespeed agent may not change a Node's status other than its conditions (addresses, capacity, "
    f"allocatable and nodeInfo are the kubelet's); {ALLOWED}"
)
OTHER_NODE = f"the wirespeed agent on {OWN} may write only Node {OWN}, not {OTHER}"
NO_NODE = (
    "the wirespeed agent's token names no node: the agent may write only the Node its pod runs on, and only a "
    "ServiceAccount token bound to its pod (Kubernetes 1.30+) says which node that is"
)

T0 = "2026-11-01T00:00:00Z"


def node(name: str) -> dict[str, Any]:
    """A Node as a kubelet and cloud provider leave it: labels, others' annotations, taints, a status."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/os": "linux", "wirespeed.io/profile": "throughput"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "example.com/owner": "platform"},
        },
        "spec": {
            "podCIDR": "10.244.1.0/24",
            "providerID": f"azure:///subscriptions/x/virtualMachines/{name}",
            "taints": [{"key": "example.com/dedicated", "value": "net", "effect": "NoSchedule"}],
        },
        "status": {
            "addresses": [{"type": "InternalIP", "address": "10.224.0.4"}],
            "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
            "allocatable": {"cpu": "15", "memory": "60Gi", "pods": "110"},
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready",
                 "lastHeartbeatTime": T0, "lastTransitionTime": T0},
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
                 "message": "ok", "lastHeartbeatTime": T0, "lastTransitionTime": T0},
            ],
        },
    }  # fmt: skip


def pod(name: str, node_name: str) -> dict[str, Any]:
    """A Pod of the agent's ServiceAccount bound to a node (never run: no kubelet), for a token bound to it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "serviceAccountName": AGENT,
            "nodeName": node_name,
            "containers": [{"name": "agent", "image": "registry.example/wirespeed-agent:test"}],
        },
    }


@dataclass
class Cluster:
    server: ApiServer
    token: str  # bound to a Pod on OWN

    def as_agent(
        self, method: str, path: str, body: object = None, content_type: str = MERGE, token: str | None = None
    ) -> tuple[int, dict[str, Any]]:
        return self.server.request(method, path, body, token=token or self.token, content_type=content_type)

    def node(self, name: str) -> dict[str, Any]:
        status, answer = self.server.request("GET", f"/api/v1/nodes/{name}")
        assert status == 200, answer
        return answer

    def reset(self) -> None:
        """Both Nodes as the fixture made them (an allowed write of one case must not leak into the next)."""
        for name in (OWN, OTHER):
            live = self.node(name)
            fresh = node(name)
            fresh["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
            status, answer = self.server.request("PUT", f"/api/v1/nodes/{name}", fresh)
            assert status == 200, answer
            fresh["metadata"]["resourceVersion"] = answer["metadata"]["resourceVersion"]  # type: ignore[index]
            status, answer = self.server.request("PUT", f"/api/v1/nodes/{name}/status", fresh)
            assert status == 200, answer


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """A Node without what the API server changes on every write."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "managedFields")}
    return {"metadata": meta, "spec": obj.get("spec"), "status": obj.get("status")}


def policy_in_force(server: ApiServer, token: str) -> bool:
    """A new ValidatingAdmissionPolicy is enforced once the API server's informer has it, a moment after the apply
    returns: a server-side dry run (admission runs, nothing is stored) of a write to the other Node is refused."""
    path = f"/api/v1/nodes/{OTHER}?dryRun=All"
    status, _ = server.request("PATCH", path, {"metadata": {"annotations": {ANNOTATION: "{}"}}}, token=token,
                               content_type=MERGE)  # fmt: skip
    return status == 403


@pytest.fixture(scope="module")
def cluster(apiserver: ApiServer) -> Cluster:
    assert WIRESPEED
    rendered = subprocess.run(
        [WIRESPEED, "render", "node-tuning", "--namespace", NAMESPACE], capture_output=True, text=True, check=True
    ).stdout
    apiserver.apply(rendered)
    return nodes_and_agent_pods(apiserver)


def nodes_and_agent_pods(apiserver: ApiServer) -> Cluster:
    """What the tests need beside the install in NAMESPACE (however it was made: kubectl here, `pulumi up` in
    tests/engine/test_engine_yaml_node_tuning.py): the two Nodes, a Pod of the agent on each, a token bound to the
    one on confine-a, and the admission policy in force."""
    apiserver.ensure_default_service_account(NAMESPACE)
    for name in (OWN, OTHER):
        apiserver.kubectl("create", "-f", "-", stdin=json.dumps(node(name)))
    apiserver.kubectl("create", "-f", "-", stdin=json.dumps(pod("agent-on-a", OWN)))
    apiserver.kubectl("create", "-f", "-", stdin=json.dumps(pod("agent-on-b", OTHER)))
    token = apiserver.token_request(NAMESPACE, AGENT, pod="agent-on-a")
    deadline = time.monotonic() + 60
    while not policy_in_force(apiserver, token):
        assert time.monotonic() < deadline, "the admission policy was not in force within 60 s"
        time.sleep(0.2)
    return Cluster(apiserver, token)


@pytest.fixture
def confined(cluster: Cluster) -> Cluster:
    cluster.reset()
    return cluster


def test_the_token_names_the_pods_node_and_the_install_ships_the_policy(cluster):
    status, review = cluster.as_agent(
        "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, content_type="application/json",
    )  # fmt: skip
    assert status == 201, review
    user = review["status"]["userInfo"]
    assert user["username"] == USER
    assert user["extra"]["authentication.kubernetes.io/node-name"] == [OWN]
    assert user["extra"]["authentication.kubernetes.io/pod-name"] == ["agent-on-a"]
    for path in (
        f"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/{POLICY}",
        f"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/{POLICY}",
    ):
        status, live = cluster.server.request("GET", path)
        assert status == 200, live
        assert live["metadata"]["labels"]["app.kubernetes.io/part-of"] == "wirespeed"  # type: ignore[index]


# --- what the agent writes: allowed on its own Node -----------------------------------------------------------------

OWN_CONDITION = {"type": "NetworkTuningDegraded", "status": "False", "reason": "TuningApplied", "message": "ok"}
SNAT_CONDITION = {"type": "SNATPortPressure", "status": "True", "reason": "PortsNearCapacity", "message": "81%"}


def apply_body(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": OWN}, **fields}


ALLOWED_WRITES = {
    # (subresource, content type, body, what the Node then shows)
    "annotation-merge-patch": ("", MERGE, {"metadata": {"annotations": {ANNOTATION: '{"state":"applied"}'}}},
                               ("annotation", '{"state":"applied"}')),
    "annotation-server-side-apply": ("", APPLY, apply_body(metadata={"name": OWN, "annotations": {ANNOTATION: "{}"}}),
                                     ("annotation", "{}")),
    "annotation-removed": ("", MERGE, {"metadata": {"annotations": {ANNOTATION: None}}}, ("annotation", None)),
    "condition-strategic-merge": ("/status", STRATEGIC, {"status": {"conditions": [OWN_CONDITION]}},
                                  ("condition", OWN_CONDITION)),
    "snat-condition-strategic-merge": ("/status", STRATEGIC, {"status": {"conditions": [SNAT_CONDITION]}},
                                       ("condition", SNAT_CONDITION)),
    "condition-server-side-apply": ("/status", APPLY, apply_body(status={"conditions": [OWN_CONDITION]}),
                                    ("condition", OWN_CONDITION)),
}  # fmt: skip


@pytest.mark.parametrize("case", ALLOWED_WRITES)
def test_the_agent_writes_its_annotation_and_conditions_on_its_own_node(confined, case):
    subresource, content_type, body, (what, expected) = ALLOWED_WRITES[case]
    query = "?fieldManager=wirespeed-agent&force=true" if content_type == APPLY else ""
    status, answer = confined.as_agent("PATCH", f"/api/v1/nodes/{OWN}{subresource}{query}", body, content_type)
    assert status == 200, answer
    live = confined.node(OWN)
    if what == "annotation":
        assert live["metadata"].get("annotations", {}).get(ANNOTATION) == expected
        assert live["metadata"]["annotations"]["example.com/owner"] == "platform"
    else:
        conditions = {c["type"]: c for c in live["status"]["conditions"]}
        assert {k: conditions[expected["type"]][k] for k in expected} == expected
        assert conditions["Ready"]["status"] == "True"  # the kubelet's conditions are untouched


# --- everything else: refused, with the reason, and nothing changes -----------------------------------------------

REFUSED_WRITES = {
    # (node, subresource, content type, body, the policy's message)
    "other-node-annotation": (OTHER, "", MERGE, {"metadata": {"annotations": {ANNOTATION: "{}"}}}, OTHER_NODE),
    "other-node-condition": (OTHER, "/status", STRATEGIC, {"status": {"conditions": [OWN_CONDITION]}}, OTHER_NODE),
    "other-node-labels": (OTHER, "", MERGE, {"metadata": {"labels": {"wirespeed.io/profile": "balanced"}}},
                          OTHER_NODE),
    "other-node-unschedulable": (OTHER, "", STRATEGIC, {"spec": {"unschedulable": True}}, OTHER_NODE),
    "other-node-ready": (OTHER, "/status", STRATEGIC,
                         {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "X"}]}}, OTHER_NODE),
    "other-node-taints": (OTHER, "", MERGE, {"spec": {"taints": None}}, OTHER_NODE),
    "other-node-addresses": (OTHER, "/status", MERGE,
                             {"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.66"}]}}, OTHER_NODE),
    "other-node-capacity": (OTHER, "/status", STRATEGIC, {"status": {"capacity": {"cpu": "512"}}}, OTHER_NODE),
    "own-label-added": (OWN, "", MERGE, {"metadata": {"labels": {"example.com/pwned": "yes"}}}, LABELS),
    "own-label-changed": (OWN, "", STRATEGIC, {"metadata": {"labels": {"wirespeed.io/profile": "balanced"}}}, LABELS),
    "own-label-removed-json-patch": (OWN, "", JSON_PATCH,
                                     [{"op": "remove", "path": "/metadata/labels/kubernetes.io~1os"}], LABELS),
    "own-label-through-status": (OWN, "/status", MERGE, {"metadata": {"labels": {"example.com/pwned": "yes"}}},
                                 LABELS),
    "own-label-server-side-apply": (OWN, "", APPLY,
                                    apply_body(metadata={"name": OWN, "labels": {"example.com/pwned": "yes"}}), LABELS),
    "own-other-annotation-added": (OWN, "", MERGE, {"metadata": {"annotations": {"example.com/pwned": "yes"}}},
                                   ANNOTATIONS),
    "own-other-annotation-removed": (OWN, "", MERGE, {"metadata": {"annotations": {"example.com/owner": None}}},
                                     ANNOTATIONS),
    "own-finalizer": (OWN, "", MERGE, {"metadata": {"finalizers": ["example.com/hold"]}}, METADATA),
    "own-taints-removed": (OWN, "", MERGE, {"spec": {"taints": None}}, SPEC),
    "own-taint-added": (OWN, "", STRATEGIC,
                        {"spec": {"taints": [{"key": "example.com/evict", "effect": "NoExecute"}]}}, SPEC),
    "own-unschedulable": (OWN, "", STRATEGIC, {"spec": {"unschedulable": True}}, SPEC),
    "own-unschedulable-json-patch": (OWN, "", JSON_PATCH, [{"op": "add", "path": "/spec/unschedulable", "value": True}],
                                     SPEC),
    "own-ready-false": (OWN, "/status", STRATEGIC,
                        {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "X"}]}}, CONDITIONS),
    "own-new-foreign-condition": (OWN, "/status", STRATEGIC,
                                  {"status": {"conditions": [{"type": "NetworkUnavailable", "status": "True"}]}},
                                  CONDITIONS),
    "own-conditions-replaced": (OWN, "/status", MERGE, {"status": {"conditions": [OWN_CONDITION]}}, CONDITIONS),
    "own-addresses": (OWN, "/status", MERGE,
                      {"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.66"}]}}, STATUS),
    "own-capacity": (OWN, "/status", STRATEGIC, {"status": {"capacity": {"cpu": "512"}}}, STATUS),
    "own-allocatable-with-own-condition": (OWN, "/status", STRATEGIC,
                                           {"status": {"allocatable": {"pods": "1000"}, "conditions": [OWN_CONDITION]}},
                                           STATUS),
}  # fmt: skip


@pytest.mark.parametrize("case", REFUSED_WRITES)
def test_everything_else_is_refused_with_the_policys_reason(confined, case):
    name, subresource, content_type, body, message = REFUSED_WRITES[case]
    before = comparable(confined.node(name))
    query = "?fieldManager=wirespeed-agent&force=true" if content_type == APPLY else ""
    status, answer = confined.as_agent("PATCH", f"/api/v1/nodes/{name}{subresource}{query}", body, content_type)
    assert (status, answer["reason"]) == (403, "Forbidden"), answer
    assert answer["message"] == (
        f"nodes \"{name}\" is forbidden: ValidatingAdmissionPolicy '{POLICY}' with binding '{POLICY}' "
        f"denied request: {message}"
    )
    assert comparable(confined.node(name)) == before


@pytest.mark.parametrize(
    ("method", "path", "body", "verb"),
    [
        pytest.param("POST", "/api/v1/nodes", node("confine-new"), "create", id="create"),
        pytest.param("DELETE", f"/api/v1/nodes/{OTHER}", None, "delete", id="delete"),
        pytest.param("PUT", f"/api/v1/nodes/{OWN}", node(OWN), "update", id="update"),
    ],
)
def test_rbac_grants_no_other_node_verb(confined, method, path, body, verb):
    status, answer = confined.as_agent(method, path, body, "application/json")
    name = f'"{path.rsplit("/", 1)[1]}" ' if method != "POST" else ""
    assert (status, answer["message"]) == (
        403,
        f'nodes {name}is forbidden: User "{USER}" cannot {verb} resource "nodes" in API group "" at the cluster scope',
    )


# --- whose token: the node comes from the token bound to the agent's pod, and nothing else -----------------------


def test_a_token_not_bound_to_a_pod_is_refused(confined):
    unbound = confined.server.token_request(NAMESPACE, AGENT)
    patch = {"metadata": {"annotations": {ANNOTATION: "{}"}}}
    status, answer = confined.as_agent("PATCH", f"/api/v1/nodes/{OWN}", patch, token=unbound)
    assert (status, answer["message"]) == (
        403,
        f"nodes \"{OWN}\" is forbidden: ValidatingAdmissionPolicy '{POLICY}' with binding '{POLICY}' denied "
        f"request: {NO_NODE}",
    )


def test_the_agent_on_the_other_node_reports_there_and_only_there(confined):
    token = confined.server.token_request(NAMESPACE, AGENT, pod="agent-on-b")
    patch = {"metadata": {"annotations": {ANNOTATION: '{"state":"applied"}'}}}
    assert confined.as_agent("PATCH", f"/api/v1/nodes/{OTHER}", patch, token=token)[0] == 200
    status, answer = confined.as_agent("PATCH", f"/api/v1/nodes/{OWN}", patch, token=token)
    assert (status, answer["message"].rsplit(": ", 1)[1]) == (
        403, f"the wirespeed agent on {OTHER} may write only Node {OTHER}, not {OWN}"
    )  # fmt: skip


def test_users_other_than_the_agent_are_not_affected(confined):
    """The policy matches the agent's ServiceAccount only: an administrator still labels and cordons the Node."""
    patch = {"metadata": {"labels": {"example.com/by-admin": "yes"}}, "spec": {"unschedulable": True}}
    status, answer = confined.server.request("PATCH", f"/api/v1/nodes/{OWN}", patch, content_type=MERGE)
    assert status == 200, answer


# --- Events: in "default", where Node Events live, and nowhere else -------------------------------------------------


def event(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {"kind": "Node", "name": OWN},
        "reason": "InterfaceRetuned",
        "message": "enP1s1 re-added",
        "type": "Normal",
        "source": {"component": AGENT, "host": OWN},
        "count": 1,
    }


def test_events_are_created_and_bumped_in_default(cluster):
    status, created = cluster.as_agent("POST", "/api/v1/namespaces/default/events", event("default", "confine.1"),
                                       "application/json")  # fmt: skip
    assert status == 201, created
    status, patched = cluster.as_agent("PATCH", "/api/v1/namespaces/default/events/confine.1", {"count": 2}, STRATEGIC)
    assert (status, patched.get("count")) == (200, 2), patched


@pytest.mark.parametrize("namespace", [NAMESPACE, "kube-system", "kube-public"])
def test_events_anywhere_else_are_forbidden(cluster, namespace):
    status, answer = cluster.as_agent("POST", f"/api/v1/namespaces/{namespace}/events", event(namespace, "confine.2"),
                                      "application/json")  # fmt: skip
    assert (status, answer["message"]) == (
        403,
        f'events is forbidden: User "{USER}" cannot create resource "events" in API group "" in the namespace '
        f'"{namespace}"',
    )


@pytest.mark.parametrize("namespace", [NAMESPACE, "kube-system"])
def test_bumping_an_event_anywhere_else_is_forbidden(cluster, namespace):
    """An Event someone else wrote elsewhere (RBAC decides before the object is read: it need not exist)."""
    path = f"/api/v1/namespaces/{namespace}/events/someone-elses.1"
    status, answer = cluster.as_agent("PATCH", path, {"count": 99}, STRATEGIC)
    assert (status, answer["message"]) == (
        403,
        f'events "someone-elses.1" is forbidden: User "{USER}" cannot patch resource "events" in API group "" in the '
        f'namespace "{namespace}"',
    )


def test_events_through_the_events_api_group_are_forbidden(cluster):
    body = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "confine.3"},
            "eventTime": "2026-11-01T00:00:00.000000Z", "reportingController": "wirespeed.io/agent",
            "reportingInstance": OWN, "action": "Retune", "reason": "InterfaceRetuned", "type": "Normal",
            "regarding": {"kind": "Node", "name": OWN}}  # fmt: skip
    status, answer = cluster.as_agent("POST", "/apis/events.k8s.io/v1/namespaces/default/events", body,
                                      "application/json")  # fmt: skip
    assert (status, answer["message"]) == (
        403,
        f'events.events.k8s.io is forbidden: User "{USER}" cannot create resource "events" in API group '
        '"events.k8s.io" in the namespace "default"',
    )

"""What the agent may do in the Kubernetes API, as objects: its ServiceAccount, the RBAC for its Node and its
Events, and the ValidatingAdmissionPolicy that confines its Node writes to its own Node's report.

The rules and the policy are the agent's own files, next to the code that makes the calls
(agent/internal/nodestatus/rbac.yaml and own-node-policy.yaml, whose Go tests prove the agent needs every grant and
the policy allows every write it makes); ``make regen`` copies them byte for byte into ``wirespeed/data`` and a test
fails when a copy is stale. Here they only get their names, labels and the subject's namespace.

The policy needs Kubernetes 1.30 (admissionregistration.k8s.io/v1 and the node-name claim in pod-bound
ServiceAccount tokens, both on by default from 1.30): :attr:`NodeTuningOptions.admission_policy` leaves it out for
an older cluster, whose API server refuses the objects.
"""

from __future__ import annotations

import copy
from functools import cache
from importlib import resources
from typing import Any

import yaml

from wirespeed.manifests.metadata import metadata
from wirespeed.manifests.options import NodeTuningOptions
from wirespeed.names import AGENT_NAME

Obj = dict[str, Any]

RBAC_API = "rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"
# The oldest Kubernetes minor the admission policy runs on. From 1.30 ValidatingAdmissionPolicy is stable
# (admissionregistration.k8s.io/v1; kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy,
# "FEATURE STATE: Kubernetes v1.30 [stable]") and pod-bound ServiceAccount tokens carry the pod's node name
# (ServiceAccountTokenPodNodeInfo: alpha 1.29, beta and on by default 1.30, GA 1.32; k8s.io/kubernetes v1.37.2
# pkg/features/kube_features.go).
ADMISSION_POLICY_MIN_KUBERNETES = "1.30"


def admission_policy_supported(kubernetes_version: str) -> bool | None:
    """Whether a cluster of ``kubernetes_version`` ("1.29", "v1.30.4") runs the admission policy: None when the
    string is not a version (the cluster API judges it), else whether it is at least
    :data:`ADMISSION_POLICY_MIN_KUBERNETES`."""
    parts = kubernetes_version.strip().removeprefix("v").split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    minimum = tuple(int(p) for p in ADMISSION_POLICY_MIN_KUBERNETES.split("."))
    return (int(parts[0]), int(parts[1])) >= minimum


@cache
def _documents(data_file: str) -> tuple[Obj, ...]:
    text = resources.files("wirespeed").joinpath(f"data/{data_file}").read_text()
    return tuple(doc for doc in yaml.safe_load_all(text) if doc)


def _agent_document(data_file: str, kind: str) -> Obj:
    (found,) = [doc for doc in _documents(data_file) if doc["kind"] == kind]
    return copy.deepcopy(found)


def _rbac(kind: str) -> Obj:
    # A byte-identical copy of agent/internal/nodestatus/rbac.yaml: a ClusterRole for the Node and the SNAT
    # attribution's reads (pods list/watch, replicasets and jobs get), a Role for Events.
    return _agent_document("agent-rbac.yaml", kind)


def _policy(kind: str) -> Obj:
    # A byte-identical copy of agent/internal/nodestatus/own-node-policy.yaml.
    return _agent_document("agent-own-node-policy.yaml", kind)


def agent_rbac_rules() -> list[Obj]:
    """The ClusterRole's rules (the agent's Node, the pod watch's reads), a copy the caller may change."""
    rules: list[Obj] = _rbac("ClusterRole")["rules"]
    return rules


def events_namespace() -> str:
    """Where the agent writes its Node Events, and so the only namespace its Role grants Event verbs in."""
    namespace: str = _rbac("Role")["metadata"]["namespace"]
    return namespace


def service_account(options: NodeTuningOptions) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(AGENT_NAME, "node-tuning", options.namespace),
    }


def _subjects(options: NodeTuningOptions) -> list[Obj]:
    return [{"kind": "ServiceAccount", "name": AGENT_NAME, "namespace": options.namespace}]


def cluster_role() -> Obj:
    role = _rbac("ClusterRole")
    return {
        "apiVersion": RBAC_API,
        "kind": "ClusterRole",
        "metadata": metadata(role["metadata"]["name"], "node-tuning"),
        "rules": role["rules"],
    }


def cluster_role_binding(options: NodeTuningOptions) -> Obj:
    name = _rbac("ClusterRole")["metadata"]["name"]
    return {
        "apiVersion": RBAC_API,
        "kind": "ClusterRoleBinding",
        "metadata": metadata(name, "node-tuning"),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
        "subjects": _subjects(options),
    }


def events_role() -> Obj:
    """Event verbs in the Events' namespace only (``default``: the one the API server accepts Node Events in)."""
    role = _rbac("Role")
    return {
        "apiVersion": RBAC_API,
        "kind": "Role",
        "metadata": metadata(role["metadata"]["name"], "node-tuning", role["metadata"]["namespace"]),
        "rules": role["rules"],
    }


def events_role_binding(options: NodeTuningOptions) -> Obj:
    """Binds :func:`events_role`, in its namespace, to the agent's ServiceAccount in the agent's namespace."""
    meta = _rbac("Role")["metadata"]
    return {
        "apiVersion": RBAC_API,
        "kind": "RoleBinding",
        "metadata": metadata(meta["name"], "node-tuning", meta["namespace"]),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": meta["name"]},
        "subjects": _subjects(options),
    }


def _labelled_policy(kind: str) -> Obj:
    """The policy file's object of ``kind``, with wirespeed's labels on its name (cluster-scoped: no namespace)."""
    found = _policy(kind)
    return {
        "apiVersion": found["apiVersion"],
        "kind": found["kind"],
        "metadata": metadata(found["metadata"]["name"], "node-tuning"),
        "spec": found["spec"],
    }


def admission_policy() -> Obj:
    """The agent may change only its own Node's report (annotation and conditions); everything else is refused."""
    return _labelled_policy("ValidatingAdmissionPolicy")


def admission_policy_binding() -> Obj:
    return _labelled_policy("ValidatingAdmissionPolicyBinding")


def access_objects(options: NodeTuningOptions) -> list[Obj]:
    """The ServiceAccount, its RBAC and (unless ``options.admission_policy`` is off) the admission policy, in apply
    order: each binding after what it binds."""
    objects = [
        service_account(options),
        cluster_role(),
        cluster_role_binding(options),
        events_role(),
        events_role_binding(options),
    ]
    if options.admission_policy:
        objects += [admission_policy(), admission_policy_binding()]
    return objects

"""``NodeTuning``: the wirespeed agent DaemonSet (one per profile), its profile ConfigMaps, Namespace, RBAC and
admission policy.

The objects come from :func:`wirespeed.manifests.node_tuning_objects`, so `pulumi up` and
`wirespeed render node-tuning | kubectl apply -f -` create the same thing. Each object is its own typed
pulumi-kubernetes resource named ``f"{name}-<role>"`` and parented to the component, so a preview shows
per-object diffs, and a profile change updates the DaemonSet in place and rolls its pods (checksum annotation).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from wirespeed.manifests import (
    DEFAULT_IMAGE,
    DEFAULT_NAMESPACE,
    DEFAULT_PROFILES,
    PROFILE_LABEL,
    NodeTuningOptions,
    check,
    node_tuning_objects,
)
from wirespeed.problems import InvalidInputError
from wirespeed.profile import Profile
from wirespeed.pulumi_inputs import input_properties_error

TYPE_TOKEN = "wirespeed:index:NodeTuning"


@dataclass
class NodeTuningArgs:
    """Inputs of :class:`NodeTuning`. Plain values (not Outputs): they decide which objects exist."""

    profiles: Sequence[str | Profile] = field(default_factory=lambda: list(DEFAULT_PROFILES))
    """Tuning profiles, each a built-in name (``throughput``, ``balanced``) or a ``wirespeed.profile.Profile``.
    One ConfigMap and one DaemonSet per profile, on the nodes labelled ``wirespeed.io/profile=<name>``;
    profile names must be distinct. Default: ``["throughput"]``."""

    image: str | None = None
    """Agent image with a tag or digest (``make image``, agent/README.md). ``None``: the documented default,
    ``wirespeed.manifests.DEFAULT_IMAGE`` (``ghcr.io/wirespeed-io/wirespeed-agent:v<library version>``)."""

    namespace: str = DEFAULT_NAMESPACE
    """Namespace created for the agent (an RFC 1123 label), labelled Pod Security ``privileged``: the agent
    needs hostNetwork, hostPath and NET_ADMIN. ``default`` and ``kube-*`` are refused: labelling them would let
    every workload there use those privileges. Default ``wirespeed-system``."""

    pod_monitor: bool = False
    """Also create a Prometheus Operator ``PodMonitor`` scraping every agent's ``/metrics``. Needs the
    monitoring.coreos.com CRDs in the cluster."""

    admission_policy: bool = True
    """Create the ValidatingAdmissionPolicy ``wirespeed-agent-own-node`` and its binding: the API server then refuses
    every Node write of the agent's ServiceAccount except the ``wirespeed.io/tuning-status`` annotation and its own
    conditions (``NetworkTuningDegraded``, ``SNATPortPressure``) on the Node its pod runs on. Needs Kubernetes 1.30+
    (admissionregistration.k8s.io/v1, and the node name in pod-bound ServiceAccount tokens). ``False`` only for an
    older cluster, whose API server refuses the objects; the agent's RBAC then lets it patch any Node. Default
    ``True``."""

    alerts: bool = False
    """Also create the wirespeed alert rules (ring overflow, backlog drops, time squeeze, ENA allowances,
    conntrack, degraded tuning, drift, missing agent; :mod:`wirespeed.manifests.monitoring`) as a Prometheus
    Operator ``PrometheusRule`` named ``wirespeed-agent`` in the agent's namespace, the same object
    `wirespeed render node-tuning --alerts` prints. Like ``pod_monitor`` it needs the Prometheus Operator CRDs
    (monitoring.coreos.com/v1 ``PrometheusRule``) in the cluster; without them use the plain rules file from
    `wirespeed render alerts`. Default ``False``."""

    line_rates: Mapping[str, float] | None = None
    """The fastest line rate (Gb/s) of the nodes each profile tunes, by profile name, written on the profile's
    ConfigMap as the ``wirespeed.io/line-rate-gbps`` annotation: the ring and backlog gates then hold the profile to
    what that line rate needs instead of assuming one. ``wirespeed.manifests.fastest_line_rates`` builds it from
    ``(profile name, line rate)`` pairs, e.g. each ``NetworkOptimizedNodeGroup``'s ``(profile.name,
    line_rate_gbps)``. ``None``: no annotation (the gates assume their default line rate and say so)."""

    accepted_advisories: Mapping[str, str] | None = None
    """Advisory rule id -> the written reason these profiles keep that rule's finding (at most 256 characters), e.g.
    ``{"mtu-jumbo-path": "..."}``: written on each profile ConfigMap as the annotation ``wirespeed.io.accept-<rule
    id>``, which the policy pack and `wirespeed check` report as "accepted: <reason>" instead of a finding.
    Mandatory rules are refused: their findings cannot be accepted this way. ``None``: no reasons
    (docs/policy-gates.md, "Keeping an advisory with a reason")."""


def _role(obj: dict[str, Any]) -> str:
    """The child's role in its resource name: kebab-case kind, plus the profile for per-profile objects."""
    role = re.sub(r"(?<!^)(?=[A-Z])", "-", obj["kind"]).lower()
    profile = obj["metadata"].get("labels", {}).get(PROFILE_LABEL)
    return f"{role}-{profile}" if profile else role


def _name(meta: Any) -> str:
    # Every rendered object carries metadata.name, so the provider echoes it back.
    return str(meta.name)


def _depends_on(obj: dict[str, Any], created: Iterable[str]) -> list[str]:
    """Roles an object waits for: pulumi-kubernetes does not order a namespaced object after its Namespace, a
    DaemonSet whose pods start before their ConfigMap or RBAC exist crash-loops until they do, and no agent should
    run before the admission policy confines it."""
    kind = obj["kind"]
    if kind == "ClusterRoleBinding":
        return ["cluster-role", "service-account"]
    if kind == "RoleBinding":
        return ["role", "service-account"]
    if kind == "ValidatingAdmissionPolicyBinding":
        return ["validating-admission-policy"]
    if kind == "DaemonSet":
        confined = [r for r in ("validating-admission-policy-binding",) if r in created]
        profile = obj["metadata"]["labels"][PROFILE_LABEL]
        return ["service-account", "cluster-role-binding", "role-binding", *confined, f"config-map-{profile}"]
    if kind == "Role":  # in the Events' namespace (default), not the agent's
        return []
    return ["namespace"] if "namespace" in obj["metadata"] else []


def _typed(obj: dict[str, Any], name: str, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """One object as the typed pulumi-kubernetes resource of its kind (nested dicts keep their camelCase keys:
    the SDK sends them to the engine as they are, so the registered inputs equal the rendered object)."""
    kind, meta = obj["kind"], obj["metadata"]
    constructors: dict[str, Callable[[], pulumi.CustomResource]] = {
        "Namespace": lambda: k8s.core.v1.Namespace(name, metadata=meta, opts=opts),
        "ServiceAccount": lambda: k8s.core.v1.ServiceAccount(name, metadata=meta, opts=opts),
        "ConfigMap": lambda: k8s.core.v1.ConfigMap(name, metadata=meta, data=obj["data"], opts=opts),
        "ClusterRole": lambda: k8s.rbac.v1.ClusterRole(name, metadata=meta, rules=obj["rules"], opts=opts),
        "ClusterRoleBinding": lambda: k8s.rbac.v1.ClusterRoleBinding(
            name, metadata=meta, role_ref=obj["roleRef"], subjects=obj["subjects"], opts=opts
        ),
        "Role": lambda: k8s.rbac.v1.Role(name, metadata=meta, rules=obj["rules"], opts=opts),
        "RoleBinding": lambda: k8s.rbac.v1.RoleBinding(
            name, metadata=meta, role_ref=obj["roleRef"], subjects=obj["subjects"], opts=opts
        ),
        "ValidatingAdmissionPolicy": lambda: k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
            name, metadata=meta, spec=obj["spec"], opts=opts
        ),
        "ValidatingAdmissionPolicyBinding": lambda: k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
            name, metadata=meta, spec=obj["spec"], opts=opts
        ),
        "DaemonSet": lambda: k8s.apps.v1.DaemonSet(name, metadata=meta, spec=obj["spec"], opts=opts),
    }
    if kind in constructors:
        return constructors[kind]()
    # PodMonitor, PrometheusRule: CRD kinds, no typed class in pulumi-kubernetes.
    return k8s.apiextensions.CustomResource(
        name, api_version=obj["apiVersion"], kind=kind, metadata=meta, spec=obj["spec"], opts=opts
    )


class NodeTuning(pulumi.ComponentResource):
    """The wirespeed node agent on every node labelled ``wirespeed.io/profile=<name>``, one DaemonSet per profile.

    Creates a Namespace (Pod Security ``privileged``), the agent's ServiceAccount, a ClusterRole and
    ClusterRoleBinding (node get/patch, nodes/status patch, and for the SNAT attribution pods list/watch and
    replicasets/jobs get: nothing else), a Role and RoleBinding in ``default``
    (events create/patch, there only: Node Events live in ``default``), the ValidatingAdmissionPolicy and binding
    that confine the agent to its own Node's annotation and conditions (Kubernetes 1.30+; ``admission_policy``),
    a ConfigMap and a DaemonSet per profile, and optionally a PodMonitor and the alert rules as a PrometheusRule.
    The DaemonSets wait for the RBAC and the policy binding. Pass a Kubernetes provider through
    ``opts.providers`` / ``opts.provider`` to target a cluster created in the same program.

    A profile change replaces its ConfigMap (pulumi-kubernetes treats ConfigMap data as immutable and deletes a
    named object before re-creating it) and updates the DaemonSet in place: the profile checksum on the pod
    template rolls the pods, at most 10% of the nodes at a time.
    """

    namespace: pulumi.Output[str]
    """The agent's namespace."""
    daemon_set_names: pulumi.Output[list[str]]
    """Names of the DaemonSets, one per profile, in the order the profiles were given."""

    def __init__(
        self, name: str, args: NodeTuningArgs | None = None, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        args = args or NodeTuningArgs()
        options = NodeTuningOptions(
            image=DEFAULT_IMAGE if args.image is None else args.image,
            namespace=args.namespace,
            pod_monitor=args.pod_monitor,
            alerts=args.alerts,
            admission_policy=args.admission_policy,
            line_rates=dict(args.line_rates or {}) if isinstance(args.line_rates, Mapping | None) else args.line_rates,
            accepted_advisories=(
                dict(args.accepted_advisories or {})
                if isinstance(args.accepted_advisories, Mapping | None)
                else args.accepted_advisories
            ),
        )
        # Everything is checked before the component itself registers: bad args leave nothing behind.
        profiles, problems = check(args.profiles, options)
        if problems:
            raise input_properties_error(InvalidInputError("invalid NodeTuningArgs", problems))
        objects = node_tuning_objects(profiles, options)

        super().__init__(TYPE_TOKEN, name, None, opts)
        created: dict[str, pulumi.CustomResource] = {}
        for obj in objects:
            role = _role(obj)
            depends = [created[r] for r in _depends_on(obj, created)]
            created[role] = _typed(obj, f"{name}-{role}", pulumi.ResourceOptions(parent=self, depends_on=depends))

        namespace = created["namespace"]
        assert isinstance(namespace, k8s.core.v1.Namespace)
        daemon_sets = [r for r in created.values() if isinstance(r, k8s.apps.v1.DaemonSet)]
        # From the created objects (not the args), so dependants wait for them to exist.
        self.namespace = namespace.metadata.apply(_name)
        self.daemon_set_names = pulumi.Output.all(*[ds.metadata.apply(_name) for ds in daemon_sets])
        self.register_outputs({"namespace": self.namespace, "daemon_set_names": self.daemon_set_names})

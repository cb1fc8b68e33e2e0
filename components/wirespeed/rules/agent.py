"""The tuning agent: present wherever a cluster has node pools, and running with no more privilege than it needs
(the DaemonSet wirespeed.manifests renders: NET_ADMIN only, /proc/sys/net read-write, /sys read-only)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from wirespeed.references import ELASTIC_AKS
from wirespeed.rules import _aks, _k8s, _nap
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings, is_type
from wirespeed.rules._self_managed import (
    AUTOSCALING_GROUP,
    CFN_AUTOSCALING_GROUP,
    CLOUDFORMATION_STACK,
    CLUSTER_TAG,
    tagged_clusters,
)
from wirespeed.rules.sku import NODE_GROUP, NODE_POOL_READS, NODE_POOL_TYPES
from wirespeed.sizing.backlog import KERNEL_DEFAULT as BACKLOG_KERNEL_DEFAULT
from wirespeed.values import NotKnown, elements, get, text

EKS_CLUSTER = "aws:eks/cluster:Cluster"
PRIVILEGES_DOC = "agent/README.md (Privileges); docs/node-tuning.md (Tuning DaemonSet: why each privilege)"
# What the agent needs (agent/README.md, "Privileges"): the ethtool ioctl and netlink need CAP_NET_ADMIN; global
# net.* sysctls need /proc/sys/net writable; VF detection reads /sys.
ALLOWED_CAPABILITIES = frozenset({"NET_ADMIN"})
PROC_SYS_NET = "/proc/sys/net"
SYS = "/sys"
RENDER_HINT = "as `wirespeed render node-tuning` renders it"


# --- tuning-agent-present -------------------------------------------------------------------------------------


class _Pools:
    """Node pools of every cluster in a stack, indexed once: AKS AgentPools (inline ones are read from the
    cluster), EKS managed node groups by ``clusterName`` (or a property dependency on the cluster), and Karpenter
    NodePools, which name no cluster and so count for every cluster of their cloud in the stack (an AKS node
    auto-provisioning NodePool for every AKS cluster, any other for every EKS cluster)."""

    def __init__(self, resources: Sequence[Resource]) -> None:
        self.aks = _aks.PoolIndex(resources)
        self.groups_by_dependency: dict[str, set[str]] = {}
        self.groups_by_name: dict[str, set[str]] = {}
        self.karpenter = 0
        self.auto_provisioned = 0
        # Self-managed node groups: the URNs each one depends on, and the clusters its tags name.
        self.self_managed: list[tuple[str, frozenset[str], frozenset[str]]] = []
        for resource in resources:
            if is_type(resource, AUTOSCALING_GROUP, CLOUDFORMATION_STACK):
                found = _self_managed(resource)
                if found is not None:
                    self.self_managed.append(found)
                continue
            if is_type(resource, *NODE_POOL_TYPES):
                try:
                    azure = _nap.is_azure_node_pool(resource.props)
                except NotKnown:
                    azure = False
                self.auto_provisioned += azure
                self.karpenter += not azure
            if not is_type(resource, NODE_GROUP):
                continue
            for urn in resource.property_dependencies.get("clusterName", ()):
                self.groups_by_dependency.setdefault(urn, set()).add(resource.urn)
            try:
                name = text(get(_aks.merged(resource), "clusterName"))
            except NotKnown:
                continue  # unknown during preview: only its property dependency can link it
            if name:
                self.groups_by_name.setdefault(name, set()).add(resource.urn)

    def describe(self, cluster: Resource) -> str | None:
        """How many pools the cluster has, in words, or None when it has none."""
        if is_type(cluster, _aks.CLUSTER):
            inline = len(list(elements(get(_aks.merged(cluster), "agentPoolProfiles"), "agentPoolProfiles")))
            total = inline + len(list(self.aks.pools_of(cluster)))
            parts = [f"{total} node pool(s)"] if total else []
            parts += [f"{self.auto_provisioned} node auto-provisioning NodePool(s)"] if self.auto_provisioned else []
            return " and ".join(parts) or None
        try:
            name = text(get(_aks.merged(cluster), "name"))
        except NotKnown:
            name = None  # a name chosen by the provider: only property dependencies link its node groups
        groups = self.groups_by_dependency.get(cluster.urn, set()) | self.groups_by_name.get(name or "", set())
        own = sum(1 for _, depends, named in self.self_managed if cluster.urn in depends or (name and name in named))
        parts = [f"{len(groups)} managed node group(s)"] if groups else []
        parts += [f"{own} self-managed node group(s) (auto-scaling groups)"] if own else []
        parts += [f"{self.karpenter} Karpenter NodePool(s)"] if self.karpenter else []
        return " and ".join(parts) or None


def _self_managed(resource: Resource) -> tuple[str, frozenset[str], frozenset[str]] | None:
    """An auto-scaling group (or a CloudFormation stack holding one) as ``(urn, URNs it depends on, cluster names
    its tags name)``; None for a stack that creates no auto-scaling group."""
    depends = frozenset(urn for urns in resource.property_dependencies.values() for urn in urns)
    if is_type(resource, CLOUDFORMATION_STACK):
        try:
            template = text(get(resource.props, "templateBody")) or ""
        except NotKnown:
            template = ""  # unknown until the update: only its dependencies place it
        if template and CFN_AUTOSCALING_GROUP not in template:
            return None
        return resource.urn, depends, frozenset(CLUSTER_TAG.findall(template))
    return resource.urn, depends, tagged_clusters(resource.props)


def check_agent_present(resources: Sequence[Resource], settings: Settings) -> Iterator[Finding]:
    if any(is_type(r, _k8s.NODE_TUNING) or _k8s.is_tuning_daemon_set(r) for r in resources):
        return
    pools = _Pools(resources)
    for cluster in resources:
        if not is_type(cluster, _aks.CLUSTER, EKS_CLUSTER):
            continue
        try:
            described = pools.describe(cluster)
        except NotKnown as exc:
            yield Finding(cluster, "", unknown=exc.path)  # which pools are its is known only after apply
            continue
        if described is None:
            continue
        yield Finding(
            cluster,
            f"this cluster has {described} but the stack deploys no wirespeed tuning DaemonSet: "
            f"{_untuned(is_type(cluster, _aks.CLUSTER))}. Add wirespeed.kubernetes.NodeTuning (or "
            "`wirespeed render node-tuning | kubectl apply -f -`); if another stack deploys it, disable "
            "tuning-agent-present for this one.",
        )


def _untuned(azure: bool) -> str:
    """What a node runs without the agent, in the facts of its cloud's NIC (nic_drivers.json)."""
    from wirespeed import catalog  # the NIC facts live in the catalog; loaded on first use

    if azure:
        vf = catalog.nic_driver("mlx5_core").rx
        assert vf is not None
        return (
            f"NIC rings stay at driver defaults (RX {vf.default:,} on Azure's Mellanox VF, reset again whenever the "
            f"host re-adds the VF) and netdev_max_backlog at {BACKLOG_KERNEL_DEFAULT:,} wherever the pool does not "
            "set it"
        )
    ena = catalog.nic_driver("ena").rx
    assert ena is not None
    return (
        f"NIC rings stay at ENA's driver default (RX {ena.default:,} of up to {ena.max:,}) and netdev_max_backlog "
        f"at the kernel default {BACKLOG_KERNEL_DEFAULT:,} wherever node user data does not set it"
    )


# --- tuning-agent-least-privilege ----------------------------------------------------------------------------


def _capability(name: str) -> str:
    return name.upper().removeprefix("CAP_")


def _container_findings(resource: Resource, container: Any, where: str) -> Iterator[Finding]:
    label = _k8s.container_name(container, where)
    context = get(container, "securityContext")
    if get(context, "privileged") is True:
        yield Finding(
            resource,
            f"{label}: securityContext.privileged is true, which grants every capability and every host device; "
            "the agent needs only NET_ADMIN (ring sizes via the ethtool ioctl, MTU via netlink). Set privileged: "
            f"false with capabilities {{drop: [ALL], add: [NET_ADMIN]}}, {RENDER_HINT}.",
        )
    added = [text(c) for c in elements(get(context, "capabilities", "add"), "capabilities.add")]
    extra = sorted({c for c in added if c and _capability(c) not in ALLOWED_CAPABILITIES})
    if extra:
        yield Finding(
            resource,
            f"{label}: securityContext.capabilities.add has {', '.join(extra)} beyond NET_ADMIN; the agent needs "
            f"only NET_ADMIN (rings, MTU) and the /proc/sys/net mount (sysctls). Keep add: [NET_ADMIN] and drop: "
            f"[ALL], {RENDER_HINT}.",
        )


def _normal(path: str) -> str:
    return "/" + "/".join(p for p in path.split("/") if p)


def _mounts(spec: Any, volume: str) -> Iterator[tuple[str, Any]]:
    for container, where in _k8s.containers({"spec": {"template": {"spec": spec}}}):
        for mount in elements(get(container, "volumeMounts"), "volumeMounts"):
            if text(get(mount, "name")) == volume:
                yield _k8s.container_name(container, where), mount


def _host_findings(resource: Resource) -> Iterator[Finding]:
    spec = get(resource.props, "spec", "template", "spec")
    for field in ("hostPID", "hostIPC"):
        if get(spec, field) is True:
            yield Finding(
                resource,
                f"spec.template.spec.{field} is true: the agent needs the host's network namespace only "
                f"(hostNetwork), not its processes or IPC. Remove {field}, {RENDER_HINT}.",
            )
    for volume in elements(get(spec, "volumes"), "volumes"):
        path = text(get(volume, "hostPath", "path"))
        if path is None:
            continue
        name = text(get(volume, "name")) or "?"
        host_path = _normal(path)
        if host_path == PROC_SYS_NET:
            continue
        if host_path == SYS:
            for label, mount in _mounts(spec, name):
                if get(mount, "readOnly") is not True:
                    yield Finding(
                        resource,
                        f"{label}: hostPath volume {name!r} ({SYS}) is mounted read-write; the agent only reads "
                        f"it (SR-IOV VF detection). Set readOnly: true on the mount, {RENDER_HINT}.",
                    )
            continue
        yield Finding(
            resource,
            f"hostPath volume {name!r} mounts {host_path} from the host; the agent needs only {PROC_SYS_NET} "
            f"(global net.* sysctls) and {SYS} read-only (VF detection). Remove it, {RENDER_HINT}.",
        )


def check_least_privilege(resource: Resource, settings: Settings) -> Iterator[Finding]:
    if not _k8s.is_tuning_daemon_set(resource):
        return
    for container, where in _k8s.containers(resource.props):
        yield from _container_findings(resource, container, where)
    yield from _host_findings(resource)


AGENT_PRESENT = Rule(
    id="tuning-agent-present",
    description="Every cluster with node pools (managed, self-managed or auto-provisioned) runs the wirespeed tuning "
    "DaemonSet.",
    severity="medium",
    default_enforcement="mandatory",
    remediation="Deploy wirespeed.kubernetes.NodeTuning in the stack (or `wirespeed render node-tuning`), or "
    "disable this rule where another stack deploys the agent.",
    source=f"{ELASTIC_AKS.short} (rings reset when the VF is re-added; a privileged DaemonSet applied them); "
    "github.com/MicrosoftDocs/azure-docs/issues/100444 (the VF re-added ~900 times an hour); "
    "components/wirespeed/data/nic_drivers.json (each driver's default ring, with its kernel source)",
    scope="stack",
    types=(
        _aks.CLUSTER,
        _aks.AGENT_POOL,
        EKS_CLUSTER,
        NODE_GROUP,
        AUTOSCALING_GROUP,
        CLOUDFORMATION_STACK,
        *NODE_POOL_TYPES,
        _k8s.DAEMON_SET,
        _k8s.NODE_TUNING,
    ),
    config_schema={},
    reads=(
        Reads(
            _aks.CLUSTER,
            ("agentPoolProfiles[]", *_aks.CLUSTER_NAME_READS),
            not_in_terraform={"name": _aks.NAME_FROM_RESOURCE_NAME},
        ),
        Reads(_aks.AGENT_POOL, _aks.POOL_CLUSTER_READS, not_in_terraform={"id": _aks.ID_FROM_RESOURCE_ID}),
        Reads(EKS_CLUSTER, ("name",)),
        Reads(NODE_GROUP, ("clusterName",)),
        Reads(AUTOSCALING_GROUP, ("tags[].key",)),
        Reads(
            CLOUDFORMATION_STACK,
            ("templateBody",),
            no_terraform_type="pulumi-eks v1 creates its self-managed nodes' auto-scaling group inside a "
            "CloudFormation stack; Terraform configurations declare aws_autoscaling_group, which this rule reads",
        ),
        *(Reads(t, NODE_POOL_READS) for t in NODE_POOL_TYPES),
        Reads(_k8s.DAEMON_SET, _k8s.TUNING_DAEMON_SET_READS),
        Reads(
            _k8s.NODE_TUNING,
            no_terraform_type="a Pulumi component (wirespeed.kubernetes.NodeTuning); Terraform deploys the agent as "
            "the DaemonSet modules/node-tuning writes, which this rule reads",
        ),
    ),
    check=check_agent_present,
)

AGENT_LEAST_PRIVILEGE = Rule(
    id="tuning-agent-least-privilege",
    description="The tuning DaemonSet is not privileged, adds only NET_ADMIN and mounts only what it needs.",
    severity="critical",
    default_enforcement="mandatory",
    remediation="Use the DaemonSet wirespeed renders: privileged false, capabilities drop ALL add NET_ADMIN, "
    "hostPath /proc/sys/net and /sys (read-only) only, no hostPID/hostIPC.",
    source=PRIVILEGES_DOC,
    scope="resource",
    types=(_k8s.DAEMON_SET,),
    config_schema={},
    reads=(
        Reads(
            _k8s.DAEMON_SET,
            (
                *_k8s.TUNING_DAEMON_SET_READS,
                *(
                    f"spec.template.spec.{field}[].{path}"
                    for field in ("initContainers", "containers")
                    for path in (
                        "name",
                        "securityContext.privileged",
                        "securityContext.capabilities.add[]",
                        "volumeMounts[].name",
                        "volumeMounts[].readOnly",
                    )
                ),
                "spec.template.spec.hostPID",
                "spec.template.spec.hostIPC",
                "spec.template.spec.volumes[].name",
                "spec.template.spec.volumes[].hostPath.path",
            ),
        ),
    ),
    check=check_least_privilege,
)

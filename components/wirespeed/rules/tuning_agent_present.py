"""tuning-agent-present: the tuning agent runs wherever a cluster has node pools (managed, self-managed or
auto-provisioned)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from wirespeed.references import ELASTIC_AKS
from wirespeed.rules import _aks, _k8s, _nap
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings, is_type
from wirespeed.rules._node_pools import EKS_CLUSTER, NODE_GROUP, NODE_POOL_READS, NODE_POOL_TYPES
from wirespeed.rules._self_managed import (
    AUTOSCALING_GROUP,
    CFN_AUTOSCALING_GROUP,
    CLOUDFORMATION_STACK,
    CLUSTER_TAG,
    tagged_clusters,
)
from wirespeed.sizing.backlog import KERNEL_DEFAULT as BACKLOG_KERNEL_DEFAULT
from wirespeed.values import NotKnown, elements, get, text


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


AGENT_PRESENT = Rule(
    id="tuning-agent-present",
    order=70,
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


RULE = AGENT_PRESENT

"""aks-snat-capacity: per AKS cluster, allocated ports x nodes at their ceiling fit in the outbound IPs' ports, the
capacity rule AKS enforces."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from wirespeed.catalog import karpenter_azure
from wirespeed.rules import _aks, _nap
from wirespeed.rules._aks_outbound import AKS_LB_DOC
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings, is_type
from wirespeed.rules._node_pools import NODE_POOL_READS, NODE_POOL_TYPES
from wirespeed.sizing.azure_lb import PORTS_PER_IP, capacity_fix
from wirespeed.sizing.nap import NapCapacity
from wirespeed.values import NotKnown


@dataclass(frozen=True)
class _AutoProvisioned:
    """One AKS node auto-provisioning NodePool as the capacity rule counts it: its node ceiling plus disruption budget
    (``capacity``, as ``wirespeed plan`` derives it) or why it has none, and the cluster that owns it."""

    name: str
    owner: str | None  # the owning cluster's URN; None: no single cluster, so it counts for each
    capacity: NapCapacity | None
    why_unbounded: str | None
    unknown: bool  # a value it needs is unknown during preview: the clusters it may belong to are not judged

    def describe(self) -> str:
        shared = "" if self.owner else ", linked to no single cluster so counted for each"
        if self.capacity is None:
            return f"NodePool {self.name}: no node ceiling{shared}"
        c = self.capacity
        return (
            f"NodePool {self.name}: limits.cpu {c.cpu_limit_text} / {c.smallest_vcpu} vCPU = "
            f"{c.max_nodes:,} max + budget {c.budget} = {c.surge_nodes:,} replacing{shared}"
        )


class _AutoProvisionedIndex:
    """The stack's AKS node auto-provisioning NodePools, read on first use (a stack with no cluster to judge never
    reads them). A NodePool names no cluster: it belongs to the one its resource tree shares (see
    :func:`wirespeed.rules._nap.owning_cluster`, which ``wirespeed plan`` uses too). One that no single cluster
    owns counts for every AKS cluster of the stack: a gate never passes capacity it could not place."""

    def __init__(self, resources: Sequence[Resource]) -> None:
        self._resources = resources
        self._pools: list[_AutoProvisioned] | None = None

    def _read(self) -> list[_AutoProvisioned]:
        clusters = [(r.urn, r.urn) for r in self._resources if is_type(r, _aks.CLUSTER)]
        parent_of = {r.urn: r.parent for r in self._resources}
        found = []
        for resource in self._resources:
            if not is_type(resource, *NODE_POOL_TYPES):
                continue
            name, capacity, why, unknown = resource.name, None, None, False
            try:
                if not _nap.is_azure_node_pool(resource.props):
                    continue
                name = _nap.node_pool_name(resource)
                sizes = [size for size, _ in karpenter_azure.admitted(_nap.requirements(resource.props))]
                capacity, why = _nap.ceiling(name, resource.props, sizes)
            except NotKnown:
                unknown = True
            owner = _nap.owning_cluster(resource.urn, clusters, parent_of)
            found.append(_AutoProvisioned(name, owner, capacity, why, unknown))
        return found

    def of(self, cluster: Resource) -> list[_AutoProvisioned]:
        if self._pools is None:
            self._pools = self._read()
        return [p for p in self._pools if p.owner in (cluster.urn, None)]


def _unbounded(cluster: Resource, ports: int, naps: Sequence[_AutoProvisioned]) -> Finding:
    whys = "; ".join(f"{n.why_unbounded}" + ("" if n.owner else " (linked to no single cluster)") for n in naps)
    return Finding(
        cluster,
        f"allocatedOutboundPorts {ports:,} is reserved on every node behind the load balancer, but {whys}. AKS "
        "rejects the profile (InvalidLoadBalancerProfileAllocatedOutboundPorts) once the nodes outgrow the outbound "
        "IPs; set the NodePool's spec.limits.cpu (`wirespeed render aks-nap` writes it) and size the outbound IPs "
        "for its ceiling.",
    )


def _cluster_capacity(
    cluster: Resource, pool_index: _aks.PoolIndex, naps_index: _AutoProvisionedIndex, lengths: dict[str, int]
) -> Finding | None:
    props = _aks.merged(cluster)
    ports = _aks.allocated_ports(props)
    if not _aks.uses_load_balancer(props) or ports == 0:
        return None  # the dynamic default always fits; aks-allocated-outbound-ports-default covers it
    pools = list(_aks.inline_pools(props))
    for pool_resource in pool_index.pools_of(cluster):
        pool = _aks.pool_of(_aks.merged(pool_resource), pool_resource.name)
        if pool is not None:
            pools.append(pool)
    naps = naps_index.of(cluster)
    if any(n.unknown for n in naps):
        raise NotKnown("NodePool spec")
    unbounded = [n for n in naps if n.capacity is None]
    if unbounded:
        return _unbounded(cluster, ports, unbounded)
    nodes = sum(p.nodes_at_max for p in pools) + sum(n.capacity.nodes_at_max for n in naps if n.capacity)
    ips, ips_from, ips_field = _aks.outbound_ips(props, lengths)
    fixed = capacity_fix(ports, nodes, ips)
    if fixed is None:
        return None
    required, available = ports * nodes, ips * PORTS_PER_IP
    fix = fixed.text(ips_field, "allocatedOutboundPorts")
    counted = "; ".join([p.describe() for p in pools] + [n.describe() for n in naps])
    at_max = "at maxCount plus surge" + (" and NodePool ceilings plus disruption budgets" if naps else "")
    return Finding(
        cluster,
        f"allocatedOutboundPorts {ports:,} x {nodes:,} nodes {at_max} ({counted}) = "
        f"{required:,} SNAT ports required, but {ips_from} x {PORTS_PER_IP:,} = {available:,} are available: AKS "
        f"rejects the profile (InvalidLoadBalancerProfileAllocatedOutboundPorts) when a pool scales or upgrades. "
        f"{fix[0].upper()}{fix[1:]}.",
    )


def check_snat_capacity(resources: Sequence[Resource], settings: Settings) -> Iterator[Finding]:
    lengths = _aks.prefix_lengths(resources)
    pool_index = _aks.PoolIndex(resources)
    naps_index = _AutoProvisionedIndex(resources)
    for cluster in resources:
        if not is_type(cluster, _aks.CLUSTER):
            continue
        try:
            finding = _cluster_capacity(cluster, pool_index, naps_index, lengths)
        except NotKnown as exc:
            # This cluster's numbers are unknown until the update runs (the others still count): not applicable in
            # a preview, "could not be checked" on a plan judged once.
            yield Finding(cluster, "", unknown=exc.path)
            continue
        if finding is not None:
            yield finding


SNAT_CAPACITY = Rule(
    id="aks-snat-capacity",
    order=20,
    description="Per AKS cluster, allocated ports x (maxCount + surge of every pool, node ceiling + disruption budget "
    f"of every node auto-provisioning NodePool) fit in {PORTS_PER_IP:,} x outbound IPs.",
    severity="critical",
    default_enforcement="mandatory",
    remediation="Add outbound IPs (managedOutboundIPs.count, listed IPs or a larger prefix) or lower "
    "allocatedOutboundPorts, and give every node auto-provisioning NodePool spec.limits.cpu; `wirespeed size "
    "azure-lb --pool MAX:SURGE ... --ports N` shows the numbers (`wirespeed plan` counts NodePools the same way).",
    source=f"{AKS_LB_DOC} (the capacity rule and its worked example); wirespeed.sizing.nap (a NodePool's node ceiling)",
    scope="stack",
    types=(_aks.CLUSTER, _aks.AGENT_POOL, _aks.PUBLIC_IP_PREFIX, *NODE_POOL_TYPES),
    config_schema={},
    reads=(
        Reads(
            _aks.CLUSTER,
            _aks.OUTBOUND_READS + _aks.OUTBOUND_IPS_READS + _aks.INLINE_POOL_SIZE_READS + _aks.CLUSTER_NAME_READS,
            not_in_terraform={"name": _aks.NAME_FROM_RESOURCE_NAME},
        ),
        Reads(
            _aks.AGENT_POOL,
            _aks.POOL_SIZE_READS + _aks.POOL_CLUSTER_READS,
            not_in_terraform={"id": _aks.ID_FROM_RESOURCE_ID},
        ),
        Reads(_aks.PUBLIC_IP_PREFIX, ("id", "prefixLength")),
        *(Reads(t, NODE_POOL_READS + _nap.CEILING_READS) for t in NODE_POOL_TYPES),
    ),
    check=check_snat_capacity,
)

RULE = SNAT_CAPACITY

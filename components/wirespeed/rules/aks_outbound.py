"""AKS outbound SNAT rules: explicit allocated ports, a per-node minimum, and the capacity rule AKS enforces."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from wirespeed.catalog import karpenter_azure
from wirespeed.references import ASOS_AKS_SIZING
from wirespeed.rules import _aks, _nap
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings, is_type
from wirespeed.rules.sku import NODE_POOL_READS, NODE_POOL_TYPES
from wirespeed.sizing import Pool, dynamic_default_ports, next_halving_node_count
from wirespeed.sizing.azure_lb import (
    DEFAULT_WORKLOAD_HOLD_SECONDS,
    DOCUMENTED_DEFAULT_MAX_NODES,
    DYNAMIC_DEFAULT_TABLE,
    MAX_PORTS_PER_NODE,
    PORT_GRANULARITY,
    PORTS_PER_IP,
    capacity_fix,
)
from wirespeed.sizing.nap import NapCapacity
from wirespeed.values import NotKnown

PORTS_FIELD = "networkProfile.loadBalancerProfile.allocatedOutboundPorts"
AKS_LB_DOC = "https://learn.microsoft.com/azure/aks/configure-load-balancer-standard"
LB_DEFAULTS_DOC = "https://learn.microsoft.com/azure/load-balancer/load-balancer-outbound-connections"
# "On September 30, 2025, Basic Load Balancer will be retired", and its SKU table: Basic has no outbound rules
# ("Outbound Rules ... Not available"), so a Basic cluster's SNAT cannot be sized at all.
BASIC_RETIRED_DOC = "https://learn.microsoft.com/azure/load-balancer/load-balancer-basic-upgrade-guidance"
BASIC_RETIRED_ON = "September 30, 2025"
# The smallest bracket of the dynamic table (1,024 ports for 1-50 nodes) is what a small cluster gets by default:
# the floor below which an explicit value makes things worse than leaving it alone (ASOS_AKS_SIZING).
DEFAULT_MINIMUM_PORTS = DYNAMIC_DEFAULT_TABLE[0][1]


def dynamic_table_text() -> str:
    """The documented dynamic default table in one line: ``1-50 nodes: 1,024; 51-100: 512; ...``."""
    parts, low = [], 1
    for index, (high, ports) in enumerate(DYNAMIC_DEFAULT_TABLE):
        unit = " nodes" if index == 0 else ""
        parts.append(f"{low:,}-{high:,}{unit}: {ports:,}")
        low = high + 1
    return "; ".join(parts)


def _pool_flags(pools: Sequence[Pool]) -> str:
    return " ".join(f"--pool {p.max_count}:{p.surge_text()}" for p in pools)


def _nodes_text(pools: Sequence[Pool]) -> str:
    return "; ".join(p.describe() for p in pools)


def check_allocated_ports_default(resource: Resource, settings: Settings) -> Iterator[Finding]:
    props = resource.props
    if not _aks.uses_load_balancer(props) or _aks.allocated_ports(props) != 0 or _aks.refused_ports(props) is not None:
        return
    pools = _aks.inline_pools(props)
    nodes = sum(p.nodes_at_max for p in pools)
    why = (
        f"{PORTS_FIELD} is 0 or unset, so Azure picks SNAT ports per node by backend pool size "
        f"({dynamic_table_text()} ports per node; {LB_DEFAULTS_DOC})."
    )
    if 1 <= nodes <= DOCUMENTED_DEFAULT_MAX_NODES:
        ports = dynamic_default_ports(nodes)
        halves = next_halving_node_count(nodes)
        now = (
            f" Its agentPoolProfiles reach {nodes:,} nodes at maxCount plus surge ({_nodes_text(pools)}): "
            f"{ports:,} ports per node"
        )
        if halves is not None:
            after = dynamic_default_ports(halves)
            now += f", cut to {after:,} on every node the moment the backend pool reaches {halves:,} nodes."
        else:
            now += ", the table's last bracket."
        now += " Separate AgentPool resources add to that count."
        hint = f"`wirespeed size azure-lb {_pool_flags(pools)} --connections-per-second N`"
    elif nodes > DOCUMENTED_DEFAULT_MAX_NODES:
        now = f" Its agentPoolProfiles reach {nodes:,} nodes, beyond the table: Azure documents no default there."
        hint = f"`wirespeed size azure-lb {_pool_flags(pools)} --connections-per-second N`"
    else:
        first_high, first_ports = DYNAMIC_DEFAULT_TABLE[0]
        now = (
            f" Its pools are separate AgentPool resources: up to {first_high:,} nodes each gets "
            f"{first_ports:,} ports, halved on every node at {first_high + 1:,}."
        )
        hint = "`wirespeed size azure-lb --pool MAX:SURGE ... --connections-per-second N`"
    yield Finding(
        resource,
        why + now + f" Set {PORTS_FIELD} explicitly (a multiple of {PORT_GRANULARITY}, with the outbound IPs it "
        f"needs: {hint} picks both) so ports never shrink as the cluster grows.",
    )


def check_ports_minimum(resource: Resource, settings: Settings) -> Iterator[Finding]:
    props = resource.props
    if not _aks.uses_load_balancer(props):
        return
    refused = _aks.refused_ports(props)
    if refused is not None:
        shown = f"{refused:,g}" if isinstance(refused, float) else repr(refused)
        yield Finding(
            resource,
            f"{PORTS_FIELD} is {shown}, which Azure refuses: it must be a whole multiple of {PORT_GRANULARITY} "
            f"between 0 and {MAX_PORTS_PER_NODE:,} ({AKS_LB_DOC}), so the cluster create or update fails. Set a "
            f"multiple of {PORT_GRANULARITY} (`wirespeed size azure-lb` picks one from the pools and the workload).",
        )
        return
    minimum = int(settings["minimumPorts"])
    ports = _aks.allocated_ports(props)
    if not _aks.uses_load_balancer(props) or ports == 0 or ports >= minimum:
        return
    rate = ports / DEFAULT_WORKLOAD_HOLD_SECONDS
    yield Finding(
        resource,
        f"{PORTS_FIELD} is {ports:,}, below the minimum of {minimum:,} (policy setting minimumPorts): each node "
        f"can hold at most {ports:,} connections to one destination (IP, port, protocol) at a time, and a port "
        f"stays reserved about {DEFAULT_WORKLOAD_HOLD_SECONDS:g} s after its connection closes, so {ports:,} "
        f"ports sustain only ~{rate:.2g} new connections/s per node to a busy destination before SNAT exhaustion. Set "
        f"allocatedOutboundPorts to at least {minimum:,} and add the outbound IPs it needs "
        "(`wirespeed size azure-lb`).",
    )


def check_basic_load_balancer(resource: Resource, settings: Settings) -> Iterator[Finding]:
    if not _aks.uses_basic_load_balancer(resource.props):
        return
    yield Finding(
        resource,
        f"networkProfile.loadBalancerSku is basic: Azure retired the Basic Load Balancer on {BASIC_RETIRED_ON} "
        f"({BASIC_RETIRED_DOC}), and it has no outbound rules, so the cluster's SNAT ports and outbound IPs cannot "
        "be sized (the SNAT rules judge only the Standard Load Balancer). Set loadBalancerSku to standard (a new "
        "cluster: AKS cannot change the SKU in place) and size its outbound ports with `wirespeed size azure-lb`.",
    )


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


ALLOCATED_PORTS_DEFAULT = Rule(
    id="aks-allocated-outbound-ports-default",
    description="AKS clusters on the Standard Load Balancer set allocatedOutboundPorts explicitly.",
    severity="high",
    default_enforcement="mandatory",
    remediation=(
        "Set networkProfile.loadBalancerProfile.allocatedOutboundPorts to an explicit multiple of 8 and the "
        "outbound IPs it needs; `wirespeed size azure-lb` picks both from the pools and the workload."
    ),
    source=f"{ASOS_AKS_SIZING.short} (SNAT exhaustion at the 1,024-port default); {LB_DEFAULTS_DOC}",
    scope="resource",
    types=(_aks.CLUSTER,),
    config_schema={},
    reads=(Reads(_aks.CLUSTER, _aks.OUTBOUND_READS + _aks.INLINE_POOL_SIZE_READS),),
    check=check_allocated_ports_default,
)

BASIC_LOAD_BALANCER = Rule(
    id="aks-basic-load-balancer",
    description="AKS clusters do not use the Basic Load Balancer, retired on September 30, 2025, which has no "
    "outbound rules to size.",
    severity="high",
    default_enforcement="mandatory",
    remediation="Create the cluster with networkProfile.loadBalancerSku standard (AKS cannot change the SKU of an "
    "existing cluster) and set allocatedOutboundPorts and its outbound IPs with `wirespeed size azure-lb`.",
    source=f"{BASIC_RETIRED_DOC} (retirement on {BASIC_RETIRED_ON}; Basic has no outbound rules)",
    scope="resource",
    types=(_aks.CLUSTER,),
    config_schema={},
    reads=(Reads(_aks.CLUSTER, ("networkProfile.loadBalancerSku",)),),
    check=check_basic_load_balancer,
)

SNAT_PORTS_MINIMUM = Rule(
    id="aks-snat-ports-minimum",
    description="AKS clusters allocate at least the minimum SNAT ports per node, in a value Azure accepts.",
    severity="high",
    default_enforcement="mandatory",
    remediation="Raise networkProfile.loadBalancerProfile.allocatedOutboundPorts to the minimum and add outbound "
    "IPs so the capacity rule still holds (`wirespeed size azure-lb`).",
    source=f"{ASOS_AKS_SIZING.short} (~1,024 new connections per node exhaust SNAT); {AKS_LB_DOC}",
    scope="resource",
    types=(_aks.CLUSTER,),
    config_schema={
        "minimumPorts": {
            "type": "integer",
            "minimum": PORT_GRANULARITY,
            "maximum": MAX_PORTS_PER_NODE,
            "default": DEFAULT_MINIMUM_PORTS,
            "description": "Smallest allowed allocatedOutboundPorts per node (Azure's default for 1-50 nodes).",
        }
    },
    reads=(Reads(_aks.CLUSTER, _aks.OUTBOUND_READS),),
    check=check_ports_minimum,
)

SNAT_CAPACITY = Rule(
    id="aks-snat-capacity",
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

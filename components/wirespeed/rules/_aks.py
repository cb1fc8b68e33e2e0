"""Reading AKS clusters and pools from engine properties: outbound profile, node counts at maxCount plus surge."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wirespeed.rules._model import Resource, is_type
from wirespeed.sizing import Pool
from wirespeed.sizing.azure_lb import DEFAULT_SURGE_PERCENT, MAX_PORTS_PER_NODE, PORT_GRANULARITY
from wirespeed.sizing.errors import SizingError
from wirespeed.values import NotKnown, elements, get, text, whole

CLUSTER = "azure-native:containerservice:ManagedCluster"
AGENT_POOL = "azure-native:containerservice:AgentPool"
PUBLIC_IP_PREFIX = "azure-native:network:PublicIPPrefix"

# learn.microsoft.com/rest/api/aks/managed-clusters (ManagedClusterAgentPoolProfile.count): "The default value
# is 1." A pool without count or maxCount therefore has one node.
DEFAULT_POOL_COUNT = 1
# Same API, ManagedClusterLoadBalancerProfileManagedOutboundIPs.count: default 1.
DEFAULT_MANAGED_OUTBOUND_IPS = 1
IPV4_BITS = 32

# What the helpers below read (rules declare them in Rule.reads): the outbound profile, a pool's size, the outbound IPs,
# and how a separate AgentPool names its cluster.
OUTBOUND_READS = (
    "networkProfile.outboundType",
    "networkProfile.loadBalancerSku",
    "networkProfile.loadBalancerProfile.allocatedOutboundPorts",
)
POOL_SIZE_READS = ("name", "enableAutoScaling", "maxCount", "count", "upgradeSettings.maxSurge")
INLINE_POOL_SIZE_READS = tuple(f"agentPoolProfiles[].{path}" for path in POOL_SIZE_READS)
OUTBOUND_IPS_READS = (
    "networkProfile.loadBalancerProfile.outboundIPs.publicIPs[]",
    "networkProfile.loadBalancerProfile.outboundIPPrefixes.publicIPPrefixes[].id",
    "networkProfile.loadBalancerProfile.managedOutboundIPs.count",
)
CLUSTER_NAME_READS = ("resourceName", "name", "resourceGroupName")
POOL_CLUSTER_READS = ("resourceName", "id", "resourceGroupName")
# Why the Terraform translation has no such property (the rules read it only when the one before it is missing).
NAME_FROM_RESOURCE_NAME = (
    "the translation gives resourceName (azurerm `name`), which is read first; `name` is the provider's output that "
    "a Pulumi stack export has"
)
ID_FROM_RESOURCE_ID = "the ARM id is the resource's own id (the plan's `id`), which is read before this property"


@dataclass(frozen=True)
class Outbound:
    """A cluster's Standard Load Balancer outbound settings; ``ips`` None when a prefix length is not known."""

    ports: int  # 0: Azure's dynamic default
    ips: int
    ips_from: str


def merged(resource: Resource) -> Mapping[str, Any]:
    """What a stack rule reads: the resource's outputs, which :func:`wirespeed.rules._engine.stack_view` has put in
    ``props`` (the engine hands stack policies nothing else)."""
    return resource.props


def uses_load_balancer(props: Mapping[str, Any]) -> bool:
    """Whether outbound traffic leaves through the Standard Load Balancer (AKS's default when unset)."""
    outbound = text(get(props, "networkProfile", "outboundType"))
    sku = text(get(props, "networkProfile", "loadBalancerSku"))
    return (outbound is None or outbound == "loadBalancer") and (sku is None or sku.lower() == "standard")


def uses_basic_load_balancer(props: Mapping[str, Any]) -> bool:
    """Whether the cluster's load balancer is the retired Basic SKU (``loadBalancerSku`` compared as ARM does,
    case-insensitively; unset is Standard)."""
    sku = text(get(props, "networkProfile", "loadBalancerSku"))
    return sku is not None and sku.lower() == "basic"


def allocated_ports(props: Mapping[str, Any]) -> int:
    """``allocatedOutboundPorts``; absent means 0, Azure's dynamic default. A value Azure refuses (see
    :func:`refused_ports`) also reads 0 here: the rules that size with it skip it, aks-snat-ports-minimum reports it."""
    value = whole(get(props, "networkProfile", "loadBalancerProfile", "allocatedOutboundPorts"))
    return value if value is not None and refused_ports(props) is None else 0


def refused_ports(props: Mapping[str, Any]) -> Any:
    """``allocatedOutboundPorts`` when it is set to a value Azure refuses (not a whole multiple of 8 in
    0..64,000: learn.microsoft.com/azure/aks/configure-load-balancer-standard), else None."""
    value = get(props, "networkProfile", "loadBalancerProfile", "allocatedOutboundPorts")
    if value is None:
        return None
    ports = whole(value)
    if ports is None or not 0 <= ports <= MAX_PORTS_PER_NODE or ports % PORT_GRANULARITY:
        return value
    return None


def outbound_ips(props: Mapping[str, Any], prefix_lengths: Mapping[str, int]) -> tuple[int, str, str]:
    """How many frontend IPs the profile gives, how the count was reached, and the field that adds more.

    Own IPs count one each; an own prefix of length /N gives 2^(32-N) IPs (looked up by resource id in
    ``prefix_lengths``, :class:`NotKnown` when absent); otherwise the managed count (default 1).
    """
    profile = get(props, "networkProfile", "loadBalancerProfile")
    listed = list(elements(get(profile, "outboundIPs", "publicIPs"), "outboundIPs.publicIPs"))
    if listed:
        return len(listed), f"{len(listed)} listed public IP(s)", "outboundIPs.publicIPs"
    prefixes = list(elements(get(profile, "outboundIPPrefixes", "publicIPPrefixes"), "outboundIPPrefixes"))
    if prefixes:
        total = 0
        parts = []
        for prefix in prefixes:
            prefix_id = text(get(prefix, "id"))
            length = prefix_lengths.get(prefix_id.lower()) if prefix_id else None
            if length is None:
                raise NotKnown("outboundIPPrefixes.publicIPPrefixes.id")
            total += 2 ** (IPV4_BITS - length)
            parts.append(f"/{length}")
        return total, f"{total} IP(s) from prefix(es) {', '.join(parts)}", "outboundIPPrefixes: a shorter prefix"
    count = whole(get(profile, "managedOutboundIPs", "count"))
    count = DEFAULT_MANAGED_OUTBOUND_IPS if count is None else count
    return count, f"{count} managed outbound IP(s)", "managedOutboundIPs.count"


def pool_of(props: Any, fallback_name: str) -> Pool | None:
    """One pool as the capacity rule counts it (maxCount when autoscaling, else count; plus maxSurge), or
    None for a pool of zero nodes or values AKS itself would refuse (its own validation reports those)."""
    name = text(get(props, "name")) or fallback_name
    autoscale = get(props, "enableAutoScaling") is True
    max_count = whole(get(props, "maxCount")) if autoscale else None
    if max_count is None:
        max_count = whole(get(props, "count"))
    if max_count is None:
        max_count = DEFAULT_POOL_COUNT
    surge = text(get(props, "upgradeSettings", "maxSurge")) or f"{DEFAULT_SURGE_PERCENT:g}%"
    if max_count < 1:
        return None
    try:
        return Pool.parse(f"{max_count}:{surge}", name=name)
    except SizingError:
        return None


def inline_pools(cluster_props: Mapping[str, Any]) -> list[Pool]:
    pools = []
    for index, profile in enumerate(elements(get(cluster_props, "agentPoolProfiles"), "agentPoolProfiles")):
        pool = pool_of(profile, f"agentPoolProfiles[{index}]")
        if pool is not None:
            pools.append(pool)
    return pools


def inline_pool_profiles(cluster_props: Mapping[str, Any]) -> Iterator[tuple[Any, str]]:
    """Each inline pool of a cluster with the label messages use: ``agentPoolProfiles[1] (user)``."""
    for index, profile in enumerate(elements(get(cluster_props, "agentPoolProfiles"), "agentPoolProfiles")):
        name = text(get(profile, "name"))
        yield profile, f"agentPoolProfiles[{index}]" + (f" ({name})" if name else "")


def cluster_name(cluster: Resource) -> str | None:
    """The Azure name of the cluster: the provider's ``name`` output, or the ``resourceName`` input where only inputs
    are known (a preview step of a cluster not created yet)."""
    props = merged(cluster)
    return text(get(props, "resourceName")) or text(get(props, "name"))


def pool_cluster_name(pool: Resource) -> str | None:
    """The cluster an AgentPool belongs to: its ``resourceName`` input, or the ``/managedClusters/<name>/``
    segment of its ARM id (outputs)."""
    props = merged(pool)
    name = text(get(props, "resourceName"))
    if name:
        return name
    arm_id = pool.id or text(get(props, "id"))
    return arm_segment(arm_id, "managedClusters") if arm_id else None


def arm_segment(arm_id: str, segment: str) -> str | None:
    """The name after ``/<segment>/`` in an ARM id (ARM compares segment names case-insensitively):
    ``arm_segment(".../resourceGroups/rg/.../managedClusters/aks", "managedClusters")`` is ``"aks"``.

    An ARM id is key/name pairs (``subscriptions/<id>/resourceGroups/<name>/providers/<namespace>/<type>/<name>``),
    so only keys are matched: a resource group or cluster that is itself named ``managedClusters`` is a name, not the
    key, and reading it as one would tie a pool to a cluster called ``providers``."""
    parts = arm_id.strip("/").split("/")
    wanted = segment.lower()
    for at in range(0, len(parts) - 1, 2):
        if parts[at].lower() == wanted:
            return parts[at + 1]
    return None


class PoolIndex:
    """The separate AgentPools of a stack, indexed once by the cluster they point at, so a stack rule finds each
    cluster's pools without scanning the whole stack per cluster (quadratic: minutes for 10,000 clusters)."""

    def __init__(self, resources: Sequence[Resource]) -> None:
        self._pools = [r for r in resources if is_type(r, AGENT_POOL)]
        self._by_dependency: dict[str, list[int]] = {}
        self._by_name: dict[str, list[int]] = {}
        # Pools whose cluster is not known yet (preview), with what is not known: any cluster's pools may include them.
        self._name_unknown: dict[int, NotKnown] = {}
        for position, pool in enumerate(self._pools):
            for urn in pool.property_dependencies.get("resourceName", ()):
                self._by_dependency.setdefault(urn, []).append(position)
            try:
                name = pool_cluster_name(pool)
            except NotKnown as exc:
                self._name_unknown[position] = exc
                continue
            if name:  # a pool that names no cluster belongs to one only through a dependency
                self._by_name.setdefault(name.lower(), []).append(position)

    def pools_of(self, cluster: Resource) -> Iterator[Resource]:
        """Separate AgentPool resources of ``cluster``, in stack order: linked by a property dependency of
        ``resourceName`` on the cluster (the usual ``resource_name_=cluster.name``), else by a matching cluster
        name (and resource group, when both are known). :class:`NotKnown` when a pool's cluster is unknown."""
        try:
            name = cluster_name(cluster)
        except NotKnown:
            # A name known only after apply (a plan's `name = "${var.prefix}-aks"` of a random or module value):
            # the pools that point at the cluster itself still place, and a pool that names a cluster only by
            # text might be this one, so the cluster is unknown only when such a pool exists.
            if any(not pool.property_dependencies.get("resourceName") for pool in self._pools):
                raise
            for position in self._by_dependency.get(cluster.urn, ()):
                yield self._pools[position]
            return
        group = text(get(merged(cluster), "resourceGroupName"))
        candidates = set(self._by_dependency.get(cluster.urn, ()))
        if name is not None:
            candidates.update(self._by_name.get(name.lower(), ()), self._name_unknown)
        for position in sorted(candidates):
            resource = self._pools[position]
            if cluster.urn in resource.property_dependencies.get("resourceName", ()):
                yield resource
                continue
            if position in self._name_unknown:
                raise self._name_unknown[position]
            pool_group = text(get(merged(resource), "resourceGroupName"))
            if group and pool_group and group.lower() != pool_group.lower():
                continue
            yield resource


def pools_of_cluster(cluster: Resource, resources: Sequence[Resource]) -> Iterator[Resource]:
    """Separate AgentPool resources of ``cluster`` (see :meth:`PoolIndex.pools_of`); for one cluster only: a rule
    looking at every cluster builds one :class:`PoolIndex`."""
    return PoolIndex(resources).pools_of(cluster)


def prefix_lengths(resources: Sequence[Resource]) -> dict[str, int]:
    """``prefixLength`` of every PublicIPPrefix in the stack, by lower-cased ARM id."""
    found = {}
    for resource in resources:
        if not is_type(resource, PUBLIC_IP_PREFIX):
            continue
        props = merged(resource)
        arm_id, length = resource.id or text(get(props, "id")), whole(get(props, "prefixLength"))
        if arm_id and length is not None and 0 <= length <= IPV4_BITS:
            found[arm_id.lower()] = length
    return found

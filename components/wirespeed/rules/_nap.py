"""Reading AKS node auto-provisioning objects from engine properties: a Karpenter NodePool of the Azure provider
(what sizes its requirements admit, from the catalog) and an AKSNodeClass (its linuxOSConfig sysctls).

A NodePool is Azure's when its ``nodeClassRef.group`` is ``karpenter.azure.com``, or, without a node class
reference, when a requirement uses a ``karpenter.azure.com/`` or ``kubernetes.azure.com/`` key; EKS NodePools
stay with the EC2 reading in :mod:`wirespeed.rules.network_optimised_sku`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from wirespeed.catalog import InstanceType
from wirespeed.catalog import karpenter_azure as nap
from wirespeed.catalog.karpenter_azure import Requirement
from wirespeed.rules._model import Finding, Resource
from wirespeed.sizing import azure_lb
from wirespeed.sizing.nap import DEFAULT_BUDGET, NapCapacity, budget_nodes, check_budget, cpu_quantity
from wirespeed.values import elements, get, text

NODE_POOL_TYPES = ("kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.sh/v1beta1:NodePool")
REQUIREMENTS = ("spec", "template", "spec", "requirements")
NODE_CLASS_REF = ("spec", "template", "spec", "nodeClassRef")
# Karpenter's EKS labels that pin instance types (karpenter.sh/docs/concepts/scheduling, "Well-Known Labels").
EKS_INSTANCE_FAMILY = "karpenter.k8s.aws/instance-family"
# The requirement keys that pin sizes, per cloud, for messages.
PIN_KEYS = {
    "azure": nap.SIZE_KEYS,
    "aws": (nap.INSTANCE_TYPE, EKS_INSTANCE_FAMILY),
}
# What :func:`pinned_by_node_pools` reads on each NodePool in view (Rule.related).
NODE_POOL_PIN_READS = (
    "metadata.name",
    *(f"spec.template.spec.nodeClassRef.{k}" for k in ("group", "kind", "name")),
    *(f"spec.template.spec.requirements[].{path}" for path in ("key", "operator", "values[]")),
)
SYSCTLS = ("spec", "linuxOSConfig", "sysctls")
LIMIT_CPU = ("spec", "limits", "cpu")
BUDGETS = ("spec", "disruption", "budgets")
# What :func:`node_pool_name` and :func:`ceiling` read beside the requirements (Rule.reads).
CEILING_READS = ("metadata.name", "spec.limits.cpu", "spec.disruption.budgets[].nodes")
NODE_CLASS_BACKLOG_FIELD = "spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog"
AZURE_WHY = "its NIC is not Azure Boost (MANA), so it may land on older Mellanox hosts with smaller rings and MTU"
CATALOG_CMD = "wirespeed catalog list --cloud azure --network-optimised"


def requirements(props: Any) -> list[Requirement]:
    """Every well-formed requirement of a NodePool's template (key, operator and text values)."""
    found = []
    for item in elements(get(props, *REQUIREMENTS), "spec.template.spec.requirements"):
        key, operator = text(get(item, "key")), text(get(item, "operator"))
        values = tuple(v for v in (text(x) for x in elements(get(item, "values"), "values")) if v is not None)
        if key and operator in nap.OPERATORS:
            found.append(Requirement(key, operator, values))
    return found


def is_azure_node_pool(props: Any) -> bool:
    group = text(get(props, "spec", "template", "spec", "nodeClassRef", "group"))
    if group:
        return group == nap.GROUP
    return any(r.key.startswith((f"{nap.GROUP}/", "kubernetes.azure.com/")) for r in requirements(props))


def _optimised_series() -> list[str]:
    from wirespeed import catalog

    # A preview series (InstanceType.preview) is never the series a NodePool is told to move to.
    optimised = catalog.instance_types(cloud="azure", network_optimised=True)
    return sorted({nap.sku_labels(t).series for t in optimised if not t.preview})


def _by_series(sizes: Sequence[InstanceType]) -> str:
    groups: dict[str, list[InstanceType]] = {}
    for size in sizes:
        groups.setdefault(nap.sku_labels(size).series, []).append(size)
    # One provider series may span catalog families (DS_v2: Dsv2 and the memory-optimised DSv2 11-15).
    return ", ".join(
        f"{series} ({' and '.join(dict.fromkeys(t.family for t in group))}: "
        f"{', '.join(t.name for t in group[:2])}{', ...' if len(group) > 2 else ''})"
        for series, group in sorted(groups.items())
    )


def _series_hint() -> str:
    series = _optimised_series()
    return f"{{key: {nap.SKU_SERIES}, operator: In, values: [{', '.join(series[:4])}, ...]}}"


def _cpu_floor(admitted: Sequence[InstanceType], minimum: float) -> int | None:
    """The least vCPU bound (``sku-cpu`` Gt bound - 1) above which every admitted size meets ``minimum``."""
    slow = [t.vcpu for t in admitted if t.baseline_gbps < minimum]
    fast = [t.vcpu for t in admitted if t.baseline_gbps >= minimum and t.vcpu > max(slow, default=0)]
    return min(fast) if fast else None


def node_pool_findings(resource: Resource, minimum: float) -> Iterator[Finding]:
    """network-optimised-sku on an Azure NodePool: it must restrict sizes, admit no size that is not
    network-optimised, and none that sustains less than ``minimum`` Gb/s."""
    found = requirements(resource.props)
    if not nap.restricts_sizes(found):
        yield Finding(
            resource,
            f"requirements do not limit {nap.SKU_SERIES}, {nap.SKU_NAME}, {nap.SKU_FAMILY} or {nap.SKU_VERSION}, so "
            "node auto-provisioning may launch any VM size in the region, network-optimised or not. Add "
            f"{_series_hint()} (`{CATALOG_CMD}`; `wirespeed render aks-nap` writes the requirements).",
        )
        return
    admitted = [size for size, _ in nap.admitted(found)]
    slow = [t for t in admitted if not t.network_optimised]
    if slow:
        yield Finding(
            resource,
            f"requirements admit {_by_series(slow)}, not network-optimised: {AZURE_WHY}. Keep only network-optimised "
            f"series: {_series_hint()} (`{CATALOG_CMD}`).",
        )
    thin = [t for t in admitted if t.network_optimised and t.baseline_gbps < minimum]
    if thin:
        floor = _cpu_floor(admitted, minimum)
        fix = (
            f"Add {{key: {nap.SKU_CPU}, operator: Gt, values: ['{floor - 1}']}}"
            if floor is not None
            else "No admitted size meets it: admit larger sizes"
        )
        sizes = ", ".join(f"{t.name} ({t.baseline_gbps:g} Gb/s)" for t in thin[:3]) + (", ..." if len(thin) > 3 else "")
        yield Finding(
            resource,
            f"requirements admit {sizes}, below the minimum {minimum:g} Gb/s (policy setting minimumBandwidthGbps). "
            f"{fix} (`{CATALOG_CMD} --min-gbps {minimum:g}`).",
        )


@dataclass(frozen=True)
class Pinned:
    """What the NodePools referencing one node class pin: their names (``pools``), those that restrict sizes
    (``pinning``), and the catalog sizes those admit (``sizes``, catalog order)."""

    pools: tuple[str, ...]
    pinning: tuple[str, ...]
    sizes: tuple[InstanceType, ...]

    def fastest(self) -> InstanceType | None:
        """The pinned size with the highest line rate (burst bandwidth; by name among equals), or None."""
        return max(self.sizes, key=lambda t: (t.burst_gbps, t.name), default=None)


def _references(pool: Any, name: str, group: str, kind: str) -> bool:
    """Whether a NodePool's nodeClassRef names this node class (a v1beta1 NodePool may leave out group and kind)."""
    ref = get(pool, *NODE_CLASS_REF)
    return (
        text(get(ref, "name")) == name
        and text(get(ref, "group")) in (None, group)
        and text(get(ref, "kind")) in (None, kind)
    )


# The well-known labels Karpenter puts on an EC2 node that wirespeed's catalog can give for a type
# (karpenter.sh/docs/concepts/scheduling, "Well-Known Labels"): instance-network-bandwidth is the type's baseline
# bandwidth in Mb/s, as wirespeed.aws.karpenter writes its bandwidth range. Requirements on other keys (zone,
# capacity type) do not narrow which types may launch here.
EKS_BANDWIDTH = "karpenter.k8s.aws/instance-network-bandwidth"
_EKS_ARCH = {"x86_64": "amd64", "arm64": "arm64"}


def _eks_labels(t: InstanceType) -> dict[str, str]:
    return {
        nap.INSTANCE_TYPE: t.name,
        EKS_INSTANCE_FAMILY: t.family,
        "kubernetes.io/arch": _EKS_ARCH.get(t.architecture, t.architecture),
        "karpenter.k8s.aws/instance-cpu": str(t.vcpu),
        EKS_BANDWIDTH: str(round(t.baseline_gbps * 1000)),
    }


def _eks_pinned(found: Sequence[Requirement]) -> list[InstanceType] | None:
    """The catalog's AWS types an EKS NodePool's requirements admit once its instance-type or instance-family
    ``In`` pins them (every requirement on a label the catalog gives, the bandwidth range included, narrows them
    further), or None when it pins neither (its instance-category or generation alone leave every type open)."""
    from wirespeed import catalog

    if not any(r.key in (nap.INSTANCE_TYPE, EKS_INSTANCE_FAMILY) and r.operator == "In" for r in found):
        return None
    types = catalog.instance_types(cloud="aws")
    keys = set(_eks_labels(types[0])) if types else set()
    narrowing = [r for r in found if r.key in keys]
    return [t for t in types if all(r.admits(_eks_labels(t)) for r in narrowing)]


def pinned_by_node_pools(pools: Iterable[Resource], name: str, group: str, kind: str, cloud: str) -> Pinned:
    """What the NodePools among ``pools`` that reference node class ``name`` (of ``group``/``kind``) pin: on
    Azure the sizes their requirements admit once they restrict a size key (:func:`nap.restricts_sizes`), on EKS the
    types their instance-type or instance-family requirement names."""
    names: list[str] = []
    pinning: list[str] = []
    sizes: dict[str, InstanceType] = {}
    for pool in pools:
        if not _references(pool.props, name, group, kind):
            continue
        names.append(node_pool_name(pool))
        found = requirements(pool.props)
        if cloud == "azure":
            admitted_here = [t for t, _ in nap.admitted(found)] if nap.restricts_sizes(found) else None
        else:
            admitted_here = _eks_pinned(found)
        if admitted_here is None:
            continue
        pinning.append(node_pool_name(pool))
        sizes.update((t.name, t) for t in admitted_here)
    return Pinned(tuple(names), tuple(pinning), tuple(sizes.values()))


def node_class_label(resource: Resource) -> str:
    name = text(get(resource.props, "metadata", "name")) or resource.name
    return f"AKSNodeClass {name!r}"


def node_pool_name(resource: Resource) -> str:
    return text(get(resource.props, "metadata", "name")) or resource.name


def disruption_budget(props: Any) -> str:
    """The disruption budget that lets the most nodes go at once (a schedule may make any of them the active one);
    Karpenter's default when none is set."""
    budgets = [
        b
        for b in (text(get(item, "nodes")) for item in elements(get(props, *BUDGETS), "spec.disruption.budgets"))
        if b is not None and check_budget(b) is None
    ]
    if not budgets:
        return DEFAULT_BUDGET
    return max(budgets, key=lambda b: budget_nodes(b, azure_lb.MAX_POOL_NODES))


def ceiling(name: str, props: Any, sizes: Sequence[InstanceType]) -> tuple[NapCapacity | None, str | None]:
    """A NodePool's node ceiling and replacement surge (:class:`~wirespeed.sizing.nap.NapCapacity`) from its
    ``limits.cpu``, the sizes its requirements admit (``sizes``) and its disruption budgets, or None and why it has
    none. ``wirespeed plan`` and aks-snat-capacity both count a NodePool this way."""
    limit = cpu_quantity(get(props, *LIMIT_CPU))
    if limit is None:
        return None, (
            f"NodePool {name}: no limits.cpu a node ceiling can be read from, so node auto-provisioning may launch "
            "nodes without bound and outbound cannot count them; set spec.limits.cpu (wirespeed derives the node "
            "ceiling from it)"
        )
    if not sizes:
        return None, f"NodePool {name}: its requirements admit no size of wirespeed's catalog; node ceiling unknown"
    smallest = min(t.vcpu for t in sizes)
    found = NapCapacity(
        name, limit, smallest, tuple(t.name for t in sizes if t.vcpu == smallest), budget=disruption_budget(props)
    )
    return found, None


Owner = TypeVar("Owner")


def ancestors(urn: str, parent_of: Mapping[str, str | None]) -> list[str]:
    """The parents of ``urn`` up to the root of the resource tree, nearest first."""
    chain: list[str] = []
    parent = parent_of.get(urn)
    while parent is not None and parent not in chain:
        chain.append(parent)
        parent = parent_of.get(parent)
    return chain


def owning_cluster(
    pool_urn: str, clusters: Sequence[tuple[Owner, str]], parent_of: Mapping[str, str | None]
) -> Owner | None:
    """The cluster a NodePool belongs to (a NodePool names none): the one cluster under the NodePool's nearest
    ancestor that has any (``NetworkOptimizedCluster`` parents both), else the only cluster there is; None when that
    is ambiguous. ``clusters`` are (key, URN) pairs; ``parent_of`` maps every URN to its parent's."""
    lineage = [(key, ancestors(urn, parent_of)) for key, urn in clusters]
    for ancestor in ancestors(pool_urn, parent_of):
        under = [key for key, chain in lineage if ancestor in chain]
        if len(under) == 1:
            return under[0]
        if under:
            return None
    return clusters[0][0] if len(clusters) == 1 else None

"""Reading AKS node auto-provisioning objects from engine properties: a Karpenter NodePool of the Azure provider
(what sizes its requirements admit, from the catalog) and an AKSNodeClass (its linuxOSConfig sysctls).

A NodePool is Azure's when its ``nodeClassRef.group`` is ``karpenter.azure.com``, or, without a node class
reference, when a requirement uses a ``karpenter.azure.com/`` or ``kubernetes.azure.com/`` key; EKS NodePools
stay with the EC2 reading in :mod:`wirespeed.rules.sku`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from wirespeed.catalog import InstanceType
from wirespeed.catalog import karpenter_azure as nap
from wirespeed.catalog.karpenter_azure import Requirement
from wirespeed.rules._model import Finding, Resource
from wirespeed.values import elements, get, text

REQUIREMENTS = ("spec", "template", "spec", "requirements")
SYSCTLS = ("spec", "linuxOSConfig", "sysctls")
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

    return sorted({nap.sku_labels(t).series for t in catalog.instance_types(cloud="azure", network_optimised=True)})


def _by_series(sizes: Sequence[InstanceType]) -> str:
    groups: dict[str, list[InstanceType]] = {}
    for size in sizes:
        groups.setdefault(nap.sku_labels(size).series, []).append(size)
    return ", ".join(
        f"{series} ({group[0].family}: {', '.join(t.name for t in group[:2])}{', ...' if len(group) > 2 else ''})"
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


def node_class_label(resource: Resource) -> str:
    name = text(get(resource.props, "metadata", "name")) or resource.name
    return f"AKSNodeClass {name!r}"

"""The AKS node auto-provisioning parts of a plan (pure): each Azure NodePool with its AKSNodeClass, the sizes its
registered requirements admit and its node ceiling, recomputed from what registered (``limits.cpu``, requirements,
disruption budgets), not read back from the component.

A NodePool names no cluster. It is counted in the outbound of the managed cluster that shares its nearest
ancestor in the resource tree (``NetworkOptimizedCluster`` parents both), or of the only cluster the program
registers; otherwise it is left out of every outbound and a finding says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wirespeed.catalog import karpenter_azure as nap
from wirespeed.manifests.node_tuning import PROFILE_LABEL
from wirespeed.program.model import ProgramPlan, RegisteredResource, type_matches
from wirespeed.program.sections import NapReview
from wirespeed.rules._nap import SYSCTLS, is_azure_node_pool, requirements
from wirespeed.sizing import azure_lb
from wirespeed.sizing.nap import DEFAULT_BUDGET, NapCapacity, budget_nodes, check_budget, cpu_quantity
from wirespeed.values import elements, get, plain_numbers, text


def is_nap_pool(r: RegisteredResource) -> bool:
    return type_matches(r.type, "karpenter.sh", "NodePool") and is_azure_node_pool(r.inputs)


def _ancestors(r: RegisteredResource, by_urn: Mapping[str, RegisteredResource]) -> list[str]:
    chain: list[str] = []
    parent = r.parent
    while parent is not None and parent not in chain:
        chain.append(parent)
        parent = by_urn[parent].parent if parent in by_urn else None
    return chain


def _cluster_of(
    pool: RegisteredResource, clusters: Sequence[tuple[str, RegisteredResource]], plan: ProgramPlan
) -> str | None:
    by_urn = plan.by_urn()
    lineage = {name: _ancestors(resource, by_urn) for name, resource in clusters}
    for ancestor in _ancestors(pool, by_urn):
        under = [name for name, chain in lineage.items() if ancestor in chain]
        if len(under) == 1:
            return under[0]
        if under:
            return None
    return clusters[0][0] if len(clusters) == 1 else None


def _budget(inputs: Mapping[str, Any]) -> str:
    """The disruption budget that lets the most nodes go at once (a schedule may make any of them the active one);
    Karpenter's default when none is set."""
    budgets = [
        b
        for b in (text(get(item, "nodes")) for item in elements(get(inputs, "spec", "disruption", "budgets")))
        if b is not None and check_budget(b) is None
    ]
    if not budgets:
        return DEFAULT_BUDGET
    return max(budgets, key=lambda b: budget_nodes(b, azure_lb.MAX_POOL_NODES))


def _capacity(name: str, inputs: Mapping[str, Any], sizes: Sequence[Any]) -> tuple[NapCapacity | None, list[str]]:
    limit = cpu_quantity(get(inputs, "spec", "limits", "cpu"))
    if limit is None:
        return None, [
            f"NodePool {name}: no limits.cpu a node ceiling can be read from, so node auto-provisioning may launch "
            "nodes without bound and outbound cannot count them; set spec.limits.cpu (wirespeed derives the node "
            "ceiling from it)"
        ]
    if not sizes:
        return None, [f"NodePool {name}: its requirements admit no size of wirespeed's catalog; node ceiling unknown"]
    smallest = min(t.vcpu for t in sizes)
    found = NapCapacity(
        name, limit, smallest, tuple(t.name for t in sizes if t.vcpu == smallest), budget=_budget(inputs)
    )
    return found, []


def nap_reviews(plan: ProgramPlan, clusters: Sequence[tuple[str, RegisteredResource]]) -> list[NapReview]:
    """Every AKS node auto-provisioning NodePool the program registers, with its node class and capacity."""
    classes = {
        text(get(r.inputs, "metadata", "name")) or r.name: r
        for r in plan.resources
        if type_matches(r.type, nap.GROUP, nap.NODE_CLASS_KIND)
    }
    found = []
    for r in plan.resources:
        if not is_nap_pool(r):
            continue
        name = text(get(r.inputs, "metadata", "name")) or r.name
        sizes = tuple(size for size, _ in nap.admitted(requirements(r.inputs)))
        capacity, findings = _capacity(name, r.inputs, sizes)
        class_name = text(get(r.inputs, "spec", "template", "spec", "nodeClassRef", "name"))
        node_class = classes.get(class_name or "")
        sysctls = get(node_class.inputs, *SYSCTLS) if node_class else None
        cluster = _cluster_of(r, clusters, plan)
        if cluster is None:
            findings.append(
                f"NodePool {name}: no single AKS cluster in this program owns it, so no outbound counts its nodes; "
                "size that cluster's SNAT for it (`wirespeed render aks-nap` prints its node ceiling)"
            )
        found.append(
            NapReview(
                name=name,
                cluster=cluster,
                urn=r.urn,
                series=tuple(sorted({nap.sku_labels(t).series for t in sizes})),
                sizes=sizes,
                capacity=capacity,
                profile=text(get(r.inputs, "spec", "template", "metadata", "labels", PROFILE_LABEL)),
                node_class=class_name if node_class else None,
                sysctls=dict(sorted(plain_numbers(sysctls).items())) if isinstance(sysctls, Mapping) else {},
                findings=tuple(findings),
            )
        )
    return found

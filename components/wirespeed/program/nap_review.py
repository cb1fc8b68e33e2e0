"""The AKS node auto-provisioning parts of a plan (pure): each Azure NodePool with its AKSNodeClass, the sizes its
registered requirements admit and its node ceiling, recomputed from what registered (``limits.cpu``, requirements,
disruption budgets), not read back from the component.

A NodePool names no cluster. It is counted in the outbound of the managed cluster that shares its nearest
ancestor in the resource tree (``NetworkOptimizedCluster`` parents both), or of the only cluster the program
registers; otherwise it is left out of every outbound and a finding says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from wirespeed.catalog import karpenter_azure as nap
from wirespeed.manifests.node_tuning import PROFILE_LABEL
from wirespeed.program.model import ProgramPlan, RegisteredResource, type_matches
from wirespeed.program.sections import NapReview
from wirespeed.rules._nap import SYSCTLS, ceiling, is_azure_node_pool, owning_cluster, requirements
from wirespeed.values import get, plain_numbers, text


def is_nap_pool(r: RegisteredResource) -> bool:
    return type_matches(r.type, "karpenter.sh", "NodePool") and is_azure_node_pool(r.inputs)


def _cluster_of(
    pool: RegisteredResource, clusters: Sequence[tuple[str, RegisteredResource]], plan: ProgramPlan
) -> str | None:
    parent_of = {r.urn: r.parent for r in plan.resources}
    return owning_cluster(pool.urn, [(name, r.urn) for name, r in clusters], parent_of)


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
        capacity, why = ceiling(name, r.inputs, sizes)
        findings = [why] if why else []
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

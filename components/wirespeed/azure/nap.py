"""Node auto-provisioning (Karpenter on AKS) on network-optimised sizes: the plan and its two objects. Pure.

:func:`check_nap` checks every field of an :class:`~wirespeed.azure.spec.AutoProvisionedPoolSpec` and returns the
:class:`NapPlan` (or every problem); :func:`node_class` and :func:`node_pool` are the ``AKSNodeClass`` and
``karpenter.sh/v1`` ``NodePool`` as plain Kubernetes objects, which the ``AutoProvisionedPool`` component registers
and ``wirespeed render aks-nap`` prints.

What the NodePool admits is computed, not assumed: its requirements are evaluated against the catalog
(:func:`wirespeed.catalog.karpenter_azure.admitted`), and the plan's sizes, node ceiling and the refusal of
families that are not network-optimised all come from that evaluation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from wirespeed import catalog
from wirespeed.azure.pools import check_labels, check_taints, resolve_profile, split_sysctls
from wirespeed.azure.problems import Collector, InvalidArgsError, join, whole_in
from wirespeed.azure.spec import TAINT_EFFECTS, AutoProvisionedPoolSpec
from wirespeed.catalog import karpenter_azure as labels_of
from wirespeed.catalog import karpenter_labels
from wirespeed.catalog.karpenter_azure import Requirement
from wirespeed.manifests.options import line_rate_annotation
from wirespeed.names import LINE_RATE_ANNOTATION, NOT_NETWORK_OPTIMISED_REASON, PROFILE_LABEL, REASON_MAX_LENGTH
from wirespeed.problems import Problem
from wirespeed.profile import Profile
from wirespeed.sizing import aks_sysctls, azure_lb
from wirespeed.sizing.errors import SizingError
from wirespeed.sizing.nap import NapCapacity, check_budget

COMPONENT = "AutoProvisionedPool"
# Kubernetes object names: an RFC 1123 subdomain, kept to a label so it also fits label values.
NAME_PATTERN = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
# karpenter.sh/capacity-type values (karpenter.sh/docs/concepts/nodepools).
CAPACITY_TYPES = ("on-demand", "spot")
# AKSNodeClass spec.imageFamily enum (karpenter-provider-azure v1.14.2, karpenter.azure.com_aksnodeclasses.yaml).
IMAGE_FAMILIES = ("Ubuntu", "Ubuntu2204", "Ubuntu2404", "AzureLinux")
# AKSNodeClass spec.maxPods: 10..250 (same CRD).
MAX_PODS_RANGE = (10, 250)
CPU_LIMIT_RANGE = (1, 1_000_000)
VCPU_RANGE = (1, 1_000)
# Label domains the NodePool CRD keeps for Karpenter and AKS (its CEL rules on template labels refuse most keys in
# them, karpenter.sh_nodepools.yaml), and AKS's legacy keys: wirespeed refuses them all rather than mirror the
# exceptions.
RESERVED_LABEL_DOMAINS = ("karpenter.sh", "karpenter.azure.com", "kubernetes.azure.com")
RESERVED_LABELS = ("kubernetes.io/hostname", "agentpool", "storageprofile", "storagetier", "accelerator")
CONSOLIDATION = {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m"}


@dataclass(frozen=True)
class NapPlan:
    """What one auto-provisioned pool creates, derived from its spec and the catalog."""

    spec: AutoProvisionedPoolSpec
    profile: Profile
    families: tuple[str, ...]
    architectures: tuple[str, ...]
    requirements: tuple[Requirement, ...]
    admitted: tuple[catalog.InstanceType, ...]
    capacity: NapCapacity
    sizing_pool: azure_lb.Pool
    labels: dict[str, str]
    sysctls: dict[str, int | str]
    """By kernel name: what the AKSNodeClass sets (``node_class_sysctls`` gives its field names)."""
    left_to_agent: tuple[str, ...]
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def line_rate_gbps(self) -> float:
        """The fastest admitted size's line rate (burst bandwidth): Karpenter may launch any of them."""
        return max(it.burst_gbps for it in self.admitted)

    def node_class_sysctls(self) -> dict[str, int | str]:
        """``spec.linuxOSConfig.sysctls`` of the AKSNodeClass, by its field names (``netCoreNetdevMaxBacklog``)."""
        return {aks_sysctls.node_class_field(k): v for k, v in self.sysctls.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "profile": self.profile.name,
            "api_versions": [labels_of.NODE_POOL_API_VERSION, labels_of.NODE_CLASS_API_VERSION],
            "families": list(self.families),
            "series": sorted({labels_of.sku_labels(t).series for t in self.admitted}),
            "sizes": [
                {"name": t.name, "vcpu": t.vcpu, "max_bandwidth_mbps": t.max_bandwidth_mbps, "nic": t.nic}
                for t in self.admitted
            ],
            "capacity": self.capacity.to_json(),
            "linux_os_config_sysctls": self.node_class_sysctls(),
            "left_to_agent": list(self.left_to_agent),
        }


def _families(out: Collector, spec: AutoProvisionedPoolSpec, architectures: Sequence[str]) -> list[str]:
    """The catalog families the pool may launch: given (each known; a slow one only with a reason) or every
    network-optimised family of the architectures that is not a preview series (a preview family is launched only
    when named: production is not moved onto a series Microsoft has not made generally available)."""
    azure = catalog.instance_types(cloud="azure")
    if spec.families is None:
        return sorted(
            {t.family for t in azure if t.network_optimised and not t.preview and t.architecture in architectures}
        )
    known = {t.family: t.network_optimised for t in azure}
    families: list[str] = []
    for index, family in enumerate(spec.families):
        path = f"families[{index}]"
        if family not in known:
            choices = ", ".join(f for f, fast in known.items() if fast)
            out.add(path, f"{family!r} is not allowed: a family in wirespeed's catalog, e.g. {choices}")
        elif not known[family] and spec.not_network_optimised_reason is None:
            out.add(
                path,
                f"{family!r} is not allowed: not network-optimised (its NIC is not Azure Boost MANA); keep to "
                "network-optimised families, or set not_network_optimised_reason to why this pool may use it",
            )
        families.append(family)
    if not spec.families:
        out.add("families", "[] is not allowed: at least one family (None: every network-optimised family)")
    return families


def _architectures(out: Collector, given: Sequence[str]) -> list[str]:
    arches = list(given)
    for index, arch in enumerate(arches):
        if arch not in labels_of.ARCH_LABELS:
            out.add(f"architectures[{index}]", f"{arch!r} is not allowed: x86_64 or arm64")
    if not arches or len(set(arches)) != len(arches):
        out.add("architectures", f"{arches!r} is not allowed: x86_64 and/or arm64, each once")
    return [a for a in arches if a in labels_of.ARCH_LABELS]


def _reason(out: Collector, reason: str | None) -> None:
    if reason is None:
        return
    if not isinstance(reason, str) or not reason.strip():
        out.add("not_network_optimised_reason", f"{reason!r} is not allowed: a written reason (non-empty text) or None")
    elif len(reason.strip()) > REASON_MAX_LENGTH:
        out.add(
            "not_network_optimised_reason",
            f"a reason of {len(reason.strip())} characters is not allowed: at most {REASON_MAX_LENGTH}",
        )


def _reserved_labels(out: Collector, labels: Mapping[str, str]) -> None:
    for key in labels:
        if not isinstance(key, str):
            continue
        crd = karpenter_labels.refusal("azure", key)  # what the API server would refuse, in the CRD's words
        domain = key.partition("/")[0] if "/" in key else ""
        if crd is None and not (
            key in RESERVED_LABELS or any(domain == d or domain.endswith("." + d) for d in RESERVED_LABEL_DOMAINS)
        ):
            continue
        why = f" (Karpenter's NodePool CRD refuses it: {crd})" if crd else ""
        out.add(
            f"labels[{key!r}]",
            f"{key!r} is not allowed{why}: Karpenter and AKS set the labels of the karpenter.sh, karpenter.azure.com "
            "and kubernetes.azure.com domains (select sizes with families, min_vcpu and max_vcpu)",
        )


def _vcpu_bounds(out: Collector, spec: AutoProvisionedPoolSpec) -> tuple[int | None, int | None]:
    low = whole_in(out, "min_vcpu", spec.min_vcpu, *VCPU_RANGE) if spec.min_vcpu is not None else None
    high = whole_in(out, "max_vcpu", spec.max_vcpu, *VCPU_RANGE) if spec.max_vcpu is not None else None
    if low is not None and high is not None and low > high:
        out.add("max_vcpu", f"{high!r} is not allowed: at least min_vcpu ({low})")
        return low, None
    return low, high


def requirements_for(
    families: Sequence[str],
    architectures: Sequence[str],
    capacity_types: Sequence[str],
    min_vcpu: int | None,
    max_vcpu: int | None,
) -> tuple[Requirement, ...]:
    """The NodePool's requirements: the SKU family letters, versions and series of the families (from the provider's
    labels of their catalog sizes), accelerated networking, architecture, OS, capacity type and the vCPU bounds.
    Gt and Lt are strict: "at least N" is ``Gt N-1``."""
    sizes = [labels_of.sku_labels(t) for t in catalog.instance_types(cloud="azure") if t.family in families]
    found: list[Requirement] = [
        Requirement(labels_of.ARCH, "In", tuple(labels_of.ARCH_LABELS[a] for a in architectures)),
        Requirement("kubernetes.io/os", "In", ("linux",)),
        Requirement("karpenter.sh/capacity-type", "In", tuple(capacity_types)),
        Requirement(labels_of.SKU_FAMILY, "In", tuple(sorted({s.family for s in sizes}))),
        Requirement(labels_of.SKU_VERSION, "In", tuple(sorted({s.version for s in sizes}, key=int))),
        Requirement(labels_of.SKU_SERIES, "In", tuple(sorted({s.series for s in sizes}))),
        Requirement(labels_of.SKU_ACCELERATED_NETWORKING, "In", ("true",)),
    ]
    if min_vcpu is not None and min_vcpu > 1:
        found.append(Requirement(labels_of.SKU_CPU, "Gt", (str(min_vcpu - 1),)))
    if max_vcpu is not None:
        found.append(Requirement(labels_of.SKU_CPU, "Lt", (str(max_vcpu + 1),)))
    return tuple(found)


def _capacity(
    out: Collector, spec: AutoProvisionedPoolSpec, admitted: Sequence[catalog.InstanceType]
) -> tuple[NapCapacity, azure_lb.Pool] | None:
    """The node ceiling from cpu_limit and the smallest admitted size, and the pool as outbound sizing counts it."""
    cpu_limit = whole_in(out, "cpu_limit", spec.cpu_limit, *CPU_LIMIT_RANGE)
    budget_problem = check_budget(spec.disruption_budget)
    if budget_problem:
        out.add("disruption_budget", budget_problem)
    if cpu_limit is None or budget_problem or not admitted:
        return None
    smallest = min(t.vcpu for t in admitted)
    capacity = NapCapacity(
        name=spec.name,
        cpu_limit=Fraction(cpu_limit),
        smallest_vcpu=smallest,
        smallest_sizes=tuple(t.name for t in admitted if t.vcpu == smallest),
        budget=spec.disruption_budget,
    )
    try:
        return capacity, capacity.sizing_pool()
    except SizingError as exc:
        out.add("cpu_limit", f"{cpu_limit!r} is not allowed: {exc.allowed}")
        return None


def _check_options(out: Collector, spec: AutoProvisionedPoolSpec) -> None:
    if not isinstance(spec.name, str) or not NAME_PATTERN.match(spec.name):
        out.add(
            "name",
            f"{spec.name!r} is not allowed: an RFC 1123 label (lowercase letters, digits and '-', 1-63 characters, "
            "starting and ending with a letter or digit)",
        )
    for index, capacity_type in enumerate(spec.capacity_types):
        if capacity_type not in CAPACITY_TYPES:
            out.add(f"capacity_types[{index}]", f"{capacity_type!r} is not allowed: on-demand or spot")
    if not spec.capacity_types:
        out.add("capacity_types", "[] is not allowed: on-demand and/or spot")
    if spec.image_family not in IMAGE_FAMILIES:
        out.add("image_family", f"{spec.image_family!r} is not allowed: one of {', '.join(IMAGE_FAMILIES)}")
    if spec.max_pods is not None:
        whole_in(out, "max_pods", spec.max_pods, *MAX_PODS_RANGE)
    _reason(out, spec.not_network_optimised_reason)


def check_nap(spec: AutoProvisionedPoolSpec, prefix: str = "") -> tuple[NapPlan | None, list[Problem]]:
    """Validate one auto-provisioned pool; a plan only when it has no problem. Problem paths carry ``prefix``
    (``auto_provisioned_pools[0]`` in a cluster)."""
    out = Collector()
    _check_options(out, spec)
    try:
        profile: Profile | None = resolve_profile(spec.profile)
    except LookupError as exc:
        out.add("profile", f"{spec.profile!r} is not allowed: {exc}".replace("profile: ", "", 1))
        profile = None
    architectures = _architectures(out, spec.architectures)
    families = _families(out, spec, architectures)
    low, high = _vcpu_bounds(out, spec)
    requirements = requirements_for(families, architectures, spec.capacity_types, low, high)
    admitted = tuple(it for it, _ in labels_of.admitted(requirements))
    if not admitted and not out.problems:
        out.add(
            "min_vcpu" if low is not None or high is not None else "families",
            f"no size of {', '.join(families)} ({'/'.join(architectures)}) in the catalog fits: widen the families, "
            "architectures or vCPU bounds",
        )
    labels = check_labels(out, "", spec.labels, profile.name if profile else None)
    _reserved_labels(out, spec.labels)
    check_taints(out, "", spec.taints)
    sysctls: dict[str, int | str] = {}
    left: tuple[str, ...] = ()
    if profile is not None:
        sysctls, left = split_sysctls(out, "", profile, spec.extra_sysctls)
    sized = _capacity(out, spec, admitted)
    problems = [Problem(join(prefix, p.field), reason=p.reason) for p in out.problems]
    if problems or profile is None or sized is None:
        return None, problems
    slow = sorted({t.family for t in admitted if not t.network_optimised})
    reason = (spec.not_network_optimised_reason or "").strip()
    return (
        NapPlan(
            spec=spec,
            profile=profile,
            families=tuple(families),
            architectures=tuple(architectures),
            requirements=requirements,
            admitted=admitted,
            capacity=sized[0],
            sizing_pool=sized[1],
            labels=labels,
            sysctls=sysctls,
            left_to_agent=left,
            annotations={NOT_NETWORK_OPTIMISED_REASON: reason} if slow and reason else {},
        ),
        [],
    )


def plan_nap(spec: AutoProvisionedPoolSpec) -> NapPlan:
    """The plan of one auto-provisioned pool, or :class:`InvalidArgsError` with every problem."""
    plan, problems = check_nap(spec)
    if problems or plan is None:
        raise InvalidArgsError(COMPONENT, problems)
    return plan


def _taint(text: str) -> dict[str, str]:
    key_value, _, effect = text.rpartition(":")
    key, equals, value = key_value.partition("=")
    assert effect in TAINT_EFFECTS
    return {"key": key, "effect": effect} | ({"value": value} if equals else {})


def node_class(plan: NapPlan) -> dict[str, Any]:
    """The AKSNodeClass: image family, maxPods and the sysctls AKS sets when it builds each node. Its line-rate
    annotation is its NodePool's fastest admitted size: a node class names no size, so the backlog gate
    (netdev-backlog-minimum) sizes the class's minimum from it, as it does a launch template's from its tag."""
    spec: dict[str, Any] = {"imageFamily": plan.spec.image_family}
    if plan.spec.max_pods is not None:
        spec["maxPods"] = plan.spec.max_pods
    if plan.sysctls:
        spec["linuxOSConfig"] = {"sysctls": plan.node_class_sysctls()}
    return {
        "apiVersion": labels_of.NODE_CLASS_API_VERSION,
        "kind": labels_of.NODE_CLASS_KIND,
        "metadata": {
            "name": plan.name,
            "labels": {PROFILE_LABEL: plan.profile.name},
            "annotations": {LINE_RATE_ANNOTATION: line_rate_annotation(plan.line_rate_gbps)},
        },
        "spec": spec,
    }


def node_pool(plan: NapPlan) -> dict[str, Any]:
    """The NodePool: network-optimised SKU series only, the profile label, limits.cpu and one disruption budget."""
    template_spec: dict[str, Any] = {
        "nodeClassRef": {"group": labels_of.GROUP, "kind": labels_of.NODE_CLASS_KIND, "name": plan.name},
        "requirements": [{"key": r.key, "operator": r.operator, "values": list(r.values)} for r in plan.requirements],
    }
    if plan.spec.taints:
        template_spec["taints"] = [_taint(t) for t in plan.spec.taints]
    metadata: dict[str, Any] = {"name": plan.name, "labels": {PROFILE_LABEL: plan.profile.name}}
    if plan.annotations:
        metadata["annotations"] = dict(plan.annotations)
    return {
        "apiVersion": labels_of.NODE_POOL_API_VERSION,
        "kind": "NodePool",
        "metadata": metadata,
        "spec": {
            "template": {"metadata": {"labels": dict(plan.labels)}, "spec": template_spec},
            "limits": {"cpu": str(plan.spec.cpu_limit)},
            "disruption": CONSOLIDATION | {"budgets": [{"nodes": plan.spec.disruption_budget}]},
        },
    }


def nap_objects(plan: NapPlan) -> list[dict[str, Any]]:
    """The AKSNodeClass, then the NodePool that refers to it (apply in this order)."""
    return [node_class(plan), node_pool(plan)]

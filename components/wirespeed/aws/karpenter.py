"""Karpenter capacity on network-optimised EC2, as plain manifests (no Pulumi).

Targets Karpenter >= 1.0: ``karpenter.sh/v1`` NodePool and ``karpenter.k8s.aws/v1`` EC2NodeClass
(karpenter.sh/docs/concepts/nodepools/, .../nodeclasses/). The NodePool's requirements select instance families
and a sustained bandwidth range (the well-known label ``karpenter.k8s.aws/instance-network-bandwidth``, in Mb/s);
the EC2NodeClass boots AL2023 (alias ``al2023@latest``) or Bottlerocket with wirespeed's user data, which
Karpenter merges with its own NodeConfig, and requires IMDSv2 with hop limit 2.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wirespeed import catalog
from wirespeed.aws.capacity import (
    BALANCED_MAX_GBPS,
    GIVE_A_REASON,
    OPERATING_SYSTEMS,
    OperatingSystem,
    Taint,
    check_agent_image,
    check_labels,
    check_taints,
    render_user_data,
    resolve_profile,
    ring_class,
)
from wirespeed.catalog import InstanceType, karpenter_labels
from wirespeed.manifests import PROFILE_LABEL
from wirespeed.manifests.options import DEFAULT_IMAGE
from wirespeed.names import NOT_NETWORK_OPTIMISED_REASON
from wirespeed.problems import Problem
from wirespeed.profile import Profile

# Karpenter >= 1.0 (karpenter.sh/docs/upgrading/v1-migration): NodePool karpenter.sh/v1, EC2NodeClass
# karpenter.k8s.aws/v1; amiSelectorTerms aliases "<family>@<version>" (karpenter.sh/docs/concepts/nodeclasses).
NODEPOOL_API_VERSION = "karpenter.sh/v1"
NODECLASS_API_VERSION = "karpenter.k8s.aws/v1"
AMI_ALIASES: dict[OperatingSystem, str] = {"al2023": "al2023@latest", "bottlerocket": "bottlerocket@latest"}
ARCH_LABELS = {"x86_64": "amd64", "arm64": "arm64"}
# Kubernetes object names: an RFC 1123 subdomain, kept to a label so it also fits label values.
NAME_PATTERN = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
# Values of the karpenter.sh/capacity-type requirement (karpenter.sh/docs/concepts/nodepools).
CAPACITY_TYPES = ("on-demand", "spot")


def _restricted_labels(labels: Mapping[str, str]) -> list[Problem]:
    """Template labels Karpenter's v1 NodePool CRD refuses (catalog.karpenter_labels): refused here, before anything
    registers, rather than by the API server once the stack is half applied."""
    problems = []
    for key in labels:
        why = karpenter_labels.refusal("aws", key) if isinstance(key, str) else None
        if why is not None:
            problems.append(
                Problem.refused(
                    f"labels[{key!r}]",
                    key,
                    f"Karpenter's NodePool CRD refuses it ({why}; {karpenter_labels.RESTRICTED['aws'].source}): "
                    "Karpenter sets those labels itself",
                )
            )
    return problems


@dataclass(frozen=True)
class KarpenterPlan:
    name: str
    profile: Profile
    operating_system: OperatingSystem
    architecture: str
    families: tuple[str, ...]
    min_bandwidth_mbps: int
    max_bandwidth_mbps: int | None
    selected: tuple[InstanceType, ...]
    user_data: str
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    capacity_types: tuple[str, ...]
    cpu_limit: int
    annotations: dict[str, str] = field(default_factory=dict)
    """The written reason for families that are not network-optimised, where network-optimised-sku reads it."""

    @property
    def line_rate_gbps(self) -> float:
        """The fastest selected type's line rate (burst bandwidth): Karpenter may launch any of them."""
        return max(t.burst_gbps for t in self.selected)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "profile": self.profile.name,
            "api_versions": [NODEPOOL_API_VERSION, NODECLASS_API_VERSION],
            "families": list(self.families),
            "min_bandwidth_mbps": self.min_bandwidth_mbps,
            "max_bandwidth_mbps": self.max_bandwidth_mbps,
            "instance_types": [
                {"name": t.name, "baseline_gbps": t.baseline_gbps, "ena_express": t.ena_express} for t in self.selected
            ],
            "user_data": self.user_data,
        }


def _families_problems(families: Sequence[str], reason: str | None) -> list[Problem]:
    known = {it.family: it.network_optimised for it in catalog.instance_types(cloud="aws")}
    problems = []
    for index, family in enumerate(families):
        if family not in known:
            problems.append(Problem(f"instance_families[{index}]", family, "an AWS family in the catalog, e.g. c6in"))
        elif not known[family] and not reason:
            problems.append(
                Problem(
                    f"instance_families[{index}]",
                    family,
                    f"a network-optimised family{GIVE_A_REASON}",
                )
            )
    return problems


def _bandwidth_range(low: float, high: float | None, problems: list[Problem]) -> tuple[float, float | None]:
    """The baseline bandwidth range in Gb/s; a bound outside 0..3,200 is a problem and dropped (min to 0)."""
    if isinstance(low, bool) or not isinstance(low, int | float) or not 0 <= low <= 3200:
        problems.append(Problem("min_network_bandwidth_gbps", low, "a number of Gb/s from 0 to 3,200"))
        low = 0
    if high is not None and (isinstance(high, bool) or not isinstance(high, int | float) or not low <= high <= 3200):
        problems.append(Problem("max_network_bandwidth_gbps", high, f"a number of Gb/s from {low:g} to 3,200, or None"))
        high = None
    return low, high


def _selection_problems(
    selected: Sequence[InstanceType], families: Sequence[str], architecture: str, low: float, *, checked: bool
) -> list[Problem]:
    """The range must select some type (said only when every input was valid) of one ring class."""
    problems = []
    if checked and not selected:
        problems.append(
            Problem(
                "min_network_bandwidth_gbps",
                low,
                f"a range some {architecture} type of {', '.join(families)} has in the catalog",
            )
        )
    classes = sorted({ring_class(t) for t in selected})
    if len(classes) > 1:
        problems.append(
            Problem(
                "min_network_bandwidth_gbps",
                low,
                f"above {BALANCED_MAX_GBPS:g} (one ring profile for the pool), or max_network_bandwidth_gbps at most "
                f"{BALANCED_MAX_GBPS:g}: the range selects types of both ring classes",
            )
        )
    return problems


def plan_karpenter(
    *,
    name: str,
    profile: str | Profile = "throughput",
    architecture: str = "x86_64",
    operating_system: str = "al2023",
    instance_families: Sequence[str] | None = None,
    min_network_bandwidth_gbps: float = 50.0,
    max_network_bandwidth_gbps: float | None = None,
    capacity_types: Sequence[str] = ("on-demand",),
    cpu_limit: int = 1000,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Taint] = (),
    not_network_optimised_reason: str | None = None,
    agent_image: str = DEFAULT_IMAGE,
) -> tuple[KarpenterPlan | None, list[Problem]]:
    problems: list[Problem] = []
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        problems.append(Problem("name", name, "an RFC 1123 label: lowercase letters, digits and '-', 1-63 characters"))
    resolved, profile_problems = resolve_profile(profile)
    problems += profile_problems
    if architecture not in ARCH_LABELS:
        problems.append(Problem("architecture", architecture, "x86_64 or arm64"))
    if operating_system not in OPERATING_SYSTEMS:
        problems.append(Problem("operating_system", operating_system, "one of " + ", ".join(OPERATING_SYSTEMS)))
    if instance_families is None:
        families = sorted(
            {
                t.family
                for t in catalog.instance_types(cloud="aws", network_optimised=True)
                if t.architecture == architecture
            }
        )
    else:
        families = list(instance_families)
        problems += _families_problems(families, not_network_optimised_reason)
    low, high = _bandwidth_range(min_network_bandwidth_gbps, max_network_bandwidth_gbps, problems)
    for index, capacity in enumerate(capacity_types):
        if capacity not in CAPACITY_TYPES:
            problems.append(Problem(f"capacity_types[{index}]", capacity, "on-demand or spot"))
    if isinstance(cpu_limit, bool) or not isinstance(cpu_limit, int) or not 1 <= cpu_limit <= 1_000_000:
        problems.append(Problem("cpu_limit", cpu_limit, "a whole number of vCPUs from 1 to 1,000,000"))
    problems += check_labels(dict(labels or {}), resolved.name if resolved else None)
    problems += _restricted_labels(labels or {})
    problems += check_taints(list(taints))
    problems += check_agent_image(agent_image)
    selected = [
        t
        for t in catalog.instance_types(cloud="aws")
        if t.family in families
        and t.architecture == architecture
        and t.baseline_gbps >= low
        and (high is None or t.baseline_gbps <= high)
    ]
    problems += _selection_problems(selected, families, architecture, low, checked=not problems)
    if problems or resolved is None:
        return None, problems
    os_name: OperatingSystem = "bottlerocket" if operating_system == "bottlerocket" else "al2023"
    return (
        KarpenterPlan(
            name=name,
            profile=resolved,
            operating_system=os_name,
            architecture=architecture,
            families=tuple(families),
            min_bandwidth_mbps=round(low * 1000),
            max_bandwidth_mbps=None if high is None else round(high * 1000),
            selected=tuple(selected),
            user_data=render_user_data(resolved, os_name, agent_image),
            labels=dict(labels or {}) | {PROFILE_LABEL: resolved.name},
            taints=tuple(taints),
            capacity_types=tuple(capacity_types),
            cpu_limit=cpu_limit,
            annotations=_reason_annotation(families, not_network_optimised_reason),
        ),
        [],
    )


def _reason_annotation(families: Sequence[str], reason: str | None) -> dict[str, str]:
    optimised = {it.family for it in catalog.instance_types(cloud="aws", network_optimised=True)}
    if not reason or not reason.strip() or all(f in optimised for f in families):
        return {}
    return {NOT_NETWORK_OPTIMISED_REASON: reason.strip()}


def node_class(plan: KarpenterPlan, *, role: str, cluster_name: str) -> dict[str, Any]:
    """The EC2NodeClass. Subnets and security groups are found by the ``karpenter.sh/discovery`` tag, as the
    Karpenter getting-started guide tags them."""

    def discovery() -> list[dict[str, Any]]:
        return [{"tags": {"karpenter.sh/discovery": cluster_name}}]

    return {
        "apiVersion": NODECLASS_API_VERSION,
        "kind": "EC2NodeClass",
        "metadata": {"name": plan.name, "labels": {PROFILE_LABEL: plan.profile.name}},
        "spec": {
            "role": role,
            "amiSelectorTerms": [{"alias": AMI_ALIASES[plan.operating_system]}],
            "subnetSelectorTerms": discovery(),
            "securityGroupSelectorTerms": discovery(),
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpProtocolIPv6": "disabled",
                "httpPutResponseHopLimit": 2,
                "httpTokens": "required",
            },
            "userData": plan.user_data,
            "tags": {PROFILE_LABEL: plan.profile.name},
        },
    }


def node_pool(plan: KarpenterPlan) -> dict[str, Any]:
    """The NodePool: network-optimised families, a sustained-bandwidth range, the profile label."""
    requirements: list[dict[str, Any]] = [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": list(plan.families)},
        {"key": "kubernetes.io/arch", "operator": "In", "values": [ARCH_LABELS[plan.architecture]]},
        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(plan.capacity_types)},
    ]
    # Gt and Lt are strict and take integer strings: "at least N" is "Gt N-1".
    if plan.min_bandwidth_mbps > 0:
        requirements.append(
            {
                "key": "karpenter.k8s.aws/instance-network-bandwidth",
                "operator": "Gt",
                "values": [str(plan.min_bandwidth_mbps - 1)],
            }
        )
    if plan.max_bandwidth_mbps is not None:
        requirements.append(
            {
                "key": "karpenter.k8s.aws/instance-network-bandwidth",
                "operator": "Lt",
                "values": [str(plan.max_bandwidth_mbps + 1)],
            }
        )
    template_spec: dict[str, Any] = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": plan.name},
        "requirements": requirements,
    }
    if plan.taints:
        template_spec["taints"] = [
            {"key": t.key, "effect": t.kubernetes_effect} | ({"value": t.value} if t.value is not None else {})
            for t in plan.taints
        ]
    return {
        "apiVersion": NODEPOOL_API_VERSION,
        "kind": "NodePool",
        "metadata": {"name": plan.name, "labels": {PROFILE_LABEL: plan.profile.name}}
        | ({"annotations": dict(plan.annotations)} if plan.annotations else {}),
        "spec": {
            "template": {"metadata": {"labels": plan.labels}, "spec": template_spec},
            "limits": {"cpu": str(plan.cpu_limit)},
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m"},
        },
    }

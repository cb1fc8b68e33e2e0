"""What EKS node capacity wirespeed builds, decided without Pulumi: instance types checked against the catalog,
the tuning profile (ENA Express adjusts it), the user data, labels and taints. Shared by the managed node group
and the Karpenter pool components, and by `wirespeed plan`.

Every problem is collected as a :class:`Problem` (field, value, allowed) so a component raises one
``pulumi.InputPropertiesError`` listing all of them before anything registers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from wirespeed import catalog
from wirespeed.catalog import InstanceType, UnknownInstanceType
from wirespeed.manifests import PROFILE_LABEL
from wirespeed.manifests.options import DEFAULT_IMAGE, IMAGE_ALLOWED, has_tag_or_digest, resolve_profiles
from wirespeed.names import NOT_NETWORK_OPTIMISED_REASON, REASON_MAX_LENGTH
from wirespeed.problems import Problem
from wirespeed.profile import MTU, Profile, RingSize
from wirespeed.profiles import ASSUMPTIONS
from wirespeed.sizing.mtu import ENA_EXPRESS_MTU
from wirespeed.sizing.rings import ENA_EXPRESS_RX_RING
from wirespeed.userdata import (
    needs_bootstrap_container,
    render_al2023_user_data,
    render_bottlerocket_settings,
    script_problems,
)

OperatingSystem = Literal["al2023", "bottlerocket"]
OPERATING_SYSTEMS: tuple[OperatingSystem, ...] = ("al2023", "bottlerocket")

# EKS CreateNodegroup: instanceTypes holds at most 20 types (docs.aws.amazon.com/eks/latest/APIReference/
# API_CreateNodegroup.html); updateConfig.maxUnavailablePercentage is 1..100.
MAX_INSTANCE_TYPES = 20
# EKS managed node group quota "Maximum nodes per managed node group": 450 (docs.aws.amazon.com/eks/latest/
# userguide/service-quotas.html).
MAX_NODES = 450
# IMDSv2 hop limit 2: the AWS default of 1 stops containers behind one extra hop from reaching instance
# metadata (docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html, "hop limit").
IMDS_HOP_LIMIT = 2


# Ring profile per bandwidth class: the built-in profiles are sized for 100 Gb/s (`throughput`) and 25 Gb/s
# (`balanced`, wirespeed.profiles.ASSUMPTIONS); a type whose sustained bandwidth is above 25 Gb/s needs the
# larger rings, and one node group applies one profile.
# How a Python caller lets a size that is not network-optimised through; front ends without that argument (the
# stack config's node group strings) drop it from the allowed text.
GIVE_A_REASON = ", or give not_network_optimised_reason"
BALANCED_MAX_GBPS = ASSUMPTIONS["balanced"].line_rate_gbps

AMI_TYPES: dict[tuple[OperatingSystem, str], str] = {
    ("al2023", "x86_64"): "AL2023_x86_64_STANDARD",
    ("al2023", "arm64"): "AL2023_ARM_64_STANDARD",
    ("bottlerocket", "x86_64"): "BOTTLEROCKET_x86_64",
    ("bottlerocket", "arm64"): "BOTTLEROCKET_ARM_64",
}

TAINT_EFFECTS = ("NO_SCHEDULE", "NO_EXECUTE", "PREFER_NO_SCHEDULE")
# Kubernetes label syntax: optional DNS-subdomain prefix, name of 1..63 alphanumerics, '-', '_', '.'.
_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_KEY = re.compile(rf"^([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}$")
LABEL_VALUE = re.compile(rf"^({_LABEL_NAME})?$")


def ring_class(it: InstanceType) -> str:
    """The built-in profile whose ring sizes suit the type's sustained bandwidth."""
    return "balanced" if it.baseline_gbps <= BALANCED_MAX_GBPS else "throughput"


def alternatives(it: InstanceType) -> list[InstanceType]:
    """Network-optimised AWS types with the same vCPU count and architecture, fastest first."""
    if it.network_optimised:
        return []
    same_shape = [
        t
        for t in catalog.instance_types(cloud="aws", network_optimised=True)
        if t.vcpu == it.vcpu and t.architecture == it.architecture
    ]
    return sorted(same_shape, key=lambda t: (-t.baseline_gbps, t.name))


def check_instance_types(
    names: Sequence[str], reason: str | None, *, field_name: str = "instance_types", ena_express: bool = False
) -> tuple[list[InstanceType], list[Problem]]:
    """Look every name up in the catalog (AWS only) and apply the capacity rules: network-optimised unless a
    written reason is given, one architecture, one ring class, ENA Express support when asked for."""
    problems: list[Problem] = []
    if isinstance(names, str) or not isinstance(names, Sequence) or not names:
        return [], [Problem(field_name, names, "a non-empty list of EC2 instance type names, e.g. ['c6in.8xlarge']")]
    if len(names) > MAX_INSTANCE_TYPES:
        problems.append(Problem(field_name, list(names), f"at most {MAX_INSTANCE_TYPES} types (EKS limit)"))
    found: list[InstanceType] = []
    for index, name in enumerate(names):
        where = f"{field_name}[{index}]"
        try:
            it = catalog.lookup(name) if isinstance(name, str) else None
        except UnknownInstanceType as exc:
            problems.append(Problem(where, name, str(exc).removeprefix(f"unknown instance type {name!r}: ")))
            continue
        if it is None or it.cloud != "aws":
            problems.append(
                Problem(where, name, "an AWS instance type from the catalog (`wirespeed catalog list --cloud aws`)")
            )
            continue
        found.append(it)
        if not it.network_optimised and not reason:
            better = ", ".join(t.name for t in alternatives(it)[:3]) or "none with this vCPU count"
            problems.append(
                Problem(
                    where,
                    it.name,
                    f"a network-optimised type (e.g. {better}){GIVE_A_REASON}",
                )
            )
        if ena_express and not it.ena_express:
            problems.append(
                Problem(where, it.name, "a type that supports ENA Express (EnaSrdSupported), or ena_express=False")
            )
    if reason is not None and (not isinstance(reason, str) or not reason.strip()):
        problems.append(Problem("not_network_optimised_reason", reason, "a non-empty sentence saying why"))
    elif reason is not None and len(reason.strip()) > REASON_MAX_LENGTH:
        problems.append(
            Problem(
                "not_network_optimised_reason",
                f"{len(reason.strip())} characters",
                f"at most {REASON_MAX_LENGTH} characters (it is recorded as an AWS tag, whose values hold 256)",
            )
        )
    architectures = sorted({it.architecture for it in found})
    if len(architectures) > 1:
        problems.append(
            Problem(
                field_name,
                [it.name for it in found],
                "one architecture per node pool (one AMI): " + " or ".join(architectures),
            )
        )
    classes = {ring_class(it) for it in found}
    if len(classes) > 1:
        by_class = "; ".join(
            f"{c}: " + ", ".join(it.name for it in found if ring_class(it) == c) for c in sorted(classes)
        )
        problems.append(
            Problem(
                field_name,
                [it.name for it in found],
                f"types that share one ring profile (sustained bandwidth all above or all at most "
                f"{BALANCED_MAX_GBPS:g} Gb/s); split them into node pools: {by_class}",
            )
        )
    return found, problems


def ena_express_profile(profile: Profile) -> Profile:
    """The profile with AWS's ENA Express guidance: ENA RX ring at least 8,192 and MTU 8,900 on ENA links.

    Renamed ``<name>-ena-express`` (when that still fits a profile name) so the node agent's DaemonSet for it is
    a different one: the agent must not set the rings back to the plain profile's sizes."""
    ena = profile.rings.get("ena", RingSize())
    rx = max(ena.rx or 0, ENA_EXPRESS_RX_RING)
    rings = dict(profile.rings) | {"ena": RingSize(rx=rx, tx=ena.tx)}
    name = f"{profile.name}-ena-express"
    return profile.model_copy(
        update={
            "name": name if len(name) <= 63 else profile.name,
            "rings": rings,
            "mtu": MTU(value=ENA_EXPRESS_MTU, drivers=["ena"]),
        }
    )


def resolve_profile(spec: str | Profile, field_name: str = "profile") -> tuple[Profile | None, list[Problem]]:
    profiles, problems = resolve_profiles([spec], field_name)
    problems = [Problem(field_name, p.value, p.allowed) for p in problems]
    if problems:
        return None, problems
    (profile,) = profiles
    for sp in script_problems(profile):
        problems.append(Problem(f"{field_name}{sp.field}", sp.value, sp.allowed))
    return profile, problems


def check_labels(labels: Mapping[str, str], profile_name: str | None, field_name: str = "labels") -> list[Problem]:
    problems = []
    if not isinstance(labels, Mapping):
        return [Problem(field_name, labels, "a mapping of Kubernetes label keys to values")]
    for key, value in labels.items():
        if not isinstance(key, str) or not LABEL_KEY.match(key):
            problems.append(Problem(f"{field_name}[{key!r}]", key, "a Kubernetes label key ([prefix/]name)"))
        elif not isinstance(value, str) or not LABEL_VALUE.match(value):
            problems.append(
                Problem(f"{field_name}[{key!r}]", value, "a Kubernetes label value (63 characters or fewer)")
            )
        elif key == PROFILE_LABEL and value != profile_name:
            problems.append(
                Problem(f"{field_name}[{key!r}]", value, "left out: wirespeed sets it to the profile's name")
            )
    return problems


@dataclass(frozen=True)
class Taint:
    """A node taint; ``effect`` in EKS's spelling (NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE)."""

    key: str
    effect: str = "NO_SCHEDULE"
    value: str | None = None

    @property
    def kubernetes_effect(self) -> str:
        return {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}[
            self.effect
        ]


def check_taints(taints: Sequence[Taint], field_name: str = "taints") -> list[Problem]:
    problems = []
    for index, taint in enumerate(taints):
        where = f"{field_name}[{index}]"
        if not isinstance(taint, Taint):
            problems.append(Problem(where, taint, "a wirespeed.aws.Taint(key, effect, value)"))
            continue
        if not LABEL_KEY.match(taint.key):
            problems.append(Problem(f"{where}.key", taint.key, "a Kubernetes taint key ([prefix/]name)"))
        if taint.effect not in TAINT_EFFECTS:
            problems.append(Problem(f"{where}.effect", taint.effect, "one of " + ", ".join(TAINT_EFFECTS)))
        if taint.value is not None and not LABEL_VALUE.match(taint.value):
            problems.append(Problem(f"{where}.value", taint.value, "a taint value (63 characters or fewer)"))
    return problems


def render_user_data(profile: Profile, operating_system: OperatingSystem, agent_image: str = DEFAULT_IMAGE) -> str:
    if operating_system == "bottlerocket":
        return render_bottlerocket_settings(profile, agent_image)
    return render_al2023_user_data(profile)


def check_agent_image(agent_image: object, field_name: str = "agent_image") -> list[Problem]:
    """The image Bottlerocket runs as a bootstrap container: a tag or digest, as for the DaemonSet (an untagged
    image means `latest`, which moves between boots)."""
    if isinstance(agent_image, str) and has_tag_or_digest(agent_image):
        return []
    return [Problem(field_name, agent_image, IMAGE_ALLOWED)]


def bottlerocket_note(profile: Profile, agent_image: str) -> str:
    if not needs_bootstrap_container(profile):
        return "Bottlerocket: the profile's sysctls are set through settings.kernel.sysctl; it sets no rings or MTU."
    return (
        "Bottlerocket: the profile's sysctls are set through settings.kernel.sysctl; NIC rings and MTU by the agent "
        f"image {agent_image} as a bootstrap container (mode always, not essential) before kubelet starts, then kept "
        "by the node agent DaemonSet (wirespeed.kubernetes.NodeTuning)."
    )


def _whole(value: object, name: str, low: int, high: int, problems: list[Problem]) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value or not low <= value <= high:
        problems.append(Problem(name, value, f"a whole number from {low} to {high}"))
        return low
    return int(value)


@dataclass(frozen=True)
class NodeGroupPlan:
    """Everything the managed node group and its launch template are built from."""

    instance_types: tuple[InstanceType, ...]
    profile: Profile
    operating_system: OperatingSystem
    ami_type: str
    user_data: str
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    min_size: int
    max_size: int
    desired_size: int
    max_unavailable_percentage: int
    ena_express: bool
    not_network_optimised_reason: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def tags(self) -> dict[str, str]:
        """The written reason for types that are not network-optimised, recorded on the node group and its launch
        template, where network-optimised-sku reads it; none when every type is network-optimised."""
        reason = self.not_network_optimised_reason
        if not reason or all(it.network_optimised for it in self.instance_types):
            return {}
        return {NOT_NETWORK_OPTIMISED_REASON: reason.strip()}

    @property
    def line_rate_gbps(self) -> float:
        """The fastest type's line rate (its burst bandwidth, as the gates read a size): what NodeTuning's
        ``line_rates`` takes for this group's profile."""
        return max(it.burst_gbps for it in self.instance_types)

    def to_json(self) -> dict[str, Any]:
        return {
            "instance_types": [
                {
                    "name": it.name,
                    "baseline_gbps": it.baseline_gbps,
                    "burst_gbps": it.burst_gbps,
                    "ena_express": it.ena_express,
                    "network_optimised": it.network_optimised,
                    "architecture": it.architecture,
                }
                for it in self.instance_types
            ],
            "profile": self.profile.name,
            "ami_type": self.ami_type,
            "ena_express": self.ena_express,
            "scaling": {"min": self.min_size, "max": self.max_size, "desired": self.desired_size},
            "max_unavailable_percentage": self.max_unavailable_percentage,
            "labels": self.labels,
            "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in self.taints],
            "user_data": self.user_data,
            "notes": list(self.notes),
        }


def security_groups_problem(ena_express: object, security_groups_given: bool) -> Problem | None:
    """ENA Express puts the network interface in the launch template, and EKS then adds no security group to it:
    the node group must name its own (docs.aws.amazon.com/eks/latest/userguide/launch-templates.html,
    "Network interfaces")."""
    if ena_express is True and not security_groups_given:
        return Problem(
            "security_group_ids",
            None,
            "the node security groups (e.g. the cluster security group): with ena_express the launch template "
            "defines the network interface, and EKS then adds none",
        )
    return None


def plan_node_group(
    *,
    instance_types: Sequence[str],
    profile: str | Profile = "throughput",
    operating_system: str = "al2023",
    min_size: int = 1,
    max_size: int = 3,
    desired_size: int | None = None,
    max_unavailable_percentage: int = 10,
    ena_express: bool = False,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Taint] = (),
    not_network_optimised_reason: str | None = None,
    agent_image: str = DEFAULT_IMAGE,
) -> tuple[NodeGroupPlan | None, list[Problem]]:
    """Check every input and build the plan; (None, problems) when any input is bad. ``agent_image`` is the agent
    image Bottlerocket nodes run as a bootstrap container (AL2023 nodes tune from their boot script)."""
    problems: list[Problem] = []
    types, type_problems = check_instance_types(instance_types, not_network_optimised_reason, ena_express=ena_express)
    problems += type_problems
    resolved, profile_problems = resolve_profile(profile)
    problems += profile_problems
    if operating_system not in OPERATING_SYSTEMS:
        problems.append(Problem("operating_system", operating_system, "one of " + ", ".join(OPERATING_SYSTEMS)))
    low = _whole(min_size, "min_size", 0, MAX_NODES, problems)
    high = _whole(max_size, "max_size", 1, MAX_NODES, problems)
    if low > high:
        problems.append(Problem("min_size", min_size, f"at most max_size ({high})"))
    desired = low if desired_size is None else _whole(desired_size, "desired_size", low, high, problems)
    surge = _whole(max_unavailable_percentage, "max_unavailable_percentage", 1, 100, problems)
    if not isinstance(ena_express, bool):
        problems.append(Problem("ena_express", ena_express, "True or False"))
    if resolved is not None and ena_express:
        resolved = ena_express_profile(resolved)
    user_labels = dict(labels or {})
    problems += check_labels(user_labels, resolved.name if resolved else None)
    problems += check_taints(list(taints))
    problems += check_agent_image(agent_image)
    if problems or resolved is None:
        return None, problems
    os_name: OperatingSystem = "bottlerocket" if operating_system == "bottlerocket" else "al2023"
    notes = []
    if os_name == "bottlerocket":
        notes.append(bottlerocket_note(resolved, agent_image))
    if ena_express:
        notes.append(
            f"ENA Express: RX ring {ENA_EXPRESS_RX_RING:,} and MTU {ENA_EXPRESS_MTU:,} on ENA links (profile "
            f"{resolved.name}); run the node agent with this profile."
        )
    return (
        NodeGroupPlan(
            instance_types=tuple(types),
            profile=resolved,
            operating_system=os_name,
            ami_type=AMI_TYPES[(os_name, types[0].architecture)],
            user_data=render_user_data(resolved, os_name, agent_image),
            labels=user_labels | {PROFILE_LABEL: resolved.name},
            taints=tuple(taints),
            min_size=low,
            max_size=high,
            desired_size=desired,
            max_unavailable_percentage=surge,
            ena_express=ena_express,
            not_network_optimised_reason=not_network_optimised_reason,
            notes=tuple(notes),
        ),
        [],
    )

"""One network-optimised AKS pool: the VM size, counts and surge, labels, taints, and the sysctls AKS sets. Pure.

:func:`check_pool` checks every field and returns the :class:`PoolPlan` the components register, or every problem.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wirespeed import catalog
from wirespeed.azure.problems import Collector, InvalidArgsError, join, whole_in
from wirespeed.azure.spec import LINUX_OS_SKUS, PROFILE_LABEL, TAINT_EFFECTS, ZONES, NodePoolSpec
from wirespeed.names import NOT_NETWORK_OPTIMISED_REASON, REASON_MAX_LENGTH
from wirespeed.problems import Problem
from wirespeed.profile import Profile
from wirespeed.profiles import builtin_profile
from wirespeed.sizing import aks_sysctls, azure_lb

# learn.microsoft.com/azure/aks/create-node-pools ("Limitations"): a Linux pool name is 1-12 lowercase
# alphanumerics starting with a letter.
POOL_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]{0,11}$")
# learn.microsoft.com/azure/aks/use-system-pools ("System and user node pools"): a system pool has at least one node;
# a user pool may scale to zero.
SYSTEM_MIN_COUNT = 1
# learn.microsoft.com/azure/aks/azure-cni-overview ("Maximum pods per node"): 10..250 for every network plugin.
MAX_PODS_RANGE = (10, 250)
# learn.microsoft.com/azure/virtual-network/accelerated-networking-overview ("Supported VM instances"): VM sizes
# with two or more vCPUs whose NIC is a VF the host passes through (Mellanox ConnectX or MANA): every Azure NIC
# kind in the catalog.
# How a component caller lets a size that is not network-optimised through; the stack config has no key for it
# and drops it from the problem's text.
SET_A_REASON = ", or set allow_non_network_optimised to the reason this pool may use it"
ACCELERATED_NETWORKING_NICS = catalog.nic_kinds("azure")
ACCELERATED_NETWORKING_MIN_VCPU = 2
# Inputs of Microsoft.ContainerService/managedClusters/agentPools that AKS only takes at creation: a change
# replaces the pool (new VMs). Engine paths, each with its reason, for `wirespeed plan` to print.
REPLACE_ON_CHANGE: tuple[tuple[str, str], ...] = (
    ("linuxOSConfig", "node OS settings (sysctls) are applied when the VM is built (AKS custom node configuration)"),
    ("vmSize", "a pool's VM size cannot change in place (AKS: resize by adding a pool)"),
    ("availabilityZones", "zones are fixed when the pool's scale set is created"),
    ("maxPods", "pod IP capacity is reserved per node at creation"),
)


@dataclass(frozen=True)
class PoolPlan:
    """What one network-optimised pool registers, derived from its spec."""

    spec: NodePoolSpec
    instance: catalog.InstanceType
    profile: Profile
    surge_nodes: int
    sizing_pool: azure_lb.Pool
    labels: dict[str, str]
    aks_sysctls: dict[str, int | str]
    left_to_agent: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def line_rate_gbps(self) -> float:
        """The size's line rate (its burst bandwidth, as the gates read a size): what NodeTuning's ``line_rates``
        takes for this pool's profile."""
        return self.instance.burst_gbps

    @property
    def autoscaling(self) -> bool:
        return self.spec.min_count < self.spec.max_count

    @property
    def tags(self) -> dict[str, str]:
        """The written reason for a size that is not network-optimised, recorded on the pool, where
        network-optimised-sku reads it; none for a network-optimised size."""
        reason = self.spec.allow_non_network_optimised
        if self.instance.network_optimised or not reason:
            return {}
        return {NOT_NETWORK_OPTIMISED_REASON: reason.strip()}

    @property
    def replace_on_change(self) -> tuple[str, ...]:
        return tuple(path for path, _ in REPLACE_ON_CHANGE)

    def aks_sysctl_engine_names(self) -> dict[str, int | str]:
        """The sysctls as the engine and AKS API name them (``netCoreNetdevMaxBacklog``)."""
        return {aks_sysctls.engine_name(k): v for k, v in self.aks_sysctls.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.spec.name,
            "vm_size": self.instance.name,
            "network_optimised": self.instance.network_optimised,
            "nic": self.instance.nic,
            "max_bandwidth_mbps": self.instance.max_bandwidth_mbps,
            "min_count": self.spec.min_count,
            "max_count": self.spec.max_count,
            "max_surge": self.spec.max_surge,
            "surge_nodes": self.surge_nodes,
            "profile": self.profile.name,
            "labels": dict(self.labels),
            "linux_os_config_sysctls": self.aks_sysctl_engine_names(),
            "left_to_agent": list(self.left_to_agent),
            "replace_on_change": [{"input": p, "why": why} for p, why in REPLACE_ON_CHANGE],
            "notes": list(self.notes),
        }


def resolve_profile(profile: str | Profile) -> Profile:
    """A built-in profile by name, or the given profile; LookupError names the built-in choices."""
    if isinstance(profile, Profile):
        return profile
    return builtin_profile(profile)


def accelerated_networking(instance: catalog.InstanceType) -> bool:
    """Whether the size can have accelerated networking (a VF NIC and at least two vCPUs)."""
    return (
        instance.cloud == "azure"
        and instance.nic in ACCELERATED_NETWORKING_NICS
        and instance.vcpu >= ACCELERATED_NETWORKING_MIN_VCPU
    )


def _network_optimised_alternatives(instance: catalog.InstanceType) -> list[str]:
    return [t.name for t in catalog.network_optimised_alternatives(instance, same_vcpu=True)[:3]]


def _check_vm_size(out: Collector, prefix: str, spec: NodePoolSpec) -> catalog.InstanceType | None:
    path = join(prefix, "vm_size")
    try:
        instance = catalog.lookup(spec.vm_size)
    except (catalog.UnknownInstanceType, TypeError) as exc:
        out.add(
            path,
            f"{spec.vm_size!r} is not allowed: not in wirespeed's catalog, so accelerated networking cannot be "
            f"confirmed ({exc})",
        )
        return None
    if instance.cloud != "azure":
        out.add(path, f"{spec.vm_size!r} is not allowed: an AWS instance type; AKS needs an Azure VM size")
        return None
    if not accelerated_networking(instance):
        out.add(
            path,
            f"{instance.name!r} is not allowed: it cannot have accelerated networking (NIC {instance.nic}, "
            f"{instance.vcpu} vCPU; needs a Mellanox or MANA VF and at least {ACCELERATED_NETWORKING_MIN_VCPU} vCPUs)",
        )
        return None
    reason = spec.allow_non_network_optimised
    if reason is not None and (not isinstance(reason, str) or not reason.strip()):
        out.add(
            join(prefix, "allow_non_network_optimised"),
            f"{reason!r} is not allowed: a written reason (non-empty text) or None",
        )
    elif reason is not None and len(reason.strip()) > REASON_MAX_LENGTH:
        out.add(
            join(prefix, "allow_non_network_optimised"),
            f"a reason of {len(reason.strip())} characters is not allowed: at most {REASON_MAX_LENGTH} (it is recorded "
            "as a tag on the pool, and Azure tag values hold at most 256)",
        )
    elif not instance.network_optimised and reason is None:
        better = ", ".join(_network_optimised_alternatives(instance)) or "a v6 (MANA) size"
        out.add(
            path,
            f"{instance.name!r} is not allowed: not network-optimised (NIC {instance.nic}, "
            f"{instance.max_bandwidth_mbps:,} Mb/s); use a MANA size such as {better}{SET_A_REASON}",
        )
    return instance


def parse_surge(out: Collector, prefix: str, spec: NodePoolSpec, max_count: int | None) -> azure_lb.Pool | None:
    path = join(prefix, "max_surge")
    text = spec.max_surge.strip() if isinstance(spec.max_surge, str) else ""
    # At least one surge node: wirespeed leaves maxUnavailable at its API default 0, and AKS refuses an upgrade
    # setting where both are 0 (learn.microsoft.com/azure/aks/upgrade-aks-cluster, "Customize node surge upgrade").
    bound = f" ({max_count})" if max_count is not None else ""
    allowed = f"a node count from 1 to max_count{bound} or a percent above 0% up to 100% (e.g. '1' or '10%')"
    parsed = azure_lb.surge_value(text)
    if parsed is None:  # float() would take '1e1%', 'nan%' and '1_0', which AKS refuses
        out.add(path, f"{spec.max_surge!r} is not allowed: {allowed}")
        return None
    value, percent = parsed
    if value <= 0 or (percent and value > 100) or (not percent and max_count is not None and value > max_count):
        out.add(path, f"{spec.max_surge!r} is not allowed: {allowed}")
        return None
    if max_count is None:
        return None
    return azure_lb.Pool(max_count, value if percent else int(value), surge_is_percent=percent, name=spec.name)


def check_labels(out: Collector, prefix: str, given: Mapping[str, str], profile_name: str | None) -> dict[str, str]:
    """The node labels with the profile label added; a problem for a non-text label or another profile value."""
    labels = dict(given)
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            out.add(join(prefix, f"labels[{key!r}]"), f"{value!r} is not allowed: labels map text to text")
    named = labels.get(PROFILE_LABEL)
    if profile_name is not None:
        if named is not None and named != profile_name:
            out.add(
                join(prefix, f"labels[{PROFILE_LABEL!r}]"),
                f"{named!r} is not allowed: it must equal the pool's profile {profile_name!r} (the DaemonSet "
                "selects nodes by it); leave it out and it is set for you",
            )
        labels[PROFILE_LABEL] = profile_name
    return labels


def check_taints(out: Collector, prefix: str, taints: Sequence[str]) -> None:
    """Each taint is ``KEY[=VALUE]:EFFECT`` with a Kubernetes effect."""
    for i, taint in enumerate(taints):
        key_value, _, effect = taint.rpartition(":") if isinstance(taint, str) else ("", "", "")
        if not key_value or effect not in TAINT_EFFECTS:
            out.add(
                join(prefix, f"taints[{i}]"),
                f"{taint!r} is not allowed: KEY[=VALUE]:EFFECT with EFFECT one of {', '.join(TAINT_EFFECTS)}",
            )


def split_sysctls(
    out: Collector, prefix: str, profile: Profile, extra: Mapping[str, int | str]
) -> tuple[dict[str, int | str], tuple[str, ...]]:
    """Profile and extra sysctls AKS sets at creation (checked against its ranges), and what the agent keeps."""
    aks: dict[str, int | str] = {}
    left: list[str] = []
    supported = aks_sysctls.supported_kernel_names()
    for name, value in profile.sysctls.as_dict().items():
        if name not in supported:
            left.append(name)
            continue
        problem = aks_sysctls.check_value(name, value)
        if problem:
            out.add(join(prefix, f"profile.sysctls[{name!r}]"), problem)
        else:
            aks[name] = value
    for name, extra_value in extra.items():
        path = join(prefix, f"extra_sysctls[{name!r}]")
        if name in aks:
            out.add(
                path, f"{extra_value!r} is not allowed: profile {profile.name!r} already sets {name} to {aks[name]!r}"
            )
            continue
        problem = aks_sysctls.check_value(name, extra_value)
        if problem:
            out.add(path, problem)
        else:
            aks[name] = extra_value if isinstance(extra_value, str) else int(extra_value)
    left.extend(f"rings.{driver}" for driver in sorted(profile.rings))
    if profile.mtu is not None:
        left.append("mtu")
    return dict(sorted(aks.items())), tuple(left)


def check_pool(spec: NodePoolSpec, prefix: str = "", *, system: bool = False) -> tuple[PoolPlan | None, list[Problem]]:
    """Validate one pool; a plan only when it has no problem."""
    out = Collector()
    if not isinstance(spec.name, str) or not POOL_NAME_PATTERN.match(spec.name):
        out.add(
            join(prefix, "name"),
            f"{spec.name!r} is not allowed: 1-12 lowercase letters and digits, starting with a letter (AKS pool name)",
        )
    instance = _check_vm_size(out, prefix, spec)
    min_low = SYSTEM_MIN_COUNT if system else 0
    min_count = whole_in(out, join(prefix, "min_count"), spec.min_count, min_low, azure_lb.MAX_POOL_NODES)
    max_count = whole_in(out, join(prefix, "max_count"), spec.max_count, 1, azure_lb.MAX_POOL_NODES)
    if min_count is not None and max_count is not None and min_count > max_count:
        out.add(
            join(prefix, "min_count"),
            f"{min_count!r} is not allowed: must be at most max_count ({max_count}) (autoscaler range min..max)",
        )
    sizing_pool = parse_surge(out, prefix, spec, max_count)
    for i, zone in enumerate(spec.zones):
        if zone not in ZONES:
            out.add(join(prefix, f"zones[{i}]"), f"{zone!r} is not allowed: one of {', '.join(ZONES)}")
    if len(set(spec.zones)) != len(spec.zones):
        out.add(join(prefix, "zones"), f"{list(spec.zones)!r} is not allowed: each zone at most once")
    if spec.os_sku not in LINUX_OS_SKUS:
        out.add(
            join(prefix, "os_sku"),
            f"{spec.os_sku!r} is not allowed: one of {', '.join(LINUX_OS_SKUS)} (Linux: the tuning agent and "
            "linuxOSConfig are Linux-only)",
        )
    if spec.max_pods is not None:
        whole_in(out, join(prefix, "max_pods"), spec.max_pods, *MAX_PODS_RANGE)
    try:
        profile: Profile | None = resolve_profile(spec.profile)
    except LookupError as exc:
        out.add(join(prefix, "profile"), f"{spec.profile!r} is not allowed: {exc}".replace("profile: ", "", 1))
        profile = None
    labels = check_labels(out, prefix, spec.labels, profile.name if profile else None)
    check_taints(out, prefix, spec.taints)
    aks: dict[str, int | str] = {}
    left: tuple[str, ...] = ()
    if profile is not None:
        aks, left = split_sysctls(out, prefix, profile, spec.extra_sysctls)
    if out.problems or instance is None or profile is None or sizing_pool is None:
        return None, out.problems
    notes: list[str] = []
    if not instance.network_optimised:
        notes.append(f"Not network-optimised, allowed because: {spec.allow_non_network_optimised}")
    return (
        PoolPlan(
            spec=spec,
            instance=instance,
            profile=profile,
            surge_nodes=sizing_pool.surge_nodes,
            sizing_pool=sizing_pool,
            labels=labels,
            aks_sysctls=aks,
            left_to_agent=left,
            notes=tuple(notes),
        ),
        [],
    )


def plan_pool(spec: NodePoolSpec) -> PoolPlan:
    """The plan of a standalone pool, or :class:`InvalidArgsError` with every problem."""
    plan, problems = check_pool(spec)
    if problems or plan is None:
        raise InvalidArgsError("NetworkOptimizedNodePool", problems)
    return plan

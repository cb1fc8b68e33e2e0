"""Pure validation and derivation behind the AKS components: no Pulumi import.

Every function here takes plain values (the args dataclasses of :mod:`wirespeed.azure.spec`), checks every
field, and either returns a plan (what the components register) or raises one :class:`InvalidArgsError` listing
every problem as (property path, reason naming the value and the allowed range). The components turn that into
a single ``pulumi.InputPropertiesError`` before any resource registers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wirespeed import catalog
from wirespeed.azure import aks_sysctls
from wirespeed.azure.spec import (
    LINUX_OS_SKUS,
    PROFILE_LABEL,
    TAINT_EFFECTS,
    ZONES,
    ClusterSpec,
    NodePoolSpec,
    OutboundSpec,
    SnatAlertSpec,
)
from wirespeed.manifests.options import DEFAULT_IMAGE, NodeTuningOptions, check_options
from wirespeed.profile import Profile
from wirespeed.profiles import builtin_profile
from wirespeed.sizing import azure_lb, nat_gateway
from wirespeed.sizing.errors import InfeasibleError, SizingError

# learn.microsoft.com/azure/aks/create-node-pools ("Limitations"): a Linux pool name is 1-12 lowercase
# alphanumerics starting with a letter.
POOL_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]{0,11}$")
# learn.microsoft.com/azure/aks/azure-cni-overview ("Maximum pods per node"): 10..250 for every network plugin.
MAX_PODS_RANGE = (10, 250)
# learn.microsoft.com/azure/virtual-network/accelerated-networking-overview ("Supported VM instances"): VM sizes
# with two or more vCPUs whose NIC is a VF the host passes through (Mellanox ConnectX or MANA).
ACCELERATED_NETWORKING_NICS = ("mana", "mellanox-or-mana")
ACCELERATED_NETWORKING_MIN_VCPU = 2
# learn.microsoft.com/azure/aks/configure-load-balancer-standard and the NAT gateway profile in the 2025-09-01
# API: outbound idle timeout 4..120 minutes; defaults 30 (load balancer) and 4 (NAT gateway).
IDLE_TIMEOUT_RANGE = (4, 120)
LB_DEFAULT_IDLE_TIMEOUT = 30
NAT_DEFAULT_IDLE_TIMEOUT = 4
# Azure Monitor metric alerts take severity 0 (critical) .. 4 (verbose) (Microsoft.Insights/metricAlerts).
SEVERITY_RANGE = (0, 4)
# Inputs of Microsoft.ContainerService/managedClusters/agentPools that AKS only takes at creation: a change
# replaces the pool (new VMs). Engine paths, each with its reason, for `wirespeed plan` to print.
REPLACE_ON_CHANGE: tuple[tuple[str, str], ...] = (
    ("linuxOSConfig", "node OS settings (sysctls) are applied when the VM is built (AKS custom node configuration)"),
    ("vmSize", "a pool's VM size cannot change in place (AKS: resize by adding a pool)"),
    ("availabilityZones", "zones are fixed when the pool's scale set is created"),
    ("maxPods", "pod IP capacity is reserved per node at creation"),
)


@dataclass(frozen=True)
class Problem:
    """One bad input: where it is (``pools[1].max_surge``) and why, naming the value and what is allowed."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class InvalidArgsError(ValueError):
    """Every problem found in a component's args, raised once before anything registers."""

    def __init__(self, component: str, problems: Sequence[Problem]):
        self.component = component
        self.problems = tuple(problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{component}: {len(self.problems)} invalid input(s):\n{lines}")


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
    def autoscaling(self) -> bool:
        return self.spec.min_count < self.spec.max_count

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


@dataclass(frozen=True)
class OutboundPlan:
    """The cluster's outbound: a load balancer profile or a managed NAT gateway, sized over every pool."""

    type: str
    idle_timeout_minutes: int
    load_balancer: azure_lb.LoadBalancerPlan | None = None
    nat_gateway: nat_gateway.NatGatewayPlan | None = None
    nat_gateway_ips: int = 0
    ip_mode: str = "managed"
    existing_ip_ids: tuple[str, ...] = ()
    existing_prefix_ids: tuple[str, ...] = ()

    @property
    def outbound_ips(self) -> int:
        if self.load_balancer is not None:
            return self.load_balancer.outbound_ips
        return self.nat_gateway_ips

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "idle_timeout_minutes": self.idle_timeout_minutes}
        if self.load_balancer is not None:
            out.update(ip_mode=self.ip_mode, load_balancer=self.load_balancer.to_json())
        else:
            out.update(ips=self.nat_gateway_ips, nat_gateway=self.nat_gateway.to_json() if self.nat_gateway else None)
        return out

    def explain(self) -> str:
        if self.load_balancer is not None:
            return self.load_balancer.explain()
        if self.nat_gateway is not None:
            return self.nat_gateway.explain()
        return f"Managed NAT gateway with {self.nat_gateway_ips} IP(s) (given explicitly)."


@dataclass(frozen=True)
class SnatAlertPlan:
    """A static threshold on ``UsedSnatPorts`` (max per backend IP) against the explicit allocated ports."""

    threshold_percent: float
    allocated_ports: int
    threshold_ports: int
    severity: int
    window_size: str
    evaluation_frequency: str
    action_group_ids: tuple[str, ...]


@dataclass(frozen=True)
class ClusterPlan:
    system_pool: PoolPlan
    pools: tuple[PoolPlan, ...]
    outbound: OutboundPlan
    snat_alert: SnatAlertPlan | None
    profiles: tuple[Profile, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "system_pool": self.system_pool.to_json(),
            "pools": [p.to_json() for p in self.pools],
            "outbound": self.outbound.to_json(),
            "snat_alert": None
            if self.snat_alert is None
            else {
                "threshold_percent": self.snat_alert.threshold_percent,
                "threshold_ports": self.snat_alert.threshold_ports,
            },
            "profiles": [p.name for p in self.profiles],
        }


@dataclass
class _Collector:
    problems: list[Problem] = field(default_factory=list)

    def add(self, path: str, reason: str) -> None:
        self.problems.append(Problem(path, reason))


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _is_whole(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _whole_in(out: _Collector, path: str, value: object, low: int, high: int) -> int | None:
    if not isinstance(value, int | float) or not _is_whole(value) or not low <= value <= high:
        out.add(path, f"{value!r} is not allowed: must be a whole number between {low:,} and {high:,}")
        return None
    return int(value)


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
    same = [
        t
        for t in catalog.instance_types(cloud="azure", network_optimised=True)
        if t.vcpu == instance.vcpu and t.architecture == instance.architecture
    ]
    return [t.name for t in sorted(same, key=lambda t: (-t.baseline_gbps, t.name))[:3]]


def _check_vm_size(out: _Collector, prefix: str, spec: NodePoolSpec) -> catalog.InstanceType | None:
    path = _join(prefix, "vm_size")
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
            _join(prefix, "allow_non_network_optimised"),
            f"{reason!r} is not allowed: a written reason (non-empty text) or None",
        )
    elif not instance.network_optimised and reason is None:
        better = ", ".join(_network_optimised_alternatives(instance)) or "a v6 (MANA) size"
        out.add(
            path,
            f"{instance.name!r} is not allowed: not network-optimised (NIC {instance.nic}, "
            f"{instance.max_bandwidth_mbps:,} Mb/s); use a MANA size such as {better}, or set "
            "allow_non_network_optimised to the reason this pool may use it",
        )
    return instance


def _parse_surge(out: _Collector, prefix: str, spec: NodePoolSpec, max_count: int | None) -> azure_lb.Pool | None:
    path = _join(prefix, "max_surge")
    text = spec.max_surge.strip() if isinstance(spec.max_surge, str) else ""
    # At least one surge node: wirespeed leaves maxUnavailable at its API default 0, and AKS refuses an upgrade
    # setting where both are 0 (learn.microsoft.com/azure/aks/upgrade-aks-cluster, "Customize node surge upgrade").
    bound = f" ({max_count})" if max_count is not None else ""
    allowed = f"a node count from 1 to max_count{bound} or a percent above 0% up to 100% (e.g. '1' or '10%')"
    percent = text.endswith("%")
    number = text[:-1] if percent else text
    try:
        value = float(number) if percent else int(number)
    except ValueError:
        out.add(path, f"{spec.max_surge!r} is not allowed: {allowed}")
        return None
    if value <= 0 or (percent and value > 100) or (not percent and max_count is not None and value > max_count):
        out.add(path, f"{spec.max_surge!r} is not allowed: {allowed}")
        return None
    if max_count is None:
        return None
    return azure_lb.Pool(max_count, value, surge_is_percent=percent, name=spec.name)


def _check_labels(out: _Collector, prefix: str, spec: NodePoolSpec, profile_name: str | None) -> dict[str, str]:
    labels = dict(spec.labels)
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            out.add(_join(prefix, f"labels[{key!r}]"), f"{value!r} is not allowed: labels map text to text")
    given = labels.get(PROFILE_LABEL)
    if profile_name is not None:
        if given is not None and given != profile_name:
            out.add(
                _join(prefix, f"labels[{PROFILE_LABEL!r}]"),
                f"{given!r} is not allowed: it must equal the pool's profile {profile_name!r} (the DaemonSet "
                "selects nodes by it); leave it out and it is set for you",
            )
        labels[PROFILE_LABEL] = profile_name
    return labels


def _check_taints(out: _Collector, prefix: str, spec: NodePoolSpec) -> None:
    for i, taint in enumerate(spec.taints):
        key_value, _, effect = taint.rpartition(":") if isinstance(taint, str) else ("", "", "")
        if not key_value or effect not in TAINT_EFFECTS:
            out.add(
                _join(prefix, f"taints[{i}]"),
                f"{taint!r} is not allowed: KEY[=VALUE]:EFFECT with EFFECT one of {', '.join(TAINT_EFFECTS)}",
            )


def _split_sysctls(
    out: _Collector, prefix: str, profile: Profile, extra: Mapping[str, int | str]
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
            out.add(_join(prefix, f"profile.sysctls[{name!r}]"), problem)
        else:
            aks[name] = value
    for name, extra_value in extra.items():
        path = _join(prefix, f"extra_sysctls[{name!r}]")
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
    out = _Collector()
    if not isinstance(spec.name, str) or not POOL_NAME_PATTERN.match(spec.name):
        out.add(
            _join(prefix, "name"),
            f"{spec.name!r} is not allowed: 1-12 lowercase letters and digits, starting with a letter (AKS pool name)",
        )
    instance = _check_vm_size(out, prefix, spec)
    min_low = 1 if system else 0
    min_count = _whole_in(out, _join(prefix, "min_count"), spec.min_count, min_low, azure_lb.MAX_POOL_NODES)
    max_count = _whole_in(out, _join(prefix, "max_count"), spec.max_count, 1, azure_lb.MAX_POOL_NODES)
    if min_count is not None and max_count is not None and min_count > max_count:
        out.add(
            _join(prefix, "min_count"),
            f"{min_count!r} is not allowed: must be at most max_count ({max_count}) (autoscaler range min..max)",
        )
    sizing_pool = _parse_surge(out, prefix, spec, max_count)
    for i, zone in enumerate(spec.zones):
        if zone not in ZONES:
            out.add(_join(prefix, f"zones[{i}]"), f"{zone!r} is not allowed: one of {', '.join(ZONES)}")
    if len(set(spec.zones)) != len(spec.zones):
        out.add(_join(prefix, "zones"), f"{list(spec.zones)!r} is not allowed: each zone at most once")
    if spec.os_sku not in LINUX_OS_SKUS:
        out.add(
            _join(prefix, "os_sku"),
            f"{spec.os_sku!r} is not allowed: one of {', '.join(LINUX_OS_SKUS)} (Linux: the tuning agent and "
            "linuxOSConfig are Linux-only)",
        )
    if spec.max_pods is not None:
        _whole_in(out, _join(prefix, "max_pods"), spec.max_pods, *MAX_PODS_RANGE)
    try:
        profile: Profile | None = resolve_profile(spec.profile)
    except LookupError as exc:
        out.add(_join(prefix, "profile"), f"{spec.profile!r} is not allowed: {exc}".replace("profile: ", "", 1))
        profile = None
    labels = _check_labels(out, prefix, spec, profile.name if profile else None)
    _check_taints(out, prefix, spec)
    aks: dict[str, int | str] = {}
    left: tuple[str, ...] = ()
    if profile is not None:
        aks, left = _split_sysctls(out, prefix, profile, spec.extra_sysctls)
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


def _check_outbound(out: _Collector, spec: OutboundSpec, pools: Sequence[azure_lb.Pool] | None) -> OutboundPlan | None:
    prefix = "outbound"
    if spec.type not in ("loadBalancer", "managedNATGateway"):
        out.add(_join(prefix, "type"), f"{spec.type!r} is not allowed: 'loadBalancer' or 'managedNATGateway'")
        return None
    default_timeout = LB_DEFAULT_IDLE_TIMEOUT if spec.type == "loadBalancer" else NAT_DEFAULT_IDLE_TIMEOUT
    timeout_given = spec.idle_timeout_minutes if spec.idle_timeout_minutes is not None else default_timeout
    timeout = _whole_in(out, _join(prefix, "idle_timeout_minutes"), timeout_given, *IDLE_TIMEOUT_RANGE)
    if spec.type == "managedNATGateway":
        return _check_nat_gateway(out, spec, timeout)
    return _check_load_balancer(out, spec, pools, timeout)


def _check_nat_gateway(out: _Collector, spec: OutboundSpec, timeout: int | None) -> OutboundPlan | None:
    prefix = "outbound"
    for name in ("allocated_outbound_ports", "connections_per_second", "outbound_ip_count"):
        if getattr(spec, name) is not None:
            out.add(_join(prefix, name), f"{getattr(spec, name)!r} is not allowed with managedNATGateway: "
                    "load balancer setting (a NAT gateway allocates ports on demand)")  # fmt: skip
    if spec.existing_ip_ids or spec.existing_prefix_ids or spec.ip_mode != "managed":
        out.add(_join(prefix, "ip_mode"), f"{spec.ip_mode!r} is not allowed with managedNATGateway: only 'managed' "
                "(AKS creates the NAT gateway's IPs)")  # fmt: skip
    given = (spec.nat_gateway_ip_count is not None) + (spec.nat_gateway_flows is not None)
    if given != 1:
        out.add(
            _join(prefix, "nat_gateway_ip_count"),
            "give exactly one of nat_gateway_ip_count (1..16) or nat_gateway_flows (concurrent outbound flows)",
        )
        return None
    sized: nat_gateway.NatGatewayPlan | None = None
    if spec.nat_gateway_ip_count is not None:
        ips = _whole_in(out, _join(prefix, "nat_gateway_ip_count"), spec.nat_gateway_ip_count, 1,
                        nat_gateway.AZURE_MAX_IPS)  # fmt: skip
    else:
        try:
            sized = nat_gateway.plan_azure_nat_gateway(spec.nat_gateway_flows)  # type: ignore[arg-type]
            ips = sized.ips
        except (SizingError, InfeasibleError) as exc:
            out.add(_join(prefix, "nat_gateway_flows"), str(exc).removeprefix("flows: "))
            ips = None
    if ips is None or timeout is None:
        return None
    return OutboundPlan(type=spec.type, idle_timeout_minutes=timeout, nat_gateway=sized, nat_gateway_ips=ips)


def _check_load_balancer(
    out: _Collector, spec: OutboundSpec, pools: Sequence[azure_lb.Pool] | None, timeout: int | None
) -> OutboundPlan | None:
    prefix = "outbound"
    for name in ("nat_gateway_ip_count", "nat_gateway_flows"):
        if getattr(spec, name) is not None:
            out.add(
                _join(prefix, name), f"{getattr(spec, name)!r} is not allowed with loadBalancer: NAT gateway setting"
            )
    if (spec.allocated_outbound_ports is None) == (spec.connections_per_second is None):
        out.add(
            _join(prefix, "allocated_outbound_ports"),
            f"{spec.allocated_outbound_ports!r} is not allowed: give exactly one of allocated_outbound_ports "
            "(8..64,000, a multiple of 8; never 0, Azure's shrinking default) or connections_per_second (a workload)",
        )
        return None
    fixed_ips = _check_ip_mode(out, spec)
    workload: azure_lb.Workload | None = None
    if spec.connections_per_second is not None:
        try:
            workload = azure_lb.Workload(spec.connections_per_second, spec.hold_seconds, spec.headroom)
        except SizingError as exc:
            out.add(_join(prefix, exc.field), f"{exc.value!r} is not allowed: {exc.allowed}")
            return None
    else:
        ports = spec.allocated_outbound_ports
        if (
            not isinstance(ports, int | float)
            or not _is_whole(ports)
            or not 8 <= ports <= azure_lb.MAX_PORTS_PER_NODE
            or int(ports) % 8
        ):
            out.add(
                _join(prefix, "allocated_outbound_ports"),
                f"{ports!r} is not allowed: a multiple of 8 between 8 and 64,000 (0 would hand the choice to "
                "Azure, which halves it as the pool grows)",
            )
            return None
    if pools is None or timeout is None or fixed_ips is False:
        return None
    try:
        plan = azure_lb.plan_load_balancer(
            pools,
            ports=int(spec.allocated_outbound_ports) if spec.allocated_outbound_ports is not None else None,
            workload=workload,
            outbound_ips=fixed_ips if isinstance(fixed_ips, int) else None,
        )
    except InfeasibleError as exc:
        out.add(prefix, f"infeasible: {exc}")
        return None
    except SizingError as exc:
        out.add(_join(prefix, exc.field), f"{exc.value!r} is not allowed: {exc.allowed}")
        return None
    if not plan.feasible:
        out.add(
            _join(prefix, "outbound_ip_count" if spec.ip_mode != "existing" else "existing_ip_ids"),
            f"infeasible: {plan.allocated_outbound_ports:,} ports x {plan.nodes_at_max:,} nodes (maxCount + surge "
            f"of every pool) = {plan.ports_required:,} required but {plan.outbound_ips} IP(s) x "
            f"{azure_lb.PORTS_PER_IP:,} = {plan.ports_available:,} available; AKS would reject it "
            "(InvalidLoadBalancerProfileAllocatedOutboundPorts): add IPs or lower the ports per node",
        )
        return None
    return OutboundPlan(
        type=spec.type,
        idle_timeout_minutes=timeout,
        load_balancer=plan,
        ip_mode=spec.ip_mode,
        existing_ip_ids=tuple(spec.existing_ip_ids),
        existing_prefix_ids=tuple(spec.existing_prefix_ids),
    )


def _check_ip_mode(out: _Collector, spec: OutboundSpec) -> int | bool | None:
    """The fixed IP count (None: minimise it), or False when the IP settings are invalid."""
    prefix = "outbound"
    before = len(out.problems)
    if spec.ip_mode not in ("managed", "created", "existing"):
        out.add(_join(prefix, "ip_mode"), f"{spec.ip_mode!r} is not allowed: 'managed', 'created' or 'existing'")
        return False
    count: int | None = None
    if spec.outbound_ip_count is not None:
        count = _whole_in(out, _join(prefix, "outbound_ip_count"), spec.outbound_ip_count, 1,
                          azure_lb.MAX_OUTBOUND_IPS)  # fmt: skip
    if spec.ip_mode != "existing":
        if spec.existing_ip_ids or spec.existing_prefix_ids:
            out.add(
                _join(prefix, "existing_ip_ids"),
                f"not allowed with ip_mode {spec.ip_mode!r}: set ip_mode 'existing' to use your own IPs or prefixes",
            )
        return False if len(out.problems) > before else count
    if bool(spec.existing_ip_ids) == bool(spec.existing_prefix_ids):
        out.add(
            _join(prefix, "existing_ip_ids"),
            "give exactly one of existing_ip_ids or existing_prefix_ids with ip_mode 'existing' (AKS takes one)",
        )
        return False
    if spec.existing_ip_ids:
        n = len(spec.existing_ip_ids)
        if count is not None and count != n:
            out.add(_join(prefix, "outbound_ip_count"), f"{count!r} is not allowed: {n} existing IP ID(s) given")
        if n > azure_lb.MAX_OUTBOUND_IPS:
            out.add(_join(prefix, "existing_ip_ids"), f"{n} IDs is not allowed: at most {azure_lb.MAX_OUTBOUND_IPS}")
        count = n
    elif count is None:
        out.add(
            _join(prefix, "outbound_ip_count"),
            "None is not allowed with existing_prefix_ids: the number of IPs the prefixes hold (1..100), so the "
            "ports can be checked against them",
        )
    return False if len(out.problems) > before else count


def _check_alert(out: _Collector, spec: SnatAlertSpec | None, outbound: OutboundPlan | None,
                 outbound_type: str) -> SnatAlertPlan | None:  # fmt: skip
    if spec is None:
        return None
    prefix = "snat_alert"
    if outbound_type != "loadBalancer":
        out.add(prefix, "not allowed with managedNATGateway: the alert watches the load balancer's SNAT ports")
        return None
    pct = spec.threshold_percent
    if isinstance(pct, bool) or not isinstance(pct, int | float) or not 1 <= pct <= 99:
        out.add(_join(prefix, "threshold_percent"), f"{pct!r} is not allowed: between 1 and 99 (percent of ports)")
        return None
    severity = _whole_in(out, _join(prefix, "severity"), spec.severity, *SEVERITY_RANGE)
    if severity is None or outbound is None or outbound.load_balancer is None:
        return None
    ports = outbound.load_balancer.allocated_outbound_ports
    return SnatAlertPlan(
        threshold_percent=float(pct),
        allocated_ports=ports,
        threshold_ports=max(1, math.floor(ports * pct / 100)),
        severity=severity,
        window_size=spec.window_size,
        evaluation_frequency=spec.evaluation_frequency,
        action_group_ids=tuple(spec.action_group_ids),
    )


def _unique_names(out: _Collector, named: Iterable[tuple[str, str]]) -> None:
    seen: dict[str, str] = {}
    for path, name in named:
        if name in seen:
            out.add(path, f"{name!r} is not allowed: {seen[name]} already uses that pool name")
        else:
            seen[name] = path


def plan_outbound(pools: Sequence[NodePoolSpec], outbound: OutboundSpec) -> OutboundPlan:
    """Outbound for pools the caller defines elsewhere (``outbound_profile``): every pool counts, with surge."""
    out = _Collector()
    sizing: list[azure_lb.Pool] = []
    for i, spec in enumerate(pools):
        pool = _parse_surge(out, f"pools[{i}]", spec, _whole_in(out, f"pools[{i}].max_count", spec.max_count, 1,
                                                                 azure_lb.MAX_POOL_NODES))  # fmt: skip
        if pool is not None:
            sizing.append(pool)
    if not pools:
        out.add("pools", "[] is not allowed: at least one pool (every pool behind the load balancer counts)")
    plan = _check_outbound(out, outbound, sizing if not out.problems else None)
    if out.problems or plan is None:
        raise InvalidArgsError("outbound_profile", out.problems)
    return plan


def _distinct_profiles(out: _Collector, pools: Sequence[tuple[str, PoolPlan | None]]) -> dict[str, Profile]:
    """One profile per name: the DaemonSet of a name applies one document to every node labelled with it."""
    profiles: dict[str, Profile] = {}
    for path, plan in pools:
        if plan is None:
            continue
        seen = profiles.setdefault(plan.profile.name, plan.profile)
        if seen != plan.profile:
            out.add(
                _join(path, "profile"),
                f"{plan.profile.name!r} is not allowed: another pool uses a different profile of that name "
                "(the DaemonSet for a name applies one profile); rename one",
            )
    return profiles


def plan_cluster(spec: ClusterSpec) -> ClusterPlan:
    """Validate a whole cluster (system pool, user pools, outbound, alert); one InvalidArgsError with every problem."""
    out = _Collector()
    system, problems = check_pool(spec.system_pool, "system_pool", system=True)
    out.problems.extend(problems)
    plans: list[PoolPlan] = []
    for i, pool in enumerate(spec.pools):
        plan, problems = check_pool(pool, f"pools[{i}]")
        out.problems.extend(problems)
        if plan is not None:
            plans.append(plan)
    _unique_names(
        out,
        [("system_pool.name", spec.system_pool.name)]
        + [(f"pools[{i}].name", p.name) for i, p in enumerate(spec.pools)],
    )
    all_valid = not out.problems and system is not None
    sizing = [p.sizing_pool for p in ([system] if system else []) + plans] if all_valid else None
    outbound = _check_outbound(out, spec.outbound, sizing)
    alert = _check_alert(out, spec.snat_alert, outbound, spec.outbound.type)
    if not isinstance(spec.location, str) or not spec.location.strip():
        out.add("location", f"{spec.location!r} is not allowed: an Azure region name, e.g. 'westeurope'")
    profiles = _distinct_profiles(out, [("system_pool", system)] + [(f"pools[{i}]", p) for i, p in enumerate(plans)])
    if spec.tuning:
        # NodeTuning checks these itself, but only after the cluster has registered: check them first.
        options = NodeTuningOptions(image=spec.tuning_image or DEFAULT_IMAGE, namespace=spec.tuning_namespace)
        for problem in check_options(options):
            out.add(f"tuning_{problem.field}", f"{problem.value!r} is not allowed: {problem.allowed}")
    if out.problems or system is None or outbound is None:
        raise InvalidArgsError("NetworkOptimizedCluster", out.problems)
    return ClusterPlan(
        system_pool=system, pools=tuple(plans), outbound=outbound, snat_alert=alert, profiles=tuple(profiles.values())
    )

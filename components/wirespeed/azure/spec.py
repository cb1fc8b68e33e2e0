# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""The AKS components' arguments as plain dataclasses: no Pulumi import, so plans and policies can share them.

Every field documents its default, its allowed range and what it conflicts with. The Pulumi components
(:mod:`wirespeed.azure.components`) add only what needs the engine (resource group and cluster names that may
be outputs); everything here is validated at once by :mod:`wirespeed.azure._validate`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from wirespeed.manifests.node_tuning import PROFILE_LABEL
from wirespeed.sizing import azure_lb, snat_limits

if TYPE_CHECKING:
    from wirespeed.profile import Profile

__all__ = ["PROFILE_LABEL", "AutoProvisionedPoolSpec", "ClusterSpec", "NodePoolSpec", "OutboundSpec", "SnatAlertSpec"]
# Linux OS SKUs of the pinned API (pulumi-azure-native 3.29.0, containerservice OSSKU, API 2025-09-01), minus the
# deprecated CBLMariner: the agent and linuxOSConfig are Linux-only.
LINUX_OS_SKUS = ("Ubuntu", "Ubuntu2204", "AzureLinux", "AzureLinux3")
# Kubernetes taint effects (kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration).
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# Azure availability zone names.
ZONES = ("1", "2", "3")

OutboundType = Literal["loadBalancer", "managedNATGateway"]
IpMode = Literal["managed", "created", "existing"]


@dataclass(frozen=True, kw_only=True)
class NodePoolSpec:
    """One network-optimised AKS node pool.

    ``linux_os_config`` (the AKS sysctls derived from ``profile`` and ``extra_sysctls``), ``vm_size``, ``zones``
    and ``max_pods`` are create-only: changing one replaces the pool (new VMs). The component lists them in its
    ``replace_on_change`` output so ``wirespeed plan`` can warn.
    """

    name: str
    """AKS pool name. Required. 1-12 lowercase letters and digits, starting with a letter; unique in the cluster."""

    vm_size: str
    """Azure VM size, e.g. ``Standard_D16s_v6``. Required. Looked up in wirespeed's catalog (``Standard_`` prefix
    and case optional). Refused unless network-optimised (a v6 MANA size) or ``allow_non_network_optimised`` gives
    a reason; refused always when the size cannot have accelerated networking or is not in the catalog."""

    min_count: int = 1
    """Autoscaler minimum. Default 1. 0..1,000 (1..1,000 for the system pool); at most ``max_count``. Equal to
    ``max_count`` means a fixed-size pool (autoscaling off)."""

    max_count: int = 3
    """Autoscaler maximum. Default 3. 1..1,000. Counted in outbound sizing together with ``max_surge``."""

    max_surge: str = "10%"
    """Extra nodes during an upgrade: a node count (``"2"``, 1..``max_count``) or a percent of the pool
    (``"10%"``, above 0 up to 100, rounded up). Default ``"10%"`` (the AKS API default). Not 0: maxUnavailable
    stays 0 and AKS refuses both at 0. Counted in outbound sizing: AKS requires ports for maxCount + surge of
    every pool."""

    zones: Sequence[str] = ()
    """Availability zones, each of ``"1"``, ``"2"``, ``"3"``. Default none (regional). Create-only."""

    os_sku: str = "Ubuntu"
    """Node OS: ``Ubuntu`` (default), ``Ubuntu2204``, ``AzureLinux``, ``AzureLinux3``. Windows is refused."""

    max_pods: int | None = None
    """Pods per node, 10..250. Default None (AKS's default for the network plugin). Create-only."""

    profile: str | Profile = "throughput"
    """Tuning profile: a built-in name (``throughput``, ``balanced``) or a :class:`wirespeed.profile.Profile`.
    Default ``throughput``. Sets the node label ``wirespeed.io/profile`` and the AKS sysctls it can."""

    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra node labels. ``wirespeed.io/profile`` is added; setting it to another value than the profile's name
    is refused (the DaemonSet selects nodes by it)."""

    taints: Sequence[str] = ()
    """Node taints as ``KEY[=VALUE]:EFFECT`` (EFFECT NoSchedule, PreferNoSchedule or NoExecute). Default none.
    The tuning DaemonSet tolerates every taint."""

    extra_sysctls: Mapping[str, int | str] = field(default_factory=dict)
    """More sysctls for AKS to set at node creation, by kernel name (``net.core.somaxconn``), within AKS's ranges
    (:mod:`wirespeed.sizing.aks_sysctls`). Default none. A name the profile already sets is refused. Create-only."""

    allow_non_network_optimised: str | None = None
    """Why this pool may use a size that is not network-optimised (e.g. ``"GPU pool, egress is light"``).
    Default None: such sizes are refused. Must be non-empty text, at most 256 characters, when given; shown in the
    plan and recorded on the pool as the tag ``wirespeed.io.not-network-optimised-reason`` (a tag value holds 256),
    which the policy rule network-optimised-sku accepts (unless its setting acceptWrittenReason is false)."""


@dataclass(frozen=True, kw_only=True)
class AutoProvisionedPoolSpec:
    """Node auto-provisioning (NAP, Karpenter on AKS) capacity on network-optimised sizes only.

    Two objects: an ``AKSNodeClass`` (``karpenter.azure.com/v1beta1``) whose ``linuxOSConfig.sysctls`` carry the
    profile's sysctls AKS can set (karpenter-provider-azure v1.10.0 or later), and a ``karpenter.sh/v1``
    ``NodePool`` whose requirements admit only the SKU series of the catalog's network-optimised families
    (``karpenter.azure.com/sku-family``, ``sku-version`` and ``sku-series``, e.g. ``D``, ``6``, ``Ds_v6``), labelled
    ``wirespeed.io/profile`` for the tuning DaemonSet. Rings, MTU and sysctls the node class cannot carry are left
    to the node agent (``left_to_agent``). Changing the node class drifts its nodes: Karpenter replaces them
    within the disruption budget. The node class is annotated ``wirespeed.io/line-rate-gbps`` with the fastest
    admitted size's line rate, which the backlog gate holds its ``linuxOSConfig`` to.

    Outbound SNAT counts the pool at ``floor(cpu_limit / vCPUs of the smallest admitted size)`` nodes plus the
    disruption budget of that (``wirespeed.sizing.nap``).
    """

    name: str
    """Kubernetes name of the NodePool and its AKSNodeClass. Required. An RFC 1123 label: lowercase letters,
    digits and ``-``, 1-63 characters, starting and ending with a letter or digit."""

    cpu_limit: int
    """NodePool ``limits.cpu``: the most vCPUs the pool may run, 1..1,000,000. Required: it is the pool's only
    bound, and outbound sizing derives the node ceiling from it."""

    profile: str | Profile = "throughput"
    """Tuning profile: a built-in name or a :class:`wirespeed.profile.Profile`. Default ``throughput``. Sets the
    node label ``wirespeed.io/profile`` and the AKSNodeClass sysctls it can."""

    families: Sequence[str] | None = None
    """Catalog families the pool may launch (``Dsv6``, ``Ddsv6``, ``Esv6``...). Default None: every
    network-optimised family of the chosen architectures in wirespeed's catalog. A family that is not
    network-optimised needs ``not_network_optimised_reason``."""

    architectures: Sequence[str] = ("x86_64",)
    """``x86_64`` and/or ``arm64`` (Dpsv6, Dplsv6: Cobalt 100). Default x86_64 only."""

    min_vcpu: int | None = None
    """Smallest size to launch, in vCPUs (requirement ``karpenter.azure.com/sku-cpu`` Gt ``min_vcpu - 1``), 2..1,000.
    Default None: any size of the admitted families. Raising it lowers the node ceiling outbound sizing counts."""

    max_vcpu: int | None = None
    """Largest size to launch, in vCPUs (``sku-cpu`` Lt ``max_vcpu + 1``), at least ``min_vcpu``. Default None."""

    capacity_types: Sequence[str] = ("on-demand",)
    """``on-demand`` and/or ``spot`` (requirement ``karpenter.sh/capacity-type``). Default on-demand."""

    disruption_budget: str = "10%"
    """NodePool ``spec.disruption.budgets[0].nodes``: how many nodes Karpenter may replace at once, a count
    (``"2"``) or a percent (``"10%"``, Karpenter's default). Counted as surge in outbound sizing."""

    image_family: str = "Ubuntu"
    """AKSNodeClass ``imageFamily``: ``Ubuntu`` (default), ``Ubuntu2204``, ``Ubuntu2404`` or ``AzureLinux``."""

    max_pods: int | None = None
    """AKSNodeClass ``maxPods``, 10..250. Default None (250 with Azure CNI Overlay)."""

    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra node labels. ``wirespeed.io/profile`` is set from the profile; labels in Karpenter's and AKS's domains
    (``karpenter.sh``, ``karpenter.azure.com``, ``kubernetes.azure.com``) are refused."""

    taints: Sequence[str] = ()
    """Node taints as ``KEY[=VALUE]:EFFECT`` (EFFECT NoSchedule, PreferNoSchedule or NoExecute). Default none."""

    extra_sysctls: Mapping[str, int | str] = field(default_factory=dict)
    """More sysctls for the AKSNodeClass, by kernel name, within AKS's ranges (:mod:`wirespeed.sizing.aks_sysctls`).
    A name the profile already sets is refused."""

    not_network_optimised_reason: str | None = None
    """Why families outside the network-optimised ones are acceptable here (at most 256 characters). Recorded, only
    when a family needs it, as the NodePool annotation ``wirespeed.io.not-network-optimised-reason``, which the
    policy rule network-optimised-sku accepts."""


@dataclass(frozen=True, kw_only=True)
class OutboundSpec:
    """The cluster's egress: a Standard Load Balancer with explicit SNAT ports, or a managed NAT gateway.

    Load balancer: give exactly one of ``allocated_outbound_ports``, ``connections_per_second`` or
    ``measured_peak_ports_per_node`` (with ``measured_from``). The IP count is minimised for the ports x (maxCount +
    surge of every pool) unless ``outbound_ip_count`` fixes it (then it is checked). ``outbound_type`` is create-only
    on AKS.
    """

    type: OutboundType = "loadBalancer"
    """``loadBalancer`` (default) or ``managedNATGateway``. Create-only on AKS."""

    allocated_outbound_ports: int | None = None
    """SNAT ports per node, 8..64,000, a multiple of 8. Never 0 (Azure's default halves as the pool grows).
    Conflicts with ``connections_per_second``. Load balancer only."""

    connections_per_second: float | None = None
    """Peak new outbound connections per second per node to its busiest destination; ports are sized from it
    (rate x ``hold_seconds`` x ``headroom``). Conflicts with ``allocated_outbound_ports``. Load balancer only."""

    hold_seconds: float = azure_lb.DEFAULT_WORKLOAD_HOLD_SECONDS
    """Seconds a SNAT port stays taken per connection (lifetime + Azure's 4-minute reuse cooldown). 1..3,600."""

    measured_peak_ports_per_node: int | None = None
    """The most SNAT ports one node held to one destination, as the node agent measured it
    (``wirespeed size azure-lb --from-prometheus`` prints it); ports are sized from it x ``headroom``, rounded up to a
    multiple of 8. 1..1,000,000,000; requires ``measured_from``. Conflicts with ``allocated_outbound_ports`` and
    ``connections_per_second``. Load balancer only."""

    measured_from: str | None = None
    """Where and over what window the measured figure was taken (the source line `wirespeed size ...
    --from-prometheus` prints), shown in plans so a pull request pins what it was sized from. One line, at most 512
    characters. Required with ``measured_peak_ports_per_node``; with a NAT gateway, the provenance of
    ``nat_gateway_ip_count`` or ``nat_gateway_flows``."""

    headroom: float = azure_lb.DEFAULT_HEADROOM
    """Multiplier over the mean ports in use (``connections_per_second``) or the measured peak, 1..10. Default 1.25."""

    ip_mode: IpMode = "managed"
    """``managed`` (AKS creates the IPs, default), ``created`` (wirespeed creates Standard static zone-redundant
    public IPs you can give partners to allowlist) or ``existing`` (your IP or prefix IDs)."""

    outbound_ip_count: int | None = None
    """Fix the IP count (1..100) instead of minimising it; the ports are then checked against it. Required with
    ``existing_prefix_ids`` (the IPs the prefixes hold); must equal the number of ``existing_ip_ids``."""

    existing_ip_ids: Sequence[str] = ()
    """Public IP resource IDs (``ip_mode='existing'``). Conflicts with ``existing_prefix_ids``."""

    existing_prefix_ids: Sequence[str] = ()
    """Public IP prefix resource IDs (``ip_mode='existing'``). Conflicts with ``existing_ip_ids``."""

    idle_timeout_minutes: int | None = None
    """Outbound flow idle timeout, 4..120 minutes. Default 30 (load balancer) or 4 (NAT gateway)."""

    nat_gateway_ip_count: int | None = None
    """Managed NAT gateway IPs, 1..16. Conflicts with ``nat_gateway_flows``. NAT gateway only."""

    nat_gateway_flows: int | None = None
    """Peak concurrent outbound flows of the whole cluster; IPs sized at 64,512 ports each (max 16). Conflicts
    with ``nat_gateway_ip_count``. NAT gateway only."""

    nat_gateway_sku: str | None = None
    """The managed NAT gateway's SKU: ``Standard`` (zonal; what AKS creates on the pinned API, the default) or
    ``StandardV2`` (zone-redundant), which the component refuses until its pinned SDK can set
    ``natGatewayProfile.sku`` (see :data:`wirespeed.azure.outbound.COMPONENT_NAT_SKUS`). NAT gateway only."""


@dataclass(frozen=True, kw_only=True)
class SnatAlertSpec:
    """An Azure Monitor metric alert on the cluster load balancer's SNAT ports (the ASOS failure, seen early).

    Fires when ``UsedSnatPorts`` (maximum over backend IPs, i.e. the busiest node) passes ``threshold_percent`` of
    the explicit ``allocatedOutboundPorts`` (equal to ``AllocatedSnatPorts`` because wirespeed never leaves it at
    0). Load balancer outbound only.
    """

    threshold_percent: float = snat_limits.DEFAULT_SNAT_ALERT_PERCENT
    """Percent of the allocated ports, 1..99. Default 80."""

    severity: int = 2
    """Alert severity 0 (critical) .. 4. Default 2 (warning)."""

    window_size: str = "PT5M"
    """ISO 8601 window the maximum is taken over. Default 5 minutes."""

    evaluation_frequency: str = "PT1M"
    """ISO 8601 evaluation interval. Default 1 minute."""

    action_group_ids: Sequence[str] = ()
    """Action group resource IDs to notify. Default none (the alert shows in Azure Monitor only)."""


def default_system_pool() -> NodePoolSpec:
    """A small network-optimised system pool: 2..3 Standard_D4s_v6 (MANA), one node of surge."""
    return NodePoolSpec(name="system", vm_size="Standard_D4s_v6", min_count=2, max_count=3, max_surge="1")


@dataclass(frozen=True, kw_only=True)
class ClusterSpec:
    """A tuned AKS cluster: network-optimised pools, outbound sized over all of them, the tuning DaemonSet."""

    location: str
    """Azure region, e.g. ``westeurope``. Required."""

    system_pool: NodePoolSpec = field(default_factory=default_system_pool)
    """The system pool (critical add-ons), network-optimised like the others. Default 2..3 Standard_D4s_v6."""

    pools: Sequence[NodePoolSpec] = ()
    """User pools, each created as a :class:`NetworkOptimizedNodePool`. Names unique with the system pool."""

    outbound: OutboundSpec = field(default_factory=lambda: OutboundSpec(connections_per_second=4.0))
    """Egress. Default: load balancer sized for 4 new connections/s per node to one destination (1,200 ports,
    above Azure's 1,024 default) with AKS-managed IPs."""

    kubernetes_version: str | None = None
    """Kubernetes version; default None (AKS's default)."""

    tuning: bool = True
    """Install the tuning DaemonSet (``wirespeed.kubernetes.NodeTuning``) with the pools' profiles. Default on."""

    tuning_image: str | None = None
    """Agent image for the DaemonSet; default None (NodeTuning's documented default)."""

    tuning_namespace: str = "wirespeed-system"
    """Namespace of the DaemonSet. Default ``wirespeed-system``."""

    tuning_admission_policy: bool = True
    """Install the admission policy that lets the agent change only its own Node's annotation and conditions
    (``NodeTuningArgs.admission_policy``; Kubernetes 1.30+, so a ``kubernetes_version`` below 1.30 is refused with it).
    ``False`` only for an older cluster: the agent's RBAC then lets it patch any Node. Default on."""

    accepted_advisories: Mapping[str, str] | None = None
    """Advisory findings on the cluster this stack keeps, ``{rule id: reason}`` (e.g. ``aks-natgw-zone-redundant``
    while the pinned SDK cannot set StandardV2): written as the cluster's ``wirespeed.io.accept-RULE`` tags, which
    the policy pack and ``wirespeed check`` report as accepted. Only advisory rules; a reason of at most 256
    characters."""

    snat_alert: SnatAlertSpec | None = None
    """Metric alert on SNAT port use; default None (off). Load balancer outbound only."""

    auto_provisioned_pools: Sequence[AutoProvisionedPoolSpec] = ()
    """Node auto-provisioning pools, each created as an ``AutoProvisionedPool`` through the cluster's credentials.
    Given any, the cluster turns NAP on (``nodeProvisioningProfile`` mode ``Auto``, default NodePools ``None``, so
    only these pools launch nodes) and counts each at its node ceiling plus disruption budget in outbound sizing.
    AKS cannot enable NAP beside the cluster autoscaler: every agent pool must then be fixed-size
    (``min_count`` = ``max_count``)."""

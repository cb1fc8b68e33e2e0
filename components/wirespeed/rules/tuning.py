"""Kernel and NIC queue rules: netdev_max_backlog (AKS pools, EKS user data, tuning profiles), RX rings and
jumbo MTU in tuning profiles."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from wirespeed.catalog.karpenter_azure import LINUX_OS_CONFIG_SINCE, NODE_CLASS_TYPES
from wirespeed.rules import _aks, _k8s, _nap
from wirespeed.rules._model import Finding, Resource, Rule, Settings, is_type
from wirespeed.rules._userdata import read_user_data
from wirespeed.sizing.backlog import BACKLOG_MAX, BACKLOG_MIN
from wirespeed.sizing.mtu import DEFAULT_MTU
from wirespeed.sizing.rings import ENA_EXPRESS_RX_RING
from wirespeed.values import get, keys, plain_numbers, text, whole

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
BACKLOG_SYSCTL = "net.core.netdev_max_backlog"
AKS_BACKLOG_FIELD = "linuxOSConfig.sysctls.netCoreNetdevMaxBacklog"
# wirespeed's floor, from seed 000 (Elastic): drops in enqueue_to_backlog at the kernel default 1,000 stopped
# at 32,768; half of that still holds 2 ms of 1,500-byte packets at 100 Gb/s. The `balanced` profile (8,192,
# sized for 25 Gb/s) is below it: lower minimumBacklog for pools that use it.
DEFAULT_MINIMUM_BACKLOG = 16_384
# Seed 000 raised the Mellanox VF's RX ring 1,024 -> 8,192; seed 002 (AKS team) 1,024 -> 2,048 on Dsv3. 4,096
# is wirespeed's floor for network-optimised nodes; drivers whose max is lower are held to their max instead.
DEFAULT_MINIMUM_RX_RING = 4_096
SEED_BACKLOG = "seed 000 (Elastic: drops in enqueue_to_backlog at netdev_max_backlog 1,000, gone at 32,768)"
SEED_RINGS = "seed 000 (Elastic: RX ring 1,024 -> 8,192 on Azure's Mellanox VF); seed 002 (AKS team)"
BACKLOG_EVIDENCE = "the Elastic field report (seed 000) lost packets there at 1,000 and none at 32,768"
RING_EVIDENCE = "the Elastic field report (seed 000) lost packets at 1,024 on Azure's Mellanox VF and none at 8,192"
AKS_SYSCTL_DOC = "https://learn.microsoft.com/azure/aks/custom-node-configuration"

BACKLOG_WHY = (
    "bursts arriving through the per-CPU backlog (veth: every pod's traffic, RPS) are dropped in "
    f"enqueue_to_backlog once it is full; {BACKLOG_EVIDENCE}"
)


def _backlog_settings_schema() -> dict[str, Mapping[str, Any]]:
    return {
        "minimumBacklog": {
            "type": "integer",
            "minimum": BACKLOG_MIN,
            "maximum": BACKLOG_MAX,
            "default": DEFAULT_MINIMUM_BACKLOG,
            "description": "Smallest allowed net.core.netdev_max_backlog (AKS accepts 1,000..3,240,000).",
        }
    }


# --- netdev-backlog-minimum -------------------------------------------------------------------------------------


def _refused_backlog(resource: Resource, label: str, field: str, raw: Any) -> Finding | None:
    """A backlog AKS refuses (outside its range, or not a whole number): the pool or class never gets created."""
    if raw is None:
        return None
    value = whole(raw)
    if value is not None and BACKLOG_MIN <= value <= BACKLOG_MAX:
        return None
    shown = f"{value:,}" if value is not None else repr(plain_numbers(raw))
    return Finding(
        resource,
        f"{label}: {field} is {shown}, which AKS refuses: it accepts a whole number between {BACKLOG_MIN:,} and "
        f"{BACKLOG_MAX:,} ({AKS_SYSCTL_DOC}), so the create fails. Set it within that range (`wirespeed size "
        "backlog --line-rate-gbps N` sizes it).",
    )


def _aks_pool_backlog(resource: Resource, pool: Any, label: str, minimum: int) -> Finding | None:
    if (text(get(pool, "osType")) or "Linux").lower() == "windows":
        return None
    raw = get(pool, "linuxOSConfig", "sysctls", "netCoreNetdevMaxBacklog")
    refused = _refused_backlog(resource, label, AKS_BACKLOG_FIELD, raw)
    if refused is not None:
        return refused
    value = whole(raw)
    if value is not None and value >= minimum:
        return None
    now = f"is {value:,}" if value is not None else f"is unset (the kernel default {BACKLOG_MIN:,})"
    return Finding(
        resource,
        f"{label}: {AKS_BACKLOG_FIELD} {now}, below the minimum {minimum:,} (policy setting minimumBacklog): "
        f"{BACKLOG_WHY}. Set {AKS_BACKLOG_FIELD} to at least {minimum:,} (AKS accepts "
        f"{BACKLOG_MIN:,}..{BACKLOG_MAX:,}; `wirespeed size backlog --line-rate-gbps N` sizes it). It is "
        "create-only: changing it replaces the pool's nodes.",
    )


def _node_class_backlog(resource: Resource, minimum: int) -> Finding | None:
    """An AKSNodeClass (node auto-provisioning) sets the backlog through linuxOSConfig, as an agent pool does."""
    raw = get(resource.props, *_nap.SYSCTLS, "netCoreNetdevMaxBacklog")
    refused = _refused_backlog(resource, _nap.node_class_label(resource), _nap.NODE_CLASS_BACKLOG_FIELD, raw)
    if refused is not None:
        return refused
    value = whole(raw)
    if value is not None and value >= minimum:
        return None
    field = _nap.NODE_CLASS_BACKLOG_FIELD
    now = f"is {value:,}" if value is not None else f"is unset (the kernel default {BACKLOG_MIN:,})"
    return Finding(
        resource,
        f"{_nap.node_class_label(resource)}: {field} {now}, below the minimum {minimum:,} (policy setting "
        f"minimumBacklog): {BACKLOG_WHY}. Set {field} to at least {minimum:,} (karpenter-provider-azure "
        f"{LINUX_OS_CONFIG_SINCE} or later; AKS accepts {BACKLOG_MIN:,}..{BACKLOG_MAX:,}; `wirespeed render aks-nap` "
        "sets the profile's). A change drifts the class's nodes: Karpenter replaces them within each NodePool's "
        "disruption budget.",
    )


def _launch_template_backlog(resource: Resource, minimum: int) -> Finding | None:
    raw = text(get(resource.props, "userData"))
    if raw is None:
        return None
    user_data = read_user_data(raw)
    if not user_data.eks_node:
        return None  # not a node's launch template: nothing to say about its kernel queues
    values = user_data.backlog_values()
    if values and min(values) >= minimum:
        return None
    now = (
        f"sets {BACKLOG_SYSCTL} to {min(values):,}"
        if values
        else f"does not set {BACKLOG_SYSCTL}, so nodes keep the kernel default {BACKLOG_MIN:,}"
    )
    return Finding(
        resource,
        f"userData (EKS node) {now}, below the minimum {minimum:,} (policy setting minimumBacklog): "
        f"{BACKLOG_WHY}. Write {BACKLOG_SYSCTL}={minimum} or more from a text/x-shellscript part and to "
        "/etc/sysctl.d (as wirespeed's EKS node user data does), or run the tuning agent with a profile that "
        "sets it.",
    )


def _profile_backlog(resource: Resource, minimum: int) -> Finding | None:
    profile = _k8s.profile_in(resource)
    if profile is None:
        return None
    value = whole(get(profile.document, "sysctls", BACKLOG_SYSCTL))
    if value is None or value >= minimum:
        return None
    return Finding(
        resource,
        f"{profile.where}: sysctls[{BACKLOG_SYSCTL!r}] is {value:,}, below the minimum {minimum:,} (policy "
        f"setting minimumBacklog): {BACKLOG_WHY}. Set it to at least {minimum:,} "
        "(`wirespeed size backlog --line-rate-gbps N`).",
    )


def check_backlog(resource: Resource, settings: Settings) -> Iterator[Finding]:
    minimum = int(settings["minimumBacklog"])
    props = resource.props
    found: list[Finding | None] = []
    if is_type(resource, _aks.AGENT_POOL):
        found.append(_aks_pool_backlog(resource, props, f"agent pool {resource.name!r}", minimum))
    elif is_type(resource, _aks.CLUSTER):
        for pool, label in _aks.inline_pool_profiles(props):
            found.append(_aks_pool_backlog(resource, pool, label, minimum))
    elif is_type(resource, LAUNCH_TEMPLATE):
        found.append(_launch_template_backlog(resource, minimum))
    elif is_type(resource, *NODE_CLASS_TYPES):
        found.append(_node_class_backlog(resource, minimum))
    else:
        found.append(_profile_backlog(resource, minimum))
    yield from (f for f in found if f is not None)


def remediate_backlog(resource: Resource, settings: Settings) -> Mapping[str, Any] | None:
    """Raise a tuning profile's backlog to the minimum. AKS pools and launch templates are never rewritten:
    the AKS field is create-only (a change replaces the pool) and user data is the author's script."""
    minimum = int(settings["minimumBacklog"])
    profile = _k8s.profile_in(resource)
    if profile is None:
        return None
    value = whole(get(profile.document, "sysctls", BACKLOG_SYSCTL))
    if value is None or value >= minimum:
        return None
    document = dict(profile.document)
    document["sysctls"] = {**document.get("sysctls", {}), BACKLOG_SYSCTL: minimum}
    return _k8s.with_profile(resource, document)


# --- nic-ring-minimum -------------------------------------------------------------------------------------------


def _ring_target(driver: str, rx: int, minimum: int) -> tuple[int | None, str]:
    """The RX ring the profile should ask for (None: leave it) and what is wrong, or ``(None, "")`` when fine."""
    from wirespeed import catalog

    try:
        nic = catalog.nic_driver(driver)
    except catalog.UnknownDriver:
        if rx < minimum:
            return minimum, f"below the minimum {minimum:,} (policy setting minimumRxRing)"
        return None, ""
    if nic.rx is None:
        return None, f"{driver} has no NIC rings to size, so the agent never applies it ({nic.description})"
    required = nic.ring_holding(minimum, "rx")
    if rx < required:
        capped = f", held to {driver}'s max {nic.rx.max:,}" if required < minimum else ""
        return required, f"below the minimum {minimum:,} (policy setting minimumRxRing{capped})"
    if rx > nic.rx.max:
        return nic.rx.max, f"above {driver}'s maximum {nic.rx.max:,}"
    return None, ""


def _rings(document: Mapping[str, Any]) -> Iterator[tuple[str, int]]:
    rings = document.get("rings")
    if not isinstance(rings, Mapping):
        return
    for driver in keys(rings):
        rx = whole(get(rings, driver, "rx"))
        if rx is not None:
            yield driver, rx


def _ring_evidence(driver: str) -> str:
    """The field evidence for a larger RX ring from the driver's own cloud: an ENA ring is not Azure's VF."""
    from wirespeed import catalog

    if driver not in catalog.cloud_drivers("aws"):
        return RING_EVIDENCE
    rx = catalog.nic_driver(driver).rx
    default = f"; ENA starts at {rx.default:,}" if rx is not None else ""
    return (
        f"AWS recommends an RX ring of {ENA_EXPRESS_RX_RING:,} on ENA interfaces that use ENA Express "
        f"(docs.aws.amazon.com/AWSEC2/latest/UserGuide/ena-express.html, Tune performance{default})"
    )


def _ring_message(where: str, driver: str, rx: int, target: int | None, problem: str) -> str:
    field = f"rings.{driver}.rx"
    if target is None:
        return (
            f"{where}: {field} is {rx:,}, but {problem}. Remove rings.{driver} and size the VF's driver "
            "(mlx5_core, mana) instead."
        )
    if target < rx:
        return (
            f"{where}: {field} is {rx:,}, {problem}: the agent clamps it to {target:,} on every node and the "
            f"profile no longer says what nodes run. Set {field} to {target:,}."
        )
    return (
        f"{where}: {field} is {rx:,}, {problem}: a small RX ring overflows during microbursts from the host NIC; "
        f"{_ring_evidence(driver)}. Set {field} to {target:,} (`wirespeed size rings --driver {driver} "
        "--line-rate-gbps N` sizes it)."
    )


def check_rings(resource: Resource, settings: Settings) -> Iterator[Finding]:
    profile = _k8s.profile_in(resource)
    if profile is None:
        return
    minimum = int(settings["minimumRxRing"])
    for driver, rx in _rings(profile.document):
        target, problem = _ring_target(driver, rx, minimum)
        if problem:
            yield Finding(resource, _ring_message(profile.where, driver, rx, target, problem))


def remediate_rings(resource: Resource, settings: Settings) -> Mapping[str, Any] | None:
    """Raise RX rings to the minimum and lower rings above a driver's max to it (what the node would do)."""
    profile = _k8s.profile_in(resource)
    if profile is None:
        return None
    minimum = int(settings["minimumRxRing"])
    changes = {}
    for driver, rx in _rings(profile.document):
        target, _ = _ring_target(driver, rx, minimum)
        if target is not None:
            changes[driver] = target
    if not changes:
        return None
    document = dict(profile.document)
    rings = dict(document["rings"])
    for driver, target in changes.items():
        rings[driver] = {**rings[driver], "rx": target}
    document["rings"] = rings
    return _k8s.with_profile(resource, document)


# --- mtu-jumbo-path ---------------------------------------------------------------------------------------------

# Resources through which node traffic leaves the VNet/VPC (MTU 1,500 beyond them, network-facts.md). An AKS
# cluster always has one: its outbound type is a load balancer, a NAT gateway or a user-defined route.
GATEWAYS = (
    "aws:ec2/natGateway:NatGateway",
    "aws:ec2/internetGateway:InternetGateway",
    "aws:ec2/egressOnlyInternetGateway:EgressOnlyInternetGateway",
    "aws:ec2/vpnGateway:VpnGateway",
    "aws:ec2transitgateway/transitGateway:TransitGateway",
    "aws:ec2/vpcPeeringConnection:VpcPeeringConnection",
    "azure-native:network:NatGateway",
    "azure-native:network:VirtualNetworkGateway",
    "azure-native:network:VirtualNetworkPeering",
    _aks.CLUSTER,
)


def check_mtu_path(resources: Sequence[Resource], settings: Settings) -> Iterator[Finding]:
    gateways = [r for r in resources if is_type(r, *GATEWAYS)]
    if not gateways:
        return
    named = ", ".join(f"{g.name} ({g.type})" for g in gateways[:3]) + (" ..." if len(gateways) > 3 else "")
    for resource in resources:
        profile = _k8s.profile_in(resource)
        if profile is None:
            continue
        mtu = whole(get(profile.document, "mtu", "value"))
        if mtu is None or mtu <= DEFAULT_MTU:
            continue
        yield Finding(
            resource,
            f"{profile.where}: mtu.value is {mtu:,}, but this stack's traffic also leaves through {named}, "
            f"and gateways carry at most {DEFAULT_MTU:,}: TCP then depends on path MTU discovery, and UDP or "
            "ICMP-filtered paths black-hole. Keep mtu only if node traffic stays inside the VNet/VPC, else remove it "
            "(`wirespeed size mtu --driver D --crosses-gateway`).",
        )


BACKLOG_MINIMUM = Rule(
    id="netdev-backlog-minimum",
    description="Nodes run with net.core.netdev_max_backlog at or above the minimum, in a value AKS accepts.",
    severity="high",
    default_enforcement="mandatory",
    remediation="Set netCoreNetdevMaxBacklog on AKS pools and AKSNodeClasses (linuxOSConfig.sysctls), write the "
    "sysctl in EKS node user data, or raise sysctls['net.core.netdev_max_backlog'] in the tuning profile "
    "(remediated automatically for profiles under the remediate level; running agents pick it up when their pods "
    "restart).",
    source=f"{SEED_BACKLOG}; {AKS_SYSCTL_DOC}; bench/microburst-lab",
    scope="resource",
    types=(_aks.AGENT_POOL, _aks.CLUSTER, LAUNCH_TEMPLATE, _k8s.CONFIG_MAP, *NODE_CLASS_TYPES),
    config_schema=_backlog_settings_schema(),
    check=check_backlog,
    remediate=remediate_backlog,
)

RING_MINIMUM = Rule(
    id="nic-ring-minimum",
    description="Tuning profiles ask for RX rings at or above the minimum and within each driver's maximum.",
    severity="medium",
    default_enforcement="mandatory",
    remediation="Set rings.<driver>.rx in the tuning profile between the minimum and the driver's maximum "
    "(remediated automatically under the remediate level; running agents pick it up when their pods restart).",
    source=f"{SEED_RINGS}; docs.aws.amazon.com/AWSEC2/latest/UserGuide/ena-express.html (ENA: RX 8,192); "
    "components/wirespeed/data/nic_drivers.json (driver maxima)",
    scope="resource",
    types=(_k8s.CONFIG_MAP,),
    config_schema={
        "minimumRxRing": {
            "type": "integer",
            "minimum": 1,
            "default": DEFAULT_MINIMUM_RX_RING,
            "description": "Smallest allowed RX ring (a driver whose max is lower is held to its max).",
        }
    },
    check=check_rings,
    remediate=remediate_rings,
)

MTU_JUMBO_PATH = Rule(
    id="mtu-jumbo-path",
    description="Jumbo MTU in a tuning profile only where node traffic never leaves through a gateway.",
    severity="medium",
    default_enforcement="advisory",
    remediation="Remove mtu from the profile, or keep it only for nodes whose traffic stays inside one VNet/VPC.",
    source="https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/network_mtu.html; "
    "https://learn.microsoft.com/azure/virtual-network/how-to-virtual-machine-mtu",
    scope="stack",
    types=(_k8s.CONFIG_MAP, *GATEWAYS),
    config_schema={},
    check=check_mtu_path,
)

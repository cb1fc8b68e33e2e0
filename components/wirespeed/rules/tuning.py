"""Kernel and NIC queue rules: netdev_max_backlog (AKS pools, EKS user data, tuning profiles), RX rings and
jumbo MTU in tuning profiles."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wirespeed.catalog.karpenter_azure import GROUP, LINUX_OS_CONFIG_SINCE, NODE_CLASS_KIND, NODE_CLASS_TYPES
from wirespeed.names import CLUSTER_TYPE, LINE_RATE_ANNOTATION, PROFILE_LABEL
from wirespeed.references import AKS_NET_TUNING, ELASTIC_AKS
from wirespeed.rules import _aks, _k8s, _nap
from wirespeed.rules._model import Finding, Reads, Related, Resource, Rule, Settings, in_view, is_type, quoted
from wirespeed.rules._userdata import read_user_data
from wirespeed.sizing import line_rate, queues
from wirespeed.sizing.backlog import BACKLOG_MAX, BACKLOG_MIN, KERNEL_DEFAULT
from wirespeed.sizing.mtu import DEFAULT_MTU
from wirespeed.sizing.packets import LINE_RATE_GBPS_RANGE
from wirespeed.sizing.rings import ENA_EXPRESS_RX_RING
from wirespeed.values import elements, get, keys, plain_numbers, text, whole

if TYPE_CHECKING:
    from wirespeed.catalog import Direction

DIRECTIONS: tuple[Direction, ...] = ("rx", "tx")  # wirespeed.catalog.Direction, without loading the catalog
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
# Self-managed nodes of older stacks boot from a launch configuration (pulumi-eks v1 NodeGroup; Terraform
# aws_launch_configuration): the same instanceType and userData (plain text there, which read_user_data takes too).
LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration"
# Karpenter's EC2NodeClass (aws/karpenter-provider-aws pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml): served as
# karpenter.k8s.aws/v1 since Karpenter 1.0 and v1beta1 before it (karpenter.sh/docs/upgrading/v1-migration), its
# spec.userData the plain-text user data Karpenter merges with its own bootstrap (AL2023 and AL2: MIME parts,
# Bottlerocket: TOML; karpenter.sh/docs/concepts/nodeclasses, "spec.userData"). wirespeed.aws.karpenter writes v1.
EC2_NODE_CLASS_GROUP = "karpenter.k8s.aws"
EC2_NODE_CLASS_TYPES = tuple(f"kubernetes:{EC2_NODE_CLASS_GROUP}/{v}:EC2NodeClass" for v in ("v1", "v1beta1"))
EC2_NODE_CLASS_READS = (
    "spec.userData",
    "spec.amiFamily",
    "spec.amiSelectorTerms[].alias",
    "metadata.name",
    "metadata.annotations" + quoted(LINE_RATE_ANNOTATION),
)
BACKLOG_SYSCTL = "net.core.netdev_max_backlog"
AKS_BACKLOG_FIELD = "linuxOSConfig.sysctls.netCoreNetdevMaxBacklog"
AKS_BACKLOG_READ = AKS_BACKLOG_FIELD  # the field messages name is also the path the rule reads (Rule.reads)
# Where the line rate comes from: a ConfigMap's annotations (LINE_RATE_ANNOTATION among them), a pool's size; the
# pool's labels name its profile in messages.
LINE_RATE_READ = "metadata.annotations"
POOL_LINE_RATE_READS = ("vmSize", "nodeLabels")
ELASTIC_BACKLOG = f"{ELASTIC_AKS.short} (drops in enqueue_to_backlog at netdev_max_backlog 1,000, gone at 32,768)"
ELASTIC_RINGS = f"{ELASTIC_AKS.short} (RX ring 1,024 -> 8,192 on Azure's Mellanox VF); {AKS_NET_TUNING.short}"
BACKLOG_EVIDENCE = f"Elastic's field report ('{ELASTIC_AKS.title}') lost packets there at 1,000 and none at 32,768"
RING_EVIDENCE = (
    f"Elastic's field report ('{ELASTIC_AKS.title}') lost packets at 1,024 on Azure's Mellanox VF and none at 8,192"
)
AKS_SYSCTL_DOC = "https://learn.microsoft.com/azure/aks/custom-node-configuration"

BACKLOG_WHY = (
    "bursts arriving through the per-CPU backlog (veth: every pod's traffic, RPS) are dropped in "
    f"enqueue_to_backlog once it is full; {BACKLOG_EVIDENCE}"
)
RING_WHY = {
    "rx": f"a small RX ring overflows during microbursts from the host NIC; {RING_EVIDENCE}",
    "tx": "a TX ring that cannot hold a stall's worth of packets stops the queue during bursts, and the qdisc "
    "backs up behind it",
}

# The settings both rules share: the line rate assumed where the resource does not say it, and optional floors.
LINE_RATE_SETTING = "defaultLineRateGbps"
BACKLOG_FLOOR = "minimumBacklog"
RING_FLOORS = {"rx": "minimumRxRing", "tx": "minimumTxRing"}
# The floors' defaults add nothing to the line-rate minimum: the kernel's own backlog default (every derivation is
# at least that) and a one-entry ring. A team that wants every node above some size whatever its line rate sets them.
DEFAULT_BACKLOG_FLOOR = BACKLOG_MIN
DEFAULT_RING_FLOOR = 1


def _line_rate_schema() -> dict[str, Mapping[str, Any]]:
    low, high = LINE_RATE_GBPS_RANGE
    return {
        LINE_RATE_SETTING: {
            "type": "number",
            "minimum": float(low),
            "maximum": high,
            "default": line_rate.DEFAULT_LINE_RATE_GBPS,
            "description": "Line rate (Gb/s) assumed where the resource does not say it (a tuning ConfigMap, "
            f"or an AKSNodeClass or EC2NodeClass, without the {LINE_RATE_ANNOTATION} annotation, the class's NodePools "
            "pinning no size the catalog knows; a launch template without an instanceType); every verdict built on "
            "it says so.",
        }
    }


def _backlog_settings_schema() -> dict[str, Mapping[str, Any]]:
    return {
        BACKLOG_FLOOR: {
            "type": "integer",
            "minimum": BACKLOG_MIN,
            "maximum": BACKLOG_MAX,
            "default": DEFAULT_BACKLOG_FLOOR,
            "description": "A floor on top of the line-rate minimum: no node's net.core.netdev_max_backlog below "
            f"it, whatever its line rate (AKS accepts {BACKLOG_MIN:,}..{BACKLOG_MAX:,}). The default, the kernel's "
            "own, adds nothing to the line-rate minimum.",
        },
        **_line_rate_schema(),
    }


# --- the line-rate minimum ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Minimum:
    """What a setting must reach on one resource: the queue's :class:`~wirespeed.sizing.queues.Need` (the line-rate
    derivation and the policy floor), with where the line rate came from for messages."""

    need: queues.Need
    derived: int  # what the line rate alone needs: the stall's packets
    floor: int | None
    rate: line_rate.LineRate
    setting: str
    queue: str  # "backlog", "rx" or "tx"

    @property
    def value(self) -> int:
        """The smallest value that passes."""
        return self.need.required

    @property
    def recommended(self) -> int:
        """What to set (``wirespeed size``'s answer, or the floor): at least ``value``."""
        return self.need.recommended

    def holds(self, value: int | None) -> bool:
        return self.need.holds(value)

    def reason(self) -> str:
        """``the minimum N for <line rate>, where <derivation>``, or the floor and what the line rate alone needs."""
        if self.floor is not None and self.floor > self.derived:
            # Not in parentheses: the line rate's own description carries some ("(catalog)").
            return (
                f"the minimum {self.need.wanted:,} that policy setting {self.setting} sets, where "
                f"{self.rate.describe()} alone needs {self.derived:,}"
            )
        return f"the minimum {self.need.wanted:,} for {self.rate.describe()}, where {line_rate.derivation(self.queue)}"

    def set_to(self) -> str:
        """``N`` or ``N (any value from M holds it)``: the recommendation, and the least that passes when lower."""
        if self.recommended == self.value:
            return f"{self.recommended:,}"
        return f"{self.recommended:,} (any value from {self.value:,} passes)"

    def profile_advice(self) -> str:
        """Which built-in profile is sized for this line rate, for the fix."""
        if self.floor is not None and self.floor > self.derived:
            return f"policy setting {self.setting} asks for it whatever the line rate"
        builtin = line_rate.builtin_for(self.rate.gbps)
        if builtin is None:
            return f"no built-in profile is sized for {self.rate.gbps:g} Gb/s: use a custom profile"
        sized = line_rate.BUILTIN_LINE_RATES[builtin]
        return f"the built-in profile {builtin!r} is sized for {sized:g} Gb/s"


def _floor(settings: Settings, name: str) -> int | None:
    value = settings.get(name)
    return None if value is None else int(value)


def _assumed(settings: Settings, why: str) -> line_rate.LineRate:
    return line_rate.assumed(float(settings[LINE_RATE_SETTING]), f"{why}; policy setting {LINE_RATE_SETTING}")


def _size_rate(size: str | None, settings: Settings, field: str) -> line_rate.LineRate:
    if size is None:
        return _assumed(settings, f"{field} is unset")
    # Issue 25: the assumed rate is said to be an assumption, and where the unknown size itself is reported.
    missing = f"{field} {size} is not in wirespeed's catalog, which network-optimised-sku reports"
    return line_rate.of_size(size) or _assumed(settings, missing)


def config_map_rate(resource: Resource, settings: Settings) -> line_rate.LineRate:
    """The line rate a tuning ConfigMap declares (LINE_RATE_ANNOTATION), else the assumed default."""
    raw = get(resource.props, "metadata", "annotations", LINE_RATE_ANNOTATION)
    missing = f"a ConfigMap alone does not say which pools run it, and it has no {LINE_RATE_ANNOTATION} annotation"
    return _declared_rate(raw, f"its annotation {LINE_RATE_ANNOTATION}", "", missing, settings)


def _declared_rate(raw: object, where: str, why_there: str, missing: str, settings: Settings) -> line_rate.LineRate:
    """The line rate ``raw`` (the value at ``where``: an annotation or a tag) declares, else the assumed default
    with why: ``missing`` when there is none, else that it is no line rate."""
    value = _parse_rate(raw)
    low, high = LINE_RATE_GBPS_RANGE
    if value is not None and low <= value <= high:
        return line_rate.declared(value, f"{where}{why_there}")
    if raw is None:
        return _assumed(settings, missing)
    return _assumed(settings, f"{where} {text(raw)!r} is not a line rate in Gb/s ({low}..{high})")


def _parse_rate(raw: Any) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        return None
    try:
        value = float(raw.strip() if isinstance(raw, str) else raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def backlog_minimum(rate: line_rate.LineRate, settings: Settings) -> Minimum:
    floor = _floor(settings, BACKLOG_FLOOR)
    need = line_rate.backlog_need(rate.gbps, floor=floor or 0)
    return Minimum(need, need.packets, floor, rate, BACKLOG_FLOOR, "backlog")


def _pool_profile(pool: Any) -> str:
    name = text(get(pool, "nodeLabels", PROFILE_LABEL))
    return f" (profile {name!r})" if name else ""


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


def _aks_pool_backlog(resource: Resource, pool: Any, label: str, settings: Settings) -> Finding | None:
    if (text(get(pool, "osType")) or "Linux").lower() == "windows":
        return None
    raw = get(pool, "linuxOSConfig", "sysctls", "netCoreNetdevMaxBacklog")
    refused = _refused_backlog(resource, label, AKS_BACKLOG_FIELD, raw)
    if refused is not None:
        return refused
    value = whole(raw)
    minimum = backlog_minimum(_size_rate(text(get(pool, "vmSize")), settings, "vmSize"), settings)
    if minimum.holds(value):
        return None
    now = f"is {value:,}" if value is not None else f"is unset (the kernel default {KERNEL_DEFAULT:,})"
    return Finding(
        resource,
        f"{label}: {AKS_BACKLOG_FIELD} {now}{_pool_profile(pool)}, below {minimum.reason()}: {BACKLOG_WHY}. Set "
        f"{AKS_BACKLOG_FIELD} to {minimum.set_to()}: {minimum.profile_advice()} (AKS accepts "
        f"{BACKLOG_MIN:,}..{BACKLOG_MAX:,}; `wirespeed size backlog --line-rate-gbps {minimum.rate.gbps:g}` sizes "
        "it). It is create-only: changing it replaces the pool's nodes.",
    )


def _pools_pin(pools: Sequence[str]) -> str:
    """``NodePool 'a' pins`` / ``NodePools 'a', 'b' pin``."""
    shown = ", ".join(repr(p) for p in pools[:3]) + (", ..." if len(pools) > 3 else "")
    return f"NodePool {shown} pins" if len(pools) == 1 else f"NodePools {shown} pin"


def _pinned_rate(resource: Resource, group: str, kind: str, cloud: str) -> tuple[line_rate.LineRate | None, str]:
    """The line rate of the fastest size the NodePools in view that reference this node class pin (a node of any
    of them may launch, so the backlog must hold the fastest one's stall), or None and what the NodePools left
    open, for the message."""
    pools = in_view()
    if pools is None:
        return None, "its NodePools choose them, and none is in view of a check of this object alone"
    name = text(get(resource.props, "metadata", "name")) or resource.name
    pinned = _nap.pinned_by_node_pools(
        (p for p in pools if is_type(p, *_nap.NODE_POOL_TYPES)), name, group, kind, cloud
    )
    fastest = pinned.fastest()
    if fastest is not None:
        which = "the only size" if len(pinned.sizes) == 1 else f"the fastest of the {len(pinned.sizes):,} sizes"
        phrase = (
            f"{fastest.name}'s line rate {fastest.burst_gbps:g} Gb/s (catalog), {which} "
            f"{_pools_pin(pinned.pinning)} for it"
        )
        return line_rate.LineRate(fastest.burst_gbps, phrase, known=True), ""
    if not pinned.pools:
        return None, f"no NodePool in the input references {kind} {name!r}"
    if pinned.pinning:
        return None, f"{_pools_pin(pinned.pinning)} only sizes wirespeed's catalog does not know"
    keys = ", ".join(_nap.PIN_KEYS[cloud])
    return None, f"{_pools_pin(pinned.pools)} no size (no requirement on {keys})"


def _node_class_rate(
    resource: Resource, settings: Settings, kind: str, pinned: tuple[line_rate.LineRate | None, str], why_there: str
) -> line_rate.LineRate:
    """A node class fixes no size (its NodePools choose them): the fastest size its NodePools pin; without one, the
    line rate its LINE_RATE_ANNOTATION declares; else the assumed default, saying what was missing."""
    rate, open_ = pinned
    if rate is not None:
        return rate
    raw = get(resource.props, "metadata", "annotations", LINE_RATE_ANNOTATION)
    missing = f"an {kind} does not fix a size: {open_}, and it has no {LINE_RATE_ANNOTATION} annotation"
    return _declared_rate(raw, f"its annotation {LINE_RATE_ANNOTATION}", why_there, missing, settings)


def node_class_rate(resource: Resource, settings: Settings) -> line_rate.LineRate:
    """An AKSNodeClass's line rate: the fastest size its NodePools pin (a requirement on sku-name, sku-series,
    sku-family, sku-version or instance-type), else its LINE_RATE_ANNOTATION (AutoProvisionedPool and `render
    aks-nap` write its NodePool's fastest admitted size there), else the assumed default."""
    pinned = _pinned_rate(resource, GROUP, NODE_CLASS_KIND, "azure")
    return _node_class_rate(resource, settings, NODE_CLASS_KIND, pinned, " (its NodePool's fastest admitted size)")


def _node_class_backlog(resource: Resource, settings: Settings) -> Finding | None:
    """An AKSNodeClass (node auto-provisioning) sets the backlog through linuxOSConfig, as an agent pool does, held
    to the line rate the class declares (:func:`node_class_rate`)."""
    raw = get(resource.props, *_nap.SYSCTLS, "netCoreNetdevMaxBacklog")
    refused = _refused_backlog(resource, _nap.node_class_label(resource), _nap.NODE_CLASS_BACKLOG_FIELD, raw)
    if refused is not None:
        return refused
    value = whole(raw)
    minimum = backlog_minimum(node_class_rate(resource, settings), settings)
    if minimum.holds(value):
        return None
    field = _nap.NODE_CLASS_BACKLOG_FIELD
    now = f"is {value:,}" if value is not None else f"is unset (the kernel default {KERNEL_DEFAULT:,})"
    return Finding(
        resource,
        f"{_nap.node_class_label(resource)}: {field} {now}, below {minimum.reason()}: {BACKLOG_WHY}. Set {field} "
        f"to {minimum.set_to()}: {minimum.profile_advice()}, or admit only slower sizes in its NodePools "
        f"(karpenter-provider-azure {LINUX_OS_CONFIG_SINCE} or later; AKS accepts {BACKLOG_MIN:,}..{BACKLOG_MAX:,}; "
        "`wirespeed render aks-nap` sets the profile's). A change drifts the class's nodes: Karpenter replaces them "
        "within each NodePool's disruption budget.",
    )


def _launch_template_rate(resource: Resource, settings: Settings) -> line_rate.LineRate:
    """The template's instanceType's line rate; without one, the line rate its LINE_RATE_ANNOTATION tag declares
    (NetworkOptimizedNodeGroup writes its node group's fastest instanceType's there); else the assumed default."""
    size = text(get(resource.props, "instanceType"))
    if size is not None:
        return _size_rate(size, settings, "instanceType")
    raw = get(resource.props, "tags", LINE_RATE_ANNOTATION)
    missing = (
        f"the launch template names no instanceType and has no {LINE_RATE_ANNOTATION} tag: its node group's "
        "instanceTypes say it"
    )
    where = f"its tag {LINE_RATE_ANNOTATION}"
    return _declared_rate(raw, where, " (its node group's fastest instanceType)", missing, settings)


def _launch_template_backlog(resource: Resource, settings: Settings) -> Finding | None:
    raw = text(get(resource.props, "userData"))
    if raw is None:
        return None
    user_data = read_user_data(raw)
    if not user_data.eks_node:
        return None  # not a node's launch template: nothing to say about its kernel queues
    minimum = backlog_minimum(_launch_template_rate(resource, settings), settings)
    values = user_data.backlog_values()
    if minimum.holds(min(values) if values else None):
        return None
    now = (
        f"sets {BACKLOG_SYSCTL} to {min(values):,}"
        if values
        else f"does not set {BACKLOG_SYSCTL}, so nodes keep the kernel default {KERNEL_DEFAULT:,}"
    )
    return Finding(
        resource,
        f"userData (EKS node) {now}, below {minimum.reason()}: {BACKLOG_WHY}. Write "
        f"{BACKLOG_SYSCTL}={minimum.recommended} (or anything from {minimum.value:,}) from a text/x-shellscript part "
        f"and to /etc/sysctl.d (as wirespeed's EKS node user data does: {minimum.profile_advice()}), or run the tuning "
        "agent with a profile that sets it.",
    )


def ec2_node_class_rate(resource: Resource, settings: Settings) -> line_rate.LineRate:
    """An EC2NodeClass's line rate: the fastest instance type its NodePools pin (instance-type or instance-family
    ``In``), else its LINE_RATE_ANNOTATION, else the assumed default."""
    pinned = _pinned_rate(resource, EC2_NODE_CLASS_GROUP, "EC2NodeClass", "aws")
    return _node_class_rate(resource, settings, "EC2NodeClass", pinned, "")


def _windows_node_class(props: Any) -> bool:
    """Windows nodes (amiFamily Windows2019/2022/2025, or a windows* alias) have no Linux sysctls to set."""
    family = text(get(props, "spec", "amiFamily")) or ""
    aliases = [text(get(term, "alias")) or "" for term in elements(get(props, "spec", "amiSelectorTerms"), "terms")]
    return family.lower().startswith("windows") or any(a.lower().startswith("windows") for a in aliases)


def _ec2_node_class_backlog(resource: Resource, settings: Settings) -> Finding | None:
    """A Karpenter EC2NodeClass's nodes get the backlog only from its spec.userData (or a tuning agent): every one
    of its nodes is an EKS node, so user data without the sysctl, or none, leaves the kernel default."""
    props = resource.props
    if _windows_node_class(props):
        return None
    raw = text(get(props, "spec", "userData"))
    minimum = backlog_minimum(ec2_node_class_rate(resource, settings), settings)
    values = read_user_data(raw).backlog_values() if raw is not None else []
    if values and min(values) >= minimum.value:
        return None
    name = text(get(props, "metadata", "name")) or resource.name
    if values:
        now = f"sets {BACKLOG_SYSCTL} to {min(values):,}"
    elif raw is None:
        now = f"is unset, so its nodes keep the kernel default {BACKLOG_SYSCTL} {BACKLOG_MIN:,}"
    else:
        now = f"does not set {BACKLOG_SYSCTL}, so its nodes keep the kernel default {BACKLOG_MIN:,}"
    return Finding(
        resource,
        f"EC2NodeClass {name!r}: spec.userData {now}, below {minimum.reason()}: {BACKLOG_WHY}. Write "
        f"{BACKLOG_SYSCTL}={minimum.value} or more in spec.userData (a text/x-shellscript part on AL2023 and AL2, "
        "[settings.kernel.sysctl] on Bottlerocket; Karpenter merges it with its own bootstrap), as wirespeed's "
        f"KarpenterNodePool does ({minimum.profile_advice()}), or run the tuning agent with a profile that sets it. "
        "A change drifts the class's nodes: Karpenter replaces them within each NodePool's disruption budget.",
    )


def _profile_backlog(resource: Resource, settings: Settings) -> Finding | None:
    profile = _k8s.profile_in(resource)
    if profile is None:
        return None
    unset, value = _profile_backlog_value(profile.document)
    if not unset and value is None:
        return None  # not a whole number: profile-valid reports it
    minimum = backlog_minimum(config_map_rate(resource, settings), settings)
    if minimum.holds(value):
        return None
    now = f"is unset (the kernel default {KERNEL_DEFAULT:,})" if unset else f"is {value:,}"
    return Finding(
        resource,
        f"{profile.where}: sysctls[{BACKLOG_SYSCTL!r}] {now}, below {minimum.reason()}: {BACKLOG_WHY}. Set "
        f"it to {minimum.set_to()}: {minimum.profile_advice()} "
        f"(`wirespeed size backlog --line-rate-gbps {minimum.rate.gbps:g}`).",
    )


def _profile_backlog_value(document: Mapping[str, Any]) -> tuple[bool, int | None]:
    """(unset, value) of the profile's backlog: a profile that does not set it leaves nodes at the kernel default,
    judged as that default written out would be (value None either way when unset or not a whole number)."""
    sysctls = document.get("sysctls")
    if not isinstance(sysctls, Mapping) or sysctls.get(BACKLOG_SYSCTL) is None:
        return True, None
    return False, whole(sysctls[BACKLOG_SYSCTL])


def check_backlog(resource: Resource, settings: Settings) -> Iterator[Finding]:
    props = resource.props
    found: list[Finding | None] = []
    if is_type(resource, _aks.AGENT_POOL):
        found.append(_aks_pool_backlog(resource, props, f"agent pool {resource.name!r}", settings))
    elif is_type(resource, _aks.CLUSTER):
        for pool, label in _aks.inline_pool_profiles(props):
            found.append(_aks_pool_backlog(resource, pool, label, settings))
    elif is_type(resource, LAUNCH_TEMPLATE, LAUNCH_CONFIGURATION):
        found.append(_launch_template_backlog(resource, settings))
    elif is_type(resource, *NODE_CLASS_TYPES):
        found.append(_node_class_backlog(resource, settings))
    elif is_type(resource, *EC2_NODE_CLASS_TYPES):
        found.append(_ec2_node_class_backlog(resource, settings))
    else:
        found.append(_profile_backlog(resource, settings))
    yield from (f for f in found if f is not None)


def remediate_backlog(resource: Resource, settings: Settings) -> Mapping[str, Any] | None:
    """Raise a tuning profile's backlog to the minimum. AKS pools and launch templates are never rewritten:
    the AKS field is create-only (a change replaces the pool) and user data is the author's script."""
    profile = _k8s.profile_in(resource)
    if profile is None:
        return None
    unset, value = _profile_backlog_value(profile.document)
    minimum = backlog_minimum(config_map_rate(resource, settings), settings)
    if (not unset and value is None) or minimum.holds(value):
        return None
    document = dict(profile.document)
    sysctls = document.get("sysctls")
    document["sysctls"] = {**(sysctls if isinstance(sysctls, Mapping) else {}), BACKLOG_SYSCTL: minimum.recommended}
    return _k8s.with_profile(resource, document)


# --- nic-ring-minimum -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RingVerdict:
    """One ring of one driver: the size the profile should ask for (None: remove the driver's rings) and why."""

    target: int | None
    problem: str
    minimum: Minimum | None = None


def _ring_minimum(driver: str, direction: Direction, rate: line_rate.LineRate, settings: Settings) -> Minimum | None:
    """None for a driver without NIC rings."""
    floor = _floor(settings, RING_FLOORS[direction])
    need = line_rate.ring_need(driver, direction, rate.gbps, floor=floor or 0)
    if need is None:
        return None
    return Minimum(need, need.packets, floor, rate, RING_FLOORS[direction], direction)


def _ring_verdict(
    driver: str, direction: Direction, value: int | None, rate: line_rate.LineRate, settings: Settings
) -> RingVerdict | None:
    """What is wrong with ``rings.<driver>.<direction>`` (None: unset, so the driver's default), or None when it is
    fine."""
    from wirespeed import catalog

    try:
        nic: catalog.NicDriver | None = catalog.nic_driver(driver)
    except catalog.UnknownDriver:
        nic = None
    if nic is not None and (nic.rx is None or nic.tx is None):
        return RingVerdict(
            None, f"{driver} has no NIC rings to size, so the agent never applies it ({nic.description})"
        )
    minimum = _ring_minimum(driver, direction, rate, settings)
    assert minimum is not None  # only ring-less drivers have none, handled above
    if not minimum.holds(value):
        capped = f", held to {driver}'s max {minimum.need.maximum:,}" if nic is not None and minimum.need.capped else ""
        return RingVerdict(minimum.recommended, f"below {minimum.reason()}{capped}", minimum)
    if nic is not None and value is not None and value > minimum.need.maximum:
        return RingVerdict(minimum.need.maximum, f"above {driver}'s maximum {minimum.need.maximum:,}")
    return None


def _judged_drivers(document: Mapping[str, Any], on_azure: bool) -> tuple[str, ...]:
    """The cloud NIC drivers whose rings the profile leaves at their defaults count too: the agent tunes nothing
    there, so they run the driver's default. Those of the ConfigMap's cloud: Azure's under an AKS component, else the
    one cloud whose drivers the profile's own rings name, else both clouds'; narrowed to ``interfaces.drivers`` when
    the profile names some."""
    from wirespeed import catalog
    from wirespeed.catalog._model import CLOUDS

    written = keys(document.get("rings"))
    clouds = {c for c in CLOUDS if any(d in catalog.cloud_drivers(c) for d in written)}
    cloud: catalog.Cloud | None = "azure" if on_azure else (next(iter(clouds)) if len(clouds) == 1 else None)
    drivers = catalog.cloud_drivers(cloud)
    named = [d for d in (text(v) for v in elements(get(document, "interfaces", "drivers"), "drivers")) if d]
    return tuple(d for d in drivers if d in named) if named else drivers


def _rings(document: Mapping[str, Any], on_azure: bool) -> Iterator[tuple[str, Direction, int | None]]:
    """Every ring the profile sets, and every ring of a cloud driver it leaves unset (None: the driver's default).
    A ring whose value is not a whole number is profile-valid's to report."""
    from wirespeed import catalog

    rings = document.get("rings")
    rings = rings if isinstance(rings, Mapping) else {}
    known = catalog.nic_drivers()
    written = keys(rings)
    for driver in [*written, *(d for d in _judged_drivers(document, on_azure) if d not in written)]:
        for direction in DIRECTIONS:
            raw = get(rings, driver, direction)
            if raw is None:
                # An unknown driver's default is not known, and a ring-less one has none: nothing to judge.
                if driver in known and known[driver].has_rings:
                    yield driver, direction, None
                continue
            value = whole(raw)
            if value is not None:
                yield driver, direction, value


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


def _ring_why(driver: str, direction: Direction) -> str:
    """Why a ring must be larger, with the evidence from the driver's own cloud for RX."""
    return (
        RING_WHY[direction].replace(RING_EVIDENCE, _ring_evidence(driver)) if direction == "rx" else RING_WHY[direction]
    )


def _ring_message(where: str, driver: str, direction: Direction, value: int | None, verdict: RingVerdict) -> str:
    field = f"rings.{driver}.{direction}"
    if value is None:
        from wirespeed import catalog

        assert verdict.minimum is not None  # only a ring below its minimum is reported unset
        default = catalog.nic_driver(driver).limits(direction).default
        return (
            f"{where}: {field} is unset (the driver default {default:,}), {verdict.problem}: "
            f"{_ring_why(driver, direction)}. Set {field} to {verdict.minimum.set_to()}: "
            f"{verdict.minimum.profile_advice()} (`wirespeed size rings --driver {driver} --line-rate-gbps "
            f"{verdict.minimum.rate.gbps:g}` sizes it)."
        )
    if verdict.target is None:
        return (
            f"{where}: {field} is {value:,}, but {verdict.problem}. Remove rings.{driver} and size the VF's driver "
            "(mlx5_core, mana) instead."
        )
    if verdict.target < value:
        return (
            f"{where}: {field} is {value:,}, {verdict.problem}: the agent clamps it to {verdict.target:,} on every "
            f"node and the profile no longer says what nodes run. Set {field} to {verdict.target:,}."
        )
    assert verdict.minimum is not None
    return (
        f"{where}: {field} is {value:,}, {verdict.problem}: {_ring_why(driver, direction)}. Set {field} to "
        f"{verdict.minimum.set_to()}: {verdict.minimum.profile_advice()} (`wirespeed size rings --driver {driver} "
        f"--line-rate-gbps {verdict.minimum.rate.gbps:g}` sizes it)."
    )


# The component types whose tuning ConfigMaps run on AKS nodes: NetworkOptimizedCluster deploys its NodeTuning as a
# child. A ConfigMap whose URN or parent's URN holds one of these, or an azure-native type, is on Azure.
AZURE_PARENT_TYPES = (CLUSTER_TYPE,)


def _qualified_types(urn: str | None) -> list[str]:
    """The types in a URN's qualified type (urn:pulumi:<stack>::<project>::<parent type>$<type>::<name>)."""
    parts = (urn or "").split("::")
    return parts[2].split("$") if len(parts) > 3 else []


def _on_azure(resource: Resource) -> bool:
    """Whether the resource's URN, or its parent's, places it under an AKS component (what deploys it there)."""
    types = _qualified_types(resource.urn) + _qualified_types(resource.parent)
    return any(t in AZURE_PARENT_TYPES or t.startswith("azure-native:") for t in types)


def _applies(driver: str, on_azure: bool) -> bool:
    """A ring setting for a driver of AWS's NICs (ENA) never applies on an AKS node: no Azure VM presents one, so
    the agent never sizes it there and a finding citing AWS's guidance would be about nothing. (No driver is both
    clouds', so an AWS driver is never an Azure one.)"""
    from wirespeed import catalog

    return not on_azure or driver not in catalog.cloud_drivers("aws")


def _ring_verdicts(
    resource: Resource, settings: Settings
) -> Iterator[tuple[str, str, Direction, int | None, RingVerdict]]:
    profile = _k8s.profile_in(resource)
    if profile is None:
        return
    rate = config_map_rate(resource, settings)
    on_azure = _on_azure(resource)
    for driver, direction, value in _rings(profile.document, on_azure):
        if not _applies(driver, on_azure):
            continue
        verdict = _ring_verdict(driver, direction, value, rate, settings)
        if verdict is not None:
            yield profile.where, driver, direction, value, verdict


def check_rings(resource: Resource, settings: Settings) -> Iterator[Finding]:
    for where, driver, direction, value, verdict in _ring_verdicts(resource, settings):
        yield Finding(resource, _ring_message(where, driver, direction, value, verdict))


def remediate_rings(resource: Resource, settings: Settings) -> Mapping[str, Any] | None:
    """Raise rings to the minimum and lower rings above a driver's max to it (what the node would do)."""
    profile = _k8s.profile_in(resource)
    if profile is None:
        return None
    changes: dict[str, dict[str, int]] = {}
    for _, driver, direction, _, verdict in _ring_verdicts(resource, settings):
        if verdict.target is not None:
            changes.setdefault(driver, {})[direction] = verdict.target
    if not changes:
        return None
    document = dict(profile.document)
    written = document.get("rings")
    rings = dict(written) if isinstance(written, Mapping) else {}
    for driver, targets in changes.items():
        current = rings.get(driver)
        rings[driver] = {**(current if isinstance(current, Mapping) else {}), **targets}
    document["rings"] = rings
    return _k8s.with_profile(resource, document)


# --- mtu-jumbo-path ---------------------------------------------------------------------------------------------

# Resources through which node traffic leaves the VNet/VPC (MTU 1,500 beyond them: docs.aws.amazon.com/AWSEC2/
# latest/UserGuide/network_mtu.html, "MTU limit 1500 bytes": internet gateway, VPN, inter-region;
# learn.microsoft.com/azure/virtual-network/how-to-virtual-machine-mtu: more than 1,500 only within the VNet). An AKS
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
    description="Nodes run with net.core.netdev_max_backlog at or above the minimum for their line rate, in a "
    "value AKS accepts.",
    severity="high",
    default_enforcement="mandatory",
    remediation="Set netCoreNetdevMaxBacklog on AKS pools and AKSNodeClasses (linuxOSConfig.sysctls), write the "
    "sysctl in EKS node user data (a launch template's, or an EC2NodeClass's spec.userData), or raise "
    "sysctls['net.core.netdev_max_backlog'] in the tuning profile (remediated automatically for profiles under the "
    "remediate level; running agents pick it up when their pods restart).",
    source=f"{ELASTIC_BACKLOG}; {AKS_SYSCTL_DOC}; bench/microburst-lab",
    scope="resource",
    types=(
        _aks.AGENT_POOL,
        _aks.CLUSTER,
        LAUNCH_TEMPLATE,
        LAUNCH_CONFIGURATION,
        _k8s.CONFIG_MAP,
        *NODE_CLASS_TYPES,
        *EC2_NODE_CLASS_TYPES,
    ),
    config_schema=_backlog_settings_schema(),
    reads=(
        Reads(_aks.AGENT_POOL, ("osType", AKS_BACKLOG_READ, *POOL_LINE_RATE_READS)),
        Reads(
            _aks.CLUSTER,
            tuple(f"agentPoolProfiles[].{p}" for p in ("name", "osType", AKS_BACKLOG_READ, *POOL_LINE_RATE_READS)),
            not_in_terraform={
                "agentPoolProfiles[].osType": "azurerm's default_node_pool has no os_type: an AKS system pool is "
                "Linux, which the rule assumes when osType is absent"
            },
        ),
        Reads(LAUNCH_TEMPLATE, ("userData", "instanceType", "tags" + quoted(LINE_RATE_ANNOTATION))),
        Reads(LAUNCH_CONFIGURATION, ("userData", "instanceType")),
        Reads(_k8s.CONFIG_MAP, (_k8s.PROFILE_READ, LINE_RATE_READ)),
        *(
            Reads(
                t,
                (_nap.NODE_CLASS_BACKLOG_FIELD, "metadata.name", "metadata.annotations" + quoted(LINE_RATE_ANNOTATION)),
            )
            for t in NODE_CLASS_TYPES
        ),
        *(Reads(t, EC2_NODE_CLASS_READS) for t in EC2_NODE_CLASS_TYPES),
    ),
    check=check_backlog,
    remediate=remediate_backlog,
    # A node class is judged at the fastest size the NodePools that reference it pin.
    related=Related(
        types=(*NODE_CLASS_TYPES, *EC2_NODE_CLASS_TYPES),
        reads=tuple(Reads(t, _nap.NODE_POOL_PIN_READS) for t in _nap.NODE_POOL_TYPES),
    ),
)

RING_MINIMUM = Rule(
    id="nic-ring-minimum",
    description="Tuning profiles ask for RX/TX rings at or above the minimum for their nodes' line rate and within "
    "each driver's maximum.",
    severity="medium",
    default_enforcement="mandatory",
    remediation="Set rings.<driver>.rx/tx in the tuning profile between the minimum and the driver's maximum "
    "(remediated automatically under the remediate level; running agents pick it up when their pods restart).",
    source=f"{ELASTIC_RINGS}; docs.aws.amazon.com/AWSEC2/latest/UserGuide/ena-express.html (ENA: RX 8,192); "
    "components/wirespeed/data/nic_drivers.json (driver maxima)",
    scope="resource",
    types=(_k8s.CONFIG_MAP,),
    reads=(Reads(_k8s.CONFIG_MAP, (_k8s.PROFILE_READ, LINE_RATE_READ)),),
    config_schema={
        **{
            setting: {
                "type": "integer",
                "minimum": 1,
                "default": DEFAULT_RING_FLOOR,
                "description": f"A floor on top of the line-rate minimum for {direction.upper()} rings (a driver "
                "whose max is lower is held to its max). The default adds nothing to the line-rate minimum.",
            }
            for direction, setting in RING_FLOORS.items()
        },
        **_line_rate_schema(),
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
    # A gateway counts by its type alone.
    reads=(Reads(_k8s.CONFIG_MAP, (_k8s.PROFILE_READ,)), *(Reads(g) for g in GATEWAYS)),
    check=check_mtu_path,
)

"""netdev-backlog-minimum: net.core.netdev_max_backlog at or above the minimum for the node's line rate, in a value AKS
accepts, wherever it is set: AKS pools and AKSNodeClasses, EKS launch templates and EC2NodeClasses' user data, tuning
profiles."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from wirespeed.catalog.karpenter_azure import GROUP, LINUX_OS_CONFIG_SINCE, NODE_CLASS_KIND, NODE_CLASS_TYPES
from wirespeed.names import LINE_RATE_ANNOTATION, PROFILE_LABEL
from wirespeed.references import ELASTIC_AKS
from wirespeed.rules import _aks, _k8s, _nap
from wirespeed.rules._line_rate import (
    LINE_RATE_READ,
    POOL_LINE_RATE_READS,
    Minimum,
    _declared_rate,
    _floor,
    _line_rate_schema,
    _size_rate,
    config_map_rate,
)
from wirespeed.rules._model import Finding, Reads, Related, Resource, Rule, Settings, in_view, is_type, quoted
from wirespeed.rules._userdata import read_user_data
from wirespeed.sizing import line_rate
from wirespeed.sizing.backlog import BACKLOG_MAX, BACKLOG_MIN, KERNEL_DEFAULT
from wirespeed.values import elements, get, plain_numbers, text, whole

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
ELASTIC_BACKLOG = f"{ELASTIC_AKS.short} (drops in enqueue_to_backlog at netdev_max_backlog 1,000, gone at 32,768)"
BACKLOG_EVIDENCE = f"Elastic's field report ('{ELASTIC_AKS.title}') lost packets there at 1,000 and none at 32,768"
AKS_SYSCTL_DOC = "https://learn.microsoft.com/azure/aks/custom-node-configuration"

BACKLOG_WHY = (
    "bursts arriving through the per-CPU backlog (veth: every pod's traffic, RPS) are dropped in "
    f"enqueue_to_backlog once it is full; {BACKLOG_EVIDENCE}"
)
BACKLOG_FLOOR = "minimumBacklog"
# The floor's default adds nothing to the line-rate minimum: the kernel's own backlog default (every derivation is
# at least that). A team that wants every node above some size whatever its line rate sets it.
DEFAULT_BACKLOG_FLOOR = BACKLOG_MIN


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
    """An EC2NodeClass names no instance type (its NodePools choose them): the line rate its LINE_RATE_ANNOTATION
    declares, else the assumed default. Not yet the fastest type its NodePools pin, as for an AKSNodeClass: the
    KarpenterNodePool component sizes its classes by baseline bandwidth while this rule judges a type at its burst
    rate, so wirespeed's own EC2NodeClasses would fail it; both must first agree on one "enough"."""
    raw = get(resource.props, "metadata", "annotations", LINE_RATE_ANNOTATION)
    missing = (
        f"an EC2NodeClass does not fix an instance type: its NodePools choose them, and it has no "
        f"{LINE_RATE_ANNOTATION} annotation"
    )
    return _declared_rate(raw, f"its annotation {LINE_RATE_ANNOTATION}", "", missing, settings)


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


BACKLOG_MINIMUM = Rule(
    id="netdev-backlog-minimum",
    order=40,
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
        types=NODE_CLASS_TYPES,
        reads=tuple(Reads(t, _nap.NODE_POOL_PIN_READS) for t in _nap.NODE_POOL_TYPES),
    ),
)

RULE = BACKLOG_MINIMUM

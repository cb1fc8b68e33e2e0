"""network-optimised-sku: node sizes on AKS pools, EKS node groups and Karpenter NodePools (EKS, and AKS node
auto-provisioning) are network-optimised and sustain at least the minimum bandwidth. Every figure comes from the
catalog (wirespeed.catalog)."""

from __future__ import annotations

import functools
from collections.abc import Iterator

from wirespeed.names import NOT_NETWORK_OPTIMISED_REASON
from wirespeed.references import AKS_NET_TUNING, DATADOG_BOTTLENECKS
from wirespeed.rules import _aks, _nap
from wirespeed.rules._accept import written_reason
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings, is_type, quoted
from wirespeed.rules._node_pools import NODE_GROUP, NODE_POOL_READS, NODE_POOL_TYPES
from wirespeed.rules._self_managed import AUTOSCALING_GROUP, tagged_clusters
from wirespeed.rules._userdata import read_user_data
from wirespeed.rules.netdev_backlog_minimum import LAUNCH_CONFIGURATION, LAUNCH_TEMPLATE
from wirespeed.values import elements, get, text

# docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html (instanceTypes): without a launch
# template that names one, a managed node group defaults to t3.medium.
EKS_DEFAULT_INSTANCE_TYPE = "t3.medium"
# Karpenter well-known labels (karpenter.sh/docs/concepts/scheduling, "Well-Known Labels"); bandwidth in Mb/s.
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
FAMILY_LABEL = "karpenter.k8s.aws/instance-family"
BANDWIDTH_LABEL = "karpenter.k8s.aws/instance-network-bandwidth"
# wirespeed's floor: the smallest Azure Boost (v6) sizes sustain 12.5 Gb/s; below 10 Gb/s sustained a node is
# the bottleneck for the 100 Gb/s host NICs the field reports describe ([aks-net-tuning],
# [datadog-bottlenecks] in docs/references.md).
DEFAULT_MINIMUM_GBPS = 10.0
SOURCES = (
    f"{AKS_NET_TUNING.short} (Dsv6/MANA vs Dsv3); {DATADOG_BOTTLENECKS.short} (bandwidth allowance exceeded on AWS)"
)


# What the check reads (Rule.reads): sizes, and the written reason where a size is flagged.
REASON_TAG = "tags" + quoted(NOT_NETWORK_OPTIMISED_REASON)


def _alternative(name: str, minimum: float) -> str:
    """A network-optimised size of the same shape that meets the minimum, as advice (or "")."""
    from wirespeed import catalog

    ranked = catalog.network_optimised_alternatives(catalog.lookup(name), min_gbps=minimum)
    if not ranked:
        return ""
    best = ranked[0]
    return f", e.g. {best.name} ({best.family}, {best.vcpu} vCPU, {best.baseline_gbps:g} Gb/s)"


@functools.cache
def _aws_network_optimised_families() -> frozenset[str]:
    # The catalog's own list (aws_instance_types.json "families.network_optimised"), which also names families
    # the pinned DescribeInstanceTypes data lacks: an AWS type the catalog does not hold is still judged by family.
    from wirespeed.catalog import _load

    return frozenset(_load.read_data("aws_instance_types.json")["families"]["network_optimised"])


def _not_optimised(name: str, family: str, cloud: str, alternative: str, cloud_cmd: str, slow: str = "") -> str:
    why = (
        "its NIC is not Azure Boost (MANA), so it may land on older Mellanox hosts with smaller rings and MTU"
        if cloud == "azure"
        else "it is not in a network-optimised family (the 'n' types), so its bandwidth allowance is exceeded "
        "first under load"
    )
    return (
        f"{name} ({family}) is not a network-optimised size: {why}.{slow} Choose a network-optimised "
        f"size{alternative}; {cloud_cmd} lists them."
    )


def _not_in_catalog(name: str, suggestions: list[str], minimum: float) -> str:
    """A size the catalog lacks is never waved through (issue 25): the rule cannot tell its bandwidth or NIC. A size
    its family's page lists but the catalog leaves out (a bandwidth given only as a lower bound) says why."""
    from wirespeed import catalog

    why = catalog.left_out(name)
    near = f" (did you mean {', '.join(suggestions)}?)" if suggestions else ""
    if why is not None:
        near = f" (its series page lists it, but the catalog leaves it out: {why})"
    return (
        f"{name} is not in wirespeed's catalog: cannot tell its bandwidth or NIC{near}, so it cannot be held to the "
        f"minimum {minimum:g} Gb/s or its NIC judged. Choose a size the catalog holds (`wirespeed catalog list "
        "--network-optimised`), or record why this one is acceptable."
    )


def _size_problem(name: str, minimum: float) -> str | None:
    """Why this size is not acceptable, or None. A size the catalog does not know is a problem of its own (nothing
    says its bandwidth or NIC); an AWS one outside every network-optimised family is not network-optimised."""
    from wirespeed import catalog

    try:
        it = catalog.lookup(name)
    except catalog.UnknownInstanceType as unknown:
        family = name.strip().lower().partition(".")[0]
        if "." not in name or family in _aws_network_optimised_families():
            return _not_in_catalog(name, unknown.suggestions, minimum)
        cloud_cmd = f"`wirespeed catalog list --cloud aws --network-optimised --min-gbps {minimum:g}`"
        return _not_optimised(name, family, "aws", "", cloud_cmd)
    cloud_cmd = f"`wirespeed catalog list --cloud {it.cloud} --network-optimised --min-gbps {minimum:g}`"
    burst = f", bursting to {it.burst_gbps:g}" if it.burstable else ""
    slow = (
        f"{it.baseline_gbps:g} Gb/s{burst}, below the minimum {minimum:g} Gb/s (policy setting minimumBandwidthGbps)"
        if it.baseline_gbps < minimum
        else ""
    )
    if not it.network_optimised:
        # Both faults are named: a slow old size (Standard_DS2_v2, 1.5 Gb/s) is not fixed by its NIC alone.
        also = f" It also sustains only {slow}." if slow else ""
        return _not_optimised(it.name, it.family, it.cloud, _alternative(it.name, minimum), cloud_cmd, also)
    if slow:
        return (
            f"{it.name} sustains {slow}. Choose a larger size{_alternative(it.name, minimum)}; {cloud_cmd} lists them."
        )
    return None


def _written_reason(container: object, *path: str) -> bool:
    """Whether the tags (or annotations) at ``path`` carry a non-empty reason for a size that is not
    network-optimised: the rule's own key, read by the one reader of written reasons (rules._accept), since this
    rule is mandatory and its exception is its own setting (acceptWrittenReason). Read only once a size is
    flagged, so an unknown tag map leaves a compliant pool judged."""
    return written_reason(container, *path, NOT_NETWORK_OPTIMISED_REASON) is not None


def _aks_pool(resource: Resource, pool: object, label: str, minimum: float, accept: bool) -> Iterator[Finding]:
    size = text(get(pool, "vmSize"))
    problem = _size_problem(size, minimum) if size else None
    if problem and not (accept and _written_reason(pool, "tags")):
        yield Finding(resource, f"{label}: vmSize {problem}")


def _node_group(resource: Resource, minimum: float) -> Iterator[Finding]:
    props = resource.props
    types = [t for t in (text(v) for v in elements(get(props, "instanceTypes"), "instanceTypes")) if t]
    if not types:
        if get(props, "launchTemplate") is not None:
            return  # the size is the launch template's instanceType, checked on that resource
        problem = _size_problem(EKS_DEFAULT_INSTANCE_TYPE, minimum)
        if problem:
            yield Finding(resource, f"instanceTypes is unset, so EKS uses {EKS_DEFAULT_INSTANCE_TYPE}: {problem}")
        return
    for size in types:
        problem = _size_problem(size, minimum)
        if problem:
            yield Finding(resource, f"instanceTypes: {problem}")


def _launch_template(resource: Resource, minimum: float) -> Iterator[Finding]:
    size = text(get(resource.props, "instanceType"))
    raw = text(get(resource.props, "userData"))
    if not size or raw is None or not read_user_data(raw).eks_node:
        return  # only the templates that boot EKS nodes
    problem = _size_problem(size, minimum)
    if problem:
        yield Finding(resource, f"instanceType: {problem}")


ASG_OVERRIDES = ("mixedInstancesPolicy", "launchTemplate", "overrides")


def _auto_scaling_group(resource: Resource, minimum: float) -> Iterator[Finding]:
    """A self-managed node group's mixed-instances overrides (the sizes it launches instead of its template's); a
    group without the kubernetes.io/cluster tag runs no cluster's nodes, and one without overrides launches its
    template's instanceType, judged on the template."""
    if not tagged_clusters(resource.props):
        return
    for override in elements(get(resource.props, *ASG_OVERRIDES), "mixedInstancesPolicy.launchTemplate.overrides"):
        size = text(get(override, "instanceType"))
        problem = _size_problem(size, minimum) if size else None
        if problem:
            yield Finding(resource, f"mixedInstancesPolicy.launchTemplate.overrides instanceType: {problem}")


def _all_requirements(props: object) -> list[tuple[str, str, list[str]]]:
    """Every (key, operator, values) requirement, in order: one key may appear more than once (Gt and Lt bound a
    range; Karpenter ANDs them)."""
    found = []
    spec = get(props, "spec", "template", "spec", "requirements")
    for requirement in elements(spec, "spec.template.spec.requirements"):
        key, operator = text(get(requirement, "key")), text(get(requirement, "operator"))
        values = [v for v in (text(x) for x in elements(get(requirement, "values"), "values")) if v is not None]
        if key and operator:
            found.append((key, operator, values))
    return found


def _requirements(props: object) -> dict[str, tuple[str, list[str]]]:
    return {key: (operator, values) for key, operator, values in _all_requirements(props)}


def _bandwidth_floor_gbps(props: object) -> float | None:
    """The highest lower bound the bandwidth requirements set (an upper bound beside it, Lt, bounds nothing below)."""
    floors = [
        int(values[0]) + (1 if operator == "Gt" else 0)
        for key, operator, values in _all_requirements(props)
        if key == BANDWIDTH_LABEL and operator in ("Gt", "Gte") and len(values) == 1 and values[0].isdigit()
    ]
    return max(floors) / 1000 if floors else None


def _node_pool(resource: Resource, minimum: float) -> Iterator[Finding]:
    from wirespeed import catalog

    requirements = _requirements(resource.props)
    operator, sizes = requirements.get(INSTANCE_TYPE_LABEL, ("", []))
    if operator == "In" and sizes:
        for size in sizes:
            problem = _size_problem(size, minimum)
            if problem:
                yield Finding(resource, f"requirement {INSTANCE_TYPE_LABEL}: {problem}")
        return
    floor = _bandwidth_floor_gbps(resource.props)
    operator, families = requirements.get(FAMILY_LABEL, ("", []))
    optimised = {it.family for it in catalog.instance_types(cloud="aws", network_optimised=True)}
    known = set(catalog.families("aws"))
    if operator != "In" or not families:
        yield Finding(
            resource,
            f"requirements do not limit {FAMILY_LABEL} or {INSTANCE_TYPE_LABEL}, so Karpenter may launch any "
            f"instance type, network-optimised or not. Add {{key: {FAMILY_LABEL}, operator: In, values: "
            f"[{', '.join(sorted(optimised)[:4])}, ...]}} (`wirespeed catalog list --cloud aws --network-optimised`).",
        )
    else:
        slow = [f for f in families if f in known and f not in optimised]
        if slow:
            yield Finding(
                resource,
                f"requirement {FAMILY_LABEL} allows {', '.join(slow)}, not network-optimised: its bandwidth "
                f"allowance is exceeded first under load. Keep only network-optimised families "
                f"({', '.join(sorted(optimised)[:4])}, ...).",
            )
    if floor is None or floor < minimum:
        now = f"is {floor:g} Gb/s" if floor is not None else "is not set"
        yield Finding(
            resource,
            f"requirement {BANDWIDTH_LABEL} {now}, so Karpenter may pick sizes sustaining less than the minimum "
            f"{minimum:g} Gb/s (policy setting minimumBandwidthGbps). Add {{key: {BANDWIDTH_LABEL}, operator: Gt, "
            f"values: ['{int(minimum * 1000) - 1}']}} (Mb/s).",
        )


def _unless_reason(findings: Iterator[Finding], resource: Resource, accept: bool, *path: str) -> Iterator[Finding]:
    found = list(findings)
    if found and accept and _written_reason(resource.props, *path):
        return iter(())
    return iter(found)


def check_sku(resource: Resource, settings: Settings) -> Iterator[Finding]:
    minimum = float(settings["minimumBandwidthGbps"])
    accept = bool(settings["acceptWrittenReason"])
    props = resource.props
    if is_type(resource, _aks.AGENT_POOL):
        yield from _aks_pool(resource, props, f"agent pool {resource.name!r}", minimum, accept)
    elif is_type(resource, _aks.CLUSTER):
        for pool, label in _aks.inline_pool_profiles(props):
            yield from _aks_pool(resource, pool, label, minimum, accept)
    elif is_type(resource, NODE_GROUP):
        yield from _unless_reason(_node_group(resource, minimum), resource, accept, "tags")
    elif is_type(resource, LAUNCH_TEMPLATE):
        yield from _unless_reason(_launch_template(resource, minimum), resource, accept, "tags")
    elif is_type(resource, LAUNCH_CONFIGURATION):
        yield from _launch_template(resource, minimum)  # a launch configuration has no tags to carry a reason
    elif is_type(resource, AUTOSCALING_GROUP):
        yield from _auto_scaling_group(resource, minimum)  # its tags are a list: no reason tag to read
    elif is_type(resource, *NODE_POOL_TYPES):
        findings = (
            _nap.node_pool_findings(resource, minimum)
            if _nap.is_azure_node_pool(props)
            else _node_pool(resource, minimum)
        )
        yield from _unless_reason(findings, resource, accept, "metadata", "annotations")


NETWORK_OPTIMISED_SKU = Rule(
    id="network-optimised-sku",
    order=60,
    description="Node pools use network-optimised sizes that sustain at least the minimum bandwidth, unless the "
    f"pool carries a written reason (tag or annotation `{NOT_NETWORK_OPTIMISED_REASON}`).",
    severity="medium",
    default_enforcement="mandatory",
    remediation="Pick a network-optimised size (Azure Boost v6 sizes on AKS, the 'n' families on EKS) that "
    "sustains the minimum bandwidth: `wirespeed catalog list --network-optimised --min-gbps N`; on a Karpenter "
    "NodePool, requirements that admit only such families or SKU series (`wirespeed render aks-nap` for AKS node "
    "auto-provisioning). A pool that "
    "needs another size says why: the components' allow_non_network_optimised / not_network_optimised_reason "
    f"(and the modules' not_network_optimised_reason) set the tag {NOT_NETWORK_OPTIMISED_REASON}, which this "
    "rule accepts unless acceptWrittenReason is false.",
    source=f"{SOURCES}; components/wirespeed/data/azure_sizes.json, aws_instance_types.json",
    scope="resource",
    types=(
        _aks.CLUSTER,
        _aks.AGENT_POOL,
        NODE_GROUP,
        LAUNCH_TEMPLATE,
        LAUNCH_CONFIGURATION,
        AUTOSCALING_GROUP,
        *NODE_POOL_TYPES,
    ),
    config_schema={
        "minimumBandwidthGbps": {
            "type": "number",
            "minimum": 0,
            "default": DEFAULT_MINIMUM_GBPS,
            "description": "Smallest allowed sustained (baseline) bandwidth in Gb/s, from the catalog.",
        },
        "acceptWrittenReason": {
            "type": "boolean",
            "default": True,
            "description": f"Let through a pool whose tag (annotation on a Karpenter NodePool) "
            f"{NOT_NETWORK_OPTIMISED_REASON} gives a non-empty reason: the reason is reviewed in the pull request "
            "and recorded on the resource. false: no exceptions.",
        },
    },
    reads=(
        Reads(_aks.CLUSTER, tuple(f"agentPoolProfiles[].{path}" for path in ("name", "vmSize", REASON_TAG))),
        Reads(_aks.AGENT_POOL, ("vmSize", REASON_TAG)),
        Reads(NODE_GROUP, ("instanceTypes[]", "launchTemplate", REASON_TAG)),
        Reads(LAUNCH_TEMPLATE, ("instanceType", "userData", REASON_TAG)),
        Reads(LAUNCH_CONFIGURATION, ("instanceType", "userData")),
        Reads(AUTOSCALING_GROUP, ("tags[].key", "mixedInstancesPolicy.launchTemplate.overrides[].instanceType")),
        *(
            Reads(t, (*NODE_POOL_READS, "metadata.annotations" + quoted(NOT_NETWORK_OPTIMISED_REASON)))
            for t in NODE_POOL_TYPES
        ),
    ),
    check=check_sku,
)

RULE = NETWORK_OPTIMISED_SKU

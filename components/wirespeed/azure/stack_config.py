"""Stack config (the ``wirespeed:*`` keys of Pulumi.yaml) to a :class:`ClusterSpec`. Pure: no Pulumi import.

Pulumi's project config schema types only strings, integers, booleans and arrays, so a pool is one string:
``NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]]`` (``apps:Standard_D16s_v6:3:20:10%:throughput``). Integer keys use 0
for "not set" because a declared key needs a default; each description in Pulumi.yaml says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from wirespeed.azure._validate import plan_cluster
from wirespeed.azure.pools import SET_A_REASON
from wirespeed.azure.problems import InvalidArgsError
from wirespeed.azure.spec import ClusterSpec, NodePoolSpec, OutboundSpec, SnatAlertSpec, default_system_pool
from wirespeed.problems import InvalidInputError, Problem
from wirespeed.sizing import azure_lb

POOL_FORMAT = azure_lb.STACK_POOL_FORMAT

# The part of a pool string each NodePoolSpec field comes from, so a component's problem names what the user wrote.
_POOL_PARTS = {
    "name": "NAME",
    "vm_size": "VM_SIZE",
    "min_count": "MIN",
    "max_count": "MAX",
    "max_surge": "SURGE",
    "profile": "PROFILE",
}
# The stack key each component argument comes from (Pulumi.yaml's names).
_KEYS = {
    "location": "wirespeed:location",
    "tuning_image": "wirespeed:image",
    "snat_alert": "wirespeed:snatAlertPercent",
    "snat_alert.threshold_percent": "wirespeed:snatAlertPercent",
    "outbound.type": "wirespeed:outboundType",
    "outbound.allocated_outbound_ports": "wirespeed:allocatedOutboundPorts",
    "outbound.connections_per_second": "wirespeed:connectionsPerSecond",
    "outbound.measured_peak_ports_per_node": "wirespeed:measuredPeakPortsPerNode",
    "outbound.measured_from": "wirespeed:measuredPeakSource",
    "outbound.hold_seconds": "wirespeed:holdSeconds",
    "outbound.ip_mode": "wirespeed:ipMode",
    "outbound.outbound_ip_count": "wirespeed:outboundIpCount",
    "outbound.existing_ip_ids": "wirespeed:existingIpIds",
    "outbound.idle_timeout_minutes": "wirespeed:idleTimeoutMinutes",
    "outbound.nat_gateway_ip_count": "wirespeed:natGatewayIpCount",
    "outbound.nat_gateway_flows": "wirespeed:natGatewayFlows",
    "outbound.nat_gateway_sku": "wirespeed:natGatewaySku",
    "outbound": "wirespeed:pools with wirespeed:connectionsPerSecond or wirespeed:allocatedOutboundPorts",
}
# Component argument names that appear in a problem's allowed text, in the stack config's terms.
_ALLOWED_WORDS = {
    "min_count": "MIN",
    "max_count": "MAX",
    "allocated_outbound_ports": "wirespeed:allocatedOutboundPorts",
    "connections_per_second": "wirespeed:connectionsPerSecond",
}
_POOL_PATH = re.compile(r"(system_pool|pools\[(\d+)\])(?:\.(\w+))?(.*)")


class StackConfigError(InvalidInputError):
    """Every stack config problem, by config key (``wirespeed:pools[1]``)."""

    def __init__(self, problems: Sequence[Problem]):
        super().__init__("invalid stack config", problems)


def parse_pool(text: object, key: str, problems: list[Problem], zones: Sequence[str]) -> NodePoolSpec | None:
    """One pool string; a problem names the key, the value and the format."""
    parts = text.split(":") if isinstance(text, str) else []
    if not 4 <= len(parts) <= 6:
        problems.append(Problem.refused(key, text, POOL_FORMAT))
        return None
    name, vm_size, min_text, max_text = parts[:4]
    surge = parts[4] if len(parts) > 4 and parts[4] else "10%"
    profile = parts[5] if len(parts) > 5 and parts[5] else "throughput"
    try:
        min_count, max_count = int(min_text), int(max_text)
    except ValueError:
        problems.append(Problem.refused(key, text, f"MIN and MAX must be whole numbers ({POOL_FORMAT})"))
        return None
    return NodePoolSpec(
        name=name,
        vm_size=vm_size,
        min_count=min_count,
        max_count=max_count,
        max_surge=surge,
        profile=profile,
        zones=tuple(zones),
    )


def _texts(config: Mapping[str, Any], key: str, problems: list[Problem], *, items: bool = True) -> list[Any]:
    """A list-of-strings key (Pulumi's get_object hands over any JSON); another type is a problem, never read as a
    list (a bare string would otherwise be the list of its characters). ``items=False`` leaves each item to its
    own parser (a pool string names its index). Only an absent key is the empty list: a stated false, 0, "" or {} is
    refused as typed, not read as "none" (no zones, no pools, silently)."""
    value = config.get(key)
    if value is None:
        return []
    if isinstance(value, list | tuple) and (not items or all(isinstance(item, str) for item in value)):
        return list(value)
    problems.append(Problem.refused(f"wirespeed:{key}", value, "a list of strings"))
    return []


def _positive_or_none(value: Any) -> Any:
    """None for Pulumi.yaml's "not set" (absent, an integer key's 0, a string key's ""); any other value as given, for
    the components to judge. False is not 0 here, though Python counts them equal: it is no count, and is refused."""
    not_set = value is None or value == "" or (value == 0 and not isinstance(value, bool))
    return None if not_set else value


# wirespeed's bounds for wirespeed:headroomPercent: the sizing's headroom multipliers (azure_lb.HEADROOM_RANGE) in
# percent.
HEADROOM_PERCENT_RANGE = (
    round((azure_lb.HEADROOM_RANGE[0] - 1) * 100),
    round((azure_lb.HEADROOM_RANGE[1] - 1) * 100),
)
# The sizing's default multiplier as the percent the stack key takes (1.25 -> 25), not a second copy of it.
DEFAULT_HEADROOM_PERCENT = round((azure_lb.DEFAULT_HEADROOM - 1) * 100)


def _headroom(value: Any, problems: list[Problem]) -> float:
    """wirespeed:headroomPercent (25: ports or IPs for the peak plus a quarter) as the sizing's multiplier (1.25)."""
    if value is None:
        value = DEFAULT_HEADROOM_PERCENT
    low, high = HEADROOM_PERCENT_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        problems.append(Problem.refused("wirespeed:headroomPercent", value, f"a whole percent from {low} to {high}"))
        value = DEFAULT_HEADROOM_PERCENT
    percent: int = value
    return 1 + percent / 100


def cluster_spec(config: Mapping[str, Any]) -> ClusterSpec:
    """The cluster the stack asks for. Keys are the Pulumi.yaml names without the ``wirespeed:`` namespace."""
    problems: list[Problem] = []
    zones = _texts(config, "zones", problems)
    system = parse_pool(config.get("systemPool"), "wirespeed:systemPool", problems, zones)
    pool_texts = _texts(config, "pools", problems, items=False)
    pools = [parse_pool(p, f"wirespeed:pools[{i}]", problems, zones) for i, p in enumerate(pool_texts)]
    outbound_type = config.get("outboundType", "loadBalancer")
    nat = outbound_type == "managedNATGateway"
    # Explicit ports win over a measured peak, and a measured peak over the workload figure (connectionsPerSecond has a
    # default, so it yields to either); the NAT gateway takes none of them (ports on demand).
    ports = None if nat else _positive_or_none(config.get("allocatedOutboundPorts"))
    measured = None if nat or ports is not None else _positive_or_none(config.get("measuredPeakPortsPerNode"))
    given = ports is not None or measured is not None
    cps = None if nat or given else _positive_or_none(config.get("connectionsPerSecond"))
    outbound = OutboundSpec(
        type=outbound_type,
        allocated_outbound_ports=ports,
        connections_per_second=cps,
        measured_peak_ports_per_node=measured,
        measured_from=_positive_or_none(config.get("measuredPeakSource")),
        headroom=_headroom(config.get("headroomPercent"), problems),
        # Only an absent key takes the default: an explicit 0 is the user's, and refused by the sizing's range.
        hold_seconds=(
            azure_lb.DEFAULT_WORKLOAD_HOLD_SECONDS if config.get("holdSeconds") is None else config["holdSeconds"]
        ),
        ip_mode=config.get("ipMode", "managed") if not nat else "managed",
        outbound_ip_count=None if nat else _positive_or_none(config.get("outboundIpCount")),
        existing_ip_ids=tuple(_texts(config, "existingIpIds", problems)) if not nat else (),
        idle_timeout_minutes=_positive_or_none(config.get("idleTimeoutMinutes")),
        nat_gateway_ip_count=_positive_or_none(config.get("natGatewayIpCount")) if nat else None,
        nat_gateway_flows=_positive_or_none(config.get("natGatewayFlows")) if nat else None,
        nat_gateway_sku=(config.get("natGatewaySku") or None) if nat else None,
    )
    alert_percent = _positive_or_none(config.get("snatAlertPercent"))
    spec = ClusterSpec(
        location=config.get("location", ""),
        system_pool=system or default_system_pool(),
        pools=tuple(p for p in pools if p is not None),
        outbound=outbound,
        kubernetes_version=_positive_or_none(config.get("kubernetesVersion")),
        tuning=bool(config.get("tuning", True)),
        tuning_image=_positive_or_none(config.get("image")),
        tuning_admission_policy=bool(config.get("tuningAdmissionPolicy", True)),
        snat_alert=None if alert_percent is None or nat else SnatAlertSpec(threshold_percent=alert_percent),
    )
    # The component's own checks too, now, so a malformed pool string does not hide what is wrong elsewhere:
    # every problem at once, each under the stack key it comes from.
    pool_keys = [f"wirespeed:pools[{i}]" for i, p in enumerate(pools) if p is not None]
    try:
        plan_cluster(spec)
    except InvalidArgsError as exc:
        for problem in exc.problems:
            if system is None and problem.field.startswith("system_pool"):
                continue  # the stand-in for a system pool string that did not parse
            found = replace(
                problem,
                field=_stack_key(problem.field, pool_keys),
                allowed=_stack_words(problem.allowed),
                reason=_stack_words(problem.reason),
            )
            if found not in problems:
                problems.append(found)
    if problems:
        raise StackConfigError(problems)
    return spec


def _stack_words(allowed: str) -> str:
    """A component's allowed text with its argument names replaced by what the stack config calls them."""
    allowed = allowed.replace(SET_A_REASON, "")
    for argument, key in _ALLOWED_WORDS.items():
        allowed = re.sub(rf"\b{argument}\b", key, allowed)
    return allowed


def _stack_key(path: str, pool_keys: Sequence[str]) -> str:
    """The stack key (and pool string part) a component property path such as ``pools[1].min_count`` comes from."""
    if path in _KEYS:
        return _KEYS[path]
    pool = _POOL_PATH.fullmatch(path)
    if pool is not None:
        which, index, field, rest = pool.groups()
        if field == "zones":
            return f"wirespeed:zones{rest}"
        key = "wirespeed:systemPool" if which == "system_pool" else pool_keys[int(index)]
        part = _POOL_PARTS.get(field or "", field)
        return f"{key} ({part}{rest})" if part else key
    head, _, _ = path.partition("[")
    if head in _KEYS:
        return _KEYS[head] + path[len(head) :]
    return f"wirespeed: {path}"

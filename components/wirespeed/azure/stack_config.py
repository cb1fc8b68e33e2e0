"""Stack config (the ``wirespeed:*`` keys of Pulumi.yaml) to a :class:`ClusterSpec`. Pure: no Pulumi import.

Pulumi's project config schema types only strings, integers, booleans and arrays, so a pool is one string:
``NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]]`` (``apps:Standard_D16s_v6:3:20:10%:throughput``). Integer keys use 0
for "not set" because a declared key needs a default; each description in Pulumi.yaml says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wirespeed.azure.spec import ClusterSpec, NodePoolSpec, OutboundSpec, SnatAlertSpec
from wirespeed.problems import InvalidInputError, Problem

POOL_FORMAT = "NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]], e.g. apps:Standard_D16s_v6:3:20:10%:throughput"


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


def _positive_or_none(value: Any) -> Any:
    return None if value in (0, None, "") else value


def cluster_spec(config: Mapping[str, Any]) -> ClusterSpec:
    """The cluster the stack asks for. Keys are the Pulumi.yaml names without the ``wirespeed:`` namespace."""
    problems: list[Problem] = []
    zones = list(config.get("zones") or [])
    system = parse_pool(config.get("systemPool"), "wirespeed:systemPool", problems, zones)
    pools = [parse_pool(p, f"wirespeed:pools[{i}]", problems, zones) for i, p in enumerate(config.get("pools") or [])]
    outbound_type = config.get("outboundType", "loadBalancer")
    nat = outbound_type == "managedNATGateway"
    # Explicit ports win over the workload figure; the NAT gateway takes neither (ports on demand).
    ports = None if nat else _positive_or_none(config.get("allocatedOutboundPorts"))
    cps = None if nat or ports else _positive_or_none(config.get("connectionsPerSecond"))
    outbound = OutboundSpec(
        type=outbound_type,
        allocated_outbound_ports=ports,
        connections_per_second=cps,
        hold_seconds=config.get("holdSeconds") or 240,
        ip_mode=config.get("ipMode", "managed") if not nat else "managed",
        outbound_ip_count=None if nat else _positive_or_none(config.get("outboundIpCount")),
        existing_ip_ids=tuple(config.get("existingIpIds") or ()) if not nat else (),
        idle_timeout_minutes=_positive_or_none(config.get("idleTimeoutMinutes")),
        nat_gateway_ip_count=_positive_or_none(config.get("natGatewayIpCount")) if nat else None,
        nat_gateway_flows=_positive_or_none(config.get("natGatewayFlows")) if nat else None,
    )
    alert_percent = _positive_or_none(config.get("snatAlertPercent"))
    if problems or system is None:
        raise StackConfigError(problems)
    return ClusterSpec(
        location=config.get("location", ""),
        system_pool=system,
        pools=tuple(p for p in pools if p is not None),
        outbound=outbound,
        kubernetes_version=_positive_or_none(config.get("kubernetesVersion")),
        tuning=bool(config.get("tuning", True)),
        tuning_image=_positive_or_none(config.get("image")),
        tuning_admission_policy=bool(config.get("tuningAdmissionPolicy", True)),
        snat_alert=None if alert_percent is None or nat else SnatAlertSpec(threshold_percent=alert_percent),
    )

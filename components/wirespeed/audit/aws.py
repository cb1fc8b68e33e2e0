# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""What `wirespeed audit aws` finds, from an inventory of the account (pure: no boto3 here).

Findings, each with the fix:

- ``nat-port-allocation-errors``: a NAT gateway's ``ErrorPortAllocation`` summed over the window is above 0: it
  could not allocate a source port, so connections failed (55,000 per destination per IP; add IPs, up to 8 on a
  zonal gateway, 32 per AZ on a regional one). For a regional gateway, each AZ whose CloudWatch series shows errors
  is its own finding; the fix names the account's quotas where they stand in the way.
- ``nat-packets-dropped``: ``PacketsDropCount`` above 0.
- ``not-network-optimised``: a node group's or Karpenter-launched instance's type is outside the network-optimised
  families; the catalog's alternative with the same vCPU count is named.
- ``user-data-without-tuning``: a node group's launch template (or its absence) does not carry wirespeed's boot
  tuning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wirespeed import catalog
from wirespeed.aws.capacity import alternatives
from wirespeed.rules._userdata import read_user_data
from wirespeed.rules.netdev_backlog_minimum import BACKLOG_SYSCTL
from wirespeed.sizing import line_rate, queues
from wirespeed.sizing.nat_gateway import (
    AWS_CONNECTIONS_PER_IP,
    NAT_GATEWAY_EIPS,
    REGION_EIPS,
    REGIONAL,
    ZONAL,
    Quota,
    aws_max_ips,
)

# CloudWatch keeps one-hour datapoints for 455 days (docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
# cloudwatch_concepts.html, "Metrics retention"): the longest window a single datapoint can cover.
MAX_DAYS = 455


@dataclass(frozen=True)
class NatZone:
    """One AZ of a regional NAT gateway: its IPs, and ErrorPortAllocation over the window from the gateway's
    per-AZ CloudWatch series (None when CloudWatch holds none for the AZ)."""

    availability_zone: str
    ips: int
    error_port_allocation: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "availability_zone": self.availability_zone,
            "ips": self.ips,
            "error_port_allocation": self.error_port_allocation,
        }


@dataclass(frozen=True)
class NatGateway:
    id: str
    subnet_id: str
    ips: int
    error_port_allocation: float = 0.0
    packets_dropped: float = 0.0
    availability_mode: str = ZONAL
    auto_scaling_ips: str | None = None  # regional: "enabled" (AWS adds IPs) or "disabled" (manual)
    zones: tuple[NatZone, ...] = ()  # regional: per AZ

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subnet_id": self.subnet_id,
            "ips": self.ips,
            "error_port_allocation": self.error_port_allocation,
            "packets_dropped": self.packets_dropped,
            "availability_mode": self.availability_mode,
            "auto_scaling_ips": self.auto_scaling_ips,
            "zones": [z.to_json() for z in self.zones],
        }


@dataclass(frozen=True)
class QuotaReading:
    """An account quota as Service Quotas returned it, or why it could not be read (AWS's default then stands)."""

    quota: Quota
    value: float | None = None
    unreadable: str = ""

    @property
    def effective(self) -> int:
        return int(self.value) if self.value is not None else self.quota.default

    @property
    def said(self) -> str:
        if self.value is not None:
            return f"{self.effective} in this account"
        return f"AWS's default {self.quota.default} (the account's value could not be read)"

    def to_json(self) -> dict[str, Any]:
        return self.quota.to_json() | {"value": self.value, "unreadable": self.unreadable or None}


@dataclass(frozen=True)
class NodeGroup:
    cluster: str
    name: str
    instance_types: tuple[str, ...]
    launch_template: str | None
    user_data: str | None  # base64 as EC2 returns it; None: no launch template or no user data

    @property
    def tuned(self) -> bool:
        return has_tuning(self.user_data, self.instance_types)

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "name": self.name,
            "instance_types": list(self.instance_types),
            "launch_template": self.launch_template,
            "tuned": self.tuned,
        }


@dataclass(frozen=True)
class KarpenterInstance:
    id: str
    instance_type: str
    node_pool: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "instance_type": self.instance_type, "node_pool": self.node_pool}


@dataclass(frozen=True)
class Finding:
    kind: str
    resource: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "resource": self.resource, "message": self.message}


@dataclass
class Inventory:
    region: str
    clusters: list[str]
    days: int
    nat_gateways: list[NatGateway] = field(default_factory=list)
    node_groups: list[NodeGroup] = field(default_factory=list)
    karpenter_instances: list[KarpenterInstance] = field(default_factory=list)
    quotas: list[QuotaReading] = field(default_factory=list)
    elastic_ips: int | None = None  # Elastic IPs the Region holds (DescribeAddresses)
    api_calls: dict[str, int] = field(default_factory=dict)

    def quota(self, quota: Quota) -> QuotaReading:
        for reading in self.quotas:
            if reading.quota == quota:
                return reading
        return QuotaReading(quota, unreadable="not read")


@dataclass
class AuditReport:
    inventory: Inventory
    findings: list[Finding]

    @property
    def clean(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        inv = self.inventory
        return {
            "region": inv.region,
            "clusters": inv.clusters,
            "days": inv.days,
            "nat_gateways": [g.to_json() for g in inv.nat_gateways],
            "node_groups": [g.to_json() for g in inv.node_groups],
            "karpenter_instances": [i.to_json() for i in inv.karpenter_instances],
            "quotas": [q.to_json() for q in inv.quotas],
            "elastic_ips": inv.elastic_ips,
            "findings": [f.to_json() for f in self.findings],
            "api_calls": dict(sorted(inv.api_calls.items())),
        }

    def explain(self) -> str:
        inv = self.inventory
        lines = [
            f"Region {inv.region}, last {inv.days} day(s): {len(inv.nat_gateways)} NAT gateway(s), "
            f"{len(inv.node_groups)} node group(s) in {len(inv.clusters)} cluster(s), "
            f"{len(inv.karpenter_instances)} Karpenter instance(s); {sum(inv.api_calls.values())} API call(s)."
        ]
        for gw in inv.nat_gateways:
            if gw.availability_mode == REGIONAL:
                ips = ", ".join(f"{z.availability_zone} {z.ips}" for z in gw.zones) or "none yet"
                how = "AWS adds IPs" if gw.auto_scaling_ips == "enabled" else "manual IPs"
                lines.append(f"NAT gateway {gw.id}: regional ({how}); IPs per AZ: {ips}.")
        for reading in inv.quotas:
            held = f"; the Region holds {inv.elastic_ips}" if reading.quota == REGION_EIPS and inv.elastic_ips else ""
            why = f" ({reading.unreadable})" if reading.unreadable else ""
            lines.append(f"Quota {reading.quota.label}: {reading.said}{why}{held}.")
        if self.clean:
            lines.append("No findings.")
        for f in self.findings:
            lines.append(f"- [{f.kind}] {f.resource}: {f.message}")
        return "\n".join(lines)


def backlog_minimum(instance_types: Sequence[str] = ()) -> tuple[int, str]:
    """The smallest backlog a node group's nodes may run, as the policy derives it (sizing.queues.Need, the one
    decision of "enough"): for its fastest known instance type's line rate, else for the policy's default line rate;
    with the phrase saying which."""
    need, why = _backlog_need(instance_types)
    return need.required, why


def _backlog_need(instance_types: Sequence[str]) -> tuple[queues.Need, str]:
    rates = [rate for rate in map(line_rate.of_size, instance_types) if rate is not None]
    rate = max(rates, key=lambda r: r.gbps) if rates else None
    if rate is None:
        rate = line_rate.assumed(line_rate.DEFAULT_LINE_RATE_GBPS, "no instance type in wirespeed's catalog")
    return line_rate.backlog_need(rate.gbps), rate.describe()


def tuning_gap(user_data: str | None, instance_types: Sequence[str] = ()) -> str | None:
    """What EC2 user data (base64) lacks of boot tuning, or None when it sets netdev_max_backlog to at least the
    minimum the policy derives for the node group's line rate.

    Parsed as the policy rule parses it (:mod:`wirespeed.rules._userdata`: gzip, MIME multipart, a nodeadm
    NodeConfig, a shell script or Bottlerocket settings), never by looking for a marker comment: compressed
    tuned user data counts as tuned, and a marker followed by a backlog of 1,000 does not.
    """
    if not user_data:
        return "no user data"
    values = read_user_data(user_data).backlog_values()
    need, why = _backlog_need(instance_types)
    minimum = need.required
    if not values:
        # Unset, nodes run the kernel default, judged as that value written out would be.
        if need.holds(None):
            return None
        return (
            f"does not set {BACKLOG_SYSCTL}, so nodes keep the kernel default {need.default:,}, below the minimum "
            f"{minimum:,} for {why}"
        )
    if not need.holds(min(values)):
        return f"sets {BACKLOG_SYSCTL} to {min(values):,}, below the minimum {minimum:,} for {why}"
    return None


def has_tuning(user_data: str | None, instance_types: Sequence[str] = ()) -> bool:
    """Whether EC2 user data (base64) sets the backlog to at least the minimum for the node group's line rate."""
    return tuning_gap(user_data, instance_types) is None


_GRAVITON = re.compile(r"^[a-z]+\d+[a-z]*g[a-z]*$")


def _network_optimised_families() -> set[str]:
    return {t.family for t in catalog.instance_types(cloud="aws", network_optimised=True)}


def type_finding(instance_type: str, resource: str) -> Finding | None:
    """A finding when the type is not network-optimised, naming the catalog's alternative."""
    family, _, size = instance_type.partition(".")
    if family in _network_optimised_families():
        return None
    try:
        known = catalog.lookup(instance_type)
    except catalog.UnknownInstanceType:
        known = None
    if known is not None and known.cloud == "aws":
        better = alternatives(known)
    else:
        # Not in the catalog (it holds the network-optimised families and a few for comparison): match the size
        # name and the architecture the family name implies.
        arch = "arm64" if _GRAVITON.match(family) else "x86_64"
        better = sorted(
            (
                t
                for t in catalog.instance_types(cloud="aws", network_optimised=True)
                if t.name.partition(".")[2] == size and t.architecture == arch
            ),
            key=lambda t: (t.family[0] != family[:1], -t.baseline_gbps, t.name),
        )
    hint = (
        f"e.g. {better[0].name} ({better[0].baseline_gbps:g} Gb/s sustained"
        + (", ENA Express" if better[0].ena_express else "")
        + ")"
        if better
        else "see `wirespeed catalog list --cloud aws --network-optimised`"
    )
    return Finding(
        "not-network-optimised",
        resource,
        f"{instance_type} is not network-optimised: instances over their bandwidth allowance drop packets "
        f"(ethtool -S bw_in/out_allowance_exceeded); use a network-optimised type, {hint}",
    )


def analyse(inv: Inventory) -> AuditReport:
    findings: list[Finding] = []
    for gw in inv.nat_gateways:
        findings.extend(nat_findings(gw, inv))
    for ng in inv.node_groups:
        resource = f"{ng.cluster}/{ng.name}"
        for instance_type in ng.instance_types:
            found = type_finding(instance_type, resource)
            if found is not None:
                findings.append(found)
        gap = tuning_gap(ng.user_data, ng.instance_types)
        if gap is not None:
            where = (
                f"launch template {ng.launch_template}'s user data {gap}"
                if ng.launch_template
                else ("no launch template")
            )
            findings.append(
                Finding(
                    "user-data-without-tuning",
                    resource,
                    f"{where}: no boot tuning (rings and backlog stay at driver defaults until the node agent "
                    "runs); build the group with wirespeed.aws.NetworkOptimizedNodeGroup",
                )
            )
    for instance in inv.karpenter_instances:
        found = type_finding(instance.instance_type, f"{instance.id} (NodePool {instance.node_pool})")
        if found is not None:
            findings.append(found)
    return AuditReport(inv, findings)


def _quota_blockers(inv: Inventory, ips_after: int, zonal: bool) -> str:
    """What stops adding an IP: the per-gateway quota (zonal) and the Region's Elastic IPs."""
    out = []
    per_gateway = inv.quota(NAT_GATEWAY_EIPS)
    if zonal and ips_after > per_gateway.effective:
        out.append(f"raise {NAT_GATEWAY_EIPS.label} (now {per_gateway.said}) to {ips_after} first")
    region = inv.quota(REGION_EIPS)
    if inv.elastic_ips is not None and inv.elastic_ips >= region.effective:
        out.append(f"the Region holds {inv.elastic_ips} Elastic IPs of {region.said}: raise {REGION_EIPS.label} first")
    return ("; " + "; ".join(out)) if out else ""


def _zonal_finding(gw: NatGateway, inv: Inventory) -> Finding:
    most = aws_max_ips(ZONAL)
    more = (
        f"add Elastic IPs (secondaryAllocationIds, up to {most}){_quota_blockers(inv, gw.ips + 1, True)}"
        if gw.ips < most
        else f"it has the maximum {most} IPs: move to a regional NAT gateway (up to {aws_max_ips(REGIONAL)} IPs per "
        "AZ) or spread egress over more destination IPs"
    )
    return Finding(
        "nat-port-allocation-errors",
        gw.id,
        f"{gw.error_port_allocation:,.0f} port allocation error(s) in {inv.days} day(s): connections failed. "
        f"{gw.ips} IP(s) carry {gw.ips * AWS_CONNECTIONS_PER_IP:,} connections to one destination; {more} "
        "(`wirespeed size aws-natgw --connections N`)",
    )


def _regional_fix(gw: NatGateway, zone: NatZone, inv: Inventory) -> str:
    most = aws_max_ips(REGIONAL)
    if zone.ips >= most:
        return f"the AZ has the maximum {most} IPs: spread egress over more destination IPs"
    if gw.auto_scaling_ips == "enabled":
        return (
            f"automatic mode adds IPs up to {most} per AZ by itself: errors mean it had not caught up with the peak; "
            "if they recur, switch to manual Elastic IPs sized for it"
        )
    return (
        f"associate more Elastic IPs in {zone.availability_zone} (AssociateNatGatewayAddress --availability-zone "
        f"{zone.availability_zone}, up to {most}){_quota_blockers(inv, zone.ips + 1, False)}"
    )


def _regional_findings(gw: NatGateway, inv: Inventory) -> list[Finding]:
    found = []
    for zone in gw.zones:
        if zone.error_port_allocation:
            found.append(
                Finding(
                    "nat-port-allocation-errors",
                    f"{gw.id} ({zone.availability_zone})",
                    f"{zone.error_port_allocation:,.0f} port allocation error(s) in {inv.days} day(s) in "
                    f"{zone.availability_zone}: connections failed. {zone.ips} IP(s) carry "
                    f"{zone.ips * AWS_CONNECTIONS_PER_IP:,} connections to one destination from that AZ; "
                    f"{_regional_fix(gw, zone, inv)} (`wirespeed size aws-natgw --az {zone.availability_zone}=N "
                    "--mode regional`)",
                )
            )
    if gw.error_port_allocation > 0 and not found:
        ips = ", ".join(f"{z.availability_zone} {z.ips}" for z in gw.zones) or "none"
        found.append(
            Finding(
                "nat-port-allocation-errors",
                gw.id,
                f"{gw.error_port_allocation:,.0f} port allocation error(s) in {inv.days} day(s): connections failed. "
                f"CloudWatch holds no per-AZ series for this regional gateway, so the AZ is not known; IPs per AZ: "
                f"{ips} ({AWS_CONNECTIONS_PER_IP:,} connections to one destination each, up to "
                f"{aws_max_ips(REGIONAL)} per AZ)",
            )
        )
    return found


def nat_findings(gw: NatGateway, inv: Inventory) -> list[Finding]:
    found = []
    if gw.availability_mode == REGIONAL:
        found.extend(_regional_findings(gw, inv))
    elif gw.error_port_allocation > 0:
        found.append(_zonal_finding(gw, inv))
    if gw.packets_dropped > 0:
        found.append(
            Finding(
                "nat-packets-dropped",
                gw.id,
                f"{gw.packets_dropped:,.0f} packet(s) dropped in {inv.days} day(s) (PacketsDropCount)",
            )
        )
    return found

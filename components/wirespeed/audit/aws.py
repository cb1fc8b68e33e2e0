"""What `wirespeed audit aws` finds, from an inventory of the account (pure: no boto3 here).

Findings, each with the fix:

- ``nat-port-allocation-errors``: a NAT gateway's ``ErrorPortAllocation`` summed over the window is above 0: it
  could not allocate a source port, so connections failed (55,000 per destination per IP; add IPs, up to 8).
- ``nat-packets-dropped``: ``PacketsDropCount`` above 0.
- ``not-network-optimised``: a node group's or Karpenter-launched instance's type is outside the network-optimised
  families; the catalog's alternative with the same vCPU count is named.
- ``user-data-without-tuning``: a node group's launch template (or its absence) does not carry wirespeed's boot
  tuning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from wirespeed import catalog
from wirespeed.aws.capacity import alternatives
from wirespeed.rules._userdata import read_user_data
from wirespeed.rules.tuning import BACKLOG_SYSCTL, DEFAULT_MINIMUM_BACKLOG
from wirespeed.sizing.nat_gateway import AWS_CONNECTIONS_PER_IP, AWS_MAX_IPS

# CloudWatch keeps one-hour datapoints for 455 days (docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
# cloudwatch_concepts.html, "Metrics retention"): the longest window a single datapoint can cover.
MAX_DAYS = 455


@dataclass(frozen=True)
class NatGateway:
    id: str
    subnet_id: str
    ips: int
    error_port_allocation: float = 0.0
    packets_dropped: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subnet_id": self.subnet_id,
            "ips": self.ips,
            "error_port_allocation": self.error_port_allocation,
            "packets_dropped": self.packets_dropped,
        }


@dataclass(frozen=True)
class NodeGroup:
    cluster: str
    name: str
    instance_types: tuple[str, ...]
    launch_template: str | None
    user_data: str | None  # base64 as EC2 returns it; None: no launch template or no user data

    @property
    def tuned(self) -> bool:
        return has_tuning(self.user_data)

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
    api_calls: dict[str, int] = field(default_factory=dict)


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
        if self.clean:
            lines.append("No findings.")
        for f in self.findings:
            lines.append(f"- [{f.kind}] {f.resource}: {f.message}")
        return "\n".join(lines)


def tuning_gap(user_data: str | None) -> str | None:
    """What EC2 user data (base64) lacks of boot tuning, or None when it sets netdev_max_backlog to at least the
    policy's default minimum.

    Parsed as the policy rule parses it (:mod:`wirespeed.rules._userdata`: gzip, MIME multipart, a nodeadm
    NodeConfig, a shell script or Bottlerocket settings), never by looking for a marker comment: compressed
    tuned user data counts as tuned, and a marker followed by a backlog of 1,000 does not.
    """
    if not user_data:
        return "no user data"
    values = read_user_data(user_data).backlog_values()
    if not values:
        return f"does not set {BACKLOG_SYSCTL}"
    if min(values) < DEFAULT_MINIMUM_BACKLOG:
        return f"sets {BACKLOG_SYSCTL} to {min(values):,}, below {DEFAULT_MINIMUM_BACKLOG:,}"
    return None


def has_tuning(user_data: str | None) -> bool:
    """Whether EC2 user data (base64) sets the backlog to at least the policy's default minimum."""
    return tuning_gap(user_data) is None


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
        if gw.error_port_allocation > 0:
            more = (
                f"add Elastic IPs (secondaryAllocationIds, up to {AWS_MAX_IPS})"
                if gw.ips < AWS_MAX_IPS
                else "it has the maximum 8 IPs: spread egress over more gateways or destination IPs"
            )
            findings.append(
                Finding(
                    "nat-port-allocation-errors",
                    gw.id,
                    f"{gw.error_port_allocation:,.0f} port allocation error(s) in {inv.days} day(s): connections "
                    f"failed. {gw.ips} IP(s) carry {gw.ips * AWS_CONNECTIONS_PER_IP:,} connections to one "
                    f"destination; {more} (`wirespeed size aws-natgw --connections N`)",
                )
            )
        if gw.packets_dropped > 0:
            findings.append(
                Finding(
                    "nat-packets-dropped",
                    gw.id,
                    f"{gw.packets_dropped:,.0f} packet(s) dropped in {inv.days} day(s) (PacketsDropCount)",
                )
            )
    for ng in inv.node_groups:
        resource = f"{ng.cluster}/{ng.name}"
        for instance_type in ng.instance_types:
            found = type_finding(instance_type, resource)
            if found is not None:
                findings.append(found)
        gap = tuning_gap(ng.user_data)
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

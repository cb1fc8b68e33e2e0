"""The parts of a plan: node pools, a cluster's outbound, the node agent's profiles, replaced pools. Pure."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wirespeed import catalog
from wirespeed.manifests.node_tuning import PROFILE_LABEL
from wirespeed.profile import Outbound
from wirespeed.program.create_only import create_only_values
from wirespeed.program.text import address_order, fmt
from wirespeed.sizing import azure_lb, snat_limits
from wirespeed.sizing.errors import SizingError
from wirespeed.sizing.nap import NapCapacity
from wirespeed.values import get, plain_numbers, whole

# learn.microsoft.com/azure/aks/upgrade-aks-cluster#customize-node-surge-upgrade: maxSurge defaults to 10%.
DEFAULT_MAX_SURGE = "10%"


@dataclass(frozen=True)
class PoolReview:
    """One AKS node pool, from an ``AgentPool`` or from a cluster's inline ``agentPoolProfiles``."""

    name: str
    cluster: str
    urn: str
    source: str
    inputs: dict[str, Any]
    instance: catalog.InstanceType | None

    @property
    def autoscaling(self) -> bool:
        return bool(self.inputs.get("enableAutoScaling"))

    @property
    def max_count(self) -> int | None:
        key = "maxCount" if self.autoscaling else "count"
        return whole(self.inputs.get(key)) if key in self.inputs else (None if self.autoscaling else 1)

    @property
    def max_surge(self) -> str:
        surge = get(self.inputs, "upgradeSettings", "maxSurge")
        return str(surge).strip() if surge not in (None, "") else DEFAULT_MAX_SURGE

    @property
    def profile(self) -> str | None:
        labels = self.inputs.get("nodeLabels")
        value = labels.get(PROFILE_LABEL) if isinstance(labels, Mapping) else None
        return str(value) if value is not None else None

    @property
    def sysctls(self) -> dict[str, Any]:
        found = get(self.inputs, "linuxOSConfig", "sysctls")
        return dict(sorted(plain_numbers(found).items())) if isinstance(found, Mapping) else {}

    def sizing_pool(self) -> azure_lb.Pool:
        max_count = self.max_count
        if max_count is None:
            raise SizingError(f"pool {self.name!r}.maxCount", self.inputs.get("maxCount"), "a whole node count")
        return azure_lb.Pool.parse(f"{max_count}:{self.max_surge}", name=self.name)

    def nodes(self) -> str:
        if self.autoscaling:
            return f"{fmt(whole(self.inputs.get('minCount')))}..{fmt(self.max_count)} (autoscaled)"
        return f"{fmt(self.max_count)} (fixed)"

    def to_json(self) -> dict[str, Any]:
        try:
            surge_nodes: int | None = self.sizing_pool().surge_nodes
        except SizingError:
            surge_nodes = None
        zones = self.inputs.get("availabilityZones")
        return {
            "name": self.name,
            "cluster": self.cluster,
            "urn": self.urn,
            "source": self.source,
            "vm_size": self.inputs.get("vmSize"),
            "network_optimised": self.instance.network_optimised if self.instance else None,
            "nic": self.instance.nic if self.instance else None,
            "max_bandwidth_mbps": self.instance.max_bandwidth_mbps if self.instance else None,
            "mode": self.inputs.get("mode"),
            "os_sku": self.inputs.get("osSKU"),
            "autoscaling": self.autoscaling,
            "min_count": whole(self.inputs.get("minCount")),
            "max_count": self.max_count,
            "max_surge": self.max_surge,
            "surge_nodes": surge_nodes,
            "zones": list(zones) if isinstance(zones, list) else [],
            "max_pods": whole(self.inputs.get("maxPods")),
            "profile": self.profile,
            "taints": list(self.inputs.get("nodeTaints") or []),
            "linux_os_config_sysctls": self.sysctls,
            "create_only": plain_numbers(create_only_values(self.inputs)),
        }


@dataclass(frozen=True)
class NapReview:
    """One AKS node auto-provisioning NodePool (``nodeClassRef.group: karpenter.azure.com``) and its AKSNodeClass,
    with the node ceiling recomputed from its registered ``limits.cpu``, requirements and disruption budget."""

    name: str
    cluster: str | None
    urn: str
    series: tuple[str, ...]
    sizes: tuple[catalog.InstanceType, ...]
    capacity: NapCapacity | None
    profile: str | None
    node_class: str | None
    sysctls: dict[str, Any]
    findings: tuple[str, ...] = ()

    def sizing_pool(self) -> azure_lb.Pool:
        if self.capacity is None:
            raise SizingError(f"NodePool {self.name!r}.limits.cpu", None, "a CPU quantity")
        return self.capacity.sizing_pool()

    def explain(self) -> str:
        slow = sorted({t.family for t in self.sizes if not t.network_optimised})
        optimised = f", NOT network-optimised: {', '.join(slow)}" if slow else ""
        ceiling = (
            f"{self.capacity.max_nodes:,} nodes at most + {self.capacity.surge_nodes:,} (disruption budget "
            f"{self.capacity.budget})"
            if self.capacity
            else "no node ceiling (see notes)"
        )
        sysctls = ", ".join(f"{k}={v}" for k, v in self.sysctls.items()) or "none"
        return (
            f"- {self.name} (cluster {self.cluster or '?'}, NodePool): SKU series {', '.join(self.series) or 'none'} "
            f"({len(self.sizes)} catalog size(s){optimised}); {ceiling}; profile {self.profile or 'none'}; "
            f"AKSNodeClass {self.node_class or '?'} linuxOSConfig.sysctls {sysctls}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cluster": self.cluster,
            "urn": self.urn,
            "series": list(self.series),
            "sizes": [t.name for t in self.sizes],
            "network_optimised": all(t.network_optimised for t in self.sizes),
            "capacity": self.capacity.to_json() if self.capacity else None,
            "profile": self.profile,
            "node_class": self.node_class,
            "linux_os_config_sysctls": self.sysctls,
            "findings": list(self.findings),
        }


@dataclass(frozen=True)
class OutboundReview:
    """A cluster's outbound settings as registered, and the capacity check recomputed from them."""

    cluster: str
    outbound_type: str
    allocated_outbound_ports: int | None = None
    ip_count: int | None = None
    ip_source: str = ""
    ip_addresses: tuple[str, ...] = ()
    idle_timeout_minutes: int | None = None
    pools: tuple[azure_lb.Pool, ...] = ()
    lb_plan: azure_lb.LoadBalancerPlan | None = None
    findings: tuple[str, ...] = ()
    auto_provisioned: tuple[NapCapacity, ...] = ()
    """NAP NodePools counted in ``pools``, each at its node ceiling plus disruption budget, with the derivation."""

    @property
    def nodes_at_max(self) -> int:
        return sum(p.nodes_at_max for p in self.pools)

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "outbound_type": self.outbound_type,
            "allocated_outbound_ports": self.allocated_outbound_ports,
            "ip_count": self.ip_count,
            "ip_source": self.ip_source,
            "ip_addresses": list(self.ip_addresses),
            "idle_timeout_minutes": self.idle_timeout_minutes,
            "nodes_at_max": self.nodes_at_max,
            "load_balancer": self.lb_plan.to_json() if self.lb_plan else None,
            "auto_provisioned": [c.to_json() for c in self.auto_provisioned],
            "findings": list(self.findings),
        }

    def explain(self) -> str:
        lines = [f"Cluster {self.cluster}: outboundType {self.outbound_type}."]
        if self.outbound_type == "loadBalancer":
            ips = f"{fmt(self.ip_count)} outbound IP(s) ({self.ip_source})"
            if self.ip_addresses:
                ips += ": " + ", ".join(sorted(self.ip_addresses, key=address_order))
            idle = f", idle timeout {self.idle_timeout_minutes} min" if self.idle_timeout_minutes else ""
            lines.append(f"Load balancer: allocatedOutboundPorts {fmt(self.allocated_outbound_ports)}, {ips}{idle}.")
        elif self.outbound_type == "managedNATGateway":
            idle = f", idle timeout {self.idle_timeout_minutes} min" if self.idle_timeout_minutes else ""
            lines.append(f"Managed NAT gateway: {fmt(self.ip_count)} IP(s){idle}.")
        lines.extend(c.explain() for c in self.auto_provisioned)
        if self.lb_plan is not None:
            lines.append(self.lb_plan.explain())
        lines.extend(self.findings)
        return "\n".join(lines)


@dataclass(frozen=True)
class TuningReview:
    """What the node agent applies: a profile from a ConfigMap and the DaemonSet that runs on its nodes."""

    profile: str
    config_map: str
    rings: dict[str, dict[str, int]]
    sysctls: dict[str, int]
    mtu: int | None
    daemon_set: str | None
    image: str | None
    namespace: str | None
    outbound: Outbound | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "config_map": self.config_map,
            "daemon_set": self.daemon_set,
            "namespace": self.namespace,
            "image": self.image,
            "rings": self.rings,
            "sysctls": self.sysctls,
            "mtu": self.mtu,
            "outbound": None
            if self.outbound is None
            else {**self.outbound.model_dump(mode="json", exclude_none=True), "capacity": self.outbound.capacity()},
        }

    def _snat_line(self) -> str:
        out = self.outbound
        if out is None:
            return "no outbound section: the agent sets no SNATPortPressure condition"
        limits = snat_limits.KINDS[out.kind]
        if limits.sized_by == "allocated_ports_per_node":
            capacity, how = f"{out.capacity():,} ports per node", str(out.kind)
        else:
            capacity = f"{out.capacity():,} connections"
            how = f"{out.kind}: {out.public_ips} IP(s) x {limits.per_unit:,}, shared by every node behind the gateway"
        return (
            f"SNATPortPressure when one destination uses {out.pressure_percent}% of {capacity} ({how}; closed flows "
            f"hold their port {out.hold_seconds} s)"
        )

    def explain(self) -> str:
        rings = "; ".join(
            f"{driver} RX {fmt(r.get('rx'))} TX {fmt(r.get('tx'))}" for driver, r in sorted(self.rings.items())
        )
        sysctls = ", ".join(f"{k} {v:,}" for k, v in self.sysctls.items()) or "none"
        mtu = f"MTU {self.mtu:,}" if self.mtu else "MTU left alone"
        runner = (
            f"DaemonSet {self.namespace}/{self.daemon_set} ({self.image}) on nodes labelled "
            f"{PROFILE_LABEL}={self.profile}"
            if self.daemon_set
            else "no DaemonSet in this program runs it"
        )
        head = f"Profile {self.profile}: rings {rings or 'none'}; sysctls {sysctls}; {mtu}."
        return f"{head}\n  {self._snat_line()}.\n  {runner}."


@dataclass(frozen=True)
class Replacement:
    """A pool whose create-only inputs changed since a previous plan: input -> (before, now)."""

    pool: str
    cluster: str
    changed: dict[str, tuple[Any, Any]]

    def to_json(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "cluster": self.cluster,
            "changed": {k: {"before": a, "now": b} for k, (a, b) in self.changed.items()},
        }

    def explain(self) -> str:
        changes = "; ".join(f"{k} {json.dumps(a)} -> {json.dumps(b)}" for k, (a, b) in self.changed.items())
        return f"- {self.pool} (cluster {self.cluster}) REPLACES THE POOL: {changes}"


@dataclass(frozen=True)
class Change:
    """A setting a reviewer must see that moved since a previous plan: outbound, an alert, an address."""

    kind: str
    """``outbound``, ``alert`` or ``address``."""
    subject: str
    """What changed: ``cluster NAME``, ``alert NAME`` or the address."""
    field: str
    """Which setting (``allocatedOutboundPorts``), or ``added``/``removed`` for an address."""
    before: Any
    now: Any
    resource: str | None = None
    """For an address: the resource that holds it (the public IP or Elastic IP), by name."""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "subject": self.subject,
            "field": self.field,
            "before": self.before,
            "now": self.now,
            "resource": self.resource,
        }

    def explain(self) -> str:
        if self.kind == "address":
            # An offline plan's addresses are invented (RFC 5737): the resource is what the reviewer can act on.
            ip = f"outbound IP {self.resource} ({self.subject} in this offline plan"
            if self.field == "added":
                return (
                    f"- NEW {ip}; the cloud assigns the real address when it creates the IP): new egress that "
                    "partners who allowlist yours must add before traffic leaves from it"
                )
            return f"- {ip}) is deleted: partners can drop its address from their allowlists once traffic has moved"
        return f"- {self.subject}: {self.field} {_shown(self.before)} -> {_shown(self.now)}"


def _shown(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return json.dumps(value)
    return f"{value:,}" if float(value).is_integer() else str(value)

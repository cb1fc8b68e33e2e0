"""The cluster's egress: a load balancer with explicit SNAT ports or a managed NAT gateway, and the SNAT alert. Pure.

Sized by :mod:`wirespeed.sizing` over every pool at maxCount + surge (AKS's capacity rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wirespeed.azure.pools import parse_surge
from wirespeed.azure.problems import Collector, InvalidArgsError, join, whole_in
from wirespeed.azure.spec import AutoProvisionedPoolSpec, NodePoolSpec, OutboundSpec, SnatAlertSpec
from wirespeed.profile import Outbound, sized_outbound
from wirespeed.sizing import azure_lb, nat_gateway
from wirespeed.sizing.errors import InfeasibleError, SizingError
from wirespeed.sizing.nat_gateway import AZURE_STANDARD
from wirespeed.sizing.snat_limits import (
    AZURE_LOAD_BALANCER,
    AZURE_NAT_GATEWAY,
    AZURE_NAT_GATEWAY_UDP_HOLD_SECONDS,
    udp_hold_from_idle_timeout,
)
from wirespeed.values import whole

# The outbound idle timeout's range and defaults, cited at their homes in wirespeed.sizing (below this layer, so the
# agent's UDP hold bound derives from them too).
IDLE_TIMEOUT_RANGE = azure_lb.OUTBOUND_IDLE_TIMEOUT_RANGE
LB_DEFAULT_IDLE_TIMEOUT = azure_lb.AKS_LB_DEFAULT_IDLE_TIMEOUT
NAT_DEFAULT_IDLE_TIMEOUT = nat_gateway.AZURE_DEFAULT_IDLE_TIMEOUT
# The NAT gateway SKUs this component can create. pulumi-azure-native 3.29.0 (pyproject.toml's pin) builds managed
# clusters on containerservice API 2025-09-01, whose ManagedClusterNATGatewayProfile has no ``sku``
# (ManagedClusterNATGatewayProfileArgs takes idle_timeout_in_minutes and managed_outbound_ip_profile only), so AKS
# creates a Standard gateway. ``natGatewayProfile.sku`` ("Standard", "StandardV2"; "Defaults to 'StandardV2' where
# available in the region, otherwise 'Standard'") arrives in API 2026-06-01 (Azure/azure-rest-api-specs
# specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable/2026-06-01/managedClusters.json
# at commit 079dcbac5a6ec3c3585067160dc21e2a0baf6824): add StandardV2 here when the pin moves to an SDK on that API.
COMPONENT_NAT_SKUS = (nat_gateway.AZURE_STANDARD,)
# Why StandardV2 is refused, for the component and modules/aks-outbound alike (generated into its facts): the azurerm
# kubernetes_cluster nat_gateway_profile block documents idle_timeout_in_minutes and managed_outbound_ip_count only
# (registry.terraform.io/providers/hashicorp/azurerm/latest/docs/resources/kubernetes_cluster).
NAT_SKU_UNBUILDABLE = (
    "is not allowed: neither the pinned pulumi-azure-native 3.29.0 (AKS API 2025-09-01) nor "
    "azurerm_kubernetes_cluster's nat_gateway_profile (idle_timeout_in_minutes, managed_outbound_ip_count) can set "
    "natGatewayProfile.sku (AKS API 2026-06-01), so AKS would create a Standard (zonal) NAT gateway; use 'Standard', "
    "or a userAssignedNATGateway you create as StandardV2 (`wirespeed size azure-natgw --sku StandardV2` sizes it)"
)
# Azure Monitor metric alerts take severity 0 (critical) .. 4 (verbose) (Microsoft.Insights/metricAlerts).
SEVERITY_RANGE = (0, 4)


@dataclass(frozen=True)
class OutboundPlan:
    """The cluster's outbound: a load balancer profile or a managed NAT gateway, sized over every pool."""

    type: str
    idle_timeout_minutes: int
    load_balancer: azure_lb.LoadBalancerPlan | None = None
    nat_gateway: nat_gateway.NatGatewayPlan | None = None
    nat_gateway_ips: int = 0
    ip_mode: str = "managed"
    existing_ip_ids: tuple[str, ...] = ()
    existing_prefix_ids: tuple[str, ...] = ()
    measured_from: str | None = None
    """NAT gateway: where the figure its IPs were sized from was measured (a load balancer's is in its plan)."""
    nat_gateway_sku: str = AZURE_STANDARD
    """NAT gateway: its SKU (one of :data:`COMPONENT_NAT_SKUS`)."""

    @property
    def outbound_ips(self) -> int:
        if self.load_balancer is not None:
            return self.load_balancer.outbound_ips
        return self.nat_gateway_ips

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "idle_timeout_minutes": self.idle_timeout_minutes}
        if self.load_balancer is not None:
            out.update(ip_mode=self.ip_mode, load_balancer=self.load_balancer.to_json())
            workload = self.load_balancer.workload
            if workload is not None:
                # What the ports were sized from, so a plan can show (and recheck) the derivation.
                out["workload"] = {
                    "connections_per_second": workload.connections_per_second,
                    "hold_seconds": workload.hold_seconds,
                    "headroom": workload.headroom,
                }
        else:
            out.update(ips=self.nat_gateway_ips, nat_gateway=self.nat_gateway.to_json() if self.nat_gateway else None)
            out["nat_gateway_sku"] = self.nat_gateway_sku
            if self.measured_from is not None:
                out["measured_from"] = self.measured_from
        return out

    def explain(self) -> str:
        if self.load_balancer is not None:
            return self.load_balancer.explain()
        measured = f" Measured: {self.measured_from}." if self.measured_from else ""
        if self.nat_gateway is not None:
            return self.nat_gateway.explain() + measured
        facts = nat_gateway.AZURE_NAT_SKUS[self.nat_gateway_sku].facts()
        return f"Managed NAT gateway with {self.nat_gateway_ips} IP(s) (given explicitly). {facts}{measured}"

    def profile_outbound(self, base: Outbound | None = None) -> Outbound:
        """The profile's outbound section for the nodes behind this egress: the load balancer's ports per node, or
        the NAT gateway's IPs (``base``'s threshold, exclusions and TCP hold kept), with the UDP hold of what this
        creates: the load balancer's outbound idle timeout, the NAT gateway's fixed UDP timers (snat_limits)."""
        if self.load_balancer is not None:
            return sized_outbound(
                AZURE_LOAD_BALANCER,
                self.load_balancer.allocated_outbound_ports,
                base,
                udp_hold_from_idle_timeout(self.idle_timeout_minutes),
            )
        return sized_outbound(AZURE_NAT_GATEWAY, self.nat_gateway_ips, base, AZURE_NAT_GATEWAY_UDP_HOLD_SECONDS)


@dataclass(frozen=True)
class SnatAlertPlan:
    """A static threshold on ``UsedSnatPorts`` (max per backend IP) against the explicit allocated ports."""

    threshold_percent: float
    allocated_ports: int
    threshold_ports: int
    severity: int
    window_size: str
    evaluation_frequency: str
    action_group_ids: tuple[str, ...]


def check_outbound(out: Collector, spec: OutboundSpec, pools: Sequence[azure_lb.Pool] | None) -> OutboundPlan | None:
    prefix = "outbound"
    if spec.type not in ("loadBalancer", "managedNATGateway"):
        out.add(join(prefix, "type"), f"{spec.type!r} is not allowed: 'loadBalancer' or 'managedNATGateway'")
        return None
    default_timeout = LB_DEFAULT_IDLE_TIMEOUT if spec.type == "loadBalancer" else NAT_DEFAULT_IDLE_TIMEOUT
    timeout_given = spec.idle_timeout_minutes if spec.idle_timeout_minutes is not None else default_timeout
    timeout = whole_in(out, join(prefix, "idle_timeout_minutes"), timeout_given, *IDLE_TIMEOUT_RANGE)
    if spec.type == "managedNATGateway":
        return _check_nat_gateway(out, spec, timeout)
    return _check_load_balancer(out, spec, pools, timeout)


def _check_nat_gateway(out: Collector, spec: OutboundSpec, timeout: int | None) -> OutboundPlan | None:
    prefix = "outbound"
    for name in ("allocated_outbound_ports", "connections_per_second", "measured_peak_ports_per_node",
                 "outbound_ip_count"):  # fmt: skip
        if getattr(spec, name) is not None:
            out.add(join(prefix, name), f"{getattr(spec, name)!r} is not allowed with managedNATGateway: "
                    "load balancer setting (a NAT gateway allocates ports on demand)")  # fmt: skip
    if spec.existing_ip_ids or spec.existing_prefix_ids or spec.ip_mode != "managed":
        out.add(join(prefix, "ip_mode"), f"{spec.ip_mode!r} is not allowed with managedNATGateway: only 'managed' "
                "(AKS creates the NAT gateway's IPs)")  # fmt: skip
    sku = _check_nat_sku(out, spec.nat_gateway_sku)
    given = (spec.nat_gateway_ip_count is not None) + (spec.nat_gateway_flows is not None)
    if given != 1:
        out.add(
            join(prefix, "nat_gateway_ip_count"),
            f"give exactly one of nat_gateway_ip_count (1..{nat_gateway.AZURE_MAX_IPS}) or nat_gateway_flows "
            "(concurrent outbound flows)",
        )
        return None
    sized: nat_gateway.NatGatewayPlan | None = None
    if spec.nat_gateway_ip_count is not None:
        ips = whole_in(out, join(prefix, "nat_gateway_ip_count"), spec.nat_gateway_ip_count, 1,
                        nat_gateway.AZURE_MAX_IPS)  # fmt: skip
    else:
        try:
            flows, sized_sku = spec.nat_gateway_flows, sku or AZURE_STANDARD
            sized = nat_gateway.plan_azure_nat_gateway(flows, sized_sku)  # type: ignore[arg-type]
            ips = sized.ips
        except (SizingError, InfeasibleError) as exc:
            out.add(join(prefix, "nat_gateway_flows"), str(exc).removeprefix("flows: "))
            ips = None
    measured_from = None
    if spec.measured_from is not None:
        try:
            measured_from = azure_lb.check_source("measured_from", spec.measured_from)
        except SizingError as exc:
            out.add(join(prefix, exc.field), f"{exc.value!r} is not allowed: {exc.allowed}")
    if ips is None or timeout is None or sku is None:
        return None
    return OutboundPlan(
        type=spec.type,
        idle_timeout_minutes=timeout,
        nat_gateway=sized,
        nat_gateway_ips=ips,
        measured_from=measured_from,
        nat_gateway_sku=sku,
    )


def _check_nat_sku(out: Collector, given: str | None) -> str | None:
    """The NAT gateway's SKU (Standard when not given); None, with the problem added, when the component cannot
    create it: an unknown name, or StandardV2 on the pinned SDK (COMPONENT_NAT_SKUS)."""
    field = join("outbound", "nat_gateway_sku")
    sku = nat_gateway.AZURE_STANDARD if given is None else given
    if sku not in nat_gateway.AZURE_NAT_SKUS:
        out.add(field, f"{given!r} is not allowed: " + " or ".join(repr(n) for n in nat_gateway.AZURE_NAT_SKU_NAMES))
        return None
    if sku not in COMPONENT_NAT_SKUS:
        out.add(field, f"{given!r} {NAT_SKU_UNBUILDABLE}")
        return None
    return sku


def _check_load_balancer(
    out: Collector, spec: OutboundSpec, pools: Sequence[azure_lb.Pool] | None, timeout: int | None
) -> OutboundPlan | None:
    prefix = "outbound"
    for name in ("nat_gateway_ip_count", "nat_gateway_flows", "nat_gateway_sku"):
        if getattr(spec, name) is not None:
            out.add(
                join(prefix, name), f"{getattr(spec, name)!r} is not allowed with loadBalancer: NAT gateway setting"
            )
    if spec.measured_peak_ports_per_node is not None or spec.measured_from is not None:
        return _check_measured(out, spec, pools, timeout)
    if (spec.allocated_outbound_ports is None) == (spec.connections_per_second is None):
        out.add(
            join(prefix, "allocated_outbound_ports"),
            f"{spec.allocated_outbound_ports!r} is not allowed: give exactly one of allocated_outbound_ports "
            "(8..64,000, a multiple of 8; never 0, Azure's shrinking default) or connections_per_second (a workload)",
        )
        return None
    fixed_ips = _check_ip_mode(out, spec)
    workload: azure_lb.Workload | None = None
    if spec.connections_per_second is not None:
        try:
            workload = azure_lb.Workload(spec.connections_per_second, spec.hold_seconds, spec.headroom)
        except SizingError as exc:
            out.add(join(prefix, exc.field), f"{exc.value!r} is not allowed: {exc.allowed}")
            return None
    else:
        ports = spec.allocated_outbound_ports
        count = whole(ports)
        step, most = azure_lb.PORT_GRANULARITY, azure_lb.MAX_PORTS_PER_NODE
        if count is None or not step <= count <= most or count % step:
            out.add(
                join(prefix, "allocated_outbound_ports"),
                f"{ports!r} is not allowed: a multiple of {step} between {step} and {most:,} (0 would hand the "
                "choice to Azure, which halves it as the pool grows)",
            )
            return None
    if pools is None or timeout is None or fixed_ips is False:
        return None
    ports = int(spec.allocated_outbound_ports) if spec.allocated_outbound_ports is not None else None
    return _sized_load_balancer(out, spec, pools, timeout, fixed_ips, ports=ports, workload=workload)


def _check_measured(
    out: Collector, spec: OutboundSpec, pools: Sequence[azure_lb.Pool] | None, timeout: int | None
) -> OutboundPlan | None:
    """A load balancer sized from a measured peak: the peak and its provenance, and no other demand."""
    prefix = "outbound"
    for name in ("allocated_outbound_ports", "connections_per_second"):
        if getattr(spec, name) is not None:
            out.add(
                join(prefix, name),
                f"{getattr(spec, name)!r} is not allowed with measured_peak_ports_per_node: give one demand (an "
                "explicit port count, a connection rate or a measured peak)",
            )
    measured: azure_lb.MeasuredPeak | None = None
    if spec.measured_peak_ports_per_node is None:
        out.add(
            join(prefix, "measured_from"),
            f"{spec.measured_from!r} is not allowed without measured_peak_ports_per_node: the provenance of a "
            "measured peak",
        )
    else:
        try:
            measured = azure_lb.MeasuredPeak(
                spec.measured_peak_ports_per_node,
                spec.measured_from,  # type: ignore[arg-type]  # checked by MeasuredPeak
                spec.headroom,
            )
        except SizingError as exc:
            out.add(join(prefix, exc.field), f"{exc.value!r} is not allowed: {exc.allowed}")
    fixed_ips = _check_ip_mode(out, spec)
    if pools is None or timeout is None or fixed_ips is False or measured is None or out.problems:
        return None
    return _sized_load_balancer(out, spec, pools, timeout, fixed_ips, measured=measured)


def _sized_load_balancer(
    out: Collector,
    spec: OutboundSpec,
    pools: Sequence[azure_lb.Pool],
    timeout: int,
    fixed_ips: int | bool | None,
    *,
    ports: int | None = None,
    workload: azure_lb.Workload | None = None,
    measured: azure_lb.MeasuredPeak | None = None,
) -> OutboundPlan | None:
    prefix = "outbound"
    try:
        plan = azure_lb.plan_load_balancer(
            pools,
            ports=ports,
            workload=workload,
            measured=measured,
            outbound_ips=fixed_ips if isinstance(fixed_ips, int) else None,
        )
    except InfeasibleError as exc:
        out.add(prefix, f"infeasible: {exc}")
        return None
    except SizingError as exc:
        out.add(join(prefix, exc.field), f"{exc.value!r} is not allowed: {exc.allowed}")
        return None
    if not plan.feasible:
        out.add(
            join(prefix, "outbound_ip_count" if spec.ip_mode != "existing" else "existing_ip_ids"),
            f"infeasible: {plan.allocated_outbound_ports:,} ports x {plan.nodes_at_max:,} nodes (maxCount + surge "
            f"of every pool) = {plan.ports_required:,} required but {plan.outbound_ips} IP(s) x "
            f"{azure_lb.PORTS_PER_IP:,} = {plan.ports_available:,} available; AKS would reject it "
            "(InvalidLoadBalancerProfileAllocatedOutboundPorts): add IPs or lower the ports per node",
        )
        return None
    return OutboundPlan(
        type=spec.type,
        idle_timeout_minutes=timeout,
        load_balancer=plan,
        ip_mode=spec.ip_mode,
        existing_ip_ids=tuple(spec.existing_ip_ids),
        existing_prefix_ids=tuple(spec.existing_prefix_ids),
    )


def _check_ip_mode(out: Collector, spec: OutboundSpec) -> int | bool | None:
    """The fixed IP count (None: minimise it), or False when the IP settings are invalid."""
    prefix = "outbound"
    before = len(out.problems)
    if spec.ip_mode not in ("managed", "created", "existing"):
        out.add(join(prefix, "ip_mode"), f"{spec.ip_mode!r} is not allowed: 'managed', 'created' or 'existing'")
        return False
    count: int | None = None
    if spec.outbound_ip_count is not None:
        count = whole_in(out, join(prefix, "outbound_ip_count"), spec.outbound_ip_count, 1,
                          azure_lb.MAX_OUTBOUND_IPS)  # fmt: skip
    if spec.ip_mode != "existing":
        if spec.existing_ip_ids or spec.existing_prefix_ids:
            out.add(
                join(prefix, "existing_ip_ids"),
                f"not allowed with ip_mode {spec.ip_mode!r}: set ip_mode 'existing' to use your own IPs or prefixes",
            )
        return False if len(out.problems) > before else count
    if bool(spec.existing_ip_ids) == bool(spec.existing_prefix_ids):
        out.add(
            join(prefix, "existing_ip_ids"),
            "give exactly one of existing_ip_ids or existing_prefix_ids with ip_mode 'existing' (AKS takes one)",
        )
        return False
    if spec.existing_ip_ids:
        n = len(spec.existing_ip_ids)
        if count is not None and count != n:
            out.add(join(prefix, "outbound_ip_count"), f"{count!r} is not allowed: {n} existing IP ID(s) given")
        if n > azure_lb.MAX_OUTBOUND_IPS:
            out.add(join(prefix, "existing_ip_ids"), f"{n} IDs is not allowed: at most {azure_lb.MAX_OUTBOUND_IPS}")
        count = n
    elif count is None:
        out.add(
            join(prefix, "outbound_ip_count"),
            "None is not allowed with existing_prefix_ids: the number of IPs the prefixes hold (1..100), so the "
            "ports can be checked against them",
        )
    return False if len(out.problems) > before else count


def check_alert(out: Collector, spec: SnatAlertSpec | None, outbound: OutboundPlan | None,
                 outbound_type: str) -> SnatAlertPlan | None:  # fmt: skip
    if spec is None:
        return None
    prefix = "snat_alert"
    if outbound_type != "loadBalancer":
        out.add(prefix, "not allowed with managedNATGateway: the alert watches the load balancer's SNAT ports")
        return None
    pct = spec.threshold_percent
    if isinstance(pct, bool) or not isinstance(pct, int | float) or not 1 <= pct <= 99:
        out.add(join(prefix, "threshold_percent"), f"{pct!r} is not allowed: between 1 and 99 (percent of ports)")
        return None
    severity = whole_in(out, join(prefix, "severity"), spec.severity, *SEVERITY_RANGE)
    if severity is None or outbound is None or outbound.load_balancer is None:
        return None
    ports = outbound.load_balancer.allocated_outbound_ports
    return SnatAlertPlan(
        threshold_percent=float(pct),
        allocated_ports=ports,
        threshold_ports=max(1, math.floor(ports * pct / 100)),
        severity=severity,
        window_size=spec.window_size,
        evaluation_frequency=spec.evaluation_frequency,
        action_group_ids=tuple(spec.action_group_ids),
    )


def plan_outbound(
    pools: Sequence[NodePoolSpec],
    outbound: OutboundSpec,
    auto_provisioned_pools: Sequence[AutoProvisionedPoolSpec] = (),
) -> OutboundPlan:
    """Outbound for pools the caller defines elsewhere (``outbound_profile``): every pool counts, with surge, and
    every node auto-provisioning pool at its node ceiling plus disruption budget."""
    from wirespeed.azure.nap import check_nap

    out = Collector()
    sizing: list[azure_lb.Pool] = []
    for i, spec in enumerate(pools):
        pool = parse_surge(out, f"pools[{i}]", spec, whole_in(out, f"pools[{i}].max_count", spec.max_count, 1,
                                                                 azure_lb.MAX_POOL_NODES))  # fmt: skip
        if pool is not None:
            sizing.append(pool)
    for i, nap in enumerate(auto_provisioned_pools):
        nap_plan, problems = check_nap(nap, f"auto_provisioned_pools[{i}]")
        out.problems.extend(problems)
        if nap_plan is not None:
            sizing.append(nap_plan.sizing_pool)
    if not pools:
        out.add("pools", "[] is not allowed: at least one pool (every pool behind the load balancer counts)")
    plan = check_outbound(out, outbound, sizing if not out.problems else None)
    if out.problems or plan is None:
        raise InvalidArgsError("outbound_profile", out.problems)
    return plan

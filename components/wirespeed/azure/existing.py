"""Outbound check for a cluster the team already has: does its load balancer still fit once pools are added?

Adding a pool raises the node count AKS checks (maxCount + surge of every pool). With ``allocatedOutboundPorts``
left at 0 every node's ports shrink as the backend pool crosses 50, 100, 200... nodes; with an explicit value the
profile may stop fitting its IPs. Pure: takes the looked-up cluster's pools and load balancer profile as plain
values (what ``containerservice.get_managed_cluster_output`` returns), no Pulumi import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wirespeed.azure._validate import PoolPlan
from wirespeed.sizing import azure_lb


@dataclass(frozen=True)
class ExistingPool:
    """A pool of the existing cluster: its largest size (maxCount, or count without autoscaling) and surge."""

    name: str
    max_nodes: int
    max_surge: str = "10%"


def _sizing_pool(name: str, max_nodes: int, surge: str) -> azure_lb.Pool:
    # Pool.parse refuses what AKS refuses ('1e1%', 'nan%', '1_0'); float() and int() would take them.
    return azure_lb.Pool.parse(f"{max_nodes}:{surge.strip() or '10%'}", name=name)


def outbound_check(
    existing: Sequence[ExistingPool],
    added: Sequence[PoolPlan],
    allocated_outbound_ports: int | None,
    outbound_ips: int,
    connections_per_second: float | None = None,
) -> dict[str, Any]:
    """What the existing outbound gives once ``added`` pools join, and what wirespeed would set instead.

    ``allocated_outbound_ports`` None or 0 means Azure's dynamic default. ``outbound_ips`` is the count of the
    cluster's outbound IPs (managed count, IP list or, for prefixes, the IPs they hold).
    """
    pools = [_sizing_pool(p.name, p.max_nodes, p.max_surge) for p in existing] + [a.sizing_pool for a in added]
    nodes = sum(p.nodes_at_max for p in pools)
    result: dict[str, Any] = {"nodes_at_max": nodes, "outbound_ips": outbound_ips}
    if allocated_outbound_ports:
        current = azure_lb.plan_load_balancer(pools, ports=allocated_outbound_ports, outbound_ips=outbound_ips)
        result.update(
            allocated_outbound_ports=allocated_outbound_ports,
            feasible=current.feasible,
            ports_required=current.ports_required,
            ports_available=current.ports_available,
        )
    else:
        result.update(
            allocated_outbound_ports=0,
            dynamic_ports_per_node=azure_lb.dynamic_default_ports(min(nodes, azure_lb.MAX_POOL_NODES)),
            dynamic_halves_at_nodes=azure_lb.next_halving_node_count(nodes),
        )
    if connections_per_second is not None:
        sized = azure_lb.plan_load_balancer(pools, workload=azure_lb.Workload(connections_per_second))
        result["recommended"] = {
            "allocated_outbound_ports": sized.allocated_outbound_ports,
            "outbound_ips": sized.outbound_ips,
            "explain": sized.explain(),
        }
    return result

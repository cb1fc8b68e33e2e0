"""aks-allocated-outbound-ports-default: AKS clusters on the Standard Load Balancer set allocatedOutboundPorts
explicitly, so Azure's dynamic default does not halve every node's SNAT ports as the cluster grows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from wirespeed.references import ASOS_AKS_SIZING
from wirespeed.rules import _aks
from wirespeed.rules._aks_outbound import LB_DEFAULTS_DOC, PORTS_FIELD
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings
from wirespeed.sizing import Pool, dynamic_default_ports, next_halving_node_count
from wirespeed.sizing.azure_lb import DOCUMENTED_DEFAULT_MAX_NODES, DYNAMIC_DEFAULT_TABLE, PORT_GRANULARITY


def dynamic_table_text() -> str:
    """The documented dynamic default table in one line: ``1-50 nodes: 1,024; 51-100: 512; ...``."""
    parts, low = [], 1
    for index, (high, ports) in enumerate(DYNAMIC_DEFAULT_TABLE):
        unit = " nodes" if index == 0 else ""
        parts.append(f"{low:,}-{high:,}{unit}: {ports:,}")
        low = high + 1
    return "; ".join(parts)


def _pool_flags(pools: Sequence[Pool]) -> str:
    return " ".join(f"--pool {p.max_count}:{p.surge_text()}" for p in pools)


def _nodes_text(pools: Sequence[Pool]) -> str:
    return "; ".join(p.describe() for p in pools)


def check_allocated_ports_default(resource: Resource, settings: Settings) -> Iterator[Finding]:
    props = resource.props
    if not _aks.uses_load_balancer(props) or _aks.allocated_ports(props) != 0 or _aks.refused_ports(props) is not None:
        return
    pools = _aks.inline_pools(props)
    nodes = sum(p.nodes_at_max for p in pools)
    why = (
        f"{PORTS_FIELD} is 0 or unset, so Azure picks SNAT ports per node by backend pool size "
        f"({dynamic_table_text()} ports per node; {LB_DEFAULTS_DOC})."
    )
    if 1 <= nodes <= DOCUMENTED_DEFAULT_MAX_NODES:
        ports = dynamic_default_ports(nodes)
        halves = next_halving_node_count(nodes)
        now = (
            f" Its agentPoolProfiles reach {nodes:,} nodes at maxCount plus surge ({_nodes_text(pools)}): "
            f"{ports:,} ports per node"
        )
        if halves is not None:
            after = dynamic_default_ports(halves)
            now += f", cut to {after:,} on every node the moment the backend pool reaches {halves:,} nodes."
        else:
            now += ", the table's last bracket."
        now += " Separate AgentPool resources add to that count."
        hint = f"`wirespeed size azure-lb {_pool_flags(pools)} --connections-per-second N`"
    elif nodes > DOCUMENTED_DEFAULT_MAX_NODES:
        now = f" Its agentPoolProfiles reach {nodes:,} nodes, beyond the table: Azure documents no default there."
        hint = f"`wirespeed size azure-lb {_pool_flags(pools)} --connections-per-second N`"
    else:
        first_high, first_ports = DYNAMIC_DEFAULT_TABLE[0]
        now = (
            f" Its pools are separate AgentPool resources: up to {first_high:,} nodes each gets "
            f"{first_ports:,} ports, halved on every node at {first_high + 1:,}."
        )
        hint = "`wirespeed size azure-lb --pool MAX:SURGE ... --connections-per-second N`"
    yield Finding(
        resource,
        why + now + f" Set {PORTS_FIELD} explicitly (a multiple of {PORT_GRANULARITY}, with the outbound IPs it "
        f"needs: {hint} picks both) so ports never shrink as the cluster grows.",
    )


ALLOCATED_PORTS_DEFAULT = Rule(
    id="aks-allocated-outbound-ports-default",
    order=10,
    description="AKS clusters on the Standard Load Balancer set allocatedOutboundPorts explicitly.",
    severity="high",
    default_enforcement="mandatory",
    remediation=(
        "Set networkProfile.loadBalancerProfile.allocatedOutboundPorts to an explicit multiple of 8 and the "
        "outbound IPs it needs; `wirespeed size azure-lb` picks both from the pools and the workload."
    ),
    source=f"{ASOS_AKS_SIZING.short} (SNAT exhaustion at the 1,024-port default); {LB_DEFAULTS_DOC}",
    scope="resource",
    types=(_aks.CLUSTER,),
    config_schema={},
    reads=(Reads(_aks.CLUSTER, _aks.OUTBOUND_READS + _aks.INLINE_POOL_SIZE_READS),),
    check=check_allocated_ports_default,
)

RULE = ALLOCATED_PORTS_DEFAULT

"""Pure sizing functions: SNAT ports and IPs, NAT gateways, NIC rings, netdev backlog, jumbo MTU.

Every result is a frozen dataclass with ``to_json()`` (stable keys for the CLI and policies) and ``explain()``
(the reasoning in plain words, with the numbers). Nothing here imports Pulumi or a cloud SDK.
"""

from wirespeed.sizing.azure_lb import (
    LoadBalancerPlan,
    Pool,
    Workload,
    dynamic_default_ports,
    next_halving_node_count,
    plan_load_balancer,
)
from wirespeed.sizing.backlog import BacklogPlan, plan_backlog
from wirespeed.sizing.errors import InfeasibleError, SizingError
from wirespeed.sizing.mtu import MtuPlan, plan_mtu
from wirespeed.sizing.nat_gateway import NatGatewayPlan, plan_aws_nat_gateway, plan_azure_nat_gateway
from wirespeed.sizing.rings import RingPlan, plan_rings

__all__ = [
    "BacklogPlan",
    "InfeasibleError",
    "LoadBalancerPlan",
    "MtuPlan",
    "NatGatewayPlan",
    "Pool",
    "RingPlan",
    "SizingError",
    "Workload",
    "dynamic_default_ports",
    "next_halving_node_count",
    "plan_aws_nat_gateway",
    "plan_azure_nat_gateway",
    "plan_backlog",
    "plan_load_balancer",
    "plan_mtu",
    "plan_rings",
]

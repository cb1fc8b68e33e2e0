# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""A new AKS cluster whose egress uses an AKS-managed NAT gateway, sized from the cluster's concurrent flows.

A NAT gateway hands out SNAT ports on demand (64,512 per IP) rather than a fixed share per node, so there is no
allocatedOutboundPorts to get wrong; wirespeed sizes its IP count (1..16) from the peak concurrent flows and
still makes every pool network-optimised and tuned.
"""

import pulumi
from pulumi_azure_native import resources

from wirespeed.azure import NetworkOptimizedCluster, NetworkOptimizedClusterArgs, NodePoolSpec, OutboundSpec

config = pulumi.Config()
location = config.require("location")

group = resources.ResourceGroup("aks-natgw", location=location)

cluster = NetworkOptimizedCluster(
    "natgw",
    NetworkOptimizedClusterArgs(
        resource_group_name=group.name,
        location=location,
        pools=[
            NodePoolSpec(
                name="ingest",
                vm_size="Standard_D32as_v6",
                min_count=2,
                max_count=30,
                max_surge="10%",
                zones=["1", "2", "3"],
                profile="throughput",
                extra_sysctls={"net.core.somaxconn": 32768, "net.ipv4.tcp_max_syn_backlog": 32768},
            )
        ],
        outbound=OutboundSpec(
            type="managedNATGateway",
            nat_gateway_flows=config.require_int("concurrentFlows"),
            idle_timeout_minutes=config.require_int("idleTimeoutMinutes"),
        ),
        # The pool spans zones 1-3 but the managed gateway is Standard (zonal): StandardV2 needs natGatewayProfile.sku,
        # which the pinned SDK's AKS API lacks. Kept, with why, until the pin moves (aks-natgw-zone-redundant).
        accepted_advisories={
            "aks-natgw-zone-redundant": "StandardV2 needs AKS API 2026-06-01 (natGatewayProfile.sku); the pinned "
            "pulumi-azure-native 3.29.0 builds on 2025-09-01, so this sample keeps the zonal Standard gateway and "
            "its one-zone egress risk until the pin moves",
        },
    ),
)

pulumi.export("cluster_name", cluster.cluster_name)
pulumi.export("nat_gateway_ip_count", cluster.outbound_ip_count)
pulumi.export("sizing", cluster.plan.outbound.explain())
pulumi.export("replace_on_change", cluster.replace_on_change)
pulumi.export("kubeconfig", cluster.kubeconfig)

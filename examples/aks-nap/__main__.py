"""A new AKS cluster whose workload nodes come from node auto-provisioning (Karpenter on AKS), network-optimised only.

NAP picks VM sizes from pending pods; wirespeed's NodePools let it pick only Azure Boost (v6, MANA) series, and each
AKSNodeClass sets the profile's sysctls through linuxOSConfig at node creation (karpenter-provider-azure >= v1.10.0).
A NodePool has no maxCount, so outbound SNAT is sized over each pool's node ceiling: limits.cpu over the smallest
size it admits, plus the disruption budget's replacement nodes. The system pool is fixed-size: AKS cannot run NAP
beside the cluster autoscaler.
"""

import pulumi
from pulumi_azure_native import resources

from wirespeed.azure import (
    AutoProvisionedPoolSpec,
    NetworkOptimizedCluster,
    NetworkOptimizedClusterArgs,
    NodePoolSpec,
    OutboundSpec,
)

config = pulumi.Config()
location = config.require("location")

group = resources.ResourceGroup("aks-nap", location=location)

cluster = NetworkOptimizedCluster(
    "nap",
    NetworkOptimizedClusterArgs(
        resource_group_name=group.name,
        location=location,
        # Fixed size (min = max): NAP and the cluster autoscaler cannot both run.
        system_pool=NodePoolSpec(name="system", vm_size="Standard_D4s_v6", min_count=3, max_count=3, max_surge="1"),
        auto_provisioned_pools=[
            # x86 v6 sizes of 16 vCPUs or more: limits.cpu / 16 nodes at most.
            AutoProvisionedPoolSpec(
                name="net",
                cpu_limit=config.require_int("netCpuLimit"),
                min_vcpu=config.require_int("netMinVcpu"),
                # throughput is sized for 100 Gb/s; Standard_E192is_v6 bursts to 200 (the gates read the fastest size).
                max_vcpu=96,
                profile="throughput",
            ),
            # Cobalt 100 (Dpsv6, Dplsv6) on spot first, for batch work that tolerates eviction.
            AutoProvisionedPoolSpec(
                name="cobalt",
                cpu_limit=256,
                min_vcpu=8,
                architectures=("arm64",),
                capacity_types=("spot", "on-demand"),
                profile="throughput",
                taints=("workload=batch:NoSchedule",),
            ),
        ],
        outbound=OutboundSpec(connections_per_second=config.require_int("connectionsPerSecond"), ip_mode="created"),
        tuning_image=config.get("agentImage") or None,
    ),
)

pulumi.export("cluster_name", cluster.cluster_name)
pulumi.export("outbound_ip_addresses", cluster.outbound_ip_addresses)
pulumi.export("allocated_outbound_ports", cluster.allocated_outbound_ports)
pulumi.export("outbound_ip_count", cluster.outbound_ip_count)
pulumi.export("sizing", cluster.plan.outbound.explain())
pulumi.export("node_ceilings", [p.capacity.explain() for p in cluster.plan.auto_provisioned])
pulumi.export("kubeconfig", cluster.kubeconfig)

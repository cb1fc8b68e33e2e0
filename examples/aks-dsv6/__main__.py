# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""A new AKS cluster on Dsv6 pools, sized for a stated workload.

Workload: the api pool calls one payment provider at up to 12 new connections/s per node at peak; each SNAT port
is then held ~240 s (connection + Azure's 4-minute reuse cooldown). wirespeed turns that into explicit
allocatedOutboundPorts (never Azure's shrinking default) and creates exactly as many Standard, static,
zone-redundant public IPs as every pool needs at maxCount + surge, so partners can allowlist them up front.
"""

import pulumi
from pulumi_azure_native import resources

from wirespeed.azure import NetworkOptimizedCluster, NetworkOptimizedClusterArgs, NodePoolSpec, OutboundSpec
from wirespeed.azure.spec import SnatAlertSpec

config = pulumi.Config()
location = config.require("location")
zones = ["1", "2", "3"]

group = resources.ResourceGroup("aks-dsv6", location=location)

cluster = NetworkOptimizedCluster(
    "dsv6",
    NetworkOptimizedClusterArgs(
        resource_group_name=group.name,
        location=location,
        system_pool=NodePoolSpec(
            name="system", vm_size="Standard_D4s_v6", min_count=2, max_count=3, max_surge="1", zones=zones
        ),
        pools=[
            # Latency-sensitive API: 12.5 Gb/s MANA nodes, the throughput profile (RX 8,192, backlog 32,768).
            NodePoolSpec(
                name="api",
                vm_size="Standard_D16s_v6",
                min_count=3,
                max_count=config.require_int("apiMaxNodes"),
                max_surge="10%",
                zones=zones,
                profile="throughput",
                labels={"workload": "api"},
            ),
            # Background workers: smaller local-disk nodes kept off by a taint. Same `throughput` profile for the
            # bursts; `balanced` (sized for 25 Gb/s) would pass the policy pack here too, as these are 12.5 Gb/s nodes.
            NodePoolSpec(
                name="workers",
                vm_size="Standard_D8ds_v6",
                min_count=0,
                max_count=20,
                max_surge="2",
                zones=zones,
                profile="throughput",
                taints=["workload=batch:NoSchedule"],
            ),
        ],
        outbound=OutboundSpec(
            connections_per_second=config.require_int("connectionsPerSecond"),
            ip_mode="created",
            idle_timeout_minutes=10,
        ),
        snat_alert=SnatAlertSpec(threshold_percent=80),
        tuning_image=config.get("agentImage") or None,
    ),
)

pulumi.export("cluster_name", cluster.cluster_name)
pulumi.export("outbound_ip_addresses", cluster.outbound_ip_addresses)
pulumi.export("allocated_outbound_ports", cluster.allocated_outbound_ports)
pulumi.export("outbound_ip_count", cluster.outbound_ip_count)
pulumi.export("sizing", cluster.plan.outbound.explain())
pulumi.export("replace_on_change", cluster.replace_on_change)
pulumi.export("kubeconfig", cluster.kubeconfig)

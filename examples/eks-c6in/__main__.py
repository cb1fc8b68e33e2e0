# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""Network-optimised node groups on an existing EKS cluster, tuned at boot, with NAT egress sized per AZ.

Two managed node groups: c6in (x86, 50-100 Gb/s, ENA Express on: RX ring 8,192 and MTU 8,900 on ENA) and c7gn
(Graviton, 50-100 Gb/s). Each boots with wirespeed's tuning script (rings clamped to the device max, backlog,
sysctls) before kubelet starts; the node agent keeps them tuned. Each AZ's NAT gateway gets as many Elastic IPs
as the peak connections to the busiest destination need (55,000 per IP), an ErrorPortAllocation alarm, and the
AZ's private default route; the node agent watches each destination against those IPs (SNATPortPressure). The
cluster and VPC already exist and are referenced by name/ID.
"""

import pulumi
import pulumi_kubernetes as k8s

from wirespeed.aws import NatEgress, NatEgressArgs, NetworkOptimizedNodeGroup, NetworkOptimizedNodeGroupArgs, Taint
from wirespeed.kubernetes import NodeTuning, NodeTuningArgs
from wirespeed.manifests import fastest_line_rates

config = pulumi.Config()
zones = config.require_object("availabilityZones")
private_subnets = config.require_object("privateSubnetIds")
public_subnets = config.require_object("publicSubnetIds")
route_tables = config.require_object("privateRouteTableIds")

egress = NatEgress(
    "egress",
    NatEgressArgs(
        public_subnet_ids=dict(zip(zones, public_subnets, strict=True)),
        peak_connections=config.require_int("peakConnections"),
        private_route_table_ids=dict(zip(zones, route_tables, strict=True)),
    ),
)

common = {
    "cluster_name": config.require("clusterName"),
    "node_role_arn": config.require("nodeRoleArn"),
    "subnet_ids": private_subnets,
    "security_group_ids": [config.require("clusterSecurityGroupId")],
    # The NAT gateways' per-destination capacity, in the profiles the node agent applies.
    "outbound": egress.profile_outbound,
}
ingest = NetworkOptimizedNodeGroup(
    "ingest",
    NetworkOptimizedNodeGroupArgs(
        **common,
        instance_types=["c6in.8xlarge", "c6in.16xlarge"],
        ena_express=True,
        min_size=2,
        max_size=20,
        labels={"workload": "ingest"},
        taints=[Taint("workload", "NO_SCHEDULE", "ingest")],
    ),
    pulumi.ResourceOptions(depends_on=[egress]),
)
graviton = NetworkOptimizedNodeGroup(
    "graviton",
    NetworkOptimizedNodeGroupArgs(
        **common,
        instance_types=["c7gn.4xlarge", "c7gn.8xlarge"],
        min_size=1,
        max_size=10,
    ),
    pulumi.ResourceOptions(depends_on=[egress]),
)

provider = k8s.Provider("cluster", context=config.get("kubeContext") or None)
tuning = NodeTuning(
    "tuning",
    NodeTuningArgs(
        profiles=[ingest.profile, graviton.profile],
        # Written on each profile's ConfigMap: the gates hold it to what its fastest type's line rate needs.
        line_rates=fastest_line_rates((g.profile.name, g.plan.line_rate_gbps) for g in (ingest, graviton)),
        # mtu-jumbo-path is advisory: the ingest profile's MTU 8,900 is kept, and this says why (docs/policy-gates.md).
        accepted_advisories={
            "mtu-jumbo-path": "ENA Express sets MTU 8,900 for node-to-node traffic inside the VPC (its SRD path); "
            "traffic out through the NAT gateways is TCP only, which path MTU discovery brings to 1,500 "
            "(docs.aws.amazon.com/AWSEC2/latest/UserGuide/network_mtu.html)"
        },
    ),
    pulumi.ResourceOptions(provider=provider, depends_on=[ingest, graviton]),
)

pulumi.export("node_groups", {"ingest": ingest.plan.to_json(), "graviton": graviton.plan.to_json()})
pulumi.export("nat_egress", egress.plan.to_json())
pulumi.export("nat_public_ips", egress.public_ips)
pulumi.export("tuning_daemon_sets", tuning.daemon_set_names)

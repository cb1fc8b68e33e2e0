# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""One regional NAT gateway for an existing EKS cluster's VPC, sized from the busiest destination.

600,000 simultaneous connections from each AZ to one destination need 11 IPs (55,000 each): more than a zonal NAT
gateway's 8 carry, so the egress is one regional gateway with up to 32 IPs per AZ. In manual mode (the default) its
Elastic IPs are created per AZ and are what destinations allow-list; in automatic mode (`ipMode: automatic`, the
dev stack) AWS adds the IPs itself and the sized count is the floor it must reach. Every private route table sends
0.0.0.0/0 to the one gateway; an ErrorPortAllocation alarm watches it. The VPC and route tables already exist and
are referenced by ID. The node agent runs on the cluster's nodes labelled ``wirespeed.io/profile=throughput`` with
the gateway's IPs in its profile, so it sets SNATPortPressure when one destination on a node nears their capacity.
"""

import pulumi
import pulumi_kubernetes as k8s

from wirespeed.aws import NatEgress, NatEgressArgs
from wirespeed.kubernetes import NodeTuning, NodeTuningArgs
from wirespeed.profile import with_outbound
from wirespeed.profiles import builtin_profile

config = pulumi.Config()
zones = config.require_object("availabilityZones")
route_tables = config.require_object("privateRouteTableIds")
topic = config.get("alarmTopicArn") or None

egress = NatEgress(
    "egress",
    NatEgressArgs(
        mode="regional",
        ip_mode=config.get("ipMode") or "manual",
        vpc_id=config.require("vpcId"),
        availability_zones=zones,
        peak_connections=config.require_int("peakConnections"),
        private_route_table_ids=dict(zip(zones, route_tables, strict=True)),
        alarm_actions=[topic] if topic else None,
    ),
)

# The gateway's per-destination capacity (the smallest AZ's IPs) in the profile the node agent applies.
profile = with_outbound(builtin_profile("throughput"), egress.profile_outbound)
provider = k8s.Provider("cluster", context=config.get("kubeContext") or None)
tuning = NodeTuning("tuning", NodeTuningArgs(profiles=[profile]), pulumi.ResourceOptions(provider=provider))

pulumi.export("nat_egress", egress.plan.to_json())
pulumi.export("nat_gateway_ids", egress.nat_gateway_ids)
pulumi.export("nat_public_ips", egress.public_ips)
pulumi.export("tuning_daemon_sets", tuning.daemon_set_names)

"""Karpenter capacity on network-optimised EC2 for an existing EKS cluster, tuned at boot and by the node agent.

Two NodePools (karpenter.sh/v1) with their EC2NodeClasses (karpenter.k8s.aws/v1; Karpenter >= 1.0 must already
run in the cluster): ``network`` launches x86 network-optimised families (c6in, m6in, c8in, ...) of at least
``minBandwidthGbps`` sustained, ``graviton`` the arm64 ones (c7gn, c8gn, ...) of 50 Gb/s or more; both apply the
``throughput`` profile at boot through the EC2NodeClass user data, and ``NodeTuning`` runs the agent on them.
"""

import pulumi
import pulumi_kubernetes as k8s

from wirespeed.aws import KarpenterNodePool, KarpenterNodePoolArgs
from wirespeed.kubernetes import NodeTuning, NodeTuningArgs
from wirespeed.manifests import fastest_line_rates

config = pulumi.Config()
provider = k8s.Provider("cluster", context=config.get("kubeContext") or None)
in_cluster = pulumi.ResourceOptions(provider=provider)
common = {
    "cluster_name": config.require("clusterName"),
    "node_role": config.require("nodeRole"),
    "cpu_limit": config.require_int("cpuLimit"),
    "profile": "throughput",
    # What throughput is sized for: faster types (c6in.32xlarge, c8gn.24xlarge: 200-300 Gb/s) need a custom profile,
    # and the gates hold the profile to the fastest type either pool may launch.
    "max_network_bandwidth_gbps": 100,
}

network = KarpenterNodePool(
    "network",
    KarpenterNodePoolArgs(**common, min_network_bandwidth_gbps=config.require_int("minBandwidthGbps")),
    in_cluster,
)
graviton = KarpenterNodePool(
    "graviton",
    KarpenterNodePoolArgs(**common, architecture="arm64", capacity_types=["spot", "on-demand"]),
    in_cluster,
)
tuning = NodeTuning(
    "tuning",
    NodeTuningArgs(
        profiles=["throughput"],
        # Written on the profile's ConfigMap: the gates hold it to what the fastest type either pool may launch needs.
        line_rates=fastest_line_rates((p.plan.profile.name, p.plan.line_rate_gbps) for p in (network, graviton)),
    ),
    in_cluster,
)

pulumi.export("node_pools", {"network": network.plan.to_json(), "graviton": graviton.plan.to_json()})
pulumi.export("tuning_daemon_sets", tuning.daemon_set_names)

"""A tuned pool and the node agent added to an AKS cluster the team already has (not managed by this program).

The cluster is looked up by name. The new pool joins it through ``AgentPool(resource_name_=<cluster name>)``;
NodeTuning reaches the cluster through a Kubernetes provider built from the cluster's user credentials and
runs only on nodes labelled ``wirespeed.io/profile`` (so existing pools are untouched). Adding a pool raises the
node count AKS checks for SNAT, so ``outbound_check`` shows what the cluster's current load balancer gives then
and what wirespeed would set (apply it where the cluster is defined, e.g. with ``wirespeed.azure.outbound_profile``).
"""

import base64

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import containerservice

from wirespeed.azure import NetworkOptimizedNodePool, NetworkOptimizedNodePoolArgs
from wirespeed.azure.existing import ExistingPool, outbound_check
from wirespeed.kubernetes import NodeTuning, NodeTuningArgs

config = pulumi.Config()
resource_group = config.require("resourceGroup")
cluster_name = config.require("clusterName")

cluster = containerservice.get_managed_cluster_output(resource_group_name=resource_group, resource_name=cluster_name)

pool = NetworkOptimizedNodePool(
    "fastlane",
    NetworkOptimizedNodePoolArgs(
        resource_group_name=resource_group,
        cluster_name=cluster.name,
        name="fastlane",
        vm_size="Standard_D16ds_v6",
        min_count=1,
        max_count=config.require_int("poolMaxNodes"),
        max_surge="10%",
        profile="throughput",
        taints=["wirespeed.io/fastlane=true:NoSchedule"],
    ),
)

credentials = containerservice.list_managed_cluster_user_credentials_output(
    resource_group_name=resource_group, resource_name=cluster.name
)
kubeconfig = pulumi.Output.secret(credentials.kubeconfigs.apply(lambda kcs: base64.b64decode(kcs[0].value).decode()))
provider = k8s.Provider("existing-cluster", kubeconfig=kubeconfig)
tuning = NodeTuning(
    "tuning",
    NodeTuningArgs(profiles=[pool.plan.profile], line_rates={pool.plan.profile.name: pool.plan.line_rate_gbps}),
    pulumi.ResourceOptions(provider=provider, depends_on=[pool]),
)


def check(found: containerservice.GetManagedClusterResult) -> dict:
    existing = [
        ExistingPool(
            name=p.name,
            max_nodes=(p.max_count if p.enable_auto_scaling and p.max_count else p.count) or 1,
            max_surge=(p.upgrade_settings.max_surge if p.upgrade_settings else None) or "10%",
        )
        for p in found.agent_pool_profiles or []
        if p.name != pool.plan.spec.name
    ]
    lb = found.network_profile.load_balancer_profile if found.network_profile else None
    if lb is None:
        return {"note": "the cluster's outbound is not a Standard Load Balancer: nothing to check"}
    if lb.outbound_ips and lb.outbound_ips.public_ips:
        ips = len(lb.outbound_ips.public_ips)
    else:
        ips = (lb.managed_outbound_ips.count if lb.managed_outbound_ips else None) or 1
    return outbound_check(
        existing,
        [pool.plan],
        lb.allocated_outbound_ports,
        ips,
        connections_per_second=config.require_int("connectionsPerSecond"),
    )


pulumi.export("pool_name", pool.pool_name)
pulumi.export("linux_os_config_sysctls", pool.linux_os_config_sysctls)
pulumi.export("left_to_agent", pool.left_to_agent)
pulumi.export("replace_on_change", pool.replace_on_change)
pulumi.export("tuning_namespace", tuning.namespace)
pulumi.export("outbound_check", cluster.apply(check))

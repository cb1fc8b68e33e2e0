"""Root Pulumi program: a tuned AKS cluster from stack config, in one `pulumi up`.

``wirespeed:cloud`` azure (the default) builds a resource group (unless ``wirespeed:resourceGroup`` names one),
a NetworkOptimizedCluster with every pool network-optimised, outbound SNAT sized over every pool and its surge,
the outbound public IPs, the SNAT alert and the tuning DaemonSet. Every key and its default is declared in
Pulumi.yaml, so the program runs with no stack file. ``wirespeed:cloud`` aws exports the plan of
``wirespeed:workload`` (the EKS components arrive with the EKS issue).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi

config = pulumi.Config("wirespeed")

STRINGS = ("location", "resourceGroup", "kubernetesVersion", "systemPool", "outboundType", "ipMode", "image")
INTEGERS = (
    "connectionsPerSecond",
    "holdSeconds",
    "allocatedOutboundPorts",
    "outboundIpCount",
    "idleTimeoutMinutes",
    "natGatewayFlows",
    "natGatewayIpCount",
    "snatAlertPercent",
)
ARRAYS = ("pools", "zones", "existingIpIds")


def read_config() -> dict[str, Any]:
    """The declared keys that have a value (Pulumi.yaml defaults included), typed as declared."""
    values: dict[str, Any] = {k: config.get(k) for k in STRINGS}
    values.update({k: config.get_int(k) for k in INTEGERS})
    values.update({k: config.get_object(k) for k in ARRAYS})
    values["tuning"] = config.get_bool("tuning")
    return {k: v for k, v in values.items() if v is not None}


def azure() -> None:
    from pulumi_azure_native import resources

    from wirespeed.azure import NetworkOptimizedCluster, NetworkOptimizedClusterArgs
    from wirespeed.azure.stack_config import StackConfigError, cluster_spec

    settings = read_config()
    try:
        spec = cluster_spec(settings)
    except StackConfigError as exc:
        details = [pulumi.InputPropertyErrorDetails(property_path=p.path, reason=p.reason) for p in exc.problems]
        raise pulumi.InputPropertiesError(str(exc), details) from None
    group_name: pulumi.Input[str] = settings.get("resourceGroup") or ""
    if not group_name:
        group_name = resources.ResourceGroup("wirespeed", location=spec.location).name
    fields = {f: getattr(spec, f) for f in spec.__dataclass_fields__}
    cluster = NetworkOptimizedCluster(
        "wirespeed", NetworkOptimizedClusterArgs(resource_group_name=group_name, **fields)
    )
    pulumi.export("cluster_name", cluster.cluster_name)
    pulumi.export("node_resource_group", cluster.node_resource_group)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("outbound_ip_addresses", cluster.outbound_ip_addresses)
    pulumi.export("allocated_outbound_ports", cluster.allocated_outbound_ports)
    pulumi.export("outbound_ip_count", cluster.outbound_ip_count)
    pulumi.export("outbound", cluster.outbound)
    pulumi.export("pools", [p.to_json() for p in (cluster.plan.system_pool, *cluster.plan.pools)])
    pulumi.export("replace_on_change", cluster.replace_on_change)


def aws() -> None:
    from wirespeed.workload import load_workload, plan

    workload_path = config.get("workload") or ""
    outputs = plan(load_workload(Path(workload_path) if workload_path else None)).to_json()
    for key in ("instance_type", "outbound", "rings", "backlog", "profile"):
        pulumi.export(key, outputs[key])


cloud = config.get("cloud") or "azure"
if cloud == "azure":
    azure()
elif cloud == "aws":
    aws()
else:
    raise pulumi.InputPropertiesError(
        f"wirespeed:cloud: {cloud!r} is not allowed: azure or aws",
        [
            pulumi.InputPropertyErrorDetails(
                property_path="wirespeed:cloud", reason=f"{cloud!r} is not allowed: azure or aws"
            )
        ],
    )

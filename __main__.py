"""Root Pulumi program: a tuned AKS cluster from stack config, in one `pulumi up`.

``wirespeed:cloud`` azure (the default) builds a resource group (unless ``wirespeed:resourceGroup`` names one),
a NetworkOptimizedCluster with every pool network-optimised, outbound SNAT sized over every pool and its surge,
the outbound public IPs, the SNAT alert and the tuning DaemonSet. Every key and its default is declared in
Pulumi.yaml, so the program runs with no stack file. ``wirespeed:cloud`` aws adds network-optimised EKS node
groups tuned at boot, NAT egress sized per AZ and the tuning DaemonSet to an existing EKS cluster and VPC
(sample stack: Pulumi.aws.yaml).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pulumi

from wirespeed.problems import InvalidInputError, Problem
from wirespeed.pulumi_inputs import input_properties_error

config = pulumi.Config("wirespeed")

STRINGS = (
    "location",
    "resourceGroup",
    "kubernetesVersion",
    "systemPool",
    "outboundType",
    "ipMode",
    "image",
    "measuredPeakSource",
)
INTEGERS = (
    "connectionsPerSecond",
    "holdSeconds",
    "allocatedOutboundPorts",
    "measuredPeakPortsPerNode",
    "headroomPercent",
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
    values["tuningAdmissionPolicy"] = config.get_bool("tuningAdmissionPolicy")
    return {k: v for k, v in values.items() if v is not None}


def azure() -> None:
    from pulumi_azure_native import resources

    from wirespeed.azure import NetworkOptimizedCluster, NetworkOptimizedClusterArgs
    from wirespeed.azure.stack_config import StackConfigError, cluster_spec

    settings = read_config()
    try:
        spec = cluster_spec(settings)
    except StackConfigError as exc:
        refuse(exc)
        raise  # refuse always raises on a problem
    refuse(None)
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


AWS_STRINGS = ("clusterName", "nodeRoleArn", "kubeContext", "natMode", "natIpMode", "natVpcId", "measuredPeakSource")
AWS_ARRAYS = ("subnetIds", "securityGroupIds", "nodeGroups", "natPublicSubnets", "natPrivateRouteTables")


def aws() -> None:
    """Network-optimised node groups, tuned at boot, and NAT egress sized per AZ, on an existing EKS cluster and VPC
    (creating the control plane and the VPC is out of scope: they are referenced by name and ID)."""
    import pulumi_kubernetes as k8s

    from wirespeed.aws import NatEgress, NatEgressArgs, NetworkOptimizedNodeGroup, NetworkOptimizedNodeGroupArgs
    from wirespeed.aws.stack_config import EksStackError, eks_stack
    from wirespeed.kubernetes import NodeTuning, NodeTuningArgs
    from wirespeed.manifests import fastest_line_rates

    settings: dict[str, Any] = {k: config.get(k) for k in AWS_STRINGS}
    settings.update({k: config.get_object(k) for k in AWS_ARRAYS})
    nat_peak, workload_problems = config.get_int("natPeakConnections") or 0, []
    if not nat_peak:
        nat_peak, workload_problems = workload_nat_connections()
    settings["natPeakConnections"] = nat_peak
    try:
        stack = eks_stack(settings)
    except EksStackError as exc:
        refuse(exc, workload_problems)
        raise  # refuse always raises on a problem
    refuse(None, workload_problems)
    accepted = accepted_advisories()
    first: list[pulumi.Resource] = []
    outbound = None  # the node agent watches the NAT gateways' per-destination capacity when this stack sizes them
    if stack.egress is not None:
        egress = NatEgress(
            "wirespeed-egress",
            NatEgressArgs(
                public_subnet_ids=stack.nat_public_subnets or None,
                peak_connections=stack.nat_peak_connections,
                private_route_table_ids=stack.nat_route_tables or None,
                mode=stack.nat_mode,
                ip_mode=stack.nat_ip_mode,
                vpc_id=stack.nat_vpc_id,
                availability_zones=list(stack.nat_route_tables) if stack.nat_mode == "regional" else None,
                measured_from=stack.nat_measured_from,
                accepted_advisories={k: v for k, v in accepted.items() if k.startswith(NAT_RULES)} or None,
            ),
        )
        first.append(egress)  # nodes come up with a route out
        outbound = egress.profile_outbound
        pulumi.export("nat_public_ips", egress.public_ips)
    groups = [
        NetworkOptimizedNodeGroup(
            f"wirespeed-{spec.name}",
            NetworkOptimizedNodeGroupArgs(
                cluster_name=stack.cluster_name,
                node_role_arn=stack.node_role_arn,
                subnet_ids=stack.subnet_ids,
                security_group_ids=stack.security_group_ids or None,
                instance_types=[t.name for t in spec.plan.instance_types],
                profile=spec.profile,
                ena_express=spec.ena_express,
                min_size=spec.plan.min_size,
                max_size=spec.plan.max_size,
                outbound=outbound,
            ),
            pulumi.ResourceOptions(depends_on=first),
        )
        for spec in stack.node_groups
    ]
    if config.get_bool("tuning") is not False:
        profiles = list({g.profile.name: g.profile for g in groups}.values())
        provider = k8s.Provider("wirespeed-k8s", context=settings.get("kubeContext") or None)
        tuning = NodeTuning(
            "wirespeed-tuning",
            NodeTuningArgs(
                profiles=profiles,
                line_rates=fastest_line_rates((g.profile.name, g.plan.line_rate_gbps) for g in groups),
                image=config.get("image") or None,
                admission_policy=config.get_bool("tuningAdmissionPolicy") is not False,
                accepted_advisories={k: v for k, v in accepted.items() if not k.startswith(NAT_RULES)} or None,
            ),
            pulumi.ResourceOptions(provider=provider, depends_on=groups),
        )
        pulumi.export("tuning_daemon_sets", tuning.daemon_set_names)
    plan = stack.plan_json()
    pulumi.export("node_groups", plan["node_groups"])
    pulumi.export("nat_egress", plan["nat_egress"])


# The rules that judge the NAT gateways (tags on them carry these reasons); every other rule judges the profiles.
NAT_RULES = "aws-natgw-"


def accepted_advisories() -> dict[str, str]:
    """wirespeed:acceptedAdvisories, RULE=REASON items, as {rule: reason}; the components check each (an advisory
    rule id, a non-empty reason of at most 256 characters) and refuse the rest, all at once."""
    items = config.get_object("acceptedAdvisories") or []
    return dict(str(item).partition("=")[::2] for item in items)


def workload_nat_connections() -> tuple[int, list[Problem]]:
    """The NAT demand of ``wirespeed:workload`` when it is an AWS workload (0 otherwise): the EKS branch sizes its
    NAT gateways from it unless ``wirespeed:natPeakConnections`` is set. A file that cannot be read or is no
    workload gives its problems instead, one each, for the stack config's other problems to join."""
    from wirespeed.errors import UserError
    from wirespeed.sizing.aws_nat import AwsNatPlan
    from wirespeed.workload import WorkloadError, load_workload, plan

    workload_path = config.get("workload") or ""
    if not workload_path:
        return 0, []
    try:
        outbound = plan(load_workload(Path(workload_path))).outbound
    except WorkloadError as exc:
        return 0, [Problem(f"wirespeed:workload {workload_path}", reason=p) for p in exc.problems]
    except UserError as exc:
        text = exc.message_for({"workload": "wirespeed:workload"})
        if not text.startswith("wirespeed:workload"):
            text = f"wirespeed:workload {text}"  # about the file's content: the message starts with its path
        field, _, reason = text.partition(": ")
        return 0, [Problem(field, reason=reason)]
    return (max(z.plan.demand for z in outbound.zones) if isinstance(outbound, AwsNatPlan) else 0), []


def unknown_keys() -> list[Problem]:
    """Every ``wirespeed:*`` key the stack sets must be one Pulumi.yaml declares: pulumi.Config reads only the
    declared ones, so a misspelt key would be ignored and its default deployed. Reported with the stack config's
    other problems (refuse), all at once."""
    import yaml
    from pulumi.runtime.config import CONFIG

    from wirespeed.problems import unknown_keys as undeclared

    declared = sorted(yaml.safe_load((Path(__file__).parent / "Pulumi.yaml").read_text())["config"])
    keys = sorted(k for k in CONFIG.get() if k.startswith("wirespeed:"))
    return undeclared(f"Pulumi.{pulumi.get_stack()}.yaml", keys, declared)


def refuse(error: InvalidInputError | None, more: Sequence[Problem] = ()) -> None:
    """Stop before anything registers when the stack config has a problem: the misspelt keys first, then ``more``
    (the workload file's), then the problems ``error`` (the config's own check) found, under one heading."""
    if error is None and not UNKNOWN_KEYS and not more:
        return
    heading = error.heading if error is not None else "invalid stack config"
    problems = [*UNKNOWN_KEYS, *more, *(error.problems if error is not None else [])]
    raise input_properties_error(InvalidInputError(heading, problems)) from None


UNKNOWN_KEYS = unknown_keys()
# Only an absent key is Pulumi.yaml's default: a stated "" is refused below as any other unknown cloud is.
cloud = config.get("cloud", "azure")
if cloud == "azure":
    azure()
elif cloud == "aws":
    aws()
else:
    refuse(InvalidInputError("invalid stack config", [Problem.refused("wirespeed:cloud", cloud, "azure or aws")]))

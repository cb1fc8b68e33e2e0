"""``NetworkOptimizedNodeGroup``: an EKS managed node group on network-optimised EC2, tuned at boot.

A thin adapter over :func:`wirespeed.aws.capacity.plan_node_group` (pure): it checks the args, then registers an
``aws.ec2.LaunchTemplate`` (the MIME user data: nodeadm NodeConfig + the boot tuning script; IMDSv2 required with
hop limit 2 so pods on the node network can still reach IMDS through one hop; ENA Express on the primary
interface when asked for) and an ``aws.eks.NodeGroup`` using it.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from wirespeed.aws.capacity import IMDS_HOP_LIMIT, NodeGroupPlan, Taint, plan_node_group, security_groups_problem
from wirespeed.aws.snat import check_outbound
from wirespeed.manifests.options import DEFAULT_IMAGE, line_rate_annotation
from wirespeed.names import LINE_RATE_ANNOTATION
from wirespeed.problems import InvalidInputError
from wirespeed.profile import Outbound, Profile, apply_outbound
from wirespeed.pulumi_inputs import input_properties_error

TYPE_TOKEN = "wirespeed:index:NetworkOptimizedNodeGroup"


@dataclass
class NetworkOptimizedNodeGroupArgs:
    """Inputs of :class:`NetworkOptimizedNodeGroup`. Required first, then optional alphabetically."""

    cluster_name: pulumi.Input[str]
    """Name of an existing EKS cluster (creating the control plane is out of scope)."""

    node_role_arn: pulumi.Input[str]
    """IAM role the nodes run as (AmazonEKSWorkerNodePolicy, AmazonEC2ContainerRegistryReadOnly, the CNI policy)."""

    subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]]
    """Private subnets, one per AZ the group spans (their route to the internet: ``NatEgress``)."""

    agent_image: str = DEFAULT_IMAGE
    """The wirespeed agent image (tag or digest) Bottlerocket nodes run as a bootstrap container to set NIC rings
    and MTU before kubelet starts; give the image ``NodeTuning`` runs. Unused on AL2023 (its boot script tunes)."""

    desired_size: int | None = None
    """Initial node count, min_size..max_size. Default: min_size."""

    ena_express: bool = False
    """Enable ENA Express (SRD) on the primary interface: every type must support it (catalog ``ena_express``).
    The profile becomes ``<profile>-ena-express`` with RX ring 8,192 and MTU 8,900 on ENA links (AWS guidance);
    run ``NodeTuning`` with :attr:`NetworkOptimizedNodeGroup.profile`. Conflicts with nothing; needs
    ``security_group_ids`` because EKS adds no security group to a template that defines interfaces."""

    instance_types: Sequence[str] = field(default_factory=lambda: ["c6in.8xlarge"])
    """EC2 types, 1..20, all in wirespeed's catalog: network-optimised (c6in, c7gn, m6in, ...) unless
    ``not_network_optimised_reason`` says why not; one architecture; one ring class (all above, or all at most,
    25 Gb/s sustained). Default: ``["c6in.8xlarge"]`` (50 Gb/s, ENA Express)."""

    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra Kubernetes node labels. ``wirespeed.io/profile`` is always set to the profile's name."""

    max_size: int = 3
    """Autoscaling maximum, 1..450 (EKS quota per managed node group)."""

    max_unavailable_percentage: int = 10
    """``updateConfig.maxUnavailablePercentage``, 1..100: the share of nodes replaced at once on an update."""

    min_size: int = 1
    """Autoscaling minimum, 0..max_size."""

    not_network_optimised_reason: str | None = None
    """Why types outside the network-optimised families are acceptable here; without it they are refused. At most
    256 characters: recorded (only when a type needs it) as the tag ``wirespeed.io.not-network-optimised-reason`` on
    the node group, launch template and instances, which the policy rule network-optimised-sku accepts."""

    operating_system: str = "al2023"
    """``al2023`` (boot script tunes sysctls, rings and MTU) or ``bottlerocket`` (sysctls through
    ``settings.kernel.sysctl``; rings and MTU by ``agent_image`` as a bootstrap container)."""

    outbound: Outbound | None = None
    """How the nodes egress, for the node agent's SNATPortPressure condition: ``NatEgress.profile_outbound`` (the
    NAT gateways' IPs; the smallest AZ's where they differ). Set in :attr:`NetworkOptimizedNodeGroup.profile`, the
    profile to give ``NodeTuning``; the boot user data does not carry it, so the launch template does not change.
    Default None: no outbound section."""

    profile: str | Profile = "throughput"
    """Tuning profile: a built-in name (``throughput``, ``balanced``) or a ``wirespeed.profile.Profile``."""

    security_group_ids: pulumi.Input[Sequence[pulumi.Input[str]]] | None = None
    """Security groups for the nodes (normally the cluster security group). Required with ``ena_express``."""

    tags: Mapping[str, str] = field(default_factory=dict)
    """AWS tags on the node group, the launch template and the instances."""

    taints: Sequence[Taint] = ()
    """Node taints (``wirespeed.aws.Taint``)."""


def _plan(args: NetworkOptimizedNodeGroupArgs) -> NodeGroupPlan:
    plan, problems = plan_node_group(
        instance_types=args.instance_types,
        profile=args.profile,
        operating_system=args.operating_system,
        agent_image=args.agent_image,
        min_size=args.min_size,
        max_size=args.max_size,
        desired_size=args.desired_size,
        max_unavailable_percentage=args.max_unavailable_percentage,
        ena_express=args.ena_express,
        labels=args.labels,
        taints=args.taints,
        not_network_optimised_reason=args.not_network_optimised_reason,
    )
    missing_groups = security_groups_problem(args.ena_express, args.security_group_ids is not None)
    if missing_groups is not None:
        problems.append(missing_groups)
    bad_outbound = check_outbound(args.outbound)
    if bad_outbound is not None:
        problems.append(bad_outbound)
    if problems or plan is None:
        raise input_properties_error(InvalidInputError("invalid NetworkOptimizedNodeGroupArgs", problems))
    return plan


def _launch_template(
    name: str, plan: NodeGroupPlan, args: NetworkOptimizedNodeGroupArgs, opts: pulumi.ResourceOptions
) -> aws.ec2.LaunchTemplate:
    interfaces = None
    security_groups = args.security_group_ids
    if plan.ena_express:
        interfaces = [
            aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                device_index=0,
                security_groups=args.security_group_ids,
                ena_srd_specification=aws.ec2.LaunchTemplateNetworkInterfaceEnaSrdSpecificationArgs(
                    ena_srd_enabled=True,
                    ena_srd_udp_specification=aws.ec2.LaunchTemplateNetworkInterfaceEnaSrdSpecificationEnaSrdUdpSpecificationArgs(
                        ena_srd_udp_enabled=True
                    ),
                ),
            )
        ]
        security_groups = None  # they travel on the interface: EC2 refuses both
    tags = dict(args.tags) | {"wirespeed.io/profile": plan.profile.name} | plan.tags
    # The template names no instance type (the node group lists them): its tag carries the fastest one's line rate,
    # which the backlog gate reads in place of instanceType (wirespeed.rules.tuning).
    template_tags = tags | {LINE_RATE_ANNOTATION: line_rate_annotation(plan.line_rate_gbps)}
    return aws.ec2.LaunchTemplate(
        f"{name}-launch-template",
        description=f"wirespeed: {plan.profile.name} tuning at boot",
        user_data=base64.b64encode(plan.user_data.encode()).decode(),
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=IMDS_HOP_LIMIT
        ),
        network_interfaces=interfaces,
        vpc_security_group_ids=security_groups,
        tag_specifications=[
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type="instance", tags=tags),
        ],
        tags=template_tags,
        update_default_version=True,
        opts=opts,
    )


class NetworkOptimizedNodeGroup(pulumi.ComponentResource):
    """An EKS managed node group on network-optimised EC2 whose nodes apply a wirespeed profile at boot."""

    node_group_name: pulumi.Output[str]
    """The node group's name in EKS."""
    launch_template_id: pulumi.Output[str]
    """The launch template carrying the tuning user data."""
    profile: Profile
    """The profile the nodes apply (``<name>-ena-express`` with ENA Express), with ``outbound`` when given: pass it to
    ``NodeTuning``."""
    plan: NodeGroupPlan
    """What was decided: instance types with bandwidth, AMI type, user data, labels (plain data)."""

    def __init__(
        self, name: str, args: NetworkOptimizedNodeGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        plan = _plan(args)  # every problem raised before anything registers
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.plan = plan
        self.profile = apply_outbound(plan.profile, args.outbound)
        child = pulumi.ResourceOptions(parent=self)
        template = _launch_template(name, plan, args, child)
        group = aws.eks.NodeGroup(
            f"{name}-node-group",
            cluster_name=args.cluster_name,
            node_role_arn=args.node_role_arn,
            subnet_ids=args.subnet_ids,
            instance_types=[it.name for it in plan.instance_types],
            ami_type=plan.ami_type,
            capacity_type="ON_DEMAND",
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=plan.min_size, max_size=plan.max_size, desired_size=plan.desired_size
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable_percentage=plan.max_unavailable_percentage),
            labels=plan.labels,
            taints=[aws.eks.NodeGroupTaintArgs(key=t.key, value=t.value, effect=t.effect) for t in plan.taints] or None,
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)
            ),
            tags=(dict(args.tags) | plan.tags) or None,
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["scalingConfig.desiredSize"]),
        )
        self.node_group_name = group.node_group_name
        self.launch_template_id = template.id
        self.register_outputs(
            {
                "node_group_name": self.node_group_name,
                "launch_template_id": self.launch_template_id,
                "profile": plan.profile.name,
                "instance_types": [it.name for it in plan.instance_types],
            }
        )

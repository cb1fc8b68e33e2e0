"""``KarpenterNodePool``: a Karpenter ``EC2NodeClass`` and ``NodePool`` (Karpenter >= 1.0, APIs ``karpenter.k8s.aws/v1``
and ``karpenter.sh/v1``) that launch network-optimised EC2 booting with wirespeed's tuning script.

A thin adapter over :mod:`wirespeed.aws.karpenter` (pure manifests): both objects are pulumi-kubernetes custom
resources parented to the component; the NodePool waits for its EC2NodeClass. Pass the cluster's Kubernetes
provider through ``opts``. Karpenter itself (controller, IAM, interruption queue) must already be installed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from wirespeed.aws.capacity import Taint
from wirespeed.aws.karpenter import KarpenterPlan, node_class, node_pool, plan_karpenter
from wirespeed.aws.snat import check_outbound
from wirespeed.manifests.options import DEFAULT_IMAGE
from wirespeed.problems import InvalidInputError, Problem
from wirespeed.profile import Outbound, Profile, apply_outbound
from wirespeed.pulumi_inputs import input_properties_error

TYPE_TOKEN = "wirespeed:index:KarpenterNodePool"


@dataclass
class KarpenterNodePoolArgs:
    """Inputs of :class:`KarpenterNodePool`. Required first, then optional alphabetically."""

    cluster_name: str
    """The EKS cluster: subnets and security groups are discovered by the tag ``karpenter.sh/discovery=<name>``."""

    node_role: str
    """IAM role name for the nodes (EC2NodeClass ``spec.role``); Karpenter creates the instance profile."""

    agent_image: str = DEFAULT_IMAGE
    """The wirespeed agent image (tag or digest) Bottlerocket nodes run as a bootstrap container to set NIC rings
    and MTU before kubelet starts; give the image ``NodeTuning`` runs. Unused on AL2023 (its boot script tunes)."""

    architecture: str = "x86_64"
    """``x86_64`` or ``arm64`` (Graviton: c7gn, c8gn, ...). One per pool: one AMI."""

    capacity_types: Sequence[str] = ("on-demand",)
    """``on-demand`` and/or ``spot``."""

    cpu_limit: int = 1000
    """NodePool ``limits.cpu``: the most vCPUs the pool may launch, 1..1,000,000."""

    instance_families: Sequence[str] | None = None
    """EC2 families (``c6in``, ``c7gn``...). ``None``: every network-optimised family of the architecture in the
    catalog. A family outside the network-optimised ones needs ``not_network_optimised_reason``."""

    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra node labels; ``wirespeed.io/profile`` is set from the profile."""

    max_network_bandwidth_gbps: float | None = None
    """Upper bound on sustained bandwidth (``instance-network-bandwidth`` ``Lt``). Use 25 with ``balanced``."""

    min_network_bandwidth_gbps: float = 50.0
    """Lower bound on sustained bandwidth (``instance-network-bandwidth`` ``Gt``), Gb/s. Default 50: the
    ``throughput`` profile's class. The selected types must fall in one ring class (above 25, or at most 25)."""

    name: str | None = None
    """Kubernetes name of both objects. Default: the component's name."""

    not_network_optimised_reason: str | None = None
    """Why families outside the network-optimised ones are acceptable here. Recorded (only when a family needs it)
    as the NodePool annotation ``wirespeed.io.not-network-optimised-reason``, which network-optimised-sku accepts."""

    operating_system: str = "al2023"
    """``al2023`` (boot script) or ``bottlerocket`` (sysctls through settings; rings and MTU by ``agent_image`` as a
    bootstrap container)."""

    outbound: Outbound | None = None
    """How the nodes egress, for the node agent's SNATPortPressure condition: ``NatEgress.profile_outbound``. Set in
    :attr:`KarpenterNodePool.profile` (give that to ``NodeTuning``); the EC2NodeClass user data does not carry it.
    Default None: no outbound section."""

    profile: str | Profile = "throughput"
    """Tuning profile: built-in name or ``wirespeed.profile.Profile``. Run ``NodeTuning`` with the same one."""

    taints: Sequence[Taint] = ()
    """Node taints (``wirespeed.aws.Taint``)."""


def plan_for(name: str, args: KarpenterNodePoolArgs) -> KarpenterPlan:
    plan, problems = plan_karpenter(
        name=args.name or name,
        profile=args.profile,
        architecture=args.architecture,
        operating_system=args.operating_system,
        agent_image=args.agent_image,
        instance_families=args.instance_families,
        min_network_bandwidth_gbps=args.min_network_bandwidth_gbps,
        max_network_bandwidth_gbps=args.max_network_bandwidth_gbps,
        capacity_types=args.capacity_types,
        cpu_limit=args.cpu_limit,
        labels=args.labels,
        taints=args.taints,
        not_network_optimised_reason=args.not_network_optimised_reason,
    )
    for field_name in ("cluster_name", "node_role"):
        value = getattr(args, field_name)
        if not isinstance(value, str) or not value:
            problems.append(Problem(field_name, value, "a non-empty string"))
    bad_outbound = check_outbound(args.outbound)
    if bad_outbound is not None:
        problems.append(bad_outbound)
    if problems or plan is None:
        raise input_properties_error(InvalidInputError("invalid KarpenterNodePoolArgs", problems))
    return plan


def _custom(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
    return k8s.apiextensions.CustomResource(
        name, api_version=obj["apiVersion"], kind=obj["kind"], metadata=obj["metadata"], spec=obj["spec"], opts=opts
    )


class KarpenterNodePool(pulumi.ComponentResource):
    """Karpenter capacity on network-optimised EC2 whose nodes apply a wirespeed profile at boot."""

    node_pool_name: pulumi.Output[str]
    """The NodePool's name."""
    plan: KarpenterPlan
    """Families, bandwidth range, the catalog types it can launch, user data (plain data)."""
    profile: Profile
    """The profile the nodes apply, with ``outbound`` when given: pass it to ``NodeTuning``."""

    def __init__(self, name: str, args: KarpenterNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        plan = plan_for(name, args)
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.plan = plan
        self.profile = apply_outbound(plan.profile, args.outbound)
        nodeclass = _custom(
            f"{name}-ec2-node-class",
            node_class(plan, role=args.node_role, cluster_name=args.cluster_name),
            pulumi.ResourceOptions(parent=self),
        )
        pool = _custom(
            f"{name}-node-pool", node_pool(plan), pulumi.ResourceOptions(parent=self, depends_on=[nodeclass])
        )
        # Through the NodePool's id, so dependants wait for it to exist.
        self.node_pool_name = pool.id.apply(lambda _: plan.name)
        self.register_outputs({"node_pool_name": self.node_pool_name, "profile": plan.profile.name})

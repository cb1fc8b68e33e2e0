"""``AutoProvisionedPool``: node auto-provisioning (Karpenter on AKS) capacity on network-optimised sizes, a thin
adapter over :mod:`wirespeed.azure.nap` (pure objects).

Both objects are pulumi-kubernetes custom resources parented to the component; the NodePool waits for its
AKSNodeClass. Pass the cluster's Kubernetes provider through ``opts``. NAP must be on in the cluster
(``NetworkOptimizedCluster`` turns it on when given ``auto_provisioned_pools``) and its karpenter-provider-azure at
v1.10.0 or later for ``linuxOSConfig``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from wirespeed.azure.nap import NapPlan, node_class, node_pool, plan_nap
from wirespeed.azure.problems import InvalidArgsError
from wirespeed.azure.spec import AutoProvisionedPoolSpec
from wirespeed.pulumi_inputs import input_properties_error

TYPE_TOKEN = "wirespeed:index:AutoProvisionedPool"


@dataclass(frozen=True, kw_only=True)
class AutoProvisionedPoolArgs(AutoProvisionedPoolSpec):
    """An :class:`AutoProvisionedPoolSpec`; the cluster it lands in is the Kubernetes provider given in ``opts``."""


def _custom(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
    return k8s.apiextensions.CustomResource(
        name, api_version=obj["apiVersion"], kind=obj["kind"], metadata=obj["metadata"], spec=obj["spec"], opts=opts
    )


class AutoProvisionedPool(pulumi.ComponentResource):
    """An AKSNodeClass and a ``karpenter.sh/v1`` NodePool that launch only network-optimised sizes, tuned by a profile.

    ``linuxOSConfig.sysctls`` of the node class carries the profile's sysctls AKS supports; the rest (rings, other
    sysctls, MTU) is the node agent's, listed in ``left_to_agent``. The NodePool's ``limits.cpu`` over the smallest
    admitted size gives ``max_nodes``, which outbound sizing counts with the disruption budget (``nodes_at_max``).
    """

    node_pool_name: pulumi.Output[str]
    """The NodePool's name (also the AKSNodeClass's), resolved once the NodePool exists."""
    profile: pulumi.Output[str]
    """The tuning profile's name, also the node label ``wirespeed.io/profile``."""
    max_nodes: pulumi.Output[int]
    """Node ceiling: ``floor(limits.cpu / vCPUs of the smallest admitted size)``."""
    nodes_at_max: pulumi.Output[int]
    """``max_nodes`` plus the disruption budget's replacement nodes: what outbound sizing counts."""
    linux_os_config_sysctls: pulumi.Output[dict[str, Any]]
    """The AKSNodeClass ``spec.linuxOSConfig.sysctls`` (``netCoreNetdevMaxBacklog``...)."""
    left_to_agent: pulumi.Output[list[str]]
    """What the node agent applies instead (sysctls the node class cannot set, ``rings.<driver>``, ``mtu``)."""
    plan: NapPlan
    """The validated plan (plain values): admitted sizes, capacity derivation, objects' inputs."""

    def __init__(
        self,
        name: str,
        args: AutoProvisionedPoolSpec,
        opts: pulumi.ResourceOptions | None = None,
        *,
        _plan: NapPlan | None = None,
    ) -> None:
        if _plan is None:
            try:
                _plan = plan_nap(args)
            except InvalidArgsError as exc:
                raise input_properties_error(exc) from None
        plan = _plan
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.plan = plan
        nodeclass = _custom(f"{name}-aks-node-class", node_class(plan), pulumi.ResourceOptions(parent=self))
        pool = _custom(
            f"{name}-node-pool", node_pool(plan), pulumi.ResourceOptions(parent=self, depends_on=[nodeclass])
        )
        # Through the NodePool's id, so dependants wait for it to exist.
        self.node_pool_name = pool.id.apply(lambda _: plan.name)
        self.profile = pulumi.Output.from_input(plan.profile.name)
        self.max_nodes = pulumi.Output.from_input(plan.capacity.max_nodes)
        self.nodes_at_max = pulumi.Output.from_input(plan.capacity.nodes_at_max)
        self.linux_os_config_sysctls = pulumi.Output.from_input(plan.node_class_sysctls())
        self.left_to_agent = pulumi.Output.from_input(list(plan.left_to_agent))
        self.register_outputs(
            {
                "node_pool_name": self.node_pool_name,
                "profile": self.profile,
                "max_nodes": self.max_nodes,
                "nodes_at_max": self.nodes_at_max,
                "linux_os_config_sysctls": self.linux_os_config_sysctls,
                "left_to_agent": self.left_to_agent,
            }
        )

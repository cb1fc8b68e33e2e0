"""Pulumi components for AKS: thin adapters over :mod:`wirespeed.azure._validate`.

Each constructor validates every argument first (one ``pulumi.InputPropertiesError`` listing every problem, before
anything registers), then registers children with ``parent=self`` and registers every output.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import containerservice, monitor, network

from wirespeed.azure import _validate
from wirespeed.azure._validate import REPLACE_ON_CHANGE, ClusterPlan, InvalidArgsError, NapPlan, OutboundPlan, PoolPlan
from wirespeed.azure.spec import AutoProvisionedPoolSpec, ClusterSpec, NodePoolSpec, OutboundSpec
from wirespeed.azure.topology import cluster_load_balancer_id
from wirespeed.names import CLUSTER_TYPE
from wirespeed.problems import Problem
from wirespeed.pulumi_inputs import input_properties_error
from wirespeed.rules._accepted_args import accepted_labels
from wirespeed.sizing.aks_sysctls import sdk_field

POOL_TYPE = "wirespeed:index:NetworkOptimizedNodePool"


def _pool_settings(plan: PoolPlan) -> dict[str, Any]:
    """The agent pool fields shared by ``AgentPool`` and the cluster's inline system pool profile."""
    spec = plan.spec
    by_sdk_field: dict[str, Any] = {sdk_field(k): v for k, v in plan.aks_sysctls.items()}
    sysctls = containerservice.SysctlConfigArgs(**by_sdk_field)
    settings: dict[str, Any] = {
        "vm_size": plan.instance.name,
        "os_type": "Linux",
        "os_sku": spec.os_sku,
        "type": "VirtualMachineScaleSets",
        "count": spec.min_count if plan.autoscaling else spec.max_count,
        "enable_auto_scaling": plan.autoscaling,
        "upgrade_settings": containerservice.AgentPoolUpgradeSettingsArgs(max_surge=spec.max_surge.strip()),
        "node_labels": plan.labels,
        "linux_os_config": containerservice.LinuxOSConfigArgs(sysctls=sysctls),
    }
    if plan.autoscaling:
        settings.update(min_count=spec.min_count, max_count=spec.max_count)
    if spec.zones:
        settings["availability_zones"] = list(spec.zones)
    if spec.max_pods is not None:
        settings["max_pods"] = spec.max_pods
    if spec.taints:
        settings["node_taints"] = list(spec.taints)
    if plan.tags:
        settings["tags"] = plan.tags
    return settings


@dataclass(frozen=True, kw_only=True)
class NetworkOptimizedNodePoolArgs(NodePoolSpec):
    """A :class:`NodePoolSpec` plus where the pool goes. Create-only inputs: ``replace_on_change`` output."""

    resource_group_name: pulumi.Input[str]
    """Resource group of the cluster. Required."""

    cluster_name: pulumi.Input[str]
    """Name of the AKS cluster the pool joins (``AgentPool(resource_name_=...)``). Required."""


class NetworkOptimizedNodePool(pulumi.ComponentResource):
    """A network-optimised AKS user pool (``containerservice.AgentPool``) tuned by a wirespeed profile.

    ``linuxOSConfig.sysctls`` carries the profile's sysctls AKS supports, within AKS's ranges; everything else
    (rings, other sysctls, MTU) is left to the node agent and listed in ``left_to_agent``. ``linuxOSConfig``,
    ``vmSize``, ``availabilityZones`` and ``maxPods`` are create-only: changing one replaces the pool, which is why
    they are listed in ``replace_on_change``.
    """

    agent_pool: containerservice.AgentPool
    """The ``containerservice.AgentPool`` child."""
    pool_name: pulumi.Output[str]
    """The AKS pool name."""
    vm_size: pulumi.Output[str]
    """The canonical VM size (``Standard_D16s_v6``)."""
    profile: pulumi.Output[str]
    """The tuning profile's name, also the node label ``wirespeed.io/profile``."""
    surge_nodes: pulumi.Output[int]
    """Upgrade surge in nodes at maxCount, as counted in outbound sizing."""
    linux_os_config_sysctls: pulumi.Output[dict[str, Any]]
    """The sysctls AKS sets at node creation, by API name (``netCoreNetdevMaxBacklog``)."""
    left_to_agent: pulumi.Output[list[str]]
    """What the node agent applies instead (sysctls AKS cannot set, ``rings.<driver>``, ``mtu``)."""
    replace_on_change: pulumi.Output[list[str]]
    """Create-only inputs: changing one replaces the pool."""
    plan: PoolPlan
    """The validated plan (plain values) the pool was built from."""

    def __init__(
        self,
        name: str,
        args: NetworkOptimizedNodePoolArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        _plan: PoolPlan | None = None,
    ) -> None:
        if _plan is None:
            try:
                _plan = _validate.plan_pool(args)
            except InvalidArgsError as exc:
                raise input_properties_error(exc) from None
        plan = _plan
        super().__init__(POOL_TYPE, name, None, opts)
        self.plan = plan
        self.agent_pool = containerservice.AgentPool(
            f"{name}-pool",
            resource_group_name=args.resource_group_name,
            resource_name_=args.cluster_name,
            agent_pool_name=plan.spec.name,
            mode="User",
            **_pool_settings(plan),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.pool_name = pulumi.Output.from_input(plan.spec.name)
        self.vm_size = pulumi.Output.from_input(plan.instance.name)
        self.profile = pulumi.Output.from_input(plan.profile.name)
        self.surge_nodes = pulumi.Output.from_input(plan.surge_nodes)
        self.linux_os_config_sysctls = pulumi.Output.from_input(plan.aks_sysctl_engine_names())
        self.left_to_agent = pulumi.Output.from_input(list(plan.left_to_agent))
        self.replace_on_change = pulumi.Output.from_input([path for path, _ in REPLACE_ON_CHANGE])
        self.register_outputs(
            {
                "agent_pool": self.agent_pool,
                "pool_name": self.pool_name,
                "vm_size": self.vm_size,
                "profile": self.profile,
                "surge_nodes": self.surge_nodes,
                "linux_os_config_sysctls": self.linux_os_config_sysctls,
                "left_to_agent": self.left_to_agent,
                "replace_on_change": self.replace_on_change,
            }
        )


def _load_balancer_profile(
    plan: OutboundPlan, created_ip_ids: Sequence[pulumi.Input[str]] = ()
) -> containerservice.ManagedClusterLoadBalancerProfileArgs:
    lb = plan.load_balancer
    assert lb is not None, "a load balancer plan"
    ips: dict[str, Any] = {}
    if plan.ip_mode == "managed":
        ips["managed_outbound_ips"] = containerservice.ManagedClusterLoadBalancerProfileManagedOutboundIPsArgs(
            count=lb.outbound_ips
        )
    elif plan.ip_mode == "created" or plan.existing_ip_ids:
        ids = list(created_ip_ids) if plan.ip_mode == "created" else list(plan.existing_ip_ids)
        ips["outbound_ips"] = containerservice.ManagedClusterLoadBalancerProfileOutboundIPsArgs(
            public_ips=[containerservice.ResourceReferenceArgs(id=i) for i in ids]
        )
    else:
        ips["outbound_ip_prefixes"] = containerservice.ManagedClusterLoadBalancerProfileOutboundIPPrefixesArgs(
            public_ip_prefixes=[containerservice.ResourceReferenceArgs(id=i) for i in plan.existing_prefix_ids]
        )
    return containerservice.ManagedClusterLoadBalancerProfileArgs(
        allocated_outbound_ports=lb.allocated_outbound_ports,
        idle_timeout_in_minutes=plan.idle_timeout_minutes,
        **ips,
    )


def outbound_profile(
    pools: Sequence[NodePoolSpec],
    outbound: OutboundSpec,
    auto_provisioned_pools: Sequence[AutoProvisionedPoolSpec] = (),
) -> containerservice.ManagedClusterLoadBalancerProfileArgs:
    """The sized ``loadBalancerProfile`` for teams that own their ``ManagedCluster`` definition.

    Every pool behind the load balancer counts, with its surge, and every node auto-provisioning pool (the specs
    given to their ``AutoProvisionedPool``) at its node ceiling plus disruption budget. ``ip_mode`` 'managed' or
    'existing' only: 'created' needs resources, so create the IPs yourself and pass their IDs as
    ``existing_ip_ids``.
    Raises ``pulumi.InputPropertiesError`` listing every problem.
    """
    try:
        if outbound.type != "loadBalancer" or outbound.ip_mode == "created":
            field = "outbound.type" if outbound.type != "loadBalancer" else "outbound.ip_mode"
            value = outbound.type if outbound.type != "loadBalancer" else outbound.ip_mode
            raise InvalidArgsError(
                "outbound_profile",
                [
                    Problem.refused(
                        field,
                        value,
                        "outbound_profile returns a load balancer profile with ip_mode 'managed' or 'existing' "
                        "(create IPs yourself and pass existing_ip_ids)",
                    )
                ],
            )
        plan = _validate.plan_outbound(pools, outbound, auto_provisioned_pools)
    except InvalidArgsError as exc:
        raise input_properties_error(exc) from None
    return _load_balancer_profile(plan)


@dataclass(frozen=True, kw_only=True)
class NetworkOptimizedClusterArgs(ClusterSpec):
    """A :class:`ClusterSpec` plus the resource group and names Pulumi needs."""

    resource_group_name: pulumi.Input[str]
    """Resource group for the cluster, its public IPs and the alert. Required."""

    cluster_name: str | None = None
    """AKS cluster name; default None (Pulumi's auto-name from the component name)."""

    dns_prefix: str | None = None
    """API server DNS prefix; default the component name."""


class NetworkOptimizedCluster(pulumi.ComponentResource):
    """An AKS cluster whose every pool is network-optimised, outbound sized over all pools, nodes tuned.

    Children: the ``ManagedCluster`` (system pool inline; node auto-provisioning on when ``auto_provisioned_pools``
    are given), one :class:`NetworkOptimizedNodePool` per user pool, the outbound public IPs when
    ``ip_mode='created'``, a Kubernetes provider from the cluster's user credentials with
    ``wirespeed.kubernetes.NodeTuning`` when ``tuning`` (default on) and one ``AutoProvisionedPool`` per NAP pool,
    and the SNAT metric alert when asked.
    """

    cluster: containerservice.ManagedCluster
    """The ``containerservice.ManagedCluster`` child (system pool inline)."""
    cluster_name: pulumi.Output[str]
    """The AKS cluster's name."""
    node_resource_group: pulumi.Output[str]
    """The resource group AKS manages (holds the ``kubernetes`` load balancer)."""
    kubeconfig: pulumi.Output[str]
    """The cluster user's kubeconfig (secret)."""
    pools: dict[str, NetworkOptimizedNodePool]
    """The user pools by name."""
    public_ips: list[network.PublicIPAddress]
    """The created outbound public IPs (``ip_mode='created'``), else empty."""
    outbound_ip_addresses: pulumi.Output[list[str]]
    """Addresses of the created outbound IPs, for partners' allowlists."""
    outbound_ip_ids: pulumi.Output[list[str]]
    """Resource IDs of the outbound IPs given to the load balancer (created or existing), else empty."""
    allocated_outbound_ports: pulumi.Output[int | None]
    """SNAT ports per node (load balancer), never 0; None with a NAT gateway."""
    outbound_ip_count: pulumi.Output[int]
    """Outbound IPs of the load balancer or the NAT gateway."""
    outbound: pulumi.Output[dict[str, Any]]
    """The outbound sizing as JSON (nodes at peak, ports required and available, ...)."""
    load_balancer_id: pulumi.Output[str]
    """ID of the cluster's ``kubernetes`` load balancer, the SNAT alert's scope."""
    replace_on_change: pulumi.Output[dict[str, list[str]]]
    """Create-only inputs per pool name: changing one replaces that pool."""
    tuning: pulumi.Resource | None
    """The ``wirespeed.kubernetes.NodeTuning`` child, or None with ``tuning=False``."""
    auto_provisioned_pools: dict[str, pulumi.Resource]
    """The ``AutoProvisionedPool`` children (AKSNodeClass + NodePool) by name."""
    snat_alert: monitor.MetricAlert | None
    """The SNAT metric alert, or None."""
    plan: ClusterPlan
    """The validated plan (plain values) the cluster was built from."""

    def __init__(self, name: str, args: NetworkOptimizedClusterArgs, opts: pulumi.ResourceOptions | None = None):
        try:
            plan = _validate.plan_cluster(args)
        except InvalidArgsError as exc:
            raise input_properties_error(exc) from None
        super().__init__(CLUSTER_TYPE, name, None, opts)
        self.plan = plan
        self._build(name, args)
        self.register_outputs(self._outputs())

    def _build(self, name: str, args: NetworkOptimizedClusterArgs) -> None:
        """Every child, in the order they register, and the outputs computed from them."""
        plan = self.plan
        self.public_ips = self._public_ips(name, args)
        self.cluster = self._managed_cluster(name, args)
        self.cluster_name = self.cluster.name
        self.node_resource_group = self.cluster.node_resource_group.apply(lambda g: g or "")
        self.pools = {
            pool.spec.name: NetworkOptimizedNodePool(
                f"{name}-{pool.spec.name}",
                NetworkOptimizedNodePoolArgs(
                    **{f: getattr(pool.spec, f) for f in NodePoolSpec.__dataclass_fields__},
                    resource_group_name=args.resource_group_name,
                    cluster_name=self.cluster.name,
                ),
                pulumi.ResourceOptions(parent=self),
                _plan=pool,
            )
            for pool in plan.pools
        }
        credentials = containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=args.resource_group_name,
            resource_name=self.cluster.name,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        self.kubeconfig = pulumi.Output.secret(
            credentials.kubeconfigs.apply(lambda kcs: base64.b64decode(kcs[0].value).decode())
        )
        self.load_balancer_id = pulumi.Output.all(self.cluster.id, self.node_resource_group).apply(
            lambda v: cluster_load_balancer_id(v[0], v[1])
        )
        self.snat_alert = self._snat_alert(name, args, plan) if plan.snat_alert else None
        provider = self._kubernetes_provider(name) if args.tuning or plan.auto_provisioned else None
        self.auto_provisioned_pools = self._auto_provisioned(name, plan, provider)
        self.tuning = self._tuning(name, args, plan, provider) if args.tuning and provider else None
        self._outbound_outputs()

    def _public_ips(self, name: str, args: NetworkOptimizedClusterArgs) -> list[network.PublicIPAddress]:
        """The outbound public IPs wirespeed creates (``ip_mode='created'``), else none."""
        outbound = self.plan.outbound
        if outbound.load_balancer is None or outbound.ip_mode != "created":
            return []
        return [
            network.PublicIPAddress(
                f"{name}-outbound-ip-{i + 1}",
                resource_group_name=args.resource_group_name,
                location=args.location,
                sku=network.PublicIPAddressSkuArgs(name="Standard", tier="Regional"),
                public_ip_allocation_method="Static",
                public_ip_address_version="IPv4",
                # Zone-redundant: the address survives a zone outage, so partners' allowlists stay valid.
                zones=["1", "2", "3"],
                opts=pulumi.ResourceOptions(parent=self),
            )
            for i in range(outbound.outbound_ips)
        ]

    def _managed_cluster(self, name: str, args: NetworkOptimizedClusterArgs) -> containerservice.ManagedCluster:
        system_pool = self.plan.system_pool
        return containerservice.ManagedCluster(
            f"{name}-aks",
            resource_group_name=args.resource_group_name,
            resource_name_=args.cluster_name,
            location=args.location,
            dns_prefix=args.dns_prefix or name,
            kubernetes_version=args.kubernetes_version,
            identity=containerservice.ManagedClusterIdentityArgs(
                type=containerservice.ResourceIdentityType.SYSTEM_ASSIGNED
            ),
            agent_pool_profiles=[
                containerservice.ManagedClusterAgentPoolProfileArgs(
                    name=system_pool.spec.name, mode="System", **_pool_settings(system_pool)
                )
            ],
            network_profile=self._network_profile(self.plan),
            **self._node_provisioning(),
            **self._accepted_tags(args),
            opts=pulumi.ResourceOptions(parent=self),
        )

    @staticmethod
    def _accepted_tags(args: ClusterSpec) -> dict[str, Any]:
        """The advisories kept with a reason, as the tags the policy pack reads on the cluster it judges."""
        return {"tags": accepted_labels(args.accepted_advisories)} if args.accepted_advisories else {}

    def _node_provisioning(self) -> dict[str, Any]:
        """NAP on, with no default NodePools, when the cluster has auto-provisioned pools: AKS's default ``default``
        NodePool admits every D-family size, old Mellanox ones included (learn.microsoft.com/azure/aks/
        node-auto-provisioning-node-pools, "Review default node pool configuration"); ``None`` creates none, so
        only wirespeed's network-optimised pools launch nodes."""
        if not self.plan.auto_provisioned:
            return {}
        return {
            "node_provisioning_profile": containerservice.ManagedClusterNodeProvisioningProfileArgs(
                mode="Auto", default_node_pools="None"
            )
        }

    def _outbound_outputs(self) -> None:
        plan = self.plan
        outbound = plan.outbound
        ids: list[pulumi.Input[str]] = [ip.id for ip in self.public_ips] or list(outbound.existing_ip_ids)
        self.outbound_ip_ids = pulumi.Output.all(*ids).apply(list) if ids else pulumi.Output.from_input([])
        addresses = [ip.ip_address.apply(lambda a: a or "") for ip in self.public_ips]
        self.outbound_ip_addresses = (
            pulumi.Output.all(*addresses).apply(list) if addresses else pulumi.Output.from_input([])
        )
        lb = outbound.load_balancer
        self.allocated_outbound_ports = pulumi.Output.from_input(lb.allocated_outbound_ports if lb else None)
        self.outbound_ip_count = pulumi.Output.from_input(outbound.outbound_ips)
        self.outbound = pulumi.Output.from_input(outbound.to_json())
        self.replace_on_change = pulumi.Output.from_input(
            {p.spec.name: [path for path, _ in REPLACE_ON_CHANGE] for p in (plan.system_pool, *plan.pools)}
        )

    def _outputs(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "cluster_name": self.cluster_name,
            "node_resource_group": self.node_resource_group,
            "kubeconfig": self.kubeconfig,
            "pools": {k: v.urn for k, v in self.pools.items()},
            "public_ips": [ip.urn for ip in self.public_ips],
            "outbound_ip_addresses": self.outbound_ip_addresses,
            "outbound_ip_ids": self.outbound_ip_ids,
            "allocated_outbound_ports": self.allocated_outbound_ports,
            "outbound_ip_count": self.outbound_ip_count,
            "outbound": self.outbound,
            "load_balancer_id": self.load_balancer_id,
            "replace_on_change": self.replace_on_change,
            "tuning": self.tuning.urn if self.tuning is not None else None,
            "auto_provisioned_pools": {k: v.urn for k, v in self.auto_provisioned_pools.items()},
            "snat_alert": self.snat_alert.urn if self.snat_alert is not None else None,
        }

    def _network_profile(self, plan: ClusterPlan) -> containerservice.ContainerServiceNetworkProfileArgs:
        outbound = plan.outbound
        common: dict[str, Any] = {
            # Azure CNI Overlay: pod IPs off the VNet, the AKS-recommended plugin for new clusters.
            "network_plugin": "azure",
            "network_plugin_mode": "overlay",
            "load_balancer_sku": "standard",
            "outbound_type": outbound.type,
        }
        if outbound.load_balancer is not None:
            ids = [ip.id for ip in self.public_ips]
            return containerservice.ContainerServiceNetworkProfileArgs(
                load_balancer_profile=_load_balancer_profile(outbound, ids), **common
            )
        return containerservice.ContainerServiceNetworkProfileArgs(
            nat_gateway_profile=containerservice.ManagedClusterNATGatewayProfileArgs(
                idle_timeout_in_minutes=outbound.idle_timeout_minutes,
                managed_outbound_ip_profile=containerservice.ManagedClusterManagedOutboundIPProfileArgs(
                    count=outbound.nat_gateway_ips
                ),
            ),
            **common,
        )

    def _snat_alert(self, name: str, args: NetworkOptimizedClusterArgs, plan: ClusterPlan) -> monitor.MetricAlert:
        # learn.microsoft.com/azure/load-balancer/load-balancer-standard-diagnostics: UsedSnatPorts and
        # AllocatedSnatPorts on Microsoft.Network/loadBalancers, split by BackendIPAddress (one series per node).
        # A metric alert cannot divide one metric by another; the threshold is a share of the explicit ports,
        # which equal AllocatedSnatPorts because wirespeed never leaves allocatedOutboundPorts at 0.
        alert = plan.snat_alert
        assert alert is not None
        return monitor.MetricAlert(
            f"{name}-snat-alert",
            resource_group_name=args.resource_group_name,
            # Metric alert rules are global resources; the scope carries the region.
            location="global",
            description=(
                f"UsedSnatPorts on the busiest node above {alert.threshold_percent:g}% of the "
                f"{alert.allocated_ports:,} allocated per node: SNAT exhaustion ahead (add IPs and ports, see "
                "`wirespeed size azure-lb`)."
            ),
            enabled=True,
            severity=alert.severity,
            window_size=alert.window_size,
            evaluation_frequency=alert.evaluation_frequency,
            scopes=[self.load_balancer_id],
            target_resource_type="Microsoft.Network/loadBalancers",
            criteria=monitor.MetricAlertSingleResourceMultipleMetricCriteriaArgs(
                odata_type="Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria",
                all_of=[
                    monitor.MetricCriteriaArgs(
                        criterion_type="StaticThresholdCriterion",
                        name="used-snat-ports",
                        metric_namespace="Microsoft.Network/loadBalancers",
                        metric_name="UsedSnatPorts",
                        operator="GreaterThan",
                        threshold=alert.threshold_ports,
                        time_aggregation="Maximum",
                        # One series per node (backend IP), so the busiest node fires, not the average.
                        dimensions=[
                            monitor.MetricDimensionArgs(name="BackendIPAddress", operator="Include", values=["*"])
                        ],
                    )
                ],
            ),
            actions=[monitor.MetricAlertActionArgs(action_group_id=i) for i in alert.action_group_ids] or None,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cluster]),
        )

    def _kubernetes_provider(self, name: str) -> pulumi.ProviderResource:
        """One Kubernetes provider on the cluster user's credentials, for the tuning DaemonSet and the NAP objects."""
        import pulumi_kubernetes as k8s

        return k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=pulumi.ResourceOptions(parent=self))

    def _auto_provisioned(
        self, name: str, plan: ClusterPlan, provider: pulumi.ProviderResource | None
    ) -> dict[str, pulumi.Resource]:
        if not plan.auto_provisioned or provider is None:
            return {}
        from wirespeed.azure.auto_provisioned import AutoProvisionedPool

        return {
            nap.name: AutoProvisionedPool(
                f"{name}-{nap.name}",
                nap.spec,
                pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[self.cluster]),
                _plan=nap,
            )
            for nap in plan.auto_provisioned
        }

    def _tuning(
        self, name: str, args: NetworkOptimizedClusterArgs, plan: ClusterPlan, provider: pulumi.ProviderResource
    ) -> pulumi.Resource:
        from wirespeed.kubernetes import NodeTuning, NodeTuningArgs
        from wirespeed.manifests import fastest_line_rates

        pools: list[PoolPlan | NapPlan] = [plan.system_pool, *plan.pools, *plan.auto_provisioned]
        tuned = {p.name for p in plan.profiles}
        return NodeTuning(
            f"{name}-tuning",
            NodeTuningArgs(
                profiles=list(plan.profiles),
                line_rates=fastest_line_rates(
                    (p.profile.name, p.line_rate_gbps) for p in pools if p.profile.name in tuned
                ),
                image=args.tuning_image,
                namespace=args.tuning_namespace,
                admission_policy=args.tuning_admission_policy,
            ),
            pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[self.cluster, *self.pools.values()]),
        )

"""The AKS components registered under Pulumi's mocks (Azure and Kubernetes cannot exist here).

Asserts the exact inputs each child registers (type tokens, camelCase engine names), that children are
parented to their component, that every output is registered, and that bad args raise one error listing
every problem before anything registers.
"""

from __future__ import annotations

import pulumi
import pytest

from builtin_profiles import THROUGHPUT_BACKLOG
from pulumi_mocks import KUBECONFIG, SUBSCRIPTION, run_under_mocks
from wirespeed.azure import (
    NetworkOptimizedCluster,
    NetworkOptimizedClusterArgs,
    NetworkOptimizedNodePool,
    NetworkOptimizedNodePoolArgs,
    NodePoolSpec,
    OutboundSpec,
    outbound_profile,
)
from wirespeed.azure.spec import SnatAlertSpec

AGENT_POOL = "azure-native:containerservice:AgentPool"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
PUBLIC_IP = "azure-native:network:PublicIPAddress"
METRIC_ALERT = "azure-native:monitor:MetricAlert"
POOL_TOKEN = "wirespeed:index:NetworkOptimizedNodePool"
SECRET_SIG = "4dabf18193072939515e22adb298388d"  # pulumi's special key marking a secret value
CLUSTER_TOKEN = "wirespeed:index:NetworkOptimizedCluster"

APPS = NodePoolSpec(
    name="apps",
    vm_size="D16s_v6",
    min_count=3,
    max_count=60,
    max_surge="10%",
    zones=["1", "2", "3"],
    max_pods=110,
    taints=["workload=net:NoSchedule"],
    labels={"team": "checkout"},
)
POOL_OUTPUTS = {
    "agent_pool",
    "pool_name",
    "vm_size",
    "profile",
    "surge_nodes",
    "linux_os_config_sysctls",
    "left_to_agent",
    "replace_on_change",
}


def pool_args(**kwargs) -> NetworkOptimizedNodePoolArgs:
    fields = {f: getattr(APPS, f) for f in NodePoolSpec.__dataclass_fields__}
    fields.update(kwargs)
    return NetworkOptimizedNodePoolArgs(resource_group_name="rg", cluster_name="aks1", **fields)


def test_node_pool_registers_the_tuned_agent_pool_under_pulumi_mocks():
    rec = run_under_mocks(
        lambda: NetworkOptimizedNodePool("apps", pool_args()),
        resolve=lambda p: {
            "sysctls": p.linux_os_config_sysctls,
            "left": p.left_to_agent,
            "replace": p.replace_on_change,
        },
    )
    pool = rec.one(AGENT_POOL)
    assert pool.name == "apps-pool"
    assert pool.inputs == {
        "resourceGroupName": "rg",
        "resourceName": "aks1",
        "agentPoolName": "apps",
        "mode": "User",
        "vmSize": "Standard_D16s_v6",
        "osType": "Linux",
        "osSKU": "Ubuntu",
        "type": "VirtualMachineScaleSets",
        "count": 3,
        "enableAutoScaling": True,
        "minCount": 3,
        "maxCount": 60,
        "upgradeSettings": {"maxSurge": "10%"},
        "availabilityZones": ["1", "2", "3"],
        "maxPods": 110,
        "nodeTaints": ["workload=net:NoSchedule"],
        "nodeLabels": {"team": "checkout", "wirespeed.io/profile": "throughput"},
        "linuxOSConfig": {"sysctls": {"netCoreNetdevMaxBacklog": THROUGHPUT_BACKLOG}},
    }
    assert rec.parent_of(AGENT_POOL, "apps-pool") == rec.urn(POOL_TOKEN, "apps")
    assert rec.monitor.output_keys[rec.urn(POOL_TOKEN, "apps")] == POOL_OUTPUTS
    assert rec.resolved == {
        "sysctls": {"netCoreNetdevMaxBacklog": THROUGHPUT_BACKLOG},
        "left": ["rings.ena", "rings.mana", "rings.mlx4_en", "rings.mlx5_core"],
        "replace": ["linuxOSConfig", "vmSize", "availabilityZones", "maxPods"],
    }


def test_fixed_size_pool_turns_autoscaling_off_under_pulumi_mocks():
    rec = run_under_mocks(lambda: NetworkOptimizedNodePool("apps", pool_args(min_count=4, max_count=4, zones=())))
    inputs = rec.one(AGENT_POOL).inputs
    assert (inputs["count"], inputs["enableAutoScaling"]) == (4, False)
    assert "minCount" not in inputs
    assert "availabilityZones" not in inputs


def test_invalid_pool_raises_one_error_listing_every_problem_before_registering_under_pulumi_mocks():
    bad = pool_args(vm_size="Standard_D8s_v3", max_surge="-1", profile="nope", min_count=9, max_count=8)
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        run_under_mocks(lambda: NetworkOptimizedNodePool("apps", bad), mocks=(mocks := _mocks()))
    assert [e["property_path"] for e in caught.value.errors] == ["vm_size", "min_count", "max_surge", "profile"]
    assert caught.value.errors[0]["reason"].startswith("'Standard_D8s_v3' is not allowed: not network-optimised")
    assert str(caught.value).startswith("NetworkOptimizedNodePool: 4 invalid input(s):\n  vm_size: ")
    assert mocks.registrations == []


def _mocks():
    from pulumi_mocks import AzureMocks

    return AzureMocks()


def cluster_args(**kwargs) -> NetworkOptimizedClusterArgs:
    kwargs.setdefault("resource_group_name", "rg")
    kwargs.setdefault("location", "westeurope")
    kwargs.setdefault("pools", [APPS])
    return NetworkOptimizedClusterArgs(**kwargs)


CLUSTER_OUTPUTS = {
    "cluster",
    "cluster_name",
    "node_resource_group",
    "kubeconfig",
    "pools",
    "public_ips",
    "outbound_ip_addresses",
    "outbound_ip_ids",
    "allocated_outbound_ports",
    "outbound_ip_count",
    "outbound",
    "load_balancer_id",
    "replace_on_change",
    "tuning",
    "snat_alert",
    "auto_provisioned_pools",
}


def test_cluster_with_created_public_ips_sized_for_a_workload_under_pulumi_mocks():
    args = cluster_args(
        outbound=OutboundSpec(connections_per_second=12, ip_mode="created", idle_timeout_minutes=10), tuning=False
    )
    rec = run_under_mocks(
        lambda: NetworkOptimizedCluster("shop", args),
        resolve=lambda c: {
            "addresses": c.outbound_ip_addresses,
            "ids": c.outbound_ip_ids,
            "ports": c.allocated_outbound_ports,
        },
    )
    ips = sorted(rec.of_type(PUBLIC_IP), key=lambda r: r.name)
    # 3,600 ports x 70 nodes (system 3+1, apps 60+6) = 252,000 -> 4 IPs of 64,000.
    assert [r.name for r in ips] == [f"shop-outbound-ip-{i}" for i in range(1, 5)]
    for ip in ips:
        assert ip.inputs == {
            "resourceGroupName": "rg",
            "location": "westeurope",
            "sku": {"name": "Standard", "tier": "Regional"},
            "publicIPAllocationMethod": "Static",
            "publicIPAddressVersion": "IPv4",
            "zones": ["1", "2", "3"],
        }
        assert rec.parent_of(PUBLIC_IP, ip.name) == rec.urn(CLUSTER_TOKEN, "shop")
    aks = rec.one(MANAGED_CLUSTER).inputs
    ip_ids = [
        {
            "id": f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg/providers/Microsoft.Network/"
            f"publicIPAddresses/{r.name}"
        }
        for r in ips
    ]
    profile = aks["networkProfile"]["loadBalancerProfile"]
    assert profile["allocatedOutboundPorts"] == 3600
    assert profile["idleTimeoutInMinutes"] == 10
    assert profile["outboundIPs"] == {"publicIPs": ip_ids}
    assert "managedOutboundIPs" not in profile
    assert {k: aks["networkProfile"][k] for k in ("networkPlugin", "networkPluginMode", "outboundType")} == {
        "networkPlugin": "azure",
        "networkPluginMode": "overlay",
        "outboundType": "loadBalancer",
    }
    assert aks["agentPoolProfiles"] == [
        {
            "name": "system",
            "mode": "System",
            "vmSize": "Standard_D4s_v6",
            "osType": "Linux",
            "osSKU": "Ubuntu",
            "type": "VirtualMachineScaleSets",
            "count": 2,
            "enableAutoScaling": True,
            "minCount": 2,
            "maxCount": 3,
            "upgradeSettings": {"maxSurge": "1"},
            "nodeLabels": {"wirespeed.io/profile": "throughput"},
            "linuxOSConfig": {"sysctls": {"netCoreNetdevMaxBacklog": THROUGHPUT_BACKLOG}},
        }
    ]
    assert aks["identity"] == {"type": "SystemAssigned"}
    assert rec.one(AGENT_POOL).inputs["resourceName"] == "shop-aksa1b2c3"
    assert rec.parent_of(POOL_TOKEN, "shop-apps") == rec.urn(CLUSTER_TOKEN, "shop")
    assert rec.parent_of(MANAGED_CLUSTER, "shop-aks") == rec.urn(CLUSTER_TOKEN, "shop")
    # None outputs (no tuning, no alert here) are dropped by the engine's serialisation.
    assert rec.monitor.output_keys[rec.urn(CLUSTER_TOKEN, "shop")] == CLUSTER_OUTPUTS - {"tuning", "snat_alert"}
    assert sorted(rec.resolved["addresses"]) == ["20.0.0.1", "20.0.0.2", "20.0.0.3", "20.0.0.4"]
    assert sorted(rec.resolved["ids"]) == [i["id"] for i in ip_ids]
    assert rec.resolved["ports"] == 3600
    assert "kubernetes:apps/v1:DaemonSet" not in rec.types()


def test_cluster_with_managed_ips_and_explicit_ports_under_pulumi_mocks():
    rec = run_under_mocks(
        lambda: NetworkOptimizedCluster(
            "c", cluster_args(outbound=OutboundSpec(allocated_outbound_ports=4000), tuning=False)
        )
    )
    profile = rec.one(MANAGED_CLUSTER).inputs["networkProfile"]["loadBalancerProfile"]
    assert profile == {
        "allocatedOutboundPorts": 4000,
        "idleTimeoutInMinutes": 30,
        "managedOutboundIPs": {"count": 5, "countIPv6": 0},
        "backendPoolType": "NodeIPConfiguration",
    }
    assert rec.of_type(PUBLIC_IP) == []


def test_cluster_with_existing_prefixes_under_pulumi_mocks():
    prefix = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/net/providers/Microsoft.Network/publicIPPrefixes/egress"
    outbound = OutboundSpec(
        allocated_outbound_ports=2048, ip_mode="existing", existing_prefix_ids=[prefix], outbound_ip_count=16
    )
    rec = run_under_mocks(lambda: NetworkOptimizedCluster("c", cluster_args(outbound=outbound, tuning=False)))
    profile = rec.one(MANAGED_CLUSTER).inputs["networkProfile"]["loadBalancerProfile"]
    assert profile["outboundIPPrefixes"] == {"publicIPPrefixes": [{"id": prefix}]}


def test_cluster_with_managed_nat_gateway_under_pulumi_mocks():
    outbound = OutboundSpec(type="managedNATGateway", nat_gateway_flows=150_000, idle_timeout_minutes=10)
    rec = run_under_mocks(lambda: NetworkOptimizedCluster("c", cluster_args(outbound=outbound, tuning=False)))
    network = rec.one(MANAGED_CLUSTER).inputs["networkProfile"]
    assert network["outboundType"] == "managedNATGateway"
    assert network["natGatewayProfile"] == {"idleTimeoutInMinutes": 10, "managedOutboundIPProfile": {"count": 3}}
    assert "loadBalancerProfile" not in network


def test_cluster_installs_node_tuning_through_its_own_credentials_under_pulumi_mocks():
    balanced = NodePoolSpec(name="batch", vm_size="D8as_v6", profile="balanced", max_count=5)
    args = cluster_args(
        pools=[APPS, balanced], outbound=OutboundSpec(allocated_outbound_ports=2048), tuning_image="ghcr.io/x/agent:v1"
    )
    rec = run_under_mocks(lambda: NetworkOptimizedCluster("c", args), resolve=lambda c: {"kubeconfig": c.kubeconfig})
    daemon_sets = {r.name: r for r in rec.of_type("kubernetes:apps/v1:DaemonSet")}
    provider = rec.one("pulumi:providers:kubernetes")
    # A secret: the engine's secret signature wraps the decoded user kubeconfig.
    assert provider.inputs["kubeconfig"] == {SECRET_SIG: "1b47061264138c4ac30d75fd1eb44270", "value": KUBECONFIG}
    assert all(ds.provider.startswith(rec.urn("pulumi:providers:kubernetes", "c-k8s")) for ds in daemon_sets.values())
    assert rec.parent_of("pulumi:providers:kubernetes", "c-k8s") == rec.urn(CLUSTER_TOKEN, "c")
    assert rec.parent_of("wirespeed:index:NodeTuning", "c-tuning") == rec.urn(CLUSTER_TOKEN, "c")
    assert sorted(daemon_sets) == ["c-tuning-daemon-set-balanced", "c-tuning-daemon-set-throughput"]
    for ds in daemon_sets.values():
        pod = ds.inputs["spec"]["template"]["spec"]
        assert pod["containers"][0]["image"] == "ghcr.io/x/agent:v1"
    _, call_args = next(c for c in rec.mocks.calls if c[0].endswith("listManagedClusterUserCredentials"))
    assert call_args == {"resourceGroupName": "rg", "resourceName": "c-aksa1b2c3"}
    assert rec.resolved["kubeconfig"] == KUBECONFIG
    assert "tuning" in rec.monitor.output_keys[rec.urn(CLUSTER_TOKEN, "c")]


def test_snat_alert_watches_the_cluster_load_balancer_under_pulumi_mocks():
    args = cluster_args(
        outbound=OutboundSpec(allocated_outbound_ports=4000),
        snat_alert=SnatAlertSpec(action_group_ids=["/ag/oncall"]),
        tuning=False,
    )
    rec = run_under_mocks(lambda: NetworkOptimizedCluster("c", args))
    alert = rec.one(METRIC_ALERT)
    assert alert.inputs == {
        "resourceGroupName": "rg",
        "location": "global",
        "description": "UsedSnatPorts on the busiest node above 80% of the 4,000 allocated per node: SNAT exhaustion "
        "ahead (add IPs and ports, see `wirespeed size azure-lb`).",
        "enabled": True,
        "severity": 2,
        "windowSize": "PT5M",
        "evaluationFrequency": "PT1M",
        "scopes": [
            f"/subscriptions/{SUBSCRIPTION}/resourceGroups/MC_rg_c-aksa1b2c3_westeurope/providers/"
            "Microsoft.Network/loadBalancers/kubernetes"
        ],
        "targetResourceType": "Microsoft.Network/loadBalancers",
        "criteria": {
            "odataType": "Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria",
            "allOf": [
                {
                    "criterionType": "StaticThresholdCriterion",
                    "name": "used-snat-ports",
                    "metricNamespace": "Microsoft.Network/loadBalancers",
                    "metricName": "UsedSnatPorts",
                    "operator": "GreaterThan",
                    "threshold": 3200,
                    "timeAggregation": "Maximum",
                    "dimensions": [{"name": "BackendIPAddress", "operator": "Include", "values": ["*"]}],
                }
            ],
        },
        "actions": [{"actionGroupId": "/ag/oncall"}],
    }
    assert rec.parent_of(METRIC_ALERT, "c-snat-alert") == rec.urn(CLUSTER_TOKEN, "c")


def test_invalid_cluster_raises_one_error_listing_every_problem_before_registering_under_pulumi_mocks():
    args = cluster_args(
        pools=[NodePoolSpec(name="apps", vm_size="D16s_v5", max_count=10, max_surge="11")],
        outbound=OutboundSpec(allocated_outbound_ports=4000, idle_timeout_minutes=200),
        snat_alert=SnatAlertSpec(threshold_percent=0),
    )
    mocks = _mocks()
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        run_under_mocks(lambda: NetworkOptimizedCluster("c", args), mocks=mocks)
    assert caught.value.errors == [
        {
            "property_path": "pools[0].vm_size",
            "reason": "'Standard_D16s_v5' is not allowed: not network-optimised (NIC mellanox-or-mana, 12,500 Mb/s); "
            "use a MANA size such as Standard_D16s_v6, Standard_D16ads_v6, Standard_D16as_v6, or set "
            "allow_non_network_optimised to the reason this pool may use it",
        },
        {
            "property_path": "pools[0].max_surge",
            "reason": "'11' is not allowed: a node count from 1 to max_count (10) or a percent above 0% up to "
            "100% (e.g. '1' or '10%')",
        },
        {
            "property_path": "outbound.idle_timeout_minutes",
            "reason": "200 is not allowed: must be a whole number between 4 and 120",
        },
        {
            "property_path": "snat_alert.threshold_percent",
            "reason": "0 is not allowed: between 1 and 99 (percent of ports)",
        },
    ]
    assert mocks.registrations == []


def test_outbound_profile_for_a_cluster_the_team_owns_under_pulumi_mocks():
    captured = {}

    def build():
        from pulumi_azure_native import containerservice

        profile = outbound_profile([APPS], OutboundSpec(connections_per_second=12))
        captured["profile"] = profile
        return containerservice.ManagedCluster(
            "own",
            resource_group_name="rg",
            network_profile=containerservice.ContainerServiceNetworkProfileArgs(load_balancer_profile=profile),
        )

    rec = run_under_mocks(build)
    assert rec.one(MANAGED_CLUSTER).inputs["networkProfile"]["loadBalancerProfile"] == {
        "allocatedOutboundPorts": 3600,
        "idleTimeoutInMinutes": 30,
        "managedOutboundIPs": {"count": 4, "countIPv6": 0},
        "backendPoolType": "NodeIPConfiguration",
    }


def test_outbound_profile_refuses_created_ips():
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        outbound_profile([APPS], OutboundSpec(connections_per_second=12, ip_mode="created"))
    assert caught.value.errors == [
        {
            "property_path": "outbound.ip_mode",
            "reason": "'created' is not allowed: outbound_profile returns a load balancer profile with ip_mode "
            "'managed' or 'existing' (create IPs yourself and pass existing_ip_ids)",
        }
    ]


def test_cluster_with_existing_public_ips_under_pulumi_mocks():
    ids = [
        f"/subscriptions/{SUBSCRIPTION}/resourceGroups/net/providers/Microsoft.Network/publicIPAddresses/e{i}"
        for i in (1, 2)
    ]
    outbound = OutboundSpec(allocated_outbound_ports=1024, ip_mode="existing", existing_ip_ids=ids)
    rec = run_under_mocks(
        lambda: NetworkOptimizedCluster("c", cluster_args(outbound=outbound, tuning=False)),
        resolve=lambda c: {"ids": c.outbound_ip_ids, "count": c.outbound_ip_count},
    )
    profile = rec.one(MANAGED_CLUSTER).inputs["networkProfile"]["loadBalancerProfile"]
    assert profile["outboundIPs"] == {"publicIPs": [{"id": i} for i in ids]}
    assert rec.of_type(PUBLIC_IP) == []
    assert rec.resolved == {"ids": ids, "count": 2}


def test_the_five_kinds_of_bad_input_come_back_together_before_registering_under_pulumi_mocks():
    """Non-network-optimised size, sysctl outside AKS's range, surge larger than the pool, unknown profile and
    an infeasible outbound: one error, every problem, nothing registered."""
    args = cluster_args(
        pools=[
            NodePoolSpec(name="old", vm_size="D16s_v3", max_count=5, max_surge="6"),
            NodePoolSpec(name="tuned", vm_size="D8s_v6", extra_sysctls={"net.core.somaxconn": 1}),
            NodePoolSpec(name="odd", vm_size="D8s_v6", profile="fastest"),
        ],
        outbound=OutboundSpec(allocated_outbound_ports=64_000, ip_mode="existing", existing_ip_ids=["/ip/1"]),
    )
    mocks = _mocks()
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        run_under_mocks(lambda: NetworkOptimizedCluster("c", args), mocks=mocks)
    assert [e["property_path"] for e in caught.value.errors] == [
        "pools[0].vm_size",
        "pools[0].max_surge",
        "pools[1].extra_sysctls['net.core.somaxconn']",
        "pools[2].profile",
    ]
    assert mocks.registrations == []
    # Outbound feasibility needs valid pools; with them fixed, the infeasible outbound is what is left.
    fixed = cluster_args(pools=[NodePoolSpec(name="ok", vm_size="D8s_v6")], outbound=args.outbound)
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        run_under_mocks(lambda: NetworkOptimizedCluster("c", fixed), mocks=mocks)
    assert [e["property_path"] for e in caught.value.errors] == ["outbound.existing_ip_ids"]
    assert caught.value.errors[0]["reason"].startswith("infeasible: 64,000 ports x 8 nodes")
    assert mocks.registrations == []


REASON_TAG = "wirespeed.io.not-network-optimised-reason"


@pytest.mark.parametrize(
    ("vm_size", "reason", "tags"),
    [
        pytest.param("Standard_D16s_v5", " batch pool, egress is light ", {REASON_TAG: "batch pool, egress is light"}),
        pytest.param("Standard_D16s_v6", "batch pool, egress is light", None, id="network-optimised-size-no-tag"),
        pytest.param("Standard_D16s_v6", None, None, id="no-reason-no-tag"),
    ],
)
def test_pool_records_a_written_reason_only_for_a_size_that_needs_one_under_pulumi_mocks(vm_size, reason, tags):
    rec = run_under_mocks(
        lambda: NetworkOptimizedNodePool("apps", pool_args(vm_size=vm_size, allow_non_network_optimised=reason))
    )
    assert rec.one(AGENT_POOL).inputs.get("tags") == tags


def test_cluster_records_the_written_reason_on_its_inline_system_pool_under_pulumi_mocks():
    system = NodePoolSpec(
        name="system", vm_size="D4s_v5", min_count=2, max_count=3, allow_non_network_optimised="system add-ons only"
    )
    rec = run_under_mocks(lambda: NetworkOptimizedCluster("shop", cluster_args(system_pool=system, tuning=False)))
    profiles = rec.one(MANAGED_CLUSTER).inputs["agentPoolProfiles"]
    assert [p.get("tags") for p in profiles] == [{REASON_TAG: "system add-ons only"}]
    assert "tags" not in rec.one(AGENT_POOL).inputs

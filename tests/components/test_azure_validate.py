"""The pure layer behind the AKS components: every problem at once, exact messages, derived plans."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builtin_profiles import THROUGHPUT_BACKLOG
from wirespeed import catalog
from wirespeed.azure._validate import (
    InvalidArgsError,
    accelerated_networking,
    check_pool,
    plan_cluster,
    plan_outbound,
    plan_pool,
)
from wirespeed.azure.spec import ClusterSpec, NodePoolSpec, OutboundSpec, SnatAlertSpec
from wirespeed.azure.topology import cluster_load_balancer_id
from wirespeed.profile import Profile, Sysctls
from wirespeed.profiles import builtin_profile
from wirespeed.sizing import aks_sysctls, dynamic_default_ports

POOL = NodePoolSpec(name="apps", vm_size="Standard_D16s_v6", min_count=3, max_count=60, max_surge="10%")


def problems_of(call) -> list[tuple[str, str]]:
    with pytest.raises(InvalidArgsError) as caught:
        call()
    return [(p.path, p.reason) for p in caught.value.problems]


def custom_profile(**sysctls: int) -> Profile:
    base = builtin_profile("throughput")
    return base.model_copy(update={"name": "custom", "sysctls": Sysctls.model_validate(sysctls)})


def test_pool_plan_sets_the_aks_sysctls_and_leaves_rings_to_the_agent():
    plan = plan_pool(POOL)
    assert plan.instance.name == "Standard_D16s_v6"
    assert plan.surge_nodes == 6
    assert plan.autoscaling
    assert plan.labels == {"wirespeed.io/profile": "throughput"}
    assert plan.aks_sysctl_engine_names() == {"netCoreNetdevMaxBacklog": THROUGHPUT_BACKLOG}
    assert plan.left_to_agent == ("rings.ena", "rings.mana", "rings.mlx4_en", "rings.mlx5_core")
    assert plan.replace_on_change == ("linuxOSConfig", "vmSize", "availabilityZones", "maxPods")


def test_profile_sysctls_aks_lacks_are_left_to_the_agent_and_extra_ones_are_set():
    profile = custom_profile(**{"net.core.netdev_max_backlog": 8192, "net.core.netdev_budget": 600})
    spec = NodePoolSpec(
        name="apps",
        vm_size="D8s_v6",
        profile=profile,
        extra_sysctls={"net.core.somaxconn": 32768, "net.ipv4.ip_local_port_range": "1024 65000"},
    )
    plan = plan_pool(spec)
    assert plan.aks_sysctl_engine_names() == {
        "netCoreNetdevMaxBacklog": 8192,
        "netCoreSomaxconn": 32768,
        "netIpv4IpLocalPortRange": "1024 65000",
    }
    assert plan.left_to_agent[0] == "net.core.netdev_budget"
    assert plan.labels["wirespeed.io/profile"] == "custom"


def test_non_network_optimised_size_with_a_reason_is_allowed_and_noted():
    plan = plan_pool(NodePoolSpec(name="gpu", vm_size="D16s_v5", allow_non_network_optimised="legacy quota"))
    assert plan.notes == ("Not network-optimised, allowed because: legacy quota",)


def test_every_pool_problem_is_listed_at_once_with_field_value_and_range():
    spec = NodePoolSpec(
        name="Apps_1",
        vm_size="Standard_D16s_v5",
        min_count=5,
        max_count=4,
        max_surge="9",
        zones=["1", "4"],
        os_sku="Windows2022",
        max_pods=300,
        profile="fastest",
        taints=["dedicated=net"],
        extra_sysctls={"net.core.somaxconn": 100, "net.ipv4.tcp_fin_timeout": 121, "net.core.busy_poll": 50},
    )
    assert problems_of(lambda: plan_pool(spec)) == [
        ("name", "'Apps_1' is not allowed: 1-12 lowercase letters and digits, starting with a letter (AKS pool name)"),
        (
            "vm_size",
            "'Standard_D16s_v5' is not allowed: not network-optimised (NIC mellanox-or-mana, 12,500 Mb/s); use a MANA "
            "size such as Standard_D16s_v6, Standard_D16ads_v6, Standard_D16as_v6, or set allow_non_network_optimised "
            "to the reason this pool may use it",
        ),
        ("min_count", "5 is not allowed: must be at most max_count (4) (autoscaler range min..max)"),
        (
            "max_surge",
            "'9' is not allowed: a node count from 1 to max_count (4) or a percent above 0% up to 100% (e.g. '1' or "
            "'10%')",
        ),
        ("zones[1]", "'4' is not allowed: one of 1, 2, 3"),
        (
            "os_sku",
            "'Windows2022' is not allowed: one of Ubuntu, Ubuntu2204, AzureLinux, AzureLinux3 (Linux: the tuning agent "
            "and linuxOSConfig are Linux-only)",
        ),
        ("max_pods", "300 is not allowed: must be a whole number between 10 and 250"),
        ("profile", "'fastest' is not allowed: 'fastest' is not a built-in profile: balanced, throughput"),
        ("taints[0]", "'dedicated=net' is not allowed: KEY[=VALUE]:EFFECT with EFFECT one of NoSchedule, "
         "PreferNoSchedule, NoExecute"),
    ]  # fmt: skip


def test_sysctls_outside_aks_range_are_refused_with_the_range():
    # A profile's own sysctls are held to AKS's ranges by the profile model itself (test_profile*), so only the
    # pool's extra sysctls can bring a value outside them here.
    profile = custom_profile()
    spec = NodePoolSpec(
        name="apps",
        vm_size="D8s_v6",
        profile=profile,
        extra_sysctls={
            "net.ipv4.tcp_fin_timeout": 121,
            "net.core.busy_poll": 50,
            "net.ipv4.ip_local_port_range": "70000 80000",
        },
    )
    assert problems_of(lambda: plan_pool(spec)) == [
        (
            "extra_sysctls['net.ipv4.tcp_fin_timeout']",
            "121 is not allowed: must be a whole number between 5 and 120 (AKS's range for netIpv4TcpFinTimeout)",
        ),
        (
            "extra_sysctls['net.core.busy_poll']",
            "'net.core.busy_poll' is not a sysctl AKS sets at node creation; supported: "
            + ", ".join(aks_sysctls.supported_kernel_names()),
        ),
        (
            "extra_sysctls['net.ipv4.ip_local_port_range']",
            "'70000 80000' is not allowed: \"FIRST LAST\" with FIRST 1,024..60,999, LAST 32,768..65,535 and "
            "FIRST < LAST (AKS's range for netIpv4IpLocalPortRange)",
        ),
    ]


def test_extra_sysctl_the_profile_already_sets_is_refused():
    spec = NodePoolSpec(name="apps", vm_size="D8s_v6", extra_sysctls={"net.core.netdev_max_backlog": 2000})
    assert problems_of(lambda: plan_pool(spec)) == [
        (
            "extra_sysctls['net.core.netdev_max_backlog']",
            "2000 is not allowed: profile 'throughput' already sets net.core.netdev_max_backlog to "
            f"{THROUGHPUT_BACKLOG}",
        )
    ]


@pytest.mark.parametrize(
    ("vm_size", "reason"),
    [
        pytest.param(
            "Standard_B2s",
            "'Standard_B2s' is not allowed: not in wirespeed's catalog, so accelerated networking cannot be confirmed "
            "(unknown instance type 'Standard_B2s': did you mean Standard_B2s_v2, Standard_B32s_v2, Standard_B2ts_v2, "
            "Standard_B2ps_v2, Standard_B2ls_v2?)",
            id="unknown-size",
        ),
        pytest.param(
            "c6in.8xlarge",
            "'c6in.8xlarge' is not allowed: an AWS instance type; AKS needs an Azure VM size",
            id="aws-type",
        ),
    ],
)
def test_sizes_without_confirmed_accelerated_networking_are_refused_even_with_a_reason(vm_size, reason):
    spec = NodePoolSpec(name="apps", vm_size=vm_size, allow_non_network_optimised="because")
    assert problems_of(lambda: plan_pool(spec)) == [("vm_size", reason)]


def test_blank_reason_is_not_a_reason():
    spec = NodePoolSpec(name="apps", vm_size="D8s_v5", allow_non_network_optimised="  ")
    assert problems_of(lambda: plan_pool(spec)) == [
        ("allow_non_network_optimised", "'  ' is not allowed: a written reason (non-empty text) or None")
    ]


@pytest.mark.parametrize(("length", "problems"), [(256, 0), (257, 1)], ids=["256-fits-a-tag", "257-does-not"])
def test_a_reason_must_fit_the_tag_it_is_recorded_in(length, problems):
    spec = NodePoolSpec(name="apps", vm_size="D8s_v5", allow_non_network_optimised=" " + "x" * length + " ")
    expected = [
        (
            "allow_non_network_optimised",
            "a reason of 257 characters is not allowed: at most 256 (it is recorded as a tag on the pool, and Azure "
            "tag values hold at most 256)",
        )
    ]
    if problems:
        assert problems_of(lambda: plan_pool(spec)) == expected
    else:
        assert plan_pool(spec).tags == {"wirespeed.io.not-network-optimised-reason": "x" * length}


def test_every_azure_catalog_size_can_have_accelerated_networking():
    assert all(accelerated_networking(t) for t in catalog.instance_types(cloud="azure"))


def test_profile_label_must_match_the_profile():
    spec = NodePoolSpec(name="apps", vm_size="D8s_v6", labels={"wirespeed.io/profile": "balanced"})
    assert problems_of(lambda: plan_pool(spec)) == [
        (
            "labels['wirespeed.io/profile']",
            "'balanced' is not allowed: it must equal the pool's profile 'throughput' (the DaemonSet selects nodes by "
            "it); leave it out and it is set for you",
        )
    ]


@pytest.mark.parametrize(
    ("surge", "max_count", "expected"),
    [
        pytest.param("10%", 60, 6, id="percent-rounds-up"),
        pytest.param("1%", 60, 1, id="small-percent-is-one-node"),
        pytest.param("2", 60, 2, id="count"),
        pytest.param("0.5%", 5, 1, id="fraction-of-a-node-is-one"),
        pytest.param("5", 5, 5, id="whole-pool"),
    ],
)
def test_surge_nodes(surge, max_count, expected):
    plan, problems = check_pool(NodePoolSpec(name="apps", vm_size="D8s_v6", max_count=max_count, max_surge=surge))
    assert problems == []
    assert plan is not None
    assert plan.surge_nodes == expected


# '1e1%', 'nan%', '1_0' and '+2' are what float()/int() take and AKS refuses (its maxSurge is digits or a decimal
# percent).
@pytest.mark.parametrize(
    "surge", ["-1", "0", "0%", "6", "101%", "-5%", "lots", "", "1e1%", "nan%", "inf%", "1_0", "+2", "2.0", "1e0"]
)
def test_surge_negative_or_larger_than_the_pool_is_refused(surge):
    plan, problems = check_pool(NodePoolSpec(name="apps", vm_size="D8s_v6", max_count=5, max_surge=surge))
    assert plan is None
    assert [p.path for p in problems] == ["max_surge"]
    assert problems[0].reason == (
        f"{surge!r} is not allowed: a node count from 1 to max_count (5) or a percent above 0% up to 100% "
        "(e.g. '1' or '10%')"
    )


def cluster(**kwargs) -> ClusterSpec:
    kwargs.setdefault("location", "westeurope")
    kwargs.setdefault("pools", [POOL])
    return ClusterSpec(**kwargs)


def test_outbound_counts_every_pool_with_surge():
    plan = plan_cluster(cluster(outbound=OutboundSpec(connections_per_second=12)))
    lb = plan.outbound.load_balancer
    assert lb is not None
    # system 3 + 1 surge, apps 60 + 6 surge
    assert lb.nodes_at_max == 70
    assert lb.allocated_outbound_ports == 3600
    assert lb.outbound_ips == 4
    assert plan.outbound.idle_timeout_minutes == 30


def test_fixed_ip_count_that_cannot_carry_the_ports_is_infeasible():
    spec = cluster(outbound=OutboundSpec(allocated_outbound_ports=4000, outbound_ip_count=4, ip_mode="created"))
    assert problems_of(lambda: plan_cluster(spec)) == [
        (
            "outbound.outbound_ip_count",
            "infeasible: 4,000 ports x 70 nodes (maxCount + surge of every pool) = 280,000 required but 4 IP(s) x "
            "64,000 = 256,000 available; AKS would reject it (InvalidLoadBalancerProfileAllocatedOutboundPorts): add "
            "IPs or lower the ports per node",
        )
    ]


def test_workload_beyond_100_ips_is_infeasible():
    big = NodePoolSpec(name="apps", vm_size="D8s_v6", max_count=999, max_surge="1")
    spec = cluster(pools=[big], outbound=OutboundSpec(allocated_outbound_ports=8000))
    assert problems_of(lambda: plan_cluster(spec)) == [
        (
            "outbound",
            "infeasible: outbound IPs: 8,032,000 ports required but 100 IPs give at most 6,400,000; use a NAT gateway "
            "(outboundType managedNATGateway) or fewer ports per node",
        )
    ]


def test_every_cluster_problem_is_listed_at_once():
    spec = cluster(
        location="",
        system_pool=NodePoolSpec(name="system", vm_size="D4s_v5", min_count=0),
        pools=[POOL, NodePoolSpec(name="apps", vm_size="D8s_v6", profile="nope")],
        outbound=OutboundSpec(allocated_outbound_ports=0, idle_timeout_minutes=3),
        snat_alert=SnatAlertSpec(threshold_percent=100),
    )
    paths = [p for p, _ in problems_of(lambda: plan_cluster(spec))]
    assert paths == [
        "system_pool.vm_size",
        "system_pool.min_count",
        "pools[1].profile",
        "pools[1].name",
        "outbound.idle_timeout_minutes",
        "outbound.allocated_outbound_ports",
        "snat_alert.threshold_percent",
        "location",
    ]


@pytest.mark.parametrize(
    ("outbound", "expected"),
    [
        pytest.param(
            OutboundSpec(),
            [
                (
                    "outbound.allocated_outbound_ports",
                    "None is not allowed: give exactly one of allocated_outbound_ports (8..64,000, a multiple of 8; "
                    "never 0, Azure's shrinking default) or connections_per_second (a workload)",
                )
            ],
            id="neither-ports-nor-workload",
        ),
        pytest.param(
            OutboundSpec(allocated_outbound_ports=1001),
            [
                (
                    "outbound.allocated_outbound_ports",
                    "1001 is not allowed: a multiple of 8 between 8 and 64,000 (0 would hand the choice to Azure, "
                    "which halves it as the pool grows)",
                )
            ],
            id="not-multiple-of-8",
        ),
        pytest.param(
            OutboundSpec(allocated_outbound_ports=1024, idle_timeout_minutes=121),
            [("outbound.idle_timeout_minutes", "121 is not allowed: must be a whole number between 4 and 120")],
            id="idle-timeout",
        ),
        pytest.param(
            OutboundSpec(allocated_outbound_ports=1024, ip_mode="existing", existing_prefix_ids=["/p/1"]),
            [
                (
                    "outbound.outbound_ip_count",
                    "None is not allowed with existing_prefix_ids: the number of IPs the prefixes hold (1..100), so "
                    "the ports can be checked against them",
                )
            ],
            id="prefix-without-count",
        ),
        pytest.param(
            OutboundSpec(allocated_outbound_ports=1024, existing_ip_ids=["/ip/1"]),
            [
                (
                    "outbound.existing_ip_ids",
                    "not allowed with ip_mode 'managed': set ip_mode 'existing' to use your own IPs or prefixes",
                )
            ],
            id="ids-without-existing-mode",
        ),
        pytest.param(
            OutboundSpec(type="managedNATGateway"),
            [
                (
                    "outbound.nat_gateway_ip_count",
                    "give exactly one of nat_gateway_ip_count (1..16) or nat_gateway_flows (concurrent outbound flows)",
                )
            ],
            id="nat-without-size",
        ),
        pytest.param(
            OutboundSpec(type="managedNATGateway", nat_gateway_flows=2_000_000),
            [
                (
                    "outbound.nat_gateway_flows",
                    "2,000,000 required but 16 IPs give at most 1,032,192; split egress across subnets with their own "
                    "NAT gateways, or reuse connections",
                )
            ],
            id="nat-infeasible",
        ),
        pytest.param(
            OutboundSpec(type="managedNATGateway", nat_gateway_ip_count=2, allocated_outbound_ports=1024),
            [
                (
                    "outbound.allocated_outbound_ports",
                    "1024 is not allowed with managedNATGateway: load balancer setting (a NAT gateway allocates "
                    "ports on demand)",
                )
            ],
            id="nat-with-lb-setting",
        ),
    ],
)
def test_outbound_problems(outbound, expected):
    assert problems_of(lambda: plan_cluster(cluster(outbound=outbound))) == expected


def test_existing_ips_fix_the_count():
    ids = [f"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/ip{i}" for i in range(5)]
    plan = plan_cluster(
        cluster(outbound=OutboundSpec(allocated_outbound_ports=4000, ip_mode="existing", existing_ip_ids=ids))
    )
    lb = plan.outbound.load_balancer
    assert lb is not None
    assert (lb.ips_fixed, lb.outbound_ips, lb.feasible) == (True, 5, True)


def test_nat_gateway_sized_from_flows():
    plan = plan_cluster(cluster(outbound=OutboundSpec(type="managedNATGateway", nat_gateway_flows=150_000)))
    assert plan.outbound.nat_gateway_ips == 3
    assert plan.outbound.idle_timeout_minutes == 4
    assert plan.outbound.load_balancer is None


def test_nat_gateway_sku_is_standard_unless_given_and_says_what_the_sku_is():
    for stated in (None, "Standard"):
        outbound = OutboundSpec(type="managedNATGateway", nat_gateway_flows=150_000, nat_gateway_sku=stated)
        plan = plan_cluster(cluster(outbound=outbound)).outbound
        assert plan.nat_gateway_sku == "Standard"
        assert plan.to_json()["nat_gateway_sku"] == "Standard"
        assert "Standard NAT gateway: zonal (one availability zone), up to 50 Gbps" in plan.explain()


@pytest.mark.parametrize(
    ("sku", "reason"),
    [
        pytest.param("Basic", "'Basic' is not allowed: 'Standard' or 'StandardV2'", id="unknown"),
        pytest.param(
            "StandardV2",
            "'StandardV2' is not allowed: neither the pinned pulumi-azure-native 3.29.0 (AKS API 2025-09-01) nor "
            "azurerm_kubernetes_cluster's nat_gateway_profile (idle_timeout_in_minutes, managed_outbound_ip_count) "
            "can set natGatewayProfile.sku (AKS API 2026-06-01), so AKS would create a Standard (zonal) NAT gateway; "
            "use 'Standard', or a userAssignedNATGateway you create as StandardV2 (`wirespeed size azure-natgw --sku "
            "StandardV2` sizes it)",
            id="standard-v2-on-the-pinned-sdk",
        ),
    ],
)
def test_a_nat_gateway_sku_the_component_cannot_create_is_refused_naming_why(sku, reason):
    for sizing in ({"nat_gateway_flows": 150_000}, {"nat_gateway_ip_count": 2}):
        outbound = OutboundSpec(type="managedNATGateway", nat_gateway_sku=sku, **sizing)
        assert problems_of(lambda o=outbound: plan_cluster(cluster(outbound=o))) == [
            ("outbound.nat_gateway_sku", reason)
        ]


def test_a_nat_gateway_sku_on_a_load_balancer_is_refused():
    outbound = OutboundSpec(allocated_outbound_ports=1024, nat_gateway_sku="Standard")
    assert problems_of(lambda: plan_cluster(cluster(outbound=outbound))) == [
        ("outbound.nat_gateway_sku", "'Standard' is not allowed with loadBalancer: NAT gateway setting")
    ]


def test_snat_alert_threshold_is_a_share_of_the_explicit_ports():
    plan = plan_cluster(
        cluster(outbound=OutboundSpec(allocated_outbound_ports=4000), snat_alert=SnatAlertSpec(threshold_percent=80))
    )
    assert plan.snat_alert is not None
    assert plan.snat_alert.threshold_ports == 3200


def test_snat_alert_with_nat_gateway_is_refused():
    spec = cluster(outbound=OutboundSpec(type="managedNATGateway", nat_gateway_ip_count=1), snat_alert=SnatAlertSpec())
    assert problems_of(lambda: plan_cluster(spec)) == [
        ("snat_alert", "not allowed with managedNATGateway: the alert watches the load balancer's SNAT ports")
    ]


def test_plan_outbound_for_pools_defined_elsewhere():
    plan = plan_outbound([POOL, NodePoolSpec(name="b", vm_size="any", max_count=10, max_surge="2")],
                         OutboundSpec(allocated_outbound_ports=2048))  # fmt: skip
    assert plan.load_balancer is not None
    assert plan.load_balancer.nodes_at_max == 66 + 12
    assert plan.load_balancer.outbound_ips == 3


def test_cluster_load_balancer_id_is_in_the_node_resource_group():
    cluster_id = "/subscriptions/abc/resourcegroups/rg/providers/Microsoft.ContainerService/managedClusters/c"
    assert cluster_load_balancer_id(cluster_id, "MC_rg_c_westeurope") == (
        "/subscriptions/abc/resourceGroups/MC_rg_c_westeurope/providers/Microsoft.Network/loadBalancers/kubernetes"
    )


def test_profile_model_ranges_agree_with_the_aks_table():
    """profile.py reuses AKS's ranges for the sysctls both know: they must not drift apart."""
    fields = {"net.core.netdev_max_backlog": "netdev_max_backlog", "net.core.rmem_max": "rmem_max",
              "net.core.wmem_max": "wmem_max", "net.core.optmem_max": "optmem_max"}  # fmt: skip
    for kernel_name, attr in fields.items():
        row = aks_sysctls.BY_KERNEL_NAME[kernel_name]
        schema = Sysctls.model_json_schema(by_alias=True)["properties"][kernel_name]["anyOf"][0]
        assert (schema["minimum"], schema["maximum"]) == (row.low, row.high), attr


@given(st.integers(min_value=-10, max_value=4_000_000))
def test_check_value_accepts_exactly_the_range(value):
    row = aks_sysctls.BY_KERNEL_NAME["net.core.somaxconn"]
    assert (aks_sysctls.check_value(row.kernel_name, value) is None) == (row.low <= value <= row.high)


def test_adding_a_pool_can_make_an_existing_explicit_profile_infeasible():
    from wirespeed.azure.existing import ExistingPool, outbound_check

    added = plan_pool(NodePoolSpec(name="fast", vm_size="D16ds_v6", max_count=20, max_surge="2"))
    check = outbound_check([ExistingPool("system", 3, "1"), ExistingPool("apps", 40)], [added], 4000, 2)
    # 4 + 44 + 22 = 70 nodes x 4,000 = 280,000 > 2 x 64,000
    assert check == {
        "nodes_at_max": 70,
        "outbound_ips": 2,
        "allocated_outbound_ports": 4000,
        "feasible": False,
        "ports_required": 280_000,
        "ports_available": 128_000,
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("apps:D16s_v6:1:5", ("apps", "D16s_v6", 1, 5, "10%", "throughput"), id="defaults"),
        pytest.param("b:D8as_v6:0:9:2:balanced", ("b", "D8as_v6", 0, 9, "2", "balanced"), id="all-fields"),
        pytest.param("c:D8as_v6:0:9::balanced", ("c", "D8as_v6", 0, 9, "10%", "balanced"), id="empty-surge"),
    ],
)
def test_stack_config_pool_strings(text, expected):
    from wirespeed.azure.stack_config import parse_pool

    problems: list = []
    pool = parse_pool(text, "wirespeed:pools[0]", problems, ["1"])
    assert problems == []
    assert pool is not None
    assert (pool.name, pool.vm_size, pool.min_count, pool.max_count, pool.max_surge, pool.profile) == expected
    assert tuple(pool.zones) == ("1",)


def test_stack_config_reports_every_bad_pool_string():
    from wirespeed.azure.stack_config import StackConfigError, cluster_spec

    with pytest.raises(StackConfigError) as caught:
        cluster_spec(
            {"location": "westeurope", "systemPool": "system", "pools": ["a:D8s_v6:x:3", 7], "connectionsPerSecond": 12}
        )
    assert [(p.path, p.reason) for p in caught.value.problems] == [
        ("wirespeed:systemPool", "'system' is not allowed: NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]], e.g. "
         "apps:Standard_D16s_v6:3:20:10%:throughput"),
        ("wirespeed:pools[0]", "'a:D8s_v6:x:3' is not allowed: MIN and MAX must be whole numbers "
         "(NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]], e.g. apps:Standard_D16s_v6:3:20:10%:throughput)"),
        ("wirespeed:pools[1]", "7 is not allowed: NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]], e.g. "
         "apps:Standard_D16s_v6:3:20:10%:throughput"),
    ]  # fmt: skip


def test_stack_config_reports_a_malformed_pool_string_and_every_other_problem_at_once():
    """A pool string that does not parse does not hide the component's problems with the others: each is named by
    the stack key (and the part of the pool string) the user wrote."""
    from wirespeed.azure.stack_config import StackConfigError, cluster_spec

    with pytest.raises(StackConfigError) as caught:
        cluster_spec(
            {
                "location": "westeurope",
                "systemPool": "system:Standard_D4s_v6:2:3:1:throughput",
                "pools": ["apps:Standard_D16s_v6:3:20", "broken", "web:Standard_D16s_v6:30:20:10%:nosuch"],
                "zones": ["1", "9"],
                "connectionsPerSecond": 12,
                "snatAlertPercent": 150,
            }
        )
    assert [str(p) for p in caught.value.problems] == [
        "wirespeed:pools[1]: 'broken' is not allowed: NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]], e.g. "
        "apps:Standard_D16s_v6:3:20:10%:throughput",
        "wirespeed:zones[1]: '9' is not allowed: one of 1, 2, 3",
        "wirespeed:pools[2] (MIN): 30 is not allowed: must be at most MAX (20) (autoscaler range min..max)",
        "wirespeed:pools[2] (PROFILE): 'nosuch' is not allowed: 'nosuch' is not a built-in profile: balanced, "
        "throughput",
        "wirespeed:snatAlertPercent: 150 is not allowed: between 1 and 99 (percent of ports)",
    ]


def test_pure_azure_modules_load_no_pulumi():
    import json
    import subprocess
    import sys

    code = (
        "import sys, json, wirespeed.azure, wirespeed.azure._validate, wirespeed.azure.stack_config, "
        "wirespeed.azure.existing, wirespeed.azure.pools, wirespeed.azure.outbound; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert [m for m in loaded if m.split(".")[0] in ("pulumi", "pulumi_azure_native", "pulumi_kubernetes")] == []


@given(
    pools=st.lists(
        st.tuples(st.integers(1, 300), st.sampled_from(["1", "3", "10%", "33%", "100%"])).filter(
            lambda pool: pool[1].endswith("%") or int(pool[1]) <= pool[0]
        ),
        min_size=1,
        max_size=4,
    ),
    cps=st.integers(1, 60),
)
def test_cluster_outbound_always_fits_and_never_leaves_ports_to_azure(pools, cps):
    specs = [
        NodePoolSpec(name=f"p{i}", vm_size="D8s_v6", max_count=max_count, max_surge=surge)
        for i, (max_count, surge) in enumerate(pools)
    ]
    spec = ClusterSpec(location="westeurope", pools=specs, outbound=OutboundSpec(connections_per_second=cps))
    nodes = 4 + sum(m + (-(-m * int(s[:-1]) // 100) if s.endswith("%") else int(s)) for m, s in pools)
    # cps x 240 s x 1.25 rounded up to 8, never below what Azure's default would give at this size.
    ports = max(-(-cps * 300 // 8) * 8, dynamic_default_ports(nodes) if nodes <= 1000 else 32)
    if ports * nodes > 100 * 64_000:
        # Only a demand beyond 100 IPs may be refused, and it says so.
        problems = problems_of(lambda: plan_cluster(spec))
        assert [p for p, _ in problems] == ["outbound"]
        assert problems[0][1].startswith("infeasible: outbound IPs:")
        return
    plan = plan_cluster(spec)
    lb = plan.outbound.load_balancer
    assert lb is not None
    surge = sum(p.surge_nodes for p in (plan.system_pool, *plan.pools))
    assert lb.nodes_at_max == 3 + sum(m for m, _ in pools) + surge
    assert lb.allocated_outbound_ports >= 8
    assert lb.allocated_outbound_ports % 8 == 0
    assert lb.allocated_outbound_ports * lb.nodes_at_max <= lb.outbound_ips * 64_000
    assert lb.allocated_outbound_ports * lb.nodes_at_max > (lb.outbound_ips - 1) * 64_000


def test_two_different_profiles_of_one_name_are_refused():
    other = builtin_profile("balanced").model_copy(update={"name": "throughput"})
    spec = cluster(pools=[POOL, NodePoolSpec(name="b", vm_size="D8s_v6", profile=other)])
    assert problems_of(lambda: plan_cluster(spec)) == [
        (
            "pools[1].profile",
            "'throughput' is not allowed: another pool uses a different profile of that name (the DaemonSet for a "
            "name applies one profile); rename one",
        )
    ]


def test_tuning_image_and_namespace_are_checked_before_the_cluster_registers():
    paths = [p for p, _ in problems_of(lambda: plan_cluster(cluster(tuning_image="agent", tuning_namespace="Bad_NS")))]
    assert paths == ["tuning_image", "tuning_namespace"]
    plan_cluster(cluster(tuning=False, tuning_image="agent"))  # not installed: not checked


def test_an_empty_tuning_image_is_refused_before_the_cluster_registers():
    """`tuning_image or DEFAULT_IMAGE` once checked the default while NodeTuning got the "": refused only after the
    cluster had registered. Only None takes the default."""
    assert [p for p, _ in problems_of(lambda: plan_cluster(cluster(tuning_image="")))] == ["tuning_image"]
    plan_cluster(cluster(tuning_image=None))


@pytest.mark.parametrize(
    ("version", "admission_policy", "refused"),
    [
        pytest.param("1.29", True, True, id="1.29-with-policy"),
        pytest.param("1.29.9", True, True, id="1.29-patch-with-policy"),
        pytest.param("1.29", False, False, id="1.29-without-policy"),
        pytest.param("1.30", True, False, id="1.30"),
        pytest.param("v1.31.2", True, False, id="v-prefixed"),
        pytest.param(None, True, False, id="aks-default"),
    ],
)
def test_the_agents_admission_policy_needs_kubernetes_130(version, admission_policy, refused):
    spec = cluster(kubernetes_version=version, tuning_admission_policy=admission_policy)
    if not refused:
        plan_cluster(spec)
        return
    assert problems_of(lambda: plan_cluster(spec)) == [
        (
            "kubernetes_version",
            f"{version!r} is not allowed with tuning_admission_policy: the agent's admission policy needs Kubernetes "
            "1.30 or later; upgrade, or set tuning_admission_policy=False (the agent's RBAC then lets it patch any "
            "Node)",
        )
    ]
    plan_cluster(cluster(kubernetes_version=version, tuning=False))  # no agent installed: nothing to confine


def test_azure_readme_is_generated_from_the_code():
    """components/wirespeed/azure/README.md lists every input and output; regenerate with `make regen`."""
    from wirespeed.azure import docs

    assert docs.README.read_text() == docs.render()


@pytest.mark.parametrize("surge", ["1e1%", "nan%", "1_0"])
def test_existing_pool_surge_in_a_form_aks_refuses_is_refused(surge):
    from wirespeed.azure.existing import ExistingPool, outbound_check
    from wirespeed.sizing.errors import SizingError

    added = check_pool(POOL)[0]
    with pytest.raises(SizingError, match="pool 'apps'"):
        outbound_check([ExistingPool("apps", 40, surge)], [added], 4000, 2)


def test_stack_config_refuses_an_explicit_zero_hold_instead_of_taking_the_default():
    """`wirespeed:holdSeconds: 0` once became 240 (an `or` default): a stated value is the user's and is judged."""
    from wirespeed.azure.stack_config import StackConfigError, cluster_spec

    base = {"location": "westeurope", "systemPool": "system:Standard_D4s_v6:2:3", "connectionsPerSecond": 12}
    with pytest.raises(StackConfigError) as caught:
        cluster_spec({**base, "holdSeconds": 0})
    assert [str(p) for p in caught.value.problems] == [
        "wirespeed:holdSeconds: 0 is not allowed: must be between 1 and 3,600"
    ]
    assert cluster_spec(base).outbound.hold_seconds == 240  # absent: the default


@pytest.mark.parametrize(
    ("config", "kind", "udp_hold"),
    [
        ({}, "azure-load-balancer", 30 * 60),  # AKS's default outbound idle timeout, 30 minutes
        ({"idleTimeoutMinutes": 4}, "azure-load-balancer", 4 * 60),
        ({"idleTimeoutMinutes": 120}, "azure-load-balancer", 120 * 60),
        # The NAT gateway's UDP idle timeout is fixed at 4 minutes whatever idleTimeoutInMinutes (TCP's) says, then
        # its 65 s UDP reuse timer.
        ({"outboundType": "managedNATGateway", "natGatewayIpCount": 2, "idleTimeoutMinutes": 30}, "azure-nat-gateway",
         4 * 60 + 65),
    ],
)  # fmt: skip
def test_every_tuned_profile_holds_udp_for_the_egress_the_cluster_creates(config, kind, udp_hold):
    from wirespeed.azure.stack_config import cluster_spec

    base = {"location": "westeurope", "systemPool": "system:Standard_D4s_v6:2:3", "allocatedOutboundPorts": 1024}
    plan = plan_cluster(cluster_spec({**base, **config}))
    assert plan.profiles
    for profile in plan.profiles:
        assert profile.outbound is not None
        assert (profile.outbound.kind, profile.outbound.udp_hold_seconds) == (kind, udp_hold)
        assert profile.outbound.tcp_hold() == 240  # TCP keeps the team's hold, the default here


def test_the_stack_config_names_the_nat_gateway_sku_by_its_stack_key():
    from wirespeed.azure.stack_config import StackConfigError, cluster_spec

    base = {
        "location": "westeurope",
        "systemPool": "system:Standard_D4s_v6:2:3",
        "outboundType": "managedNATGateway",
        "natGatewayFlows": 150_000,
    }
    assert cluster_spec({**base, "natGatewaySku": "Standard"}).outbound.nat_gateway_sku == "Standard"
    assert cluster_spec({**base, "natGatewaySku": ""}).outbound.nat_gateway_sku is None  # Pulumi.yaml's default
    with pytest.raises(StackConfigError) as caught:
        cluster_spec({**base, "natGatewaySku": "StandardV2"})
    assert [p.field for p in caught.value.problems] == ["wirespeed:natGatewaySku"]
    assert "can set natGatewayProfile.sku (AKS API 2026-06-01)" in caught.value.problems[0].reason


def test_accepted_advisories_on_a_cluster_take_only_advisory_rules_with_a_reason():
    nat = OutboundSpec(type="managedNATGateway", nat_gateway_ip_count=2)
    kept = {"aks-natgw-zone-redundant": "StandardV2 waits for the SDK pin to reach AKS API 2026-06-01"}
    plan_cluster(cluster(outbound=nat, accepted_advisories=kept))  # an advisory rule with a reason: accepted
    refused = {"aks-snat-capacity": "we know", "aks-natgw-zone-redundant": " "}
    assert [
        path for path, _ in problems_of(lambda: plan_cluster(cluster(outbound=nat, accepted_advisories=refused)))
    ] == [
        "accepted_advisories",
        "accepted_advisories['aks-natgw-zone-redundant']",
    ]

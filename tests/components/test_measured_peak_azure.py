"""Sizing AKS outbound from a measured peak (issue 19) and the profiles the cluster hands the node agent.

The AKS components run under Pulumi's mocks (Azure and Kubernetes cannot exist here); the sizing and stack config
are pure.
"""

from __future__ import annotations

import json

import pytest

from pulumi_mocks import run_under_mocks
from wirespeed.azure import NetworkOptimizedCluster, NetworkOptimizedClusterArgs, NodePoolSpec, OutboundSpec
from wirespeed.azure._validate import InvalidArgsError, plan_cluster
from wirespeed.azure.spec import ClusterSpec
from wirespeed.azure.stack_config import StackConfigError, cluster_spec
from wirespeed.profile import Outbound, sized_outbound, validate_profile, with_outbound
from wirespeed.profiles import builtin_profile
from wirespeed.sizing import azure_lb
from wirespeed.sizing.errors import InfeasibleError, SizingError
from wirespeed.sizing.measured import AzureNatDemand, plan_azure_nat_measured

SOURCE = "prometheus http://prom:9090 max over 7d to 2026-11-20T10:00:00Z"
APPS = NodePoolSpec(name="apps", vm_size="D16s_v6", min_count=3, max_count=20)
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"


def test_measured_peak_sizes_ports_with_headroom_rounded_to_eight() -> None:
    plan = azure_lb.plan_load_balancer([azure_lb.Pool(20)], measured=azure_lb.MeasuredPeak(3_100, SOURCE))
    # 3,100 x 1.25 = 3,875 exactly, rounded up to the next multiple of 8.
    assert plan.allocated_outbound_ports == 3_880
    assert plan.ports_from == (
        f"from a measured peak of 3,100 ({SOURCE}) + 25% headroom = 3,875, rounded up to 3,880, a multiple of 8"
    )
    assert f"Ports per node: 3,880 (from a measured peak of 3,100 ({SOURCE})" in plan.explain()
    assert plan.to_json()["measured_peak"] == {"ports_in_use": 3_100, "source": SOURCE, "headroom_percent": 25}


def test_measured_peak_below_azures_default_is_raised_to_it() -> None:
    plan = azure_lb.plan_load_balancer([azure_lb.Pool(10)], measured=azure_lb.MeasuredPeak(100, SOURCE, 1))
    assert plan.allocated_outbound_ports == 1_024
    assert plan.ports_from.endswith("raised to the 1,024 Azure's default would give so nothing regresses")


def test_measured_peak_beyond_one_node_s_ports_is_infeasible() -> None:
    with pytest.raises(InfeasibleError, match=r"ports per node: 75,000 required but at most 64,000"):
        azure_lb.plan_load_balancer([azure_lb.Pool(2)], measured=azure_lb.MeasuredPeak(60_000, SOURCE))


@pytest.mark.parametrize(
    ("peak", "source", "headroom", "field"),
    [
        (0, SOURCE, 1.25, "measured_peak_ports_per_node"),
        (2.5, SOURCE, 1.25, "measured_peak_ports_per_node"),
        (100, "", 1.25, "measured_from"),
        (100, "two\nlines", 1.25, "measured_from"),
        (100, "x" * 513, 1.25, "measured_from"),
        (100, SOURCE, 11, "headroom"),
    ],
)
def test_a_bad_measured_peak_names_its_field(peak: float, source: str, headroom: float, field: str) -> None:
    with pytest.raises(SizingError) as caught:
        azure_lb.MeasuredPeak(peak, source, headroom)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_exactly_one_demand_reaches_the_load_balancer_sizing() -> None:
    with pytest.raises(SizingError, match="exactly one of an explicit port count, a workload or a measured peak"):
        azure_lb.plan_load_balancer([azure_lb.Pool(3)], ports=1024, measured=azure_lb.MeasuredPeak(10, SOURCE))


def test_nat_gateway_ips_come_from_the_busier_of_both_limits() -> None:
    # 200,000 flows + 25% = 250,000 / 64,512 -> 4 IPs; 90,000 to one destination + 25% = 112,500 / 50,000 -> 3.
    plan = plan_azure_nat_measured(AzureNatDemand(200_000, 90_000, "52.1.2.3:443/tcp", SOURCE))
    assert (plan.ips, plan.binding, plan.ips_for_ports, plan.ips_for_destination) == (4, "ports", 4, 3)
    # 130,000 to one destination + 25% = 162,500 / 50,000 -> 4 IPs: the destination decides over 3 for the ports.
    plan = plan_azure_nat_measured(AzureNatDemand(150_000, 130_000, "52.1.2.3:443/tcp", SOURCE))
    assert (plan.ips, plan.binding) == (4, "destination")
    assert "NAT gateway IPs: 4 (the busiest destination decides; measured: " in plan.explain()
    with pytest.raises(InfeasibleError, match=r"to 52\.1\.2\.3:443/tcp required but 16 IPs give at most 800,000"):
        plan_azure_nat_measured(AzureNatDemand(800_000, 700_000, "52.1.2.3:443/tcp", SOURCE))


def test_a_measured_standard_v2_plan_has_the_same_limits_and_names_its_sku() -> None:
    demand = AzureNatDemand(150_000, 130_000, "52.1.2.3:443/tcp", SOURCE)
    standard, v2 = plan_azure_nat_measured(demand), plan_azure_nat_measured(demand, "StandardV2")
    assert {k: v for k, v in v2.to_json().items() if k != "sku"} == {
        k: v for k, v in standard.to_json().items() if k != "sku"
    }
    assert (standard.to_json()["sku"]["name"], v2.to_json()["sku"]["name"]) == ("Standard", "StandardV2")
    assert v2.explain().splitlines()[-1].startswith("StandardV2 NAT gateway: zone-redundant")


def test_sized_outbound_keeps_the_team_s_threshold_exclusions_and_hold() -> None:
    base = Outbound(kind="aws-nat-gateway", public_ips=2, pressure_percent=70, exclude_cidrs=["10.0.0.0/8"])
    section = sized_outbound("azure-load-balancer", 4_096, base)
    assert section == Outbound(
        kind="azure-load-balancer", allocated_ports_per_node=4_096, pressure_percent=70, exclude_cidrs=["10.0.0.0/8"]
    )
    profile = with_outbound(builtin_profile("throughput"), section)
    assert validate_profile(profile.to_json_dict()) == profile  # still a valid profile, outbound included


# A UDP port behind the load balancer is held for the outbound idle timeout after the last packet: AKS's default 30
# minutes when the cluster does not set one.
LB_UDP = 30 * 60


def test_cluster_profiles_carry_the_load_balancer_s_ports() -> None:
    plan = plan_cluster(
        ClusterSpec(
            location="westeurope",
            pools=[APPS, NodePoolSpec(name="batch", vm_size="D8as_v6", profile="balanced", max_count=5)],
            outbound=OutboundSpec(measured_peak_ports_per_node=3_100, measured_from=SOURCE),
        )
    )
    assert plan.outbound.load_balancer is not None
    assert plan.outbound.load_balancer.allocated_outbound_ports == 3_880
    assert {p.name: p.outbound for p in plan.profiles} == {
        "throughput": Outbound(kind="azure-load-balancer", allocated_ports_per_node=3_880, udp_hold_seconds=LB_UDP),
        "balanced": Outbound(kind="azure-load-balancer", allocated_ports_per_node=3_880, udp_hold_seconds=LB_UDP),
    }


def test_cluster_profiles_carry_the_nat_gateway_s_ips_and_their_provenance() -> None:
    outbound = OutboundSpec(type="managedNATGateway", nat_gateway_ip_count=3, measured_from=SOURCE)
    plan = plan_cluster(ClusterSpec(location="westeurope", pools=[APPS], outbound=outbound))
    # The NAT gateway's UDP timers are fixed: 4 minutes idle, then 65 s before reuse (snat_limits).
    assert [p.outbound for p in plan.profiles] == [
        Outbound(kind="azure-nat-gateway", public_ips=3, udp_hold_seconds=305)
    ]
    assert plan.outbound.to_json()["measured_from"] == SOURCE
    explain = plan.outbound.explain()
    assert "with 3 IP(s) (given explicitly). Standard NAT gateway: zonal" in explain
    assert explain.endswith(f" public IPs or prefixes only. Measured: {SOURCE}.")


@pytest.mark.parametrize(
    ("outbound", "problems"),
    [
        (
            OutboundSpec(measured_peak_ports_per_node=3_100),
            ["outbound.measured_from: None is not allowed: where the peak was measured"],
        ),
        (
            OutboundSpec(measured_from=SOURCE, allocated_outbound_ports=1024),
            [
                "outbound.allocated_outbound_ports: 1024 is not allowed with measured_peak_ports_per_node",
                f"outbound.measured_from: {SOURCE!r} is not allowed without measured_peak_ports_per_node",
            ],
        ),
        (
            OutboundSpec(type="managedNATGateway", nat_gateway_ip_count=2, measured_peak_ports_per_node=900),
            ["outbound.measured_peak_ports_per_node: 900 is not allowed with managedNATGateway"],
        ),
    ],
)
def test_a_measured_peak_without_provenance_or_beside_another_demand_is_refused(
    outbound: OutboundSpec, problems: list[str]
) -> None:
    with pytest.raises(InvalidArgsError) as caught:
        plan_cluster(ClusterSpec(location="westeurope", pools=[APPS], outbound=outbound))
    said = [str(p) for p in caught.value.problems]
    assert len(said) == len(problems), said
    for line, start in zip(said, problems, strict=True):
        assert line.startswith(start), line


def test_stack_config_pins_a_measured_peak_over_the_workload_default() -> None:
    spec = cluster_spec(
        {
            "location": "westeurope",
            "systemPool": "system:Standard_D4s_v6:2:3:1",
            "connectionsPerSecond": 12,  # Pulumi.yaml's default: a measured peak takes precedence
            "measuredPeakPortsPerNode": 3_100,
            "measuredPeakSource": SOURCE,
            "headroomPercent": 30,
        }
    )
    assert spec.outbound.connections_per_second is None
    assert (spec.outbound.measured_peak_ports_per_node, spec.outbound.measured_from) == (3_100, SOURCE)
    assert spec.outbound.headroom == 1.3
    # Explicit ports still win over both.
    spec = cluster_spec(
        {"location": "westeurope", "systemPool": "s:Standard_D4s_v6:2:3", "allocatedOutboundPorts": 4096,
         "measuredPeakPortsPerNode": 3_100}
    )  # fmt: skip
    assert (spec.outbound.allocated_outbound_ports, spec.outbound.measured_peak_ports_per_node) == (4096, None)


def test_stack_config_refuses_a_headroom_outside_its_range() -> None:
    with pytest.raises(StackConfigError) as caught:
        cluster_spec(
            {"location": "westeurope", "systemPool": "s:Standard_D4s_v6:2:3", "measuredPeakPortsPerNode": 3_100,
             "measuredPeakSource": "lab", "headroomPercent": 1000}
        )  # fmt: skip
    assert [str(p) for p in caught.value.problems] == [
        "wirespeed:headroomPercent: 1000 is not allowed: a whole percent from 0 to 900"
    ]


def test_cluster_hands_node_tuning_profiles_with_the_sized_outbound_under_pulumi_mocks() -> None:
    args = NetworkOptimizedClusterArgs(
        resource_group_name="rg",
        location="westeurope",
        pools=[APPS],
        outbound=OutboundSpec(measured_peak_ports_per_node=3_100, measured_from=SOURCE),
    )
    rec = run_under_mocks(lambda: NetworkOptimizedCluster("c", args))
    (config_map,) = rec.of_type(CONFIG_MAP)
    profile = json.loads(config_map.inputs["data"]["profile.json"])
    assert profile["outbound"] == {
        "kind": "azure-load-balancer",
        "allocated_ports_per_node": 3_880,
        "pressure_percent": 80,
        "exclude_cidrs": [],
        "hold_seconds": 240,
        "udp_hold_seconds": LB_UDP,
    }
    lb = rec.one("azure-native:containerservice:ManagedCluster").inputs["networkProfile"]["loadBalancerProfile"]
    assert lb["allocatedOutboundPorts"] == 3_880

# ruff: noqa: F811  (the `engine` fixture is imported from tests/pulumi_engine.py and taken as a parameter)
"""AKS node auto-provisioning: the pure planner (wirespeed.azure.nap), `wirespeed render aks-nap` against golden YAML,
the tables it relies on checked against the upstream CRDs (tests/fixtures/karpenter-provider-azure), and the
AutoProvisionedPool component and a NetworkOptimizedCluster with NAP pools under Pulumi's mocks.

Regenerate the golden files after an intended change: UPDATE_GOLDEN=1 .venv/bin/pytest
tests/components/test_azure_nap.py
"""

from __future__ import annotations

import json
import os

import pulumi
import pytest
import yaml

from builtin_profiles import THROUGHPUT_BACKLOG
from clirun import invoke, wirespeed
from conftest import ROOT
from pulumi_engine import engine, resolve  # noqa: F401 (engine: the pytest fixture)
from pulumi_mocks import run_under_mocks
from wirespeed import catalog
from wirespeed.azure import (
    AutoProvisionedPool,
    AutoProvisionedPoolArgs,
    AutoProvisionedPoolSpec,
    NetworkOptimizedCluster,
    NetworkOptimizedClusterArgs,
    NodePoolSpec,
    OutboundSpec,
)
from wirespeed.azure.nap import check_nap, nap_objects, node_class, node_pool, plan_nap
from wirespeed.catalog import karpenter_azure
from wirespeed.names import NOT_NETWORK_OPTIMISED_REASON
from wirespeed.sizing import aks_sysctls

GOLDEN = ROOT / "tests" / "golden" / "aks-nap"
CRDS = ROOT / "tests" / "fixtures" / "karpenter-provider-azure"
CRD_VERSIONS = sorted(p.name for p in CRDS.iterdir() if p.is_dir())
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
COMPONENT = "wirespeed:index:AutoProvisionedPool"
NODE_CLASS = "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
REASON = "legacy image pipeline pinned to Dsv5 until Q3"

CASES = {
    "throughput-x86": ["--name", "net", "--cpu-limit", "640", "--min-vcpu", "16", "--max-vcpu", "96"],
    "balanced-arm64-spot": [
        "--name", "cobalt", "--profile", "balanced", "--arch", "arm64", "--capacity-type", "spot",
        "--capacity-type", "on-demand", "--cpu-limit", "256", "--max-vcpu", "32", "--taint",
        "dedicated=ingest:NoSchedule", "--label", "team=ingest", "--sysctl", "net.core.somaxconn=32768",
        "--max-pods", "110", "--image-family", "AzureLinux", "--disruption-budget", "2",
    ],
    "dsv5-with-reason": [
        "--name", "legacy", "--family", "Dsv6", "--family", "Dsv5", "--cpu-limit", "96", "--min-vcpu", "8",
        "--not-network-optimised-reason", REASON,
    ],
}  # fmt: skip


def crd(version: str, kind: str) -> dict:
    name = "karpenter.azure.com_aksnodeclasses.yaml" if kind == "AKSNodeClass" else "karpenter.sh_nodepools.yaml"
    return yaml.safe_load((CRDS / version / name).read_text())


def served_schema(document: dict, version: str) -> dict:
    (found,) = [v for v in document["spec"]["versions"] if v["name"] == version]
    return found["schema"]["openAPIV3Schema"]


# --- render aks-nap -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_render_matches_the_golden_file(case):
    out = wirespeed("render", "aks-nap", *CASES[case], cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    golden = GOLDEN / f"{case}.yaml"
    if UPDATE:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(out.stdout)
    assert out.stdout == golden.read_text(), f"{golden.name} is stale: UPDATE_GOLDEN=1 pytest {__file__}"


def test_every_golden_file_has_a_case():
    assert sorted(p.stem for p in GOLDEN.glob("*.yaml")) == sorted(CASES)


@pytest.mark.parametrize("case", CASES)
def test_json_output_is_the_same_objects(case):
    as_json = invoke("render", "aks-nap", *CASES[case], "--output", "json")
    assert as_json.returncode == 0, as_json.stderr
    documents = [d for d in yaml.safe_load_all((GOLDEN / f"{case}.yaml").read_text()) if d]
    assert json.loads(as_json.stdout) == documents


def test_render_lists_every_problem_by_flag():
    out = invoke(
        "render", "aks-nap", "--name", "Net", "--cpu-limit", "0", "--family", "Dsv5", "--arch", "ppc64le",
        "--label", "karpenter.azure.com/sku-family=D", "--sysctl", "net.core.somaxconn=1", "--disruption-budget",
        "110%", "--profile", "no-such-profile",
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stdout == ""
    heading, *lines = out.stderr.splitlines()
    assert heading == f"error: auto-provisioned pool not rendered: {len(lines)} problem(s):"
    assert all(line.startswith("  ") for line in lines)
    assert [line.split(":", 1)[0].strip() for line in lines] == [
        "--profile",
        "--name",
        "--arch[0]",
        "--family[0]",
        "--label['karpenter.azure.com/sku-family']",
        "--sysctl['net.core.somaxconn']",
        "--cpu-limit",
        "--disruption-budget",
    ]


# --- what the NodePool admits --------------------------------------------------------------------------------------


def test_every_catalog_size_has_the_providers_labels():
    for size in catalog.instance_types(cloud="azure"):
        labels = karpenter_azure.sku_labels(size)
        # Standard_D16ds_v6 -> D, Dds_v6, 6: the family letter, skewer's series, the version without "v".
        assert labels.family == size.name.removeprefix("Standard_")[0]
        assert labels.series.endswith("_" + size.name.rsplit("_", 1)[1])
        assert labels.version == size.name.rsplit("_v", 1)[1]


@pytest.mark.parametrize(
    ("name", "labels"),
    [
        # The provider's own tests and docs: test/suites/scheduling (Ds_v3), labels.go (Dpls_v6), NCads_v4.
        ("Standard_D2s_v3", ("D", "Ds_v3", "3")),
        ("Standard_D4pls_v6", ("D", "Dpls_v6", "6")),
        ("Standard_D4_v5", ("D", "D_v5", "5")),
        ("Standard_NC24ads_A100_v4", ("N", "NCads_v4", "4")),
        ("Standard_F8s", ("F", "Fs", "1")),
        # skewer v0.0.24's vmsize_test.go (the version karpenter-provider-azure v1.14.2 builds with): n and o.
        ("Standard_D8ns_v6", ("D", "Dns_v6", "6")),
        ("Standard_L12aos_v4", ("L", "Laos_v4", "4")),
        ("Standard_D4fs_v6", ("D", "Dfs_v6", "6")),
        ("Standard_D16nlds_v6", ("D", "Dnlds_v6", "6")),
        ("Standard_L160iaos_v5", ("L", "Liaos_v5", "5")),
    ],
)
def test_size_names_parse_as_skewer_parses_them(name, labels):
    assert karpenter_azure.parse_size(name) == labels


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(AutoProvisionedPoolSpec(name="a", cpu_limit=640), id="defaults"),
        pytest.param(AutoProvisionedPoolSpec(name="a", cpu_limit=640, min_vcpu=16, max_vcpu=64), id="vcpu-bounds"),
        pytest.param(AutoProvisionedPoolSpec(name="a", cpu_limit=640, architectures=("arm64",)), id="arm64"),
        pytest.param(AutoProvisionedPoolSpec(name="a", cpu_limit=640, families=("Esv6",)), id="esv6"),
        pytest.param(AutoProvisionedPoolSpec(name="a", cpu_limit=640, families=("Dnsv6",)), id="named-preview"),
    ],
)
def test_requirements_admit_exactly_the_network_optimised_sizes_asked_for(spec):
    plan = plan_nap(spec)
    pool = node_pool(plan)
    requirements = [
        karpenter_azure.Requirement(r["key"], r["operator"], tuple(r["values"]))
        for r in pool["spec"]["template"]["spec"]["requirements"]
    ]
    arches = spec.architectures
    # The default: every network-optimised family that is not a preview series (Dnsv6... are launched only if named).
    optimised = catalog.instance_types(cloud="azure", network_optimised=True)
    families = spec.families or {t.family for t in optimised if not t.preview}
    expected = {
        t.name
        for t in catalog.instance_types(cloud="azure")
        if t.family in families
        and t.architecture in arches
        and (spec.min_vcpu is None or t.vcpu >= spec.min_vcpu)
        and (spec.max_vcpu is None or t.vcpu <= spec.max_vcpu)
    }
    assert {t.name for t, _ in karpenter_azure.admitted(requirements)} == expected
    assert {t.name for t in plan.admitted} == expected
    assert all(t.network_optimised and t.nic == "mana" for t in plan.admitted)
    keys = {r.key for r in requirements}
    assert {karpenter_azure.SKU_FAMILY, karpenter_azure.SKU_VERSION, karpenter_azure.SKU_SERIES} <= keys


def test_the_series_and_versions_come_from_the_catalog_not_a_list():
    plan = plan_nap(AutoProvisionedPoolSpec(name="a", cpu_limit=640))
    requirement = {r.key: r.values for r in plan.requirements}
    optimised = [
        t
        for t in catalog.instance_types(cloud="azure", network_optimised=True)
        if t.architecture == "x86_64" and not t.preview
    ]
    assert set(requirement[karpenter_azure.SKU_SERIES]) == {karpenter_azure.sku_labels(t).series for t in optimised}
    assert "Dns_v6" not in requirement[karpenter_azure.SKU_SERIES]  # a preview series only when named
    assert requirement[karpenter_azure.SKU_VERSION] == ("6",)
    # F: the Azure Boost compute-optimised families (Fasv6, Falsv6, Famsv6) are network-optimised sizes too.
    assert requirement[karpenter_azure.SKU_FAMILY] == ("D", "E", "F")
    assert "Eis_v6" in requirement[karpenter_azure.SKU_SERIES]  # Standard_E192is_v6, catalog family Esv6


# --- node ceiling --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "max_nodes", "surge", "smallest"),
    [
        # 640 vCPUs of 16-vCPU nodes at most: 40, + ceil(10% of 40) replacements.
        ({"cpu_limit": 640, "min_vcpu": 16}, 40, 4, 16),
        # Without a vCPU bound the smallest admitted v6 size has 2 vCPUs: 1,000 / 2 = 500 nodes.
        ({"cpu_limit": 1000}, 500, 50, 2),
        # A partial node does not count: 100 / 16 = 6.25 -> 6; a count budget above it is capped.
        ({"cpu_limit": 100, "min_vcpu": 16, "disruption_budget": "9"}, 6, 6, 16),
        ({"cpu_limit": 64, "min_vcpu": 16, "disruption_budget": "0%"}, 4, 0, 16),
    ],
)
def test_node_ceiling_is_the_cpu_limit_over_the_smallest_admitted_size(kwargs, max_nodes, surge, smallest):
    plan = plan_nap(AutoProvisionedPoolSpec(name="a", **kwargs))
    assert (plan.capacity.max_nodes, plan.capacity.surge_nodes, plan.capacity.smallest_vcpu) == (
        max_nodes,
        surge,
        smallest,
    )
    assert (plan.sizing_pool.max_count, plan.sizing_pool.surge_nodes) == (max_nodes, surge)
    assert min(t.vcpu for t in plan.admitted) == smallest
    assert f"= {max_nodes:,} node(s) at most" in plan.capacity.explain()


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        (
            {"cpu_limit": 8, "min_vcpu": 16},
            "8 is not allowed: at least 16 (the smallest admitted size, Standard_D16ads_v6): below it the pool can "
            "launch no node",
        ),
        (
            {"cpu_limit": 4000},
            "4000 is not allowed: at most 2,000 (1,000 nodes of the smallest admitted size, 2 vCPU): 2,000 nodes is "
            "more than wirespeed sizes per pool; lower limits.cpu or admit only larger sizes",
        ),
    ],
)
def test_a_ceiling_outbound_sizing_cannot_count_is_refused(kwargs, reason):
    _, problems = check_nap(AutoProvisionedPoolSpec(name="a", **kwargs))
    assert [(p.field, p.reason) for p in problems] == [("cpu_limit", reason)]


# --- sysctls and the CRDs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", CRD_VERSIONS)
def test_every_aks_sysctl_is_a_node_class_field_with_the_same_range(version):
    schema = served_schema(crd(version, "AKSNodeClass"), "v1beta1")
    sysctls = schema["properties"]["spec"]["properties"]["linuxOSConfig"]["properties"]["sysctls"]["properties"]
    for row in aks_sysctls.AKS_SYSCTLS:
        field = sysctls[row.node_class_field]
        assert (field["minimum"], field["maximum"]) == (row.low, row.high), row.kernel_name
    port_range = sysctls[aks_sysctls.node_class_field(aks_sysctls.PORT_RANGE_KERNEL_NAME)]
    assert port_range["type"] == "string"


@pytest.mark.parametrize("version", CRD_VERSIONS)
def test_the_nodepool_crd_lets_requirements_use_every_label_the_planner_writes(version):
    schema = served_schema(crd(version, "NodePool"), "v1")
    rules = json.dumps(schema)
    for key in (karpenter_azure.SKU_FAMILY, karpenter_azure.SKU_SERIES, karpenter_azure.SKU_VERSION,
                karpenter_azure.SKU_CPU, karpenter_azure.SKU_ACCELERATED_NETWORKING):  # fmt: skip
        assert f'\\"{key}\\"' in rules, key


def test_the_profile_sysctls_go_to_the_node_class_and_the_rest_to_the_agent():
    plan = plan_nap(
        AutoProvisionedPoolSpec(
            name="a",
            cpu_limit=64,
            extra_sysctls={"net.ipv4.tcp_fin_timeout": 15, "net.ipv4.ip_local_port_range": "1024 65000"},
        )
    )
    assert node_class(plan)["spec"]["linuxOSConfig"] == {
        "sysctls": {
            "netCoreNetdevMaxBacklog": THROUGHPUT_BACKLOG,
            "netIPv4IPLocalPortRange": "1024 65000",
            "netIPv4TCPFinTimeout": 15,
        }
    }
    assert plan.left_to_agent == ("rings.ena", "rings.mana", "rings.mlx4_en", "rings.mlx5_core")


def test_a_profile_sysctl_the_node_class_cannot_carry_is_left_to_the_agent():
    from wirespeed.profile import load_profile
    from wirespeed.profiles import builtin_profile

    document = builtin_profile("throughput").to_json_dict()
    document["name"] = "budget"
    document["sysctls"]["net.core.netdev_budget"] = 600
    profile = load_profile(json.dumps(document))
    plan = plan_nap(AutoProvisionedPoolSpec(name="a", cpu_limit=64, profile=profile))
    assert plan.left_to_agent[0] == "net.core.netdev_budget"
    assert "netdev_budget" not in json.dumps(node_class(plan))


# --- validation ----------------------------------------------------------------------------------------------------


def test_every_problem_is_listed_at_once():
    _, problems = check_nap(
        AutoProvisionedPoolSpec(
            name="-bad",
            cpu_limit=0,
            families=("Dsv5", "Zz9"),
            architectures=("x86_64", "x86_64"),
            min_vcpu=8,
            max_vcpu=4,
            capacity_types=("reserved",),
            disruption_budget="ten",
            image_family="Windows2022",
            max_pods=500,
            labels={"kubernetes.azure.com/mode": "user"},
            taints=("dedicated",),
            not_network_optimised_reason="  ",
        ),
        "auto_provisioned_pools[2]",
    )
    assert [p.field for p in problems] == [
        "auto_provisioned_pools[2].name",
        "auto_provisioned_pools[2].capacity_types[0]",
        "auto_provisioned_pools[2].image_family",
        "auto_provisioned_pools[2].max_pods",
        "auto_provisioned_pools[2].not_network_optimised_reason",
        "auto_provisioned_pools[2].architectures",
        "auto_provisioned_pools[2].families[1]",
        "auto_provisioned_pools[2].max_vcpu",
        "auto_provisioned_pools[2].labels['kubernetes.azure.com/mode']",
        "auto_provisioned_pools[2].taints[0]",
        "auto_provisioned_pools[2].cpu_limit",
        "auto_provisioned_pools[2].disruption_budget",
    ]


@pytest.mark.parametrize(
    ("families", "reason", "annotations"),
    [
        pytest.param(("Dsv6", "Dsv5"), REASON, {NOT_NETWORK_OPTIMISED_REASON: REASON}, id="dsv5"),
        pytest.param(("Dsv6",), "just in case", None, id="network-optimised-no-annotation"),
        pytest.param(("Dsv6",), None, None, id="no-reason"),
    ],
)
def test_the_node_pool_records_a_written_reason_only_when_a_family_needs_one(families, reason, annotations):
    plan = plan_nap(
        AutoProvisionedPoolSpec(name="a", cpu_limit=96, families=families, not_network_optimised_reason=reason)
    )
    assert node_pool(plan)["metadata"].get("annotations") == annotations


def test_a_family_that_is_not_network_optimised_needs_a_reason():
    _, problems = check_nap(AutoProvisionedPoolSpec(name="a", cpu_limit=96, families=("Dsv3",)))
    assert [str(p) for p in problems] == [
        "families[0]: 'Dsv3' is not allowed: not network-optimised (its NIC is not Azure Boost MANA); keep to "
        "network-optimised families, or set not_network_optimised_reason to why this pool may use it"
    ]


# --- the component and the cluster, under Pulumi's mocks -----------------------------------------------------------


def test_component_registers_node_class_then_pool_under_pulumi_mocks(engine):
    pool = AutoProvisionedPool("net", AutoProvisionedPoolArgs(name="net", cpu_limit=640, min_vcpu=16))
    assert resolve(pool.node_pool_name) == "net"
    component = engine.one(COMPONENT)
    nodeclass = engine.one(NODE_CLASS)
    nodepool = engine.one(NODE_POOL)
    assert (nodeclass.name, nodeclass.parent, nodepool.name, nodepool.parent) == (
        "net-aks-node-class",
        component.urn,
        "net-node-pool",
        component.urn,
    )
    assert nodepool.dependencies == [nodeclass.urn]
    plan = plan_nap(AutoProvisionedPoolSpec(name="net", cpu_limit=640, min_vcpu=16))
    assert [nodeclass.inputs, nodepool.inputs] == nap_objects(plan)
    assert engine.outputs[component.urn] == {
        "node_pool_name": "net",
        "profile": "throughput",
        "max_nodes": 40,
        "nodes_at_max": 44,
        "linux_os_config_sysctls": {"netCoreNetdevMaxBacklog": THROUGHPUT_BACKLOG},
        "left_to_agent": ["rings.ena", "rings.mana", "rings.mlx4_en", "rings.mlx5_core"],
    }


def test_bad_args_raise_one_error_and_register_nothing_under_pulumi_mocks(engine):
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        AutoProvisionedPool("x", AutoProvisionedPoolArgs(name="X", cpu_limit=0, families=("Dsv3",)))
    assert [e["property_path"] for e in caught.value.errors] == ["name", "families[0]", "cpu_limit"]
    assert str(caught.value).startswith("AutoProvisionedPool: 3 invalid input(s):\n  name: 'X' is not allowed")
    assert engine.registered == []


def nap_cluster(**kwargs) -> NetworkOptimizedClusterArgs:
    fixed = NodePoolSpec(name="system", vm_size="Standard_D4s_v6", min_count=3, max_count=3, max_surge="1")
    args = {
        "resource_group_name": "rg",
        "location": "westeurope",
        "system_pool": fixed,
        "outbound": OutboundSpec(allocated_outbound_ports=4000),
        "auto_provisioned_pools": [AutoProvisionedPoolSpec(name="net", cpu_limit=640, min_vcpu=16)],
    }
    return NetworkOptimizedClusterArgs(**(args | kwargs))


def test_cluster_counts_nap_capacity_in_outbound_and_turns_nap_on_under_pulumi_mocks():
    rec = run_under_mocks(lambda: NetworkOptimizedCluster("shop", nap_cluster()), resolve=lambda c: {"o": c.outbound})
    aks = rec.one("azure-native:containerservice:ManagedCluster").inputs
    assert aks["nodeProvisioningProfile"] == {"mode": "Auto", "defaultNodePools": "None"}
    # system 3 + 1 surge, NAP 640 / 16 = 40 + 10% = 4: 48 nodes x 4,000 ports = 192,000 -> 3 IPs of 64,000.
    lb = aks["networkProfile"]["loadBalancerProfile"]
    assert (lb["allocatedOutboundPorts"], lb["managedOutboundIPs"]["count"]) == (4000, 3)
    assert rec.resolved["o"]["load_balancer"]["nodes_at_max"] == 48
    nodepool = rec.one(NODE_POOL)
    provider = rec.one("pulumi:providers:kubernetes")
    assert nodepool.provider.startswith(provider.urn)
    assert rec.parent_of(COMPONENT, "shop-net") == rec.urn("wirespeed:index:NetworkOptimizedCluster", "shop")
    selectors = [
        d.inputs["spec"]["template"]["spec"]["nodeSelector"] for d in rec.of_type("kubernetes:apps/v1:DaemonSet")
    ]
    assert selectors == [{"kubernetes.io/os": "linux", "wirespeed.io/profile": "throughput"}]


def test_nap_beside_the_cluster_autoscaler_is_refused_before_anything_registers_under_pulumi_mocks():
    autoscaled = NodePoolSpec(name="apps", vm_size="Standard_D16s_v6", min_count=3, max_count=30)
    args = nap_cluster(
        pools=[autoscaled],
        auto_provisioned_pools=[
            AutoProvisionedPoolSpec(name="net", cpu_limit=640, min_vcpu=16),
            AutoProvisionedPoolSpec(name="net", cpu_limit=64, profile="balanced"),
        ],
    )
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        run_under_mocks(lambda: NetworkOptimizedCluster("shop", args), mocks=(mocks := _mocks()))
    assert [(e["property_path"], e["reason"]) for e in caught.value.errors] == [
        (
            "auto_provisioned_pools[1].name",
            "'net' is not allowed: auto_provisioned_pools[0].name already uses that pool name",
        ),
        (
            "pools[0].min_count",
            "3 is not allowed with auto_provisioned_pools: equal to max_count (30); AKS cannot enable node "
            "auto-provisioning on a cluster whose pools run the cluster autoscaler, so keep agent pools fixed-size "
            "and let NAP scale",
        ),
    ]
    assert mocks.registrations == []


def test_cluster_without_nap_pools_leaves_node_provisioning_alone_under_pulumi_mocks():
    rec = run_under_mocks(lambda: NetworkOptimizedCluster("shop", nap_cluster(auto_provisioned_pools=[])))
    assert "nodeProvisioningProfile" not in rec.one("azure-native:containerservice:ManagedCluster").inputs
    assert rec.of_type(NODE_POOL) == []


def _mocks():
    from pulumi_mocks import AzureMocks

    return AzureMocks()


def test_outbound_profile_counts_nap_pools_for_teams_that_own_their_cluster():
    from wirespeed.azure import outbound_profile

    system = NodePoolSpec(name="system", vm_size="Standard_D4s_v6", min_count=3, max_count=3, max_surge="1")
    nap = AutoProvisionedPoolSpec(name="net", cpu_limit=640, min_vcpu=16)
    # 4 + 44 nodes x 4,000 ports = 192,000: 3 IPs; without the NAP pool 4 nodes fit one.
    with_nap = outbound_profile([system], OutboundSpec(allocated_outbound_ports=4000), [nap])
    without = outbound_profile([system], OutboundSpec(allocated_outbound_ports=4000))
    assert (with_nap.managed_outbound_ips.count, without.managed_outbound_ips.count) == (3, 1)
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        outbound_profile(
            [system], OutboundSpec(allocated_outbound_ports=4000), [AutoProvisionedPoolSpec(name="n", cpu_limit=0)]
        )
    assert [e["property_path"] for e in caught.value.errors] == ["auto_provisioned_pools[0].cpu_limit"]

"""How the node auto-provisioning rules read a NodePool, in process: requirements, names, disruption budgets, node
ceilings, the cluster a NodePool belongs to, and the exact sizes and CPU floor a network-optimised-sku finding
names. Props are plain documents, as ``wirespeed check`` hands them over (tests/rules/test_rules_nap.py runs the same
rules through the policy engine's proxy)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from wirespeed import catalog
from wirespeed.rules import _nap
from wirespeed.rules._model import Resource
from wirespeed.sizing.nap import NapCapacity
from wirespeed.values import UNKNOWN, NotKnown

SERIES = "karpenter.azure.com/sku-series"
CPU = "karpenter.azure.com/sku-cpu"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"


def pool(*requirements, **spec):
    return {"spec": {"template": {"spec": {"requirements": list(requirements)}}, **spec}}


def sizes(*names):
    return [catalog.lookup(name) for name in names]


def test_requirements_keep_only_well_formed_ones():
    found = _nap.requirements(
        pool(
            {"key": SERIES, "operator": "In", "values": ["Dds_v6", 3]},
            {"key": SERIES, "operator": "Bogus", "values": ["Dds_v6"]},
            {"key": "", "operator": "In", "values": ["x"]},
            {"key": CPU, "operator": "Gt", "values": ["4"]},
        )
    )
    assert [(r.key, r.operator, r.values) for r in found] == [(SERIES, "In", ("Dds_v6",)), (CPU, "Gt", ("4",))]


@pytest.mark.parametrize(
    ("props", "path"),
    [
        pytest.param(pool(UNKNOWN), "spec.template.spec.requirements.0", id="requirement"),
        pytest.param(pool({"key": SERIES, "operator": "In", "values": [UNKNOWN]}), "values.0", id="value"),
    ],
)
def test_an_unknown_requirement_names_where_it_is(props, path):
    with pytest.raises(NotKnown) as info:
        _nap.requirements(props)
    assert info.value.path == path


def test_a_kubernetes_azure_key_makes_a_node_pool_azures():
    assert _nap.is_azure_node_pool(pool({"key": "kubernetes.azure.com/agentpool", "operator": "Exists"}))
    assert not _nap.is_azure_node_pool(pool({"key": "karpenter.k8s.aws/instance-family", "operator": "Exists"}))


def test_node_pool_name_is_its_metadata_name_else_the_resource_name():
    named = Resource(NODE_POOL, "res", "urn:res", {"metadata": {"name": "web"}})
    assert _nap.node_pool_name(named) == "web"
    assert _nap.node_pool_name(Resource(NODE_POOL, "res", "urn:res", {})) == "res"


def test_by_series_lists_two_sizes_then_an_ellipsis():
    one = sizes("Standard_D2ds_v5")
    two = sizes("Standard_D2ds_v5", "Standard_D4ds_v5")
    three = sizes("Standard_D2ds_v5", "Standard_D4ds_v5", "Standard_D8ds_v5", "Standard_D2s_v5")
    assert _nap._by_series(one) == "Dds_v5 (Ddsv5: Standard_D2ds_v5)"
    assert _nap._by_series(two) == "Dds_v5 (Ddsv5: Standard_D2ds_v5, Standard_D4ds_v5)"
    assert _nap._by_series(three) == (
        "Dds_v5 (Ddsv5: Standard_D2ds_v5, Standard_D4ds_v5, ...), Ds_v5 (Dsv5: Standard_D2s_v5)"
    )


def test_cpu_floor_is_the_smallest_size_above_every_slow_one():
    # 16 vCPU sustains 12.5 Gb/s, 32 vCPU exactly the 16 asked for, 48 vCPU 24: the floor is 32 (a size meeting the
    # minimum exactly meets it).
    admitted = sizes("Standard_D16ds_v6", "Standard_D32ds_v6", "Standard_D48ds_v6")
    assert _nap._cpu_floor(admitted, 16) == 32
    assert _nap._cpu_floor(admitted, 100) is None
    # Nothing slow: the smallest admitted size, even a 1-vCPU one.
    tiny = dataclasses.replace(catalog.lookup("Standard_D2ds_v6"), vcpu=1)
    assert _nap._cpu_floor([tiny, *admitted], 12.5) == 1


@pytest.mark.parametrize(
    ("above", "listed"),
    [
        # Dds_v6 above 2 vCPU: 4, 8 and 16 vCPU sustain 12.5 Gb/s, 32 vCPU exactly 16 (not below it).
        pytest.param(
            "2", "Standard_D4ds_v6 (12.5 Gb/s), Standard_D8ds_v6 (12.5 Gb/s), Standard_D16ds_v6 (12.5 Gb/s)", id="3"
        ),
        pytest.param(
            "1",
            "Standard_D2ds_v6 (12.5 Gb/s), Standard_D4ds_v6 (12.5 Gb/s), Standard_D8ds_v6 (12.5 Gb/s), ...",
            id="4",
        ),
        pytest.param("4", "Standard_D8ds_v6 (12.5 Gb/s), Standard_D16ds_v6 (12.5 Gb/s)", id="2"),
    ],
)
def test_thin_sizes_finding_lists_three_then_an_ellipsis(above, listed):
    props = pool(
        {"key": SERIES, "operator": "In", "values": ["Dds_v6"]}, {"key": CPU, "operator": "Gt", "values": [above]}
    )
    [finding] = _nap.node_pool_findings(Resource(NODE_POOL, "p", "urn:p", props), 16)
    assert finding.message == (
        f"requirements admit {listed}, below the minimum 16 Gb/s (policy setting minimumBandwidthGbps). "
        "Add {key: karpenter.azure.com/sku-cpu, operator: Gt, values: ['31']} "
        "(`wirespeed catalog list --cloud azure --network-optimised --min-gbps 16`)."
    )


def test_disruption_budget_is_the_one_letting_most_nodes_go():
    # Of at most 1,000 nodes, 10% is 100 > 5; an entry without nodes or with a value the CRD refuses is skipped.
    budgets = [{"nodes": "5"}, {"nodes": "10%"}, {}, {"nodes": "bad"}]
    assert _nap.disruption_budget({"spec": {"disruption": {"budgets": budgets}}}) == "10%"
    assert _nap.disruption_budget({}) == "10%"
    assert _nap.disruption_budget({"spec": {"disruption": {"budgets": [{"nodes": "3"}, {"nodes": "20"}]}}}) == "20"
    with pytest.raises(NotKnown) as info:
        _nap.disruption_budget({"spec": {"disruption": {"budgets": [UNKNOWN]}}})
    assert info.value.path == "spec.disruption.budgets.0"


def test_ceiling_counts_the_smallest_admitted_sizes():
    props = {"spec": {"limits": {"cpu": "64"}, "disruption": {"budgets": [{"nodes": "2"}]}}}
    found = _nap.ceiling("web", props, sizes("Standard_D4ds_v6", "Standard_D2ds_v6", "Standard_D2ads_v6"))
    assert found == (NapCapacity("web", Fraction(64), 2, ("Standard_D2ds_v6", "Standard_D2ads_v6"), budget="2"), None)


def test_ancestors_stop_at_the_root_and_at_a_cycle():
    assert _nap.ancestors("a", {"a": "b", "b": "c", "c": None}) == ["b", "c"]
    assert _nap.ancestors("a", {"a": "b", "b": "a"}) == ["b", "a"]


def test_the_only_cluster_owns_a_node_pool_without_ancestors():
    assert _nap.owning_cluster("urn:pool", [("aks", "urn:cluster")], {}) == "aks"
    assert _nap.owning_cluster("urn:pool", [("one", "urn:c1"), ("two", "urn:c2")], {}) is None

"""network-optimised-sku's reading of sizes and Karpenter requirements, in process and edge by edge: which
requirements count, what a NotIn does, the exact message for each kind of size problem, and what an unknown value
names. tests/rules/test_rules_sku.py runs the whole rule through the policy engine."""

from __future__ import annotations

import pytest

from wirespeed.rules import network_optimised_sku as sku
from wirespeed.rules._model import Resource
from wirespeed.rules._node_pools import NODE_GROUP
from wirespeed.values import UNKNOWN, NotKnown

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
BANDWIDTH_25 = {"key": sku.BANDWIDTH_LABEL, "operator": "Gt", "values": ["24999"]}
OPEN = (
    "requirements do not limit karpenter.k8s.aws/instance-family or node.kubernetes.io/instance-type, so Karpenter "
    "may launch any instance type, network-optimised or not. Add {key: karpenter.k8s.aws/instance-family, operator: "
    "In, values: [c5n, c6gn, c6in, c7gn, ...]} (`wirespeed catalog list --cloud aws --network-optimised`)."
)
AZURE_CMD = "`wirespeed catalog list --cloud azure --network-optimised --min-gbps 25` lists them."
AZURE_WHY = "its NIC is not Azure Boost (MANA), so it may land on older Mellanox hosts with smaller rings and MTU"
AWS_WHY = (
    "it is not in a network-optimised family (the 'n' types), so its bandwidth allowance is exceeded first under load"
)


def node_pool(*requirements):
    return Resource(NODE_POOL, "p", "urn:p", {"spec": {"template": {"spec": {"requirements": list(requirements)}}}})


def messages(resource, minimum=25.0):
    return [f.message for f in sku._node_pool(resource, minimum)]


def test_only_requirements_with_a_key_and_an_operator_count():
    pool = node_pool({"key": "a"}, {"operator": "In"}, {"key": "b", "operator": "In", "values": ["x", 1]})
    assert sku._all_requirements(pool.props) == [("b", "In", ["x"])]


@pytest.mark.parametrize(
    ("requirement", "path"),
    [
        pytest.param(UNKNOWN, "spec.template.spec.requirements.0", id="requirement"),
        pytest.param({"key": sku.FAMILY_LABEL, "operator": "In", "values": [UNKNOWN]}, "values.0", id="value"),
    ],
)
def test_an_unknown_requirement_names_where_it_is(requirement, path):
    with pytest.raises(NotKnown) as info:
        sku._all_requirements(node_pool(requirement).props)
    assert info.value.path == path


def test_an_unknown_node_group_instance_type_names_where_it_is():
    group = Resource(NODE_GROUP, "g", "urn:g", {"instanceTypes": [UNKNOWN]})
    with pytest.raises(NotKnown) as info:
        list(sku._node_group(group, 10))
    assert info.value.path == "instanceTypes.0"


def test_a_gte_bandwidth_floor_is_the_value_itself_and_gt_one_above():
    gte = node_pool({"key": sku.BANDWIDTH_LABEL, "operator": "Gte", "values": ["10000"]})
    gt = node_pool({"key": sku.BANDWIDTH_LABEL, "operator": "Gt", "values": ["9999"]})
    assert sku._bandwidth_floor_gbps(gte.props) == 10.0
    assert sku._bandwidth_floor_gbps(gt.props) == 10.0


def test_a_notin_family_limits_nothing():
    assert messages(node_pool({"key": sku.FAMILY_LABEL, "operator": "NotIn", "values": ["m5"]}, BANDWIDTH_25)) == [OPEN]


def test_a_notin_instance_type_leaves_the_family_requirement_in_charge():
    pool = node_pool(
        {"key": sku.INSTANCE_TYPE_LABEL, "operator": "NotIn", "values": ["m5.large"]},
        {"key": sku.FAMILY_LABEL, "operator": "In", "values": ["c6in"]},
        BANDWIDTH_25,
    )
    assert messages(pool) == []


def test_slow_families_are_listed_and_families_aws_does_not_know_are_not_judged():
    # c7i, t3 and m7i are in the AWS catalog without being network-optimised (t3 since issue 25); Dsv5 is an Azure
    # family, which an EC2 NodePool cannot launch, and z9q a family no catalog holds: neither is named.
    pool = node_pool(
        {"key": sku.FAMILY_LABEL, "operator": "In", "values": ["c6in", "c7i", "Dsv5", "t3", "z9q", "m7i"]},
        BANDWIDTH_25,
    )
    assert messages(pool) == [
        "requirement karpenter.k8s.aws/instance-family allows c7i, t3, m7i, not network-optimised: its bandwidth "
        "allowance is exceeded first under load. Keep only network-optimised families (c5n, c6gn, c6in, c7gn, ...)."
    ]


def test_a_size_with_no_network_optimised_alternative_gets_no_example():
    assert sku._size_problem("Standard_D2s_v5", 1000) == (
        f"Standard_D2s_v5 (Dsv5) is not a network-optimised size: {AZURE_WHY}. It also sustains only 12.5 Gb/s, below "
        "the minimum 1000 Gb/s (policy setting minimumBandwidthGbps). Choose a network-optimised size; "
        "`wirespeed catalog list --cloud azure --network-optimised --min-gbps 1000` lists them."
    )


def test_the_alternative_meets_the_minimum():
    # The smallest network-optimised sizes sustaining 25 Gb/s have 48 vCPU (32-vCPU v6 sizes reach 20 Gb/s); of those,
    # Daldsv6's 96 GiB is the nearest memory to an 8 GiB D2s_v5 (Dadsv6 has 192).
    assert sku._size_problem("Standard_D2s_v5", 25) == (
        f"Standard_D2s_v5 (Dsv5) is not a network-optimised size: {AZURE_WHY}. It also sustains only 12.5 Gb/s, below "
        "the minimum 25 Gb/s (policy setting minimumBandwidthGbps). Choose a network-optimised size, e.g. "
        f"Standard_D48alds_v6 (Daldsv6, 48 vCPU, 28 Gb/s); {AZURE_CMD}"
    )


def test_a_size_sustaining_exactly_the_minimum_passes_and_one_below_says_so_without_a_burst():
    assert sku._size_problem("Standard_D32ds_v6", 16) is None
    assert sku._size_problem("Standard_D2ds_v6", 25) == (
        "Standard_D2ds_v6 sustains 12.5 Gb/s, below the minimum 25 Gb/s (policy setting minimumBandwidthGbps). "
        f"Choose a larger size, e.g. Standard_D48alds_v6 (Daldsv6, 48 vCPU, 28 Gb/s); {AZURE_CMD}"
    )


def test_an_aws_type_the_catalog_lacks_is_judged_by_the_family_before_the_first_dot():
    assert sku._size_problem("m5zz.large.x", 10) == (
        f"m5zz.large.x (m5zz) is not a network-optimised size: {AWS_WHY}. Choose a network-optimised size; "
        "`wirespeed catalog list --cloud aws --network-optimised --min-gbps 10` lists them."
    )

# ruff: noqa: F811  (the `engine` fixture is imported from tests/pulumi_engine.py and taken as a parameter)
"""``wirespeed.aws.KarpenterNodePool``: the pure manifests (golden YAML, validated against the plan's catalog
selection) and the component under Pulumi's mocks (tests/pulumi_engine.py).

Regenerate the golden files after an intended change: UPDATE_GOLDEN=1 .venv/bin/pytest
tests/components/test_aws_karpenter.py
"""

from __future__ import annotations

import email
import os

import pulumi
import pytest

from conftest import ROOT
from pulumi_engine import engine, resolve  # noqa: F401 (engine: the pytest fixture)
from wirespeed import catalog
from wirespeed.aws import KarpenterNodePool, KarpenterNodePoolArgs, Taint
from wirespeed.aws.karpenter import node_class, node_pool, plan_karpenter
from wirespeed.manifests import to_yaml
from wirespeed.profiles import builtin_profile
from wirespeed.userdata import render_al2023_user_data, render_script

GOLDEN = ROOT / "tests" / "golden" / "karpenter"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
COMPONENT = "wirespeed:index:KarpenterNodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"

CASES = {
    "throughput-x86": {"name": "network"},
    "balanced-graviton-spot": {
        "name": "graviton",
        "profile": "balanced",
        "architecture": "arm64",
        "instance_families": ["c7gn", "c6gn"],
        "min_network_bandwidth_gbps": 0,
        "max_network_bandwidth_gbps": 25,
        "capacity_types": ["spot", "on-demand"],
        "taints": [Taint("dedicated", "NO_SCHEDULE", "ingest")],
    },
}


@pytest.mark.parametrize("case", CASES)
def test_golden_manifests(case):
    plan, problems = plan_karpenter(**CASES[case])
    assert problems == []
    nodeclass = node_class(plan, role="KarpenterNodeRole-prod", cluster_name="prod")
    # The user data has its own golden renders (tests/golden/userdata): keep this file readable.
    assert nodeclass["spec"]["userData"] == render_al2023_user_data(plan.profile)
    nodeclass["spec"]["userData"] = f"<render_al2023_user_data(profile {plan.profile.name!r})>"
    text = to_yaml([nodeclass, node_pool(plan)])
    golden = GOLDEN / f"{case}.yaml"
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"{golden.name} is stale: UPDATE_GOLDEN=1 pytest {__file__}"


def test_bandwidth_requirement_admits_exactly_the_selected_catalog_types():
    plan, _ = plan_karpenter(name="n", min_network_bandwidth_gbps=50)
    assert plan is not None
    pool = node_pool(plan)
    requirement = {r["key"]: r for r in pool["spec"]["template"]["spec"]["requirements"]}
    gt = int(requirement["karpenter.k8s.aws/instance-network-bandwidth"]["values"][0])
    families = set(requirement["karpenter.k8s.aws/instance-family"]["values"])

    admitted = {
        t.name
        for t in catalog.instance_types(cloud="aws")
        if t.family in families and t.architecture == "x86_64" and round(t.baseline_gbps * 1000) > gt
    }
    assert admitted == {t.name for t in plan.selected}
    assert all(t.network_optimised and t.baseline_gbps >= 50 for t in plan.selected)


def test_component_registers_node_class_then_pool_under_pulumi_mocks(engine):
    pool = KarpenterNodePool("network", KarpenterNodePoolArgs(cluster_name="prod", node_role="KarpenterNodeRole-prod"))
    assert resolve(pool.node_pool_name) == "network"
    component = engine.one(COMPONENT)
    nodeclass = engine.one(NODE_CLASS)
    nodepool = engine.one(NODE_POOL)
    assert (nodeclass.name, nodeclass.parent, nodepool.name, nodepool.parent) == (
        "network-ec2-node-class",
        component.urn,
        "network-node-pool",
        component.urn,
    )
    assert nodepool.dependencies == [nodeclass.urn]
    plan, _ = plan_karpenter(name="network")
    assert nodeclass.inputs == node_class(plan, role="KarpenterNodeRole-prod", cluster_name="prod")
    assert nodepool.inputs == node_pool(plan)
    spec = nodeclass.inputs["spec"]
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@latest"}]
    assert spec["metadataOptions"]["httpTokens"] == "required"
    message = email.message_from_string(spec["userData"])
    parts = [p.get_content_type() for p in message.get_payload()]
    assert parts == ["application/node.eks.aws", "text/x-shellscript"]
    assert message.get_payload()[1].get_payload(decode=True).decode() == render_script(builtin_profile("throughput"))
    assert engine.outputs[component.urn] == {"node_pool_name": "network", "profile": "throughput"}


def test_every_problem_is_listed_and_nothing_registers_under_pulumi_mocks(engine):
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        KarpenterNodePool(
            "Bad_Name",
            KarpenterNodePoolArgs(
                cluster_name="",
                node_role="role",
                instance_families=["c6in", "m7i", "zz9"],
                min_network_bandwidth_gbps=10,
                capacity_types=["reserved"],
            ),
        )
    assert str(caught.value) == (
        "invalid KarpenterNodePoolArgs:\n"
        "  name: 'Bad_Name' is not allowed; allowed: an RFC 1123 label: lowercase letters, digits and '-', "
        "1-63 characters\n"
        "  instance_families[1]: 'm7i' is not allowed; allowed: a network-optimised family, or give "
        "not_network_optimised_reason\n"
        "  instance_families[2]: 'zz9' is not allowed; allowed: an AWS family in the catalog, e.g. c6in\n"
        "  capacity_types[0]: 'reserved' is not allowed; allowed: on-demand or spot\n"
        "  min_network_bandwidth_gbps: 10 is not allowed; allowed: above 25 (one ring profile for the pool), or "
        "max_network_bandwidth_gbps at most 25: the range selects types of both ring classes\n"
        "  cluster_name: '' is not allowed; allowed: a non-empty string"
    )
    assert engine.registered == []


REASON = "wirespeed.io.not-network-optimised-reason"


@pytest.mark.parametrize(
    ("families", "reason", "annotations"),
    [
        pytest.param(
            ["c6in", "m6i"], "batch nodes, egress is light", {REASON: "batch nodes, egress is light"}, id="m6i"
        ),
        pytest.param(["c6in"], "just in case", None, id="network-optimised-families-no-annotation"),
        pytest.param(["c6in"], None, None, id="no-reason"),
    ],
)
def test_the_node_pool_records_a_written_reason_only_when_a_family_needs_one_under_pulumi_mocks(
    engine, families, reason, annotations
):
    args = KarpenterNodePoolArgs(
        cluster_name="prod",
        node_role="KarpenterNodeRole-prod",
        instance_families=families,
        min_network_bandwidth_gbps=30,
        not_network_optimised_reason=reason,
    )
    resolve(KarpenterNodePool("batch", args).node_pool_name)
    assert engine.one(NODE_POOL).inputs["metadata"].get("annotations") == annotations


# Issue 17: template labels Karpenter's v1 NodePool CRD refuses (tests/components/test_karpenter_labels.py reads its
# rules).
REFUSED_EKS = ["kubernetes.io/hostname", "karpenter.sh/nodepool", "karpenter.sh/zone", "karpenter.k8s.aws/foo"]


def test_eks_karpenter_pool_refuses_them_all_at_once_and_registers_nothing_under_pulumi_mocks(engine):
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        KarpenterNodePool(
            "network",
            KarpenterNodePoolArgs(
                cluster_name="shop",
                node_role="role",
                labels={**dict.fromkeys(REFUSED_EKS, "x"), "team.example.com/owner": "net"},
            ),
        )
    text = str(caught.value)
    for key in REFUSED_EKS:
        assert f"labels[{key!r}]: {key!r} is not allowed: Karpenter's NodePool CRD refuses it (" in text
    assert 'label domain "karpenter.k8s.aws" is restricted' in text
    assert "team.example.com" not in text
    assert engine.registered == []

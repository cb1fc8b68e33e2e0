"""network-optimised-sku on AKS pools, EKS node groups and launch templates, and Karpenter NodePools; every
figure comes from the catalog."""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE, UNKNOWN_STRING_VALUE

from fixtures.rules.engine import fixture, launch_template, validate

SKU = "network-optimised-sku"
AZURE_LIST = "`wirespeed catalog list --cloud azure --network-optimised --min-gbps 10` lists them."
AWS_LIST = "`wirespeed catalog list --cloud aws --network-optimised --min-gbps 10` lists them."
AZURE_WHY = "its NIC is not Azure Boost (MANA), so it may land on older Mellanox hosts with smaller rings and MTU."
AWS_WHY = (
    "it is not in a network-optimised family (the 'n' types), so its bandwidth allowance is exceeded first under load."
)


def slow(gbps: float, burst: float | None = None, minimum: int = 10) -> str:
    """The clause a not-network-optimised size below the minimum bandwidth also gets (Standard_DS2_v2: 1.5 Gb/s)."""
    bursting = f", bursting to {burst:g}" if burst else ""
    return (
        f"It also sustains only {gbps:g} Gb/s{bursting}, below the minimum {minimum} Gb/s (policy setting "
        "minimumBandwidthGbps). "
    )


def node_pool_requirements(*requirements):
    props = fixture("karpenter_node_pool")
    props["spec"]["template"]["spec"]["requirements"] = list(requirements)
    return props


FAMILIES = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c6in", "m6in"]}
BANDWIDTH = {"key": "karpenter.k8s.aws/instance-network-bandwidth", "operator": "Gt", "values": ["24999"]}


@pytest.mark.parametrize(
    ("kind", "props"),
    [
        pytest.param("cluster", fixture("aks_cluster"), id="aks-inline-pool"),
        pytest.param("pool", fixture("aks_agent_pool"), id="aks-pool"),
        pytest.param("node_group", fixture("eks_node_group"), id="eks-node-group"),
        pytest.param("launch_template", launch_template(), id="eks-launch-template"),
        pytest.param("node_pool", fixture("karpenter_node_pool"), id="karpenter"),
    ],
)
def test_compliant_pools_pass(kind, props):
    assert validate(SKU, kind, props) == []


def test_aks_inline_pool_on_an_old_size_suggests_the_v6_of_the_same_shape():
    props = fixture("aks_cluster")
    props["agentPoolProfiles"][0]["vmSize"] = "Standard_D4s_v3"
    assert validate(SKU, "cluster", props) == [
        f"agentPoolProfiles[0] (system): vmSize Standard_D4s_v3 (Dsv3) is not a network-optimised size: {AZURE_WHY} "
        f"{slow(2)}Choose a network-optimised size, e.g. Standard_D4s_v6 (Dsv6, 4 vCPU, 12.5 Gb/s); {AZURE_LIST}"
    ]


def test_aks_pool_name_is_in_the_message():
    props = fixture("aks_agent_pool")
    props["vmSize"] = "Standard_D16s_v5"
    assert validate(SKU, "pool", props, name="user") == [
        f"agent pool 'user': vmSize Standard_D16s_v5 (Dsv5) is not a network-optimised size: {AZURE_WHY} Choose a "
        f"network-optimised size, e.g. Standard_D16s_v6 (Dsv6, 16 vCPU, 12.5 Gb/s); {AZURE_LIST}"
    ]


@pytest.mark.parametrize(
    ("instance_type", "expected"),
    [
        pytest.param(
            "m7i.4xlarge",
            f"instanceTypes: m7i.4xlarge (m7i) is not a network-optimised size: {AWS_WHY} {slow(6.25, 12.5)}Choose a "
            f"network-optimised size, e.g. m6idn.4xlarge (m6idn, 16 vCPU, 25 Gb/s); {AWS_LIST}",
            id="not-network-optimised",
        ),
        pytest.param(
            "c6in.large",
            "instanceTypes: c6in.large sustains 3.125 Gb/s, bursting to 25, below the minimum 10 Gb/s (policy setting "
            f"minimumBandwidthGbps). Choose a larger size, e.g. c6in.2xlarge (c6in, 8 vCPU, 12.5 Gb/s); {AWS_LIST}",
            id="below-minimum-bandwidth",
        ),
        pytest.param(
            "t3.medium",
            f"instanceTypes: t3.medium (t3) is not a network-optimised size: {AWS_WHY} {slow(0.256, 5)}Choose a "
            f"network-optimised size, e.g. c6in.2xlarge (c6in, 8 vCPU, 12.5 Gb/s); {AWS_LIST}",
            id="burstable-t3-in-the-catalog",
        ),
        pytest.param(
            "z9q.large",
            f"instanceTypes: z9q.large (z9q) is not a network-optimised size: {AWS_WHY} Choose a network-optimised "
            f"size; {AWS_LIST}",
            id="not-in-the-catalog-judged-by-family",
        ),
    ],
)
def test_eks_node_group_instance_type(instance_type, expected):
    props = fixture("eks_node_group")
    props["instanceTypes"] = [instance_type]
    assert validate(SKU, "node_group", props) == [expected]


def test_eks_node_group_without_types_or_template_gets_the_eks_default():
    props = fixture("eks_node_group")
    del props["instanceTypes"]
    del props["launchTemplate"]
    assert validate(SKU, "node_group", props) == [
        f"instanceTypes is unset, so EKS uses t3.medium: t3.medium (t3) is not a network-optimised size: {AWS_WHY} "
        f"{slow(0.256, 5)}Choose a network-optimised size, e.g. c6in.2xlarge (c6in, 8 vCPU, 12.5 Gb/s); {AWS_LIST}"
    ]


def test_eks_node_group_without_types_defers_to_its_launch_template():
    props = fixture("eks_node_group")
    del props["instanceTypes"]
    assert validate(SKU, "node_group", props) == []


def test_eks_launch_template_instance_type():
    assert validate(SKU, "launch_template", launch_template(instance_type="m5.2xlarge")) == [
        f"instanceType: m5.2xlarge (m5) is not a network-optimised size: {AWS_WHY} {slow(2.5, 10)}Choose a "
        f"network-optimised size, e.g. m6idn.2xlarge (m6idn, 8 vCPU, 12.5 Gb/s); {AWS_LIST}"
    ]


def test_launch_templates_that_do_not_boot_eks_nodes_are_not_checked():
    assert validate(SKU, "launch_template", launch_template("#!/bin/sh\n", instance_type="t3.micro")) == []


@pytest.mark.parametrize(
    ("requirements", "expected"),
    [
        pytest.param(
            [BANDWIDTH],
            [
                "requirements do not limit karpenter.k8s.aws/instance-family or node.kubernetes.io/instance-type, so "
                "Karpenter may launch any instance type, network-optimised or not. Add {key: "
                "karpenter.k8s.aws/instance-family, operator: In, values: [c5n, c6gn, c6in, c7gn, ...]} (`wirespeed "
                "catalog list --cloud aws --network-optimised`)."
            ],
            id="no-family",
        ),
        pytest.param(
            [{**FAMILIES, "values": ["c6in", "m7i"]}, BANDWIDTH],
            [
                "requirement karpenter.k8s.aws/instance-family allows m7i, not network-optimised: its bandwidth "
                "allowance is exceeded first under load. Keep only network-optimised families (c5n, c6gn, c6in, c7gn, "
                "...)."
            ],
            id="one-slow-family",
        ),
        pytest.param(
            [FAMILIES],
            [
                "requirement karpenter.k8s.aws/instance-network-bandwidth is not set, so Karpenter may pick sizes "
                "sustaining less than the minimum 10 Gb/s (policy setting minimumBandwidthGbps). Add {key: "
                "karpenter.k8s.aws/instance-network-bandwidth, operator: Gt, values: ['9999']} (Mb/s)."
            ],
            id="no-bandwidth-floor",
        ),
        pytest.param(
            [FAMILIES, {**BANDWIDTH, "values": ["4999"]}],
            [
                "requirement karpenter.k8s.aws/instance-network-bandwidth is 5 Gb/s, so Karpenter may pick sizes "
                "sustaining less than the minimum 10 Gb/s (policy setting minimumBandwidthGbps). Add {key: "
                "karpenter.k8s.aws/instance-network-bandwidth, operator: Gt, values: ['9999']} (Mb/s)."
            ],
            id="low-bandwidth-floor",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c6in.8xlarge", "m7i.8xlarge"]}],
            [
                f"requirement node.kubernetes.io/instance-type: m7i.8xlarge (m7i) is not a network-optimised size: "
                f"{AWS_WHY} Choose a network-optimised size, e.g. m6idn.8xlarge (m6idn, 32 vCPU, 50 Gb/s); {AWS_LIST}"
            ],
            id="explicit-types",
        ),
    ],
)
def test_karpenter_node_pool_requirements(requirements, expected):
    assert validate(SKU, "node_pool", node_pool_requirements(*requirements)) == expected


def test_karpenter_bandwidth_floor_gte_counts_its_own_value():
    assert (
        validate(
            SKU, "node_pool", node_pool_requirements(FAMILIES, {**BANDWIDTH, "operator": "Gte", "values": ["10000"]})
        )
        == []
    )


def test_karpenter_bandwidth_range_keeps_its_floor_beside_an_upper_bound():
    """Gt and Lt on the same key bound a range (Karpenter ANDs them): the Lt after the Gt must not hide the floor.
    KarpenterNodePool renders both when max_network_bandwidth_gbps is set."""
    ceiling = {**BANDWIDTH, "operator": "Lt", "values": ["100001"]}
    assert validate(SKU, "node_pool", node_pool_requirements(FAMILIES, BANDWIDTH, ceiling)) == []
    assert validate(SKU, "node_pool", node_pool_requirements(FAMILIES, ceiling, BANDWIDTH)) == []
    (only_ceiling,) = validate(SKU, "node_pool", node_pool_requirements(FAMILIES, ceiling))
    assert "instance-network-bandwidth is not set" in only_ceiling


@pytest.mark.parametrize(
    ("config", "violations"),
    [
        pytest.param({"minimumBandwidthGbps": 3}, 0, id="lower-minimum-allows-c6in.large"),
        pytest.param({"minimumBandwidthGbps": 60}, 1, id="raised-minimum-refuses-c6in.8xlarge"),
    ],
)
def test_minimum_bandwidth_reads_its_config(config, violations):
    props = fixture("eks_node_group")
    props["instanceTypes"] = ["c6in.large" if violations == 0 else "c6in.8xlarge"]
    assert len(validate(SKU, "node_group", props, config)) == violations


@pytest.mark.parametrize(
    ("kind", "props"),
    [
        pytest.param("pool", {**fixture("aks_agent_pool"), "vmSize": UNKNOWN_STRING_VALUE}, id="aks-size"),
        pytest.param("node_group", {**fixture("eks_node_group"), "instanceTypes": UNKNOWN_ARRAY_VALUE}, id="eks-types"),
    ],
)
def test_unknown_sizes_during_preview_are_not_applicable(kind, props):
    assert validate(SKU, kind, props) == []


def test_a_size_the_catalog_lacks_is_a_finding_never_silence():
    # Issue 25: Azure sizes missing from the catalog were "not judged" and nothing said so.
    props = fixture("aks_agent_pool")
    props["vmSize"] = "Standard_NV36ads_A10_v5"
    [message] = validate(SKU, "pool", props)
    assert message.startswith(
        "agent pool 'subject': vmSize Standard_NV36ads_A10_v5 is not in wirespeed's catalog: cannot tell its bandwidth "
        "or NIC"
    )
    assert message.endswith("or record why this one is acceptable.")


def test_a_size_whose_bandwidth_is_only_a_lower_bound_is_judged_undocumented_and_says_why():
    # Lsv2's Network tab gives L48s_v2 "16,000+": a floor, so the catalog leaves the size out rather than store it.
    props = fixture("aks_agent_pool")
    props["vmSize"] = "Standard_L48s_v2"
    [message] = validate(SKU, "pool", props)
    assert "Standard_L48s_v2 is not in wirespeed's catalog: cannot tell its bandwidth or NIC (its series" in message
    assert "Lsv2: the Network tab gives its bandwidth as '16,000+', a lower bound" in message


def test_a_size_the_catalog_lacks_is_accepted_with_a_written_reason():
    props = fixture("aks_agent_pool")
    props["vmSize"] = "Standard_NV36ads_A10_v5"
    props["tags"] = {"wirespeed.io.not-network-optimised-reason": "GPU inference pool, bandwidth measured"}
    assert validate(SKU, "pool", props, {"acceptWrittenReason": True}) == []


REASON_TAG = "wirespeed.io.not-network-optimised-reason"


def _slow(kind):
    """A resource of each kind on a size the rule flags, and where its reason goes (tags, or annotations)."""
    if kind == "pool":
        return {**fixture("aks_agent_pool"), "vmSize": "Standard_D16s_v5"}, ("tags",)
    if kind == "cluster":
        props = fixture("aks_cluster")
        props["agentPoolProfiles"][0]["vmSize"] = "Standard_D4s_v3"
        return props, ("agentPoolProfiles", 0, "tags")
    if kind == "node_group":
        return {**fixture("eks_node_group"), "instanceTypes": ["m6i.8xlarge"]}, ("tags",)
    if kind == "launch_template":
        return launch_template(instance_type="m6i.8xlarge"), ("tags",)
    props = node_pool_requirements({**FAMILIES, "values": ["m6i"]}, BANDWIDTH)
    return props, ("metadata", "annotations")


def _with_reason(props, where, reason):
    container = props
    for key in where[:-1]:
        container = container.setdefault(key, {}) if isinstance(key, str) else container[key]
    container[where[-1]] = {**container.get(where[-1], {}), REASON_TAG: reason}
    return props


KINDS = ["pool", "cluster", "node_group", "launch_template", "node_pool"]


def test_the_reason_tag_is_the_one_the_components_and_modules_set():
    from wirespeed.names import NOT_NETWORK_OPTIMISED_REASON

    assert REASON_TAG == NOT_NETWORK_OPTIMISED_REASON


@pytest.mark.parametrize("kind", KINDS)
def test_a_written_reason_lets_a_flagged_pool_through(kind):
    props, where = _slow(kind)
    assert len(validate(SKU, kind, props)) == 1
    assert validate(SKU, kind, _with_reason(props, where, "batch pool, egress is light")) == []


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("reason", ["", "   "], ids=["empty", "blank"])
def test_an_empty_reason_is_no_reason(kind, reason):
    props, where = _slow(kind)
    assert len(validate(SKU, kind, _with_reason(props, where, reason))) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_accept_written_reason_false_ignores_the_tag(kind):
    props, where = _slow(kind)
    props = _with_reason(props, where, "batch pool, egress is light")
    assert len(validate(SKU, kind, props, {"acceptWrittenReason": False})) == 1


def test_a_reason_on_one_inline_pool_does_not_let_another_through():
    props = fixture("aks_cluster")
    props["agentPoolProfiles"][0]["vmSize"] = "Standard_D4s_v3"
    props["agentPoolProfiles"].append({**props["agentPoolProfiles"][0], "name": "batch", "vmSize": "Standard_D16s_v5"})
    props["agentPoolProfiles"][1]["tags"] = {REASON_TAG: "batch pool, egress is light"}
    assert [m.split(":")[0] for m in validate(SKU, "cluster", props)] == ["agentPoolProfiles[0] (system)"]


def test_accept_written_reason_must_be_a_boolean():
    from wirespeed.rules import RULES
    from wirespeed.rules._config import ConfigError, resolve_config

    with pytest.raises(ConfigError) as error:
        resolve_config({SKU: {"acceptWrittenReason": "yes"}}, RULES)
    assert error.value.problems == [(f"{SKU}.acceptWrittenReason", '"yes" is not allowed: must be true or false')]

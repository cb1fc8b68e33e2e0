"""The policy rules on AKS node auto-provisioning objects, through the pack's own policies with props as the engine
hands them over (tests/fixtures/rules/engine.py: a protobuf Struct and pulumi_policy's proxy): network-optimised-sku
on a karpenter.sh/v1 NodePool of the Azure provider, netdev-backlog-minimum on an AKSNodeClass. The compliant
objects are the ones wirespeed.azure.nap renders (`wirespeed render aks-nap`)."""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE, UNKNOWN_NUMBER_VALUE

from fixtures.rules.engine import nap_objects, validate
from wirespeed.catalog import karpenter_azure

SKU = "network-optimised-sku"
BACKLOG = "netdev-backlog-minimum"
REASON_KEY = "wirespeed.io.not-network-optimised-reason"
SERIES_HINT = "{key: karpenter.azure.com/sku-series, operator: In, values: [Dads_v6, Dalds_v6, Dals_v6, Das_v6, ...]}"
AZURE_WHY = "its NIC is not Azure Boost (MANA), so it may land on older Mellanox hosts with smaller rings and MTU."
BACKLOG_WHY = (
    "bursts arriving through the per-CPU backlog (veth: every pod's traffic, RPS) are dropped in enqueue_to_backlog "
    "once it is full; Elastic's field report ('Debugging Azure Networking for Elastic Cloud Serverless') lost packets "
    "there at 1,000 and none at 32,768."
)
FAMILY_D = {"key": "karpenter.azure.com/sku-family", "operator": "In", "values": ["D"]}
ARCH = {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}


def node_pool(*requirements, **spec):
    pool = nap_objects(**spec)["NodePool"]
    if requirements:
        pool["spec"]["template"]["spec"]["requirements"] = list(requirements)
    return pool


def node_class(sysctls=None, **spec):
    found = nap_objects(**spec)["AKSNodeClass"]
    if sysctls is None:
        found["spec"].pop("linuxOSConfig", None)
    else:
        found["spec"]["linuxOSConfig"] = {"sysctls": sysctls}
    return found


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({}, id="throughput-x86"),
        pytest.param({"architectures": ("arm64",), "capacity_types": ("spot",)}, id="arm64-spot"),
        pytest.param({"families": ("Esv6",), "min_vcpu": None}, id="esv6"),
    ],
)
def test_rendered_objects_pass_both_rules(spec):
    objects = nap_objects(**spec)
    assert validate(SKU, "node_pool", objects["NodePool"]) == []
    assert validate(BACKLOG, "aks_node_class", objects["AKSNodeClass"]) == []


def test_naps_own_default_node_pool_admits_older_families():
    # AKS's `default` NodePool (learn.microsoft.com/azure/aks/node-auto-provisioning-node-pools): sku-family In [D].
    # Every x86 family-D series of the catalog without MANA is named, with two of its sizes; the catalog decides which.
    old = [
        (labels.series, it.family)
        for it, labels in karpenter_azure._azure_labels()
        if labels.family == "D" and it.architecture == "x86_64" and not it.network_optimised
    ]
    assert ("Ds_v5", "Dsv5") in old
    named = []
    for series in sorted({series for series, _ in old}):
        # One series may span catalog families (DS_v2: Dsv2 and the memory-optimised DSv2 11-15): all are named.
        members = [it for it, labels in karpenter_azure._azure_labels() if labels.series == series]
        families = " and ".join(dict.fromkeys(it.family for it in members))
        named.append(f"{series} ({families}: {', '.join(it.name for it in members[:2])}, ...)")
    assert validate(SKU, "node_pool", node_pool(ARCH, FAMILY_D)) == [
        f"requirements admit {', '.join(named)}, not network-optimised: "
        f"{AZURE_WHY} Keep only network-optimised series: {SERIES_HINT} "
        "(`wirespeed catalog list --cloud azure --network-optimised`)."
    ]


@pytest.mark.parametrize(
    "requirement",
    [
        pytest.param({"key": "karpenter.azure.com/sku-version", "operator": "In", "values": ["5", "6"]}, id="v5"),
        pytest.param({"key": "karpenter.azure.com/sku-version", "operator": "Gt", "values": ["4"]}, id="gt-4"),
        pytest.param(
            {"key": "karpenter.azure.com/sku-series", "operator": "In", "values": ["Ds_v6", "Ds_v5"]}, id="ds"
        ),
        pytest.param({"key": "karpenter.azure.com/sku-name", "operator": "In", "values": ["Standard_D8s_v5"]}, id="n"),
        pytest.param({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D8s_v5"]}),
    ],
)
def test_requirements_that_admit_a_v5_size_are_a_violation(requirement):
    [message] = validate(SKU, "node_pool", node_pool(ARCH, requirement))
    assert message.startswith("requirements admit ")
    assert "Ds_v5 (Dsv5: Standard_D" in message
    assert AZURE_WHY in message


def test_a_node_pool_that_leaves_sizes_open_is_a_violation():
    assert validate(SKU, "node_pool", node_pool(ARCH)) == [
        "requirements do not limit karpenter.azure.com/sku-series, karpenter.azure.com/sku-name, "
        "karpenter.azure.com/sku-family or karpenter.azure.com/sku-version, so node auto-provisioning may launch any "
        f"VM size in the region, network-optimised or not. Add {SERIES_HINT} (`wirespeed catalog list --cloud azure "
        "--network-optimised`; `wirespeed render aks-nap` writes the requirements)."
    ]


def test_v6_alone_is_enough_and_notin_excludes_the_old_series():
    version_6 = {"key": "karpenter.azure.com/sku-version", "operator": "In", "values": ["6"]}
    assert validate(SKU, "node_pool", node_pool(ARCH, version_6)) == []
    old = sorted(
        {
            labels.series
            for it, labels in karpenter_azure._azure_labels()
            if labels.family == "D" and it.architecture == "x86_64" and not it.network_optimised
        }
    )
    assert {"DS_v2", "Ds_v5"} <= set(old)
    not_old = {"key": "karpenter.azure.com/sku-series", "operator": "NotIn", "values": old}
    assert validate(SKU, "node_pool", node_pool(ARCH, FAMILY_D, not_old)) == []


@pytest.mark.parametrize(
    ("minimum", "fix"),
    [
        (20, "Add {key: karpenter.azure.com/sku-cpu, operator: Gt, values: ['47']}"),
        (90, "No admitted size meets it: admit larger sizes"),
    ],
)
def test_sizes_below_the_bandwidth_minimum_are_a_violation(minimum, fix):
    pool = node_pool(min_vcpu=None)
    assert validate(SKU, "node_pool", pool, {"minimumBandwidthGbps": minimum}) == [
        "requirements admit Standard_D2ads_v6 (12.5 Gb/s), Standard_D4ads_v6 (12.5 Gb/s), Standard_D8ads_v6 "
        f"(12.5 Gb/s), ..., below the minimum {minimum} Gb/s (policy setting minimumBandwidthGbps). {fix} "
        f"(`wirespeed catalog list --cloud azure --network-optimised --min-gbps {minimum}`)."
    ]


def test_the_cpu_floor_the_message_suggests_passes():
    cpu = {"key": "karpenter.azure.com/sku-cpu", "operator": "Gt", "values": ["47"]}
    rendered = node_pool(min_vcpu=None)["spec"]["template"]["spec"]["requirements"]
    assert validate(SKU, "node_pool", node_pool(*rendered, cpu), {"minimumBandwidthGbps": 20}) == []


def test_a_written_reason_lets_the_pool_through_unless_the_pack_refuses_reasons():
    pool = node_pool(ARCH, FAMILY_D)
    pool["metadata"]["annotations"] = {REASON_KEY: "legacy image pipeline"}
    assert validate(SKU, "node_pool", pool) == []
    assert len(validate(SKU, "node_pool", pool, {"acceptWrittenReason": False})) == 1
    rendered = node_pool(families=("Dsv6", "Dsv5"), not_network_optimised_reason="legacy image pipeline")
    assert rendered["metadata"]["annotations"] == {REASON_KEY: "legacy image pipeline"}
    assert validate(SKU, "node_pool", rendered) == []


def test_an_azure_node_pool_is_known_by_its_keys_without_a_node_class_reference():
    pool = node_pool(ARCH, FAMILY_D)
    del pool["spec"]["template"]["spec"]["nodeClassRef"]
    [message] = validate(SKU, "node_pool", pool)
    assert message.startswith("requirements admit DS_v2")


def test_unknown_requirements_during_preview_are_not_applicable():
    pool = node_pool()
    pool["spec"]["template"]["spec"]["requirements"] = UNKNOWN_ARRAY_VALUE
    assert validate(SKU, "node_pool", pool) == []


@pytest.mark.parametrize(
    ("sysctls", "now"),
    [
        pytest.param(None, "is unset (the kernel default 1,000)", id="no-linux-os-config"),
        pytest.param({}, "is unset (the kernel default 1,000)", id="empty-sysctls"),
        pytest.param({"netCoreNetdevMaxBacklog": 1000}, "is 1,000", id="kernel-default"),
        pytest.param({"netCoreSomaxconn": 65535}, "is unset (the kernel default 1,000)", id="other-sysctl-only"),
    ],
)
def test_a_node_class_without_the_profiles_backlog_is_a_violation(sysctls, now):
    # The rendered class declares its NodePool's fastest admitted size: Standard_D96ds_v6 and kin, 41 Gb/s.
    assert validate(BACKLOG, "aks_node_class", node_class(sysctls)) == [
        f"AKSNodeClass 'net': spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog {now}, below the minimum 13,329 for "
        "the line rate 41 Gb/s its annotation wirespeed.io/line-rate-gbps (its NodePool's fastest admitted size) "
        "declares, where the backlog must hold 4 ms of 1,500-byte packets at that rate: "
        f"{BACKLOG_WHY} Set spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog to 16,384 (any value from 13,329 "
        "passes): the built-in profile 'throughput' is sized for 100 Gb/s, or admit only slower sizes in its NodePools "
        "(karpenter-provider-azure v1.10.0 or later; AKS accepts 1,000..3,240,000; `wirespeed render "
        "aks-nap` sets the profile's). A change drifts the class's nodes: Karpenter replaces them within each "
        "NodePool's disruption budget."
    ]


def test_a_node_class_is_held_to_its_node_pools_fastest_size():
    # Without max_vcpu the NodePool admits Standard_E192is_v6 (200 Gb/s): the throughput profile's 32,768 is what
    # 100 Gb/s needs, so the class that carries it is a violation, as an agent pool of that size would be.
    fastest = nap_objects(max_vcpu=None)["AKSNodeClass"]
    assert fastest["metadata"]["annotations"] == {"wirespeed.io/line-rate-gbps": "200"}
    [message] = validate(BACKLOG, "aks_node_class", fastest)
    assert message.startswith(
        "AKSNodeClass 'net': spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 32,768, below the minimum 65,020 "
        "for the line rate 200 Gb/s its annotation wirespeed.io/line-rate-gbps"
    )
    assert "no built-in profile is sized for 200 Gb/s: use a custom profile" in message
    fastest["spec"]["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = 65536
    assert validate(BACKLOG, "aks_node_class", fastest) == []


def test_without_the_annotation_the_default_line_rate_is_assumed():
    balanced = node_class({"netCoreNetdevMaxBacklog": 8192})
    del balanced["metadata"]["annotations"]
    [message] = validate(BACKLOG, "aks_node_class", balanced, {"defaultLineRateGbps": 100})
    assert (
        "an assumed line rate of 100 Gb/s (an AKSNodeClass does not fix a size: its NodePools choose them, and none "
        "is in view of a check of this object alone, and it has no wirespeed.io/line-rate-gbps annotation; policy "
        "setting defaultLineRateGbps)" in message
    )
    assert validate(BACKLOG, "aks_node_class", balanced) == []
    assert len(validate(BACKLOG, "aks_node_class", balanced, {"minimumBacklog": 16384})) == 1
    balanced["metadata"]["annotations"] = {"wirespeed.io/line-rate-gbps": "fast"}
    [message] = validate(BACKLOG, "aks_node_class", balanced, {"defaultLineRateGbps": 100})
    assert "its annotation wirespeed.io/line-rate-gbps 'fast' is not a line rate in Gb/s" in message


def test_the_v1alpha2_node_class_is_read_too():
    old = node_class({"netCoreNetdevMaxBacklog": 1000})
    old["apiVersion"] = "karpenter.azure.com/v1alpha2"
    [message] = validate(BACKLOG, "kubernetes:karpenter.azure.com/v1alpha2:AKSNodeClass", old)
    assert message.startswith("AKSNodeClass 'net': spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 1,000,")


def test_an_unknown_backlog_during_preview_is_not_applicable():
    assert validate(BACKLOG, "aks_node_class", node_class({"netCoreNetdevMaxBacklog": UNKNOWN_NUMBER_VALUE})) == []


def test_tuning_agent_present_counts_nap_pools_for_the_aks_cluster_only():
    from fixtures.rules.engine import fixture, stack_resource, urn, validate_stack

    stack = [
        stack_resource("cluster", "aks", fixture("aks_cluster")),
        stack_resource("node_pool", "net", nap_objects()["NodePool"]),
        stack_resource("eks_cluster", "ingest", {"name": "ingest", "version": "1.31"}),
    ]
    reported = validate_stack("tuning-agent-present", stack)
    assert [(message.split(" but ")[0], where) for message, where in reported] == [
        ("this cluster has 1 node pool(s) and 1 node auto-provisioning NodePool(s)", urn("cluster", "aks"))
    ]


# --- a node class judged by the NodePools that reference it (Rule.related) ------------------------------------------

NODE_CLASS_TYPE = f"kubernetes:karpenter.azure.com/{karpenter_azure.NODE_CLASS_VERSIONS[0]}:AKSNodeClass"
NODE_POOL_TYPE = "kubernetes:karpenter.sh/v1:NodePool"


def sku_name(*names):
    return {"key": "karpenter.azure.com/sku-name", "operator": "In", "values": list(names)}


def backlog_messages(node_class_props, *pools):
    """netdev-backlog-minimum's messages on the class when the whole input (class and NodePools) is evaluated."""
    from wirespeed.rules import Resource, evaluate

    resources = [Resource(NODE_CLASS_TYPE, "net", "urn:class", node_class_props)]
    resources += [Resource(NODE_POOL_TYPE, f"pool{i}", f"urn:pool{i}", p) for i, p in enumerate(pools)]
    return [v.message for v in evaluate(resources) if v.rule_id == BACKLOG and v.resource_urn == "urn:class"]


def test_a_node_class_is_judged_at_the_fastest_size_its_node_pools_pin():
    # 9,753 holds Standard_D64s_v6's 30 Gb/s; without the NodePools in view the class's annotation (41 Gb/s) judges.
    at_30 = node_class({"netCoreNetdevMaxBacklog": 9753})
    assert validate(BACKLOG, "aks_node_class", at_30) != []
    both = (node_pool(ARCH, sku_name("Standard_D16s_v6")), node_pool(ARCH, sku_name("Standard_D64s_v6")))
    assert backlog_messages(at_30, *both) == []
    [message] = backlog_messages(node_class({"netCoreNetdevMaxBacklog": 9752}), *both)
    assert (
        "below the minimum 9,753 for Standard_D64s_v6's line rate 30 Gb/s (catalog), the fastest of the 2 sizes "
        "NodePools 'net', 'net' pin for it" in message
    )


def test_a_pin_beats_the_annotation_and_an_unpinned_or_unreferenced_class_says_what_it_assumed():
    fast = node_class({"netCoreNetdevMaxBacklog": 16384})  # enough for the 41 Gb/s its annotation declares
    assert backlog_messages(fast, node_pool(ARCH, sku_name("Standard_D16s_v6"))) == []
    [message] = backlog_messages(fast, node_pool(ARCH, sku_name("Standard_E192is_v6")))
    assert "the minimum 65,020 for Standard_E192is_v6's line rate 200 Gb/s (catalog), the only size NodePool" in message
    plain = node_class({"netCoreNetdevMaxBacklog": 1000})
    del plain["metadata"]["annotations"]
    elsewhere = node_pool(ARCH, sku_name("Standard_D16s_v6"))
    elsewhere["spec"]["template"]["spec"]["nodeClassRef"]["name"] = "other"
    [message] = backlog_messages(plain, elsewhere)
    assert "an assumed line rate of 25 Gb/s (an AKSNodeClass does not fix a size: no NodePool in the input " in message
    assert "references AKSNodeClass 'net', and it has no wirespeed.io/line-rate-gbps annotation" in message
    [message] = backlog_messages(plain, node_pool(ARCH))
    assert "NodePool 'net' pins no size (no requirement on karpenter.azure.com/sku-series, " in message
    [message] = backlog_messages(plain, node_pool(ARCH, sku_name("Standard_D4s_v9")))
    assert "NodePool 'net' pins only sizes wirespeed's catalog does not know" in message


def test_an_eks_node_pools_bandwidth_range_narrows_the_types_its_families_pin():
    # The graviton NodePool of examples/eks-karpenter pins arm64 families up to 100 Gb/s baseline: r8gn.metal-48xl
    # (600 Gb/s) is in a pinned family, but Karpenter never launches it there, so it must not decide the backlog.
    from wirespeed import catalog
    from wirespeed.rules import Resource
    from wirespeed.rules._nap import pinned_by_node_pools

    families = sorted({t.family for t in catalog.instance_types(cloud="aws") if t.family.endswith("gn")})
    ref = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "graviton"}

    def pinned(*extra):
        requirements = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": families}, *extra]
        props = {
            "metadata": {"name": "graviton"},
            "spec": {"template": {"spec": {"nodeClassRef": ref, "requirements": requirements}}},
        }
        pool = Resource(NODE_POOL_TYPE, "graviton", "urn:pool", props)
        return pinned_by_node_pools([pool], "graviton", "karpenter.k8s.aws", "EC2NodeClass", "aws").sizes

    everything = pinned()
    assert max(t.baseline_gbps for t in everything) > 100
    capped = pinned({"key": "karpenter.k8s.aws/instance-network-bandwidth", "operator": "Lt", "values": ["100001"]})
    assert capped
    assert {t.name for t in capped} == {t.name for t in everything if t.baseline_gbps <= 100}
    # Every *gn family is Graviton: an amd64 requirement leaves none of them.
    assert pinned({"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}) == ()

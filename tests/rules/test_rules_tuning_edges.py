"""netdev-backlog-minimum and mtu-jumbo-path at the edges: values AKS refuses quoted as written, sizes the catalog
does not know, a policy floor exactly at and above the line-rate minimum, the annotation's range ends, remediation
that keeps the rest of the profile, and the gateway list of a large stack."""

from __future__ import annotations

import json

import pytest

from fixtures.rules.engine import (
    config_map_with,
    launch_template,
    remediate,
    stack_resource,
    user_data_with_backlog,
    validate,
    validate_stack,
)
from test_rules_nap import node_class
from test_rules_tuning import BACKLOG_WHY, pool, set_backlog
from wirespeed.rules import ConfigError, resolve_config

BACKLOG = "netdev-backlog-minimum"
MTU = "mtu-jumbo-path"
REFUSED = (
    "which AKS refuses: it accepts a whole number between 1,000 and 3,240,000 "
    "(https://learn.microsoft.com/azure/aks/custom-node-configuration), so the create fails. Set it within that "
    "range (`wirespeed size backlog --line-rate-gbps N` sizes it)."
)
HOLDS = "where the backlog must hold 4 ms of 1,500-byte packets at that rate"


def test_a_pool_backlog_aks_refuses_is_quoted_as_written():
    assert validate(BACKLOG, "pool", pool(netCoreNetdevMaxBacklog="lots")) == [
        f"agent pool 'subject': linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 'lots', {REFUSED}"
    ]


def test_a_node_class_backlog_aks_refuses_names_the_class_and_its_field():
    assert validate(BACKLOG, "aks_node_class", node_class({"netCoreNetdevMaxBacklog": 999})) == [
        f"AKSNodeClass 'net': spec.linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 999, {REFUSED}"
    ]


def test_a_vm_size_the_catalog_does_not_know_assumes_the_default_line_rate_and_says_why():
    props = pool(netCoreNetdevMaxBacklog=1000)
    props["vmSize"] = "Standard_Q99s_v9"
    [message] = validate(BACKLOG, "pool", props)
    assert (
        "below the minimum 8,128 for an assumed line rate of 25 Gb/s (vmSize Standard_Q99s_v9 is not in wirespeed's "
        f"catalog, which network-optimised-sku reports; policy setting defaultLineRateGbps), {HOLDS}: "
    ) in message


@pytest.mark.parametrize(
    ("instance_type", "why"),
    [
        pytest.param(
            "c9z.huge",
            "instanceType c9z.huge is not in wirespeed's catalog, which network-optimised-sku reports",
            id="unknown",
        ),
        pytest.param(
            None,
            "the launch template names no instanceType and has no wirespeed.io/line-rate-gbps tag: its node group's "
            "instanceTypes say it",
            id="unset",
        ),
    ],
)
def test_a_launch_template_without_a_known_instance_type_assumes_the_default_and_says_why(instance_type, why):
    props = launch_template(user_data_with_backlog(1000), instance_type or "x")
    if instance_type is None:
        del props["instanceType"]
    [message] = validate(BACKLOG, "launch_template", props)
    assert message.startswith(
        "userData (EKS node) sets net.core.netdev_max_backlog to 1,000, below the minimum 8,128 for an assumed line "
        f"rate of 25 Gb/s ({why}; policy setting defaultLineRateGbps), {HOLDS}: "
    )


def test_a_floor_equal_to_the_line_rate_minimum_is_reported_as_the_line_rates():
    [message] = validate(BACKLOG, "pool", pool(netCoreNetdevMaxBacklog=1000), {"minimumBacklog": 4064})
    assert f"below the minimum 4,064 for Standard_D16s_v6's line rate 12.5 Gb/s (catalog), {HOLDS}: " in message
    assert (
        "to 4,096 (any value from 4,064 passes): the built-in profile 'balanced' is sized for 25 Gb/s (AKS" in message
    )


def test_a_floor_above_the_line_rate_minimum_is_reported_as_the_policys():
    [message] = validate(BACKLOG, "pool", pool(netCoreNetdevMaxBacklog=1000), {"minimumBacklog": 16384})
    assert message == (
        "agent pool 'subject': linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 1,000 (profile 'throughput'), below "
        "the minimum 16,384 that policy setting minimumBacklog sets, where Standard_D16s_v6's line rate 12.5 Gb/s "
        f"(catalog) alone needs 4,064: {BACKLOG_WHY} Set linuxOSConfig.sysctls.netCoreNetdevMaxBacklog to "
        "16,384: policy setting minimumBacklog asks for it whatever the line rate (AKS accepts 1,000..3,240,000; "
        "`wirespeed size backlog --line-rate-gbps 12.5` sizes it). It is create-only: changing it replaces the pool's "
        "nodes."
    )


def annotated(rate, backlog):
    props = config_map_with(set_backlog(backlog))
    props["metadata"].setdefault("annotations", {})["wirespeed.io/line-rate-gbps"] = rate
    return props


@pytest.mark.parametrize(
    ("rate", "minimum"),
    [
        # 1 packet: the policy's default floor, the kernel default 1,000, is what 999 misses.
        pytest.param("0.001", "1,000 that policy setting minimumBacklog sets, where ", id="lowest"),
        pytest.param(" 800 ", "260,079 for ", id="highest-with-blanks"),
        pytest.param(100, "32,510 for ", id="a-number"),
    ],
)
def test_the_line_rate_annotation_is_read_across_its_whole_range(rate, minimum):
    [message] = validate(BACKLOG, "config_map", annotated(rate, 999))
    assert "its annotation wirespeed.io/line-rate-gbps" in message
    assert f"below the minimum {minimum}" in message


def test_remediation_keeps_the_profiles_other_sysctls_and_leaves_a_backlog_at_the_minimum():
    def edit(document):
        document["sysctls"] = {"net.core.somaxconn": 4096, "net.core.netdev_max_backlog": 1000}

    fixed = remediate(BACKLOG, "config_map", config_map_with(edit))
    document = json.loads(fixed["data"]["profile.json"])
    assert document["sysctls"] == {"net.core.somaxconn": 4096, "net.core.netdev_max_backlog": 8192}
    at_minimum = config_map_with(set_backlog(8192))
    assert remediate(BACKLOG, "config_map", at_minimum) is None  # nothing to change


def jumbo_profile(mtu):
    return config_map_with(lambda d: d.update(mtu={"value": mtu}))


def test_a_jumbo_profile_after_a_standard_one_is_still_reported_and_the_gateway_list_is_cut_at_three():
    gateways = [stack_resource("nat_gateway", f"nat-{i}", {}) for i in range(4)]
    resources = [*gateways, stack_resource("config_map", "std", jumbo_profile(1500))]
    resources.append(stack_resource("config_map", "jumbo", jumbo_profile(9000)))
    [(message, _)] = validate_stack(MTU, resources)
    assert ", but this stack's traffic also leaves through nat-0 (" in message
    assert "), nat-1 (" in message
    assert "), nat-2 (" in message
    assert "nat-3" not in message
    assert ") ..., and gateways carry at most 1,500" in message
    three = validate_stack(MTU, [*gateways[:3], resources[-1]])
    assert ") ..., " not in three[0][0]
    assert "nat-2" in three[0][0]


@pytest.mark.parametrize("rule", [BACKLOG, "nic-ring-minimum"])
def test_the_assumed_line_rate_setting_accepts_exactly_the_sizing_range(rule):
    for accepted in (0.001, 800):
        resolve_config({rule: {"defaultLineRateGbps": accepted}})
    for refused in (0, 801):
        with pytest.raises(ConfigError) as error:
            resolve_config({rule: {"defaultLineRateGbps": refused}})
        assert str(error.value) == (
            f"invalid policy config:\n  {rule}.defaultLineRateGbps: {refused} is not allowed: must be a number between "
            "0.001 and 800"
        )


RINGS = "nic-ring-minimum"


def rings_profile(rate, **rings):
    props = config_map_with(lambda d: d["rings"].update(rings))
    if rate is not None:
        props["metadata"].setdefault("annotations", {})["wirespeed.io/line-rate-gbps"] = rate
    return props


def test_a_tx_ring_above_the_drivers_tx_maximum_is_clamped_to_that_not_the_rx_maximum():
    # ENA: RX up to 16,384, TX up to 1,024.
    assert validate(RINGS, "config_map", rings_profile("100", ena={"rx": 8192, "tx": 2048})) == [
        "profile 'throughput' (data['profile.json']): rings.ena.tx is 2,048, above ena's maximum 1,024: the agent "
        "clamps it to 1,024 on every node and the profile no longer says what nodes run. Set rings.ena.tx to 1,024."
    ]


def test_a_tx_ring_minimum_is_the_tx_derivation():
    # virtio_net at 100 Gb/s: RX 1,024, TX 256 (its TX maximum): TX 128 is below 256, not below RX's 1,024.
    [message] = validate(RINGS, "config_map", rings_profile("100", virtio_net={"rx": 1024, "tx": 128}))
    assert message.startswith(
        "profile 'throughput' (data['profile.json']): rings.virtio_net.tx is 128, below the minimum 8,128 for the line "
        "rate 100 Gb/s its annotation wirespeed.io/line-rate-gbps declares, where "
    )
    assert "held to virtio_net's max 256: " in message
    assert "Set rings.virtio_net.tx to 256: " in message


def test_a_floor_beyond_the_drivers_maximum_is_held_to_the_maximum_and_says_so():
    props = rings_profile("25", mlx5_core={"rx": 4096, "tx": 8192})
    messages = validate(RINGS, "config_map", props, {"minimumRxRing": 32768})
    assert (
        "profile 'throughput' (data['profile.json']): rings.mlx5_core.rx is 4,096, below the minimum 32,768 that "
        "policy setting minimumRxRing sets, where the line rate 25 Gb/s its annotation wirespeed.io/line-rate-gbps "
        "declares alone needs 2,032, held to mlx5_core's max 8,192: "
    ) in "\n".join(messages)


def test_a_driver_the_catalog_does_not_know_is_held_to_the_line_rate_minimum_inclusively():
    # 2,032 packets at the assumed 25 Gb/s; a driver the catalog does not know is taken as written.
    assert validate(RINGS, "config_map", rings_profile(None, nosuch={"rx": 2032, "tx": 2032})) == []
    [message] = validate(RINGS, "config_map", rings_profile(None, nosuch={"rx": 2031, "tx": 2048}))
    assert message.startswith(
        "profile 'throughput' (data['profile.json']): rings.nosuch.rx is 2,031, below the minimum 2,032"
    )


def test_a_pool_without_a_vm_size_assumes_the_default_line_rate_and_says_why():
    props = pool(netCoreNetdevMaxBacklog=1000)
    del props["vmSize"]
    [message] = validate(BACKLOG, "pool", props)
    assert "for an assumed line rate of 25 Gb/s (vmSize is unset; policy setting defaultLineRateGbps), " in message


@pytest.mark.parametrize(
    ("tag", "below"),
    [
        pytest.param(
            "100",
            # 100 Gb/s for 4 ms is 32,510 1,500-byte packets (on the wire, 1,538 bytes each).
            "the minimum 32,510 for the line rate 100 Gb/s its tag wirespeed.io/line-rate-gbps (its node group's "
            "fastest instanceType) declares, ",
            id="declared",
        ),
        pytest.param(
            "fast",
            "the minimum 8,128 for an assumed line rate of 25 Gb/s (its tag wirespeed.io/line-rate-gbps 'fast' is not "
            "a line rate in Gb/s (1/1000..800); policy setting defaultLineRateGbps), ",
            id="not-a-rate",
        ),
    ],
)
def test_a_launch_template_without_an_instance_type_reads_its_line_rate_tag(tag, below):
    """NetworkOptimizedNodeGroup writes its node group's fastest instanceType's line rate to the template's tags
    when the template names no instanceType; the backlog minimum follows that tag, and a tag that is no line rate
    is named with its value."""
    props = launch_template(user_data_with_backlog(1000), "x")
    del props["instanceType"]
    props["tags"] = {"wirespeed.io/line-rate-gbps": tag}
    [message] = validate(BACKLOG, "launch_template", props)
    assert message.startswith(f"userData (EKS node) sets net.core.netdev_max_backlog to 1,000, below {below}{HOLDS}: ")

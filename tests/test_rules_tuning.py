"""netdev-backlog-minimum, nic-ring-minimum and mtu-jumbo-path through the pack's own policies, and their
remediation. The tuning ConfigMap is rendered by wirespeed.manifests (the throughput profile), so the fixture is
exactly what NodeTuning and `wirespeed render node-tuning` produce."""

from __future__ import annotations

import json

import pytest
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE

from builtin_profiles import BALANCED_BACKLOG, THROUGHPUT_BACKLOG, THROUGHPUT_TX
from fixtures.rules.engine import (
    config_map_with,
    fixture,
    launch_template,
    remediate,
    stack_resource,
    tuning_objects,
    urn,
    user_data_text,
    validate,
    validate_stack,
)

BACKLOG = "netdev-backlog-minimum"
RINGS = "nic-ring-minimum"
MTU = "mtu-jumbo-path"

BACKLOG_WHY = (
    "bursts arriving through the per-CPU backlog (veth: every pod's traffic, RPS) are dropped in enqueue_to_backlog "
    "once it is full; the Elastic field report (seed 000) lost packets there at 1,000 and none at 32,768."
)
AKS_FIX = (
    " Set linuxOSConfig.sysctls.netCoreNetdevMaxBacklog to at least 16,384 (AKS accepts 1,000..3,240,000; "
    "`wirespeed size backlog --line-rate-gbps N` sizes it). It is create-only: changing it replaces the pool's nodes."
)
EKS_FIX = (
    " Write net.core.netdev_max_backlog=16384 or more from a text/x-shellscript part and to /etc/sysctl.d (as "
    "wirespeed's EKS node user data does), or run the tuning agent with a profile that sets it."
)
PROFILE = "profile 'throughput' (data['profile.json'])"
# What fixtures/rules/node_user_data.mime writes: the hand-written fixture's own compliant value, not a profile's.
USER_DATA_BACKLOG = "32768"
RING_WHY = (
    "a small RX ring overflows during microbursts from the host NIC; the Elastic field report (seed 000) lost "
    "packets at 1,024 on Azure's Mellanox VF and none at 8,192."
)


def pool(**sysctls):
    props = fixture("aks_agent_pool")
    props["linuxOSConfig"]["sysctls"].update(sysctls)
    return props


def profile_document(config_map):
    return json.loads(config_map["data"]["profile.json"])


def set_backlog(value):
    return lambda d: d["sysctls"].update({"net.core.netdev_max_backlog": value})


def set_ring(driver, rx):
    return lambda d: d["rings"].setdefault(driver, {}).update(rx=rx)


# --- netdev-backlog-minimum: compliant ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "props"),
    [
        pytest.param("pool", fixture("aks_agent_pool"), id="aks-pool"),
        pytest.param("cluster", fixture("aks_cluster"), id="aks-inline-pool"),
        pytest.param("launch_template", launch_template(), id="eks-launch-template"),
        pytest.param("config_map", tuning_objects()["ConfigMap"], id="tuning-profile"),
    ],
)
def test_compliant_resources_pass_the_backlog_rule(kind, props):
    assert validate(BACKLOG, kind, props) == []


# --- netdev-backlog-minimum: one field changed --------------------------------------------------------------------


def test_aks_pool_backlog_below_the_minimum():
    assert validate(BACKLOG, "pool", pool(netCoreNetdevMaxBacklog=1000), name="user") == [
        "agent pool 'user': linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 1,000, below the minimum 16,384 (policy "
        "setting minimumBacklog): " + BACKLOG_WHY + AKS_FIX
    ]


def test_aks_pool_backlog_unset_is_the_kernel_default():
    props = fixture("aks_agent_pool")
    del props["linuxOSConfig"]
    assert validate(BACKLOG, "pool", props, name="user") == [
        "agent pool 'user': linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is unset (the kernel default 1,000), below "
        "the minimum 16,384 (policy setting minimumBacklog): " + BACKLOG_WHY + AKS_FIX
    ]


def test_aks_inline_pool_backlog_names_the_pool():
    props = fixture("aks_cluster")
    props["agentPoolProfiles"][0]["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = 8192
    assert validate(BACKLOG, "cluster", props) == [
        "agentPoolProfiles[0] (system): linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 8,192, below the minimum "
        "16,384 (policy setting minimumBacklog): " + BACKLOG_WHY + AKS_FIX
    ]


def test_windows_pools_have_no_backlog_to_set():
    props = fixture("aks_agent_pool")
    del props["linuxOSConfig"]
    props["osType"] = "Windows"
    assert validate(BACKLOG, "pool", props) == []


def test_eks_user_data_with_a_low_backlog():
    props = launch_template(user_data_text().replace(USER_DATA_BACKLOG, "1000"))
    assert validate(BACKLOG, "launch_template", props) == [
        "userData (EKS node) sets net.core.netdev_max_backlog to 1,000, below the minimum 16,384 (policy setting "
        "minimumBacklog): " + BACKLOG_WHY + EKS_FIX
    ]


def test_eks_user_data_without_the_backlog():
    props = launch_template(user_data_text().replace("net.core.netdev_max_backlog", "net.core.somaxconn"))
    assert validate(BACKLOG, "launch_template", props) == [
        "userData (EKS node) does not set net.core.netdev_max_backlog, so nodes keep the kernel default 1,000, below "
        "the minimum 16,384 (policy setting minimumBacklog): " + BACKLOG_WHY + EKS_FIX
    ]


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(f"echo {USER_DATA_BACKLOG} > /proc/sys/net/core/netdev_max_backlog", id="proc-write"),
        pytest.param(
            f"ws_sysctl net.core.netdev_max_backlog net/core/netdev_max_backlog {USER_DATA_BACKLOG}",
            id="wirespeed-script",
        ),
        pytest.param(f"sysctl -w net.core.netdev_max_backlog={USER_DATA_BACKLOG}", id="sysctl-w"),
    ],
)
def test_eks_user_data_forms_that_set_the_backlog(script):
    text = user_data_text().replace(f"sysctl -w net.core.netdev_max_backlog={USER_DATA_BACKLOG}", script)
    text = text.replace(f"net.core.netdev_max_backlog = {USER_DATA_BACKLOG}", "vm.swappiness = 1")
    assert validate(BACKLOG, "launch_template", launch_template(text)) == []


def test_bottlerocket_settings_count_as_eks_node_user_data():
    toml = (
        '[settings.kubernetes]\ncluster-name = "ingest"\n'
        '[settings.kernel.sysctl]\n"net.core.netdev_max_backlog" = "4096"\n'
    )
    (message,) = validate(BACKLOG, "launch_template", launch_template(toml))
    assert message.startswith("userData (EKS node) sets net.core.netdev_max_backlog to 4,096, below the minimum")


def test_launch_templates_that_do_not_boot_eks_nodes_are_not_checked():
    assert validate(BACKLOG, "launch_template", launch_template("#!/bin/sh\necho bastion\n")) == []


def test_tuning_profile_backlog_below_the_minimum():
    assert validate(BACKLOG, "config_map", config_map_with(set_backlog(1000))) == [
        f"{PROFILE}: sysctls['net.core.netdev_max_backlog'] is 1,000, below the minimum 16,384 (policy setting "
        "minimumBacklog): " + BACKLOG_WHY + " Set it to at least 16,384 (`wirespeed size backlog --line-rate-gbps N`)."
    ]


def test_other_config_maps_are_not_profiles():
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}}
    assert validate(BACKLOG, "config_map", config_map) == []
    assert validate(RINGS, "config_map", config_map) == []


@pytest.mark.parametrize(
    ("config", "violations"),
    [
        pytest.param({"minimumBacklog": BALANCED_BACKLOG}, 0, id="lowered-minimum-allows-the-balanced-profile"),
        pytest.param(None, 1, id="default-minimum-refuses-balanced"),
    ],
)
def test_backlog_minimum_reads_its_config(config, violations):
    balanced = tuning_objects("balanced")["ConfigMap"]
    assert len(validate(BACKLOG, "config_map", balanced, config)) == violations


def test_unknown_backlog_during_preview_is_not_applicable():
    assert validate(BACKLOG, "pool", pool(netCoreNetdevMaxBacklog=UNKNOWN_NUMBER_VALUE)) == []
    props = launch_template()
    props["userData"] = UNKNOWN_STRING_VALUE
    assert validate(BACKLOG, "launch_template", props) == []


# --- nic-ring-minimum ---------------------------------------------------------------------------------------------


def test_compliant_profile_passes_the_ring_rule():
    assert validate(RINGS, "config_map", tuning_objects()["ConfigMap"]) == []


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(
            set_ring("mlx5_core", 1024),
            f"{PROFILE}: rings.mlx5_core.rx is 1,024, below the minimum 4,096 (policy setting minimumRxRing): "
            + RING_WHY
            + " Set rings.mlx5_core.rx to 4,096 (`wirespeed size rings --driver mlx5_core --line-rate-gbps N` "
            "sizes it).",
            id="below-minimum",
        ),
        pytest.param(
            set_ring("ena", 1024),
            f"{PROFILE}: rings.ena.rx is 1,024, below the minimum 4,096 (policy setting minimumRxRing): a small RX "
            "ring overflows during microbursts from the host NIC; AWS recommends an RX ring of 8,192 on ENA "
            "interfaces that use ENA Express (docs.aws.amazon.com/AWSEC2/latest/UserGuide/ena-express.html, Tune "
            "performance; ENA starts at 1,024). Set rings.ena.rx to 4,096 (`wirespeed size rings --driver ena "
            "--line-rate-gbps N` sizes it).",
            id="below-minimum-ena-cites-aws",
        ),
        pytest.param(
            set_ring("mlx5_core", 16384),
            f"{PROFILE}: rings.mlx5_core.rx is 16,384, above mlx5_core's maximum 8,192: the agent clamps it to 8,192 "
            "on every node and the profile no longer says what nodes run. Set rings.mlx5_core.rx to 8,192.",
            id="above-driver-max",
        ),
        pytest.param(
            set_ring("virtio_net", 512),
            f"{PROFILE}: rings.virtio_net.rx is 512, below the minimum 4,096 (policy setting minimumRxRing, held to "
            "virtio_net's max 1,024): " + RING_WHY + " Set rings.virtio_net.rx to 1,024 (`wirespeed size rings "
            "--driver virtio_net --line-rate-gbps N` sizes it).",
            id="driver-max-below-minimum",
        ),
        pytest.param(
            set_ring("hv_netvsc", 4096),
            f"{PROFILE}: rings.hv_netvsc.rx is 4,096, but hv_netvsc has no NIC rings to size, so the agent never "
            "applies it (Hyper-V synthetic NIC (Azure eth0). Its 'rings' are buffer sections, never NIC descriptors). "
            "Remove rings.hv_netvsc and size the VF's driver (mlx5_core, mana) instead.",
            id="driver-without-rings",
        ),
        pytest.param(
            set_ring("bnxt_en", 2048),
            f"{PROFILE}: rings.bnxt_en.rx is 2,048, below the minimum 4,096 (policy setting minimumRxRing): "
            + RING_WHY
            + " Set rings.bnxt_en.rx to 4,096 (`wirespeed size rings --driver bnxt_en --line-rate-gbps N` sizes it).",
            id="driver-not-in-the-catalog",
        ),
    ],
)
def test_ring_rule_one_ring_changed(edit, expected):
    assert validate(RINGS, "config_map", config_map_with(edit)) == [expected]


def test_ring_minimum_reads_its_config():
    assert validate(RINGS, "config_map", config_map_with(set_ring("mlx5_core", 2048)), {"minimumRxRing": 2048}) == []
    # 16,384: mlx5_core, mlx4_en and mana are held to their max 8,192 (met); only ENA's max allows more.
    at_8192 = config_map_with(
        lambda d: [set_ring(driver, 8192)(d) for driver in ("ena", "mana", "mlx4_en", "mlx5_core")]
    )
    (message,) = validate(RINGS, "config_map", at_8192, {"minimumRxRing": 16384})
    assert message.startswith(f"{PROFILE}: rings.ena.rx is 8,192, below the minimum 16,384")
    # The built-in balanced profile (2,048, sized for 25 Gb/s) is below the default minimum on every driver.
    assert len(validate(RINGS, "config_map", tuning_objects("balanced")["ConfigMap"])) == 4


# --- remediation --------------------------------------------------------------------------------------------------


def test_remediation_raises_a_profiles_rings_and_lowers_rings_above_the_max():
    edited = config_map_with(lambda d: (set_ring("mlx5_core", 1024)(d), set_ring("mana", 16384)(d)))
    fixed = remediate(RINGS, "config_map", edited)
    document = profile_document(fixed)
    # Raised to the default minimum 4,096; lowered to mana's maximum 8,192; TX is the profile's, untouched.
    assert document["rings"]["mlx5_core"] == {"rx": 4096, "tx": THROUGHPUT_TX["mlx5_core"]}
    assert document["rings"]["mana"] == {"rx": 8192, "tx": THROUGHPUT_TX["mana"]}
    assert fixed["metadata"] == tuning_objects()["ConfigMap"]["metadata"]
    assert validate(RINGS, "config_map", fixed) == []


def test_remediation_raises_a_profiles_backlog_to_the_minimum():
    fixed = remediate(BACKLOG, "config_map", config_map_with(set_backlog(1000)), {"minimumBacklog": 20000})
    assert profile_document(fixed)["sysctls"] == {"net.core.netdev_max_backlog": 20000}
    assert validate(BACKLOG, "config_map", fixed, {"minimumBacklog": 20000}) == []


def test_remediated_profile_is_the_canonical_text_but_for_the_value():
    """Rewritten as wirespeed.manifests writes it, so the diff a reviewer sees is the one number."""
    original = tuning_objects()["ConfigMap"]["data"]["profile.json"]
    fixed = remediate(BACKLOG, "config_map", config_map_with(set_backlog(1000)))
    assert original.count(f": {THROUGHPUT_BACKLOG}") == 1
    assert fixed["data"]["profile.json"] == original.replace(f": {THROUGHPUT_BACKLOG}", ": 16384")


@pytest.mark.parametrize(
    ("rule", "kind", "props"),
    [
        pytest.param(BACKLOG, "pool", pool(netCoreNetdevMaxBacklog=1000), id="aks-pool-is-create-only"),
        pytest.param(
            BACKLOG, "launch_template", launch_template(user_data_text().replace(USER_DATA_BACKLOG, "1000")), id="eks"
        ),
        pytest.param(BACKLOG, "config_map", tuning_objects()["ConfigMap"], id="compliant-profile"),
        pytest.param(RINGS, "config_map", tuning_objects()["ConfigMap"], id="compliant-rings"),
    ],
)
def test_remediation_leaves_what_is_unsafe_or_already_fine(rule, kind, props):
    assert remediate(rule, kind, props) is None


SECRET_SIG = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}  # pulumi_policy.deserialize


def test_remediation_keeps_secrets_secret():
    edited = config_map_with(set_backlog(1000))
    edited["metadata"]["annotations"] = {"example.com/token": {**SECRET_SIG, "value": "s3cret"}}
    fixed = remediate(BACKLOG, "config_map", edited)
    assert fixed["metadata"]["annotations"]["example.com/token"] == {**SECRET_SIG, "value": "s3cret"}
    assert profile_document(fixed)["sysctls"]["net.core.netdev_max_backlog"] == 16384


def test_remediation_keeps_a_secret_profile_secret():
    edited = config_map_with(set_backlog(1000))
    edited["data"]["profile.json"] = {**SECRET_SIG, "value": edited["data"]["profile.json"]}
    fixed = remediate(BACKLOG, "config_map", edited)
    secret = fixed["data"]["profile.json"]
    assert {k: v for k, v in secret.items() if k != "value"} == SECRET_SIG
    assert json.loads(secret["value"])["sysctls"]["net.core.netdev_max_backlog"] == 16384


def test_remediation_keeps_unknown_values_elsewhere_in_the_config_map():
    edited = config_map_with(set_backlog(1000))
    edited["metadata"]["namespace"] = UNKNOWN_STRING_VALUE
    fixed = remediate(BACKLOG, "config_map", edited)
    assert fixed["metadata"]["namespace"] == UNKNOWN_STRING_VALUE
    assert profile_document(fixed)["sysctls"]["net.core.netdev_max_backlog"] == 16384


# --- mtu-jumbo-path (stack) ---------------------------------------------------------------------------------------


def jumbo(value=9000):
    return config_map_with(lambda d: d.update(mtu={"value": value}))


def test_jumbo_mtu_with_a_gateway_in_the_stack_is_reported_on_the_profile():
    resources = [stack_resource("cluster", "aks", fixture("aks_cluster")), stack_resource("config_map", "p", jumbo())]
    assert validate_stack(MTU, resources) == [
        (
            f"{PROFILE}: mtu.value is 9,000, but this stack's traffic also leaves through aks "
            "(azure-native:containerservice:ManagedCluster), and gateways carry at most 1,500: TCP then depends on "
            "path MTU discovery, and UDP or ICMP-filtered paths black-hole. Keep mtu only if node traffic stays inside "
            "the VNet/VPC, else remove it (`wirespeed size mtu --driver D --crosses-gateway`).",
            urn("config_map", "p"),
        )
    ]


@pytest.mark.parametrize(
    "resources",
    [
        pytest.param([stack_resource("config_map", "p", jumbo())], id="no-gateway"),
        pytest.param(
            [
                stack_resource("nat_gateway", "nat", fixture("nat_gateway")),
                stack_resource("config_map", "p", jumbo(1500)),
            ],
            id="standard-mtu",
        ),
        pytest.param(
            [
                stack_resource("nat_gateway", "nat", fixture("nat_gateway")),
                stack_resource("config_map", "p", tuning_objects()["ConfigMap"]),
            ],
            id="no-mtu",
        ),
    ],
)
def test_jumbo_mtu_is_fine_without_a_gateway_or_without_jumbo(resources):
    assert validate_stack(MTU, resources) == []

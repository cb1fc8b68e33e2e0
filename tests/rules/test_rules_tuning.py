"""netdev-backlog-minimum, nic-ring-minimum and mtu-jumbo-path through the pack's own policies, and their
remediation. The tuning ConfigMap is rendered by wirespeed.manifests (the throughput profile), so the fixture is
exactly what NodeTuning and `wirespeed render node-tuning` produce."""

from __future__ import annotations

import json

import pytest
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE

from builtin_profiles import THROUGHPUT_BACKLOG, THROUGHPUT_TX
from fixtures.rules.engine import (
    USER_DATA_BACKLOG,
    config_map_with,
    fixture,
    launch_template,
    remediate,
    stack_resource,
    tuning_objects,
    urn,
    user_data_text,
    user_data_with_backlog,
    validate,
    validate_stack,
)

BACKLOG = "netdev-backlog-minimum"
RINGS = "nic-ring-minimum"
MTU = "mtu-jumbo-path"

BACKLOG_WHY = (
    "bursts arriving through the per-CPU backlog (veth: every pod's traffic, RPS) are dropped in enqueue_to_backlog "
    "once it is full; Elastic's field report ('Debugging Azure Networking for Elastic Cloud Serverless') lost packets "
    "there at 1,000 and none at 32,768."
)


def aks_fix(minimum, rate, advice="the built-in profile 'balanced' is sized for 25 Gb/s"):
    return (
        f" Set linuxOSConfig.sysctls.netCoreNetdevMaxBacklog to {minimum}: {advice} (AKS accepts "
        f"1,000..3,240,000; `wirespeed size backlog --line-rate-gbps {rate}` sizes it). It is create-only: changing "
        "it replaces the pool's nodes."
    )


def eks_fix(minimum, least, advice="the built-in profile 'throughput' is sized for 100 Gb/s"):
    return (
        f" Write net.core.netdev_max_backlog={minimum} (or anything from {least}) from a text/x-shellscript part and "
        "to /etc/sysctl.d (as "
        f"wirespeed's EKS node user data does: {advice}), or run the tuning agent with a profile that sets it."
    )


# The fixture pool is a Standard_D16s_v6 (12.5 Gb/s: 4,064 packets in the backlog's stall, so at least 4,064 and
# 4,096 recommended); its inline system pool a Standard_D4s_v6 (12.5 Gb/s); the launch template a c6in.8xlarge
# (50 Gb/s: at least 16,255, 16,384 recommended).
D16_FIX = "4,096 (any value from 4,064 passes)"
D16_RATE = "Standard_D16s_v6's line rate 12.5 Gb/s (catalog)"
BACKLOG_HOLDS = "the backlog must hold 4 ms of 1,500-byte packets at that rate"
ASSUMED = (
    "an assumed line rate of 25 Gb/s (a ConfigMap alone does not say which pools run it, and it has no "
    "wirespeed.io/line-rate-gbps annotation; policy setting defaultLineRateGbps)"
)
PROFILE = "profile 'throughput' (data['profile.json'])"
RX_HOLDS = "an RX ring must hold 1 ms of 1,500-byte packets at that rate"
RING_WHY = (
    "a small RX ring overflows during microbursts from the host NIC; Elastic's field report ('Debugging Azure "
    "Networking for Elastic Cloud Serverless') lost packets at 1,024 on Azure's Mellanox VF and none at 8,192."
)
# ENA is AWS's: its RX evidence is AWS's guidance, not Azure's VF.
ENA_RING_WHY = (
    "a small RX ring overflows during microbursts from the host NIC; AWS recommends an RX ring of 8,192 on ENA "
    "interfaces that use ENA Express (docs.aws.amazon.com/AWSEC2/latest/UserGuide/ena-express.html, Tune "
    "performance; ENA starts at 1,024)."
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
        "agent pool 'user': linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 1,000 (profile 'throughput'), below the "
        f"minimum 4,064 for {D16_RATE}, where {BACKLOG_HOLDS}: " + BACKLOG_WHY + aks_fix(D16_FIX, "12.5")
    ]


def test_aks_pool_backlog_unset_is_the_kernel_default():
    props = fixture("aks_agent_pool")
    del props["linuxOSConfig"]
    assert validate(BACKLOG, "pool", props, name="user") == [
        "agent pool 'user': linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is unset (the kernel default 1,000) (profile "
        f"'throughput'), below the minimum 4,064 for {D16_RATE}, where {BACKLOG_HOLDS}: "
        + BACKLOG_WHY
        + aks_fix(D16_FIX, "12.5")
    ]


def test_aks_inline_pool_backlog_names_the_pool():
    props = fixture("aks_cluster")
    props["agentPoolProfiles"][0]["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = 2048
    assert validate(BACKLOG, "cluster", props) == [
        "agentPoolProfiles[0] (system): linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 2,048, "
        "below the minimum 4,064 for Standard_D4s_v6's line rate 12.5 Gb/s (catalog), where "
        f"{BACKLOG_HOLDS}: " + BACKLOG_WHY + aks_fix(D16_FIX, "12.5")
    ]


def test_windows_pools_have_no_backlog_to_set():
    props = fixture("aks_agent_pool")
    del props["linuxOSConfig"]
    props["osType"] = "Windows"
    assert validate(BACKLOG, "pool", props) == []


def test_eks_user_data_with_a_low_backlog():
    props = launch_template(user_data_with_backlog(1000))
    assert validate(BACKLOG, "launch_template", props) == [
        "userData (EKS node) sets net.core.netdev_max_backlog to 1,000, below the minimum 16,255 for c6in.8xlarge's "
        f"line rate 50 Gb/s (catalog), where {BACKLOG_HOLDS}: " + BACKLOG_WHY + eks_fix(16384, "16,255")
    ]


def test_eks_user_data_without_the_backlog():
    props = launch_template(user_data_text().replace("net.core.netdev_max_backlog", "net.core.somaxconn"))
    assert validate(BACKLOG, "launch_template", props) == [
        "userData (EKS node) does not set net.core.netdev_max_backlog, so nodes keep the kernel default 1,000, below "
        f"the minimum 16,255 for c6in.8xlarge's line rate 50 Gb/s (catalog), where {BACKLOG_HOLDS}: "
        + BACKLOG_WHY
        + eks_fix(16384, "16,255")
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
        f"{PROFILE}: sysctls['net.core.netdev_max_backlog'] is 1,000, below the minimum 8,128 for {ASSUMED}, where "
        f"{BACKLOG_HOLDS}: " + BACKLOG_WHY + " Set it to 8,192 (any value from 8,128 passes): the built-in profile "
        "'balanced' is sized for 25 Gb/s (`wirespeed size backlog --line-rate-gbps 25`)."
    ]


def test_other_config_maps_are_not_profiles():
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}}
    assert validate(BACKLOG, "config_map", config_map) == []
    assert validate(RINGS, "config_map", config_map) == []


@pytest.mark.parametrize(
    ("config", "violations"),
    [
        pytest.param(None, 0, id="balanced-meets-the-assumed-25-gbps"),
        pytest.param({"minimumBacklog": 8193}, 1, id="a-floor-above-it-refuses-balanced"),
        pytest.param({"defaultLineRateGbps": 26}, 1, id="a-faster-assumed-line-rate-refuses-balanced"),
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


# --- the line-rate minimum at its boundaries ----------------------------------------------------------------------
# Standard_D96s_v6 sustains 41 Gb/s: 4 ms of 1,500-byte packets is 13,329, so a backlog of 13,329 holds them (16,384
# is what `size` recommends). c6in.16xlarge (100 Gb/s): 32,510. A ConfigMap annotated 100 Gb/s: 8,128 packets in
# an RX or TX ring's stall; mlx5_core rounds a ring up to a power of two, so any ring above 4,096 runs as 8,192.


def sized_pool(vm_size, backlog, profile="throughput"):
    props = pool(netCoreNetdevMaxBacklog=backlog)
    props["vmSize"] = vm_size
    props["nodeLabels"] = {"wirespeed.io/profile": profile}
    return props


@pytest.mark.parametrize(
    ("backlog", "violations"),
    [pytest.param(13329, 0, id="at-the-derived-minimum"), pytest.param(13328, 1, id="one-below")],
)
def test_aks_pool_backlog_boundary_follows_the_pools_line_rate(backlog, violations):
    assert len(validate(BACKLOG, "pool", sized_pool("Standard_D96s_v6", backlog))) == violations


@pytest.mark.parametrize(
    ("backlog", "violations"),
    [pytest.param(32510, 0, id="at-the-derived-minimum"), pytest.param(32509, 1, id="one-below")],
)
def test_eks_launch_template_backlog_boundary_follows_its_instance_type(backlog, violations):
    props = launch_template(user_data_with_backlog(backlog))
    props["instanceType"] = "c6in.16xlarge"
    assert len(validate(BACKLOG, "launch_template", props)) == violations


def annotated(edit=None, gbps="100", profile="throughput"):
    config_map = config_map_with(edit or (lambda d: None), profile)
    config_map["metadata"]["annotations"] = {"wirespeed.io/line-rate-gbps": gbps}
    return config_map


@pytest.mark.parametrize(
    ("direction", "value", "violations"),
    [
        pytest.param("rx", 4097, 0, id="rx-runs-as-8192"),
        pytest.param("rx", 4096, 1, id="rx-one-below"),
        pytest.param("tx", 4097, 0, id="tx-runs-as-8192"),
        pytest.param("tx", 4096, 1, id="tx-one-below"),
    ],
)
def test_ring_boundary_follows_the_declared_line_rate(direction, value, violations):
    config_map = annotated(lambda d: d["rings"]["mlx5_core"].update({direction: value}))
    assert len(validate(RINGS, "config_map", config_map)) == violations


def test_a_25_gbps_pool_with_balanced_passes():
    assert validate(BACKLOG, "pool", sized_pool("c6in.large", 8192, "balanced")) == []
    assert validate(RINGS, "config_map", annotated(gbps="25", profile="balanced")) == []
    assert validate(BACKLOG, "config_map", annotated(gbps="25", profile="balanced")) == []


def test_a_100_gbps_pool_with_balanced_fails_and_says_why():
    assert validate(BACKLOG, "pool", sized_pool("c6in.16xlarge", 8192, "balanced"), name="ingest") == [
        "agent pool 'ingest': linuxOSConfig.sysctls.netCoreNetdevMaxBacklog is 8,192 (profile 'balanced'), below the "
        f"minimum 32,510 for c6in.16xlarge's line rate 100 Gb/s (catalog), where {BACKLOG_HOLDS}: "
        + BACKLOG_WHY
        + aks_fix(
            "32,768 (any value from 32,510 passes)", "100", "the built-in profile 'throughput' is sized for 100 Gb/s"
        )
    ]
    messages = validate(RINGS, "config_map", annotated(profile="balanced"))
    assert messages[0] == (
        "profile 'balanced' (data['profile.json']): rings.ena.rx is 2,048, below the minimum 8,128 for the line rate "
        f"100 Gb/s its annotation wirespeed.io/line-rate-gbps declares, where {RX_HOLDS}: " + ENA_RING_WHY + " Set "
        "rings.ena.rx to 8,192 (any value from 8,128 passes): the built-in profile 'throughput' is sized for 100 Gb/s "
        "(`wirespeed size rings "
        "--driver ena --line-rate-gbps 100` sizes it)."
    )
    assert len(messages) == 7  # RX and TX of every driver but ENA's TX (its max, 1,024, is what it has)


def test_a_bad_line_rate_annotation_falls_back_to_the_default_and_says_so():
    (message,) = validate(
        BACKLOG,
        "config_map",
        annotated(lambda d: d["sysctls"].update({"net.core.netdev_max_backlog": 1000}), gbps="fast"),
    )
    assert (
        "an assumed line rate of 25 Gb/s (its annotation wirespeed.io/line-rate-gbps 'fast' is not a line rate"
        in message
    )


# --- nic-ring-minimum ---------------------------------------------------------------------------------------------


def test_compliant_profile_passes_the_ring_rule():
    assert validate(RINGS, "config_map", tuning_objects()["ConfigMap"]) == []


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(
            set_ring("mlx5_core", 1024),
            f"{PROFILE}: rings.mlx5_core.rx is 1,024, below the minimum 2,032 for {ASSUMED}, where {RX_HOLDS}: "
            + RING_WHY
            + " Set rings.mlx5_core.rx to 2,048 (any value from 2,032 passes): the built-in profile 'balanced' is "
            "sized for 25 Gb/s (`wirespeed "
            "size rings --driver mlx5_core --line-rate-gbps 25` sizes it).",
            id="below-minimum",
        ),
        pytest.param(
            set_ring("ena", 1024),
            f"{PROFILE}: rings.ena.rx is 1,024, below the minimum 2,032 for {ASSUMED}, where {RX_HOLDS}: "
            + ENA_RING_WHY
            + " Set rings.ena.rx to 2,048 (any value from 2,032 passes): the built-in profile 'balanced' is sized for "
            "25 Gb/s (`wirespeed "
            "size rings --driver ena --line-rate-gbps 25` sizes it).",
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
            f"{PROFILE}: rings.virtio_net.rx is 512, below the minimum 2,032 for {ASSUMED}, where {RX_HOLDS}, held to "
            "virtio_net's max 1,024: "
            + RING_WHY
            + " Set rings.virtio_net.rx to 1,024: the built-in profile 'balanced' is sized for 25 Gb/s (`wirespeed "
            "size rings --driver virtio_net --line-rate-gbps 25` sizes it).",
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
            set_ring("bnxt_en", 1024),
            f"{PROFILE}: rings.bnxt_en.rx is 1,024, below the minimum 2,032 for {ASSUMED}, where {RX_HOLDS}: "
            + RING_WHY
            + " Set rings.bnxt_en.rx to 2,048 (any value from 2,032 passes): the built-in profile 'balanced' is sized "
            "for 25 Gb/s (`wirespeed size "
            "rings --driver bnxt_en --line-rate-gbps 25` sizes it).",
            id="driver-not-in-the-catalog",
        ),
    ],
)
def test_ring_rule_one_ring_changed(edit, expected):
    assert validate(RINGS, "config_map", config_map_with(edit)) == [expected]


def test_ring_minimum_reads_its_config():
    assert validate(RINGS, "config_map", config_map_with(set_ring("mlx5_core", 2048))) == []
    # A floor: 16,384 RX; mlx5_core, mlx4_en and mana are held to their max 8,192 (met); only ENA's max allows more.
    (message,) = validate(RINGS, "config_map", tuning_objects()["ConfigMap"], {"minimumRxRing": 16384})
    assert "Set rings.ena.rx to 16,384: policy setting minimumRxRing asks for it whatever the line rate" in message
    assert message.startswith(
        f"{PROFILE}: rings.ena.rx is 8,192, below the minimum 16,384 that policy setting minimumRxRing sets, where "
        f"{ASSUMED} alone needs 2,032: a small RX ring"
    )
    # The built-in balanced profile (sized for 25 Gb/s) meets the assumed 25 Gb/s; a 100 Gb/s default refuses every
    # driver's RX and TX (ENA's TX max is 1,024: met).
    assert validate(RINGS, "config_map", tuning_objects("balanced")["ConfigMap"]) == []
    assert (
        len(validate(RINGS, "config_map", tuning_objects("balanced")["ConfigMap"], {"defaultLineRateGbps": 100})) == 7
    )


# --- remediation --------------------------------------------------------------------------------------------------


def test_remediation_raises_a_profiles_rings_and_lowers_rings_above_the_max():
    edited = config_map_with(lambda d: (set_ring("mlx5_core", 1024)(d), set_ring("mana", 16384)(d)))
    fixed = remediate(RINGS, "config_map", edited)
    document = profile_document(fixed)
    assert document["rings"]["mlx5_core"] == {"rx": 2048, "tx": THROUGHPUT_TX["mlx5_core"]}
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
    assert fixed["data"]["profile.json"] == original.replace(f": {THROUGHPUT_BACKLOG}", ": 8192")


@pytest.mark.parametrize(
    ("rule", "kind", "props"),
    [
        pytest.param(BACKLOG, "pool", pool(netCoreNetdevMaxBacklog=1000), id="aks-pool-is-create-only"),
        pytest.param(BACKLOG, "launch_template", launch_template(user_data_with_backlog(1000)), id="eks"),
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
    assert profile_document(fixed)["sysctls"]["net.core.netdev_max_backlog"] == 8192


def test_remediation_keeps_a_secret_profile_secret():
    edited = config_map_with(set_backlog(1000))
    edited["data"]["profile.json"] = {**SECRET_SIG, "value": edited["data"]["profile.json"]}
    fixed = remediate(BACKLOG, "config_map", edited)
    secret = fixed["data"]["profile.json"]
    assert {k: v for k, v in secret.items() if k != "value"} == SECRET_SIG
    assert json.loads(secret["value"])["sysctls"]["net.core.netdev_max_backlog"] == 8192


def test_remediation_keeps_unknown_values_elsewhere_in_the_config_map():
    edited = config_map_with(set_backlog(1000))
    edited["metadata"]["namespace"] = UNKNOWN_STRING_VALUE
    fixed = remediate(BACKLOG, "config_map", edited)
    assert fixed["metadata"]["namespace"] == UNKNOWN_STRING_VALUE
    assert profile_document(fixed)["sysctls"]["net.core.netdev_max_backlog"] == 8192


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


# --- nic-ring-minimum on AKS: ENA settings cannot apply ------------------------------------------------------------

AKS_TUNING = "urn:pulumi:dev::wirespeed::wirespeed:index:NetworkOptimizedCluster$wirespeed:index:NodeTuning::tuning"


def _validate_under(
    parent, props, urn="urn:pulumi:dev::wirespeed::wirespeed:index:NodeTuning$kubernetes:core/v1:ConfigMap::subject"
):
    """The ring policy on a ConfigMap ``urn`` whose parent is ``parent`` (a URN), as the engine hands it over."""
    from pulumi_policy import ResourceValidationArgs

    from fixtures.rules.engine import TYPES, _options, _policy, engine_props

    args = ResourceValidationArgs(
        TYPES["config_map"],
        engine_props(props),
        urn,
        "subject",
        _options(parent),
        None,
        None,
    )
    messages: list[str] = []
    _policy(RINGS).validate(args, lambda message, urn=None: messages.append(message))
    return messages


def test_on_aks_ena_rings_are_not_flagged_and_the_vf_rings_cite_azures_evidence():
    """balanced at 100 Gb/s is below every driver's minimum; deployed by NetworkOptimizedCluster (an AKS node),
    rings.ena cannot apply (no Azure VM has an ENA NIC), so neither it nor AWS's ENA Express guidance appears,
    while the Azure VF drivers are still flagged with the Azure field evidence."""
    messages = _validate_under(AKS_TUNING, annotated(profile="balanced"))
    assert [m.split(": ")[1].split(" is ")[0] for m in messages] == [
        "rings.mana.rx",
        "rings.mana.tx",
        "rings.mlx4_en.rx",
        "rings.mlx4_en.tx",
        "rings.mlx5_core.rx",
        "rings.mlx5_core.tx",
    ]
    assert not any("ena" in m.split(" is ")[0] or "AWS" in m or "ENA" in m for m in messages)
    assert RING_WHY in messages[4]
    # The same ConfigMap with no AKS parent (a NodeTuning of its own, cloud unknown) still checks rings.ena.
    alone = _validate_under(None, annotated(profile="balanced"))
    assert [m for m in alone if "rings.ena." in m] == alone[:1]
    assert ENA_RING_WHY in alone[0]
    assert alone[1:] == messages


def test_on_aks_remediation_leaves_ena_rings_alone():
    from fixtures.rules.engine import TYPES
    from wirespeed.rules import nic_ring_minimum
    from wirespeed.rules._model import Resource

    config_map = annotated(profile="balanced")
    resource = Resource(
        TYPES["config_map"],
        "subject",
        "urn:pulumi:dev::wirespeed::wirespeed:index:NodeTuning$kubernetes:core/v1:ConfigMap::subject",
        config_map,
        parent=AKS_TUNING,
    )
    fixed = nic_ring_minimum.remediate_rings(resource, {})
    assert fixed is not None
    rings = json.loads(fixed["data"]["profile.json"])["rings"]
    assert rings["ena"] == profile_document(config_map)["rings"]["ena"]  # untouched: it cannot apply on AKS
    assert rings["mlx5_core"]["rx"] == 8192


def test_on_aks_by_its_own_urn_or_an_azure_native_parent_ena_rings_are_not_flagged():
    """The ConfigMap's own URN under NetworkOptimizedCluster (no parent given), or a parent of an azure-native type,
    places it on AKS just as a NetworkOptimizedCluster parent does."""

    def flagged(urn, parent):
        messages = _validate_under(parent, annotated(profile="balanced"), urn)
        return sorted({m.split(": ")[1].split(".")[1] for m in messages})

    own = f"urn:pulumi:dev::wirespeed::{AKS_TUNING.split('::')[2]}$kubernetes:core/v1:ConfigMap::subject"
    assert flagged(own, None) == ["mana", "mlx4_en", "mlx5_core"]
    azure_native = "urn:pulumi:dev::wirespeed::azure-native:containerservice:ManagedCluster::aks"
    assert flagged("urn:pulumi:dev::wirespeed::kubernetes:core/v1:ConfigMap::subject", azure_native) == [
        "mana",
        "mlx4_en",
        "mlx5_core",
    ]
    # A ConfigMap of no component at all (its type alone in the URN, no parent): its cloud is unknown, ena is judged.
    assert flagged("urn:pulumi:dev::wirespeed::kubernetes:core/v1:ConfigMap::subject", None) == [
        "ena",
        "mana",
        "mlx4_en",
        "mlx5_core",
    ]


def test_on_aks_a_lab_drivers_rings_are_still_judged():
    """Only AWS's drivers are out of place on AKS: a driver of neither cloud's catalog NICs (virtio_net, a lab
    driver) is still held to its minimum there."""
    messages = _validate_under(AKS_TUNING, annotated(set_ring("virtio_net", 256), profile="balanced"))
    assert any(m.split(": ")[1].startswith("rings.virtio_net.rx is 256") for m in messages), messages

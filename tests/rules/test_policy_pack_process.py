"""The real pack process, driven as the Pulumi engine drives it.

The CLI starts a Python pack through its `pulumi-analyzer-policy-python` shim, which runs
`python3 -u -m pulumi.policy ENGINE_ADDRESS PACK_DIR` from the pack's virtualenv (pulumi/pulumi
sdk/python/dist/pulumi-analyzer-policy-python), with PULUMI_PROJECT, PULUMI_STACK and PULUMI_DRY_RUN set; the
pack's PolicyPack prints its gRPC port on stdout. Here the interpreter is this repository's virtualenv, which holds
what policies/wirespeed/requirements.txt installs. No Pulumi engine runs: ENGINE_ADDRESS points where nothing
listens (the pack only uses it to log a crash), and the tests call the Analyzer service with requests built the way
the engine builds them (properties in a google.protobuf.Struct, unknowns as Pulumi's sentinel strings), using the
protobuf stubs shipped in the `pulumi` package.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc, plugin_pb2
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE
from pulumi_policy.version import VERSION as POLICY_SDK_VERSION

from fixtures.rules.engine import config_map_with, fixture, nap_objects, tuning_objects
from wirespeed import rules

ROOT = Path(__file__).resolve().parents[2]
PACK = ROOT / "policies" / "wirespeed"
STACK = "urn:pulumi:dev::wirespeed"
CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
START_TIMEOUT_S = 60  # a loaded 2-core CI machine imports grpc and the SDK slowly; this only bounds a hang


def unused_address() -> str:
    """A loopback address nothing listens on: the engine address the pack is given but never needs."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture(scope="module")
def analyzer() -> Iterator[analyzer_pb2_grpc.AnalyzerStub]:
    env = {**os.environ, "PULUMI_PROJECT": "wirespeed", "PULUMI_STACK": "dev", "PULUMI_DRY_RUN": "true"}
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", unused_address(), str(PACK)],
        cwd=PACK,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(process.stdout.readline() if process.stdout else ""), daemon=True).start()
    try:
        try:
            first = lines.get(timeout=START_TIMEOUT_S)
        except queue.Empty:
            pytest.fail(f"the pack printed no port within {START_TIMEOUT_S} s")
        if not first.strip().isdigit():
            process.kill()
            pytest.fail(f"the pack did not print its port: {first!r}; stderr: {process.communicate()[1]}")
        with grpc.insecure_channel(f"127.0.0.1:{int(first)}") as channel:
            grpc.channel_ready_future(channel).result(timeout=START_TIMEOUT_S)
            yield analyzer_pb2_grpc.AnalyzerStub(channel)
    finally:
        process.terminate()
        process.wait(timeout=30)


def struct(props: Mapping[str, Any]) -> struct_pb2.Struct:
    """Properties as the engine marshals them: a Struct, so every number is a double on the wire."""
    message = struct_pb2.Struct()
    message.update(props)
    return message


def request(type_token: str, name: str, props: Mapping[str, Any]) -> analyzer_pb2.AnalyzeRequest:
    return analyzer_pb2.AnalyzeRequest(
        type=type_token,
        name=name,
        urn=f"{STACK}::{type_token}::{name}",
        properties=struct(props),
        options=analyzer_pb2.AnalyzerResourceOptions(),
    )


def configure(analyzer: analyzer_pb2_grpc.AnalyzerStub, config: Mapping[str, Any] | None = None) -> None:
    """What the engine sends from --policy-pack-config: per policy, an enforcement level and its properties."""
    levels = {
        "advisory": analyzer_pb2.ADVISORY,
        "mandatory": analyzer_pb2.MANDATORY,
        "remediate": analyzer_pb2.REMEDIATE,
        "disabled": analyzer_pb2.DISABLED,
    }
    config = config or {}
    resolved = rules.resolve_config(config)
    policy_config = {}
    for rule in rules.RULES:
        entry = config.get(rule.id)
        settings = {k: v for k, v in entry.items() if k != rules.LEVEL_KEY} if isinstance(entry, dict) else {}
        level = levels[resolved.level(rule.id)]
        policy_config[rule.id] = analyzer_pb2.PolicyConfig(enforcementLevel=level, properties=struct(settings))
    analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=policy_config))


def diagnostics(response: analyzer_pb2.AnalyzeResponse) -> list[tuple[str, int, str, str]]:
    return [(d.policyName, d.enforcementLevel, d.urn, d.message) for d in response.diagnostics]


def description(rule_id: str) -> str:
    return rules.rule(rule_id).description


def test_analyzer_info_lists_every_rule_with_its_metadata(analyzer):
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == "wirespeed"
    assert info.supportsConfig
    assert [p.name for p in info.policies] == [r.id for r in rules.RULES]
    by_name = {p.name: p for p in info.policies}
    for rule in rules.RULES:
        policy = by_name[rule.id]
        assert policy.description == rule.description
        assert policy.remediation_steps == rule.remediation
        assert analyzer_pb2.EnforcementLevel.Name(policy.enforcementLevel).lower() == rule.default_enforcement
        assert analyzer_pb2.PolicySeverity.Name(policy.severity) == f"POLICY_SEVERITY_{rule.severity.upper()}"
        expected_type = "POLICY_TYPE_STACK" if rule.scope == "stack" else "POLICY_TYPE_RESOURCE"
        assert analyzer_pb2.PolicyType.Name(policy.policy_type) == expected_type
        schema = {k: dict(v) for k, v in policy.configSchema.properties.items()}
        assert schema == {k: dict(v) for k, v in rule.config_schema.items()}
    assert analyzer.GetPluginInfo(empty_pb2.Empty()) == plugin_pb2.PluginInfo(version=POLICY_SDK_VERSION)


def ports_zero() -> dict[str, Any]:
    props = fixture("aks_cluster")
    props["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"] = 0
    return props


def test_a_compliant_cluster_comes_back_clean(analyzer):
    configure(analyzer)
    response = analyzer.Analyze(request(CLUSTER, "aks", fixture("aks_cluster")))
    assert diagnostics(response) == []


def test_violations_come_back_over_the_wire_with_the_rules_message(analyzer):
    configure(analyzer)
    response = analyzer.Analyze(request(CLUSTER, "aks", ports_zero()))
    ((name, level, urn, message),) = diagnostics(response)
    assert (name, level, urn) == ("aks-allocated-outbound-ports-default", analyzer_pb2.MANDATORY, "")
    # The SDK sends the policy's description, then the violation's message.
    resource = rules.Resource(CLUSTER, "aks", f"{STACK}::{CLUSTER}::aks", ports_zero())
    (expected,) = rules.evaluate_resource(resource)
    assert message == f"{description(name)}\n{expected.message}"
    assert "cut to 512 on every node the moment the backend pool reaches 51 nodes" in message


def test_unknown_values_during_preview_are_not_applicable_not_a_crash(analyzer):
    configure(analyzer)
    props = fixture("aks_cluster")
    props["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"] = UNKNOWN_NUMBER_VALUE
    props["agentPoolProfiles"][0]["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = UNKNOWN_NUMBER_VALUE
    assert diagnostics(analyzer.Analyze(request(CLUSTER, "aks", props))) == []


def test_config_sets_thresholds_and_levels(analyzer):
    props = fixture("aks_cluster")
    props["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"] = 1024
    configure(analyzer, {"aks-snat-ports-minimum": {"enforcementLevel": "advisory", "minimumPorts": 2048}})
    ((name, level, _, message),) = diagnostics(analyzer.Analyze(request(CLUSTER, "aks", props)))
    assert (name, level) == ("aks-snat-ports-minimum", analyzer_pb2.ADVISORY)
    assert "allocatedOutboundPorts is 1,024, below the minimum of 2,048 (policy setting minimumPorts)" in message
    configure(analyzer, {"all": "disabled"})
    assert diagnostics(analyzer.Analyze(request(CLUSTER, "aks", ports_zero()))) == []
    configure(analyzer)


def test_analyze_stack_reports_on_the_cluster_urn(analyzer):
    configure(analyzer)
    cluster = fixture("aks_cluster")
    cluster["networkProfile"]["loadBalancerProfile"]["managedOutboundIPs"]["count"] = 6
    pool = fixture("aks_agent_pool")
    pool["resourceName"] = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # unknown during preview: linked by dependency
    cluster_urn, pool_urn = f"{STACK}::{CLUSTER}::aks", f"{STACK}::{POOL}::user"
    stack = analyzer_pb2.AnalyzeStackRequest(
        resources=[
            analyzer_pb2.AnalyzerResource(type=CLUSTER, name="aks", urn=cluster_urn, properties=struct(cluster)),
            analyzer_pb2.AnalyzerResource(
                type=POOL,
                name="user",
                urn=pool_urn,
                properties=struct(pool),
                dependencies=[cluster_urn],
                propertyDependencies={"resourceName": analyzer_pb2.AnalyzerPropertyDependencies(urns=[cluster_urn])},
            ),
        ]
    )
    found = diagnostics(analyzer.AnalyzeStack(stack))
    assert [(name, level, urn) for name, level, urn, _ in found] == [
        ("aks-snat-capacity", analyzer_pb2.MANDATORY, cluster_urn),
        ("tuning-agent-present", analyzer_pb2.MANDATORY, cluster_urn),
    ]
    assert "4,000 x 103 nodes" in found[0][3]
    assert "6 managed outbound IP(s) x 64,000 = 384,000 are available" in found[0][3]


def test_remediate_raises_a_profiles_ring_over_the_wire(analyzer):
    configure(analyzer, {"nic-ring-minimum": "remediate", "netdev-backlog-minimum": "remediate"})
    edited = config_map_with(
        lambda d: (d["rings"]["mlx5_core"].update(rx=1024), d["sysctls"].update({"net.core.netdev_max_backlog": 1000}))
    )
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "s3cret"}
    # how the engine marshals a secret; the line rate the ConfigMap declares sizes the minimums (100 Gb/s)
    edited["metadata"]["annotations"] = {"example.com/token": secret, "wirespeed.io/line-rate-gbps": "100"}
    response = analyzer.Remediate(request(CONFIG_MAP, "profile", edited))
    assert [r.policyName for r in response.remediations] == ["netdev-backlog-minimum", "nic-ring-minimum"]
    final = json_format.MessageToDict(response.remediations[-1].properties)
    document = json.loads(final["data"]["profile.json"])
    assert document["rings"]["mlx5_core"]["rx"] == 8192
    assert document["sysctls"]["net.core.netdev_max_backlog"] == 32768
    assert final["metadata"]["annotations"]["example.com/token"] == secret  # still a secret
    # After remediation the engine analyses the new properties: nothing left to report.
    assert diagnostics(analyzer.Analyze(request(CONFIG_MAP, "profile", final))) == []
    configure(analyzer)


RING_1024 = config_map_with(lambda d: d["rings"]["mlx5_core"].update(rx=1024))
BACKLOG_1000 = {**fixture("aks_agent_pool"), "linuxOSConfig": {"sysctls": {"netCoreNetdevMaxBacklog": 1000}}}
# A pool of a 100 Gb/s size labelled with the balanced profile (its backlog, 8,192, is sized for 25 Gb/s).
BALANCED_AT_100_GBPS = {
    **fixture("aks_agent_pool"),
    "vmSize": "c6in.16xlarge",
    "nodeLabels": {"wirespeed.io/profile": "balanced"},
    "linuxOSConfig": {"sysctls": {"netCoreNetdevMaxBacklog": 8192}},
}


@pytest.mark.parametrize(
    ("type_token", "props", "rule_id", "says"),
    [
        pytest.param(
            CLUSTER,
            ports_zero(),
            "aks-allocated-outbound-ports-default",
            "Set networkProfile.loadBalancerProfile.allocatedOutboundPorts explicitly",
            id="allocated-ports-0",
        ),
        pytest.param(CONFIG_MAP, RING_1024, "nic-ring-minimum", "Set rings.mlx5_core.rx to 2,048", id="ring-1024"),
        pytest.param(
            POOL,
            BACKLOG_1000,
            "netdev-backlog-minimum",
            "Set linuxOSConfig.sysctls.netCoreNetdevMaxBacklog to 4,096 (any value from 4,064 passes)",
            id="backlog-1000",
        ),
        pytest.param(
            POOL,
            BALANCED_AT_100_GBPS,
            "netdev-backlog-minimum",
            "is 8,192 (profile 'balanced'), below the minimum 32,510 for c6in.16xlarge's line rate 100 Gb/s",
            id="balanced-on-a-100-gbps-pool",
        ),
    ],
)
def test_each_misconfiguration_from_a_pull_request_is_stopped(analyzer, type_token, props, rule_id, says):
    configure(analyzer)
    found = diagnostics(analyzer.Analyze(request(type_token, "subject", props)))
    assert [(name, level) for name, level, _, _ in found] == [(rule_id, analyzer_pb2.MANDATORY)]
    assert says in found[0][3]


def test_the_tuning_objects_wirespeed_renders_pass(analyzer):
    configure(analyzer)
    for kind, obj in tuning_objects().items():
        type_token = {"ConfigMap": CONFIG_MAP, "DaemonSet": "kubernetes:apps/v1:DaemonSet"}[kind]
        assert diagnostics(analyzer.Analyze(request(type_token, kind.lower(), obj))) == []


# --- `wirespeed check` agrees with the engine (issue 17) --------------------------------------------------------
# Each case: what the engine hands the pack process over gRPC, and the `pulumi stack export` it came from, checked
# by `wirespeed check`'s code path. The verdicts must be the same rule, level and message.

NO_AGENT_CHECK = {"tuning-agent-present": "disabled"}  # these stacks have no DaemonSet; not what is compared


def checked(document: dict[str, Any], config: Mapping[str, Any], passphrase: str | None = None) -> list[Any]:
    from wirespeed.check import StackSecrets, check_text

    secrets = StackSecrets(passphrase=passphrase, source="PULUMI_CONFIG_PASSPHRASE")
    report = check_text(json.dumps(document), "export.json", rules.resolve_config(config), secrets=secrets)
    return list(report.violations)


def pack_messages(response: analyzer_pb2.AnalyzeResponse) -> list[tuple[str, int, str]]:
    """(policy, level, message) with the SDK's leading description line taken off."""
    return [(name, level, message.split("\n", 1)[1]) for name, level, _, message in diagnostics(response)]


LEVEL = {"mandatory": analyzer_pb2.MANDATORY, "advisory": analyzer_pb2.ADVISORY}


# The secrets, stack-outputs, missing-outputs and misspelt-config cases that stood here are the real engine's now:
# tests/engine/test_engine_differential.py runs `pulumi policy analyze` on the same stack exports and compares rule,
# URN,
# level and message with `wirespeed check`.


NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
NAT_PEAK = {"aws-natgw-capacity": {"peakConnectionsPerDestination": 120_000}}


def regional_nat(*zones: tuple[str, int]) -> dict[str, Any]:
    """A regional gateway's inputs as pulumi-aws registers them: availabilityZoneAddresses per AZ, or none."""
    props: dict[str, Any] = {"availabilityMode": "regional", "connectivityType": "public", "vpcId": "vpc-0a"}
    if zones:
        props["availabilityZoneAddresses"] = [
            {"availabilityZone": az, "allocationIds": [f"eipalloc-{az}-{i}" for i in range(ips)]} for az, ips in zones
        ]
    return props


def test_nat_gateways_in_both_modes_over_the_wire(analyzer):
    """Numbers arrive as doubles and lists as read-only proxies: the rule still counts IPs per AZ of a regional
    gateway, and the per-gateway quota is advisory and only about zonal ones."""
    configure(analyzer, NAT_PEAK)
    (short,) = diagnostics(
        analyzer.Analyze(request(NAT_GATEWAY, "regional", regional_nat(("eu-west-1a", 3), ("eu-west-1b", 2))))
    )
    assert short[:2] == ("aws-natgw-capacity", analyzer_pb2.MANDATORY)
    assert "eu-west-1b: 2 IP(s) (availabilityZoneAddresses[1].allocationIds)" in short[3]
    assert "eu-west-1a" not in short[3]
    # 11 IPs per AZ: far beyond a zonal gateway's 8 and its default quota of 2, and both rules pass.
    wide = regional_nat(("eu-west-1a", 11), ("eu-west-1b", 11))
    configure(analyzer, {"aws-natgw-capacity": {"peakConnectionsPerDestination": 600_000}})
    assert diagnostics(analyzer.Analyze(request(NAT_GATEWAY, "regional", wide))) == []
    assert diagnostics(analyzer.Analyze(request(NAT_GATEWAY, "automatic", regional_nat()))) == []
    # A zonal gateway with 3 IPs carries 120,000 but needs the per-gateway quota raised: advisory, naming the quota.
    configure(analyzer, NAT_PEAK)
    ((name, level, _, message),) = diagnostics(analyzer.Analyze(request(NAT_GATEWAY, "zonal", fixture("nat_gateway"))))
    assert (name, level) == ("aws-natgw-eip-quota", analyzer_pb2.ADVISORY)
    assert "'Elastic IP addresses per public NAT gateway' (Service Quotas: vpc L-5F53652F) is raised to 3" in message
    configure(analyzer, {**NAT_PEAK, "aws-natgw-eip-quota": {"accountQuota": 3}})
    assert diagnostics(analyzer.Analyze(request(NAT_GATEWAY, "zonal", fixture("nat_gateway")))) == []
    configure(analyzer)


def test_a_nap_node_pool_counts_in_its_clusters_snat_in_the_engine_and_in_check(analyzer):
    """Two clusters, each under its own NetworkOptimizedCluster; the NodePool's parent links it to one of them. The
    real pack (parents arrive as URNs in AnalyzerResource.parent) and `wirespeed check` on the stack export (its
    ``parent`` fields) count it for that cluster only, at its node ceiling plus disruption budget."""
    from secret_exports import export, state

    configure(analyzer, NO_AGENT_CHECK)
    component = "wirespeed:azure:NetworkOptimizedCluster"
    node_pool = "kubernetes:karpenter.sh/v1:NodePool"
    # Both: 6 inline nodes x 4,000 ports. checkout has 3 IPs (192,000 ports): its 6 + 40 + 4 NAP nodes (200,000) do
    # not fit. other has 1 IP (64,000): its own 6 nodes fit, and would not with the NodePool's 44.
    checkout = fixture("aks_cluster")
    checkout["networkProfile"]["loadBalancerProfile"]["managedOutboundIPs"]["count"] = 3
    other = fixture("aks_cluster")
    other["resourceName"] = "aks-other"
    other["networkProfile"]["loadBalancerProfile"]["managedOutboundIPs"]["count"] = 1
    urns = {name: f"{STACK}::{t}::{name}" for t, name in [(component, "checkout"), (component, "other")]}
    members = [
        (CLUSTER, "aks", checkout, urns["checkout"]),
        (CLUSTER, "aks-other", other, urns["other"]),
        (node_pool, "net", nap_objects()["NodePool"], urns["checkout"]),
    ]
    engine_resources = [
        analyzer_pb2.AnalyzerResource(type=component, name=name, urn=u, properties=struct({}))
        for name, u in urns.items()
    ] + [
        analyzer_pb2.AnalyzerResource(
            type=t, name=name, urn=f"{STACK}::{t}::{name}", properties=struct(props), parent=parent
        )
        for t, name, props, parent in members
    ]
    response = analyzer.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=engine_resources))
    assert [(name, u) for name, _, u, _ in diagnostics(response)] == [("aks-snat-capacity", f"{STACK}::{CLUSTER}::aks")]
    engine = pack_messages(response)
    assert "4,000 x 50 nodes" in engine[0][2]
    assert "NodePool net: limits.cpu 640 / 16 vCPU = 40 max + budget 10% = 4 replacing" in engine[0][2]
    components = [{"urn": u, "custom": False, "type": component, "inputs": {}, "outputs": {}} for u in urns.values()]
    exported = [state(t, name, props) | {"parent": parent} for t, name, props, parent in members]
    checked_found = checked(export([*components, *exported]), NO_AGENT_CHECK)
    assert [(v.rule_id, LEVEL[v.enforcement], v.message) for v in checked_found] == engine
    # Without the tree the NodePool belongs to no single cluster: both count it, and the message says so.
    unparented = checked(export([state(t, name, props) for t, name, props, _ in members]), NO_AGENT_CHECK)
    assert [v.resource_name for v in unparented] == ["aks", "aks-other"]
    assert "linked to no single cluster so counted for each" in unparented[1].message
    configure(analyzer)

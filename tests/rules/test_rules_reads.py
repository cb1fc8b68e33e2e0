"""Every rule declares the properties it reads (``Rule.reads``), and the declaration is true.

- Each rule runs over a corpus of documents (the rules' Pulumi fixtures and one-field variants that take each
  branch, and every resource of the Terraform fixture plans as ``wirespeed check`` translates it) with its props
  behind recording read-only views (tests/rules_reads.py): every path it reads is declared, and every declared
  path is read on at least one document, so the declaration cannot drift from the code.
- The Terraform translation gives every declared path from some Terraform attribute, or the rule says why not
  (``not_in_terraform`` / ``no_terraform_type``); an excuse the translation has outgrown fails too.
- End to end, per rule: one attribute changed in a passing Terraform plan fixture makes `wirespeed check` report
  the rule on that resource.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import functools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from clirun import invoke
from conftest import ROOT
from fixtures.rules.engine import TYPES as ENGINE_TYPES
from fixtures.rules.engine import (
    engine_props,
    fixture,
    launch_template,
    nap_objects,
    tuning_objects,
    user_data_with_backlog,
)
from rules_reads import Recording, covers, present, steps
from test_check_terraform import TRANSLATIONS as TRANSLATION_CASES
from wirespeed.catalog.karpenter_azure import GROUP, NODE_CLASS_VERSIONS
from wirespeed.check import check_text
from wirespeed.check import terraform as tf
from wirespeed.check.readers import Document
from wirespeed.rules import RULES, Resource, Rule, resolve_config, type_key, viewing
from wirespeed.rules._model import Reads
from wirespeed.rules._node_pools import NODE_POOL_TYPES
from wirespeed.rules.netdev_backlog_minimum import EC2_NODE_CLASS_TYPES
from wirespeed.values import NotKnown, SecretNotReadable, plain

TERRAFORM = ROOT / "tests" / "fixtures" / "terraform"
PLANS = sorted(TERRAFORM.glob("*/plan.json"))
RULE_IDS = [r.id for r in RULES]
# The engine fixture's resource types, plus the two only this test's corpus registers.
TYPES = {
    **ENGINE_TYPES,
    "node_tuning": "wirespeed:index:NodeTuning",
    "internet_gateway": "aws:ec2/internetGateway:InternetGateway",
    "autoscaling_group": "aws:autoscaling/group:Group",
    "cfn_stack": "aws:cloudformation/stack:Stack",
    "launch_configuration": "aws:ec2/launchConfiguration:LaunchConfiguration",
}
REASON = {"wirespeed.io.not-network-optimised-reason": "batch jobs, reviewed"}
# Settings beside each rule's defaults, so branches behind a setting run too (the NAT rules are off at peak 0).
SETTINGS: dict[str, list[dict[str, Any]]] = {
    "aws-natgw-capacity": [{"peakConnectionsPerDestination": 200_000}, {"peakConnectionsPerDestination": 10**9}],
    "aws-natgw-eip-quota": [{"accountQuota": 1}],
    "network-optimised-sku": [{"acceptWrittenReason": False}],
}

Doc = tuple[str, str, dict[str, Any]]  # (TYPES key or token, name, props)


# --- the corpus -------------------------------------------------------------------------------------------------


def _edited(props: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    changed = copy.deepcopy(props)
    edit(changed)
    return changed


def _lb(props: dict[str, Any]) -> dict[str, Any]:
    profile: dict[str, Any] = props["networkProfile"]["loadBalancerProfile"]
    return profile


def _cluster_variants() -> Iterator[Doc]:
    cluster = fixture("aks_cluster")
    yield "cluster", "compliant", cluster

    def outputs_only(p: dict[str, Any]) -> None:  # a stack export's outputs: `name`, not `resourceName`
        p["name"] = p.pop("resourceName")

    def listed_ips(p: dict[str, Any]) -> None:
        _lb(p).pop("managedOutboundIPs", None)
        _lb(p)["outboundIPs"] = {"publicIPs": [{"id": "/pip/a"}]}

    def prefix(p: dict[str, Any]) -> None:
        _lb(p).pop("managedOutboundIPs", None)
        _lb(p)["outboundIPPrefixes"] = {"publicIPPrefixes": [{"id": "/prefix/a"}]}

    def slow_with_reason(p: dict[str, Any]) -> None:
        p["agentPoolProfiles"][0] |= {"vmSize": "Standard_D4s_v3", "tags": REASON}

    def default_ports(p: dict[str, Any]) -> None:
        _lb(p)["allocatedOutboundPorts"] = 0

    def low_backlog(p: dict[str, Any]) -> None:  # below what its 12.5 Gb/s size needs: the finding names its profile
        p["agentPoolProfiles"][0]["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = 1000

    for edit in (outputs_only, listed_ips, prefix, slow_with_reason, default_ports, low_backlog):
        yield "cluster", edit.__name__, _edited(cluster, edit)


def _aws_variants() -> Iterator[Doc]:
    group = fixture("eks_node_group")
    yield "node_group", "compliant", group
    yield "node_group", "slow-with-reason", group | {"instanceTypes": ["m5.large"], "tags": REASON}
    yield "node_group", "size-in-template", {k: v for k, v in group.items() if k != "instanceTypes"}
    yield "launch_template", "compliant", launch_template()
    yield "launch_template", "slow-with-reason", launch_template(instance_type="m5.large") | {"tags": REASON}
    backlog_1000 = user_data_with_backlog(1000)
    yield "launch_template", "backlog-1000", launch_template(user_data=backlog_1000)
    # NetworkOptimizedNodeGroup's: no instanceType, its node group's fastest type's line rate in a tag.
    untyped = {k: v for k, v in launch_template().items() if k != "instanceType"}
    yield "launch_template", "line-rate-tag", untyped | {"tags": {"wirespeed.io/line-rate-gbps": "100"}}
    encoded = base64.b64encode(b"#!/bin/bash\necho hello\n").decode()
    yield "launch_template", "not-a-node", launch_template() | {"userData": encoded}
    gateway = fixture("nat_gateway")
    yield "nat_gateway", "zonal", gateway
    regional = {
        "availabilityMode": "regional",
        "connectivityType": "public",
        "availabilityZoneAddresses": [
            {"availabilityZone": "eu-west-1a", "allocationIds": ["eipalloc-1"]},
            {"availabilityZoneId": "euw1-az2", "allocationIds": ["eipalloc-2"]},
        ],
    }
    yield "nat_gateway", "regional", regional
    yield "eks_cluster", "ingest", {"name": "ingest"}
    # Self-managed nodes (issue 25): an auto-scaling group tagged for its cluster, pulumi-eks v1's CloudFormation
    # stack holding one, and the launch configuration they boot from (its user data plain text).
    owned = {"key": "kubernetes.io/cluster/ingest", "value": "owned"}
    yield "autoscaling_group", "tagged", {"launchTemplate": {"name": "lt"}, "tags": [owned]}
    overrides = {"launchTemplate": {"overrides": [{"instanceType": "m5.large"}, {"instanceType": "c6in.8xlarge"}]}}
    yield "autoscaling_group", "mixed", {"tags": [owned], "mixedInstancesPolicy": overrides}
    template = "Resources:\n  NodeGroup:\n    Type: AWS::AutoScaling::AutoScalingGroup\n    Properties:\n"
    yield "cfn_stack", "nodes", {"templateBody": template + "      Tags:\n      - Key: kubernetes.io/cluster/ingest\n"}
    yield "cfn_stack", "not-nodes", {"templateBody": "Resources: {}\n"}
    plain_user_data = base64.b64decode(launch_template()["userData"]).decode()
    yield "launch_configuration", "compliant", {"instanceType": "c6in.8xlarge", "userData": plain_user_data}
    yield "launch_configuration", "slow", {"instanceType": "m5.large", "userData": user_data_with_backlog(1000)}


def _kubernetes_variants() -> Iterator[Doc]:
    objects = tuning_objects()
    yield "config_map", "profile", objects["ConfigMap"]
    daemon_set = objects["DaemonSet"]
    yield "daemon_set", "rendered", daemon_set

    def loosened(p: dict[str, Any]) -> None:
        pod = p["spec"]["template"]["spec"]
        pod["initContainers"] = copy.deepcopy(pod["containers"])
        pod["containers"][0]["securityContext"] = {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}}
        for mount in pod["containers"][0].get("volumeMounts", []):
            mount["readOnly"] = False
        pod["hostPID"] = pod["hostIPC"] = True

    yield "daemon_set", "loosened", _edited(daemon_set, loosened)

    def unlabelled(p: dict[str, Any]) -> None:  # known as the agent by its image alone, after an init container's
        p["metadata"].pop("labels")
        p["spec"]["template"]["spec"]["initContainers"] = [{"name": "wait", "image": "busybox:1.36"}]

    yield "daemon_set", "unlabelled", _edited(daemon_set, unlabelled)
    nap = nap_objects()
    low = _edited(
        nap["AKSNodeClass"], lambda p: p["spec"]["linuxOSConfig"]["sysctls"].update(netCoreNetdevMaxBacklog=1000)
    )
    for version in NODE_CLASS_VERSIONS:  # every version the rules take, each its own type token
        yield f"{GROUP}/{version}", "node-class", nap["AKSNodeClass"]
        yield f"{GROUP}/{version}", "node-class-low", low
    # Karpenter's own EC2NodeClass example (tests/fixtures/real), and it with a declared line rate.
    example = ROOT / "tests" / "fixtures" / "real" / "karpenter-aws-al2023-custom-userdata.yaml"
    ec2_class = next(d for d in yaml.safe_load_all(example.read_text()) if d and d["kind"] == "EC2NodeClass")
    rated = _edited(ec2_class, lambda p: p["metadata"]["annotations"].update({"wirespeed.io/line-rate-gbps": "100"}))
    for token in EC2_NODE_CLASS_TYPES:
        version = token.split(":")[1]
        yield version, "ec2-node-class", ec2_class
        yield version, "ec2-node-class-rated", rated
        yield version, "ec2-node-class-windows", _edited(ec2_class, lambda p: p["spec"].update(amiFamily="Windows2022"))
    node_pool = fixture("karpenter_node_pool")

    def any_family(p: dict[str, Any]) -> None:  # no node class reference: Azure's or not by the requirement keys
        p["spec"]["template"]["spec"]["requirements"] = [
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
        ]
        p["spec"]["template"]["spec"].pop("nodeClassRef")
        p["metadata"]["annotations"] = REASON

    for token in NODE_POOL_TYPES:
        version = token.split(":")[1]
        yield version, "aks-nap", nap["NodePool"]
        yield version, "eks", node_pool
        yield version, "eks-any-family", _edited(node_pool, any_family)


def _token(kind: str, props: Mapping[str, Any]) -> str:
    if kind in TYPES:
        return TYPES[kind]
    return f"kubernetes:{kind}:{props['kind']}"  # a Kubernetes object by its apiVersion


def _pulumi_stacks() -> Iterator[list[Resource]]:
    """The fixtures with their variants, as one stack per variant beside the compliant rest."""
    docs = [*_cluster_variants(), *_aws_variants(), *_kubernetes_variants()]
    pool = fixture("aks_agent_pool")
    pools = [
        Resource(TYPES["pool"], "pool", "urn:pool", pool),
        Resource(
            TYPES["pool"],
            "pool-by-id",
            "urn:pool-by-id",
            {k: v for k, v in pool.items() if k != "resourceName"}
            | {
                "id": "/subscriptions/s/resourceGroups/rg-checkout/providers/Microsoft.ContainerService/"
                "managedClusters/aks-checkout/agentPools/byid",
                "osType": "Windows",
                "enableAutoScaling": False,
            },
        ),
        Resource(TYPES["pool"], "slow-pool", "urn:slow-pool", pool | {"vmSize": "Standard_D4s_v3", "tags": REASON}),
        Resource(TYPES["prefix"], "prefix", "urn:prefix", {"id": "/prefix/a", "prefixLength": 30}),
        Resource(TYPES["internet_gateway"], "igw", "urn:igw", {}),
    ]
    for kind, name, props in docs:
        yield [Resource(_token(kind, props), name, f"urn:{kind}:{name}", props), *pools]
    # aks-snat-capacity counts a node auto-provisioning NodePool in the outbound of the cluster beside it.
    cluster = Resource(TYPES["cluster"], "aks", "urn:cluster:aks", fixture("aks_cluster"))
    for token in NODE_POOL_TYPES:
        nap_pool = nap_objects()["NodePool"]
        yield [cluster, Resource(token, "net", f"urn:{token}:net", nap_pool), *pools]
    # An AKSNodeClass and an EC2NodeClass with the NodePools that reference them (netdev-backlog-minimum judges a
    # node class at the fastest size they pin).
    nap = nap_objects()
    aks_class = f"kubernetes:{GROUP}/{NODE_CLASS_VERSIONS[0]}:AKSNodeClass"
    example = ROOT / "tests" / "fixtures" / "real" / "karpenter-aws-al2023-custom-userdata.yaml"
    ec2 = {d["kind"]: d for d in yaml.safe_load_all(example.read_text()) if d}
    for token in NODE_POOL_TYPES:
        yield [
            Resource(aks_class, "net", "urn:class:net", nap["AKSNodeClass"]),
            Resource(token, "net", "urn:pool:net", nap["NodePool"]),
        ]
        yield [
            Resource(EC2_NODE_CLASS_TYPES[0], "al2023", "urn:class:al2023", ec2["EC2NodeClass"]),
            Resource(token, "default", "urn:pool:default", ec2["NodePool"]),
        ]
    yield [Resource(TYPES["node_tuning"], "tuning", "urn:tuning", {}), *pools]
    # aks-natgw-zone-redundant: a Standard AKS-managed NAT gateway, the zones of an inline and a separate pool.
    nat = _edited(fixture("aks_cluster"), _zonal_nat_gateway)
    zoned = Resource(TYPES["pool"], "zoned", "urn:zoned-pool", pool | {"name": "zoned", "availabilityZones": ["3"]})
    yield [Resource(TYPES["cluster"], "aks", "urn:cluster:aks", nat), zoned, *pools]
    exported = {("name" if k == "resourceName" else k): v for k, v in nat.items()}  # a stack export's outputs
    yield [Resource(TYPES["cluster"], "aks", "urn:cluster:aks", exported), zoned, *pools]


def _zonal_nat_gateway(p: dict[str, Any]) -> None:
    p["networkProfile"] = {
        "outboundType": "managedNATGateway",
        "natGatewayProfile": {"sku": "Standard", "managedOutboundIPProfile": {"count": 2}},
    }
    p["agentPoolProfiles"][0]["availabilityZones"] = ["1", "2"]


def _terraform_stacks() -> Iterator[list[Resource]]:
    for plan in PLANS:
        resources = list(Document(plan.read_text()).resources())
        yield [dataclasses.replace(r, props=plain(r.props)) for r in resources]


def _recorded(resource: Resource, log: dict[str, set[str]]) -> Resource:
    reads = log.setdefault(resource.type, set())
    props = Recording(engine_props(resource.props), "", reads)
    return dataclasses.replace(resource, props=props, outputs=None)


def _run(rule: Rule, stack: Sequence[Resource], settings: Mapping[str, Any], log: dict[str, set[str]]) -> None:
    def guarded(run: Callable[[], Any]) -> None:
        # The engine's "not applicable" / "could not be checked": what was read up to there still counts.
        with contextlib.suppress(NotKnown, SecretNotReadable):
            list(run())

    if rule.scope == "stack":
        viewed = [_recorded(r, log) for r in stack]
        guarded(lambda: rule.check(viewed, settings))  # type: ignore[arg-type]
        return
    # A rule judging some types by others (Rule.related) has those in view, recorded as they are read.
    related = rule.related
    in_view = [_recorded(r, log) for r in stack if related is not None and related.wants(r.type)]
    with viewing(in_view):
        for resource in stack:
            if rule.applies_to(resource.type):
                recorded = _recorded(resource, log)
                guarded(lambda recorded=recorded: rule.check(recorded, settings))  # type: ignore[arg-type,misc]


@functools.cache
def recorded_reads(rule_id: str) -> dict[tuple[str, str, str], set[str]]:
    """Every path the rule read over the corpus, per type (``type_key``)."""
    rule = next(r for r in RULES if r.id == rule_id)
    log: dict[str, set[str]] = {}
    for settings in [{}, *SETTINGS.get(rule_id, [])]:
        resolved = resolve_config({rule_id: settings} if settings else None).settings_for(rule_id)
        for stack in [*_pulumi_stacks(), *_terraform_stacks()]:
            _run(rule, stack, resolved, log)
    by_key: dict[tuple[str, str, str], set[str]] = {}
    for token, paths in log.items():
        by_key.setdefault(type_key(token), set()).update(paths)
    return by_key


def declared(rule: Rule) -> dict[tuple[str, str, str], Reads]:
    """What the rule declares it reads, per type: on its own types, and on those it judges them by (Related)."""
    related = rule.related.reads if rule.related is not None else ()
    return {type_key(r.type): r for r in (*rule.reads, *related)}


# --- the declaration is well formed and names the rule's types ---------------------------------------------------


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_a_rule_declares_reads_for_exactly_the_types_it_checks(rule):
    keys = [type_key(r.type) for r in rule.reads]
    assert len(keys) == len(set(keys)), "one Reads per type"
    assert set(keys) == {type_key(t) for t in rule.types}
    for reads in rule.reads:
        for path in reads.paths:
            steps(path)  # well formed
        assert len(reads.paths) == len(set(reads.paths))
        assert set(reads.not_in_terraform) <= set(reads.paths), "an excuse names a declared path"
        assert all(why.strip() for why in reads.not_in_terraform.values())


# --- the declaration is true: read exactly, read somewhere -----------------------------------------------------


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_a_rule_reads_only_the_properties_it_declares(rule):
    declarations = declared(rule)
    undeclared = []
    for key, paths in recorded_reads(rule.id).items():
        allowed = declarations[key].paths if key in declarations else ()
        undeclared += [(":".join(key), p) for p in sorted(paths) if not any(covers(d, p) for d in allowed)]
    assert not undeclared, f"{rule.id} reads properties its Rule.reads does not declare: {undeclared}"


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_every_declared_property_is_read_on_some_document(rule):
    reads = recorded_reads(rule.id)
    unread = [
        (decl.type, path)
        for key, decl in declared(rule).items()
        for path in decl.paths
        if path not in reads.get(key, set())
    ]
    assert not unread, f"{rule.id} declares reads no document made it read (stale, or no case here): {unread}"


# --- the Terraform translation gives every declared property, or the rule says why not ---------------------------


UNTYPED_USER_DATA = launch_template()["userData"]

# Attributes the translation cases and plan fixtures leave unset, in the providers' documented names
# (registry.terraform.io/providers/hashicorp/azurerm/latest/docs/resources/kubernetes_cluster: default_node_pool
# tags, network_profile.load_balancer_profile.outbound_ip_prefix_ids; hashicorp/kubernetes daemon_set_v1:
# spec.template.spec.host_ipc).
MORE_TERRAFORM: list[tuple[str, dict[str, Any]]] = [
    (
        "azurerm_kubernetes_cluster",
        {
            "name": "aks",
            "default_node_pool": [
                {"name": "system", "vm_size": "Standard_D4s_v3", "tags": REASON, "node_labels": {"team": "a"}}
            ],
            "network_profile": [{"load_balancer_profile": [{"outbound_ip_prefix_ids": ["/prefix/a"]}]}],
        },
    ),
    # Pools in several zones (azurerm `zones`), which aks-natgw-zone-redundant reads.
    (
        "azurerm_kubernetes_cluster",
        {
            "name": "zoned",
            "default_node_pool": [{"name": "system", "vm_size": "Standard_D4s_v6", "zones": ["1", "2", "3"]}],
            "network_profile": [{"outbound_type": "managedNATGateway"}],
        },
    ),
    ("azurerm_kubernetes_cluster_node_pool", {"name": "zoned", "vm_size": "Standard_D16s_v6", "zones": ["1", "2"]}),
    ("kubernetes_daemon_set_v1", {"spec": [{"template": [{"spec": [{"host_ipc": True}]}]}]}),
    ("azurerm_kubernetes_cluster_node_pool", {"name": "net", "vm_size": "Standard_D16s_v6", "node_labels": {"a": "b"}}),
    ("kubernetes_config_map_v1", {"metadata": [{"name": "p", "annotations": {"wirespeed.io/line-rate-gbps": "100"}}]}),
    (
        "aws_launch_template",
        {"name": "lt", "user_data": UNTYPED_USER_DATA, "tags": {"wirespeed.io/line-rate-gbps": "100"}},
    ),
    (
        "aws_autoscaling_group",
        {
            "name": "nodes",
            "tag": [{"key": "kubernetes.io/cluster/ingest", "value": "owned"}],
            "mixed_instances_policy": [{"launch_template": [{"override": [{"instance_type": "m5.large"}]}]}],
        },
    ),
    ("aws_launch_configuration", {"name": "lc", "instance_type": "m5.large", "user_data": "#!/bin/bash\n"}),
]


def _manifest_samples() -> Iterator[Resource]:
    """kubernetes_manifest carries the object whole: every Kubernetes document of the corpus, as its manifest (with
    the apiVersion of the type it stands for: ``core/v1`` is written ``v1``)."""
    for stack in _pulumi_stacks():
        for resource in stack:
            if resource.type.startswith("kubernetes:"):
                api_version = resource.type.split(":")[1].removeprefix("core/")
                manifest = {**resource.props, "apiVersion": api_version}
                yield tf.translate(tf.translations.KUBERNETES_MANIFEST, "x.y", {"manifest": manifest})


@functools.cache
def terraform_samples() -> dict[tuple[str, str, str], list[Any]]:
    """The props `wirespeed check` makes of Terraform resources, per type (``type_key``): the translation cases of
    test_check_terraform.py and MORE_TERRAFORM, every resource of the plan fixtures, and Kubernetes objects through
    kubernetes_manifest."""
    cases = [(t, values) for t, values, _, _ in TRANSLATION_CASES.values()] + MORE_TERRAFORM
    translated = [tf.translate(t, "x.y", json.loads(json.dumps(values))) for t, values in cases]
    translated += [r for plan in PLANS for r in Document(plan.read_text()).resources()]
    translated += list(_manifest_samples())
    samples: dict[tuple[str, str, str], list[Any]] = {}
    for resource in translated:
        samples.setdefault(type_key(resource.type), []).append(plain(resource.props))
    return samples


def terraform_types(key: tuple[str, str, str]) -> list[str]:
    """The Terraform types `wirespeed check` turns into this Pulumi type."""
    found = [name for name, translation in tf.TRANSLATIONS.items() if type_key(translation.token) == key]
    return found + ([tf.translations.KUBERNETES_MANIFEST] if key[0] == "kubernetes" else [])


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_terraform_plans_give_every_property_a_rule_reads_or_the_rule_says_why_not(rule):
    problems = []
    for reads in rule.reads:
        key = type_key(reads.type)
        if not terraform_types(key):
            if not reads.no_terraform_type:
                problems.append(f"{reads.type}: no Terraform type becomes it, and no_terraform_type says not why")
            continue
        if reads.no_terraform_type:
            problems.append(f"{reads.type}: no_terraform_type is stale, {terraform_types(key)} become it")
        samples = terraform_samples().get(key, [])
        for path in reads.paths:
            given = any(present(props, steps(path)) for props in samples)
            if not given and path not in reads.not_in_terraform:
                problems.append(f"{reads.type} {path}: no Terraform attribute gives it ({terraform_types(key)})")
            if given and path in reads.not_in_terraform:
                problems.append(f"{reads.type} {path}: excused as not in Terraform, but the translation gives it")
    assert not problems, f"{rule.id} could silently never fire on `terraform show -json`:\n" + "\n".join(problems)


# --- end to end: one attribute changed in a passing plan fixture makes `wirespeed check` report the rule ----------

CLUSTER = "azurerm_kubernetes_cluster.checkout"
NODE_POOL = "module.pool.azurerm_kubernetes_cluster_node_pool.this[0]"
PROFILE = "kubernetes_manifest.tuning_profile"
AGENT = "kubernetes_manifest.tuning_agent"
EGRESS = "aws_nat_gateway.egress"


def _balancer(after: dict[str, Any]) -> dict[str, Any]:
    balancer: dict[str, Any] = after["network_profile"][0]["load_balancer_profile"][0]
    return balancer


def _profile(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    """An edit of the profile document inside a ConfigMap manifest's data["profile.json"]."""

    def edited(after: dict[str, Any]) -> None:
        data = after["manifest"]["data"]
        document = json.loads(data["profile.json"])
        edit(document)
        data["profile.json"] = json.dumps(document, indent=2) + "\n"

    return edited


def _pod(after: dict[str, Any]) -> dict[str, Any]:
    pod: dict[str, Any] = after["manifest"]["spec"]["template"]["spec"]
    return pod


def _not_the_agent(after: dict[str, Any]) -> None:
    """The DaemonSet becomes some other DaemonSet: neither wirespeed's label nor its image."""
    after["manifest"]["metadata"]["labels"] = {"app.kubernetes.io/name": "log-shipper"}
    for container in _pod(after)["containers"]:
        container["image"] = "registry.example/log-shipper:1.0"


def _set_rings(document: dict[str, Any]) -> None:
    document["rings"]["mlx5_core"]["rx"] = 1024


# (rule, plan, address, what changes, the change to that resource's change.after)
TERRAFORM_CASES: list[tuple[str, str, str, str, Callable[[dict[str, Any]], None]]] = [
    (
        "aks-allocated-outbound-ports-default",
        "azure-good",
        CLUSTER,
        "outbound_ports_allocated 0",
        lambda a: _balancer(a).update(outbound_ports_allocated=0),
    ),
    (
        "aks-natgw-zone-redundant",
        "azure-good",
        CLUSTER,
        "a managed NAT gateway (no sku: Standard) for a default pool in zones 1, 2, 3",
        lambda a: (
            a["network_profile"][0].update(
                outbound_type="managedNATGateway",
                load_balancer_profile=[],
                nat_gateway_profile=[{"managed_outbound_ip_count": 2, "idle_timeout_in_minutes": 4}],
            ),
            a["default_node_pool"][0].update(zones=["1", "2", "3"]),
        ),
    ),
    (
        "aks-basic-load-balancer",
        "azure-good",
        CLUSTER,
        "load_balancer_sku basic",
        lambda a: a["network_profile"][0].update(load_balancer_sku="basic"),
    ),
    (
        "aks-snat-capacity",
        "azure-good",
        CLUSTER,
        "managed_outbound_ip_count 1",
        lambda a: _balancer(a).update(managed_outbound_ip_count=1),
    ),
    (
        "aks-snat-ports-minimum",
        "azure-good",
        CLUSTER,
        "outbound_ports_allocated 512",
        lambda a: _balancer(a).update(outbound_ports_allocated=512),
    ),
    (
        "netdev-backlog-minimum",
        "azure-good",
        NODE_POOL,
        "net_core_netdev_max_backlog 1000",
        lambda a: a["linux_os_config"][0]["sysctl_config"][0].update(net_core_netdev_max_backlog=1000),
    ),
    ("nic-ring-minimum", "kubernetes-good", PROFILE, "mlx5_core rx 1024", _profile(_set_rings)),
    (
        "network-optimised-sku",
        "aws-good",
        "aws_eks_node_group.network",
        "instance_types m5.large",
        lambda a: a.update(instance_types=["m5.large"]),
    ),
    ("tuning-agent-present", "azure-good", AGENT, "the DaemonSet is not the agent", _not_the_agent),
    (
        "tuning-agent-least-privilege",
        "kubernetes-good",
        AGENT,
        "privileged true",
        lambda a: _pod(a)["containers"][0].setdefault("securityContext", {}).update(privileged=True),
    ),
    (
        "aws-natgw-capacity",
        "aws-good",
        EGRESS,
        "no secondary_allocation_ids",
        lambda a: a.update(secondary_allocation_ids=[]),
    ),
    (
        "aws-natgw-eip-quota",
        "aws-good",
        EGRESS,
        "a fifth Elastic IP",
        lambda a: a["secondary_allocation_ids"].append("eipalloc-0fifth"),
    ),
    ("mtu-jumbo-path", "azure-good", PROFILE, "mtu 9000", _profile(lambda d: d.update(mtu={"value": 9000}))),
    (
        "tuning-profile-valid",
        "kubernetes-good",
        PROFILE,
        "backlog as the text '1000'",
        _profile(lambda d: d["sysctls"].update({"net.core.netdev_max_backlog": "1000"})),
    ),
]
# Where the rule reports: stack rules report on the cluster, not the resource that changed.
REPORTED_ON = {"tuning-agent-present": CLUSTER}


def _reported(path: Path) -> set[tuple[str, str]]:
    out = invoke("check", str(path), "--config", str(TERRAFORM / "check-config.json"), "--format", "json")
    assert out.returncode in (0, 1), out.stderr
    return {(v["rule"], v["urn"]) for v in json.loads(out.stdout)["violations"]}


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_every_rule_has_an_end_to_end_terraform_case(rule):
    cases = [case for case in TERRAFORM_CASES if case[0] == rule.id]
    assert len(cases) == 1, f"{rule.id}: add one (rule, plan, address, change, edit) row to TERRAFORM_CASES"


def test_every_terraform_case_names_a_rule():
    assert {case[0] for case in TERRAFORM_CASES} <= set(RULE_IDS)


@pytest.mark.parametrize(
    ("rule_id", "plan", "address", "change", "edit"), TERRAFORM_CASES, ids=[c[0] for c in TERRAFORM_CASES]
)
def test_one_attribute_changed_in_a_passing_plan_makes_check_report_the_rule(
    tmp_path, rule_id, plan, address, change, edit
):
    original = TERRAFORM / plan / "plan.json"
    document = json.loads(original.read_text())
    [resource] = [rc for rc in document["resource_changes"] if rc["address"] == address]
    edit(resource["change"]["after"])
    edited = tmp_path / "plan.json"
    edited.write_text(json.dumps(document, indent=2))
    expected = (rule_id, REPORTED_ON.get(rule_id, address))
    assert expected not in _reported(original)
    assert expected in _reported(edited), f"{change} in {plan} did not make {rule_id} fire on {expected[1]}"


def test_check_keeps_the_node_tuning_component_for_the_agent_rule_as_the_engine_does():
    """tuning-agent-present reads NodeTuning by type; before its types named it, `wirespeed check` dropped the
    component from what stack rules see (it keeps only their declared types) and reported the agent missing."""
    pool = {"name": "system", "count": 3, "vmSize": "Standard_D4ds_v6"}
    export = {
        "version": 3,
        "deployment": {
            "resources": [
                {
                    "urn": "urn:pulumi:dev::p::azure-native:containerservice:ManagedCluster::aks",
                    "type": TYPES["cluster"],
                    "custom": True,
                    "inputs": {"resourceName": "aks", "agentPoolProfiles": [pool]},
                    "outputs": {"name": "aks", "agentPoolProfiles": [pool]},
                },
                {
                    "urn": "urn:pulumi:dev::p::wirespeed:index:NodeTuning::tuning",
                    "type": TYPES["node_tuning"],
                    "custom": False,
                    "inputs": {},
                    "outputs": {},
                },
            ]
        },
    }
    report = check_text(json.dumps(export), "export.json", resolve_config(None))
    assert "tuning-agent-present" not in {v.rule_id for v in report.violations}

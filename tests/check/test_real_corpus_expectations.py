"""What issue 25 says `wirespeed check` must decide on the real files of tests/fixtures/real/ and their probes.

tests/check/test_real_corpus.py pins what check does today, whatever it is; this file states what is right, case by
case, in the words of the issue, so a regenerated pin can be judged and a regression of a fixed case fails here.
Each case names an input (a real file or a probe of tests/real_probes.py), the rule it is about ("(input)" for
how the input is read) and the outcome. tests/fixtures/real/README.md carries the same table for people.

Cases that fail on a branch without the fixes of issue 25 (check-shapes, check-refs, advice-catalog) fail here
too, on purpose: none is skipped or marked expected-to-fail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clirun import invoke
from conftest import ROOT
from real_probes import BY_NAME, PROBES, render

REAL = ROOT / "tests" / "fixtures" / "real"


@dataclass(frozen=True)
class Outcome:
    """One `wirespeed check --format json` run: the exit code, the error line or the report."""

    exit_code: int
    error: str
    report: dict[str, Any]

    def violations(self, rule: str) -> list[dict[str, Any]]:
        return [v for v in self.report.get("violations", []) if v["rule"] == rule]

    def summary_text(self) -> str:
        """Everything the report says besides its violations: where "what was read" is reported."""
        return json.dumps({k: v for k, v in self.report.items() if k != "violations"})


def run(path: Path, *extra: str) -> Outcome:
    out = invoke("check", str(path), "--format", "json", *extra)
    if out.returncode == 2:
        return Outcome(2, out.stderr.strip(), {})
    return Outcome(out.returncode, "", json.loads(out.stdout))


def input_path(name: str, tmp_path: Path) -> Path:
    if name in BY_NAME:
        path = tmp_path / name
        path.write_bytes(render(BY_NAME[name]))
        return path
    path = REAL / name
    assert path.is_file(), f"{name} is neither a real file nor a probe"
    return path


# --- outcomes -----------------------------------------------------------------------------------------------------

Check = Callable[[Path], str | None]  # None when the outcome holds, else what happened instead


def read() -> Check:
    def check(path: Path) -> str | None:
        outcome = run(path)
        return f"refused: {outcome.error}" if outcome.exit_code == 2 else None

    return check


def read_naming_version(version: str) -> Check:
    def check(path: Path) -> str | None:
        outcome = run(path)
        if outcome.exit_code == 2:
            return f"refused: {outcome.error}"
        return None if version in outcome.summary_text() else f"the report does not name Terraform {version}"

    return check


def refused_naming(words: str) -> Check:
    def check(path: Path) -> str | None:
        outcome = run(path)
        if outcome.exit_code != 2:
            return f"exit {outcome.exit_code}, not refused"
        return None if words in outcome.error else f"the error does not say {words!r}: {outcome.error}"

    return check


def state_read_or_refused() -> Check:
    """A raw terraform.tfstate: read as a state (its resources counted) or refused naming `terraform show -json`."""

    def check(path: Path) -> str | None:
        outcome = run(path)
        if outcome.exit_code == 2:
            return None if "terraform show -json" in outcome.error else f"refused without the fix: {outcome.error}"
        resources = outcome.report.get("resources", 0)
        return None if resources else f"exit {outcome.exit_code} with {resources} resources: it checked nothing"

    return check


def fails_when_judged_nothing() -> Check:
    def check(path: Path) -> str | None:
        outcome = run(path, "--require-judged")
        return None if outcome.exit_code == 1 else f"--require-judged: exit {outcome.exit_code} {outcome.error}"

    return check


def lists_unread(resource_type: str) -> Check:
    def check(path: Path) -> str | None:
        outcome = run(path)
        if outcome.exit_code == 2:
            return f"refused: {outcome.error}"
        return None if resource_type in outcome.summary_text() else f"the report does not name {resource_type}"

    return check


def fires(rule: str, level: str = "mandatory", at: str = "", words: str = "", count: int = 1) -> Check:
    """``rule`` reports at ``level`` on at least ``count`` resources whose address contains ``at``."""

    def check(path: Path) -> str | None:
        outcome = run(path)
        if outcome.exit_code == 2:
            return f"refused: {outcome.error}"
        hits = [
            v
            for v in outcome.violations(rule)
            if v["enforcement"] == level and at in v["urn"] and words.lower() in v["message"].lower()
        ]
        if len(hits) >= count:
            return None
        seen = [(v["enforcement"], v["urn"]) for v in outcome.violations(rule)]
        return f"{len(hits)} of {count} {level} verdict(s) at {at!r}; {rule} reported {seen}"

    return check


def both(*checks: Check) -> Check:
    """Every one of ``checks`` holds (the first that does not says what happened instead)."""

    def check(path: Path) -> str | None:
        return next((problem for problem in (c(path) for c in checks) if problem), None)

    return check


def any_rule_fires(at: str, words: str) -> Check:
    """Some rule reports on ``at`` with ``words`` in its message (the issue names no rule id for it)."""

    def check(path: Path) -> str | None:
        outcome = run(path)
        if outcome.exit_code == 2:
            return f"refused: {outcome.error}"
        hits = [v for v in outcome.report["violations"] if at in v["urn"] and words.lower() in v["message"].lower()]
        return None if hits else f"no verdict at {at!r} mentions {words!r}"

    return check


def silent(rule: str) -> Check:
    def check(path: Path) -> str | None:
        outcome = run(path)
        if outcome.exit_code == 2:
            return f"refused: {outcome.error}"
        found = outcome.violations(rule)
        return None if not found else f"{rule} reported {[(v['urn'], v['message'][:120]) for v in found]}"

    return check


def fires_without(rule: str, words: str) -> Check:
    """``rule`` reports, and none of its messages says ``words``."""

    def check(path: Path) -> str | None:
        outcome = run(path)
        if outcome.exit_code == 2:
            return f"refused: {outcome.error}"
        found = outcome.violations(rule)
        if not found:
            return f"{rule} reported nothing"
        wrong = [v["message"][:200] for v in found if words in v["message"]]
        return None if not wrong else f"{rule} still says {words!r}: {wrong[0]}"

    return check


@dataclass(frozen=True)
class Case:
    input: str
    rule: str
    expect: str  # the README's words
    check: Check


NOT_IN_CATALOG = "is not in wirespeed's catalog"
T3 = f"t3.medium {NOT_IN_CATALOG}"
NOT_READ_FORMAT = [
    ("tf-asg-launch-configuration.tf0.12.3.plan.json", "0.12.3"),
    ("tf-asg-launch-template.tf0.12.25.plan.json", "0.12.25"),
    ("tf-asg-launch-template.tf0.13.7.plan.json", "0.13.7"),
    ("tf-eks-data-partial-values.tf0.13.5.plan.json", "0.13.5"),
    ("tf-eks-modules.tf0.13.4.plan.json", "0.13.4"),
    ("tf-eks-node-group.tf0.14.6.plan.json", "0.14.6"),
    ("tf-nat-gateways.tf0.14.3.plan.json", "0.14.3"),
    ("tf-vpc-nat-gateways.tf0.12.8.plan.json", "0.12.8"),
    ("tf-gke-conftest.tf0.12.0-beta2.plan.json", "0.12.0-beta2"),
    ("tf-gke-cluster-node-pool.tf0.14.2.plan.json", "0.14.2"),
    ("tf-asg-tags.tf1.0.7.plan.json", "1.0.7"),
    ("tf-gke-cluster-full.tf1.0.10.plan.json", "1.0.10"),
    ("tf-aks-cost-estimator.tf0.13.0.plan.json", "0.13.0"),
]
NULL_DEPENDENCIES = [
    "pulumi-eks-extra-sg.cli3.102.stack.json",
    "pulumi-eks-nodegroup.cli3.102.stack.json",
    "pulumi-eks-managed-nodegroups.cli3.102.stack.json",
    "pulumi-eks-fargate.cli3.94.stack.json",
    "pulumi-preview-aws-ebs.preview.json",
]
KARPENTER = sorted(p.name for p in REAL.glob("karpenter-*.yaml"))
JUDGED_NOTHING = [
    "tf-no-resource-changes.tf1.x.plan.json",
    "tf-no-resource-changes.tf1.x--bare.plan.json",
    "tf-show-state-test-provider.tf0.14.0.json",
    "tf-azurerm-nsg-no-aks.tf1.3.6.plan.json",
    "tf-gcp-compute.tf1.4.6.plan.json",
    "tf-gke-cluster-node-pool.tf0.14.2--format-1.0.plan.json",
    "pulumi-preview-aws-ebs.preview.json",
    "tf-aws-security-groups.tf1.9.5.plan.json",
    "tf-s3-module-call.tf1.14.2.plan.json",
]
AKS_TF = "tf-azurerm-nsg-no-aks.tf1.3.6--plus-aks-cluster"
AKS_MODULE = "tf-azurerm-nsg-no-aks.tf1.3.6--plus-aks-module-cluster"
AKS_REAL = "tf-aks-cost-estimator.tf0.13.0--format-1.0"
UNKNOWN_WORDS = "could not be checked"
AZ = "pulumi-azure-aks-basic-lb.cli3.129"
AZ_CLUSTER = "KubernetesCluster::exampleKubernetesCluster"

CASES: tuple[Case, ...] = (
    # 1. unknown versus not written
    Case(
        f"{AKS_TF}-no-lb-profile.plan.json",
        "aks-allocated-outbound-ports-default",
        "must fire (mandatory): no load_balancer_profile written, so Azure's default allocation applies",
        fires("aks-allocated-outbound-ports-default", at="azurerm_kubernetes_cluster.probe"),
    ),
    Case(
        f"{AKS_TF}-with-lb-profile.plan.json",
        "aks-allocated-outbound-ports-default",
        "silent: outbound_ports_allocated 4000 is written",
        silent("aks-allocated-outbound-ports-default"),
    ),
    Case(
        f"{AKS_REAL}.plan.json",
        "aks-allocated-outbound-ports-default",
        "must fire (mandatory): a real AKS plan with no network_profile written, so Azure's default allocation applies",
        fires("aks-allocated-outbound-ports-default", at="azurerm_kubernetes_cluster.example"),
    ),
    Case(
        f"{AKS_REAL}-no-configuration.plan.json",
        "aks-allocated-outbound-ports-default",
        "could not be checked (mandatory): without the configuration nothing says the profile was left unwritten",
        fires("aks-allocated-outbound-ports-default", at="azurerm_kubernetes_cluster.example", words=UNKNOWN_WORDS),
    ),
    Case(
        f"{AKS_TF}-network-profile-no-lb-profile.plan.json",
        "aks-allocated-outbound-ports-default",
        "must fire (mandatory): network_profile written without load_balancer_profile",
        fires("aks-allocated-outbound-ports-default", at="azurerm_kubernetes_cluster.probe"),
    ),
    *(
        Case(
            f"{AKS_TF}-{edit}.plan.json",
            "aks-allocated-outbound-ports-default",
            f"could not be checked (mandatory), never a silent pass: {why}",
            fires("aks-allocated-outbound-ports-default", at="azurerm_kubernetes_cluster.probe", words=UNKNOWN_WORDS),
        )
        for edit, why in (
            ("lb-profile-from-reference", "the ports are written from a value known only after apply"),
            ("dynamic-lb-profile", "a dynamic block writes the profile, its ports unknown"),
        )
    ),
    Case(
        f"{AKS_TF}-basic-lb.plan.json",
        "(Basic load balancer)",
        "flagged: the cluster is on the Basic load balancer (retired 2025-09-30), no outbound rules to size",
        any_rule_fires("azurerm_kubernetes_cluster.probe", "basic"),
    ),
    Case(
        f"{AKS_TF}-basic-lb.plan.json",
        "aks-allocated-outbound-ports-default",
        "silent: Basic has no outbound rules",
        silent("aks-allocated-outbound-ports-default"),
    ),
    Case(
        f"{AKS_MODULE}.plan.json",
        "aks-allocated-outbound-ports-default",
        "must fire (mandatory): a module's cluster named only after apply, no load_balancer_profile written",
        fires("aks-allocated-outbound-ports-default", at="module.aks.azurerm_kubernetes_cluster.main"),
    ),
    Case(
        "tf-azurerm-nsg-no-aks.tf1.3.6--plus-counted-aks-module-cluster.plan.json",
        "aks-allocated-outbound-ports-default",
        "must fire (mandatory): instances of a counted module and resource find their configuration",
        fires("aks-allocated-outbound-ports-default", at="module.aks[0].azurerm_kubernetes_cluster.main[0]"),
    ),
    Case(
        f"{AKS_MODULE}-and-pool-by-reference.plan.json",
        "tuning-agent-present",
        "must fire counting 2 node pools: the pool whose kubernetes_cluster_id is module.aks.aks_id is the cluster's",
        fires("tuning-agent-present", at="module.aks.azurerm_kubernetes_cluster.main", words="has 2 node pool(s)"),
    ),
    # 2. every input shape
    *(
        Case(name, "(input)", "read (Terraform 0.12-1.0 format 0.1/0.2), not refused", read())
        for name, _ in NOT_READ_FORMAT
    ),
    *(
        Case(
            name, "(names its Terraform version)", f"the report names Terraform {version}", read_naming_version(version)
        )
        for name, version in NOT_READ_FORMAT[:3]
    ),
    *(
        Case(name, "(input)", 'read: "propertyDependencies": {"x": null} is no dependency', read())
        for name in NULL_DEPENDENCIES
    ),
    *(
        Case(
            name,
            "(input)",
            "read as a state, or refused with exit 2 naming `terraform show -json`; never 0 resources and exit 0",
            state_read_or_refused(),
        )
        for name in ("tfstate-v4-launch-template.tf1.0.0.tfstate", "tfstate-v4-nat-gateway.tf0.14.2.tfstate")
    ),
    Case(
        "tf-plan-json-stream.tf1.3.7.jsonl",
        "(input)",
        "refused with exit 2, recognised as a `terraform plan -json` stream, saying to run `terraform show -json`",
        refused_naming("terraform show -json"),
    ),
    *(Case(name, "(input)", "read: Kubernetes YAML (multi-document) is an input", read()) for name in KARPENTER),
    # 3. say what was checked
    *(
        Case(
            name,
            "(nothing judged)",
            "nothing to judge: with --require-judged the check fails (exit 1)",
            fails_when_judged_nothing(),
        )
        for name in JUDGED_NOTHING
    ),
    Case(
        "tf-gke-cluster-node-pool.tf0.14.2--format-1.0.plan.json",
        "(unread types)",
        "the report lists google_container_node_pool among the compute types it did not read",
        lists_unread("google_container_node_pool"),
    ),
    Case(
        "tf-aws-instance.tf1.5.7.plan.json",
        "(unread types)",
        "the report lists aws_instance (compute outside a node group) among the types it did not read",
        lists_unread("aws_instance"),
    ),
    Case(
        "tf-gcp-compute.tf1.4.6.plan.json",
        "(unread types)",
        "the report lists google_compute_instance among the compute types it did not read",
        lists_unread("google_compute_instance"),
    ),
    # 4. providers and components: pulumi-azure, self-managed nodes, Basic load balancer
    Case(
        f"{AZ}.stack.json",
        "(Basic load balancer)",
        "flagged: the cluster is on the Basic load balancer (retired 2025-09-30), no outbound rules to size",
        any_rule_fires(AZ_CLUSTER, "basic"),
    ),
    Case(
        f"{AZ}--standard-lb-no-profile.stack.json",
        "aks-allocated-outbound-ports-default",
        "must fire (mandatory): pulumi-azure classic read as azurerm is, no loadBalancerProfile written",
        fires("aks-allocated-outbound-ports-default", at=AZ_CLUSTER),
    ),
    Case(
        f"{AZ}--with-load-balancer-profile.stack.json",
        "aks-allocated-outbound-ports-default",
        "silent: outboundPortsAllocated 4000 is written",
        silent("aks-allocated-outbound-ports-default"),
    ),
    Case(
        "pulumi-eks-aws-profile.cli3.130.stack.json",
        "tuning-agent-present",
        "must fire: the default node group (launch template + auto-scaling group) is nodes",
        fires("tuning-agent-present", at="aws:eks/cluster:Cluster"),
    ),
    Case(
        "pulumi-eks-cluster.cli3.137.stack.json",
        "tuning-agent-present",
        "must fire on each of the 4 clusters: each has its default node group",
        fires("tuning-agent-present", at="aws:eks/cluster:Cluster", count=4),
    ),
    Case(
        "pulumi-eks-nodegroup.cli3.137.stack.json",
        "tuning-agent-present",
        "must fire on both clusters: NodeGroup/NodeGroupV2 self-managed nodes",
        fires("tuning-agent-present", at="aws:eks/cluster:Cluster", count=2),
    ),
    Case(
        "pulumi-eks-tags.cli3.118.stack.json",
        "tuning-agent-present",
        "must fire on both clusters: NodeGroup (launch configuration) and NodeGroupV2 self-managed nodes",
        fires("tuning-agent-present", at="aws:eks/cluster:Cluster", count=2),
    ),
    Case(
        "pulumi-eks-subnet-tags.cli3.111.stack.json",
        "tuning-agent-present",
        "must fire: the default node group is a launch configuration + auto-scaling stack",
        fires("tuning-agent-present", at="aws:eks/cluster:Cluster"),
    ),
    Case(
        "pulumi-eks-extra-sg.cli3.102--null-dependencies-as-empty.stack.json",
        "tuning-agent-present",
        "must fire: NodeGroup and NodeGroupV2 self-managed nodes",
        fires("tuning-agent-present", at="aws:eks/cluster:Cluster"),
    ),
    Case(
        "pulumi-eks-nodegroupv2-managed.cli3.133.stack.json",
        "tuning-agent-present",
        "fires: a managed node group and a NodeGroupV2",
        fires("tuning-agent-present", at="aws:eks/cluster:Cluster"),
    ),
    Case(
        "tf-asg-launch-template.tf0.12.25--format-1.0.plan.json",
        "network-optimised-sku",
        # Decided when the self-managed reading landed: an auto-scaling group is a cluster's nodes when it is tied to
        # one (dependency, reference, kubernetes.io/cluster tag) or its template boots an EKS node; this plan's t2.micro
        # group has none of these and no cluster, so it is not a node pool and no node rule judges it.
        "stays silent: a t2.micro auto-scaling group tied to no cluster and booting no EKS node is not a node pool",
        silent("network-optimised-sku"),
    ),
    # 5. no size waved through: the four sizes the issue found missing are judged from the catalog (their series
    # pages: Dsv2 1.5 Gb/s, Dpsv5 and Fsv2 12.5 Gb/s at these sizes, Dsv4 5 Gb/s; none is Azure Boost), and a size
    # the catalog lacks is reported as such by both rules
    Case(
        f"{AZ}--vm-size-Standard_DS2_v2.stack.json",
        "network-optimised-sku",
        "reports Standard_DS2_v2 as a Dsv2 size: not network-optimised and 1.5 Gb/s, below the minimum 10 Gb/s",
        both(
            fires("network-optimised-sku", at=AZ_CLUSTER, words="Standard_DS2_v2 (Dsv2) is not a network-optimised"),
            fires("network-optimised-sku", at=AZ_CLUSTER, words="sustains only 1.5 Gb/s, below the minimum 10 Gb/s"),
            fires_without("network-optimised-sku", NOT_IN_CATALOG),
        ),
    ),
    Case(
        f"{AZ}--vm-size-Standard_DS2_v2.stack.json",
        "netdev-backlog-minimum",
        "stays silent: at Standard_DS2_v2's own 1.5 Gb/s the kernel's default 1,000 holds the stall (none assumed)",
        silent("netdev-backlog-minimum"),
    ),
    Case(
        f"{AZ}--vm-size-Standard_D4ps_v5.stack.json",
        "network-optimised-sku",
        "reports Standard_D4ps_v5 as a Dpsv5 size, not network-optimised (its 12.5 Gb/s meets the minimum)",
        both(
            fires("network-optimised-sku", at=AZ_CLUSTER, words="Standard_D4ps_v5 (Dpsv5) is not a network-optimised"),
            fires_without("network-optimised-sku", "below the minimum"),
            fires_without("network-optimised-sku", NOT_IN_CATALOG),
        ),
    ),
    Case(
        f"{AZ}--vm-size-Standard_D4ps_v5.stack.json",
        "netdev-backlog-minimum",
        "fails the unset backlog at Standard_D4ps_v5's own 12.5 Gb/s (minimum 4,064), not an assumed 25 Gb/s",
        fires("netdev-backlog-minimum", at=AZ_CLUSTER, words="minimum 4,064 for Standard_D4ps_v5's line rate 12.5"),
    ),
    Case(
        f"{AZ}--vm-size-Standard_F8s_v2.stack.json",
        "network-optimised-sku",
        "reports Standard_F8s_v2 as an Fsv2 size, not network-optimised, and offers the compute-optimised v6 of it",
        both(
            fires("network-optimised-sku", at=AZ_CLUSTER, words="Standard_F8s_v2 (Fsv2) is not a network-optimised"),
            fires("network-optimised-sku", at=AZ_CLUSTER, words="e.g. Standard_F8als_v6 (Falsv6, 8 vCPU, 12.5 Gb/s)"),
        ),
    ),
    Case(
        f"{AZ}--vm-size-Standard_F8s_v2.stack.json",
        "netdev-backlog-minimum",
        "fails the unset backlog at Standard_F8s_v2's own 12.5 Gb/s",
        fires("netdev-backlog-minimum", at=AZ_CLUSTER, words="minimum 4,064 for Standard_F8s_v2's line rate 12.5"),
    ),
    Case(
        "karpenter-azure-perftest.yaml",
        "network-optimised-sku",
        "reports both NodePools pinned to Standard_D2s_v4 as admitting Ds_v4 (Dsv4), not network-optimised",
        fires("network-optimised-sku", words="requirements admit Ds_v4 (Dsv4: Standard_D2s_v4)", count=2),
    ),
    Case(
        f"{AZ}--vm-size-Standard_D4s_v7.stack.json",
        "network-optimised-sku",
        "must report a size the catalog lacks as not in the catalog: its bandwidth and NIC cannot be told",
        fires("network-optimised-sku", at=AZ_CLUSTER, words=f"Standard_D4s_v7 {NOT_IN_CATALOG}: cannot tell"),
    ),
    Case(
        f"{AZ}--vm-size-Standard_D4s_v7.stack.json",
        "netdev-backlog-minimum",
        "says the 25 Gb/s it judges by is assumed because the size is not in the catalog, which the SKU rule reports",
        fires(
            "netdev-backlog-minimum",
            at=AZ_CLUSTER,
            words=f"assumed line rate of 25 Gb/s (vmSize Standard_D4s_v7 {NOT_IN_CATALOG}, which network-optimised-sku",
        ),
    ),
    Case(
        f"{AZ}--vm-size-Standard_D4s_v3.stack.json",
        "network-optimised-sku",
        "reports Standard_D4s_v3 (Dsv3 is not network-optimised)",
        fires("network-optimised-sku", at=AZ_CLUSTER),
    ),
    Case(
        "pulumi-eks-aws-profile.cli3.130.stack.json",
        "netdev-backlog-minimum",
        "judges t3.medium by its own line rate: never 'not in wirespeed's catalog' with 25 Gb/s assumed",
        fires_without("netdev-backlog-minimum", T3),
    ),
    Case(
        "pulumi-eks-nodegroupv2-managed.cli3.133.stack.json",
        "netdev-backlog-minimum",
        "judges t3.medium by its own line rate",
        fires_without("netdev-backlog-minimum", T3),
    ),
    # Karpenter EC2NodeClass userData
    Case(
        "karpenter-aws-al2023-custom-userdata.yaml",
        "netdev-backlog-minimum",
        "must fire on the EC2NodeClass: its userData does not set net.core.netdev_max_backlog",
        fires("netdev-backlog-minimum", at="al2023"),
    ),
    Case(
        "karpenter-aws-al2-custom-userdata.yaml",
        "netdev-backlog-minimum",
        "must fire on the EC2NodeClass: its userData does not set net.core.netdev_max_backlog",
        fires("netdev-backlog-minimum", at="al2"),
    ),
    Case(
        "karpenter-aws-al2023-custom-userdata--backlog-16384.yaml",
        "netdev-backlog-minimum",
        "read, and silent: the userData sets 16,384",
        lambda path: read()(path) or silent("netdev-backlog-minimum")(path),
    ),
    # A node class is judged at the fastest size the NodePools that reference it pin, never an assumed 25 Gb/s
    # when they pin one; when they pin none, the assumption says so.
    Case(
        "karpenter-azure-perftest.yaml",
        "netdev-backlog-minimum",
        "judges the AKSNodeClass at the one size both NodePools pin, Standard_D2s_v4's 5 Gb/s (minimum 1,626)",
        fires(
            "netdev-backlog-minimum",
            at="AKSNodeClass",
            words="minimum 1,626 for Standard_D2s_v4's line rate 5 Gb/s (catalog), the only size NodePools "
            "'default', 'spot' pin for it",
        ),
    ),
    Case(
        "karpenter-azure-perftest--node-class-backlog-4096.yaml",
        "netdev-backlog-minimum",
        "silent: 4,096 holds Standard_D2s_v4's stall (an assumed 25 Gb/s would ask 8,128)",
        lambda path: read()(path) or silent("netdev-backlog-minimum")(path),
    ),
    Case(
        "karpenter-azure-perftest--sku-name-unpinned.yaml",
        "netdev-backlog-minimum",
        "with no size pinned, says it assumed 25 Gb/s and that the NodePools pin no size",
        fires(
            "netdev-backlog-minimum",
            at="AKSNodeClass",
            words="an assumed line rate of 25 Gb/s (an AKSNodeClass does not fix a size: NodePools 'default', "
            "'spot' pin no size",
        ),
    ),
    Case(
        "karpenter-azure-general-purpose.yaml",
        "netdev-backlog-minimum",
        "judges the AKSNodeClass at the fastest D size the NodePool's sku-family D admits, naming it",
        fires("netdev-backlog-minimum", at="AKSNodeClass", words="sizes NodePool 'general-purpose' pins for it"),
    ),
    Case(
        "karpenter-aws-general-purpose.yaml",
        "netdev-backlog-minimum",
        "an EC2NodeClass fixes no type: the 25 Gb/s is said to be assumed, and why",
        fires(
            "netdev-backlog-minimum",
            at="EC2NodeClass",
            words="an assumed line rate of 25 Gb/s (an EC2NodeClass does not fix an instance type: its NodePools "
            "choose them, and it has no wirespeed.io/line-rate-gbps annotation",
        ),
    ),
)


def case_id(case: Case) -> str:
    return f"{case.input}::{case.rule}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_check_decides_each_real_file_as_expected(case, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    problem = case.check(input_path(case.input, tmp_path))
    assert problem is None, f"{case.input}: {case.rule} {case.expect}; instead: {problem}"


def test_every_case_names_an_input_of_the_corpus():
    names = {p.name for p in REAL.iterdir()} | {p.name for p in PROBES}
    for case in CASES:
        assert case.input in names, case.input


# --- verdicts that contradict themselves, on every input ------------------------------------------------------------

BELOW = re.compile(r"is (?:unset \(the kernel default )?([\d,]+)\)?[^.;]*?below the minimum ([\d,]+)")
ALL_INPUTS = sorted(p.name for p in REAL.iterdir() if not p.name.endswith(".provenance.json") and p.suffix != ".md")


@pytest.mark.parametrize("name", ALL_INPUTS + [p.name for p in PROBES])
def test_no_verdict_contradicts_itself(name, tmp_path, monkeypatch):
    """A value is never "below" a minimum it meets, and no memory delta prints as "+-"."""
    monkeypatch.chdir(ROOT)
    outcome = run(input_path(name, tmp_path))
    for violation in outcome.report.get("violations", []):
        message = violation["message"]
        assert "+-" not in message, message
        for value, minimum in BELOW.findall(message):
            assert int(value.replace(",", "")) < int(minimum.replace(",", "")), message

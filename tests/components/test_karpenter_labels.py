"""NodePool template labels Karpenter's v1 CRD refuses are refused by wirespeed's components before anything registers
(issue 17): EKS Karpenter pools and AKS node auto-provisioning pools. The refused keys are read from the CRDs' own CEL
rules in tests/fixtures, so a provider release that restricts another domain fails here, not in a user's apply."""

from __future__ import annotations

import re

import pulumi
import pytest
import yaml

from conftest import ROOT
from pulumi_mocks import AzureMocks, run_under_mocks
from wirespeed.azure import (
    AutoProvisionedPoolSpec,
    NetworkOptimizedCluster,
    NetworkOptimizedClusterArgs,
    NodePoolSpec,
    OutboundSpec,
)
from wirespeed.azure.nap import check_nap
from wirespeed.catalog import karpenter_labels

CRDS = {
    "aws": ROOT / "tests/fixtures/karpenter-provider-aws/v1.14.1/karpenter.sh_nodepools.yaml",
    "azure": ROOT / "tests/fixtures/karpenter-provider-azure/v1.14.2/karpenter.sh_nodepools.yaml",
}
_KEY = re.compile(r'^self\.all\(x, x != ["\']([^"\']+)["\']\)$')
_DOMAIN = re.compile(r'^self\.all\(x, x in \[(.*)\] \|\| !x\.find\("\^\(\[\^/\]\+\)"\)\.endsWith\("([^"]+)"\)\)$')


def label_rules(provider: str) -> tuple[set[str], dict[str, set[str]]]:
    """The CEL rules on spec.template.metadata.labels of the CRD: refused keys, and restricted domains with the keys
    each still allows."""
    crd = yaml.safe_load(CRDS[provider].read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    labels = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["template"]["properties"][
        "metadata"
    ]["properties"]["labels"]
    keys, domains = set(), {}
    for rule in labels["x-kubernetes-validations"]:
        text = rule["rule"]
        if m := _KEY.match(text):
            keys.add(m.group(1))
        elif m := _DOMAIN.match(text):
            domains[m.group(2)] = set(re.findall(r'"([^"]+)"', m.group(1)))
        else:
            pytest.fail(f"a CEL rule this test does not read: {text}")
    return keys, domains


@pytest.mark.parametrize("provider", ["aws", "azure"])
def test_the_tables_are_the_crds_own_rules(provider):
    keys, domains = label_rules(provider)
    table = karpenter_labels.RESTRICTED[provider]
    assert set(table.keys) == keys
    assert {d: set(allowed) for d, allowed in table.domains.items()} == domains


@pytest.mark.parametrize(
    ("provider", "key", "why"),
    [
        ("aws", "kubernetes.io/hostname", 'label "kubernetes.io/hostname" is restricted'),
        ("aws", "karpenter.sh/nodepool", 'label "karpenter.sh/nodepool" is restricted'),
        ("aws", "karpenter.sh/anything", 'label domain "karpenter.sh" is restricted'),
        ("aws", "sub.karpenter.sh/x", 'label domain "karpenter.sh" is restricted'),
        ("aws", "karpenter.sh", 'label domain "karpenter.sh" is restricted'),  # no "/": the whole key is the domain
        ("aws", "karpenter.k8s.aws/instance-ami-id", 'label domain "karpenter.k8s.aws" is restricted'),
        ("aws", "karpenter.sh/capacity-type", None),
        ("aws", "karpenter.k8s.aws/instance-family", None),
        ("aws", "team.example.com/owner", None),
        ("azure", "agentpool", 'label "agentpool" is restricted'),
        ("azure", "kubernetes.azure.com/agentpool", 'label domain "kubernetes.azure.com" is restricted'),
        ("azure", "kubernetes.azure.com/mode", None),
    ],
)
def test_refusal_follows_the_cel_rules(provider, key, why):
    assert karpenter_labels.refusal(provider, key) == why


def test_aks_nap_pool_refuses_what_the_crd_refuses_and_registers_nothing_under_pulumi_mocks():
    labels = {"kubernetes.io/hostname": "n", "karpenter.sh/nodepool": "p", "xkarpenter.sh/y": "z"}
    _, problems = check_nap(AutoProvisionedPoolSpec(name="a", cpu_limit=96, labels=labels), "")
    refused = {p.field: p.reason for p in problems}
    assert set(refused) == {f"labels[{k!r}]" for k in labels}
    assert 'refuses it: label "kubernetes.io/hostname" is restricted' in refused["labels['kubernetes.io/hostname']"]
    args = NetworkOptimizedClusterArgs(
        resource_group_name="rg",
        location="westeurope",
        system_pool=NodePoolSpec(name="system", vm_size="Standard_D4s_v6", min_count=3, max_count=3, max_surge="1"),
        outbound=OutboundSpec(allocated_outbound_ports=4000),
        auto_provisioned_pools=[AutoProvisionedPoolSpec(name="net", cpu_limit=96, labels=labels)],
    )
    with pytest.raises(pulumi.InputPropertiesError):
        run_under_mocks(lambda: NetworkOptimizedCluster("shop", args), mocks=(mocks := AzureMocks()))
    assert mocks.registrations == []

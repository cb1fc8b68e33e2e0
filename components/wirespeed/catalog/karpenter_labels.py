"""The NodePool template label keys Karpenter's ``karpenter.sh/v1`` CRD refuses, per provider: one table, read by the
EKS Karpenter and AKS node auto-provisioning components before anything registers.

The CRD refuses them with CEL rules on ``spec.template.metadata.labels`` (``x-kubernetes-validations``): a few exact
keys, and every key whose first segment (``x.find("^([^/]+)")``: the text before the first ``/``, or the whole key)
ends with a restricted domain, except the keys listed for it. Sources, unedited in tests/fixtures (the test reads
the rules there and compares them with these tables):

- EKS: aws/karpenter-provider-aws v1.14.1, pkg/apis/crds/karpenter.sh_nodepools.yaml;
- AKS: Azure/karpenter-provider-azure v1.14.2 (and v1.10.0), pkg/apis/crds/karpenter.sh_nodepools.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Provider = Literal["aws", "azure"]
_FIRST_SEGMENT = re.compile(r"^([^/]+)")

_KARPENTER_SH = ("karpenter.sh/capacity-type", "karpenter.sh/nodepool")
_CORE_KEYS = ("karpenter.sh/nodepool", "kubernetes.io/hostname")


@dataclass(frozen=True)
class RestrictedLabels:
    """What one provider's NodePool CRD refuses: exact keys, and domains with the keys still allowed in them."""

    keys: tuple[str, ...]
    domains: Mapping[str, tuple[str, ...]]
    source: str

    def refusal(self, key: str) -> str | None:
        """The CRD's own message for ``key`` (``label "kubernetes.io/hostname" is restricted``), or None."""
        if key in self.keys:
            return f'label "{key}" is restricted'
        match = _FIRST_SEGMENT.match(key)
        head = match.group(1) if match else ""
        for domain, allowed in self.domains.items():
            if head.endswith(domain) and key not in allowed:
                return f'label domain "{domain}" is restricted'
        return None


RESTRICTED: dict[Provider, RestrictedLabels] = {
    "aws": RestrictedLabels(
        keys=_CORE_KEYS,
        domains={
            "karpenter.sh": _KARPENTER_SH,
            "karpenter.k8s.aws": (
                "karpenter.k8s.aws/instance-tenancy",
                "karpenter.k8s.aws/capacity-reservation-type",
                "karpenter.k8s.aws/capacity-reservation-id",
                "karpenter.k8s.aws/capacity-reservation-interruptible",
                "karpenter.k8s.aws/ec2nodeclass",
                "karpenter.k8s.aws/instance-encryption-in-transit-supported",
                "karpenter.k8s.aws/instance-category",
                "karpenter.k8s.aws/instance-hypervisor",
                "karpenter.k8s.aws/instance-family",
                "karpenter.k8s.aws/instance-generation",
                "karpenter.k8s.aws/instance-local-nvme",
                "karpenter.k8s.aws/instance-size",
                "karpenter.k8s.aws/instance-cpu",
                "karpenter.k8s.aws/instance-cpu-manufacturer",
                "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
                "karpenter.k8s.aws/instance-memory",
                "karpenter.k8s.aws/instance-ebs-bandwidth",
                "karpenter.k8s.aws/instance-network-bandwidth",
                "karpenter.k8s.aws/instance-gpu-name",
                "karpenter.k8s.aws/instance-gpu-manufacturer",
                "karpenter.k8s.aws/instance-gpu-count",
                "karpenter.k8s.aws/instance-gpu-memory",
                "karpenter.k8s.aws/instance-accelerator-name",
                "karpenter.k8s.aws/instance-accelerator-manufacturer",
                "karpenter.k8s.aws/instance-accelerator-count",
                "karpenter.k8s.aws/instance-capability-flex",
                "karpenter.k8s.aws/placement-group-id",
                "karpenter.k8s.aws/placement-group-partition",
            ),
        },
        source="aws/karpenter-provider-aws v1.14.1 pkg/apis/crds/karpenter.sh_nodepools.yaml",
    ),
    "azure": RestrictedLabels(
        keys=(*_CORE_KEYS, "agentpool", "storageprofile", "storagetier", "accelerator"),
        domains={
            "karpenter.sh": _KARPENTER_SH,
            "karpenter.azure.com": (
                "karpenter.azure.com/aksnodeclass",
                "karpenter.azure.com/sku-name",
                "karpenter.azure.com/sku-family",
                "karpenter.azure.com/sku-series",
                "karpenter.azure.com/sku-version",
                "karpenter.azure.com/sku-cpu",
                "karpenter.azure.com/sku-memory",
                "karpenter.azure.com/sku-networking-accelerated",
                "karpenter.azure.com/sku-storage-premium-capable",
                "karpenter.azure.com/sku-storage-ultra-ssd",
                "karpenter.azure.com/sku-storage-ephemeralos-maxsize",
                "karpenter.azure.com/sku-gpu-name",
                "karpenter.azure.com/sku-gpu-manufacturer",
                "karpenter.azure.com/sku-gpu-count",
                "karpenter.azure.com/placement-scope",
            ),
            "kubernetes.azure.com": (
                "kubernetes.azure.com/mode",
                "kubernetes.azure.com/scalesetpriority",
                "kubernetes.azure.com/priority",
                "kubernetes.azure.com/fips_enabled",
                "kubernetes.azure.com/os-sku",
                "kubernetes.azure.com/cluster",
                "kubernetes.azure.com/sku-cpu",
                "kubernetes.azure.com/sku-memory",
                "kubernetes.azure.com/ebpf-dataplane",
                "kubernetes.azure.com/ebpf-host-routing",
                "kubernetes.azure.com/network-policy",
                "kubernetes.azure.com/hostedvm",
            ),
        },
        source="Azure/karpenter-provider-azure v1.14.2 pkg/apis/crds/karpenter.sh_nodepools.yaml",
    ),
}


def refusal(provider: Provider, key: str) -> str | None:
    """Why Karpenter's NodePool CRD on ``provider`` refuses the template label ``key``, in its words, or None."""
    return RESTRICTED[provider].refusal(key)

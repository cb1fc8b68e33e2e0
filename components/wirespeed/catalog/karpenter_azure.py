"""How AKS node auto-provisioning (karpenter-provider-azure) labels each catalog size, and which sizes a NodePool's
requirements admit. Pure: the catalog and nothing else.

NAP is Karpenter with the Azure provider (github.com/Azure/karpenter-provider-azure). A ``karpenter.sh/v1``
NodePool chooses VM sizes by requirements on the well-known labels the provider puts on every size
(pkg/apis/v1beta1/labels.go at tag v1.14.2, commit d1552b7e96e3; the same keys since v1.7.0):

- ``karpenter.azure.com/sku-family``: the family letter, ``D`` for Standard_D16s_v6;
- ``karpenter.azure.com/sku-series``: family, sub-family, additive features and version, ``Ds_v6``;
- ``karpenter.azure.com/sku-version``: the version number without the ``v`` (``6``; ``1`` when the name has none);
- ``karpenter.azure.com/sku-name``: the full size name (also ``node.kubernetes.io/instance-type``);
- ``karpenter.azure.com/sku-cpu`` / ``kubernetes.azure.com/sku-cpu``: vCPUs; ``.../sku-memory``: memory in MiB;
- ``karpenter.azure.com/sku-networking-accelerated``: ``true`` when the size has accelerated networking.

The parts come from the size name as Azure/skewer v0.0.24 parses it (vmsize.go, ``skuSizeScheme``; Series = family +
sub-family + additive features + ``_`` + version), which the provider calls for every SKU
(pkg/providers/instancetype/instancetype.go, ``computeRequirements``; utils.ExtractVersionFromVMSize for the version).

:func:`admitted` evaluates requirements the way Karpenter does (every requirement must hold; operators In, NotIn,
Exists, DoesNotExist, Gt, Lt, Gte, Lte as in the NodePool CRD) over the Azure sizes of the catalog, so the planner,
the policy rules and ``wirespeed plan`` agree on what a NodePool can launch.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from wirespeed.catalog import instance_types
from wirespeed.catalog._model import InstanceType

# API groups and versions (karpenter-provider-azure v1.14.2, pkg/apis/crds): AKSNodeClass is served as v1alpha2 and
# v1beta1 (the storage version); NodePool is Karpenter's own karpenter.sh/v1.
GROUP = "karpenter.azure.com"
NODE_CLASS_KIND = "AKSNodeClass"
NODE_CLASS_VERSIONS = ("v1beta1", "v1alpha2")
NODE_CLASS_API_VERSION = f"{GROUP}/{NODE_CLASS_VERSIONS[0]}"
NODE_POOL_API_VERSION = "karpenter.sh/v1"
NODE_CLASS_TYPES = tuple(f"kubernetes:{GROUP}/{v}:{NODE_CLASS_KIND}" for v in NODE_CLASS_VERSIONS)
# AKSNodeClass.spec.linuxOSConfig (sysctls, transparent huge pages, swap) arrived in v1.10.0 (2026-03-29): PR #1502,
# commit 96c82710922c, "feat: add Custom Linux OS Configuration ... support"; v1.10.0-rc.1 does not have it. NAP
# rolled it out to managed clusters later (Azure/AKS#5364, 2026-07-24; learn.microsoft.com/azure/aks/
# node-auto-provisioning-aksnodeclass#linux-custom-os-configuration-settings).
LINUX_OS_CONFIG_SINCE = "v1.10.0"

SKU_NAME = f"{GROUP}/sku-name"
SKU_FAMILY = f"{GROUP}/sku-family"
SKU_SERIES = f"{GROUP}/sku-series"
SKU_VERSION = f"{GROUP}/sku-version"
SKU_CPU = f"{GROUP}/sku-cpu"
SKU_MEMORY = f"{GROUP}/sku-memory"
SKU_ACCELERATED_NETWORKING = f"{GROUP}/sku-networking-accelerated"
AKS_SKU_CPU = "kubernetes.azure.com/sku-cpu"
AKS_SKU_MEMORY = "kubernetes.azure.com/sku-memory"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
# Keys that name which sizes may launch; a NodePool restricting none of them lets NAP pick any SKU in the region.
SIZE_KEYS = (SKU_SERIES, SKU_NAME, INSTANCE_TYPE, SKU_FAMILY, SKU_VERSION)
# Karpenter's architecture names (pkg/apis/v1beta1/labels.go, AzureToKubeArchitectures).
ARCH_LABELS = {"x86_64": "amd64", "arm64": "arm64"}
# NodePool CRD (karpenter.sh_nodepools.yaml): requirement operators.
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")

# Azure/skewer vmsize.go at v0.0.24 (commit 1b511013c03b), skuSizeScheme, applied to the size without "Standard_":
# the skewer karpenter-provider-azure v1.14.2 builds against (its go.mod: github.com/Azure/skewer v0.0.24). v0.0.24
# reads the additive letters f, n and o (its vmsize_test.go: Standard_D8ns_v6 -> series Dns_v6, Standard_L12aos_v4
# -> Laos_v4; learn.microsoft.com/azure/virtual-machines/vm-naming-conventions, MicrosoftDocs/azure-compute-docs
# articles/virtual-machines/vm-naming-conventions.md @ eba18e57f661: "n = network optimized"); skewer's main
# (0119bd0cb17c) still does not, so a provider on it would skip those sizes ("parsing VM size", instancetypes.go).
_SKU_SIZE_SCHEME = re.compile(
    r"^([A-Z])([A-Z]?)([A-Z]?)([0-9]+)-?((?:[0-9]+)?)((?:[abcdeiflmnotspPr]+|C+|NP)?)_?"
    r"(?:(xl_[A-Z]+[0-9]+[A-Z]*|[A-Z]+[0-9]+)_?)?(_cc_)?(_[0-9]+_)?(_MI300X_)?(_H100_)?((?:[vV][1-9])?)?(_Promo)?$"
)


class UnparsableSizeError(ValueError):
    """A size name skewer's scheme does not parse (the provider then sets no family, series or version label)."""


@dataclass(frozen=True)
class SkuLabels:
    """The well-known labels the provider sets on nodes of one size (values as label strings)."""

    name: str
    family: str
    series: str
    version: str
    cpu: str
    memory_mib: str
    arch: str
    accelerated_networking: str

    def as_labels(self) -> dict[str, str]:
        return {
            SKU_NAME: self.name,
            INSTANCE_TYPE: self.name,
            SKU_FAMILY: self.family,
            SKU_SERIES: self.series,
            SKU_VERSION: self.version,
            SKU_CPU: self.cpu,
            AKS_SKU_CPU: self.cpu,
            SKU_MEMORY: self.memory_mib,
            AKS_SKU_MEMORY: self.memory_mib,
            ARCH: self.arch,
            SKU_ACCELERATED_NETWORKING: self.accelerated_networking,
        }


def parse_size(name: str) -> tuple[str, str, str]:
    """(family, series, version) of an Azure size name, as the provider labels it: ``Standard_D16ds_v6`` ->
    ``("D", "Dds_v6", "6")``; UnparsableSizeError when skewer's scheme does not match."""
    size = name.removeprefix("Standard_")
    parts = _SKU_SIZE_SCHEME.match(size)
    if parts is None:
        raise UnparsableSizeError(f"{name!r} does not parse as an Azure VM size name")
    family, sub1, sub2, features, version = parts[1], parts[2], parts[3], parts[6], parts[12] or ""
    series = family + sub1 + sub2 + features + (f"_{version}" if version else "")
    return family, series, version[1:] if version else "1"


def sku_labels(instance: InstanceType) -> SkuLabels:
    """The provider's labels for a catalog Azure size. Accelerated networking: every catalog NIC is a VF the host
    passes through, on sizes of two or more vCPUs (wirespeed.azure.pools.accelerated_networking)."""
    family, series, version = parse_size(instance.name)
    return SkuLabels(
        name=instance.name,
        family=family,
        series=series,
        version=version,
        cpu=str(instance.vcpu),
        memory_mib=str(round(instance.memory_gib * 1024)),
        arch=ARCH_LABELS[instance.architecture],
        accelerated_networking="true" if instance.vcpu >= 2 else "false",
    )


@functools.cache
def _azure_labels() -> tuple[tuple[InstanceType, SkuLabels], ...]:
    return tuple((it, sku_labels(it)) for it in instance_types(cloud="azure"))


def series_of_family(family: str) -> tuple[str, ...]:
    """The provider's ``sku-series`` values of a catalog family's sizes (``Dsv6`` -> ``("Ds_v6",)``; ``Esv6`` also
    holds the isolated ``Standard_E192is_v6``, series ``Eis_v6``), sorted; KeyError for a family not in the catalog."""
    found = sorted({labels.series for it, labels in _azure_labels() if it.family == family})
    if not found:
        raise KeyError(family)
    return tuple(found)


@dataclass(frozen=True)
class Requirement:
    """One NodeSelectorRequirement of a NodePool (``key``, ``operator``, ``values``)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def admits(self, labels: Mapping[str, str]) -> bool:
        """Whether a node carrying ``labels`` satisfies this requirement (Karpenter's semantics: NotIn and
        DoesNotExist hold for a label the node lacks; Gt/Lt/Gte/Lte need an integer label and value)."""
        value = labels.get(self.key)
        if self.operator == "In":
            return value is not None and value in self.values
        if self.operator == "NotIn":
            return value is None or value not in self.values
        if self.operator == "Exists":
            return value is not None
        if self.operator == "DoesNotExist":
            return value is None
        bound = self.values[0] if len(self.values) == 1 else ""
        if value is None or not value.isdigit() or not bound.isdigit():
            return False
        have, limit = int(value), int(bound)
        return {
            "Gt": have > limit,
            "Lt": have < limit,
            "Gte": have >= limit,
            "Lte": have <= limit,
        }.get(self.operator, False)


def restricts_sizes(requirements: Iterable[Requirement]) -> bool:
    """Whether any requirement names which sizes may launch (series, name, family or version)."""
    return any(r.key in SIZE_KEYS and r.operator in ("In", "Gt", "Gte", "Lt", "Lte") for r in requirements)


_SIZE_LABEL_KEYS = frozenset(
    (SKU_NAME, INSTANCE_TYPE, SKU_FAMILY, SKU_SERIES, SKU_VERSION, SKU_CPU, AKS_SKU_CPU, SKU_MEMORY, AKS_SKU_MEMORY,
     ARCH, SKU_ACCELERATED_NETWORKING)
)  # fmt: skip


def admitted(requirements: Sequence[Requirement]) -> list[tuple[InstanceType, SkuLabels]]:
    """The catalog's Azure sizes a NodePool with these requirements may launch, in catalog order. Requirements on
    keys no size carries (zone, capacity type) are ignored; an ``In``/``Exists`` on such a key admits nothing."""
    sized = [r for r in requirements if r.key in _SIZE_LABEL_KEYS]
    return [(it, labels) for it, labels in _azure_labels() if all(r.admits(labels.as_labels()) for r in sized)]

"""Whether a resource is deployed on Azure, read from its URN and its parent's: a tuning ConfigMap names no cloud."""

from __future__ import annotations

from wirespeed.names import CLUSTER_TYPE
from wirespeed.rules._model import Resource

# The component types whose tuning ConfigMaps run on AKS nodes: NetworkOptimizedCluster deploys its NodeTuning as a
# child. A ConfigMap whose URN or parent's URN holds one of these, or an azure-native type, is on Azure.
AZURE_PARENT_TYPES = (CLUSTER_TYPE,)


def _qualified_types(urn: str | None) -> list[str]:
    """The types in a URN's qualified type (urn:pulumi:<stack>::<project>::<parent type>$<type>::<name>)."""
    parts = (urn or "").split("::")
    return parts[2].split("$") if len(parts) > 3 else []


def _on_azure(resource: Resource) -> bool:
    """Whether the resource's URN, or its parent's, places it under an AKS component (what deploys it there)."""
    types = _qualified_types(resource.urn) + _qualified_types(resource.parent)
    return any(t in AZURE_PARENT_TYPES or t.startswith("azure-native:") for t in types)

"""Kubernetes manifests wirespeed ships, as plain data (no Pulumi): the tuning DaemonSet and its RBAC.

`wirespeed render node-tuning` prints them as YAML; ``wirespeed.kubernetes.NodeTuning`` creates the same
objects through pulumi-kubernetes.
"""

from wirespeed.manifests.node_tuning import (
    AGENT_NAME,
    CHECKSUM_ANNOTATION,
    PROFILE_LABEL,
    agent_rbac_rules,
    node_tuning_objects,
    profile_checksum,
    profile_json,
)
from wirespeed.manifests.options import (
    DEFAULT_IMAGE,
    DEFAULT_NAMESPACE,
    DEFAULT_PROFILES,
    NodeTuningError,
    NodeTuningOptions,
    check,
)
from wirespeed.manifests.render import to_yaml

__all__ = [
    "AGENT_NAME",
    "CHECKSUM_ANNOTATION",
    "DEFAULT_IMAGE",
    "DEFAULT_NAMESPACE",
    "DEFAULT_PROFILES",
    "PROFILE_LABEL",
    "NodeTuningError",
    "NodeTuningOptions",
    "agent_rbac_rules",
    "check",
    "node_tuning_objects",
    "profile_checksum",
    "profile_json",
    "to_yaml",
]

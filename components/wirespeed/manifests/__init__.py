"""Kubernetes manifests wirespeed ships, as plain data (no Pulumi): the tuning DaemonSet, its RBAC and admission policy.

`wirespeed render node-tuning` prints them as YAML; ``wirespeed.kubernetes.NodeTuning`` creates the same
objects through pulumi-kubernetes.
"""

from wirespeed.manifests.access import ADMISSION_POLICY_MIN_KUBERNETES, agent_rbac_rules, events_namespace
from wirespeed.manifests.node_tuning import (
    AGENT_NAME,
    CHECKSUM_ANNOTATION,
    PROFILE_LABEL,
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
    fastest_line_rates,
)
from wirespeed.manifests.render import to_yaml

__all__ = [
    "ADMISSION_POLICY_MIN_KUBERNETES",
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
    "events_namespace",
    "fastest_line_rates",
    "node_tuning_objects",
    "profile_checksum",
    "profile_json",
    "to_yaml",
]

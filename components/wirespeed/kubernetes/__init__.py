"""Pulumi components for the Kubernetes side both clouds share (pulumi-kubernetes v4).

Thin adapters over the pure ``wirespeed.manifests``: what they create is exactly what
`wirespeed render node-tuning` prints.
"""

from wirespeed.kubernetes.node_tuning import NodeTuning, NodeTuningArgs

__all__ = ["NodeTuning", "NodeTuningArgs"]

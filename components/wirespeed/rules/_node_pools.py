"""The node-pool kinds several rules read: EKS clusters and managed node groups, and Karpenter NodePools (EKS
Karpenter and AKS node auto-provisioning), with what the rules read on a NodePool."""

from __future__ import annotations

from wirespeed.rules._nap import NODE_POOL_TYPES as NODE_POOL_TYPES  # Karpenter NodePools, EKS and AKS

EKS_CLUSTER = "aws:eks/cluster:Cluster"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_POOL_READS = (
    *(f"spec.template.spec.requirements[].{path}" for path in ("key", "operator", "values[]")),
    "spec.template.spec.nodeClassRef.group",
)
